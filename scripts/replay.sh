#!/usr/bin/env bash
# Replays the deck against real servers: installs redis-server, postgresql, etcd-server,
# zookeeper and faketime if missing (`setup.sh servers`: Debian, as root; the packages' own
# services are kept from starting or stopped, since the replay starts private instances on
# 127.0.0.1 / a Unix socket in a temp dir), then builds and runs `fencing-lab replay "$@"`
# (profile replay, feature replay): `[--jobs N] [SCENARIO…]`, three runs at once unless N says
# otherwise. Exits non-zero on a mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

say() { printf '\n== replay: %s\n' "$*"; }

bash scripts/setup.sh servers

say "cargo build --profile replay --features replay"
cargo build --profile replay --features replay --locked
# One replay at a time on a machine: two would share its cores and make each other's clients
# late (each already makes three runs at once). The lock is held by the replay itself (fd 9 is
# inherited), not by the build above.
exec 9>"${TMPDIR:-/tmp}/fencing-replay.lock"
if ! flock -n 9; then
  say "waiting for another replay on this machine to finish"
  flock 9
fi
say "fencing-lab replay $*"
# exec: the replay takes this shell's place, so a SIGTERM or SIGINT sent to this script
# reaches the replay, which stops its servers before it exits.
exec target/replay/fencing-lab replay "$@"
