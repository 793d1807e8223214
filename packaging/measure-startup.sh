#!/usr/bin/env bash
# Start-up time of a broker launcher: process start to the first /healthz 200, median of N runs.
#   packaging/measure-startup.sh LAUNCHER [RUNS]     (RUNS defaults to 7)
# The clock starts right before the launcher is spawned and stops when curl first gets 200
# (polled every 10 ms, so figures are rounded up by at most ~10 ms plus one curl). Each run uses
# a fixed port, a throw-away credential and a kubeconfig naming an unreachable API server; the
# broker is stopped with SIGTERM before the next run. Also prints the CPU time (user + system,
# from /proc/PID/stat) the JVM had used when /healthz first answered.
set -euo pipefail
launcher="${1:?usage: measure-startup.sh LAUNCHER [RUNS]}"
runs="${2:-7}"
port="${MEASURE_PORT:-19464}"
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
client_id: startup-measurement
credential_file: $work/credential
kubernetes_namespace: measure
dynamo_namespaces: [measure]
metrics_listen: 127.0.0.1:$port
CONFIG
cat > "$work/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none, namespace: measure}}]
current-context: none
KUBECONFIG
if curl -s -o /dev/null "http://127.0.0.1:$port/healthz"; then
    echo "measure-startup: port $port is already in use (set MEASURE_PORT)" >&2; exit 1
fi
times=()
cpus=()
for i in $(seq 1 "$runs"); do
    start=$(date +%s%N)
    env -u KUBERNETES_SERVICE_HOST KUBECONFIG="$work/kubeconfig" "$launcher" --config "$work/config.yaml" > "$work/log" 2>&1 &
    pid=$!
    until curl -s -f -o /dev/null "http://127.0.0.1:$port/healthz"; do
        kill -0 "$pid" 2>/dev/null || { cat "$work/log" >&2; echo "measure-startup: the broker exited" >&2; exit 1; }
        sleep 0.01
    done
    end=$(date +%s%N)
    # CPU time (user + system) the JVM used until then: less sensitive to other load than the wall clock.
    cpu_ms=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "/proc/$pid/stat")
    kill -TERM "$pid"; wait "$pid" || true; pid=""
    ms=$(( (end - start) / 1000000 ))
    times+=("$ms")
    cpus+=("$cpu_ms")
    echo "    run $i: $ms ms (CPU $cpu_ms ms)"
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(sed -n "$(( (runs + 1) / 2 ))p" <<<"$sorted")
cpu_median=$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
echo "median $median ms (CPU $cpu_median ms) over $runs runs (min $(head -1 <<<"$sorted"), max $(tail -1 <<<"$sorted")); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
