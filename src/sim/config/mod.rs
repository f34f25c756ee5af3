//! The run configuration: every model parameter with its default (docs/model.md) and loading a
//! scenario file with `--set` overrides. The live `SimConfig` resource is what every simulation
//! system reads; the UI edits it. Each key is a field: its `///` comment describes it and its
//! `#[reflect(@Spec…)]` attribute (`spec`) says what it allows; `keys` walks the type to list
//! them and reads and writes them by dotted path (through `bevy_reflect`); `validate` checks a
//! config against them; `load` reads files and `--set`; `docs` writes docs/configuration.md.
//! The sections live in `sections`. No systems live here.

mod docs;
pub mod interventions;
pub mod keys;
mod load;
pub mod sections;
pub mod shipped;
pub mod spec;
mod validate;
pub mod value;

use std::path::PathBuf;

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use crate::sim::space::Space;

pub use docs::reference_markdown;
pub use interventions::{Condition, Intervention};
pub use load::ConfigError;
pub use sections::{
    AntivaxConfig, CatchMode, DoctorBehavior, DoctorsConfig, EpidemicConfig, IndexKind,
    PopulationConfig, PredatorsConfig, SteeringModel, SwarmParams, Swarms, WorldConfig,
};
pub use spec::Spec;
pub use value::Value;

/// The whole run configuration: a scenario file plus overrides, resolved (docs/model.md §9).
#[derive(Resource, Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[reflect(Resource)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Seed of every random draw: the same config, seed and dt give the same run.
    #[reflect(@Spec::count("", i64::MAX as f64).slider(0.0, 1e6).on_reset())]
    pub seed: u64,
    /// Simulation step; every rate is per second, so results do not depend on it.
    #[reflect(@Spec::time(0.002, 0.1).label("step dt").at_least(1e-4).at_most(1.0).log())]
    pub dt: f64,
    /// Simulated length of a headless run.
    #[reflect(@Spec::time(1.0, 3600.0).label("duration (headless)").log().run_only())]
    pub duration: f64,
    /// Simulated seconds between metrics.csv rows (at most one row per step).
    #[reflect(@Spec::time(0.05, 10.0).label("sample every").above(0.0).log().run_only())]
    pub sample_every: f64,
    /// Simulated seconds between agents.csv snapshots of every boid (0 = none).
    #[reflect(@Spec::time(0.0, 60.0).label("agents.csv every (headless)").run_only())]
    pub agents_every: f64,
    /// Window of the reproduction numbers R_t and R_c (rt.csv, plots); incidence is counted
    /// in fifths of it.
    #[reflect(@Spec::time(0.5, 60.0).label("R_t window").above(0.0).log().run_only())]
    pub rt_window: f64,
    /// Flocking model: Shiffman's Model B (baseline), or hybrid, adams, pygame or the flocking
    /// report's own model for comparison.
    #[reflect(@Spec::choice("steering model"))]
    pub steering_model: SteeringModel,
    /// Neighbour search: bevy_spatial's KD-tree, a uniform grid (large runs) or brute force.
    #[reflect(@Spec::choice("neighbour index"))]
    pub neighbour_index: IndexKind,
    /// `[world]`.
    pub world: WorldConfig,
    /// `[swarms.*]`.
    pub swarms: Swarms,
    /// `[epidemic]`.
    pub epidemic: EpidemicConfig,
    /// `[doctors]`.
    pub doctors: DoctorsConfig,
    /// `[antivax]`.
    pub antivax: AntivaxConfig,
    /// `[population]`.
    pub population: PopulationConfig,
    /// `[predators]`.
    pub predators: PredatorsConfig,
    /// `[[interventions]]`: what-if measures during the run (docs/model.md §11). Their numbers
    /// are reached as `interventions.<name or index>.<field>` (see `interventions`).
    #[reflect(ignore)]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interventions: Vec<Intervention>,
    /// `[extensions.<name>]`: the sections of extensions a user's own binary adds
    /// (`sim::extensions`), checked by their own checks; read with [`SimConfig::extension`].
    #[reflect(ignore)]
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub extensions: toml::Table,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            seed: 42,
            dt: 1.0 / 60.0,
            duration: 300.0,
            sample_every: 0.5,
            agents_every: 0.0,
            rt_window: 5.0,
            steering_model: SteeringModel::Shiffman,
            neighbour_index: IndexKind::Kdtree,
            world: WorldConfig::default(),
            swarms: Swarms::default(),
            epidemic: EpidemicConfig::default(),
            doctors: DoctorsConfig::default(),
            antivax: AntivaxConfig::default(),
            population: PopulationConfig::default(),
            predators: PredatorsConfig::default(),
            interventions: Vec::new(),
            extensions: toml::Table::new(),
        }
    }
}

/// The folder of the shipped scenario files (`assets/scenarios`): under `$BEVY_ASSET_ROOT`,
/// else next to the executable or in the working folder, else the crate's own (when run through
/// cargo).
pub fn scenarios_dir() -> PathBuf {
    let candidates = [
        std::env::var_os("BEVY_ASSET_ROOT").map(|r| PathBuf::from(r).join("assets")),
        std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(|p| p.join("assets"))),
        Some(PathBuf::from("assets")),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets")),
    ];
    candidates
        .into_iter()
        .flatten()
        .map(|assets| assets.join("scenarios"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| PathBuf::from("assets").join("scenarios"))
}

/// `default.toml` of the shipped scenarios, if it exists.
pub fn default_scenario() -> Option<PathBuf> {
    let p = scenarios_dir().join("default.toml");
    p.is_file().then_some(p)
}

impl SimConfig {
    /// The full resolved configuration as TOML, readable by `--scenario`.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("config serialises")
    }

    /// The world rectangle as a geometry helper.
    pub fn space(&self) -> Space {
        Space {
            width: self.world.width,
            height: self.world.height,
            boundary: self.world.boundary,
        }
    }

    /// The section `[extensions.<name>]` as the extension's own type (its defaults where the
    /// scenario has no such section).
    pub fn extension<T: serde::de::DeserializeOwned + Default>(
        &self,
        name: &str,
    ) -> Result<T, String> {
        match self.extensions.get(name) {
            None => Ok(T::default()),
            Some(v) => v
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| load::one_line(&e.to_string())),
        }
    }

    /// The value of a dotted key (`swarms.normal.max_speed`).
    pub fn get(&self, key: &str) -> Result<Value, String> {
        keys::get(self, key)
    }

    /// A copy with `key` (dotted, as in the file) set to `value`, validated; `origin` names the
    /// editor in errors (e.g. "panel").
    pub fn with_edit(&self, key: &str, value: Value, origin: &str) -> Result<Self, ConfigError> {
        let mut next = self.clone();
        keys::set(&mut next, key, &value).map_err(|message| ConfigError::Key {
            origin: origin.into(),
            key: key.into(),
            message,
        })?;
        next.validate_edit(key, origin)?;
        Ok(next)
    }
}
