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

# The deck against real redis-server, PostgreSQL, etcd and ZooKeeper (scripts/replay.sh), then
# the replay's own tests (its module's unit tests and its command-line tests) and its clippy,
# built with the same profile and feature so they reuse its compiled crates. The replay spends
# most of its minutes waiting on its servers' clocks, so it makes three runs at once (96 runs in
# 111 s beside a niced compile, 330 s one at a time, measured) and starts first, beside the
# native tests, lint and the release builds; those run at the lowest CPU priority, so the
# replay's clients and servers are scheduled on time (its profile has its own target dir lock,
# target/replay, so neither waits for the other's cargo). The browser tests wait for it:
# headless Chromium beside the replay, even at the lowest priority, made its clients late by up
# to 8 slots (p90 lateness 18 ms beside compilers, 130-210 ms beside the browser tests,
# measured) and one etcd run disagree.
replay() {
  bash scripts/replay.sh
  cargo test --locked --profile replay --features replay --bin fencing-lab --test replay
  # The replay's code is behind its feature, so lint's clippy does not see it: lint it here.
  cargo clippy --locked --profile replay --features replay --bin fencing-lab --test replay -- -D warnings
}
replay_log=target/replay-phase.log
mkdir -p target
replay_start=$(date +%s)
# In a process group of its own, so a failing phase can stop it and its servers at once.
setsid bash -c "set -euo pipefail; $(declare -f replay); replay" >"$replay_log" 2>&1 &
replay_pid=$!
trap 'kill -TERM -- "-$replay_pid" 2>/dev/null || true; report' EXIT

# At the lowest priority, in a shell of its own that stops at the first failure.
niced() { nice -n 19 bash -c "set -euo pipefail; $(declare -f "$1"); $1"; }

native() { cargo test --locked; }
phase native niced native
# The deck as data for the browser tests (tests/browser/deck-data.js), from the binary that
# `cargo test` just built, so they need no build of their own.
export FENCING_DECK_JSON="$PWD/target/deck.json"
target/debug/fencing-lab deck --json >"$FENCING_DECK_JSON"

lint() {
  cargo fmt --check
  leptosfmt --quiet --check src/ui
  cargo clippy --locked --all-targets -- -D warnings
  # The page's code with its test hooks: test-hooks only adds code (nothing is cfg'd out by
  # it), so this one pass lints everything the release page compiles, and more.
  cargo clippy --locked --target wasm32-unknown-unknown --features test-hooks -- -D warnings
}
phase lint niced lint

# dist/ is the page as shipped; dist-test/ adds the test hooks (a deliberate panic, bench
# hooks). Both use the release profile, so the second build reuses the first one's
# dependencies (about 100 s against 520 s for a profile of its own, measured).
build() {
  trunk build --release --offline
  trunk build --release --offline --features test-hooks --dist dist-test
}
phase build niced build

# The replay's output, whole, once it is done; its failure fails the run.
replay_done() {
  local rc=0
  wait "$replay_pid" || rc=$?
  cat "$replay_log"
  echo "(the replay ran $(($(date +%s) - replay_start)) s, beside the native tests, lint and build)"
  return "$rc"
}
phase replay replay_done

phase browser bash -c 'cd tests/browser && npm test'
