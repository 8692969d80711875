#!/usr/bin/env bash
# Installs what serving needs (not the test tools), then serves the release build on http://127.0.0.1:8080
# (rebuilding on change). PORT=… picks another port.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh serve
source scripts/env.sh
echo "fencing-lab: open http://127.0.0.1:${PORT:-8080}/"
exec trunk serve --release --offline --port "${PORT:-8080}"
