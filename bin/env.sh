# Sourced by .ci/run and bin/continuum-event-broker: selects a JDK 25 when JAVA_HOME is unset or older.
_ceb_java_major() {
    "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p'
}
if [ -z "${JAVA_HOME:-}" ] || [ ! -x "${JAVA_HOME}/bin/java" ] || [ "$(_ceb_java_major "$JAVA_HOME")" -lt 25 ] 2>/dev/null; then
    for _ceb_jdk in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk* /usr/lib/jvm/java-25-* /usr/lib/jvm/jdk-25*; do
        if [ -x "$_ceb_jdk/bin/java" ]; then
            export JAVA_HOME="$_ceb_jdk"
            break
        fi
    done
fi
if [ -z "${JAVA_HOME:-}" ] || [ ! -x "${JAVA_HOME}/bin/java" ] || [ "$(_ceb_java_major "$JAVA_HOME")" -lt 25 ] 2>/dev/null; then
    echo "continuum-event-broker needs JDK 25 or newer: set JAVA_HOME to one (none found under /usr/lib/jvm)." >&2
    return 1 2>/dev/null || exit 1
fi
export PATH="$JAVA_HOME/bin:$PATH"
unset _ceb_jdk
