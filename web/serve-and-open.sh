#!/usr/bin/env bash
# Shared by the browser tests: serves web/dist on a free local port and runs headless Chromium
# (Debian's `chromium`; WebGL2 through its software renderer, SwiftShader) on a page address.
# usage: web/serve-and-open.sh 'QUERY' CHROMIUM-ARGS...   e.g. '?seed=7' --screenshot=out.png
# Chromium's own messages are dropped unless CHROMIUM_STDERR names a file for them.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -f web/dist/index.html ]] || { echo "web/dist is missing; run web/build.sh first" >&2; exit 2; }
command -v chromium >/dev/null || { echo "chromium not found; run: apt-get install -y chromium" >&2; exit 2; }
query=$1; shift
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server -b 127.0.0.1 -d web/dist "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
sleep 1
profile=$(mktemp -d)
chromium --headless=new --no-sandbox --user-data-dir="$profile" \
  --use-angle=swiftshader --enable-unsafe-swiftshader --ignore-gpu-blocklist \
  --window-size=1600,900 "$@" "http://127.0.0.1:$port/index.html$query" 2>"${CHROMIUM_STDERR:-/dev/null}"
rm -rf "$profile"
