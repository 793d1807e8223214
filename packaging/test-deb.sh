#!/usr/bin/env bash
# Installs the Debian package built by build.sh, checks it, and removes it again:
#   packaging/test-deb.sh [PATH.deb]
# Needs root (dpkg -i). Checks dpkg-deb --info/--contents, that the man page renders
# (man -l), and runs the installed broker through packaging/smoke-test.sh (--version,
# --check-config against the installed example config with a temporary credential file, a real
# start, SIGTERM). The package is purged at the end, also on failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
deb="${1:-$(ls "$root"/target/packaging/continuum-event-broker_*_amd64.deb 2>/dev/null | head -1 || true)}"
[ -n "$deb" ] && [ -f "$deb" ] || { echo "test-deb: no .deb found; run packaging/build.sh first" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "test-deb: must run as root (dpkg -i)" >&2; exit 1; }
name=continuum-event-broker
if dpkg -s "$name" >/dev/null 2>&1; then
    echo "test-deb: $name is already installed on this machine; refusing to replace it" >&2
    exit 1
fi
ok() { echo "    ok: $*"; }
fail() { echo "test-deb: FAILED: $*" >&2; exit 1; }

echo "==> dpkg-deb --info / --contents $(basename "$deb")"
dpkg-deb --info "$deb" > /dev/null
contents=$(dpkg-deb --contents "$deb")
for path in ./usr/bin/$name ./opt/$name/bin/$name ./opt/$name/runtime/bin/java ./opt/$name/lib/jvm.options \
        ./opt/$name/lib/aot-train ./usr/share/man/man1/$name.1.gz ./etc/$name/config.yaml.example \
        ./lib/systemd/system/$name.service ./usr/share/doc/$name/copyright; do
    grep -q " $path\( \|$\)" <<<"$contents" || fail "$path is not in the package"
done
ok "package metadata and contents"

cleanup() { dpkg --purge "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT
echo "==> dpkg -i"
dpkg -i "$deb" > /dev/null
ok "installed: $(dpkg-query -W -f '${Package} ${Version}' "$name")"
getent passwd "$name" > /dev/null || fail "the system user $name was not created"
ok "system user $name"
[ "$(stat -c '%U:%G %a' /etc/$name)" = "root:$name 750" ] || fail "/etc/$name is $(stat -c '%U:%G %a' /etc/$name)"
ok "/etc/$name is root:$name 0750"
if [ -f /opt/$name/lib/$name.aot ]; then ok "AOT cache trained by postinst"; else echo "    note: no AOT cache (postinst training skipped or failed)"; fi
if command -v man > /dev/null; then
    man -l /usr/share/man/man1/$name.1.gz 2>/dev/null | grep -q 'EXIT STATUS' || fail "man page does not render"
    ok "man page renders"
fi
if command -v systemd-analyze > /dev/null; then
    systemd-analyze verify /lib/systemd/system/$name.service 2>&1 | grep -v -e '^$' -e 'ConditionPathExists' | sed 's/^/    systemd-analyze: /' || true
fi

echo "==> the installed broker"
"$here/smoke-test.sh" "$(command -v $name)" /etc/$name/config.yaml.example

# The container image has the same layout at the same path (/opt/continuum-event-broker): run the
# Dockerfile's ENTRYPOINT argument list as the image's user 65532 against the installed tree.
# Any AOT cache problem would be reported on stderr (lib/jvm.options routes JVM warnings there).
if command -v setpriv > /dev/null; then
    mapfile -t entrypoint < <("$(command -v python3 || echo python3)" - "$here/Dockerfile" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
m = re.search(r'^ENTRYPOINT (\[.*?\])\s*$', text.replace("\\\n", " "), re.M)
print("\n".join(json.loads(m.group(1))))
PY
)
    out=$(setpriv --reuid=65532 --regid=65532 --clear-groups "${entrypoint[@]}" --version 2> /tmp/test-deb-entrypoint.err) \
        || fail "the container ENTRYPOINT failed: $(cat /tmp/test-deb-entrypoint.err)"
    [ ! -s /tmp/test-deb-entrypoint.err ] || fail "the container ENTRYPOINT wrote to stderr: $(cat /tmp/test-deb-entrypoint.err)"
    rm -f /tmp/test-deb-entrypoint.err
    ok "the Dockerfile ENTRYPOINT as uid 65532 on the same layout: $out (AOT cache accepted)"
fi

echo "==> dpkg --purge"
dpkg --purge "$name" > /dev/null
trap - EXIT
[ ! -e /usr/bin/$name ] && [ ! -e /opt/$name ] || fail "files left after purge: $(ls -d /usr/bin/$name /opt/$name 2>/dev/null)"
ok "removed cleanly"
echo "test-deb: all checks passed"
