#!/usr/bin/env bash
# Opens the built page (web/dist) in headless Chromium, waits, screenshots it to web/page.png
# (or $1), and checks that boids are drawn and the side panels are there.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-web/page.png}
web/serve-and-open.sh '?seed=7' --virtual-time-budget=${WAIT_MS:-20000} --screenshot="$out"
python3 web/check_page.py "$out"
