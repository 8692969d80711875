# Sourced by serve.sh and test.sh: cargo-installed tools, and npm's wasm-opt ahead of any other.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$root/tests/browser/node_modules/.bin:$HOME/.cargo/bin:$PATH"
