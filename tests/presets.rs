//! Every flocking preset shows the behaviour its name promises (docs/model.md §10), measured by the
//! structure measures of docs/model.md §8, and no preset that promises flocking piles boids up.
//!
//! Each preset runs 40 s for 3 seeds; a measure is the mean over seeds of its mean over the
//! samples from 25 s on (by then every signature has formed — the README's table uses
//! 60–100 s and 5 seeds). A run is deterministic, so these tests cannot flicker; the
//! thresholds are still set for changes that leave the model alone but move trajectories
//! (floating-point summation order, a faster neighbour search): each lies between the
//! preset's measured value and the nearest other regime's, at least three standard errors of
//! the 3-seed mean from the preset's value (measured values and standard errors are quoted
//! at each check, from the release build). A broken preset misses by far more: before
//! calibration A's polarisation was 0.38 with 99 % of boids piled up, B's milling 0.01, D's
//! polarisation 0.88, B3's 0.99.

mod common;

use common::scenarios;
use pandemic_boids::run::Simulation;
use pandemic_boids::sim::config::SimConfig;
use pandemic_boids::sim::metrics::{Sample, nearest_same_swarm};
use pandemic_boids::sim::neighbours::{Snapshot, world_index};
use pandemic_boids::sim::swarm::Swarm;

const SEEDS: [u64; 3] = [1, 2, 3];
const DURATION: f64 = 40.0;
const WINDOW_FROM: f64 = 25.0;
/// A boid this close to another of its swarm counts as piled up, px.
const PILED_PX: f32 = 1.0;
/// At most this share of boids may be piled up (measured ≤ 0.3 % in every flocking preset,
/// from random close passes; a pile-up puts over 90 % there).
const MAX_PILED: f64 = 0.02;

/// The Normal swarm's signature of one preset: seed means of window means.
#[derive(Debug, Default)]
struct Signature {
    polarisation: f64,
    /// Mean standard deviation over time of the polarisation within a run.
    polarisation_sd: f64,
    nearest_px: f64,
    nn_cv: f64,
    largest_flock: f64,
    milling: f64,
    elongation: f64,
    /// Share of boids within [`PILED_PX`] of another at the end, worst seed.
    piled: f64,
}

fn window(samples: &[Sample], f: impl Fn(&Sample) -> Option<f64>) -> (f64, f64) {
    let xs: Vec<f64> = samples
        .iter()
        .filter(|s| s.time_s >= WINDOW_FROM - 1e-9)
        .filter_map(f)
        .collect();
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    (mean, sd)
}

/// Share of the Normal boids whose nearest Normal neighbour is within [`PILED_PX`].
fn piled_share(sim: &Simulation) -> f64 {
    let snapshot = sim.world().resource::<Snapshot>();
    let index = world_index(sim.world());
    let normals: Vec<usize> = (0..snapshot.len())
        .filter(|&i| snapshot.swarm[i] == Swarm::Normal)
        .collect();
    let piled = normals
        .iter()
        .filter(|&&i| {
            nearest_same_swarm(&index, snapshot, i, PILED_PX).is_some_and(|d| d < PILED_PX)
        })
        .count();
    piled as f64 / normals.len().max(1) as f64
}

fn signature(file: &str) -> Signature {
    let sig = measure(file);
    assert!(
        sig.piled <= MAX_PILED,
        "{file}: {:.1} % of boids piled up",
        100.0 * sig.piled
    );
    sig
}

/// The signature of a preset, without judging it.
fn measure(file: &str) -> Signature {
    let base =
        SimConfig::load(Some(&scenarios().join(file)), &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut sig = Signature::default();
    let k = SEEDS.len() as f64;
    for seed in SEEDS {
        let mut c = base.clone();
        c.seed = seed;
        let mut sim = Simulation::new(c, None);
        sim.run_until(DURATION);
        sim.observe();
        let s = sim.samples();
        let n = |f: fn(&Sample) -> Option<f64>| window(s, f).0 / k;
        sig.polarisation += n(|x| x.swarms[0].polarisation);
        sig.polarisation_sd += window(s, |x| x.swarms[0].polarisation).1 / k;
        sig.nearest_px += n(|x| x.swarms[0].nearest_neighbour_px);
        sig.nn_cv += n(|x| x.swarms[0].nn_cv);
        sig.largest_flock += n(|x| x.swarms[0].largest_flock_frac);
        sig.milling += n(|x| x.swarms[0].milling);
        sig.elongation += n(|x| x.swarms[0].elongation);
        sig.piled = sig.piled.max(piled_share(&sim));
    }
    println!("{file}: {sig:?}");
    sig
}

#[test]
fn a_cohesive_is_one_travelling_flock() {
    let a = signature("regimes/A_cohesive.toml");
    // Measured 0.999 ± 0.001 and 1.000 ± 0.000; B (vortex) has polarisation 0.14, D 0.06.
    assert!(a.polarisation >= 0.9, "polarisation {}", a.polarisation);
    assert!(a.largest_flock >= 0.85, "largest flock {}", a.largest_flock);
}

#[test]
fn b_transient_mills_like_a_vortex() {
    let b = signature("regimes/B_transient.toml");
    // Measured milling 0.87 ± 0.11 (every other preset ≤ 0.17), polarisation 0.14 ± 0.08.
    assert!(b.milling >= 0.5, "milling {}", b.milling);
    assert!(b.polarisation <= 0.4, "polarisation {}", b.polarisation);
}

#[test]
fn c_lattice_is_evenly_spaced_at_the_separation_radius() {
    let c = signature("regimes/C_lattice.toml");
    // Measured nn_cv 0.043 ± 0.002 (random points: 0.52; the next lowest preset 0.21) and
    // spacing 24.4 ± 0.1 px for r_sep = 25 px.
    assert!(c.nn_cv <= 0.12, "nn_cv {}", c.nn_cv);
    assert!(
        (c.nearest_px - 25.0).abs() <= 3.0,
        "spacing {} px",
        c.nearest_px
    );
}

#[test]
fn d_disorder_has_no_order_and_no_dominant_flock() {
    let d = signature("regimes/D_disorder.toml");
    // Measured 0.060 ± 0.003 and 0.32 ± 0.03 (every ordered preset ≥ 0.5 and ≥ 0.7).
    assert!(d.polarisation <= 0.25, "polarisation {}", d.polarisation);
    assert!(d.largest_flock <= 0.6, "largest flock {}", d.largest_flock);
    // Spacing as random as scattered points (Poisson: 0.52).
    assert!((d.nn_cv - 0.52).abs() <= 0.1, "nn_cv {}", d.nn_cv);
}

#[test]
fn e_tight_is_the_most_compact_regime_without_piling_up() {
    let e = signature("regimes/E_tight.toml");
    // Measured spacing 8.9 ± 0.2 px; the next tightest regime, B, 10.4 ± 0.2 px (A 11.1, D
    // 23.4, C 24.4): the threshold sits between them. No pile-up is checked for every preset.
    assert!(e.nearest_px <= 9.8, "spacing {} px", e.nearest_px);
}

#[test]
fn matrix_b1_is_a_line_b2_an_oval_b3_chaotic() {
    let b1 = signature("matrix/B1_D1.toml");
    let b2 = signature("matrix/B2_D1.toml");
    let b3 = signature("matrix/B3_D1.toml");
    // Measured elongation 0.988 ± 0.003 (B1) against 0.27 ± 0.12 (B2).
    assert!(b1.elongation >= 0.8, "B1 elongation {}", b1.elongation);
    assert!(b2.elongation <= 0.6, "B2 elongation {}", b2.elongation);
    assert!(
        b2.polarisation >= 0.95,
        "B2 polarisation {}",
        b2.polarisation
    );
    // B3 = B2 + noise: polarisation 0.505 ± 0.006 against 0.992, and fluctuating over time
    // (standard deviation 0.048 against B2's 0.005).
    assert!(
        b3.polarisation <= 0.75,
        "B3 polarisation {}",
        b3.polarisation
    );
    assert!(
        b3.polarisation_sd >= 0.02 && b3.polarisation_sd > 4.0 * b2.polarisation_sd,
        "B3 fluctuation {} against B2 {}",
        b3.polarisation_sd,
        b2.polarisation_sd
    );
}

#[test]
fn other_flocking_presets_do_not_pile_up() {
    // The checks inside `signature` are the test here (measured: nobody within 1 px).
    for file in ["default.toml", "sir.toml", "predators.toml", "pygame.toml"] {
        signature(file);
    }
}

#[test]
fn the_reports_own_model_with_its_published_weights_does_what_the_readme_says() {
    // `regimes/report/*`: the flocking report's model and weights as published, not
    // calibrated. What they do is a finding, measured (README, "Calibrated presets"; 3 seeds,
    // 25–40 s, release build): A, B and E collapse onto points — nearest neighbour 0.030,
    // 0.011, 0.025 px, every one of hundreds of boids within 1 px of another — C spaces its
    // boids exactly one perception radius apart (nearest 49.9 ± 0.2 px, nn_cv 0.010 ± 0.005: a
    // lattice in which no boid sees another) and D orders instead of staying disordered
    // (polarisation 0.92 ± 0.04). A change to the model that changes these fails here.
    for file in ["A_cohesive", "B_transient", "E_tight"] {
        let s = measure(&format!("regimes/report/{file}.toml"));
        assert!(
            s.nearest_px <= 1.0,
            "{file}: nearest neighbour {} px",
            s.nearest_px
        );
        assert!(s.piled >= 0.5, "{file}: {:.0} % piled", 100.0 * s.piled);
    }
    let c = measure("regimes/report/C_lattice.toml");
    assert!(c.nn_cv <= 0.05, "C nn_cv {}", c.nn_cv);
    assert!(
        (c.nearest_px - 50.0).abs() <= 1.5,
        "C spacing {} px",
        c.nearest_px
    );
    let d = measure("regimes/report/D_disorder.toml");
    assert!(d.polarisation >= 0.8, "D polarisation {}", d.polarisation);
}

#[test]
fn the_default_scenario_shows_every_mechanism_within_a_minute_on_most_seeds() {
    use pandemic_boids::sim::epidemic::EpidemicStats;
    use pandemic_boids::sim::neighbours::Snapshot;
    use pandemic_boids::sim::steering::Steering;
    use pandemic_boids::sim::transmission::TransmissionLog;
    let base = SimConfig::load(Some(&scenarios().join("default.toml")), &[]).unwrap();
    let mut told = 0;
    let mut missing = Vec::new();
    for seed in 1..=10 {
        let mut c = base.clone();
        c.seed = seed;
        let mut sim = Simulation::new(c, None);
        sim.world_mut().insert_resource(Steering::keeping_parts());
        // Antivax boids flee doctors: some step has an Antivax boid with a repulsion force.
        let mut fled = false;
        while !sim.reached(60.0) {
            sim.step();
            if !fled && sim.clock().step.is_multiple_of(10) {
                let world = sim.world();
                let (boids, steering) =
                    (world.resource::<Snapshot>(), world.resource::<Steering>());
                fled = (0..steering.len()).any(|i| {
                    boids.swarm[i] == Swarm::Antivax
                        && steering.parts(i).unwrap().repulsion != Default::default()
                });
            }
        }
        sim.observe();
        let stats = sim.world().resource::<EpidemicStats>();
        let log = sim.world().resource::<TransmissionLog>();
        let antivax_caught = log
            .records
            .iter()
            .any(|t| t.swarm == Swarm::Antivax && t.infector.is_some());
        let antivax_passed = log
            .records
            .iter()
            .any(|t| t.infector.is_some_and(|f| f.swarm == Swarm::Antivax));
        let seen = [
            ("contact infection", stats.contact_infections > 0),
            ("Antivax flee doctors", fled),
            ("Antivax catch it", antivax_caught),
            ("Antivax pass it on", antivax_passed),
            ("cures", stats.cures > 0),
            ("recoveries", stats.recoveries > 0),
            ("deaths", stats.deaths > 0),
        ];
        if seen.iter().all(|(_, s)| *s) {
            told += 1;
        } else {
            missing.push((
                seed,
                seen.iter()
                    .filter(|s| !s.1)
                    .map(|s| s.0)
                    .collect::<Vec<_>>(),
            ));
        }
    }
    assert!(
        told >= 8,
        "every mechanism on only {told} of 10 seeds: {missing:?}"
    );
}
