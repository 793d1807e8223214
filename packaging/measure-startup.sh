#!/usr/bin/env bash
# Start-up time of a broker launcher: process start to the first /healthz 200, median of N runs.
#   packaging/measure-startup.sh LAUNCHER [LAUNCHER...] [RUNS]     (RUNS defaults to 7)
# The clock starts right before the launcher is spawned and stops when curl first gets 200
# (polled every 10 ms, so figures are rounded up by at most ~10 ms plus one curl). Each run uses
# a fixed port, a throw-away credential and a kubeconfig naming an unreachable API server; the
# broker is stopped with SIGTERM before the next run. Also prints the CPU time (user + system,
# from /proc/PID/stat) the JVM had used when /healthz first answered, and the time until the broker logs
# event=runtime_started (its runtime built: Kubernetes client, TLS, relay; /readyz waits for it).
#
# The baseline, measured in the same run (alternating with the broker, so that the machine's load hits
# both alike): a trivial Helidon SE app with one route, a runtime linked by packaging/link-runtime.sh as the
# broker's is, and an AOT cache, built by
# bench/startup-baseline/build.sh into target/startup-baseline (once). The last line is the ratio of the
# medians, broker / baseline. MEASURE_BASELINE=0 skips it.
#
# Several launchers (an A/B of two builds of the image, each with its own trained cache) are measured in
# the same rounds: each round starts every launcher once, then the baseline; each gets its own median and
# ratio.
set -euo pipefail
usage="usage: measure-startup.sh LAUNCHER [LAUNCHER...] [RUNS]"
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
runs=7
launchers=()
for arg in "$@"; do
    if [[ "$arg" =~ ^[0-9]+$ ]]; then runs="$arg"; else launchers+=("$arg"); fi
done
[ ${#launchers[@]} -ge 1 ] && [ "$runs" -ge 1 ] || { echo "$usage" >&2; exit 2; }
repo="$(cd "$(dirname "$0")/.." && pwd)"
baseline=""
if [ "${MEASURE_BASELINE:-1}" != 0 ]; then
    "$repo/bench/startup-baseline/build.sh" >&2
    baseline="$repo/target/startup-baseline/bin/hello"
fi
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
# measure LAUNCHER: one start to the first /healthz 200; sets ms and cpu_ms
measure() {
    local start end
    start=$(date +%s%N)
    env -u KUBERNETES_SERVICE_HOST KUBECONFIG="$work/kubeconfig" "$1" --config "$work/config.yaml" > "$work/log" 2>&1 &
    pid=$!
    until curl -s -f -o /dev/null "http://127.0.0.1:$port/healthz"; do
        kill -0 "$pid" 2>/dev/null || { cat "$work/log" >&2; echo "measure-startup: $1 exited" >&2; exit 1; }
        sleep 0.01
    done
    end=$(date +%s%N)
    # CPU time (user + system) the JVM used until then: less sensitive to other load than the wall clock.
    cpu_ms=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "/proc/$pid/stat")
    ms=$(( (end - start) / 1000000 ))
    # The broker then builds its runtime (Kubernetes client, TLS, relay) and logs event=runtime_started, which
    # /readyz waits for; the baseline has no such line (rt_ms stays empty). Polled every 10 ms, bounded at 30 s.
    rt_ms=""
    if [ "$1" != "$baseline" ]; then
        for _ in $(seq 1 3000); do
            if grep -q 'event=runtime_started' "$work/log"; then rt_ms=$(( ($(date +%s%N) - start) / 1000000 )); break; fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.01
        done
    fi
    kill -TERM "$pid"; wait "$pid" || true; pid=""
}
median() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
# per launcher (index k): space-separated wall and CPU times of its runs
declare -a walls=() cpus=() rts=()
btimes=()
bcpus=()
for i in $(seq 1 "$runs"); do
    line="    run $i:"
    for k in "${!launchers[@]}"; do
        measure "${launchers[$k]}"
        walls[k]="${walls[k]:-} $ms"
        cpus[k]="${cpus[k]:-} $cpu_ms"
        [ -z "$rt_ms" ] || rts[k]="${rts[k]:-} $rt_ms"
        line="$line $ms ms (CPU $cpu_ms ms, runtime_started ${rt_ms:-?} ms);"
    done
    if [ -n "$baseline" ]; then
        measure "$baseline"
        btimes+=("$ms")
        bcpus+=("$cpu_ms")
        line="$line baseline $ms ms (CPU $cpu_ms ms);"
    fi
    echo "$line load $(cut -d' ' -f1 /proc/loadavg)"
done
if [ -n "$baseline" ]; then
    bsorted=$(printf '%s\n' "${btimes[@]}" | sort -n)
    bmed=$(median <<<"$bsorted")
    bcpu_med=$(printf '%s\n' "${bcpus[@]}" | median)
fi
for k in "${!launchers[@]}"; do
    sorted=$(tr ' ' '\n' <<<"${walls[k]}" | sed '/^$/d' | sort -n)
    med=$(median <<<"$sorted")
    cpu_med=$(tr ' ' '\n' <<<"${cpus[k]}" | sed '/^$/d' | median)
    [ ${#launchers[@]} -eq 1 ] || echo "${launchers[$k]}:"
    rt_found=$(tr ' ' '\n' <<<"${rts[k]:-}" | sed '/^$/d' | sort -n)
    rt_count=$(grep -c . <<<"$rt_found" || true)
    rt_med=$( [ "$rt_count" -gt 0 ] && sed -n "$(( (rt_count + 1) / 2 ))p" <<<"$rt_found" || echo none)
    echo "median $med ms (CPU $cpu_med ms) over $runs runs (min $(head -1 <<<"$sorted"), max $(tail -1 <<<"$sorted")); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "runtime_started (the runtime built, which /readyz waits for): median $rt_med ms over $rt_count runs that logged it"
    if [ -n "$baseline" ]; then
        awk -v a="$med" -v b="$bmed" -v c="$cpu_med" -v d="$bcpu_med" 'BEGIN {
            r = a / b; printf "ratio broker / baseline: %.2fx wall (target <= 1.5x: %s), %.2fx CPU\n", r, (r <= 1.5 ? "met" : "NOT met"), c / d }'
    fi
done
if [ -n "$baseline" ]; then
    echo "baseline (trivial Helidon SE app, jlink + AOT cache): median $bmed ms (CPU $bcpu_med ms) (min $(head -1 <<<"$bsorted"), max $(tail -1 <<<"$bsorted"))"
fi
