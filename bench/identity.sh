#!/usr/bin/env bash
#! Byte-identity of fixed-seed outputs between two builds: runs the same 22 scenarios with a
#! binary, each into its own subfolder DIR/<scenario>/ (metrics, transmissions, R_t, summary and
#! config files; agents.csv for sir, interventions.csv for isolate; pictures are deleted). Run it
#! with the old binary and the new one, then compare: diff -r OLD_DIR NEW_DIR && echo identical
#!
#!   bench/identity.sh BINARY OUT_DIR            # e.g. target/release/pandemic-boids /tmp/id-new
#!   PANDEMIC_BOIDS_SIMD=baseline bench/identity.sh BINARY OUT_DIR   # another vector path
#!   THREADS=1 bench/identity.sh BINARY OUT_DIR                        # another thread count
#!
#! Paths are taken from where you are. OUT_DIR must be new or empty (old files would stay and
#! show up in the diff). About 30 s per binary on 2 cores.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: bench/identity.sh BINARY OUT_DIR" >&2
  exit 2
fi
bin=$(realpath -m -- "$1")
out=$(realpath -m -- "$2")
if [ ! -x "$bin" ] || [ -d "$bin" ]; then
  echo "bench/identity.sh: $1 is not an executable file; build one with: cargo build --release" >&2
  exit 2
fi
if [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  echo "bench/identity.sh: $2 is not empty; give a new folder (old files would stay in the comparison)" >&2
  exit 2
fi
if ! mkdir -p "$out" 2>/dev/null || [ ! -w "$out" ]; then
  echo "bench/identity.sh: cannot write to $2; give a folder you can create" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
echo "$bin, vector path ${PANDEMIC_BOIDS_SIMD:-widest the CPU has}, threads ${THREADS:-all cores} -> $out"
threads=()
if [ -n "${THREADS:-}" ]; then threads=(--threads "$THREADS"); fi
run() {
  local name=$1
  shift
  "$bin" run -q "${threads[@]}" --out "$out/$name" "$@" >/dev/null
  # Drop the files that are pictures or hold timings.
  rm -f "$out/$name"/*.png "$out/$name"/*.gif
}
run default --scenario assets/scenarios/default.toml --duration 60
run sir --scenario assets/scenarios/sir.toml --duration 30 --agents-every 1
run sirs --scenario assets/scenarios/sirs.toml --duration 60
run B2_D2 --scenario assets/scenarios/matrix/B2_D2.toml --duration 100
run B3_D3 --scenario assets/scenarios/matrix/B3_D3.toml --duration 100
run B1_D1_grid --scenario assets/scenarios/matrix/B1_D1.toml --duration 100 --set neighbour_index=grid
run predators --scenario assets/scenarios/predators.toml --duration 60
run regime_A --scenario assets/scenarios/regimes/A_cohesive.toml --duration 40
run regime_D --scenario assets/scenarios/regimes/D_disorder.toml --duration 40
run hybrid --scenario assets/scenarios/hybrid.toml --duration 40
run adams --scenario assets/scenarios/adams.toml --duration 40
run population --scenario assets/scenarios/default.toml --duration 60 --set population.enabled=true
run brute --scenario assets/scenarios/default.toml --duration 30 --set neighbour_index=brute
run bounce_seek --scenario assets/scenarios/default.toml --duration 60 --set world.boundary=bounce --set doctors.behavior=seek_nearest
run crowd --scenario assets/scenarios/crowd.toml --duration 10
run respawn --scenario assets/scenarios/predators.toml --duration 60 --set predators.catch=respawn
run isolate --scenario assets/scenarios/interventions/test_and_isolate.toml --duration 60
run report --scenario assets/scenarios/regimes/report/C_lattice.toml --duration 20
# Every steering model on the grid's SIMD scan (each model sums only what it reads there).
run hybrid_grid --scenario assets/scenarios/hybrid.toml --duration 20 --set neighbour_index=grid
run adams_grid --scenario assets/scenarios/adams.toml --duration 20 --set neighbour_index=grid
run pygame_grid --scenario assets/scenarios/pygame.toml --duration 20 --set neighbour_index=grid
run report_grid --scenario assets/scenarios/regimes/report/C_lattice.toml --duration 20 --set neighbour_index=grid
echo "wrote $(find "$out" -type f | wc -l) files to $out"
