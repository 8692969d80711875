# Sourced by serve.sh and test.sh: scripts/split's stand-in for wasm-bindgen (it splits the wasm
# first), npm's wasm-opt ahead of any other, and cargo-installed tools.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$root/scripts/split:$root/tests/browser/node_modules/.bin:$HOME/.cargo/bin:$PATH"
