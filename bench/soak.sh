#!/usr/bin/env bash
# The soak (docs/reliability.md, "Soak"). Usage: bench/soak.sh [minutes] (default 35); the broker's JVM options:
# SOAK_BROKER_JAVA_OPTS (default -Xmx256m -XX:+UseSerialGC, the collector of packaging/jvm.options).
# Builds the broker and the bench module (package, no tests, nothing installed), then runs the
# production launcher bin/continuum-event-broker as its own process against the in-process router,
# Kubernetes API and publishers of io.continuum.broker.bench.soak.SoakHarness, under faults.
set -euo pipefail
cd "$(dirname "$0")/.."
. bin/env.sh
minutes="${1:-35}"
./mvnw -B -ntp -q -DskipTests package
cp="modules/bench/target/classes:$(bench/build-classpath.sh)"
exec java -Xmx512m -Dsoak.minutes="$minutes" ${SOAK_JAVA_OPTS:-} -cp "$cp" \
    io.continuum.broker.bench.soak.SoakHarness
