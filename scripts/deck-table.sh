#!/usr/bin/env bash
# Regenerates the README's deck and controls tables from the code (a test fails while either
# is stale).
set -euo pipefail
cd "$(dirname "$0")/.."
deck=$(cargo run -q -- deck)
controls=$(cargo run -q -- controls)
python3 - "$deck" "$controls" <<'PY'
import sys
path = "README.md"
text = open(path).read()
for name, table in (("deck", sys.argv[1]), ("controls", sys.argv[2])):
    start, end = f"<!-- {name}-table:start -->\n", f"<!-- {name}-table:end -->"
    a = text.index(start) + len(start)
    b = text.index(end)
    text = text[:a] + table + "\n" + text[b:]
open(path, "w").write(text)
PY
