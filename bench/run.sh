#!/usr/bin/env bash
# The load harness of issue 9 (docs/benchmarks.md, "Performance"). Usage:
#   bench/run.sh [runs] [--quick]     load harness: direct vs stunnel4 vs broker (default 3 runs per cell)
#   bench/run.sh jmh [JMH args]       JMH microbenchmarks (e.g. bench/run.sh jmh ChunkQueue)
# Builds modules/bench and its dependencies (package, no tests, nothing installed), then runs on the
# class path (which ignores JPMS boundaries: the benchmarks reach the relay's unexported packages).
set -euo pipefail
cd "$(dirname "$0")/.."
. bin/env.sh
command -v stunnel4 >/dev/null || { echo "stunnel4 missing: apt-get install -y stunnel4" >&2; exit 1; }
cp_file=modules/bench/target/classpath.txt
./mvnw -B -ntp -q -pl modules/bench -am -DskipTests package dependency:build-classpath \
    -Dmdep.outputFile="$PWD/$cp_file" -Dmdep.includeScope=runtime
cp="modules/bench/target/classes:$(cat "$cp_file")"
if [ "${1:-}" = jmh ]; then
    shift
    exec java -cp "$cp" org.openjdk.jmh.Main "$@"
fi
exec timeout 600 java -Xmx1g -XX:+UseG1GC ${BENCH_JAVA_OPTS:-} -cp "$cp" io.continuum.broker.bench.LoadHarness "$@"
