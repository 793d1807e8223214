#!/usr/bin/env bash
# Builds the Debian package from a runtime image made by build.sh:
#   packaging/build-deb.sh IMAGE_DIR DEB_VERSION OUT_DIR
# Layout: /opt/continuum-event-broker (the runtime image: bin, runtime, lib),
# /usr/bin/continuum-event-broker (symlink), /usr/share/man/man1/continuum-event-broker.1.gz,
# /etc/continuum-event-broker/config.yaml.example, /usr/lib/systemd/system/continuum-event-broker.service,
# /usr/share/doc/continuum-event-broker/{README.md,copyright,changelog.gz,sbom.cdx.json},
# /usr/lib/sysusers.d/continuum-event-broker.conf. The maintainer scripts create the system user
# continuum-event-broker and train the AOT cache for /opt/continuum-event-broker.
set -euo pipefail
image="${1:?usage: build-deb.sh IMAGE_DIR DEB_VERSION OUT_DIR}"
deb_version="${2:?usage: build-deb.sh IMAGE_DIR DEB_VERSION OUT_DIR}"
out="${3:?usage: build-deb.sh IMAGE_DIR DEB_VERSION OUT_DIR}"
here="$(cd "$(dirname "$0")" && pwd)"
name=continuum-event-broker
# The build machine's architecture: the jlink runtime inside is the build JDK's (an arm64 JDK makes an arm64
# package); nothing in the package is fixed to amd64.
arch=$(dpkg --print-architecture)

stage="$out/deb-root"
rm -rf "$stage"
prefix="$stage/opt/$name"
mkdir -p "$prefix/lib" "$stage/usr/bin" "$stage/usr/share/man/man1" "$stage/etc/$name" \
    "$stage/usr/lib/systemd/system" "$stage/usr/share/doc/$name" "$stage/usr/lib/sysusers.d" "$stage/DEBIAN"
cp -a "$image/bin" "$image/runtime" "$prefix/"
cp -a "$image/lib/app" "$image/lib/jvm.options" "$image/lib/aot-train" "$image/lib/training" "$prefix/lib/"
# Absolute: a link from one top-level directory into another (Debian policy 10.5).
ln -s "/opt/$name/bin/$name" "$stage/usr/bin/$name"
# As Debian ships files: no write-protected ones (jlink makes runtime/legal read-only), and native code without
# its symbol tables (the JDK's libraries, 30 MiB of them; stack traces of Java code keep their line numbers).
find "$prefix" -type f -perm 0444 -exec chmod 0644 {} +
find "$prefix/runtime" -type f \( -name '*.so' -o -path '*/bin/*' -o -name jspawnhelper -o -name jexec \) \
    -exec sh -c 'for f; do case "$(head -c 4 "$f" | od -An -c | tr -d " ")" in *ELF*) strip --strip-unneeded "$f" ;; esac; done' sh {} +
gzip -9n -c "$image/man/man1/$name.1" > "$stage/usr/share/man/man1/$name.1.gz"
# The host's example differs from the container's in two places: /metrics and /statusz on loopback (the built-in
# default 0.0.0.0:9464 is the container's, where a NetworkPolicy guards the port), and no credential setting
# (the unit passes it, from LoadCredential=). Each substitution must have happened.
sed -e 's|^# metrics_listen: 0\.0\.0\.0:9464$|# On a host: loopback only. To open it to a scraper, set the address to serve on (0.0.0.0:9464 for\
# every interface) and limit who reaches the port (a firewall, IPAddressAllow= in a drop-in).\
metrics_listen: 127.0.0.1:9464|' \
    -e 's|^# credential_file: /var/run/secrets/continuum-event-broker/credential$|# On a host leave both unset: the unit passes /etc/continuum-event-broker/credential (root-only) as\
# a systemd credential (LoadCredential=) and sets CONTINUUM_EVENT_BROKER_CREDENTIAL_FILE to it.|' \
    -e '/^# credential_env: CONTINUUM_EVENT_BROKER_CREDENTIAL$/d' \
    "$image/etc/config.yaml.example" > "$stage/etc/$name/config.yaml.example"
chmod 0644 "$stage/etc/$name/config.yaml.example"
grep -qx 'metrics_listen: 127.0.0.1:9464' "$stage/etc/$name/config.yaml.example" \
    && ! grep -q '^# credential_\(file\|env\):' "$stage/etc/$name/config.yaml.example" \
    || { echo "build-deb: the host example's metrics_listen or credential lines were not replaced" >&2; exit 1; }
install -m 0644 "$here/systemd/$name.service" "$stage/usr/lib/systemd/system/$name.service"
install -m 0644 "$image/README.md" "$stage/usr/share/doc/$name/README.md"
# A native package's changelog (Debian's format); its newest entry must name the version being built.
changelog_version=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$here/debian/changelog")
[ "$changelog_version" = "$deb_version" ] || { echo "build-deb: packaging/debian/changelog's newest entry is $changelog_version, the package is $deb_version: add an entry" >&2; exit 1; }
gzip -9n -c "$here/debian/changelog" > "$stage/usr/share/doc/$name/changelog.gz"
install -m 0644 "$here/debian/sysusers.conf" "$stage/usr/lib/sysusers.d/$name.conf"
install -d "$stage/usr/share/lintian/overrides"
install -m 0644 "$here/debian/lintian-overrides" "$stage/usr/share/lintian/overrides/$name"
# Debian's machine-readable copyright file: the broker's Apache-2.0 license and those of the bundled
# runtime and jars (the full Apache text is /usr/share/common-licenses/Apache-2.0 on every Debian system).
install -m 0644 "$here/debian/copyright" "$stage/usr/share/doc/$name/copyright"
# The CycloneDX SBOM of what the package installs (build.sh writes it into the runtime image).
[ -f "$image/sbom.cdx.json" ] || { echo "build-deb: $image/sbom.cdx.json is missing" >&2; exit 1; }
install -m 0644 "$image/sbom.cdx.json" "$stage/usr/share/doc/$name/sbom.cdx.json"

installed_kb=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$deb_version/" -e "s/@ARCH@/$arch/" -e "s/@INSTALLED_SIZE@/$installed_kb/" \
    "$here/debian/control.in" > "$stage/DEBIAN/control"
printf '/etc/%s/config.yaml.example\n' "$name" > "$stage/DEBIAN/conffiles"
for script in postinst prerm postrm; do
    install -m 0755 "$here/debian/$script" "$stage/DEBIAN/$script"
done

deb="$out/${name}_${deb_version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
rm -rf "$stage"
echo "    $(basename "$deb"):"
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Architecture\|Depends\|Installed-Size\):/      \1:/p'
