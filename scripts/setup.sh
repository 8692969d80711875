#!/usr/bin/env bash
# Installs what building and testing fencing-lab needs, skipping whatever is already
# present at the right version, so only the first run on a machine is slow (~15 min).
# Afterwards: source scripts/env.sh (done by serve.sh and test.sh) for PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n== setup: %s\n' "$*"; }

TRUNK_VERSION=0.21.14
# wasm-bindgen-cli must match the wasm-bindgen crate in Cargo.lock exactly.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

if ! trunk --version 2>/dev/null | grep -qx "trunk $TRUNK_VERSION"; then
  say "cargo install trunk@$TRUNK_VERSION (rustc 1.95 cannot build trunk 0.22)"
  cargo install --locked "trunk@$TRUNK_VERSION"
fi

if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $WASM_BINDGEN_VERSION"; then
  say "cargo install wasm-bindgen-cli@$WASM_BINDGEN_VERSION"
  cargo install --force "wasm-bindgen-cli@$WASM_BINDGEN_VERSION"
fi

LEPTOSFMT_VERSION=0.1.33
if ! leptosfmt --version 2>/dev/null | grep -qx "leptosfmt $LEPTOSFMT_VERSION"; then
  say "cargo install leptosfmt@$LEPTOSFMT_VERSION (formats the view! blocks)"
  cargo install --locked "leptosfmt@$LEPTOSFMT_VERSION"
fi

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}"
fi

# playwright-core (no browser download: it drives /usr/bin/chromium) and binaryen's
# wasm-opt (Debian's wasm-opt 108 corrupts wasm-bindgen's externref table).
if ! (cd tests/browser && npm ls --depth=0 playwright-core binaryen terser @axe-core/playwright >/dev/null 2>&1); then
  say "npm ci in tests/browser"
  (cd tests/browser && npm ci --no-audit --no-fund)
fi

say "ready: $(trunk --version), $(wasm-bindgen --version), $(/usr/bin/chromium --version 2>/dev/null | head -1)"
