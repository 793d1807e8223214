#!/usr/bin/env bash
# Installs the Debian package built by build.sh (version N), upgrades it to N+1, removes and
# purges it, checking each step:
#   packaging/test-deb.sh [PATH.deb]
# Needs root (dpkg). N+1 is the same package repacked with a higher version.
#
# - the package: dpkg-deb --info/--contents, the man page renders (man -l), its SBOM;
# - install: the system user, /etc/continuum-event-broker root:continuum-event-broker 0750, the
#   AOT cache trained by postinst as the service user (root only installs the file);
# - the installed broker through packaging/smoke-test.sh, and the Dockerfile's ENTRYPOINT as uid
#   65532 on the same layout;
# - upgrade N -> N+1 with a configured, running service: the administrator's config.yaml and a
#   local edit of the conffile config.yaml.example kept, the service not stopped by prerm, a
#   restart asked for by postinst, and the broker serving again from the new version;
# - remove (the service stopped) and purge (unit state and package files gone; the system user and group and
#   the administrator's files in /etc kept), then a new system user that can read nothing the package left.
# The host is left as found: the package purged, the users it and the test created deleted.
#
# The service: where systemd is PID 1 the real unit is enabled and started, and `systemctl
# is-active` is checked. Elsewhere (a container) the script re-executes itself in a private
# mount namespace where /run/systemd/system exists, so that the maintainer scripts take their
# systemd branch, with systemctl, deb-systemd-invoke and deb-systemd-helper replaced by shims
# that record what they were asked to do; the service is the unit's ExecStart run as the
# unit's user, and the test does what systemd would do with the recorded requests.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
deb="${1:-$(ls "$root"/target/packaging/continuum-event-broker_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -1 || true)}"
[ -n "$deb" ] && [ -f "$deb" ] || { echo "test-deb: no .deb found; run packaging/build.sh first" >&2; exit 1; }
deb="$(readlink -f "$deb")"
[ "$(id -u)" = 0 ] || { echo "test-deb: must run as root (dpkg -i)" >&2; exit 1; }
name=continuum-event-broker
unit=$name.service
if dpkg -s "$name" >/dev/null 2>&1; then
    echo "test-deb: $name is already installed on this machine; refusing to replace it" >&2
    exit 1
fi
real_systemd=false
[ "$(ps -p 1 -o comm= 2>/dev/null)" = systemd ] && real_systemd=true
if ! $real_systemd && [ -z "${TEST_DEB_NAMESPACE:-}" ]; then
    command -v unshare >/dev/null || { echo "test-deb: unshare (util-linux) is needed without systemd" >&2; exit 1; }
    exec env TEST_DEB_NAMESPACE=1 unshare --mount --propagation private "$0" "$deb"
fi

ok() { echo "    ok: $*"; }
fail() { echo "test-deb: FAILED: $*" >&2; exit 1; }
work="$(mktemp -d)"
service_pid=""
notify_pid=""
stop_service() {
    if $real_systemd; then systemctl stop "$unit" >/dev/null 2>&1 || true; return; fi
    if [ -n "$service_pid" ] && kill -0 "$service_pid" 2>/dev/null; then
        kill -TERM "$service_pid"
        local status=0
        wait "$service_pid" || status=$?
        service_pid=""
        [ "$status" -eq 0 ] || fail "the service exited $status after SIGTERM"
    fi
}
# Leave the host as found: the package purged, and the users the package and this test created (purge keeps the
# service user and group on purpose) deleted, with the administrator's files the test wrote.
next_user=ceb-test-next-user
created_user=""
had_user=false
getent passwd "$name" > /dev/null && had_user=true
cleanup() {
    stop_service || true
    [ -z "$notify_pid" ] || kill "$notify_pid" 2>/dev/null || true
    dpkg --purge "$name" >/dev/null 2>&1 || true
    rm -rf "/etc/$name" "$work"
    [ -z "$created_user" ] || userdel "$created_user" >/dev/null 2>&1 || true
    if ! $had_user && getent passwd "$name" > /dev/null; then
        userdel "$name" >/dev/null 2>&1 || true
        groupdel "$name" >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT

if [ -n "${TEST_DEB_NAMESPACE:-}" ]; then
    # Only this process and its children see these mounts.
    if [ -d /run/systemd ]; then mount -t tmpfs test-deb /run/systemd; else mount -t tmpfs test-deb /run; mkdir -p /run/systemd; fi
    mkdir -p /run/systemd/system
    mkdir -p "$work/shims"
    for tool in systemctl deb-systemd-invoke deb-systemd-helper; do
        # exits 1 while the file fail-TOOL exists: a unit that fails to start
        printf '#!/bin/sh\necho "%s $*" >> %s\n[ ! -e %s ] || exit 1\nexit 0\n' "$tool" "$work/calls" \
            "$work/fail-$tool" > "$work/shims/$tool"
        chmod 0755 "$work/shims/$tool"
    done
    export PATH="$work/shims:$PATH"
    echo "test-deb: systemd is not PID 1: the maintainer scripts' systemctl/deb-systemd-* calls are recorded"
fi
: > "$work/calls"
asked() { grep -q -x -F -- "$1" "$work/calls"; }
calls() { tr '\n' ';' < "$work/calls"; }

echo "==> dpkg-deb --info / --contents $(basename "$deb")"
dpkg-deb --info "$deb" > /dev/null
contents=$(dpkg-deb --contents "$deb")
for path in ./usr/bin/$name ./opt/$name/bin/$name ./opt/$name/runtime/bin/java ./opt/$name/lib/jvm.options \
        ./opt/$name/lib/aot-train ./opt/$name/lib/training/continuum-event-broker-training-$(dpkg-deb -f "$deb" Version | sed 's/~/-/').jar \
        ./usr/share/man/man1/$name.1.gz ./etc/$name/config.yaml.example \
        ./usr/lib/systemd/system/$name.service ./usr/share/doc/$name/copyright ./usr/share/doc/$name/sbom.cdx.json \
        ./usr/share/doc/$name/changelog.gz ./usr/lib/sysusers.d/$name.conf; do
    grep -q " $path\( \|$\)" <<<"$contents" || fail "$path is not in the package"
done
grep -q '^ExecStartPre' <(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/lib/systemd/system/$name.service) \
    && fail "the unit has an ExecStartPre (RestartPreventExitStatus does not cover it: a bad config restarts forever)"
ok "package metadata and contents (with the CycloneDX SBOM)"
if command -v lintian > /dev/null; then
    # Every error and warning fails, but for the overrides the package carries, each with its reason.
    findings=$(lintian --tag-display-limit 0 "$deb" 2>/dev/null | grep -E '^[EW]: ' || true)
    [ -z "$findings" ] || fail "lintian: $findings"
    ok "lintian: no error or warning beyond the explained overrides (packaging/debian/lintian-overrides)"
else
    echo "    note: lintian is not installed (apt-get install lintian): its check is skipped"
fi

# N+1: the same package with a higher version.
version=$(dpkg-deb -f "$deb" Version)
next="$version+upgradetest1"
dpkg-deb -R "$deb" "$work/next"
sed -i "s/^Version: .*/Version: $next/" "$work/next/DEBIAN/control"
# gzip -1: this package is only installed here, and xz takes minutes on a loaded machine.
dpkg-deb --root-owner-group -Zgzip -z1 --build "$work/next" "$work/next.deb" > /dev/null
rm -rf "$work/next"
dpkg --compare-versions "$next" gt "$version" || fail "$next does not sort after $version"

echo "==> dpkg -i (version $version)"
dpkg -i "$deb" > "$work/install.out"
ok "installed: $(dpkg-query -W -f '${Package} ${Version}' "$name")"
getent passwd "$name" > /dev/null || fail "the system user $name was not created"
[ "$(getent passwd "$name" | cut -d: -f6,7)" = "/nonexistent:/usr/sbin/nologin" ] \
    || fail "the system user is $(getent passwd "$name") (Debian's convention: home /nonexistent, shell nologin)"
[ "$(id -u "$name")" -lt 1000 ] || fail "$name is not a system user (uid $(id -u "$name"))"
[ "$(dpkg-deb -f "$deb" Architecture)" = "$(dpkg --print-architecture)" ] || fail "the package is not for this machine's architecture"
ok "system user $name (uid $(id -u "$name"), home /nonexistent, no shell); Architecture $(dpkg-deb -f "$deb" Architecture)"
[ "$(stat -c '%U:%G %a' /etc/$name)" = "root:$name 750" ] || fail "/etc/$name is $(stat -c '%U:%G %a' /etc/$name)"
ok "/etc/$name is root:$name 0750"
# The training run relays on loopback only, so it must succeed here: a package whose cache cannot be trained
# would give every host a broker that compiles its data path under its first traffic.
if [ -f /opt/$name/lib/$name.aot ] || [ -z "${CONTINUUM_EVENT_BROKER_SKIP_AOT:-}" ]; then
    [ -f /opt/$name/lib/$name.aot ] || fail "postinst trained no AOT cache: $(cat "$work/install.out")"
    grep -q "AOT cache trained as user $name" "$work/install.out" || fail "postinst did not train the AOT cache as $name: $(cat "$work/install.out")"
    grep -q "relayed in training: .* of messages" "$work/install.out" || fail "postinst's training did not relay: $(cat "$work/install.out")"
    [ "$(stat -c %U /opt/$name/lib/$name.aot)" = root ] || fail "the AOT cache is not owned by root"
    [ "$(cat /opt/$name/lib/$name.aot.root)" = /opt/$name ] || fail "the AOT cache was trained for $(cat /opt/$name/lib/$name.aot.root)"
    ok "AOT cache trained by postinst as user $name on relayed traffic ($(sed -n 's/^ *relayed in training: //p' "$work/install.out")), installed root-owned"
else
    echo "    note: no AOT cache (CONTINUUM_EVENT_BROKER_SKIP_AOT is set)"
fi
if ! $real_systemd; then
    asked "systemctl --system daemon-reload" || fail "postinst did not reload systemd: $(calls)"
    asked "deb-systemd-helper update-state $unit" || fail "postinst did not record the unit state: $(calls)"
    asked "deb-systemd-invoke start $unit" || fail "postinst did not ask to start the unit: $(calls)"
    ok "postinst asked: $(calls)"
fi
if command -v man > /dev/null; then
    man -l /usr/share/man/man1/$name.1.gz 2>/dev/null | grep -q 'EXIT STATUS' || fail "man page does not render"
    ok "man page renders"
fi
if command -v systemd-analyze > /dev/null; then
    # verify: any finding fails, but for the man page lookup of Documentation= (man-db's exit 16 here:
    # systemd-analyze runs `man` without the page cache of a booted system).
    findings=$(systemd-analyze verify /usr/lib/systemd/system/$unit 2>&1 | grep -v -e '^$' -e "Command 'man $name(1)' failed" || true)
    [ -z "$findings" ] || fail "systemd-analyze verify: $findings"
    exposure=$(systemd-analyze security --offline=true /usr/lib/systemd/system/$unit 2>&1 \
        | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
    [ -n "$exposure" ] && awk "BEGIN { exit !($exposure <= 1.5) }" \
        || fail "systemd-analyze security: exposure ${exposure:-unknown}, above 1.5 (docs/deployment.md section 6)"
    ok "systemd-analyze verify clean; security --offline exposure $exposure (at most 1.5)"
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
m = re.findall(r'^ENTRYPOINT (\[.*?\])\s*$', text.replace("\\\n", " "), re.M)
print("\n".join(json.loads(m[-1])))
PY
)
    out=$(setpriv --reuid=65532 --regid=65532 --clear-groups "${entrypoint[@]}" --version 2> "$work/entrypoint.err") \
        || fail "the container ENTRYPOINT failed: $(cat "$work/entrypoint.err")"
    [ ! -s "$work/entrypoint.err" ] || fail "the container ENTRYPOINT wrote to stderr: $(cat "$work/entrypoint.err")"
    ok "the Dockerfile ENTRYPOINT as uid 65532 on the same layout: $out (AOT cache accepted)"
fi

echo "==> a configured, running service: docs/deployment.md's host steps, as written"
# The block of docs/deployment.md section 6 marked doc-test: host-configure, run as the administrator would,
# in a directory holding the identity's files: the credential (section 2) and a kubeconfig (here naming an
# unreachable API server: the broker waits for its first sync, which is enough to be running). `sudo` is
# root's own (this test is root): a shim that honours -u and VAR=value as sudo does, so the check in the
# block really runs as the service user. `editor` makes the edits an administrator would.
block=$("$here/doc-block.sh" host-configure "$root/docs/deployment.md") || fail "docs/deployment.md has no block marked doc-test: host-configure"
mkdir -p "$work/admin" "$work/doc-shims"
head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/admin/broker-a.credential"
cat > "$work/admin/broker-a.kubeconfig" <<'KUBECONFIG'
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none, namespace: test-deb}}]
current-context: none
KUBECONFIG
cat > "$work/doc-shims/sudo" <<'SUDO'
#!/usr/bin/env bash
# sudo for a root caller: [-u USER] [VAR=value ...] COMMAND..., the command run as USER with its groups.
user=""
[ "${1:-}" = -u ] && { user=$2; shift 2; }
vars=()
while [[ "${1:-}" == *=* && "${1%%=*}" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; do vars+=("$1"); shift; done
if [ -n "$user" ]; then
    exec setpriv --reuid="$user" --regid="$user" --init-groups env "${vars[@]}" "$@"
fi
exec env "${vars[@]}" "$@"
SUDO
cat > "$work/doc-shims/editor" <<'EDITOR'
#!/bin/sh
# The administrator's edits of config.yaml: the test's namespace, and a port of its own (the example's
# 127.0.0.1:9464 may be taken on this machine).
sed -i -e 's/^metrics_listen:.*/metrics_listen: 127.0.0.1:0/' "$1"
echo "kubernetes_namespace: test-deb" >> "$1"
EDITOR
chmod 0755 "$work/doc-shims/sudo" "$work/doc-shims/editor"
grep -qx 'metrics_listen: 127.0.0.1:9464' /etc/$name/config.yaml.example \
    || fail "the host example does not serve /metrics on loopback"
(cd "$work/admin" && PATH="$work/doc-shims:$PATH" bash -euo pipefail -c "$block") > "$work/doc-block.out" 2>&1 \
    || fail "docs/deployment.md's host steps failed as written: $(tail -5 "$work/doc-block.out")"
grep -q '^credential from .*: ok' "$work/doc-block.out" \
    || fail "the documented --check-config did not pass: $(cat "$work/doc-block.out")"
[ "$(stat -c '%a %U:%G' /etc/$name/config.yaml)" = "640 root:$name" ] \
    || fail "config.yaml is $(stat -c '%a %U:%G' /etc/$name/config.yaml) after the documented steps"
[ "$(stat -c '%a %U' /etc/$name/credential /etc/$name/kubeconfig | sort -u)" = "600 root" ] \
    || fail "the credential or kubeconfig is not root-only after the documented steps"
if ! $real_systemd; then
    asked "systemctl enable --now --no-block $name" || fail "the documented steps did not enable the unit: $(calls)"
fi
ok "docs/deployment.md's host steps ran as written (--check-config passed as the service user)"
echo "# a local edit that an upgrade must keep" >> /etc/$name/config.yaml.example
config_sum=$(sha256sum < /etc/$name/config.yaml)
example_sum=$(sha256sum < /etc/$name/config.yaml.example)
port=""
start_service() {
    if $real_systemd; then
        systemctl enable --now "$unit" >/dev/null
        return
    fi
    # The unit's ExecStart as the unit's User/Group, with its Environment= and LoadCredential= as systemd
    # applies them: each credential copied by root into a directory of the service's own (%d), 0400.
    : > "$work/service.log"   # exists before service_port reads it
    # (under /run/systemd: this namespace's own tmpfs, so nothing of it reaches the host's /run)
    local creds="/run/systemd/credentials/$unit" line spec env_args=()
    rm -rf "$creds"
    install -d -m 0755 /run/systemd/credentials
    install -d -o "$name" -g "$name" -m 0500 "$creds"
    while IFS= read -r line; do
        case "$line" in
            LoadCredential=*) spec=${line#LoadCredential=}
                install -o "$name" -g "$name" -m 0400 "${spec#*:}" "$creds/${spec%%:*}" ;;
            Environment=*) env_args+=("${line#Environment=}") ;;
        esac
    done < /usr/lib/systemd/system/$unit
    env_args=("${env_args[@]//%d/$creds}")
    # Type=notify: systemd's notification socket, played by a datagram listener that writes what it receives.
    if [ -z "$notify_pid" ]; then
        /usr/bin/python3 -c 'import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777)
open(sys.argv[2], "w").close()
while True:
    with open(sys.argv[2], "a") as f: f.write(s.recv(4096).decode() + "\n")' /run/systemd/notify "$work/notified" &
        notify_pid=$!
    fi
    env_args+=("NOTIFY_SOCKET=/run/systemd/notify")
    setpriv --reuid="$name" --regid="$name" --clear-groups env -u KUBERNETES_SERVICE_HOST "${env_args[@]}" \
        /usr/bin/$name --config /etc/$name/config.yaml > "$work/service.log" 2>&1 &
    service_pid=$!
}
service_port() {
    # The port of the running broker (metrics_listen 127.0.0.1:0 picks one).
    local log
    for _ in $(seq 1 600); do
        if $real_systemd; then log=$(journalctl -u "$unit" -o cat --since "-5min" 2>/dev/null || true); else log=$(cat "$work/service.log"); fi
        port=$(sed -n 's/.*event=started metrics_port=\([0-9]*\).*/\1/p' <<<"$log" | tail -1)
        [ -n "$port" ] && return 0
        if ! $real_systemd; then kill -0 "$service_pid" 2>/dev/null || fail "the service exited: $(tail -5 "$work/service.log")"; fi
        sleep 0.1
    done
    fail "the service did not start within 60 s"
}
healthy() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")" = 200 ]; }
start_service
service_port
healthy || fail "the service does not answer /healthz"
first_pid=$service_pid
if ! $real_systemd; then
    [ "$(ps -o user= -p "$service_pid")" = "$name" ] || fail "the service runs as $(ps -o user= -p "$service_pid")"
fi
ok "the service runs as $name and answers /healthz on port $port"
if ! $real_systemd; then
    for _ in $(seq 1 100); do grep -q '^STATUS=waiting' "$work/notified" 2>/dev/null && break; sleep 0.1; done
    grep -qx 'STATUS=waiting for the first DynamoWorkerMetadata sync' "$work/notified" \
        || fail "no sd_notify STATUS from the service: $(cat "$work/notified" 2>/dev/null)"
    grep -q '^READY=1' "$work/notified" && fail "READY=1 before the first metadata sync (the API server is unreachable)"
    grep -q 'WARNING' "$work/service.log" && fail "the service warned: $(grep WARNING "$work/service.log")"
    ok "Type=notify: STATUS sent, no READY=1 while the API server is unreachable, no native-access warning"
    setpriv --reuid="$name" --regid="$name" --clear-groups cat /etc/$name/credential > /dev/null 2>&1 \
        && fail "the service user reads /etc/$name/credential itself (it must come in as a credential only)"
    ok "the credential and kubeconfig came in as credentials (the service user cannot read /etc/$name/credential)"
fi

echo "==> dpkg -i (upgrade to $next)"
: > "$work/calls"
# The restart postinst asks for fails (as a unit that cannot start would): postinst says so on stderr.
$real_systemd || touch "$work/fail-deb-systemd-invoke"
dpkg -i --force-confold "$work/next.deb" > "$work/upgrade.out" 2> "$work/upgrade.err"
rm -f "$work/fail-deb-systemd-invoke"
if ! $real_systemd; then
    grep -q "$unit failed to restart (status 1)" "$work/upgrade.err" \
        || fail "postinst did not report the failed restart: $(cat "$work/upgrade.err")"
    ok "postinst reports a restart that fails: $(grep -o "$unit failed to restart (status 1)" "$work/upgrade.err")"
fi
[ "$(dpkg-query -W -f '${Version}' "$name")" = "$next" ] || fail "the upgrade did not install $next"
ok "upgraded to $next"
[ "$(sha256sum < /etc/$name/config.yaml)" = "$config_sum" ] || fail "the upgrade changed /etc/$name/config.yaml"
[ "$(sha256sum < /etc/$name/config.yaml.example)" = "$example_sum" ] || fail "the upgrade replaced the locally edited conffile"
[ -f /etc/$name/credential ] && [ -f /etc/$name/kubeconfig ] || fail "the upgrade removed the credential or kubeconfig"
[ "$(stat -c '%U:%G %a' /etc/$name)" = "root:$name 750" ] || fail "/etc/$name is $(stat -c '%U:%G %a' /etc/$name) after the upgrade"
ok "configuration kept (config.yaml, the edited conffile, credential, kubeconfig, directory mode)"
if $real_systemd; then
    systemctl is-active --quiet "$unit" || fail "the service is not running after the upgrade"
    service_port
else
    asked "deb-systemd-invoke stop $unit" && fail "prerm stopped the service on upgrade: $(calls)"
    asked "deb-systemd-invoke restart $unit" || fail "postinst did not ask to restart the service after the upgrade: $(calls)"
    ok "maintainer scripts asked: $(calls) (no stop)"
    kill -0 "$first_pid" 2>/dev/null && healthy || fail "the running service did not survive the upgrade"
    ok "the service kept running through the upgrade (pid $first_pid, /healthz 200)"
    # What systemd does with the restart postinst asked for.
    stop_service
    start_service
    service_port
fi
healthy || fail "the service does not answer /healthz after the upgrade"
ok "the service runs the new version (/healthz 200 on port $port)"

echo "==> dpkg -r"
: > "$work/calls"
if ! $real_systemd; then
    dpkg -r "$name" > /dev/null
    asked "deb-systemd-invoke stop $unit" || fail "prerm did not stop the service on removal: $(calls)"
    asked "deb-systemd-helper mask $unit" || fail "postrm did not mask the unit on removal: $(calls)"
    ok "maintainer scripts asked: $(calls)"
    stop_service
else
    dpkg -r "$name" > /dev/null
    systemctl is-active --quiet "$unit" && fail "the service still runs after removal"
fi
[ ! -e /usr/bin/$name ] && [ ! -e /opt/$name/lib/$name.aot ] || fail "files left after removal"
[ -f /etc/$name/config.yaml ] || fail "removal (not purge) deleted /etc/$name/config.yaml"
ok "removed, configuration kept"

echo "==> dpkg --purge"
: > "$work/calls"
dpkg --purge "$name" > /dev/null 2>&1
if ! $real_systemd; then
    asked "deb-systemd-helper purge $unit" || fail "postrm did not purge the unit state: $(calls)"
    ok "maintainer scripts asked: $(calls)"
fi
[ ! -e /usr/bin/$name ] && [ ! -e /opt/$name ] || fail "files left after purge: $(ls -d /usr/bin/$name /opt/$name 2>/dev/null)"
[ ! -e /etc/$name/config.yaml.example ] || fail "the conffile is left after purge"
# What purge leaves (docs/deployment.md section 6): the system user and group, so that their ids are not handed
# to the next system user, and the administrator's files in /etc/$name, readable by that group only.
getent passwd "$name" > /dev/null || fail "purge deleted the system user $name (its ids would be reused)"
getent group "$name" > /dev/null || fail "purge deleted the group $name (its GID would be reused)"
left=$(cd / && find "etc/$name" -mindepth 1 | sort | tr '\n' ' ')
[ "$left" = "etc/$name/config.yaml etc/$name/credential etc/$name/kubeconfig " ] \
    || fail "purge left other than the administrator's files in /etc/$name: $left"
modes=$(cd / && stat -c '%n %a %U:%G' etc/$name etc/$name/config.yaml etc/$name/credential etc/$name/kubeconfig | tr '\n' ';')
[ "$modes" = "etc/$name 750 root:$name;etc/$name/config.yaml 640 root:$name;etc/$name/credential 600 root:root;etc/$name/kubeconfig 600 root:root;" ] \
    || fail "what purge left is not as docs/deployment.md says: $modes"
ok "purged: no package files; left: the system user and group $name and the administrator's $left"
# The next system user gets other ids, and reads nothing the package left.
useradd --system --user-group --no-create-home --shell /usr/sbin/nologin "$next_user"
created_user=$next_user
[ "$(id -g "$next_user")" != "$(getent group "$name" | cut -d: -f3)" ] || fail "$next_user got the GID of $name"
for f in /etc/$name /etc/$name/config.yaml /etc/$name/credential /etc/$name/kubeconfig; do
    if setpriv --reuid="$next_user" --regid="$next_user" --clear-groups sh -c "cat '$f' || ls '$f'" > /dev/null 2>&1; then
        fail "a system user created after purge ($next_user) can read $f"
    fi
done
ok "a system user created after purge ($next_user, gid $(id -g "$next_user")) reads nothing the package left"
echo "test-deb: all checks passed"
