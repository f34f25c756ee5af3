//! Determinism (docs/model.md §9): the same config and seed give byte-identical output files,
//! whatever the number of threads; a different seed gives different output.
#![allow(clippy::field_reassign_with_default)] // configs are built by changing a few defaults

mod common;

use std::fs;
use std::process::Command;

use common::{bin, flocking_only};
use pandemic_boids::run::headless::{RunOptions, run};
use pandemic_boids::sim::config::{IndexKind, SimConfig};

fn run_to(dir: &std::path::Path, config: SimConfig) -> (Vec<u8>, Vec<u8>) {
    run(RunOptions::new(config, dir.to_path_buf())).unwrap();
    (
        fs::read(dir.join("metrics.csv")).unwrap(),
        fs::read(dir.join("summary.json")).unwrap(),
    )
}

/// Every kind of intervention, so determinism covers them too.
const INTERVENTIONS: &str = r#"
[[interventions]]
name = "lockdown"
when = "infected_frac > 0.08"
duration = 3.0
set = { "swarms.normal.max_speed" = 90.0, "swarms.normal.separation_radius" = 40.0 }

[[interventions]]
name = "campaign"
at = 1.0
vaccinate = { rate_per_s = 0.05, efficacy = 0.8 }

[[interventions]]
name = "tti"
at = 0.5
isolate = { detect_per_s = 0.3, delay = 0.5 }

[[interventions]]
name = "import"
at = 2.0
import = { count = 4 }
"#;

fn pandemic(seed: u64) -> SimConfig {
    let mut c = SimConfig::from_toml_str(INTERVENTIONS, "interventions", &[]).unwrap();
    c.seed = seed;
    c.duration = 20.0;
    c.epidemic.p_spontaneous_infect = 0.01;
    c.swarms.normal.noise = 40.0;
    c.doctors.behavior = pandemic_boids::sim::config::DoctorBehavior::SeekNearest;
    c
}

#[test]
fn same_seed_gives_identical_files_and_another_seed_differs() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run_to(&tmp.path().join("a"), pandemic(5));
    let b = run_to(&tmp.path().join("b"), pandemic(5));
    assert_eq!(a.0, b.0, "metrics.csv differs between identical runs");
    assert_eq!(a.1, b.1, "summary.json differs between identical runs");
    let c = run_to(&tmp.path().join("c"), pandemic(6));
    assert_ne!(a.0, c.0, "a different seed gave the same metrics");
    // The written config reproduces the run exactly.
    let config = SimConfig::load(Some(&tmp.path().join("a").join("config.toml")), &[]).unwrap();
    let d = run_to(&tmp.path().join("d"), config);
    assert_eq!(a.0, d.0, "config.toml did not reproduce the run");
}

#[test]
fn thread_count_does_not_change_the_output() {
    // Enough boids that every parallel loop really splits its work.
    let tmp = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    let scenario = tmp.path().join("interventions.toml");
    fs::write(&scenario, INTERVENTIONS).unwrap();
    for threads in ["1", "2", "3"] {
        let out = tmp.path().join(format!("t{threads}"));
        let status = Command::new(bin())
            .arg("run")
            .arg("--scenario")
            .arg(&scenario)
            .args([
                "--duration",
                "5",
                "--seed",
                "9",
                "--quiet",
                "--threads",
                threads,
            ])
            .args([
                "--set",
                "swarms.normal.count=1500",
                "--set",
                "world.width=2400",
                "--set",
                "swarms.normal.noise=30",
            ])
            .arg("--out")
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        outputs.push(fs::read(out.join("metrics.csv")).unwrap());
        outputs.push(fs::read(out.join("interventions.csv")).unwrap());
    }
    assert_eq!(outputs[0], outputs[2], "1 vs 2 threads");
    assert_eq!(outputs[0], outputs[4], "1 vs 3 threads");
    assert_eq!(outputs[1], outputs[3], "interventions.csv, 1 vs 2 threads");
    assert_eq!(outputs[1], outputs[5], "interventions.csv, 1 vs 3 threads");
    assert!(outputs[1].len() > 100, "the interventions did not act");
}

#[test]
fn backends_give_the_same_flock_on_a_short_run() {
    // Neighbour sets are identical across backends; only the order of float sums differs, so
    // trajectories agree closely over a short horizon before chaos amplifies rounding.
    let mut finals = Vec::new();
    for index in [IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute] {
        let mut c = flocking_only(3);
        c.neighbour_index = index;
        let sim = common::run_for(c, 1.0);
        finals.push(sim.samples().last().unwrap().swarms[0].clone());
    }
    for f in &finals[1..] {
        assert!((f.mean_speed_px_s.unwrap() - finals[0].mean_speed_px_s.unwrap()).abs() < 0.05);
        assert!((f.polarisation.unwrap() - finals[0].polarisation.unwrap()).abs() < 1e-3);
    }
}
