#!/usr/bin/env bash
# Builds the browser version into web/dist/ (index.html, pandemic-boids.js, pandemic-boids_bg.wasm):
# a static folder any web server serves, e.g. `python3 -m http.server -d web/dist 8080`.
# Needs once: rustup target add wasm32-unknown-unknown
#             cargo install wasm-bindgen-cli --version 0.2.130   (the version in Cargo.lock)
# Optional:   wasm-opt 116 or newer (binaryen) shrinks the .wasm further; Debian's 108 is too old.
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [[ "$have" != "$want" ]]; then
  echo "web/build.sh: wasm-bindgen $want is needed (found: ${have:-none}); run: cargo install wasm-bindgen-cli --version $want" >&2
  exit 2
fi
rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown || {
  echo "web/build.sh: the wasm32 target is missing; run: rustup target add wasm32-unknown-unknown" >&2
  exit 2
}
target=${CARGO_TARGET_DIR:-target}
cargo build --profile web --target wasm32-unknown-unknown --locked
out=web/dist
rm -rf "$out" && mkdir -p "$out"
wasm-bindgen --target web --no-typescript --out-dir "$out" --out-name pandemic-boids \
  "$target/wasm32-unknown-unknown/web/pandemic-boids.wasm"
# wasm-opt must know the reference types Rust now emits: binaryen 116 or newer. Debian's 108
# produces a module that fails to start ("WebAssembly.Table.set(): Argument 1 is invalid").
opt_version=$(wasm-opt --version 2>/dev/null | awk '{print $3}' || true)
if [[ -n "$opt_version" && "$opt_version" -ge 116 ]]; then
  wasm-opt -Os --enable-reference-types --enable-bulk-memory --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals --enable-multivalue \
    -o "$out/opt.wasm" "$out/pandemic-boids_bg.wasm"
  mv "$out/opt.wasm" "$out/pandemic-boids_bg.wasm"
else
  echo "web/build.sh: no wasm-opt ≥ 116 (found: ${opt_version:-none}); skipping that extra size pass" >&2
fi
cp web/index.html "$out/"
du -h "$out"/* | sed 's/^/  /'
echo "built $out — serve it with: python3 -m http.server -d $out 8080"
