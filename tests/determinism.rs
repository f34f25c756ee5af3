//! Determinism (docs/model.md §9): the same config and seed give byte-identical output files,
//! whatever the number of threads; a different seed gives different output; a headless step run
//! directly (without Bevy's whole `App::update`) is the same step.
#![allow(clippy::field_reassign_with_default)] // configs are built by changing a few defaults

mod common;

use std::fs;
use std::process::Command;

use bevy::diagnostic::FrameCount;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;
use common::{bin, flocking_only};
use pandemic_boids::run::Simulation;
use pandemic_boids::run::headless::{RunOptions, run};
use pandemic_boids::sim::agent::{AgentId, Position, Velocity};
use pandemic_boids::sim::clock::SimClock;
use pandemic_boids::sim::config::{IndexKind, SimConfig};
use pandemic_boids::sim::epidemic::{Cured, Infected};
use pandemic_boids::sim::metrics::MetricsLog;

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
    // Enough boids (over 2 048) that every parallel loop really splits its work, the
    // snapshot's and the grid's build included.
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
                "swarms.normal.count=2100",
                "--set",
                "world.width=3360",
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

/// Counts the steps a system added by a test ran in.
#[derive(Resource, Default)]
struct Ran(u32);

fn count_run(mut ran: ResMut<Ran>) {
    ran.0 += 1;
}

/// Every boid's position and velocity bits, the clocks, the samples (as text: a measure may be
/// NaN) and the event buffers' lengths of a simulation.
fn state(sim: &mut Simulation) -> (Vec<[u32; 4]>, String, String, [usize; 2]) {
    let world = sim.world_mut();
    let mut boids = world.query::<(&AgentId, &Position, &Velocity)>();
    let mut rows: Vec<_> = boids
        .iter(world)
        .map(|(id, p, v)| (id.0, [p.0.x, p.0.y, v.0.x, v.0.y].map(f32::to_bits)))
        .collect();
    rows.sort_by_key(|r| r.0);
    let clocks = format!(
        "{:?} {:?}",
        world.resource::<SimClock>(),
        world.resource::<Time<Fixed>>().elapsed()
    );
    let events = [
        world.resource::<Events<Infected>>().len(),
        world.resource::<Events<Cured>>().len(),
    ];
    let samples = format!("{:?}", world.resource::<MetricsLog>().samples);
    (
        rows.into_iter().map(|r| r.1).collect(),
        clocks,
        samples,
        events,
    )
}

#[test]
fn a_step_run_directly_is_the_step_app_update_runs() {
    let mut config = pandemic(4);
    config.swarms.normal.count = 60;
    config.swarms.doctor.count = 6;
    let steps = 300;
    // Plain: after the first step, each runs `First` and the fixed step's schedules only.
    let mut direct = Simulation::new(config.clone(), Some(1));
    for _ in 0..steps {
        direct.step();
    }
    assert!(direct.steps_directly(), "a plain simulation steps directly");
    // A system in `Update` puts every step through Bevy's whole `App::update`, and runs in each.
    let mut updated = Simulation::with(config, Some(1), |app| {
        app.init_resource::<Ran>().add_systems(Update, count_run);
    });
    for _ in 0..steps {
        updated.step();
    }
    assert!(!updated.steps_directly());
    // The first step takes two updates (the clocks' first tick has no time).
    let ran = updated.world().resource::<Ran>().0;
    assert_eq!(ran, steps + 1, "the Update system's runs in {steps} steps");
    // Bevy's `Last` (which counts frames) runs only in the steps through `App::update`.
    let frames = |sim: &Simulation| sim.world().resource::<FrameCount>().0;
    assert_eq!((frames(&direct), frames(&updated)), (2, steps + 1));
    let samples = &direct.samples();
    assert!(samples.len() > 5 && samples.iter().any(|s| s.overall.infected > 0));
    let (a, b) = (state(&mut direct), state(&mut updated));
    assert!(a.0.len() > 50);
    assert_eq!(a, b, "stepping directly changed the run");
}

#[test]
fn a_system_added_mid_run_runs_in_every_later_step() {
    let mut sim = Simulation::new(flocking_only(2), Some(1));
    sim.run_until(0.5);
    assert!(sim.steps_directly());
    // A schedule a direct step runs only when it has systems (absent until now), then one it
    // leaves out, which has run (with Bevy's frame counter) in the first step: each system
    // added so far counts every step.
    let added = [(FixedFirst.intern(), true), (Last.intern(), false)];
    for (k, (label, direct)) in added.into_iter().enumerate() {
        sim.app_mut()
            .insert_resource(Ran(0))
            .add_systems(label, count_run);
        for _ in 0..7 {
            sim.step();
        }
        assert_eq!(
            sim.world().resource::<Ran>().0,
            7 * (k as u32 + 1),
            "{label:?}"
        );
        assert_eq!(sim.steps_directly(), direct, "{label:?}");
    }
}
