#!/usr/bin/env bash
# The broker with and without a JDK AOT cache trained on the data path (docs/benchmarks-journal.md, 2026-12-07
# "a cache trained on the data path"), on the isolated measurement:
#   bench/aot-ab.sh [rounds]
# Trains a cache (-XX:AOTCacheOutput) in one invocation of bench/isolate.py that runs the latency and throughput
# workloads through the broker alone, then runs bench/isolate.py without and with it (-XX:AOTCache), A B B A per
# round (default 1), one broker at a time. The class path is the bench's jar and its dependencies' jars: the JVM
# keeps no cache for classes loaded from a directory. ISOLATE_* as for bench/run.sh isolate (ISOLATE_WORKLOADS
# defaults to latency,throughput here).
set -euo pipefail
cd "$(dirname "$0")/.."
. bin/env.sh
rounds=${1:-1}
deps=$(bench/build-classpath.sh)
cp="$(ls modules/bench/target/continuum-event-broker-bench-*.jar | head -1):$deps"
ISOLATE_PEERS_DIR=$(bench/build-dynamo-peers.sh)
export ISOLATE_PEERS_DIR
export ISOLATE_WORKLOADS=${ISOLATE_WORKLOADS:-latency,throughput}
cache="$PWD/modules/bench/target/broker-data-path.aot"
rm -f "$cache" "$cache.config"
echo "== training $cache"
ISOLATE_PATHS=broker ISOLATE_WORKLOADS=latency,throughput ISOLATE_BROKER_OPTS="-XX:AOTCacheOutput=$cache" \
    timeout 900 /usr/bin/python3 bench/isolate.py "$cp" 1 > /dev/null
[ -s "$cache" ] || { echo "no cache written to $cache" >&2; exit 1; }
for round in $(seq 1 "$rounds"); do
    for v in without with with without; do
        echo "== round $round: $v the cache"
        opts=""
        [ $v = with ] && opts="-XX:AOTCache=$cache"
        ISOLATE_BROKER_OPTS="$opts ${ISOLATE_BROKER_OPTS:-}" timeout 900 /usr/bin/python3 bench/isolate.py "$cp" 1
    done
done
