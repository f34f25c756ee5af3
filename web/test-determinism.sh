#!/usr/bin/env bash
# A shared link gives the command line's run: opens
# ?scenario=sir&seed=7&set=swarms.normal.count=150&export=S in headless Chromium, reads the
# metrics the page puts into <pre id="metrics"> at S simulated seconds, runs `pandemic-boids
# run` with the same scenario, seed and override, and compares every row sampled before S.
# SECONDS_SIM=S (default 10); BIN=PATH to compare with a binary you have. Prints "OK: identical,
# byte for byte" when every row is; "OK: every count identical; measures agree to …" when only
# the last digit of some measures differs (a browser whose maths rounds differently).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${SECONDS_SIM:-10}
query="?scenario=sir&seed=7&set=swarms.normal.count=150&export=$seconds"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
web/serve-and-open.sh "$query" --virtual-time-budget=${WAIT_MS:-90000} --dump-dom > "$tmp/page.html"
# The command line: BIN=PATH uses a binary you have; otherwise the release build (built first if
# it is missing or out of date; the first build takes 15-20 minutes).
bin=${BIN:-}
if [[ -z "$bin" ]]; then
  echo "building the command line if needed: cargo build --release" >&2
  cargo build --release --quiet || { echo "FAILED: cargo build --release failed" >&2; exit 1; }
  bin=${CARGO_TARGET_DIR:-target}/release/pandemic-boids
fi
if ! "$bin" run --quiet --scenario assets/scenarios/sir.toml --seed 7 \
  --set swarms.normal.count=150 --duration "$seconds" --out "$tmp/cli" >/dev/null 2>"$tmp/cli.err"; then
  echo "FAILED: the command-line run ($bin) failed:" >&2
  tail -5 "$tmp/cli.err" >&2
  exit 1
fi
python3 - "$tmp/page.html" "$tmp/cli/metrics.csv" "$seconds" <<'PY'
import html, re, sys
page, cli, seconds = open(sys.argv[1]).read(), open(sys.argv[2]).read(), float(sys.argv[3])
m = re.search(r'<pre id="metrics">(.*?)</pre>', page, re.S)
if not m:
    sys.exit("FAILED: the page exported no metrics (did it reach the export time? raise WAIT_MS)")
browser = html.unescape(m.group(1)).strip().splitlines()
lines = cli.strip().splitlines()
rows = [lines[0]] + [l for l in lines[1:] if float(l.split(",")[0]) < seconds - 1e-9]
print(f"browser: {len(browser) - 1} rows, command line: {len(rows) - 1} rows before {seconds} s")
if browser == rows:
    print("OK: identical, byte for byte")
    sys.exit(0)
if len(browser) != len(rows) or browser[0] != rows[0]:
    sys.exit("FAILED: different rows or columns")
# Not byte-identical: the browser's maths library rounds some functions (sqrt in the measures,
# powf) differently in the last digit. Counts must match exactly, measures to 1e-4 relative.
worst = 0.0
for k, (a, b) in enumerate(zip(browser[1:], rows[1:]), start=1):
    for col, x, y in zip(rows[0].split(","), a.split(","), b.split(",")):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            sys.exit(f"FAILED: row {k} column {col}: {x!r} vs {y!r}")
        if fx.is_integer() and fy.is_integer():
            sys.exit(f"FAILED: row {k} column {col}: counts differ, {x} vs {y}")
        rel = abs(fx - fy) / max(abs(fx), abs(fy), 1e-12)
        worst = max(worst, rel)
        if rel > 1e-4:
            sys.exit(f"FAILED: row {k} column {col}: {x} vs {y} (relative {rel:.1e})")
print(f"OK: every count identical; measures agree to {worst:.1e} relative (last-digit rounding)")
PY
