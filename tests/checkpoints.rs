//! Checkpoints (docs/model.md §12): round trips of every component of every entity, coverage
//! of every component and resource, the file format's refusals, and headless runs resumed or
//! branched from a checkpoint compared byte for byte with the uninterrupted run.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use bevy::prelude::*;
use pandemic_boids::run::Simulation;
use pandemic_boids::run::checkpoints;
use pandemic_boids::run::headless::{Resume, RunOptions, run};
use pandemic_boids::sim::agent::Boid;
use pandemic_boids::sim::checkpoint::*;
use pandemic_boids::sim::config::SimConfig;

/// Every module at once: doctors, Antivax, waning immunity, births, predators that remove,
/// and every kind of intervention (isolated boids included).
fn everything() -> SimConfig {
    let text = r#"
        seed = 11
        [swarms.normal]
        count = 160
        [population]
        enabled = true
        [predators]
        count = 2
        [antivax]
        p_antivax = 0.3
        [epidemic]
        p_initial_infect_normal = 0.2
        t_immunity = 6.0
        [[interventions]]
        name = "tti"
        at = 0.2
        isolate = { detect_per_s = 0.9, delay = 0.0 }
        [[interventions]]
        name = "campaign"
        at = 0.5
        vaccinate = { rate_per_s = 0.05, efficacy = 0.8 }
        [[interventions]]
        name = "import"
        at = 1.0
        import = { count = 3 }
        [[interventions]]
        name = "slow"
        at = 1.5
        duration = 100.0
        set = { "swarms.normal.max_speed" = 120.0 }
    "#;
    SimConfig::from_toml_str(text, "test", &[]).unwrap()
}

fn stepped(config: SimConfig, seconds: f64) -> Simulation {
    let mut sim = Simulation::new(config, Some(1));
    sim.run_until(seconds);
    sim
}

#[test]
fn a_checkpoint_round_trips_every_component_of_every_entity() {
    let mut sim = stepped(everything(), 3.0);
    let saved = sim.checkpoint().unwrap();
    assert!(saved.boids() > 100);
    let isolated = saved
        .entities
        .iter()
        .filter(|e| matches!(e, EntityState::Boid(b) if b.isolated.is_some()));
    assert!(isolated.count() > 0, "the scenario isolates nobody");
    assert!(
        saved
            .entities
            .iter()
            .any(|e| matches!(e, EntityState::Predator(_)))
    );
    assert!(saved.interventions.active() > 0);
    // Through bytes and back: equal in every field.
    let bytes = encode(&saved);
    assert_eq!(decode(&bytes).unwrap(), saved);
    // Restored into a fresh simulation, it captures to the same checkpoint.
    let config = saved.config().unwrap();
    let mut restored = Simulation::resumed(&saved, config, Some(1));
    assert_eq!(restored.checkpoint().unwrap(), saved);
    // And both continue identically.
    sim.run_until(5.0);
    restored.run_until(5.0);
    assert_eq!(restored.checkpoint().unwrap(), sim.checkpoint().unwrap());
}

#[test]
fn every_resource_and_component_of_the_simulation_is_saved_or_rebuilt() {
    let mut sim = stepped(everything(), 0.5);
    let saved = saved_resources();
    let rebuilt = rebuilt_resources();
    let world = sim.world_mut();
    let mut missing = Vec::new();
    for (info, _) in world.iter_resources() {
        let name = info.name();
        if name.starts_with("pandemic_boids::sim::")
            && !saved.contains(&name)
            && !rebuilt.contains(&name)
        {
            missing.push(name.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "resources in no checkpoint list: {missing:?}"
    );
    let registry = world.resource::<AppTypeRegistry>().read();
    let components = saved_components();
    let unsaved: Vec<&str> = registry
        .iter()
        .filter(|r| r.data::<ReflectComponent>().is_some())
        .map(|r| r.type_info().type_path())
        .filter(|p| p.starts_with("pandemic_boids::sim::") && !components.contains(p))
        .collect();
    assert!(
        unsaved.is_empty(),
        "components checkpoints do not save: {unsaved:?}"
    );
}

#[derive(Component)]
struct Unknown;

#[test]
fn an_entity_with_a_component_checkpoints_do_not_know_is_refused() {
    let mut sim = stepped(everything(), 0.1);
    let world = sim.world_mut();
    let boid = world
        .query_filtered::<Entity, With<Boid>>()
        .iter(world)
        .next()
        .unwrap();
    world.entity_mut(boid).insert(Unknown);
    match sim.checkpoint() {
        Err(CheckpointError::Unsaved(name)) => assert!(name.ends_with("Unknown"), "{name}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn damaged_foreign_and_other_version_files_are_refused() {
    let mut sim = stepped(everything(), 0.2);
    let bytes = encode(&sim.checkpoint().unwrap());
    assert!(decode(&bytes).is_ok());
    let truncated = &bytes[..bytes.len() - 10];
    assert!(matches!(
        decode(truncated),
        Err(CheckpointError::Truncated { .. })
    ));
    assert!(matches!(
        decode(&bytes[..12]),
        Err(CheckpointError::Truncated { .. })
    ));
    let mut flipped = bytes.clone();
    let last = flipped.len() - 100;
    flipped[last] ^= 0x40;
    assert_eq!(decode(&flipped), Err(CheckpointError::Corrupt));
    assert_eq!(
        decode(b"time_s,infected\n0,1\n"),
        Err(CheckpointError::Foreign)
    );
    assert_eq!(decode(b""), Err(CheckpointError::Foreign));
    let mut other = bytes.clone();
    other[8] = 99;
    assert!(matches!(
        decode(&other),
        Err(CheckpointError::Version { format: 99, .. })
    ));
    let message = decode(&other).unwrap_err().to_string();
    assert!(!message.contains('\n') && message.contains("a build of that version and format"));
}

#[test]
fn nothing_is_captured_before_the_run_starts() {
    let mut sim = Simulation::new(SimConfig::default(), Some(1));
    assert_eq!(sim.checkpoint(), Err(CheckpointError::NotStarted));
}

/// The files a resumed run must reproduce byte for byte.
const FILES: [&str; 7] = [
    "metrics.csv",
    "transmissions.csv",
    "rt.csv",
    "agents.csv",
    "summary.json",
    "config.toml",
    "interventions.csv",
];

fn headless(config: SimConfig, out: &Path, every: Option<f64>, resume: Option<Resume>) {
    let mut opts = RunOptions::new(config, out.to_path_buf());
    opts.checkpoints.every = every;
    opts.resume = resume;
    run(opts).unwrap();
}

fn assert_same_files(a: &Path, b: &Path, what: &str) {
    for name in FILES {
        let (x, y) = (a.join(name), b.join(name));
        assert_eq!(
            x.exists(),
            y.exists(),
            "{what}: {name} written by only one run"
        );
        if x.exists() {
            assert!(
                fs::read(&x).unwrap() == fs::read(&y).unwrap(),
                "{what}: {name} differs"
            );
        }
    }
}

#[test]
fn a_resumed_run_writes_the_same_files_as_the_uninterrupted_one() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sirs = SimConfig::load(Some(&common::scenarios().join("sirs.toml")), &[]).unwrap();
    sirs.swarms.normal.count = 150;
    let mut everything = everything();
    everything.agents_every = 1.0;
    everything.predators.catch = pandemic_boids::sim::config::CatchMode::Remove;
    for (name, mut config, at) in [("everything", everything, 3.0), ("sirs", sirs, 4.5)] {
        config.duration = 6.0;
        let full = tmp.path().join(name).join("full");
        headless(config, &full, Some(1.5), None);
        let file = full.join("checkpoints").join(checkpoints::file_name(at));
        let (_, checkpoint) = checkpoints::read(&file).unwrap();
        let config = checkpoint.config().unwrap();
        let resumed = tmp.path().join(name).join("resumed");
        let resume = Resume {
            checkpoint,
            branch: None,
        };
        headless(config, &resumed, None, Some(resume));
        assert_same_files(&full, &resumed, name);
    }
}

#[test]
fn a_branch_keeps_the_parents_rows_before_it_and_records_where_it_came_from() {
    let tmp = tempfile::tempdir().unwrap();
    let mut config = everything();
    config.duration = 6.0;
    let full = tmp.path().join("full");
    headless(config, &full, Some(3.0), None);
    let file = full.join("checkpoints").join(checkpoints::file_name(3.0));
    let (_, checkpoint) = checkpoints::read(&file).unwrap();
    let mut changed = checkpoint.config().unwrap();
    changed.swarms.doctor.noise = 300.0;
    let branch = tmp.path().join("branch");
    let parent = Parent {
        file: file.display().to_string(),
        time_s: 3.0,
        changed: vec!["swarms.doctor.noise=300".into()],
    };
    let resume = Resume {
        checkpoint,
        branch: Some(parent),
    };
    headless(changed, &branch, None, Some(resume));
    let rows = |dir: &Path| -> Vec<String> {
        let text = fs::read_to_string(dir.join("metrics.csv")).unwrap();
        text.lines().map(String::from).collect()
    };
    let (a, b) = (rows(&full), rows(&branch));
    let time = |row: &str| {
        row.split(',')
            .next()
            .unwrap()
            .parse::<f64>()
            .unwrap_or(-1.0)
    };
    let before = a.iter().take_while(|r| time(r) < 3.0).count();
    assert!(before > 5);
    assert_eq!(a[..before], b[..before], "rows before the branch differ");
    assert_ne!(
        a[before..],
        b[before..],
        "the branch changed nothing after it"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(branch.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["parent"]["time_s"], 3.0);
    assert_eq!(summary["parent"]["changed"][0], "swarms.doctor.noise=300");
    let toml = fs::read_to_string(branch.join("config.toml")).unwrap();
    assert!(toml.starts_with("# A branch: resumed from checkpoint"));
    // Still a config that loads.
    assert!(SimConfig::load(Some(&branch.join("config.toml")), &[]).is_ok());
}

#[test]
fn the_command_line_resumes_branches_and_refuses_bad_files_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("full");
    let cli = |args: &[&str]| {
        let o = Command::new(common::bin()).args(args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let out_s = out.to_str().unwrap();
    let (code, _) = cli(&[
        "run",
        "--scenario",
        "sir",
        "--duration",
        "4",
        "--quiet",
        "--checkpoint-every",
        "2",
        "--keep-checkpoints",
        "1",
        "--out",
        out_s,
    ]);
    assert_eq!(code, Some(0));
    let kept = checkpoints::list(&out.join("checkpoints"));
    assert_eq!(kept.len(), 1, "--keep-checkpoints 1 kept {kept:?}");
    // A folder resumes from its newest checkpoint (here the end: nothing left to run).
    let again = tmp.path().join("again");
    let (code, err) = cli(&[
        "run",
        "--resume",
        out_s,
        "--quiet",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("resume from") && err.contains("t = 4 s"),
        "{err}"
    );
    assert_eq!(
        fs::read(out.join("metrics.csv")).unwrap(),
        fs::read(again.join("metrics.csv")).unwrap()
    );
    // A branch at the run's end would change nothing: refused.
    let (code, err) = cli(&[
        "run",
        "--resume",
        out_s,
        "--set",
        "epidemic.p_infect_normal=0.9",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("changes nothing"), "{err}");
    // Bad files: one line, exit 2, the output folder untouched.
    let good = fs::read(&kept[0]).unwrap();
    let keep = tmp.path().join("keep");
    fs::create_dir_all(&keep).unwrap();
    fs::write(keep.join("metrics.csv"), "precious").unwrap();
    let mut flipped = good.clone();
    let k = flipped.len() - 50;
    flipped[k] ^= 1;
    let cases: [(&str, Vec<u8>, &str); 3] = [
        (
            "truncated.ckpt",
            good[..good.len() / 2].to_vec(),
            "truncated",
        ),
        ("corrupt.ckpt", flipped, "corrupt"),
        (
            "foreign.ckpt",
            b"seed = 3\n".to_vec(),
            "not a pandemic-boids checkpoint",
        ),
    ];
    for (name, bytes, says) in cases {
        let file = tmp.path().join(name);
        fs::write(&file, bytes).unwrap();
        let (code, err) = cli(&[
            "run",
            "--resume",
            file.to_str().unwrap(),
            "--out",
            keep.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
        assert_eq!(
            fs::read_to_string(keep.join("metrics.csv")).unwrap(),
            "precious"
        );
    }
    let (code, err) = cli(&[
        "run",
        "--resume",
        out_s,
        "--scenario",
        "sir",
        "--out",
        keep.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}
