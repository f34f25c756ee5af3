//! What the app's panel does, tested without a window: parameter edits reach the simulation's
//! resources and change what it does; a saved config loads back identically and runs headless;
//! every shipped scenario is valid.
#![allow(clippy::field_reassign_with_default)] // configs are built by changing a few defaults

mod common;

use bevy::prelude::*;
use common::{boids, scenarios};
use pandemic_boids::run::Simulation;
use pandemic_boids::sim::config::{DoctorBehavior, SimConfig, Value};
use pandemic_boids::sim::swarm::Swarm;
use pandemic_boids::view::control::save_config;
use pandemic_boids::view::params::{ConfigEdited, EditError, apply_config_edits};

fn with_panel_edits(config: SimConfig) -> Simulation {
    let mut sim = Simulation::new(config, None);
    sim.app_mut()
        .add_event::<ConfigEdited>()
        .init_resource::<EditError>()
        .add_systems(Update, apply_config_edits);
    sim
}

fn edit(sim: &mut Simulation, key: &str, value: Value) {
    sim.world_mut().send_event(ConfigEdited {
        key: key.into(),
        value,
    });
}

#[test]
fn panel_edits_reach_the_simulation() {
    let mut sim = with_panel_edits(SimConfig::default());
    sim.run_until(2.0);
    edit(&mut sim, "swarms.normal.max_speed", Value::Float(90.0));
    edit(&mut sim, "swarms.normal.min_speed", Value::Float(40.0));
    edit(
        &mut sim,
        "doctors.behavior",
        Value::Name("seek_centroid".into()),
    );
    sim.step();
    let c = sim.config().clone();
    assert_eq!(c.swarms.normal.max_speed, 90.0);
    assert_eq!(c.doctors.behavior, DoctorBehavior::SeekCentroid);
    // The next steps obey the new limit.
    sim.step();
    for (swarm, _, v, _) in boids(&mut sim) {
        if swarm == Swarm::Normal {
            assert!(
                v.0.length() <= 90.0 + 1e-3,
                "speed {} after the edit",
                v.0.length()
            );
        }
    }
    // The fixed step follows an edited dt.
    edit(&mut sim, "dt", Value::Float(0.02));
    sim.step();
    sim.step();
    let fixed = sim
        .world()
        .resource::<Time<Fixed>>()
        .timestep()
        .as_secs_f64();
    assert!((fixed - 0.02).abs() < 1e-9, "{fixed}");
}

#[test]
fn invalid_panel_edits_are_refused_with_a_reason() {
    let mut sim = with_panel_edits(SimConfig::default());
    sim.step();
    edit(&mut sim, "swarms.normal.min_speed", Value::Float(500.0));
    sim.step();
    assert_eq!(sim.config().swarms.normal.min_speed, 54.0);
    let reason = sim.world().resource::<EditError>().0.clone().unwrap();
    assert!(reason.contains("swarms.normal.min_speed"), "{reason}");
}

#[test]
fn saved_config_loads_back_and_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mine.toml");
    let mut c = SimConfig::default();
    c.seed = 1234;
    c.swarms.doctor.count = 3;
    c.epidemic.t_immunity = 15.0;
    c.doctors.behavior = DoctorBehavior::SeekNearest;
    save_config(&path, &c).unwrap();
    assert_eq!(SimConfig::load(Some(&path), &[]).unwrap(), c);
    let out = tmp.path().join("out");
    let status = std::process::Command::new(common::bin())
        .args(["run", "--duration", "1", "--quiet", "--scenario"])
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Every `.toml` file under `dir`, sub-folders included, sorted.
fn toml_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(toml_files(&path));
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn every_shipped_scenario_loads_validates_and_runs() {
    let files = toml_files(&scenarios());
    let names: Vec<String> = files
        .iter()
        .map(|p| {
            p.strip_prefix(scenarios())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    // The sub-folders are part of what ships.
    for must in [
        "matrix/B3_D2.toml",
        "regimes/C_lattice.toml",
        "default.toml",
    ] {
        assert!(
            names.iter().any(|n| n == must),
            "{must} not found in {names:?}"
        );
    }
    for path in &files {
        let c = SimConfig::load(Some(path), &[]).unwrap_or_else(|e| panic!("{e}"));
        // Every scenario small enough also runs a few steps.
        let boids = c.swarms.normal.count + c.swarms.doctor.count + c.swarms.antivax.count;
        if boids < 5000 {
            let mut sim = Simulation::new(c, None);
            sim.run_until(0.2);
            assert!(sim.clock().step > 0, "{}", path.display());
        }
    }
    assert!(files.len() >= 22, "{} scenarios: {names:?}", files.len());
    let default = SimConfig::load(Some(&scenarios().join("default.toml")), &[]).unwrap();
    // The default scenario is the built-in defaults except the two values its header names.
    assert_eq!(
        pandemic_boids::sim::config::shipped::changed_sets(&SimConfig::default(), &default),
        ["antivax.p_antivax=0.2", "epidemic.p_death=0.5"],
        "default.toml differs from the built-in defaults in other keys than it says"
    );
}
