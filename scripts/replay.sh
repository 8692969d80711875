#!/usr/bin/env bash
# Replays the deck against real servers: installs redis-server, postgresql, etcd-server,
# zookeeper and faketime if missing (`setup.sh servers`: Debian, as root; the packages' own
# services are kept from starting or stopped, since the replay starts private instances on
# 127.0.0.1 / a Unix socket in a temp dir), then runs `cargo run --profile replay --features replay -- replay "$@"`. Exits non-zero on a mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

say() { printf '\n== replay: %s\n' "$*"; }

bash scripts/setup.sh servers

say "cargo run --profile replay --features replay -- replay $*"
# exec: the replay takes this shell's place (cargo run execs it too), so a SIGTERM or SIGINT sent
# to this script reaches the replay, which stops its servers before it exits.
exec cargo run --profile replay --features replay --locked -- replay "$@"
