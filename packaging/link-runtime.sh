#!/usr/bin/env bash
# Links a runtime image with jlink: the given JDK modules plus every jar of JAR_DIR that jlink can link
# (explicit modules whose requires are all explicit modules or JDK modules: packaging/LinkableModules.java).
# The linked jars leave JAR_DIR; the others (automatic modules, what requires them, class-path jars) stay
# there. The runtime's java.security lists only java.base's security providers (below). Prints the linked
# modules, comma-separated, on stdout: the launcher names them with --add-modules,
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
# The security providers: only those the JDK constructs itself (java.base's SUN, SunRsaSign, SunEC, SunJSSE,
# SunJCE). The JDK's list also names providers of modules this runtime lacks (SunJGSS, SunSASL, XMLDSig, SunPCSC,
# JdkSASL, SunPKCS11) and JdkLDAP (java.naming's LDAP CertStore, used by nothing here). The JDK looks each of
# those up with a ServiceLoader over every module's providers, instantiating each to compare names: Bouncy
# Castle's two, about 800 classes, once per name, the first time anything lists the providers (OkHttp does, as
# the Kubernetes client starts). Measured: 340 ms and 600 ms of CPU off the broker's start to runtime_started.
security="$output/conf/security/java.security"
[ -f "$security" ] || { echo "link-runtime.sh: $security is missing" >&2; exit 1; }
awk 'BEGIN { keep["SUN"]; keep["SunRsaSign"]; keep["SunEC"]; keep["SunJSSE"]; keep["SunJCE"] }
     /^security\.provider\.[0-9]+=/ { name = substr($0, index($0, "=") + 1)
                                      if (!(name in keep)) next
                                      $0 = "security.provider." (++n) "=" name }
     { print }' "$security" > "$staging/java.security"
[ "$(grep -c '^security\.provider\.' "$staging/java.security")" -eq 5 ] \
    || { echo "link-runtime.sh: expected java.base's five security providers in $security" >&2; exit 1; }
cat "$staging/java.security" > "$security"
printf '%s\n' "$modules"
