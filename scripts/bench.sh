#!/usr/bin/env bash
# Reruns every performance figure of fencing-lab and prints them, with ratios taken within
# this one run. Nothing here is a test and nothing asserts a time.
#   bash scripts/bench.sh              everything
#   bash scripts/bench.sh lighthouse   only the release build's Lighthouse medians, its
#                                      transfer against the 300 KB cap and what each part costs
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh > /dev/null
source scripts/env.sh
root=$(pwd)
only=${1:-all}

gz() { gzip -9c "$1" | wc -c; }
# The wasm chunks split off the page (src/ui/split.rs), fetched only when first used.
lazy='(split_.*|chunk)-[0-9a-f]+[.]wasm'
# Sums raw and gzip bytes of the wasm, js and css that a page load transfers from a dist/
# (not its lazy chunks, which are listed after it).
bundle() {
  local dir=$1 raw=0 gzb=0 f
  for f in $(find "$dir" -name '*.wasm' -o -name '*.js' -o -name '*.css' | sort); do
    if [[ ${f##*/} =~ ^$lazy$ ]]; then
      printf '  %-60s raw %8d  gzip %7d  (fetched when first used)\n' "${f#"$dir"/}" "$(stat -c %s "$f")" "$(gz "$f")" >&2
      continue
    fi
    raw=$((raw + $(stat -c %s "$f")))
    gzb=$((gzb + $(gz "$f")))
    printf '  %-60s raw %8d  gzip %7d\n' "${f#"$dir"/}" "$(stat -c %s "$f")" "$(gz "$f")" >&2
  done
  echo "$raw $gzb"
}

# The page's transfer (wasm + JS + CSS, gzip -9) against its 300 KB cap (300,000 bytes, as
# the retired 150 KB budget counted), what each part of the wasm costs
# (scripts/wasm-cost.mjs), and the ledger of what landed features cost.
cap=300000
transfer() {
  local gzb=$1 wasm_gz
  wasm_gz=$(gz "$(find dist -maxdepth 1 -name '*_bg.wasm' | head -1)")
  echo "transfer.gzip_bytes $gzb (wasm + JS + CSS)"
  awk -v a="$gzb" -v c="$cap" 'BEGIN { printf "transfer.cap_used %.1f%% of %d bytes%s\n", 100 * a / c, c, (a > c ? " (OVER THE CAP)" : "") }'
  node scripts/wasm-cost.mjs target/bench-app.wasm "$wasm_gz"
  local last
  last=$(tail -n 1 scripts/transfer.tsv | cut -f2)
  awk -v a="$gzb" -v l="$last" 'BEGIN { printf "transfer.since_last_ledger_line %+d bytes\n", a - l }'
  echo "transfer.ledger (scripts/transfer.tsv: add a line when a feature lands):"
  column -t -s $'\t' scripts/transfer.tsv | sed 's/^/  /'
}

# Lighthouse 12 (scripts/lighthouse, installed here and nowhere else) on dist/ served with
# gzip from loopback: medians of 3 runs for the mobile and desktop presets.
lighthouse() {
  [ -d scripts/lighthouse/node_modules ] || (cd scripts/lighthouse && npm ci --no-audit --no-fund > /dev/null)
  CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium} node scripts/lighthouse/run.mjs dist 3
}

echo "== bundle: fencing-lab release build" >&2
trunk build --release --offline > /dev/null 2>&1
# The page's own wasm as split, before wasm-bindgen (names kept): what opens the page, without
# the lazy chunks. Copied before the test-hooks build replaces it.
cp target/wasm-bindgen/release/split/fencing-lab.wasm target/bench-app.wasm
if [ "$only" = lighthouse ]; then
  read -r app_raw app_gz < <(bundle dist)
  echo "== lighthouse: dist/ served with gzip, 3 runs per preset" >&2
  lighthouse
  transfer "$app_gz"
  exit 0
fi
trunk build --release --offline --features test-hooks --dist dist-test > /dev/null 2>&1
read -r app_raw app_gz < <(bundle dist)

# A plain Leptos counter, built the same way (same lock file, profile, trunk, wasm-opt).
counter=target/bench-counter
mkdir -p "$counter/src"
cp Cargo.lock "$counter/Cargo.lock"
wb=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
cat > "$counter/Cargo.toml" <<TOML
[package]
name = "bench-counter"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
leptos = { version = "0.8", features = ["csr"] }
wasm-bindgen = "=$wb"

[profile.release]
opt-level = "z"
lto = true
codegen-units = 1
panic = "abort"

[workspace]
TOML
cat > "$counter/src/main.rs" <<'RS'
use leptos::prelude::*;

fn main() {
    leptos::mount::mount_to_body(|| {
        let (count, set_count) = signal(0);
        view! { <button on:click=move |_| set_count.update(|n| *n += 1)>"Count: " {count}</button> }
    });
}
RS
sed -e 's|<link data-trunk rel="css"[^>]*>||' -e 's|data-bin="fencing-lab"|data-bin="bench-counter"|' index.html > "$counter/index.html"
# The same Trunk.toml, with the JavaScript minified by the same hook.
sed -e "s|\"scripts/|\"$root/scripts/|g" Trunk.toml > "$counter/Trunk.toml"
echo "== bundle: plain Leptos counter, same build" >&2
# Plain: without the project's erase_components cfg (.cargo/config.toml), which makes a page
# this small larger (about 36 KB instead of 31.5 KB gzip); the floor stays the plain counter.
(cd "$counter" && RUSTFLAGS="" CARGO_TARGET_DIR="$root/target/bench-counter-target" trunk build --release --offline > /dev/null 2>&1)
read -r counter_raw counter_gz < <(bundle "$counter/dist")

# The pure floor (examples/pure_floor.rs): everything the page computes, nothing rendered, no
# Leptos; built and optimized as trunk builds the app (release profile, wasm-bindgen, wasm-opt
# with index.html's flags), wasm only.
echo "== bundle: pure floor (examples/pure_floor.rs), same build" >&2
cargo build --release --locked --example pure_floor --target wasm32-unknown-unknown > /dev/null 2>&1
pure=target/bench-pure-floor
rm -rf "$pure"
# Through wasm-split-cli as the app's wasm goes: it has no split point, but the tool drops the
# linker's relocation sections (--emit-relocs, .cargo/config.toml), which wasm-opt keeps.
wasm-split-cli --target web --out-name pure_floor target/wasm32-unknown-unknown/release/examples/pure_floor.wasm "$pure/split" > /dev/null 2>&1
wasm-bindgen --target web --no-typescript --out-dir "$pure" "$pure/split/pure_floor.wasm"
opt_flags=$(sed -n 's/.*data-wasm-opt-params="\([^"]*\)".*/\1/p' index.html)
# shellcheck disable=SC2086 # the flags are words
wasm-opt -Oz $opt_flags "$pure/pure_floor_bg.wasm" -o "$pure/pure_floor.opt.wasm"
pure_gz=$(gz "$pure/pure_floor.opt.wasm")
app_wasm_gz=$(gz "$(find dist -maxdepth 1 -name '*_bg.wasm' | head -1)")

echo "== lighthouse: dist/ served with gzip, 3 runs per preset" >&2
lighthouse_medians=$(lighthouse)

echo "== browser: drag, explorer and first paint in headless Chromium" >&2
browser=$(cd tests/browser && node bench.mjs)

echo "== native: explorer and core scale (release)" >&2
native=$(cargo bench --locked --bench explore 2>/dev/null | grep -E '^[a-z]' || true)
drag_native=$(cargo bench --locked --bench drag 2>/dev/null | grep -E '^[a-z]' || true)
scale=$(cargo bench --locked --bench scale 2>/dev/null | grep -E '^[a-z]' || true)

echo
echo "bundle.app.raw_bytes $app_raw"
echo "bundle.app.gzip_bytes $app_gz"
echo "bundle.counter.raw_bytes $counter_raw"
echo "bundle.counter.gzip_bytes $counter_gz"
awk -v a="$app_gz" -v c="$counter_gz" 'BEGIN { printf "bundle.gzip_ratio_app_over_counter %.2f\n", a / c }'
echo "bundle.app.wasm_gzip_bytes $app_wasm_gz"
echo "bundle.pure_floor.wasm_gzip_bytes $pure_gz"
awk -v p="$pure_gz" -v a="$app_wasm_gz" 'BEGIN { printf "bundle.pure_floor_share_of_app_wasm %.2f\n", p / a }'
echo "bundle.single_file.raw_bytes $(stat -c %s dist/fencing-lab.html)"
echo "bundle.single_file.gzip_bytes $(gz dist/fencing-lab.html)"
transfer "$app_gz"
echo "$lighthouse_medians"
echo "$browser"
echo "$drag_native"
echo "$native"
echo "$scale"
wasm_ms=$(echo "$browser" | awk '$1 == "explore.wasm.median_ms" { print $2 }')
native_ms=$(echo "$native" | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | head -1)
if [ -n "$wasm_ms" ] && [ -n "$native_ms" ]; then
  awk -v w="$wasm_ms" -v n="$native_ms" 'BEGIN { printf "explore.ratio_wasm_over_native %.2f\n", w / n }'
fi
