#!/usr/bin/env bash
# Flocking against krABMaga's `flockers` example, one core each, in the same run.
#
#   bench/peer/run.sh                      # sizes 1000,10000,100000, 3 rounds
#   SIZES=1000,10000 ROUNDS=5 PIN=0 bench/peer/run.sh
#
# The peer is built outside this repository, in ${XDG_CACHE_HOME:-~/.cache}/pandemic-boids/peer:
# the public krABMaga examples repository (cloned from GitHub, or KRABMAGA_EXAMPLES=DIR for a
# checkout you have) with its `flockers` model unchanged and `bench/peer/flockers_main.rs` as its
# entry point (the example's own `main` only prints a progress screen), against the `krabmaga`
# crate from crates.io that the example names; both are release builds for the x86-64 baseline,
# as `cargo build` makes them. Each round times, for every size, the peer (N birds at the
# example's density, 10 untimed then 200 timed steps) and then `pandemic-boids bench --workload
# flocking --threads 1 --backends grid` with the same steps (one swarm at the same neighbour
# count; BENCHMARKS.md says how the workloads match), alternating so that both see the same
# machine; it prints the median over the rounds of each one's median ms per step and the ratio.
#
#   MODE=run bench/peer/run.sh             # whole runs instead: process start to exit
#
# MODE=run times whole processes (wall clock from start to exit, files written): the peer's
# 210 steps on one core against `pandemic-boids run` of the same 210 steps of the flocking
# workload (a scenario written here: one swarm of N Normal boids on the grid at the bench's
# density, nothing else; the run's default metrics every 0.5 s and its CSV, JSON and PNG
# files) on THREADS threads (default 2, not pinned). Ours is charged wall × THREADS
# core-seconds, the peer its wall; it prints the medians and the ratio. Only the two processes
# are timed: the last round's output folder is removed before the clock starts.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZES="${SIZES:-1000,10000,100000}"
MODE="${MODE:-step}"
if [[ "$MODE" != step && "$MODE" != run ]]; then
  echo "error: MODE=$MODE: use MODE=step (per step, the default) or MODE=run (whole runs)" >&2
  exit 2
fi
ROUNDS="${ROUNDS:-3}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/pandemic-boids/peer"
EXAMPLES="${KRABMAGA_EXAMPLES:-$CACHE/examples}"
mkdir -p "$CACHE"
if [[ ! -d "$EXAMPLES/flockers" ]]; then
  if [[ -n "${KRABMAGA_EXAMPLES:-}" ]]; then
    echo "error: KRABMAGA_EXAMPLES=$EXAMPLES has no flockers/ folder" >&2
    exit 2
  fi
  git clone --quiet --depth 1 https://github.com/krABMaga/examples "$EXAMPLES" || {
    echo "error: could not clone https://github.com/krABMaga/examples; fetch that repository" \
      "another way and name its folder with KRABMAGA_EXAMPLES=DIR" >&2
    exit 2
  }
fi
# The example's sources are copied afresh; its build folder stays, so krabmaga builds once.
rm -rf "$CACHE/flockers"
cp -r "$EXAMPLES/flockers" "$CACHE/flockers"
rm -rf "$CACHE/flockers/src/visualization" "$CACHE/flockers/target"
cp bench/peer/flockers_main.rs "$CACHE/flockers/src/main.rs"
echo "building the peer (krabmaga from crates.io) in $CACHE/flockers" >&2
(cd "$CACHE/flockers" && CARGO_TARGET_DIR="$CACHE/target" cargo build --release --quiet)
PEER="$CACHE/target/release/flockers"
echo "building pandemic-boids" >&2
cargo build --release --quiet
OURS="${CARGO_TARGET_DIR:-target}/release/pandemic-boids"

json_number() {
  local found
  found=$(grep -o "\"$1\": *[0-9.e+-]*" | head -1 | sed 's/.*: *//') || true
  [[ -n "$found" ]] || { echo "error: no \"$1\" in the timing output" >&2; return 1; }
  echo "$found"
}
# The median (the mean of the two middle values for an even count).
median() { sort -g | awk '{a[NR] = $1} END {print (a[int((NR + 1) / 2)] + a[int(NR / 2) + 1]) / 2}'; }

# One core each, strictly: both pinned to core 0 with taskset (PIN=0: not pinned; then
# pandemic-boids' one compute thread still shares the process with Bevy's other threads).
PIN_TO=()
if [[ "${PIN:-1}" != 0 ]]; then
  if command -v taskset >/dev/null; then
    PIN_TO=(taskset -c 0)
  else
    echo "warning: no taskset here: running unpinned" >&2
  fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$OURS" bench --workload flocking --threads 1 --sizes 1000 --backends grid --steps 1 \
  --warmup 0 >"$tmp/machine.txt"
head -1 "$tmp/machine.txt"
IFS=, read -ra sizes <<<"$SIZES"

# The table: for every size, each one's median over the rounds (the files $tmp/ours-N and
# $tmp/peer-N, divided by SCALE) and the peer's over ours charged for CHARGE cores.
report() {
  local unit=$1 scale=$2 charge=$3 ratio=$4 n ours peer
  printf '%8s | %20s | %20s | %s\n' boids "pandemic-boids $unit" "krABMaga $unit" "$ratio"
  for n in "${sizes[@]}"; do
    ours=$(median <"$tmp/ours-$n")
    peer=$(median <"$tmp/peer-$n")
    printf '%8s | %20.3f | %20.3f | ×%.2f\n' "$n" \
      "$(awk -v a="$ours" -v s="$scale" 'BEGIN {print a / s}')" \
      "$(awk -v a="$peer" -v s="$scale" 'BEGIN {print a / s}')" \
      "$(awk -v a="$peer" -v b="$ours" -v t="$charge" 'BEGIN {print a / (b * t)}')"
  done
}

if [[ "$MODE" == run ]]; then
  THREADS="${THREADS:-2}"
  for n in "${sizes[@]}"; do
    # The bench's flocking workload: a wrapped square where n boids at uniform density have
    # 20 others within 50 px (about 31 once flocks form, as in the peer).
    side=$(awk -v n="$n" 'BEGIN {printf "%.3f", sqrt(n * 3.14159265358979 * 2500 / 20)}')
    cat >"$tmp/flocking-$n.toml" <<TOML
seed = 1
duration = 3.5
neighbour_index = "grid"
[world]
width = $side
height = $side
boundary = "wrap"
[swarms.normal]
count = $n
[swarms.doctor]
count = 0
[antivax]
p_antivax = 0.0
[epidemic]
p_initial_infect_normal = 0.0
p_initial_infect_doctor = 0.0
TOML
  done
  # The clock in microseconds: bash's own (5.0 and later; the digits of "s.µs", whatever the
  # locale's decimal mark), so no process is started between the two readings around a run.
  if [[ -n "${EPOCHREALTIME:-}" ]]; then
    now_us() { now=${EPOCHREALTIME//[!0-9]/}; }
  else
    now_us() { now=$(($(date +%s%N) / 1000)); }
  fi
  for ((round = 1; round <= ROUNDS; round++)); do
    for n in "${sizes[@]}"; do
      # The last round's output folder goes before the clock starts: removing it is not
      # part of either run.
      rm -rf "$tmp/out-$n"
      now_us
      t0=$now
      ${PIN_TO[@]+"${PIN_TO[@]}"} "$PEER" --birds "$n" --steps 210 --warmup 0 >/dev/null
      now_us
      t1=$now
      "$OURS" run --scenario "$tmp/flocking-$n.toml" --threads "$THREADS" --out "$tmp/out-$n" \
        >"$tmp/ours.out" 2>&1 || {
        cat "$tmp/ours.out"
        exit 1
      }
      now_us
      t2=$now
      echo $((t1 - t0)) >>"$tmp/peer-$n"
      echo $((t2 - t1)) >>"$tmp/ours-$n"
    done
    echo "round $round of $ROUNDS done" >&2
  done
  report "wall s" 1e6 "$THREADS" "krABMaga / (pandemic-boids × $THREADS)"
  pinned="the peer pinned to core 0, ours not pinned"
  [[ ${#PIN_TO[@]} -eq 0 ]] && pinned="neither pinned"
  echo "(medians over $ROUNDS rounds of whole processes, 210 steps each; ours on $THREADS" \
    "threads; $pinned)"
  exit 0
fi
for ((round = 1; round <= ROUNDS; round++)); do
  for n in "${sizes[@]}"; do
    ${PIN_TO[@]+"${PIN_TO[@]}"} "$PEER" --birds "$n" --steps 200 --warmup 10 | json_number median_ms \
      >>"$tmp/peer-$n"
    ${PIN_TO[@]+"${PIN_TO[@]}"} "$OURS" bench --workload flocking --threads 1 --sizes "$n" --backends grid --steps 200 \
      --warmup 10 --json "$tmp/ours.json" >"$tmp/ours.out" 2>&1 || {
      cat "$tmp/ours.out"
      exit 1
    }
    json_number step_ms_median <"$tmp/ours.json" >>"$tmp/ours-$n"
  done
  echo "round $round of $ROUNDS done" >&2
done
report "ms" 1 1 "krABMaga / pandemic-boids"
pinned="both pinned to core 0"
[[ ${#PIN_TO[@]} -eq 0 ]] && pinned="not pinned"
echo "(medians over $ROUNDS rounds of each one's median ms per step; 200 steps after 10; $pinned)"
