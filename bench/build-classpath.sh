#!/usr/bin/env bash
# Builds modules/bench and what it depends on (package, no tests, nothing installed) and prints the class path of
# its runtime dependencies (the bench's own classes or jar not included: the callers differ in that), one line.
# The one build step of bench/run.sh, bench/ab.sh, bench/aot-ab.sh, bench/first-traffic.sh and bench/soak.sh.
# Maven's output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
. bin/env.sh
cp_file=modules/bench/target/classpath.txt
./mvnw -B -ntp -q -pl modules/bench -am -DskipTests package dependency:build-classpath \
    -Dmdep.outputFile="$PWD/$cp_file" -Dmdep.includeScope=runtime >&2
cat "$cp_file"
