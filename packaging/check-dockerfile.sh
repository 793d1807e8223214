#!/usr/bin/env bash
# Checks that packaging/Dockerfile agrees with a runtime image made by build.sh:
#   packaging/check-dockerfile.sh IMAGE_DIR
# Every /opt/continuum-event-broker/... path the Dockerfile names must exist in IMAGE_DIR
# (except the AOT cache, which the Dockerfile trains itself), and the ENTRYPOINT must use the
# same module, main class and @argfile as packaging/launcher.sh. Every base image comes from a
# build argument (so that each can be pinned by digest), there is a JDK stage that builds from
# source and a host path, and the runtime image carries its SBOM.
set -euo pipefail
image="${1:?usage: check-dockerfile.sh IMAGE_DIR}"
here="$(cd "$(dirname "$0")" && pwd)"
dockerfile="$here/Dockerfile"
status=0
while read -r path; do
    rel="${path#/opt/continuum-event-broker}"
    rel="${rel#/}"
    case "$path" in /opt/continuum-event-broker-*) continue ;; esac   # the archive's versioned top directory
    case "$rel" in *.aot|bin|lib/aot-train|"") continue ;; esac
    if [ ! -e "$image/$rel" ]; then
        echo "check-dockerfile: $path (from the Dockerfile) is not in the runtime image" >&2
        status=1
    fi
done < <(grep -o '/opt/continuum-event-broker[A-Za-z0-9_./-]*' "$dockerfile" | sed 's#/$##' | sort -u)
main="io.continuum.broker.app/io.continuum.broker.app.Main"
grep -q "\"$main\"" "$dockerfile" || { echo "check-dockerfile: ENTRYPOINT does not start $main" >&2; status=1; }
grep -q -- "-m io.continuum.broker.app/io.continuum.broker.app.Main" "$here/launcher.sh" || { echo "check-dockerfile: launcher.sh does not start $main" >&2; status=1; }
grep -q '"@/opt/continuum-event-broker/lib/jvm.options"' "$dockerfile" || { echo "check-dockerfile: ENTRYPOINT does not use lib/jvm.options" >&2; status=1; }
# Base images: FROM ${ARG}, an earlier stage, or scratch; never a hard-coded image.
stages=" scratch "
while read -r from_line; do
    # shellcheck disable=SC2086
    set -- $from_line
    image_ref="$2"
    stage=""
    [ "${3:-}" = AS ] || [ "${3:-}" = as ] && stage="$4"
    case "$image_ref" in
        '${'*'}') ;;
        source-'${SOURCE}') ;;
        *) case "$stages" in *" $image_ref "*) ;; *)
            echo "check-dockerfile: FROM $image_ref is not a build argument (cannot be pinned by digest)" >&2; status=1 ;; esac ;;
    esac
    [ -n "$stage" ] && stages="$stages$stage "
done < <(grep -E '^FROM ' "$dockerfile")
for arg in JDK_IMAGE BASE_IMAGE RUNTIME_IMAGE SOURCE; do
    grep -q "^ARG $arg=" "$dockerfile" || { echo "check-dockerfile: no ARG $arg with a default" >&2; status=1; }
done
# Nothing fixed to one architecture: the archive is chosen by TARGETARCH, no platform is pinned.
if grep -n -E 'linux-x64|amd64\.|--platform=linux/' "$dockerfile" | grep -v '^[0-9]*:#' | grep -v 'amd64) arch=x64' >&2; then
    echo "check-dockerfile: the lines above fix an architecture (use TARGETARCH)" >&2; status=1
fi
grep -q '^ARG TARGETARCH' "$dockerfile" || { echo "check-dockerfile: no ARG TARGETARCH (the archive of the target platform)" >&2; status=1; }
grep -q 'packaging/build.sh' "$dockerfile" || { echo "check-dockerfile: no stage builds from source (packaging/build.sh)" >&2; status=1; }
[ -f "$image/sbom.cdx.json" ] || { echo "check-dockerfile: the runtime image has no sbom.cdx.json" >&2; status=1; }
[ "$status" -eq 0 ] && echo "    ok: packaging/Dockerfile matches the runtime image layout"
exit "$status"
