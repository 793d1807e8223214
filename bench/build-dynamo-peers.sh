#!/usr/bin/env bash
# Builds the Dynamo-shaped load's C peers into target/bench and prints that directory; bench/run.sh and bench/ab.sh
# export it as ISOLATE_PEERS_DIR for bench/isolate.py:
#   zmtp-peers    bench/zmtp-peers.c: ZMTP 3.0 over plain sockets, the default (ISOLATE_DYNAMO_PEERS=zmtp); cc only
#   zmtp-peers-eager  the same, its SUB side reading each socket as soon as it is ready (bench/dynamo-floor.py)
#   dynamo-peers  bench/dynamo-peers.c: the same on libzmq (ISOLATE_DYNAMO_PEERS=libzmq); needs libzmq3-dev
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cc >/dev/null || { echo "a C compiler is missing: apt-get install -y gcc" >&2; exit 1; }
mkdir -p target/bench
cc -O2 -Wall -Wextra -o target/bench/zmtp-peers bench/zmtp-peers.c -lpthread
cc -O2 -Wall -Wextra -DNAP_NS=0 -o target/bench/zmtp-peers-eager bench/zmtp-peers.c -lpthread
if [ -f /usr/include/zmq.h ]; then
    cc -O2 -Wall -Wextra -o target/bench/dynamo-peers bench/dynamo-peers.c -lzmq -lpthread
else
    echo "build-dynamo-peers: libzmq headers missing (apt-get install -y libzmq3-dev): only zmtp-peers built" >&2
fi
echo "$PWD/target/bench"
