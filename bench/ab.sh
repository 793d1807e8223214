#!/usr/bin/env bash
# A/B of two relay builds on the isolated measurement (docs/benchmarks-journal.md, "The data path"), in one invocation:
#   bench/ab.sh OTHER_RELAY_JAR [runs] [--quick]
# "broker" runs this tree's relay, "broker-b" OTHER_RELAY_JAR (e.g. a copy of modules/relay/target/*.jar saved from
# another commit), each with its own lean router, interleaved run by run with the stunnel and direct paths. This
# tree's jar is copied first, so rebuilding while it runs does not change what is measured. ISOLATE_* as for
# bench/run.sh isolate (e.g. ISOLATE_WORKLOADS=latency,throughput).
#   AB_ALTERNATE=N bench/ab.sh OTHER_RELAY_JAR [runs]
# instead runs the two builds one after the other, N rounds (OTHER first in each), each invocation with only its
# own broker started: two brokers pinned to core 0 at once put one's JIT and GC into the other's runs, which matters
# when the tails are what is compared (docs/benchmarks.md, "Added p99, where the time goes"). Set ISOLATE_PATHS
# (e.g. broker) and ISOLATE_WORKLOADS as needed; each invocation prints its own tables.
set -euo pipefail
cd "$(dirname "$0")/.."
. bin/env.sh
# OTHER_RELAY_JAR may be several jars, colon-separated (the relay's and the h2 codec's, when a change spans both)
other=""
IFS=: read -ra other_jars <<< "${1:?usage: bench/ab.sh OTHER_RELAY_JAR[:MORE_JARS] [runs] [--quick]}"
for jar in "${other_jars[@]}"; do other="${other:+$other:}$(readlink -f "$jar")"; done
shift
deps=$(nice -n 15 bench/build-classpath.sh)
snap=$(mktemp -d /tmp/ceb-ab-XXXXXX)
trap 'rm -rf "$snap"' EXIT
cp -r modules/bench/target/classes "$snap/bench-classes"
cp="$snap/bench-classes"
for jar in $(tr ':' ' ' <<< "$deps"); do
    case "$jar" in
        "$PWD"/modules/*) cp "$jar" "$snap/"; cp="$cp:$snap/$(basename "$jar")" ;;
        *) cp="$cp:$jar" ;;
    esac
done
ISOLATE_PEERS_DIR=$(bench/build-dynamo-peers.sh)
export ISOLATE_PEERS_DIR
if [ -n "${AB_ALTERNATE:-}" ]; then
    for round in $(seq 1 "$AB_ALTERNATE"); do
        for build in other this; do
            echo "== round $round: $build build ($([ $build = other ] && echo "$other" || echo "this tree"))"
            if [ $build = other ]; then run_cp="$other:$cp"; else run_cp="$cp"; fi
            timeout 1800 /usr/bin/python3 bench/isolate.py "$run_cp" "$@"
        done
    done
    exit 0
fi
ISOLATE_BROKER_B_CP="$other" timeout 1800 /usr/bin/python3 bench/isolate.py "$cp" "$@"
