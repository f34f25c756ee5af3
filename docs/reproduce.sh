#!/usr/bin/env bash
# Regenerates every number, table and figure in README.md, docs/ and BENCHMARKS.md that comes
# from the simulation (not the timings), from the current code, with the commands the documents
# print.
#
#   docs/reproduce.sh             # run everything, then rewrite the documents and figures
#   docs/reproduce.sh --check     # the same, then exit 1 if any of them differs from git's HEAD
#   OUT=DIR docs/reproduce.sh     # the runs' folder (default out/reproduce/<key>)
#
# It builds first (`cargo build --release`, and the test binaries of `cargo test`: 15-20 and
# about 5 minutes the first time on 2 cores), then runs about 40 minutes on 2 cores (AMD EPYC,
# AVX2; every run has a fixed seed). A run already finished in OUT is not redone, so OUT is
# named after a hash of what the runs depend on (src/, assets/, Cargo.toml, Cargo.lock as they
# are in the working tree): other code gets other runs, an unchanged tree reuses them. Then `REPRODUCE_FROM=$OUT UPDATE_DOCS=1 cargo test --test
# documented_numbers` distils the runs into docs/reproduced/*.csv and renders every marked
# block of the documents from them, and the figures are copied into docs/.
#
# Both modes rewrite the documents and figures in the working tree (look with `git diff`);
# `--check` then fails if they differ from the last commit, so run it on a clean checkout.
# Exit status: 0 done (and, with --check, nothing differs); 1 a run, a test or the check failed
# (the failing step says why); 2 a bad argument. `cargo test` checks the other half: that the
# documents say what docs/reproduced/ holds. Not covered (they need a display, a browser or a
# cluster, or are sizes and timings): the app screenshots, the browser page and its determinism
# check, the SLURM pre-emption trial, checkpoint and browser-build sizes, every timing.
set -euo pipefail
check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "error: unknown argument \`$1\` (use --check, or --help)" >&2
    exit 2
    ;;
esac
[[ $# -le 1 ]] || { echo "error: one argument at most (--check)" >&2; exit 2; }
# OUT relative to where the script was called from.
[[ -n "${OUT:-}" && "${OUT:0:1}" != / ]] && OUT="$PWD/$OUT"
cd "$(dirname "$0")/.."
if [[ -z "${OUT:-}" ]]; then
  key=$(git ls-files -z --cached --others --exclude-standard -- src assets Cargo.toml Cargo.lock |
    sort -z | xargs -0 sha1sum | sha1sum | cut -c1-12)
  OUT="out/reproduce/$key"
fi
mkdir -p "$OUT"
say() { printf '== %s\n' "$*"; }
say "building (the first release build takes 15-20 minutes); runs go to $OUT"
cargo build --release --quiet
cargo test --no-run --quiet 2>/dev/null || cargo test --no-run
B="${CARGO_TARGET_DIR:-target}/release/pandemic-boids"
# A run folder counts as done only if its run completed (an interrupted one is redone).
done_run() { grep -q '"completed": true' "$1/summary.json" 2>/dev/null; }

say "the default scenario's first minute (README: Set-up)"
"$B" experiment --scenarios assets/scenarios/default.toml --seeds 10 --duration 60 \
  --out "$OUT/story" --quiet
say "agents.csv of the default scenario (README: Headless runs)"
done_run "$OUT/agents" ||
  "$B" run --scenario assets/scenarios/default.toml --agents-every 0.5 --out "$OUT/agents" --quiet
say "the GIF (README: Video of a run)"
done_run "$OUT/vid" ||
  "$B" run --scenario assets/scenarios/default.toml --duration 14 --out "$OUT/vid" \
    --video "$OUT/vid/run.gif" --video-from 2 --video-to 14 --video-fps 10 \
    --video-size 480x270 --video-overlays transmissions --quiet
say "R_t of sirs.toml (README: Who infected whom)"
done_run "$OUT/sirs" ||
  "$B" run --scenario assets/scenarios/sirs.toml --seed 1 --out "$OUT/sirs" --quiet
say "the R0 table"
"$B" experiment --scenarios assets/scenarios/sir.toml --scenarios assets/scenarios/default.toml \
  --seeds 10 --out "$OUT/r0" --quiet
say "the five regimes at 65 s (README: Calibrated presets)"
for f in assets/scenarios/regimes/*.toml; do
  name=$(basename "$f" .toml)
  done_run "$OUT/regimes/$name" ||
    "$B" run --scenario "$f" --duration 65.5 --out "$OUT/regimes/$name" \
      --frames "$OUT/regimes/$name" --video-from 65 --video-to 65.05 --video-fps 10 \
      --video-size 480x336 --quiet
done
say "the preset signature table (5 seeds, t = 60-100 s)"
presets() {
  local out=$1
  shift
  "$B" experiment "$@" --seeds 5 --duration 100 --measure-from 60 --out "$OUT/$out" --quiet
}
presets presets --scenarios 'assets/scenarios/regimes/*.toml'
presets presets-report --scenarios 'assets/scenarios/regimes/report/*.toml'
presets presets-matrix --scenarios 'assets/scenarios/matrix/*.toml'
presets presets-other --scenarios assets/scenarios/default.toml --scenarios \
  assets/scenarios/sir.toml --scenarios assets/scenarios/sirs.toml --scenarios \
  assets/scenarios/sird.toml --scenarios assets/scenarios/predators.toml --scenarios \
  assets/scenarios/pygame.toml --scenarios assets/scenarios/adams.toml --scenarios \
  assets/scenarios/hybrid.toml
say "the calibration counterfactuals (README: what each calibration changed)"
presets calib-A-model-b --scenarios assets/scenarios/regimes/report/A_cohesive.toml \
  --set steering_model=shiffman
presets calib-E-model-b --scenarios assets/scenarios/regimes/report/E_tight.toml \
  --set steering_model=shiffman
presets calib-A-cohesion-50 --scenarios assets/scenarios/regimes/A_cohesive.toml \
  --set swarms.normal.cohesion_radius=50
presets calib-B-default-radii --scenarios assets/scenarios/regimes/B_transient.toml \
  --set swarms.normal.alignment_radius=50 --set swarms.normal.cohesion_radius=50 \
  --set swarms.normal.fov=3.1415927
presets calib-D-no-noise --scenarios assets/scenarios/regimes/D_disorder.toml \
  --set swarms.normal.noise=0
presets calib-B3-noise-80 --scenarios 'assets/scenarios/matrix/B3_*.toml' \
  --set swarms.normal.noise=80
say "paired comparisons of the interventions (20 seeds of 90 s each)"
for v in lockdown vaccination test_and_isolate; do
  "$B" compare --base assets/scenarios/interventions/none.toml \
    --variant "assets/scenarios/interventions/$v.toml" --seeds 20 --out "$OUT/compare-$v" \
    --quiet >/dev/null
done
say "the doctor matrix: 40 seeds, and 40 disjoint seeds to check every sentence"
"$B" experiment --scenarios 'assets/scenarios/matrix/*.toml' --seeds 40 --out "$OUT/matrix" --quiet
"$B" experiment --scenarios 'assets/scenarios/matrix/*.toml' --seeds 40 --seed 1001 \
  --out "$OUT/matrix-check" --quiet
say "the sensitivity example, with 1 and with 4 replicates"
sweep() {
  local out=$1
  shift
  "$B" sweep --base assets/scenarios/sir.toml --param epidemic.p_infect_normal=0.1..0.9 \
    --param epidemic.t_death=2..10 --param swarms.normal.count=100..500 \
    --param swarms.normal.max_speed=60..180 --samples 48 --duration 60 "$@" \
    --out "$OUT/$out" --quiet
  "$B" merge "$OUT/$out" >/dev/null
}
sweep sweep
sweep sweep-replicates --replicates 4
say "the benchmarks' neighbour counts (BENCHMARKS.md; the timings are not compared)"
[[ -f "$OUT/bench-pandemic.json" ]] || "$B" bench --json "$OUT/bench-pandemic.json" >/dev/null
[[ -f "$OUT/bench-flocking.json" ]] || "$B" bench --workload flocking --threads 1 \
  --sizes 1000,10000,100000 --json "$OUT/bench-flocking.json" >/dev/null

say "the well-mixed R0 check (tests/transmission.rs prints its measurement)"
if [[ ! -s "$OUT/well_mixed.txt" ]]; then
  cargo test --quiet --test transmission well_mixed_r0_matches_the_mean_field -- --nocapture \
    >"$OUT/well_mixed.log" 2>&1 || { cat "$OUT/well_mixed.log"; exit 1; }
  grep '^well-mixed R0:' "$OUT/well_mixed.log" >"$OUT/well_mixed.txt" || {
    echo "error: the well-mixed test printed no 'well-mixed R0:' line ($OUT/well_mixed.log)" >&2
    exit 1
  }
fi
say "distilling into docs/reproduced/ and rewriting the documents"
REPRODUCE_FROM="$(realpath "$OUT")" UPDATE_DOCS=1 cargo test --quiet --test documented_numbers
mkdir -p docs/video docs/transmission docs/presets docs/interventions docs/matrix docs/sweep
cp "$OUT/vid/run.gif" docs/video/default.gif
cp "$OUT/sirs/rt.png" docs/transmission/rt_sirs.png
for f in assets/scenarios/regimes/*.toml; do
  name=$(basename "$f" .toml)
  cp "$OUT/regimes/$name/frame-00000.png" "docs/presets/$name.png"
done
cp "$OUT/compare-lockdown/plots/comparison_infected.png" docs/interventions/
cp "$OUT/compare-lockdown/plots/paired_differences.png" docs/interventions/
for f in heatmap_peak_infected heatmap_eradication_time infected_grid; do
  cp "$OUT/matrix/plots/$f.png" docs/matrix/
done
cp "$OUT/matrix/aggregate.csv" docs/matrix/aggregate.csv
for f in tornado_r0 prcc_heatmap r0_vs_epidemic_p_infect_normal; do
  cp "$OUT/sweep/plots/$f.png" docs/sweep/
done
if $check; then
  say "checking that nothing changed"
  git status --short -- README.md BENCHMARKS.md docs
  git diff --quiet HEAD -- README.md BENCHMARKS.md docs &&
    [[ -z "$(git status --porcelain --untracked-files=all -- docs)" ]] ||
    {
      echo "error: the documents differ from what the current code produces (see git diff)" >&2
      exit 1
    }
  echo "every regenerated number and figure matches the documents"
else
  git status --short -- README.md BENCHMARKS.md docs
fi
