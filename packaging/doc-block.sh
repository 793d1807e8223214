#!/usr/bin/env bash
# Prints the shell block of a doc that a marker names, so a script can run the doc's commands as written:
#   packaging/doc-block.sh NAME [DOC]        (DOC defaults to docs/deployment.md)
# The block is the first ```sh fence after the line that starts with "<!-- doc-test: NAME". Exits 1, saying so,
# when there is none (a renamed marker must fail the script that runs it, not run nothing).
set -euo pipefail
name=${1:?usage: packaging/doc-block.sh NAME [DOC]}
doc=${2:-"$(cd "$(dirname "$0")/.." && pwd)/docs/deployment.md"}
block=$(awk -v marker="<!-- doc-test: $name" 'index($0, marker) == 1 {marked=1; next}
                                            marked && /^```sh$/ {inside=1; next}
                                            inside && /^```$/ {exit}
                                            inside {print}' "$doc")
[ -n "$block" ] || { echo "doc-block: $doc has no block marked doc-test: $name" >&2; exit 1; }
printf '%s\n' "$block"
