#!/usr/bin/env bash
# Trains the JDK 25 AOT cache (JEP 483/514) for the runtime image this script sits in
# (installed as lib/aot-train). The cache is only valid for the absolute directory it was
# trained in, so run this again after moving the image; the launcher ignores a cache that was
# trained elsewhere. The training run starts the broker with a throw-away configuration on a
# free loopback port (the bus is never dialed: the metadata view never syncs), fetches
# /healthz, /readyz, /metrics and /statusz, and stops it with SIGTERM; the JVM writes the cache
# on exit.
#
#   lib/aot-train [--output PATH]
# --output writes the cache (and PATH.root) there instead of lib/: the Debian postinst trains as
# the unprivileged service user, who cannot write lib/, and installs the result itself. (Not an
# environment variable: the broker refuses unknown CONTINUUM_EVENT_BROKER_* variables.)
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)"
cache="$root/lib/continuum-event-broker.aot"
if [ "${1:-}" = --output ] && [ -n "${2:-}" ]; then
    cache="$2"
elif [ $# -gt 0 ]; then
    echo "usage: aot-train [--output PATH]" >&2
    exit 2
fi
command -v curl >/dev/null 2>&1 || { echo "aot-train: curl is needed" >&2; exit 1; }

work="$(mktemp -d)"
pid=""
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/credential"
cat > "$work/config.yaml" <<CONFIG
bus_url: https://127.0.0.1:9
client_id: aot-training
credential_file: $work/credential
kubernetes_namespace: aot-training
dynamo_namespaces: [aot-training]
metrics_listen: 127.0.0.1:0
CONFIG

rm -f "$cache" "$cache.root"
echo "aot-train: training $cache"
# A kubeconfig naming an unreachable API server: the metadata watch fails and retries, which is
# what a broker waiting for its first sync does (and no real cluster is ever contacted).
cat > "$work/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none, namespace: aot-training}}]
current-context: none
KUBECONFIG
env -u KUBERNETES_SERVICE_HOST KUBECONFIG="$work/kubeconfig" \
    CONTINUUM_EVENT_BROKER_JAVA_OPTS="-XX:AOTCacheOutput=$cache" \
    "$root/bin/continuum-event-broker" --config "$work/config.yaml" > "$work/log" 2>&1 &
pid=$!
# The server starts before the runtime (event=started, then event=runtime_started once the
# Kubernetes client and the relay are built): wait for both, so that the cache covers the whole
# start path and not only what /healthz needs.
port=""
for _ in $(seq 1 600); do
    if grep -q 'event=runtime_started' "$work/log"; then
        port=$(sed -n 's/.*event=started metrics_port=\([0-9]*\).*/\1/p' "$work/log" | head -1)
        break
    fi
    kill -0 "$pid" 2>/dev/null || { cat "$work/log" >&2; echo "aot-train: the broker exited early" >&2; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { cat "$work/log" >&2; echo "aot-train: the broker did not start within 60 s" >&2; exit 1; }
for _ in 1 2 3; do
    for path in healthz readyz metrics statusz; do
        curl -s -o /dev/null "http://127.0.0.1:$port/$path" || true
    done
    sleep 0.5
done
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=""
if [ "$status" -ne 0 ] || [ ! -s "$cache" ]; then
    cat "$work/log" >&2
    echo "aot-train: training run failed (exit $status)" >&2
    rm -f "$cache"
    exit 1
fi
printf '%s\n' "$root" > "$cache.root"
echo "aot-train: wrote $cache ($(du -h "$cache" | cut -f1))"
