#!/usr/bin/env bash
# Trains the JDK 25 AOT cache (JEP 483/514/515) for the runtime image this script sits in
# (installed as lib/aot-train). The cache is only valid for the absolute directory it was
# trained in, so run this again after moving the image; the launcher ignores a cache that was
# trained elsewhere. The training run (lib/training, a JVM of its own on this image's runtime:
# io.continuum.broker.training.AotTraining) starts the broker through bin/continuum-event-broker
# with -XX:AOTCacheOutput against a router, a Kubernetes API server and publishers of its own,
# all on loopback: the broker syncs their metadata, opens its session, relays 200-byte messages,
# 4 KiB writes and echoed messages for 10 s, serves /healthz, /readyz, /metrics and /statusz,
# and is stopped with SIGTERM (a drain). So the cache holds the data path's classes and method
# profiles, not only the start's, and a broker's first traffic in a cluster does not wait for
# the JIT. Nothing leaves the machine, and nothing of the training peers enters the broker's JVM.
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

rm -f "$cache" "$cache.root"
echo "aot-train: training $cache"
status=0
"$root/runtime/bin/java" --module-path "$root/lib/training" \
    -m io.continuum.broker.training/io.continuum.broker.training.AotTraining \
    --launcher "$root/bin/continuum-event-broker" --output "$cache" || status=$?
if [ "$status" -ne 0 ] || [ ! -s "$cache" ]; then
    echo "aot-train: training run failed (exit $status)" >&2
    rm -f "$cache"
    exit 1
fi
printf '%s\n' "$root" > "$cache.root"
echo "aot-train: wrote $cache ($(du -h "$cache" | cut -f1))"
