#!/usr/bin/env bash
# Smoke test of an installed or built broker: packaging/smoke-test.sh LAUNCHER [EXAMPLE_CONFIG]
#
# Tests the image, not the build: --version; --check-config against the example configuration
# (with a temporary credential file) and against a broken one (exit 1); then a real start with
# /healthz 200, /readyz 503 (no metadata sync without a cluster), /metrics answered as
# Prometheus text with the broker's meters (a runtime image missing the Micrometer provider
# answers "Unsupported media type" here), and SIGTERM ending with exit status 0.
set -euo pipefail
launcher="${1:?usage: smoke-test.sh LAUNCHER [EXAMPLE_CONFIG]}"
here="$(cd "$(dirname "$0")" && pwd)"
example="${2:-$here/../etc/config.event-broker.yaml.example}"
[ -f "$example" ] || { echo "smoke-test: no example config at $example" >&2; exit 1; }

work="$(mktemp -d)"
pid=""
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "smoke-test: FAILED: $*" >&2; [ ! -f "$work/log" ] || tail -20 "$work/log" >&2; exit 1; }
ok() { echo "    ok: $*"; }

# 48 random bytes as 96 hex characters: a valid credential (32..512 visible ASCII bytes).
head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/credential"
chmod 0600 "$work/credential"
cat > "$work/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none, namespace: smoke}}]
current-context: none
EOF
# exec: in the background the recorded pid must be the broker's (the launcher execs java), so
# that SIGTERM reaches the JVM rather than a subshell.
run() { exec env -u KUBERNETES_SERVICE_HOST -u CONTINUUM_EVENT_BROKER_CREDENTIAL KUBECONFIG="$work/kubeconfig" POD_NAMESPACE=smoke "$launcher" "$@"; }

out=$( run --version ) || fail "--version exited $?"
[[ "$out" == continuum-event-broker\ * ]] || fail "--version printed '$out'"
ok "--version: $out"

# The example as shipped, plus the credential file (the example leaves it commented out).
{ cat "$example"; echo "credential_file: $work/credential"; } > "$work/example.yaml"
( run --config "$work/example.yaml" --check-config ) > "$work/check.out" 2>&1 || fail "--check-config of the example exited $? ($(cat "$work/check.out"))"
ok "--check-config of the example config: $(head -1 "$work/check.out")"

status=0
{ cat "$example"; echo "credential_file: $work/missing"; } > "$work/broken.yaml"
( run --config "$work/broken.yaml" --check-config ) > /dev/null 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "--check-config with a missing credential file exited $status, expected 1"
ok "--check-config with a missing credential file exits 1"

# A real start on a free loopback port.
sed -e 's/^metrics_listen:.*//' "$work/example.yaml" > "$work/run.yaml"
echo "metrics_listen: 127.0.0.1:0" >> "$work/run.yaml"
# The log exists before the loop reads it: the background job may not have opened it yet.
: > "$work/log"
run --config "$work/run.yaml" > "$work/log" 2>&1 &
pid=$!
port=""
for _ in $(seq 1 600); do
    port=$(sed -n 's/.*event=started metrics_port=\([0-9]*\).*/\1/p' "$work/log" | head -1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || fail "the broker exited during start-up"
    sleep 0.1
done
[ -n "$port" ] || fail "no event=started within 60 s"
base="http://127.0.0.1:$port"
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/healthz"); [ "$code" = 200 ] || fail "/healthz answered $code"
ok "/healthz 200"
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/readyz"); [ "$code" = 503 ] || fail "/readyz answered $code before any metadata sync, expected 503"
ok "/readyz 503 before the metadata sync"
ctype=$(curl -s -o "$work/metrics" -w '%{content_type}' "$base/metrics")
[[ "$ctype" == text/plain* ]] || fail "/metrics content type '$ctype' ($(head -c 200 "$work/metrics"))"
grep -q '^continuum_event_broker_session_connected' "$work/metrics" || fail "/metrics lacks continuum_event_broker_session_connected"
grep -q '^continuum_event_broker_metadata_synced' "$work/metrics" || fail "/metrics lacks continuum_event_broker_metadata_synced"
ok "/metrics: $ctype with the broker's meters"
grep -q -F "$(cat "$work/credential")" "$work/log" && fail "the credential appears in the log"
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=""
[ "$status" -eq 0 ] || fail "exit status $status after SIGTERM, expected 0"
ok "SIGTERM: exit 0"
