#!/usr/bin/env bash
# Builds bench/dynamo-peers.c (the Dynamo-shaped load's libzmq peers) into target/bench/dynamo-peers and prints
# its path; bench/run.sh and bench/ab.sh export it as ISOLATE_DYNAMO_PEERS_BIN for bench/isolate.py.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f /usr/include/zmq.h ] || { echo "libzmq headers missing: apt-get install -y libzmq3-dev" >&2; exit 1; }
command -v cc >/dev/null || { echo "a C compiler is missing: apt-get install -y gcc" >&2; exit 1; }
mkdir -p target/bench
cc -O2 -Wall -Wextra -o target/bench/dynamo-peers bench/dynamo-peers.c -lzmq -lpthread
echo "$PWD/target/bench/dynamo-peers"
