//! An extension registered the way `cli::main_with` does reaches every command's simulations
//! (here `run` and `experiment`, whose runs go through the job runner's threads), and its
//! config section is validated like every key. One test: registration is process-wide.

use bevy::prelude::*;
use pandemic_boids::run::experiment::{ExperimentOptions, run as run_experiment};
use pandemic_boids::run::headless::{RunOptions, run};
use pandemic_boids::sim::agent::{Disease, Health};
use pandemic_boids::sim::config::SimConfig;

/// `[extensions.cure_all]`: every infected boid recovers when `on`.
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct CureAll {
    on: bool,
}

fn check(v: &toml::Value) -> Result<(), String> {
    v.clone()
        .try_into::<CureAll>()
        .map(|_| ())
        .map_err(|e| e.message().to_string())
}

fn cure_all(config: Res<SimConfig>, mut boids: Query<&mut Health>) {
    if config.extension::<CureAll>("cure_all").is_ok_and(|c| c.on) {
        for mut h in &mut boids {
            if h.disease.is_infected() {
                h.disease = Disease::Recovered {
                    since: 0.0,
                    immunity: 1.0,
                };
            }
        }
    }
}

#[test]
fn an_extension_reaches_run_and_experiment_and_its_section_is_checked() {
    pandemic_boids::sim::extensions::add_section("cure_all", check);
    pandemic_boids::sim::extensions::add_plugin(|app| {
        app.add_systems(
            FixedUpdate,
            cure_all.in_set(pandemic_boids::SimSystems::Log),
        );
    });
    let tmp = tempfile::tempdir().unwrap();
    let sir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios/sir.toml");
    let on = ["extensions.cure_all.on=true".to_string()];
    let config = SimConfig::load(Some(&sir), &on).unwrap();
    let out = tmp.path().join("run");
    run(RunOptions::new(
        SimConfig {
            duration: 10.0,
            ..config
        },
        out.clone(),
    ))
    .unwrap();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    // Cured in the step they start: nobody infects anyone.
    assert_eq!(summary["epidemic"]["contact_infections"], 0, "{summary}");
    // The section travels in config.toml and reproduces the run.
    let written = std::fs::read_to_string(out.join("config.toml")).unwrap();
    assert!(written.contains("[extensions.cure_all]"), "{written}");
    // An experiment's runs (on the job runner's threads) get it too.
    let opts = ExperimentOptions {
        scenarios: vec![sir.clone()],
        seeds: 2,
        base_seed: 1,
        jobs: 2,
        duration: Some(8.0),
        measure_from: 0.0,
        sets: on.to_vec(),
        out: tmp.path().join("exp"),
        progress: false,
        stop: None,
    };
    run_experiment(&opts).unwrap();
    for k in 0..2 {
        let s = std::fs::read_to_string(
            tmp.path()
                .join(format!("exp/runs/sir/seed-{k}/summary.json")),
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["epidemic"]["contact_infections"], 0);
    }
    // Its section is checked like any key; a section no extension owns is refused.
    let err = SimConfig::load(Some(&sir), &["extensions.cure_all.of=true".into()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("extensions.cure_all") && err.contains("unknown field `of`"),
        "{err}"
    );
    let err = SimConfig::load(Some(&sir), &["extensions.vaccine.rate=1".into()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no extension of this program has such a section"),
        "{err}"
    );
}
