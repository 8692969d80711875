#!/usr/bin/env bash
# Installs what is missing, then runs every test: the native core and presenter tests
# (cargo test), lint, the release build, and the browser tests in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh

echo; echo "== native: cargo test"
cargo test --locked

echo; echo "== replay: the deck against real redis-server, PostgreSQL, etcd (scripts/replay.sh)"
bash scripts/replay.sh

echo; echo "== lint: cargo fmt --check, leptosfmt --check (view! blocks), cargo clippy (native and wasm32)"
cargo fmt --check
leptosfmt --quiet --check src/ui
cargo clippy --locked --all-targets -- -D warnings
cargo clippy --locked --target wasm32-unknown-unknown -- -D warnings
cargo clippy --locked --target wasm32-unknown-unknown --features test-hooks -- -D warnings

echo; echo "== build: trunk build --release --offline (dist/), and with test hooks (dist-test/)"
trunk build --release --offline
trunk build --release --offline --features test-hooks --dist dist-test

echo; echo "== browser: headless Chromium against dist/"
(cd tests/browser && npm test)
