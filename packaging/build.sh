#!/usr/bin/env bash
# The one command that produces the release artifacts of continuum-event-broker:
#
#   packaging/build.sh [--skip-maven] [--no-aot]
#
# 1. ./mvnw package (skipped with --skip-maven when modules/app/target is already built),
# 2. the runtime image target/packaging/continuum-event-broker-VERSION/: a jlink runtime (runtime/) with the
#    JDK modules the app needs and every library module jlink can link (packaging/link-runtime.sh), the
#    other jars as the module path (lib/app/: automatic modules and what requires them),
#    the launcher bin/continuum-event-broker, the man page, the example config,
# 3. a smoke test of that image (--version, --check-config, /healthz, /readyz, /metrics served
#    as Prometheus text by the Micrometer provider),
# 4. the AOT cache for the image in place (skipped with --no-aot; used for docs/benchmarks.md),
# 5. target/packaging/continuum-event-broker-VERSION-linux-ARCH.tar.gz (ARCH: the build JDK's, x64 or
#    aarch64; without the AOT cache, which is only valid in the directory it was trained in; run
#    lib/aot-train after unpacking), with LICENSE (Apache-2.0), README.md, the man page and the example
#    config, and target/packaging/continuum-event-broker-VERSION-portable.tar.gz: the same application
#    without a runtime, for any Linux architecture, run by a JDK 25 found on the host (smoke-tested here
#    with this machine's JDK),
# 6. target/packaging/continuum-event-broker_DEBVERSION_ARCH.deb (dpkg-deb, this machine's architecture; its copyright file is
#    packaging/debian/copyright, Debian's machine-readable format),
# 7. the CycloneDX SBOM (modules/app/target/bom.json from org.cyclonedx:cyclonedx-maven-plugin, plus
#    the jlink runtime as a component) in the runtime image (sbom.cdx.json, so in the archive and
#    the container image), in the .deb (/usr/share/doc/continuum-event-broker/sbom.cdx.json) and
#    beside them as target/packaging/continuum-event-broker-VERSION.cdx.json.
#
# Check the .deb by installing it: packaging/test-deb.sh. The container image is built from the
# archive by packaging/Dockerfile (see docs/deployment.md).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
skip_maven=false
aot=true
for arg in "$@"; do
    case "$arg" in
        --skip-maven) skip_maven=true ;;
        --no-aot) aot=false ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

say() { printf '==> %s\n' "$*"; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

cd "$root"
# shellcheck source=../bin/env.sh
. bin/env.sh
for tool in jlink jdeps dpkg-deb gzip tar curl python3; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is needed (JDK 25 for jlink/jdeps; apt-get install dpkg gzip tar curl python3)"
done

if ! $skip_maven; then
    say "building the application (./mvnw package)"
    ./mvnw -B -ntp -q -DskipTests package
fi

app_target="$root/modules/app/target"
app_jar=""
for candidate in "$app_target"/continuum-event-broker-app-*.jar; do
    case "$candidate" in *-tests.jar|*-sources.jar|*-javadoc.jar) ;; *) [ -f "$candidate" ] && app_jar="$candidate" && break ;; esac
done
[ -n "$app_jar" ] && [ -d "$app_target/lib" ] || die "modules/app/target is not built; run without --skip-maven"
version="$(basename "$app_jar" .jar)"
version="${version#continuum-event-broker-app-}"
deb_version="${version//-/\~}"   # 0.1.0-SNAPSHOT -> 0.1.0~SNAPSHOT (sorts before 0.1.0)
name="continuum-event-broker"
out="$root/target/packaging"
image="$out/$name-$version"
say "version $version; output in ${out#"$root"/}"
rm -rf "$out"
mkdir -p "$image/bin" "$image/lib/app" "$image/man/man1" "$image/etc"

# --- application jars: the module path --------------------------------------------------------
cp "$app_jar" "$image/lib/app/"
cp "$app_target"/lib/*.jar "$image/lib/app/"

# --- JDK modules ------------------------------------------------------------------------------
say "finding the JDK modules (jdeps, boot layer resolution, packaging/jlink-modules.txt)"
modules_file="$out/jdk-modules.txt"
{
    grep -v -e '^#' -e '^$' "$here/jlink-modules.txt"
    jdeps --multi-release 25 --ignore-missing-deps --print-module-deps \
        --module-path "$image/lib/app" --add-modules ALL-MODULE-PATH "$image/lib/app/$(basename "$app_jar")" \
        | tr ',' '\n'
    # Modules that application modules require directly (jlink adds their closure).
    java "@$here/jvm.options" --module-path "$image/lib/app" --show-module-resolution \
        -m io.continuum.broker.app/io.continuum.broker.app.Main --version 2>/dev/null \
        | awk '$2 == "requires" && $4 ~ /^jrt:/ && $1 !~ /^(java|jdk)\./ { print $3 }'
} | sort -u > "$modules_file"
extra=$(comm -13 <(grep -v -e '^#' -e '^$' "$here/jlink-modules.txt" | sort -u) "$modules_file" | tr '\n' ' ')
[ -z "$extra" ] || echo "    note: modules found beyond jlink-modules.txt: $extra(add them there)"
say "jlink: $(paste -sd, "$modules_file"), and the application's explicit modules (packaging/link-runtime.sh)"
linked="$("$here/link-runtime.sh" "$image/lib/app" "$image/runtime" "$(paste -sd, "$modules_file")")"
printf '%s\n' "${linked//,/$'\n'}" > "$out/linked-modules.txt"
echo "    linked into runtime/: $(wc -l < "$out/linked-modules.txt") modules; on the module path (lib/app): $(find "$image/lib/app" -name '*.jar' | wc -l) jars"

# --- launcher, options, docs ------------------------------------------------------------------
install -m 0755 "$here/launcher.sh" "$image/bin/$name"
install -m 0755 "$here/aot-train.sh" "$image/lib/aot-train"
# The training run's peers (lib/aot-train runs them in a JVM of their own; never on the broker's module path).
training_jar="$root/modules/training/target/continuum-event-broker-training-$version.jar"
[ -f "$training_jar" ] || die "modules/training/target is not built; run without --skip-maven"
install -d "$image/lib/training"
install -m 0644 "$training_jar" "$image/lib/training/"
# jvm.options, plus the linked modules as roots: ALL-MODULE-PATH only names what stayed in lib/app.
{
    cat "$here/jvm.options"
    if [ -n "$linked" ]; then
        echo "# Added by packaging/build.sh: the application's modules linked into runtime/, resolved like the module path's."
        echo "--add-modules"
        echo "$linked"
    fi
} > "$image/lib/jvm.options"
chmod 0644 "$image/lib/jvm.options"
install -m 0644 "$here/$name.1" "$image/man/man1/$name.1"
install -m 0644 "$root/etc/config.event-broker.yaml.example" "$image/etc/config.yaml.example"
install -m 0644 "$root/README.md" "$image/README.md"
[ -f "$root/LICENSE" ] || die "no LICENSE file at the repository root (the archive must carry the license)"
install -m 0644 "$root/LICENSE" "$image/LICENSE"
printf '%s\n' "$version" > "$image/VERSION"

# --- SBOM: the application's (Maven's resolved graph) plus the runtime jlink made ---------------
[ -f "$app_target/bom.json" ] || die "modules/app/target/bom.json is missing (the cyclonedx-maven-plugin runs at package)"
python3 - "$app_target/bom.json" "$image/runtime/release" "$modules_file" "$image/sbom.cdx.json" "$out/linked-modules.txt" <<'PY'
import json, sys
bom_path, release_path, modules_path, out, linked_path = sys.argv[1:6]
bom = json.load(open(bom_path))
release = dict(line.split("=", 1) for line in open(release_path).read().splitlines() if "=" in line)
release = {k: v.strip('"') for k, v in release.items()}
modules = [m.strip() for m in open(modules_path) if m.strip()]
linked = [m.strip() for m in open(linked_path) if m.strip()]
ref = "runtime:jlink:" + release.get("JAVA_VERSION", "unknown")
runtime = {
    "type": "platform", "bom-ref": ref, "name": "java-runtime (jlink)",
    "version": release.get("JAVA_VERSION", "unknown"),
    "publisher": release.get("IMPLEMENTOR", "unknown"),
    "description": "runtime/ in the image: a Java runtime linked by jlink from the build JDK, with the "
                   "application's library modules linked in (each is also a component of its own)",
    "properties": [{"name": "jlink:module", "value": m} for m in modules]
                  + [{"name": "jlink:linked-library-module", "value": m} for m in linked],
}
bom.setdefault("components", []).append(runtime)
app = bom["metadata"]["component"]
bom["components"].append({
    "type": "application", "bom-ref": "training:" + app.get("version", "unknown"),
    "name": "continuum-event-broker-training", "version": app.get("version", "unknown"),
    "description": "lib/training in the image: the loopback peers lib/aot-train relays through the broker while "
                   "the JDK records its AOT cache (run in a JVM of their own, never on the broker's module path)",
})
app_ref = bom["metadata"]["component"]["bom-ref"]
for dep in bom.setdefault("dependencies", []):
    if dep.get("ref") == app_ref:
        dep.setdefault("dependsOn", []).append(ref)
json.dump(bom, open(out, "w"), indent=2)
print(f"    SBOM: {len(bom['components'])} components (CycloneDX {bom['specVersion']})")
PY
cp "$image/sbom.cdx.json" "$out/$name-$version.cdx.json"

# --- smoke test of the image ------------------------------------------------------------------
say "smoke test of the runtime image"
"$here/smoke-test.sh" "$image/bin/$name"

"$here/check-dockerfile.sh" "$image"

# --- release archive (no AOT cache: it is bound to the directory it was trained in) -----------
# The runtime inside is the build JDK's: name the archive after its architecture (the JDK's own names).
case "$(uname -m)" in x86_64) jdk_arch=x64 ;; aarch64|arm64) jdk_arch=aarch64 ;; *) jdk_arch="$(uname -m)" ;; esac
tarball="$out/$name-$version-linux-$jdk_arch.tar.gz"
say "archive ${tarball#"$root"/}"
tar -C "$out" --owner=0 --group=0 --numeric-owner --sort=name \
    --exclude='*.aot' --exclude='*.aot.root' -czf "$tarball" "$(basename "$image")"
tar -tzf "$tarball" | grep -x "$(basename "$image")/LICENSE" > /dev/null || die "the archive lacks LICENSE"
tar -tzf "$tarball" | grep -x "$(basename "$image")/sbom.cdx.json" > /dev/null || die "the archive lacks sbom.cdx.json"

# --- portable archive: no runtime, every jar, any architecture with a JDK 25 ---------------------
portable="$out/portable/$name-$version"
say "portable archive (the application for a JDK 25 on the host, any architecture)"
mkdir -p "$portable/bin" "$portable/lib/app" "$portable/man/man1" "$portable/etc"
cp "$app_jar" "$app_target"/lib/*.jar "$portable/lib/app/"
install -m 0644 "$here/jvm.options" "$portable/lib/jvm.options"
install -m 0755 "$here/launcher-portable.sh" "$portable/bin/$name"
install -m 0644 "$here/$name.1" "$portable/man/man1/$name.1"
install -m 0644 "$root/etc/config.event-broker.yaml.example" "$portable/etc/config.yaml.example"
install -m 0644 "$root/README.md" "$root/LICENSE" "$portable/"
install -m 0644 "$app_target/bom.json" "$portable/sbom.cdx.json"
printf '%s\n' "$version" > "$portable/VERSION"
portable_tarball="$out/$name-$version-portable.tar.gz"
tar -C "$out/portable" --owner=0 --group=0 --numeric-owner --sort=name -czf "$portable_tarball" "$name-$version"
rm -rf "$out/portable"
# The test of the archive as a user runs it: unpacked elsewhere, with this machine's JDK 25 (JAVA_HOME).
unpacked="$(mktemp -d)"
tar -C "$unpacked" -xzf "$portable_tarball"
"$here/smoke-test.sh" "$unpacked/$name-$version/bin/$name"
# An older Java is refused with a clear message and exit 3 (a stand-in that reports Java 21).
printf '#!/bin/sh\necho "    java.specification.version = 21" >&2\n' > "$unpacked/java21" && chmod +x "$unpacked/java21"
status=0
refusal=$(CONTINUUM_EVENT_BROKER_JAVA="$unpacked/java21" "$unpacked/$name-$version/bin/$name" --version 2>&1) || status=$?
[ "$status" = 3 ] && grep -q 'Java 25 or later is needed' <<<"$refusal" \
    || die "the portable launcher did not refuse Java 21 (exit $status): $refusal"
echo "    ok: the portable launcher refuses Java 21: $refusal"
# docs/deployment.md's archive steps (the block marked doc-test: archive), as written, with this machine's JDK.
rm -rf "$unpacked"/*
cp "$portable_tarball" "$unpacked/"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$unpacked/broker-a.credential"
doc_block=$("$here/doc-block.sh" archive "$root/docs/deployment.md") || die "docs/deployment.md has no block marked doc-test: archive"
doc_out=$(cd "$unpacked" && bash -euo pipefail -c "$doc_block" 2>&1) \
    || die "docs/deployment.md's archive steps failed as written: $doc_out"
grep -q '^credential from .*: ok' <<<"$doc_out" || die "the documented --check-config did not pass: $doc_out"
echo "    ok: docs/deployment.md's archive steps ran as written (--check-config passed)"
rm -rf "$unpacked"

# --- Debian package ---------------------------------------------------------------------------
say "Debian package"
"$here/build-deb.sh" "$image" "$deb_version" "$out"

# --- AOT cache for the image in place (benchmarks; the container trains its own) ---------------
if $aot; then
    say "AOT cache for ${image#"$root"/}"
    "$image/lib/aot-train"
fi

say "done"
printf '    runtime image  %s (%s; JRE %s)\n' "${image#"$root"/}" "$(du -sh "$image" | cut -f1)" "$(du -sh "$image/runtime" | cut -f1)"
printf '    archive        %s (%s)\n' "${tarball#"$root"/}" "$(du -h "$tarball" | cut -f1)"
printf '    portable       %s (%s; any architecture, JDK 25 on the host)\n' "${portable_tarball#"$root"/}" \
    "$(du -h "$portable_tarball" | cut -f1)"
printf '    SBOM           %s (CycloneDX; also inside the image, the archive and the .deb)\n' "target/packaging/$name-$version.cdx.json"
for deb in "$out"/*.deb; do
    printf '    deb            %s (%s)\n' "${deb#"$root"/}" "$(du -h "$deb" | cut -f1)"
done
