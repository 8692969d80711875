#!/usr/bin/env bash
# Dumps every deck entry's story under off, strict and same-epoch into DIR (one file per
# entry and policy, the notes in each), then prints per entry and policy the step count
# (the run's events: every screen after the setup one) and the word count of all its Say
# lines (the setup's included); the table is also
# written to DIR/stats.tsv. Usage: scripts/story-dumps.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/story-dumps.sh DIR}
mkdir -p "$dir"
cargo build -q
bin=${CARGO_TARGET_DIR:-target}/debug/fencing-lab
if ids=$("$bin" deck --json 2>/dev/null | python3 -c 'import json,sys; print(" ".join(e["id"] for e in json.load(sys.stdin)["entries"]))' 2>/dev/null); then :; else
  # Before `deck --json` existed: the ids as the deck source spells them.
  ids=$(grep -oh 'id: "[a-z-]*"' src/core/deck/*.rs | cut -d'"' -f2 | awk '!seen[$0]++' | tr '\n' ' ')
fi
printf 'scenario\tpolicy\tsteps\tsay_words\n' >"$dir/stats.tsv"
for id in $ids; do
  for policy in off strict same_epoch; do
    out="$dir/$id.$policy.txt"
    "$bin" story "$id" "$policy" >"$out"
    # Say lines are the only lines indented with "    Say: ".
    awk -v id="$id" -v p="$policy" '
      /^    Say: / { steps++; sub(/^    Say: /, ""); words += NF }
      END { printf "%s\t%s\t%d\t%d\n", id, p, steps - 1, words }' "$out" >>"$dir/stats.tsv"
  done
done
column -t -s $'\t' "$dir/stats.tsv"
