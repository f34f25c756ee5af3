//! Frame-rate independence of flocking (docs/model.md §4): the same scenario stepped at dt = 1/30,
//! 1/60 and 1/120 s gives statistically indistinguishable flocking.
//!
//! The statistic has to resolve a polarisation difference of 0.1. Global polarisation over
//! several independent flocks swings with how those flocks happen to head (its 8-seed
//! standard error was 0.03–0.08 in a default-sized world), so the swarm here lives on a small
//! torus where it is one flock, with enough noise that its order is a balance of noise
//! against alignment (polarisation ≈ 0.86): a rate converted wrongly for the step moves that
//! balance. Measured (release, 8 seeds): 0.859 ± 0.002 / 0.862 ± 0.002 / 0.869 ± 0.004 at
//! 1/30, 1/60, 1/120 s. A noise kick calibrated at 60 frames/s instead of scaling as √dt
//! (√2 too strong at 1/30 s) gives about 0.72 at 1/30 s.
#![allow(clippy::field_reassign_with_default)] // configs are built by changing a few defaults

mod common;

use common::{flocking_only, mean_se, run_for};
use pandemic_boids::sim::metrics::Sample;

/// Seeds per dt. Flocking is chaotic, so a single trajectory cannot be compared across dt;
/// the ensemble mean over seeds can.
const SEEDS: u64 = 8;
/// Simulated seconds per run, and the start of the averaging window.
const SECONDS: f64 = 30.0;
const WINDOW_FROM: f64 = 10.0;
/// The test must be able to see a polarisation difference this large: its tolerance (four
/// standard errors of the difference) has to stay at half of it or below.
const DETECTABLE: f64 = 0.1;

/// Mean over the samples in the window of one measure of the Normal swarm.
fn late_mean(samples: &[Sample], f: impl Fn(&Sample) -> f64) -> f64 {
    let late: Vec<f64> = samples
        .iter()
        .filter(|s| s.time_s >= WINDOW_FROM - 1e-6)
        .map(f)
        .collect();
    late.iter().sum::<f64>() / late.len() as f64
}

#[test]
fn flocking_statistics_do_not_depend_on_dt() {
    let mut results = Vec::new();
    for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
        let (mut speed, mut polar) = (Vec::new(), Vec::new());
        for seed in 1..=SEEDS {
            let mut c = flocking_only(seed);
            c.dt = dt;
            c.world.width = 400.0;
            c.world.height = 400.0;
            c.swarms.normal.count = 150;
            c.swarms.normal.noise = 100.0;
            c.swarms.doctor.count = 0;
            c.antivax.p_antivax = 0.0;
            let sim = run_for(c, SECONDS);
            let s = sim.samples();
            speed.push(late_mean(s, |x| x.swarms[0].mean_speed_px_s.unwrap()));
            polar.push(late_mean(s, |x| x.swarms[0].polarisation.unwrap()));
        }
        results.push((dt, mean_se(&speed), mean_se(&polar)));
    }
    for r in &results {
        println!(
            "dt = {:.4}: speed {:.2} ± {:.2} px/s, polarisation {:.4} ± {:.4}",
            r.0, r.1.0, r.1.1, r.2.0, r.2.1
        );
    }
    let (_, speed60, polar60) = results[1];
    for &(dt, speed, polar) in &results {
        // Tolerance: four standard errors of the difference of two ensemble means (seed-to-seed
        // spread measured here), so a real dependence on dt of that size fails the test. A
        // frame-locked integrator (no ·dt) would halve or double the speeds.
        let tol_speed = 4.0 * (speed.1.powi(2) + speed60.1.powi(2)).sqrt();
        let tol_polar = 4.0 * (polar.1.powi(2) + polar60.1.powi(2)).sqrt();
        assert!(
            tol_polar <= 0.5 * DETECTABLE,
            "dt = {dt}: polarisation tolerance {tol_polar} could not see a {DETECTABLE} difference"
        );
        assert!(
            (speed.0 - speed60.0).abs() <= tol_speed,
            "dt = {dt}: mean speed {} vs {} (tolerance {tol_speed})",
            speed.0,
            speed60.0
        );
        assert!(
            (polar.0 - polar60.0).abs() <= tol_polar,
            "dt = {dt}: polarisation {} vs {} (tolerance {tol_polar})",
            polar.0,
            polar60.0
        );
    }
}
