#!/usr/bin/env bash
# Installs what fencing-lab needs, skipping whatever is already present at the right version.
#   bash scripts/setup.sh serve   what building and serving the page needs: the wasm32 target,
#                                 trunk, wasm-bindgen-cli, wasm-split-cli, and binaryen +
#                                 terser from npm
#   bash scripts/setup.sh servers the replay's servers only (scripts/replay.sh runs this)
#   bash scripts/setup.sh [test]  serve's, plus what the tests need: leptosfmt, Debian's Chromium
#                                 and ChromeDriver, the replay's servers, playwright-core and axe
# On a fresh 2-core machine the compiles dominate, so the downloads (apt, npm) run in the
# background while cargo builds the tools, and tools whose speed does not matter (trunk only
# orchestrates; leptosfmt formats a few files) are built unoptimised (`--debug`), about half
# the compile time. Afterwards: source scripts/env.sh (done by serve.sh and test.sh) for PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-test}
case "$mode" in serve | servers | test) ;; *) echo "usage: setup.sh [serve|servers|test]" >&2; exit 2 ;; esac

# The tools it installs land in ~/.cargo/bin and tests/browser/node_modules/.bin: look there
# too, so a second run finds them even where the login's PATH lacks ~/.cargo/bin.
source scripts/env.sh
started=$(date +%s)
say() { printf '\n== setup (%ss): %s\n' "$(($(date +%s) - started))" "$*"; }

TRUNK_VERSION=0.21.14
LEPTOSFMT_VERSION=0.1.33
# wasm-split-cli (crate wasm_split_cli_support): the wasm_split_helpers 0.2 that leptos's
# `wasm_split` comes from in Cargo.lock is its runtime half.
WASM_SPLIT_VERSION=0.2.4
# wasm-bindgen-cli must match the wasm-bindgen crate in Cargo.lock exactly.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)

# Debian packages: the browser for the browser tests; the servers the replay runs against
# (scripts/replay.sh starts private instances of them, so their own services stay off).
apt_missing=()
if [ "$mode" = test ]; then
  [ -x /usr/bin/chromium ] || apt_missing+=(chromium)
  [ -x /usr/bin/chromedriver ] || apt_missing+=(chromium-driver)
  # pdftoppm: the rehearse test turns the printed night-before sheet into pages to look at.
  command -v pdftoppm >/dev/null || apt_missing+=(poppler-utils)
fi
if [ "$mode" != serve ]; then
  command -v redis-server >/dev/null || apt_missing+=(redis-server)
  [ -x /usr/lib/postgresql/15/bin/initdb ] || apt_missing+=(postgresql)
  command -v etcd >/dev/null || apt_missing+=(etcd-server)
  # ZooKeeper's server jar (3.8; it brings a JRE); Debian's service is zookeeperd, not installed.
  [ -e /usr/share/java/zookeeper.jar ] || apt_missing+=(zookeeper)
  [ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 ] || apt_missing+=(faketime)
fi

# npm: binaryen's wasm-opt (Debian's wasm-opt 108 corrupts wasm-bindgen's externref table) and
# terser are the build's (dependencies); playwright-core (no browser download: it drives
# /usr/bin/chromium) and axe are the tests' (devDependencies).
npm_want=(binaryen terser)
npm_flags=(--omit=dev)
if [ "$mode" = test ]; then
  npm_want+=(playwright-core axe-core)
  npm_flags=()
fi

log=$(mktemp -d)
pids=()
if [ ${#apt_missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing ${apt_missing[*]}; run as root to install them" >&2
    exit 2
  fi
  say "apt-get install ${apt_missing[*]} (in the background)"
  (
    export DEBIAN_FRONTEND=noninteractive
    # policy-rc.d exit 101 keeps the packages' own services from starting: the replay runs
    # private instances. Added only if absent, and removed again afterwards.
    added_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
      chmod +x /usr/sbin/policy-rc.d
      added_policy=1
    fi
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${apt_missing[@]}"
    if [ "$added_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
    # Should a service have started anyway (no policy-rc.d support), stop it by its own tools.
    if command -v pg_ctlcluster >/dev/null; then
      for c in $(pg_lsclusters -h 2>/dev/null | awk '$4 == "online" { print $1 "/" $2 }'); do
        pg_ctlcluster "${c%/*}" "${c#*/}" stop || true
      done
    fi
    for svc in redis-server etcd; do
      if command -v service >/dev/null; then service "$svc" stop >/dev/null 2>&1 || true; fi
    done
  ) >"$log/apt" 2>&1 &
  pids+=("$!:apt")
fi
if [ "$mode" != servers ] && ! (cd tests/browser && npm ls --depth=0 "${npm_want[@]}" >/dev/null 2>&1); then
  say "npm ci ${npm_flags[*]} in tests/browser (in the background)"
  (cd tests/browser && npm ci --no-audit --no-fund "${npm_flags[@]}") >"$log/npm" 2>&1 &
  pids+=("$!:npm")
fi

if [ "$mode" != servers ] && ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
if [ "$mode" != servers ] && ! trunk --version 2>/dev/null | grep -qx "trunk $TRUNK_VERSION"; then
  say "cargo install --debug trunk@$TRUNK_VERSION (rustc 1.95 cannot build trunk 0.22)"
  cargo install --debug --locked "trunk@$TRUNK_VERSION"
fi
if [ "$mode" != servers ] && ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $WASM_BINDGEN_VERSION"; then
  # Optimised: it rewrites the page's wasm on every build.
  say "cargo install wasm-bindgen-cli@$WASM_BINDGEN_VERSION"
  # Not --locked: its published lock file names a yanked webpki-roots.
  cargo install --force "wasm-bindgen-cli@$WASM_BINDGEN_VERSION"
fi
if [ "$mode" != servers ] && ! cargo install --list | grep -qx "wasm_split_cli_support v$WASM_SPLIT_VERSION:"; then
  # Unoptimised: it splits the page's wasm in half a second even so (26 s to build, on 2 cores).
  say "cargo install --debug wasm_split_cli_support@$WASM_SPLIT_VERSION (splits the page's wasm at its lazy parts)"
  cargo install --debug --locked --features build-binary "wasm_split_cli_support@$WASM_SPLIT_VERSION"
fi
if [ "$mode" = test ] && ! leptosfmt --version 2>/dev/null | grep -qx "leptosfmt $LEPTOSFMT_VERSION"; then
  say "cargo install --debug leptosfmt@$LEPTOSFMT_VERSION (formats the view! blocks)"
  cargo install --debug --locked "leptosfmt@$LEPTOSFMT_VERSION"
fi

for entry in "${pids[@]}"; do
  pid=${entry%%:*} name=${entry#*:}
  if ! wait "$pid"; then
    echo "setup: $name failed:" >&2
    cat "$log/$name" >&2
    exit 1
  fi
  say "$name done"
done
rm -rf "$log"

case "$mode" in
  servers) say "ready (servers): $(redis-server --version | cut -d' ' -f1-3), $(etcd --version 2>/dev/null | head -1), $(dpkg-query -W -f='zookeeper ${Version}' zookeeper 2>/dev/null)" ;;
  serve) say "ready (serve): $(trunk --version), $(wasm-bindgen --version)" ;;
  test) say "ready (test): $(trunk --version), $(wasm-bindgen --version), $(/usr/bin/chromium --version 2>/dev/null | head -1)" ;;
esac
