#!/usr/bin/env bash
# The packaged broker's first traffic without an AOT cache, with the cache trained on the start only (the
# lib/aot-train of a3a211e and before) and with the one trained on relayed traffic (lib/aot-train now):
#   bench/first-traffic.sh [seconds] [rounds]
# Needs the runtime image (packaging/build.sh --skip-maven after a build). Trains both caches for that image, then
# runs modules/bench's FirstTraffic: the training run's peers against IMAGE/bin/continuum-event-broker, variants
# none, start, relayed, then reversed, per round (default: 20 s of traffic, 1 round). Restores the image's cache
# afterwards by training it again with lib/aot-train.
set -euo pipefail
cd "$(dirname "$0")/.."
. bin/env.sh
seconds=${1:-20}
rounds=${2:-1}
image=$(ls -d target/packaging/continuum-event-broker-*/ | grep -v portable | head -1)
image=${image%/}
[ -x "$image/bin/continuum-event-broker" ] || { echo "no runtime image: run packaging/build.sh first" >&2; exit 1; }
deps=$(bench/build-classpath.sh)
cp="$(ls modules/bench/target/continuum-event-broker-bench-*.jar | head -1):$deps"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== training the relayed cache (lib/aot-train)"
"$image/lib/aot-train" --output "$work/relayed.aot" | tail -2
echo "== training the start-only cache (lib/aot-train of a3a211e)"
git show a3a211e:packaging/aot-train.sh > "$image/lib/aot-train-start"
chmod +x "$image/lib/aot-train-start"
"$image/lib/aot-train-start" --output "$work/start.aot" | tail -1
rm -f "$image/lib/aot-train-start"
java -cp "$cp" io.continuum.broker.bench.FirstTraffic "$image" "$seconds" "$rounds" \
    none=none start="$work/start.aot" relayed="$work/relayed.aot"
echo "== restoring the image's cache"
"$image/lib/aot-train" | tail -1
