#!/usr/bin/env bash
# continuum-event-broker launcher of the portable archive: the same application on any Linux architecture, run
# by a JDK 25 (or later) found on the host instead of a bundled jlink runtime. Layout:
#   bin/continuum-event-broker   this script
#   lib/app/                     every jar of the application: the module path
#   lib/jvm.options              JVM options (java @argfile), the runtime image's
# The JDK: CONTINUUM_EVENT_BROKER_JAVA (a java executable), else $JAVA_HOME/bin/java, else java on the PATH.
# Extra JVM options: CONTINUUM_EVENT_BROKER_JAVA_OPTS (word-split).
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)"
java="${CONTINUUM_EVENT_BROKER_JAVA:-}"
if [ -z "$java" ] && [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then java="$JAVA_HOME/bin/java"; fi
if [ -z "$java" ]; then java="$(command -v java || true)"; fi
if [ -z "$java" ]; then
    echo "continuum-event-broker: no Java found; install a JDK 25 (e.g. apt-get install openjdk-25-jre-headless)" \
         "or set JAVA_HOME or CONTINUUM_EVENT_BROKER_JAVA" >&2
    exit 3
fi
feature=$("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p')
if [ -z "$feature" ] || [ "$feature" -lt 25 ]; then
    echo "continuum-event-broker: $java is Java ${feature:-unknown}; Java 25 or later is needed" \
         "(set JAVA_HOME or CONTINUUM_EVENT_BROKER_JAVA)" >&2
    exit 3
fi
# shellcheck disable=SC2086
exec "$java" \
    ${CONTINUUM_EVENT_BROKER_JAVA_OPTS:-} \
    "@$root/lib/jvm.options" \
    --module-path "$root/lib/app" \
    -m io.continuum.broker.app/io.continuum.broker.app.Main "$@"
