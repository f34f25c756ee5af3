//! The `bench` command: times whole simulation steps and each phase for several population
//! sizes and neighbour-index backends, all in one process on the same initial state, and prints
//! ns per boid-step, steps/s, boid-steps/s, neighbours and candidates per boid, peak memory, and
//! the speed ratios between backends (against brute force where it was run). Timings are read
//! here only; no test asserts on them.

use std::f32::consts::PI;
use std::path::PathBuf;
use std::time::Instant;

use bevy::prelude::*;
use serde::Serialize;

use super::Simulation;
use super::machine::Machine;

/// Prints a line of the report. A closed standard output (`bench … | head`) is not an error:
/// the benchmark goes on, so `--json` is still written.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
use crate::sim::config::{DoctorBehavior, IndexKind, SimConfig};
use crate::sim::neighbours::{NeighbourIndex, Snapshot, world_index};
use crate::sim::parallel::cores;
use crate::sim::schedule::SimSystems;

/// Neighbours per boid the pandemic workload's density aims for within the alignment radius
/// (boids scattered at random; flocking gathers them to about 25).
pub const TARGET_NEIGHBOURS: f32 = 20.0;
/// The same for the flocking workload: chosen so that about 31 neighbours are measured within
/// the flocking radius once the boids flock, the count of the peer comparison in BENCHMARKS.md.
pub const FLOCKING_NEIGHBOURS: f32 = 20.0;

/// What the benchmark simulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, bevy::reflect::Reflect)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// Three swarms, predators, the epidemic with cures and seeking doctors: every module.
    Pandemic,
    /// One swarm flocking, nothing else (no epidemic, no doctors, no predators, no metrics
    /// after the first sample): the workload of general boids benchmarks.
    Flocking,
}
/// Boids per predator in the workload.
pub const BOIDS_PER_PREDATOR: usize = 5000;

/// Options of a benchmark session.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Population sizes.
    pub sizes: Vec<usize>,
    /// Backends to compare.
    pub backends: Vec<IndexKind>,
    /// Timed steps per (size, backend).
    pub steps: usize,
    /// Untimed steps first.
    pub warmup: usize,
    /// Threads in all, the main one included (default: every core).
    pub threads: Option<usize>,
    /// Brute force only up to this many boids (it is O(n²)).
    pub brute_max: usize,
    /// What to simulate.
    pub workload: Workload,
}

/// The configuration of `workload` with `n` boids.
pub fn workload(kind: Workload, n: usize) -> SimConfig {
    match kind {
        Workload::Pandemic => pandemic(n),
        Workload::Flocking => flocking(n),
    }
}

/// The side of a square world where `n` boids at uniform density have `neighbours` others
/// within 50 px.
fn side_for(n: usize, neighbours: f32) -> f32 {
    (n as f32 * PI * 50.0 * 50.0 / neighbours).sqrt()
}

/// The pandemic workload: three swarms (80 % Normal, 10 % Doctor, 10 % Antivax) plus one
/// predator per 5 000 boids, the epidemic on (SIRS with cures, so it keeps going), doctors
/// seeking, on a wrapped square world sized for about 20 neighbours within the 50 px alignment
/// radius.
pub fn pandemic(n: usize) -> SimConfig {
    let mut c = SimConfig {
        seed: 1,
        ..SimConfig::default()
    };
    let side = side_for(n, TARGET_NEIGHBOURS);
    c.world.width = side;
    c.world.height = side;
    // Long-range queries must stay below half the world (small sizes only).
    let reach = (0.45 * side).min(300.0);
    c.doctors.seek_radius = reach;
    c.predators.detection_range = reach;
    c.predators.fear_radius = c.predators.fear_radius.min(reach);
    c.antivax.repulsion_radius = c.antivax.repulsion_radius.min(reach);
    c.swarms.normal.count = (n * 8 / 10) as u32;
    c.swarms.doctor.count = (n / 10) as u32;
    c.swarms.antivax.count = (n - n * 8 / 10 - n / 10) as u32;
    c.antivax.p_antivax = 0.0;
    c.predators.count = (n / BOIDS_PER_PREDATOR).max(1) as u32;
    c.epidemic.p_initial_infect_normal = 0.05;
    c.epidemic.p_death = 0.0;
    c.epidemic.t_immunity = 20.0;
    c.epidemic.p_spontaneous_infect = 0.002;
    c.doctors.behavior = DoctorBehavior::SeekNearest;
    c
}

/// The flocking workload: `n` Normal boids with the default flocking rules on a wrapped square
/// world sized for [`FLOCKING_NEIGHBOURS`], and nothing else.
pub fn flocking(n: usize) -> SimConfig {
    let mut c = SimConfig {
        seed: 1,
        ..SimConfig::default()
    };
    let side = side_for(n, FLOCKING_NEIGHBOURS);
    c.world.width = side;
    c.world.height = side;
    c.swarms.normal.count = n as u32;
    c.swarms.doctor.count = 0;
    c.antivax.p_antivax = 0.0;
    c.epidemic.p_initial_infect_normal = 0.0;
    c.epidemic.p_initial_infect_doctor = 0.0;
    // One sample at the start, none while timing.
    c.sample_every = 1e9;
    c
}

/// Instants between the phases of the last step.
#[derive(Resource, Default)]
struct PhaseClock([Option<Instant>; 11]);

fn mark<const K: usize>(mut clock: ResMut<PhaseClock>) {
    clock.0[K] = Some(Instant::now());
}

/// Adds phase-boundary timestamps to a simulation (instrumentation only).
fn instrument(sim: &mut Simulation) {
    use SimSystems::*;
    sim.app_mut().init_resource::<PhaseClock>().add_systems(
        FixedUpdate,
        (
            mark::<0>.before(Spawn),
            mark::<1>.after(Spawn).before(Index),
            mark::<2>.after(Index).before(Sample),
            mark::<3>.after(Sample).before(Sense),
            mark::<4>.after(Sense).before(Steer),
            mark::<5>.after(Steer).before(Integrate),
            mark::<6>.after(Integrate).before(Epidemic),
            mark::<7>.after(Epidemic).before(Population),
            mark::<8>.after(Population).before(Log),
            mark::<9>.after(Log).before(Advance),
            mark::<10>.after(Advance),
        ),
    );
}

/// Phases reported, as (name, first mark, last mark).
const PHASES: [(&str, usize, usize); 6] = [
    ("index", 1, 2),
    ("steer", 3, 5),
    ("integrate", 5, 6),
    ("epidemic", 6, 7),
    ("metrics", 2, 3),
    ("other", 7, 10),
];

/// One (size, backend) measurement.
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// Boids.
    pub boids: usize,
    /// Predators.
    pub predators: u32,
    /// Backend.
    pub backend: IndexKind,
    /// World side, px.
    pub world_px: f32,
    /// Median whole step, ms.
    pub step_ms_median: f64,
    /// 10th percentile of the whole step, ms.
    pub step_ms_p10: f64,
    /// 90th percentile of the whole step, ms.
    pub step_ms_p90: f64,
    /// Steps per second at the median.
    pub steps_per_s: f64,
    /// Boid-steps per second at the median.
    pub boid_steps_per_s: f64,
    /// Mean ns per boid-step of each phase (index, steer, integrate, epidemic, metrics, other).
    pub phase_ns_per_boid: Vec<(String, f64)>,
    /// Mean neighbours within the flocking query radius, per boid.
    pub neighbours_per_boid: f64,
    /// Mean boids a query examines, per boid.
    pub candidates_per_boid: f64,
    /// Peak resident memory of the process so far, MiB.
    pub peak_rss_mib: f64,
}

/// Peak resident set size of this process, MiB (Linux; 0 elsewhere).
pub fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

/// Measures one size with one backend.
pub fn measure(n: usize, backend: IndexKind, opts: &BenchOptions) -> BenchResult {
    let mut config = workload(opts.workload, n);
    config.neighbour_index = backend;
    let mut sim = Simulation::new(config.clone(), opts.threads);
    instrument(&mut sim);
    for _ in 0..opts.warmup {
        sim.step();
    }
    let mut steps = Vec::with_capacity(opts.steps);
    let mut phase_sums = [0.0f64; PHASES.len()];
    for _ in 0..opts.steps {
        let t0 = Instant::now();
        sim.step();
        steps.push(t0.elapsed().as_secs_f64() * 1e3);
        let marks = sim.world().resource::<PhaseClock>().0;
        for (k, (_, a, b)) in PHASES.iter().enumerate() {
            if let (Some(a), Some(b)) = (marks[*a], marks[*b]) {
                phase_sums[k] += b.saturating_duration_since(a).as_secs_f64();
            }
        }
    }
    let boids = sim.world().resource::<Snapshot>().len().max(1);
    let denom = (opts.steps.max(1) * boids) as f64;
    let (neighbours, candidates) = density(&sim, &config);
    steps.sort_by(f64::total_cmp);
    let median = percentile(&steps, 0.5);
    BenchResult {
        boids: n,
        predators: config.predators.count,
        backend,
        world_px: config.world.width,
        step_ms_median: median,
        step_ms_p10: percentile(&steps, 0.1),
        step_ms_p90: percentile(&steps, 0.9),
        steps_per_s: 1e3 / median,
        boid_steps_per_s: n as f64 * 1e3 / median,
        phase_ns_per_boid: PHASES
            .iter()
            .zip(phase_sums)
            .map(|((name, _, _), s)| (name.to_string(), s * 1e9 / denom))
            .collect(),
        neighbours_per_boid: neighbours,
        candidates_per_boid: candidates,
        peak_rss_mib: peak_rss_mib(),
    }
}

/// Mean neighbours and candidates per boid for the Normal flocking query, over up to 5 000 boids.
fn density(sim: &Simulation, config: &SimConfig) -> (f64, f64) {
    let world = sim.world();
    let snapshot = world.resource::<Snapshot>();
    let index = world_index(world);
    let r = config.swarms.normal.query_radius();
    let stride = (snapshot.len() / 5000).max(1);
    let (mut nb, mut cand, mut k) = (0usize, 0usize, 0usize);
    for i in (0..snapshot.len()).step_by(stride) {
        index.for_each_within(snapshot.pos[i], r, |j, _| nb += (j != i) as usize);
        cand += index.candidates(snapshot.pos[i], r);
        k += 1;
    }
    (nb as f64 / k.max(1) as f64, cand as f64 / k.max(1) as f64)
}

/// `n` and the noun, plural unless `n` is 1.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `x` with three significant figures (at least; no exponent): 0.261, 3.02, 53.0, 1250.
fn three_figures(x: f64) -> String {
    let decimals = if x > 0.0 && x.is_finite() {
        (2 - x.log10().floor() as i32).max(0) as usize
    } else {
        1
    };
    format!("{x:.decimals$}")
}

/// Runs every size × backend and prints the table (and ratios) as it goes.
pub fn run(opts: &BenchOptions) -> Vec<BenchResult> {
    let cores = cores();
    say!("machine: {}", Machine::this().line());
    say!(
        "pandemic-boids bench: {:?} workload, {} steps after {} warm-up, {} ({} cores)",
        opts.workload,
        opts.steps,
        opts.warmup,
        count(opts.threads.unwrap_or(cores), "thread"),
        cores,
    );
    say!(
        "{:>8} {:>7} {:>9} {:>11} {:>8} {:>9} | ns per boid-step: {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} | {:>6} {:>6} {:>7}",
        "boids",
        "backend",
        "step ms",
        "p10-p90",
        "steps/s",
        "Mboid/s",
        "index",
        "steer",
        "integr",
        "epidem",
        "metric",
        "other",
        "nbrs",
        "cands",
        "peakMiB"
    );
    let mut all = Vec::new();
    for &n in &opts.sizes {
        let mut here: Vec<BenchResult> = Vec::new();
        for &backend in &opts.backends {
            if backend == IndexKind::Brute && n > opts.brute_max {
                say!(
                    "{n:>8} {:>7} skipped (n > --brute-max {})",
                    "brute",
                    opts.brute_max
                );
                continue;
            }
            let r = measure(n, backend, opts);
            let ph: Vec<f64> = r.phase_ns_per_boid.iter().map(|(_, v)| *v).collect();
            say!(
                "{:>8} {:>7} {:>9.3} {:>11} {:>8.1} {:>9.2} | {:>24.0} {:>6.0} {:>6.0} {:>6.0} {:>6.0} {:>6.0} | {:>6.1} {:>6.1} {:>7.0}",
                r.boids,
                format!("{:?}", r.backend).to_lowercase(),
                r.step_ms_median,
                format!(
                    "{}-{}",
                    three_figures(r.step_ms_p10),
                    three_figures(r.step_ms_p90)
                ),
                r.steps_per_s,
                r.boid_steps_per_s / 1e6,
                ph[0],
                ph[1],
                ph[2],
                ph[3],
                ph[4],
                ph[5],
                r.neighbours_per_boid,
                r.candidates_per_boid,
                r.peak_rss_mib
            );
            here.push(r);
        }
        // Ratios within this size: each backend against brute force (if run) and the KD-tree.
        for base in [IndexKind::Brute, IndexKind::Kdtree] {
            let Some(b) = here.iter().find(|r| r.backend == base) else {
                continue;
            };
            let ratios: Vec<String> = here
                .iter()
                .filter(|r| r.backend != base)
                .map(|r| {
                    format!(
                        "{:?} ×{:.2}",
                        r.backend,
                        b.step_ms_median / r.step_ms_median
                    )
                    .to_lowercase()
                })
                .collect();
            if !ratios.is_empty() {
                say!(
                    "{n:>8} speed-up vs {}: {}",
                    format!("{base:?}").to_lowercase(),
                    ratios.join(", ")
                );
            }
        }
        all.extend(here);
    }
    all
}

/// Writes the machine, the settings and the results as JSON:
/// `{"machine": {…}, "settings": {…}, "results": [{…}, …]}`.
pub fn write_json(
    path: &PathBuf,
    opts: &BenchOptions,
    results: &[BenchResult],
) -> std::io::Result<()> {
    let settings = serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "workload": format!("{:?}", opts.workload).to_lowercase(),
        "threads": opts
            .threads
            .unwrap_or_else(cores),
        "steps": opts.steps,
        "warmup": opts.warmup,
    });
    let doc = serde_json::json!({
        "machine": Machine::this(),
        "settings": settings,
        "results": results,
    });
    let text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
    std::fs::write(path, text + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_prints_three_figures_and_counts_in_words() {
        assert_eq!(three_figures(0.261), "0.261");
        assert_eq!(three_figures(0.349), "0.349");
        assert_eq!(three_figures(3.0249), "3.02");
        assert_eq!(three_figures(52.99), "53.0");
        assert_eq!(three_figures(1250.4), "1250");
        assert_eq!(three_figures(0.0), "0.0");
        assert_eq!(count(1, "thread"), "1 thread");
        assert_eq!(count(2, "thread"), "2 threads");
    }

    #[test]
    fn workload_has_the_target_density_and_valid_config() {
        for n in [1000, 10_000, 100_000] {
            let c = pandemic(n);
            c.validate("bench").unwrap();
            let area_per_boid = c.world.width * c.world.height / n as f32;
            let expected = PI * 50.0 * 50.0 / area_per_boid;
            assert!((expected - TARGET_NEIGHBOURS).abs() < 0.5, "{expected}");
            let total = c.swarms.normal.count + c.swarms.doctor.count + c.swarms.antivax.count;
            assert_eq!(total as usize, n);
        }
    }

    #[test]
    fn the_flocking_workload_is_one_swarm_and_nothing_else() {
        let c = flocking(10_000);
        c.validate("bench").unwrap();
        assert_eq!(c.swarms.normal.count, 10_000);
        assert_eq!(c.swarms.doctor.count + c.swarms.antivax.count, 0);
        assert_eq!(c.predators.count, 0);
        assert_eq!(c.antivax.p_antivax, 0.0);
        assert_eq!(c.epidemic.p_initial_infect_normal, 0.0);
        assert_eq!(c.epidemic.p_spontaneous_infect, 0.0);
        let expected = PI * 50.0 * 50.0 * 10_000.0 / (c.world.width * c.world.height);
        assert!((expected - FLOCKING_NEIGHBOURS).abs() < 0.5, "{expected}");
    }

    #[test]
    fn a_tiny_bench_measures_every_phase() {
        let opts = BenchOptions {
            sizes: vec![1000],
            backends: vec![IndexKind::Grid],
            steps: 3,
            warmup: 1,
            threads: None,
            brute_max: 1000,
            workload: Workload::Pandemic,
        };
        let r = measure(1000, IndexKind::Grid, &opts);
        assert_eq!(r.boids, 1000);
        assert!(r.step_ms_median > 0.0);
        assert!(
            r.phase_ns_per_boid
                .iter()
                .find(|(n, _)| n == "steer")
                .unwrap()
                .1
                > 0.0
        );
        // About 20 neighbours per boid (the initial layout is uniform; flocking clumps a bit).
        assert!(
            r.neighbours_per_boid > 10.0 && r.neighbours_per_boid < 40.0,
            "{}",
            r.neighbours_per_boid
        );
        assert!(r.candidates_per_boid >= r.neighbours_per_boid);
    }
}
