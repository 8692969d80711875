#!/usr/bin/env bash
# Installs what is missing, then runs every test: the native core and presenter tests
# (cargo test), the replay against real servers, lint, the release builds, and the browser
# tests in headless Chromium. Ends with each phase's wall time.
set -euo pipefail
cd "$(dirname "$0")/.."

times=()
phase() {
  local name=$1 start=$(date +%s)
  shift
  echo; echo "== $name: $*"
  "$@"
  times+=("$(printf '%-8s %4ss' "$name" "$(($(date +%s) - start))")")
}
report() {
  echo; echo "== phase times"
  printf '   %s\n' "${times[@]}"
}
trap report EXIT

phase setup bash scripts/setup.sh test
source scripts/env.sh

phase native cargo test --locked
# The deck as data for the browser tests (tests/browser/deck-data.js), from the binary that
# `cargo test` just built, so they need no build of their own.
export FENCING_DECK_JSON="$PWD/target/deck.json"
target/debug/fencing-lab deck --json >"$FENCING_DECK_JSON"

# The deck against real redis-server, PostgreSQL and etcd (scripts/replay.sh), then the
# replay's own command-line tests, built with the same profile and feature so they reuse its
# compiled crates.
replay() {
  bash scripts/replay.sh
  cargo test --locked --profile replay --features replay --test replay
}
phase replay replay

lint() {
  cargo fmt --check
  leptosfmt --quiet --check src/ui
  cargo clippy --locked --all-targets -- -D warnings
  cargo clippy --locked --target wasm32-unknown-unknown -- -D warnings
  cargo clippy --locked --target wasm32-unknown-unknown --features test-hooks -- -D warnings
}
phase lint lint

# dist/ is the page as shipped; dist-test/ adds the test hooks (a deliberate panic, bench
# hooks). Both use the release profile, so the second build reuses the first one's
# dependencies (about 100 s against 520 s for a profile of its own, measured).
build() {
  trunk build --release --offline
  trunk build --release --offline --features test-hooks --dist dist-test
}
phase build build

phase browser bash -c 'cd tests/browser && npm test'
