#!/usr/bin/env bash
# Replays the deck against real servers: installs redis-server, postgresql, etcd-server and
# faketime if missing (Debian; as root), keeps the packages' own services from starting or
# stops them (the replay starts private instances on 127.0.0.1 / a Unix socket in a temp
# dir), then runs `cargo run --profile replay --features replay -- replay "$@"`. Exits non-zero on a mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

say() { printf '\n== replay: %s\n' "$*"; }

missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
[ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql)
command -v etcd >/dev/null || missing+=(etcd-server)
[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 ] || missing+=(faketime)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "replay: missing ${missing[*]}; run as root to install them" >&2
    exit 2
  fi
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # policy-rc.d exit 101 tells the packages' postinst not to start their services; we run
  # our own instances. Only added if absent, and removed again afterwards.
  added_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    added_policy=1
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
  [ "$added_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
  # Should a service have started anyway (no policy-rc.d support), stop it by its own tools.
  if command -v pg_ctlcluster >/dev/null; then
    for c in $(pg_lsclusters -h 2>/dev/null | awk '$4 == "online" { print $1 "/" $2 }'); do
      pg_ctlcluster "${c%/*}" "${c#*/}" stop || true
    done
  fi
  for svc in redis-server etcd; do
    if command -v service >/dev/null; then service "$svc" stop >/dev/null 2>&1 || true; fi
  done
fi

say "cargo run --profile replay --features replay -- replay $*"
cargo run --profile replay --features replay --locked -- replay "$@"
