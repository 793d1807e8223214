#!/usr/bin/env bash
# Coverage-guided fuzzing of the project's Jazzer targets, outside the test command.
#
#   bench/fuzz.sh DURATION [TARGET ...]
#
# DURATION is Jazzer's (e.g. 30s, 10m, 1h) and applies to each target; TARGET is one of
# reader, decoder, roundtrip, metadata, config (default: all five, one after the other).
#
# `./mvnw verify` only replays the checked-in inputs (deterministic). This command explores: each target
# starts from its checked-in inputs plus the corpus grown by earlier runs, and keeps what it learns in
# .fuzz/<target>/ (git-ignored), never in src/. A finding fails that target's run, lands in
# .fuzz/<target>/ as crash-<sha1>, and the script prints how to turn it into a regression input.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}
[ $# -ge 1 ] || usage
duration=$1
shift
case "$duration" in
    *[0-9]s | *[0-9]m | *[0-9]h | *[0-9]) ;;
    *) echo "fuzz.sh: DURATION must look like 30s, 10m or 1h, not '$duration'" >&2; exit 2 ;;
esac

# target -> module, test class, inputs directory (relative to the module)
declare -A module=([reader]=h2 [decoder]=bus-protocol [roundtrip]=bus-protocol [metadata]=metadata [config]=app)
declare -A class=([reader]=Http2ReaderFuzzTest [decoder]=FrameDecoderFuzzTest [roundtrip]=FrameRoundTripFuzzTest
                  [metadata]=MetadataParserFuzzTest [config]=ConfigLoaderFuzzTest)
declare -A inputs=(
    [reader]=src/test/resources/io/continuum/broker/h2/Http2ReaderFuzzTestInputs/reader
    [decoder]=src/test/resources/io/continuum/broker/protocol/FrameDecoderFuzzTestInputs/decoder
    [roundtrip]=src/test/resources/io/continuum/broker/protocol/FrameRoundTripFuzzTestInputs/roundTrip
    [metadata]=src/test/resources/io/continuum/broker/metadata/internal/MetadataParserFuzzTestInputs/metadata
    [config]=src/test/resources/io/continuum/broker/app/config/ConfigLoaderFuzzTestInputs/load)

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(reader decoder roundtrip metadata config)
for t in "${targets[@]}"; do
    [ -n "${module[$t]:-}" ] || { echo "fuzz.sh: unknown target '$t' (reader, decoder, roundtrip, metadata, config)" >&2; exit 2; }
done

# shellcheck source=../bin/env.sh
. ./bin/env.sh

status=0
summary=()
for t in "${targets[@]}"; do
    work="$top/.fuzz/$t"
    mkdir -p "$work"
    log="$work/run-$(date -u +%Y%m%dT%H%M%SZ).log"
    echo "== $t (${class[$t]}, modules/${module[$t]}): fuzzing for $duration; log $log"
    before=$(find "$work" -maxdepth 1 -name 'crash-*' | sort)
    # jazzer.internal.basedir moves Jazzer's working directory: the grown corpus (.cifuzz-corpus) and the
    # findings (-artifact_prefix) go there; the inputs directory is still read from the class path.
    JAZZER_FUZZ=1 ./mvnw -B -ntp -pl "modules/${module[$t]}" -am test \
        -Dtest="${class[$t]}" -Dsurefire.failIfNoSpecifiedTests=false \
        -Djazzer.max_duration="$duration" -Djazzer.internal.basedir="$work" >"$log" 2>&1
    rc=$?
    stats=$(grep -hE '^#[0-9]+' "$log" | tail -1 | tr -s '\t ' ' ')
    new=$(comm -13 <(echo "$before") <(find "$work" -maxdepth 1 -name 'crash-*' | sort) | sed '/^$/d')
    if [ $rc -eq 0 ]; then
        summary+=("$t: no finding in $duration; last libFuzzer line: ${stats:-n/a}")
    else
        status=1
        summary+=("$t: FAILED (exit $rc; $(echo -n "$new" | grep -c . ) new finding(s)); see $log")
        for f in $new; do
            cat <<EOF
   finding: $f
   to keep it as a regression input (replayed by ./mvnw verify from then on):
     cp $f modules/${module[$t]}/${inputs[$t]}/regression-<what-it-breaks>
     ./mvnw -B -ntp -q -pl modules/${module[$t]} -am verify    # fails until the bug is fixed
   then fix the bug, add a unit test that names the behaviour, and commit both.
EOF
        done
    fi
done

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
