#!/usr/bin/env bash
# continuum-event-broker launcher inside the runtime image (archive, .deb). Layout:
#   bin/continuum-event-broker   this script
#   runtime/                     runtime linked by jlink: JDK modules and the library modules jlink can link
#   lib/app/                     the other jars (automatic modules and what needs them): the module path
#   lib/jvm.options              JVM options (java @argfile), shared with the container image
#   lib/continuum-event-broker.aot       optional AOT cache, valid only for the directory in
#   lib/continuum-event-broker.aot.root  which it was trained (lib/aot-train writes both)
# Extra JVM options: CONTINUUM_EVENT_BROKER_JAVA_OPTS (word-split).
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)"
aot=()
# No cache during a training run (lib/aot-train passes -XX:AOTCacheOutput, which the JVM refuses
# together with -XX:AOTCache).
case " ${CONTINUUM_EVENT_BROKER_JAVA_OPTS:-} " in *-XX:AOTCacheOutput=*) training=true ;; *) training=false ;; esac
if ! $training && [ -f "$root/lib/continuum-event-broker.aot" ] && [ -f "$root/lib/continuum-event-broker.aot.root" ] \
        && [ "$(cat "$root/lib/continuum-event-broker.aot.root")" = "$root" ]; then
    aot=(-XX:AOTCache="$root/lib/continuum-event-broker.aot")
fi
# shellcheck disable=SC2086
exec "$root/runtime/bin/java" \
    ${CONTINUUM_EVENT_BROKER_JAVA_OPTS:-} \
    "@$root/lib/jvm.options" \
    "${aot[@]}" \
    --module-path "$root/lib/app" \
    -m io.continuum.broker.app/io.continuum.broker.app.Main "$@"
