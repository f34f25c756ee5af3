#!/usr/bin/env bash
# How fast the browser build simulates: opens ?scenario=S&seed=7&export=T in headless Chromium
# (the page runs the scenario headless to T simulated seconds before it starts the app, and says
# in the console when that run starts and ends) and prints the wall-clock time between the two
# console lines, from the stamps Chromium's log puts on them (a page under a virtual time
# budget cannot time itself). Needs web/dist (web/build.sh) and Debian's chromium, as
# web/test-determinism.sh does.
#   web/bench.sh                      # default scenario, 20 simulated seconds
#   web/bench.sh crowd 5              # another shipped scenario and length
#   RUNS=3 web/bench.sh               # several page loads, one line each
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-default}
seconds=${2:-20}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for _ in $(seq "${RUNS:-1}"); do
  CHROMIUM_STDERR="$log" web/serve-and-open.sh "?scenario=$scenario&seed=7&export=$seconds" \
    --enable-logging=stderr --v=0 --virtual-time-budget="${WAIT_MS:-600000}" --dump-dom >/dev/null
  python3 - "$log" "$scenario" "$seconds" <<'PY'
import re, sys
log, scenario, seconds = open(sys.argv[1], errors="replace").read(), sys.argv[2], sys.argv[3]
# [pid:tid:MMDD/HHMMSS.micro:INFO:CONSOLE...] "export: ..."
stamp = r"\[\d+:\d+:\d{4}/(\d\d)(\d\d)(\d\d\.\d+):INFO:CONSOLE[^\]]*\] \"export: run "
def at(which):
    m = re.search(stamp + which + r"([^\"]*)\"", log)
    if not m:
        sys.exit(f"web/bench.sh: the page's console has no 'export: run {which}' line "
                 "(did the run reach its end? raise WAIT_MS)")
    h, mi, s = m.group(1), m.group(2), m.group(3)
    return int(h) * 3600 + int(mi) * 60 + float(s), m.group(4)
t0, _ = at("started")
t1, rest = at("finished")
ms = ((t1 - t0) % 86400) * 1000
steps = int(re.search(r"(\d+) steps", rest).group(1))
path = rest.split("vector path ", 1)[-1]
print(f"{scenario} {seconds} s: {steps} steps in {ms:.0f} ms ({ms / steps:.3f} ms per step), vector path {path}")
PY
done
