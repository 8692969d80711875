#!/usr/bin/env bash
# Regenerates the deck table (docs/deck.md) and the keys table (README.md) from the code (a
# test fails while either is stale).
set -euo pipefail
cd "$(dirname "$0")/.."
deck=$(cargo run -q -- deck)
controls=$(cargo run -q -- controls)
python3 - "$deck" "$controls" <<'PY'
import sys
for path, name, table in (("docs/deck.md", "deck", sys.argv[1]), ("README.md", "controls", sys.argv[2])):
    text = open(path).read()
    start, end = f"<!-- {name}-table:start -->\n", f"<!-- {name}-table:end -->"
    a = text.index(start) + len(start)
    b = text.index(end)
    text = text[:a] + table + "\n" + text[b:]
    open(path, "w").write(text)
PY
