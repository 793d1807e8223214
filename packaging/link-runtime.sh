#!/usr/bin/env bash
# Links a runtime image with jlink: the given JDK modules plus every jar of JAR_DIR that jlink can link
# (explicit modules whose requires are all explicit modules or JDK modules: packaging/LinkableModules.java).
# The linked jars leave JAR_DIR; the others (automatic modules, what requires them, class-path jars) stay
# there. Prints the linked modules, comma-separated, on stdout: the launcher names them with --add-modules,
# because a module in the runtime image is only resolved when something asks for it, and the automatic
# modules that stay on the module path read only what is resolved.
#
#   packaging/link-runtime.sh JAR_DIR OUTPUT JDK_MODULES      (JDK_MODULES comma-separated)
#
# Used by packaging/build.sh (the broker) and bench/startup-baseline/build.sh (its start-up baseline), so
# both are linked the same way.
#
# Why link them: at start the JVM and Helidon look up resources (service descriptors, Helidon's service
# registry files, the logging back-end) in every module, and every module-path jar is opened for that: its
# central directory read, its manifest scanned. A module in the runtime image costs a hash lookup instead.
# Bouncy Castle's jars are signed (their manifests name every class with its digest, 884 KB for bcprov), and
# the JDK verifies a signed jar's signature before the first read from it. jlink does not copy signature
# files (--ignore-signing-information); OpenJDK does not ask for signed security providers.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: link-runtime.sh JAR_DIR OUTPUT JDK_MODULES" >&2; exit 2; }
jars="$1" output="$2" jdk_modules="$3"
here="$(cd "$(dirname "$0")" && pwd)"
linkable="$(java "$here/LinkableModules.java" "$jars")"
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
modules=""
while read -r module jar; do
    [ -n "$module" ] || continue
    mv "$jars/$jar" "$staging/"
    modules="${modules:+$modules,}$module"
done <<<"$linkable"
# --strip-debug is left out on purpose: it would strip the libraries' line numbers from stack traces too.
jlink --module-path "$staging" --add-modules "$jdk_modules${modules:+,$modules}" \
    --ignore-signing-information --no-header-files --no-man-pages --compress zip-9 \
    --generate-cds-archive --output "$output" > /dev/null 2> "$staging/jlink.err" \
    || { cat "$staging/jlink.err" >&2; exit 1; }
# jlink warns about each signed jar it links; anything else it says is worth seeing.
grep -v -e '^WARNING: signed modular JAR .* is currently not supported' "$staging/jlink.err" >&2 || true
printf '%s\n' "$modules"
