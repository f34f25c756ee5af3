#!/usr/bin/env bash
# How fast the browser build simulates: opens ?scenario=S&seed=7&export=T in headless Chromium
# (the page runs the scenario headless, one thread, to T simulated seconds before it starts the
# app, and says in the console when that run starts and ends) and prints the wall-clock time
# between the two console lines, from the stamps Chromium's log puts on them (a page under a
# virtual time budget cannot time itself). About 10-20 s per page load on 2 cores. Needs
# web/dist (web/build.sh) and Debian's chromium, as web/test-determinism.sh does.
#   web/bench.sh                      # default scenario, 20 simulated seconds
#   web/bench.sh crowd 3              # a shipped scenario (assets/scenarios/NAME.toml), seconds
#   RUNS=3 web/bench.sh crowd 3       # several page loads, one line each
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
scenario=${1:-default}
seconds=${2:-20}
if ! [[ "$seconds" =~ ^[0-9]+([.][0-9]+)?$ ]] || [[ "$seconds" =~ ^0+([.]0+)?$ ]]; then
  echo "web/bench.sh: '$seconds' is not a number of simulated seconds above 0; e.g. web/bench.sh crowd 3" >&2
  exit 2
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for _ in $(seq "${RUNS:-1}"); do
  CHROMIUM_STDERR="$log" web/serve-and-open.sh "?scenario=$scenario&seed=7&export=$seconds" \
    --enable-logging=stderr --v=0 --virtual-time-budget="${WAIT_MS:-600000}" --dump-dom >/dev/null
  python3 - "$log" "$scenario" "$seconds" <<'PY'
import re, sys
log, scenario, seconds = open(sys.argv[1], errors="replace").read(), sys.argv[2], sys.argv[3]
# The page could not read its address (a scenario that is not shipped, say): it says why.
bad = re.search(r'"(link not understood: [^"]*)"', log)
if bad:
    sys.exit(f"web/bench.sh: the page says: {bad.group(1)}")
# [pid:tid:MMDD/HHMMSS.micro:INFO:CONSOLE...] "export: ..."
stamp = r"\[\d+:\d+:\d{4}/(\d\d)(\d\d)(\d\d\.\d+):INFO:CONSOLE[^\]]*\] \"export: run "
def at(which):
    m = re.search(stamp + which + r"([^\"]*)\"", log)
    if not m:
        sys.exit(f"web/bench.sh: the page's console has no 'export: run {which}' line: did the "
                 "page load (is web/dist built by web/build.sh)? Chromium's log is kept with KEEP_LOG=1")
    h, mi, s = m.group(1), m.group(2), m.group(3)
    return int(h) * 3600 + int(mi) * 60 + float(s), m.group(4)
t0, _ = at("started")
t1, rest = at("finished")
ms = ((t1 - t0) % 86400) * 1000
steps = int(re.search(r"(\d+) steps", rest).group(1))
path = rest.split("vector path ", 1)[-1]
print(f"{scenario} {seconds} s: {steps} steps in {ms:.0f} ms ({ms / steps:.3f} ms per step), vector path {path}")
PY
  if [[ -n "${KEEP_LOG:-}" ]]; then cp "$log" /tmp/web-bench-chromium.log; echo "(Chromium's log: /tmp/web-bench-chromium.log)" >&2; fi
done
