#!/usr/bin/env bash
# The load harness (docs/benchmarks-journal.md, "Performance"). Usage:
#   bench/run.sh [runs] [--quick]         both of the below, end-to-end first (default 3 runs per cell)
#   bench/run.sh e2e [runs] [--quick]     load harness: direct vs stunnel4 vs broker, end to end
#   bench/run.sh isolate [runs] [--quick] the broker's own cost alone on a core vs a stunnel4 client's, with the
#                                         lean router and libzmq peers (bench/isolate.py), and the targets
#   bench/run.sh floor [runs]             the Dynamo-shaped load's floor on this machine: publishing it, and only
#                                         reading it on the broker's core, with no broker (bench/dynamo-floor.py)
#   bench/run.sh jmh [JMH args]           JMH microbenchmarks (e.g. bench/run.sh jmh ChunkQueue)
# Builds modules/bench and its dependencies (package, no tests, nothing installed), then runs on the
# class path (which ignores JPMS boundaries: the benchmarks reach the relay's unexported packages).
set -euo pipefail
cd "$(dirname "$0")/.."
. bin/env.sh
mode=all
case "${1:-}" in e2e|isolate|floor|jmh) mode=$1; shift ;; esac
if [ "$mode" = floor ]; then
    command -v taskset >/dev/null || { echo "taskset missing (util-linux)" >&2; exit 1; }
    exec timeout 900 /usr/bin/python3 bench/dynamo-floor.py "$(bench/build-dynamo-peers.sh)" "$@"
fi
command -v stunnel4 >/dev/null || { echo "stunnel4 missing: apt-get install -y stunnel4" >&2; exit 1; }
if [ "$mode" = all ] || [ "$mode" = isolate ]; then
    # Debian's interpreter on purpose: python3-zmq is a Debian package (libzmq peers, not the bottleneck)
    /usr/bin/python3 -c 'import zmq' 2>/dev/null || { echo "python3-zmq missing: apt-get install -y python3-zmq" >&2; exit 1; }
    command -v taskset >/dev/null || { echo "taskset missing (util-linux)" >&2; exit 1; }
    # the Dynamo-shaped load's C peers (bench/build-dynamo-peers.sh; JeroMQ's cannot keep the nominal schedule)
    ISOLATE_PEERS_DIR=$(bench/build-dynamo-peers.sh)
    export ISOLATE_PEERS_DIR
fi
cp="modules/bench/target/classes:$(bench/build-classpath.sh)"
if [ "$mode" = jmh ]; then
    exec java -cp "$cp" org.openjdk.jmh.Main "$@"
fi
status=0
if [ "$mode" != isolate ]; then
    # a failed end-to-end workload (e.g. joins that time out on a loaded machine) still lets the isolated run go
    timeout 600 java -Xmx1g -XX:+UseG1GC ${BENCH_JAVA_OPTS:-} -cp "$cp" io.continuum.broker.bench.LoadHarness "$@" \
        || { status=$?; echo "end-to-end harness failed (exit $status)" >&2; }
fi
if [ "$mode" != e2e ]; then
    timeout 900 /usr/bin/python3 bench/isolate.py "$cp" "$@" || status=$?
fi
exit "$status"
