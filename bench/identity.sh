#!/usr/bin/env bash
#! Byte-identity of fixed-seed outputs between two builds: runs the same 16 scenarios with a
#! binary into a folder. Run it with the old binary and the new one, then `diff -r` the folders
#! (timing-free files only: metrics, transmissions, R_t, agents, interventions, summary, config).
#!
#!   bench/identity.sh BINARY OUT_DIR            # e.g. target/release/pandemic-boids /tmp/id-new
#!   PANDEMIC_BOIDS_SIMD=baseline bench/identity.sh BINARY OUT_DIR   # another vector path
#!   THREADS=1 bench/identity.sh BINARY OUT_DIR                        # another thread count
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: bench/identity.sh BINARY OUT_DIR" >&2
  exit 2
fi
bin=$1
out=$2
cd "$(dirname "$0")/.."
threads=()
if [ -n "${THREADS:-}" ]; then threads=(--threads "$THREADS"); fi
mkdir -p "$out"
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
echo "wrote $(find "$out" -type f | wc -l) files to $out"
