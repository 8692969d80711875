#!/usr/bin/env bash
# Regenerates the README's deck table from the code (a test fails while it is stale).
set -euo pipefail
cd "$(dirname "$0")/.."
table=$(cargo run -q -- deck)
python3 - "$table" <<'PY'
import sys
path = "README.md"
text = open(path).read()
start, end = "<!-- deck-table:start -->\n", "<!-- deck-table:end -->"
a = text.index(start) + len(start)
b = text.index(end)
open(path, "w").write(text[:a] + sys.argv[1] + "\n" + text[b:])
PY
