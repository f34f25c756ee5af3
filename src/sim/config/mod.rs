//! The run configuration: every model parameter with its default (docs/model.md) and loading a
//! scenario file with `--set` overrides. The live `SimConfig` resource is what every simulation
//! system reads; the UI edits it. Beside this file: `keys` describes every key (unit, allowed
//! values, widget, doc), `validate` checks a config against those descriptions, `overrides`
//! handles dotted keys. No systems live here.

pub mod keys;
mod overrides;
pub mod shipped;
mod validate;

use std::path::{Path, PathBuf};

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use crate::sim::space::{Boundary, Space};
use crate::sim::swarm::Swarm;

pub use overrides::table_get;
use overrides::{describe_serde_error, insert_dotted, merge_values, one_line, parse_set};

/// Which steering model computes the flocking force (docs/model.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Reflect, Default)]
#[serde(rename_all = "snake_case")]
pub enum SteeringModel {
    /// Per-second Shiffman "Model B": per-rule truncation, no total clamp (the baseline).
    #[default]
    Shiffman,
    /// The superseded hybrid: raw separation, no per-rule truncation, total clamped to F_max.
    Hybrid,
    /// Adams/Cornell "Model A" with per-frame factors converted to per-second.
    Adams,
    /// The pygame boids README: inverse-square separation summed over neighbours
    /// (`separation_weight` in px³/s²), un-truncated alignment and cohesion, no total clamp.
    Pygame,
}

impl SteeringModel {
    /// Every value as written in a scenario file, in declaration order.
    pub const NAMES: &'static [&'static str] = &["shiffman", "hybrid", "adams", "pygame"];

    /// This value as written in a scenario file.
    pub fn name(self) -> &'static str {
        match self {
            SteeringModel::Shiffman => "shiffman",
            SteeringModel::Hybrid => "hybrid",
            SteeringModel::Adams => "adams",
            SteeringModel::Pygame => "pygame",
        }
    }
}

/// Which neighbour index answers radius queries (docs/model.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Reflect, Default)]
#[serde(rename_all = "snake_case")]
pub enum IndexKind {
    /// bevy_spatial's `KDTree2`, rebuilt every step (default).
    #[default]
    Kdtree,
    /// Uniform grid with cell-ordered arrays, for large populations.
    Grid,
    /// Every pair checked: the reference the others are tested against.
    Brute,
}

impl IndexKind {
    /// Every value as written in a scenario file, in declaration order.
    pub const NAMES: &'static [&'static str] = &["kdtree", "grid", "brute"];

    /// This value as written in a scenario file.
    pub fn name(self) -> &'static str {
        match self {
            IndexKind::Kdtree => "kdtree",
            IndexKind::Grid => "grid",
            IndexKind::Brute => "brute",
        }
    }
}

/// How doctors move (docs/model.md §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Reflect, Default)]
#[serde(rename_all = "snake_case")]
pub enum DoctorBehavior {
    /// Doctors only flock.
    #[default]
    Passive,
    /// Steer to the nearest infected boid within `doctors.seek_radius`.
    SeekNearest,
    /// Steer to the torus centroid of all infected boids.
    SeekCentroid,
}

impl DoctorBehavior {
    /// Every value as written in a scenario file, in declaration order.
    pub const NAMES: &'static [&'static str] = &["passive", "seek_nearest", "seek_centroid"];

    /// This value as written in a scenario file.
    pub fn name(self) -> &'static str {
        match self {
            DoctorBehavior::Passive => "passive",
            DoctorBehavior::SeekNearest => "seek_nearest",
            DoctorBehavior::SeekCentroid => "seek_centroid",
        }
    }
}

/// What happens to a boid a predator catches (docs/model.md §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Reflect, Default)]
#[serde(rename_all = "snake_case")]
pub enum CatchMode {
    /// The boid is removed and counted as caught.
    #[default]
    Remove,
    /// The boid reappears at a random edge heading inward (also counted).
    Respawn,
}

impl CatchMode {
    /// Every value as written in a scenario file, in declaration order.
    pub const NAMES: &'static [&'static str] = &["remove", "respawn"];

    /// This value as written in a scenario file.
    pub fn name(self) -> &'static str {
        match self {
            CatchMode::Remove => "remove",
            CatchMode::Respawn => "respawn",
        }
    }
}

/// `[world]`: the rectangle and its boundary (docs/model.md §2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(deny_unknown_fields)]
pub struct WorldConfig {
    /// Width, px.
    pub width: f32,
    /// Height, px.
    pub height: f32,
    /// `wrap` (torus) or `bounce`.
    pub boundary: Boundary,
}

impl Default for WorldConfig {
    fn default() -> Self {
        Self {
            width: 1920.0,
            height: 1080.0,
            boundary: Boundary::Wrap,
        }
    }
}

/// `[swarms.<name>]`: how many boids a swarm starts with and how they flock (docs/model.md §4 defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(deny_unknown_fields)]
pub struct SwarmParams {
    /// Boids spawned at the start.
    pub count: u32,
    /// v_max, px/s.
    pub max_speed: f32,
    /// F_max, px/s² (per rule in the Shiffman model, total in the hybrid one).
    pub max_force: f32,
    /// v_min, px/s.
    pub min_speed: f32,
    /// r_sep, px.
    pub separation_radius: f32,
    /// r_ali, px.
    pub alignment_radius: f32,
    /// r_coh, px.
    pub cohesion_radius: f32,
    /// w_sep.
    pub separation_weight: f32,
    /// w_ali.
    pub alignment_weight: f32,
    /// w_coh.
    pub cohesion_weight: f32,
    /// Field-of-view half-angle, rad (π = all round).
    pub fov: f32,
    /// Random acceleration, px/s² (Wiener increment, scales as √dt).
    pub noise: f32,
}

impl SwarmParams {
    /// docs/model.md §4 defaults with the given starting count.
    pub fn with_count(count: u32) -> Self {
        Self {
            count,
            max_speed: 180.0,
            max_force: 180.0,
            min_speed: 54.0,
            separation_radius: 25.0,
            alignment_radius: 50.0,
            cohesion_radius: 50.0,
            separation_weight: 1.5,
            alignment_weight: 1.0,
            cohesion_weight: 1.0,
            fov: std::f32::consts::PI,
            noise: 0.0,
        }
    }

    /// The largest flocking radius: one neighbour query of this radius serves all three rules.
    pub fn query_radius(&self) -> f32 {
        self.separation_radius
            .max(self.alignment_radius)
            .max(self.cohesion_radius)
    }
}

impl Default for SwarmParams {
    fn default() -> Self {
        Self::with_count(0)
    }
}

/// `[swarms]`: one parameter table per swarm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(deny_unknown_fields)]
pub struct Swarms {
    /// Ordinary boids (a share become Antivax at spawn).
    pub normal: SwarmParams,
    /// Doctors: cure infected boids of any swarm.
    pub doctor: SwarmParams,
    /// Antivax boids spawned directly (in addition to converted Normals).
    pub antivax: SwarmParams,
}

impl Default for Swarms {
    fn default() -> Self {
        Self {
            normal: SwarmParams::with_count(200),
            doctor: SwarmParams::with_count(10),
            antivax: SwarmParams::with_count(0),
        }
    }
}

impl Swarms {
    /// Parameters of one swarm.
    pub fn get(&self, swarm: Swarm) -> &SwarmParams {
        match swarm {
            Swarm::Normal => &self.normal,
            Swarm::Doctor => &self.doctor,
            Swarm::Antivax => &self.antivax,
        }
    }

    /// Mutable parameters of one swarm.
    pub fn get_mut(&mut self, swarm: Swarm) -> &mut SwarmParams {
        match swarm {
            Swarm::Normal => &mut self.normal,
            Swarm::Doctor => &mut self.doctor,
            Swarm::Antivax => &mut self.antivax,
        }
    }
}

/// `[epidemic]`: infection, cure, death and immunity (docs/model.md §5). Probabilities are per second
/// unless the name says otherwise (`p_initial_*`, `p_death`, `cure_immunity_level`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(deny_unknown_fields)]
pub struct EpidemicConfig {
    /// Chance a Normal/Antivax boid starts infected (at spawn, not per second).
    pub p_initial_infect_normal: f64,
    /// Chance a Doctor starts infected (at spawn, not per second).
    pub p_initial_infect_doctor: f64,
    /// Per second of contact, when the infector is a Normal/Antivax boid.
    pub p_infect_normal: f64,
    /// Per second of contact, when the infector is a Doctor.
    pub p_infect_doctor: f64,
    /// Per second, per susceptible boid, with no contact needed.
    pub p_spontaneous_infect: f64,
    /// Per second, per doctor–infected pair within the doctor's radius.
    pub p_cure: f64,
    /// Chance an infected boid dies when `t_death` has passed (else it recovers then).
    pub p_death: f64,
    /// Seconds from infection to death-or-recovery (`inf` = never).
    pub t_death: f64,
    /// Seconds for immunity to wane to zero (`inf` = permanent: SIR; finite: SIRS).
    pub t_immunity: f64,
    /// Immunity right after recovery, 0..1 (multiplies infection chance by 1 − immunity).
    pub cure_immunity_level: f64,
    /// Contact radius of a Normal/Antivax boid, px.
    pub r_interact_normal: f32,
    /// Contact radius of a Doctor (also its cure radius), px.
    pub r_interact_doctor: f32,
    /// Contact radius multiplier of an infected Normal/Antivax boid.
    pub infected_radius_factor_normal: f32,
    /// Contact/cure radius multiplier of an infected Doctor.
    pub infected_radius_factor_doctor: f32,
    /// Cure probability multiplier when the doctor is infected.
    pub infected_cure_factor: f64,
    /// Whether infection crosses swarms.
    pub cross_swarm_infection: bool,
}

impl Default for EpidemicConfig {
    fn default() -> Self {
        Self {
            p_initial_infect_normal: 0.05,
            p_initial_infect_doctor: 0.02,
            p_infect_normal: 0.5,
            p_infect_doctor: 0.5,
            p_spontaneous_infect: 0.0,
            p_cure: 0.8,
            p_death: 1.0,
            t_death: 5.0,
            t_immunity: f64::INFINITY,
            cure_immunity_level: 1.0,
            r_interact_normal: 30.0,
            r_interact_doctor: 40.0,
            infected_radius_factor_normal: 0.8,
            infected_radius_factor_doctor: 0.7,
            infected_cure_factor: 0.5,
            cross_swarm_infection: false,
        }
    }
}

impl EpidemicConfig {
    /// Base contact radius of a swarm, px (Antivax shares the Normal value).
    pub fn r_interact(&self, swarm: Swarm) -> f32 {
        match swarm {
            Swarm::Doctor => self.r_interact_doctor,
            Swarm::Normal | Swarm::Antivax => self.r_interact_normal,
        }
    }

    /// Contact radius of a boid of `swarm`, debuffed when it is infected, px (docs/model.md §5.2).
    pub fn contact_radius(&self, swarm: Swarm, infected: bool) -> f32 {
        let factor = match (infected, swarm) {
            (false, _) => 1.0,
            (true, Swarm::Doctor) => self.infected_radius_factor_doctor,
            (true, _) => self.infected_radius_factor_normal,
        };
        self.r_interact(swarm) * factor
    }

    /// Per-second contact infection probability of an infector of `swarm`.
    pub fn p_infect(&self, swarm: Swarm) -> f64 {
        match swarm {
            Swarm::Doctor => self.p_infect_doctor,
            Swarm::Normal | Swarm::Antivax => self.p_infect_normal,
        }
    }
}

/// `[doctors]`: doctor movement strategy (docs/model.md §5.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(deny_unknown_fields)]
pub struct DoctorsConfig {
    /// `passive`, `seek_nearest` or `seek_centroid`.
    pub behavior: DoctorBehavior,
    /// How far `seek_nearest` looks for an infected boid, px.
    pub seek_radius: f32,
    /// Multiplier of the seek steer (at most `seek_weight · F_max`).
    pub seek_weight: f32,
}

impl Default for DoctorsConfig {
    fn default() -> Self {
        Self {
            behavior: DoctorBehavior::Passive,
            seek_radius: 300.0,
            seek_weight: 5.0,
        }
    }
}

/// `[antivax]`: conversion at spawn and the flight from doctors (docs/model.md §5.4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(deny_unknown_fields)]
pub struct AntivaxConfig {
    /// Chance a Normal boid is spawned as Antivax (at spawn, not per second).
    pub p_antivax: f64,
    /// Antivax boids flee doctors closer than this, px.
    pub repulsion_radius: f32,
    /// Multiplier of the flee steer.
    pub repulsion_weight: f32,
}

impl Default for AntivaxConfig {
    fn default() -> Self {
        Self {
            p_antivax: 0.1,
            repulsion_radius: 100.0,
            repulsion_weight: 3.0,
        }
    }
}

/// `[population]`: births, aging and promotion to doctor (docs/model.md §6), off by default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(deny_unknown_fields)]
pub struct PopulationConfig {
    /// Turns the whole module on.
    pub enabled: bool,
    /// Per second, per same-swarm opposite-sex pair of Normal/Antivax boids in contact.
    pub p_offspring_normal: f64,
    /// Per second, per same-swarm opposite-sex pair of Doctors in contact.
    pub p_offspring_doctor: f64,
    /// Multiplier of the offspring probability when the initiating parent is infected.
    pub infected_offspring_factor: f64,
    /// Mean litter size of Normal/Antivax parents.
    pub litter_mean_normal: f64,
    /// Standard deviation of the Normal/Antivax litter size.
    pub litter_sd_normal: f64,
    /// Mean litter size of Doctor parents.
    pub litter_mean_doctor: f64,
    /// Standard deviation of the Doctor litter size.
    pub litter_sd_doctor: f64,
    /// Seconds both parents wait before they can breed again.
    pub cooldown: f64,
    /// Age in seconds from which a Normal boid may become a Doctor.
    pub t_adult: f64,
    /// Per second, for an adult Normal boid.
    pub p_become_doctor: f64,
    /// No births while this many boids are alive.
    pub max_population: u32,
}

impl Default for PopulationConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            p_offspring_normal: 0.4,
            p_offspring_doctor: 0.05,
            infected_offspring_factor: 0.5,
            litter_mean_normal: 2.0,
            litter_sd_normal: 1.0,
            litter_mean_doctor: 1.0,
            litter_sd_doctor: 1.0,
            cooldown: 5.0,
            t_adult: 8.33,
            p_become_doctor: 0.01,
            max_population: 1000,
        }
    }
}

/// `[predators]`: hunters that chase isolated boids (docs/model.md §7).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(deny_unknown_fields)]
pub struct PredatorsConfig {
    /// Predators spawned at the start (0 = module idle).
    pub count: u32,
    /// Cruise and top speed, px/s.
    pub speed: f32,
    /// Steering limit, px/s².
    pub max_force: f32,
    /// A boid closer than this is caught, px.
    pub catch_radius: f32,
    /// Predators only see boids closer than this, px.
    pub detection_range: f32,
    /// Radius used to count a candidate's neighbours when scoring isolation, px.
    pub isolation_radius: f32,
    /// Prey closer than this to a predator flee, px.
    pub fear_radius: f32,
    /// `remove` or `respawn`.
    pub catch: CatchMode,
}

impl Default for PredatorsConfig {
    fn default() -> Self {
        Self {
            count: 0,
            speed: 270.0,
            max_force: 108.0,
            catch_radius: 10.0,
            detection_range: 300.0,
            isolation_radius: 50.0,
            fear_radius: 150.0,
            catch: CatchMode::Remove,
        }
    }
}

/// The whole run configuration: a scenario file plus overrides, resolved (docs/model.md §9).
#[derive(Resource, Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[reflect(Resource)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Seed of every random draw in the run.
    pub seed: u64,
    /// Simulation step, s.
    pub dt: f64,
    /// Simulated length of a headless run, s.
    pub duration: f64,
    /// Simulated seconds between metric samples.
    pub sample_every: f64,
    /// Simulated seconds between rows of every boid in `agents.csv` (0 = no agent output).
    pub agents_every: f64,
    /// Window of the reproduction numbers R_t and R_c, s (incidence bins are a fifth of it).
    pub rt_window: f64,
    /// `shiffman`, `hybrid` or `adams`.
    pub steering_model: SteeringModel,
    /// `kdtree`, `grid` or `brute`.
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
        }
    }
}

/// A configuration problem, printed as one line that names where, what, and the fix.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    /// The scenario file could not be read.
    #[error(
        "cannot read scenario `{path}`: {reason} (give an existing TOML file, e.g. assets/scenarios/default.toml)"
    )]
    Read {
        /// The path as given.
        path: String,
        /// The OS error.
        reason: String,
    },
    /// The file is not valid TOML.
    #[error("{origin}: not valid TOML: {message}")]
    Syntax {
        /// File name or `--set`.
        origin: String,
        /// The parser's message, on one line.
        message: String,
    },
    /// A `--set` argument is not `KEY=VALUE`.
    #[error(
        "--set `{arg}`: expected KEY=VALUE with a dotted key, e.g. --set swarms.normal.count=500"
    )]
    SetSyntax {
        /// The argument as given.
        arg: String,
    },
    /// A key is unknown, has the wrong type, or an out-of-range value.
    #[error("{origin}: `{key}`: {message}")]
    Key {
        /// File name or `--set`.
        origin: String,
        /// Dotted key.
        key: String,
        /// What is wrong and what is allowed.
        message: String,
    },
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
    /// Reads a scenario file (if any), applies `--set` overrides, and validates the result.
    pub fn load(path: Option<&Path>, sets: &[String]) -> Result<Self, ConfigError> {
        let (origin, text) = match path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| ConfigError::Read {
                    path: p.display().to_string(),
                    reason: e.to_string(),
                })?;
                (p.display().to_string(), text)
            }
            None => ("built-in defaults".to_string(), String::new()),
        };
        Self::from_toml_str(&text, &origin, sets)
    }

    /// Parses TOML text (named `origin` in errors), applies overrides, validates.
    pub fn from_toml_str(text: &str, origin: &str, sets: &[String]) -> Result<Self, ConfigError> {
        let file: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Syntax {
                origin: origin.to_string(),
                message: one_line(&e.to_string()),
            })?;
        // Check the file on its own first so that its mistakes are blamed on it, not on --set.
        let base = Self::from_table(file.clone(), origin)?;
        if sets.is_empty() {
            return Ok(base);
        }
        let mut merged = file;
        for arg in sets {
            let (key, value) = parse_set(arg)?;
            insert_dotted(&mut merged, &key, value).map_err(|message| ConfigError::Key {
                origin: "--set".into(),
                key: key.clone(),
                message,
            })?;
        }
        Self::from_table(merged, "--set")
    }

    /// This config as a TOML table (dotted keys are its paths).
    pub fn to_table(&self) -> toml::Table {
        toml::Table::try_from(self).expect("config serialises")
    }

    /// A copy with `key` (dotted, as in the file) set to `value`, validated; `origin` names the
    /// editor in errors (e.g. "panel").
    pub fn with_edit(
        &self,
        key: &str,
        value: toml::Value,
        origin: &str,
    ) -> Result<Self, ConfigError> {
        let mut table = self.to_table();
        insert_dotted(&mut table, key, value).map_err(|message| ConfigError::Key {
            origin: origin.into(),
            key: key.into(),
            message,
        })?;
        Self::from_table(table, origin)
    }

    fn from_table(table: toml::Table, origin: &str) -> Result<Self, ConfigError> {
        let defaults = toml::Table::try_from(SimConfig::default()).expect("defaults serialise");
        let mut merged = toml::Value::Table(defaults);
        merge_values(&mut merged, toml::Value::Table(table));
        let config: SimConfig =
            serde_path_to_error::deserialize(merged).map_err(|e| ConfigError::Key {
                origin: origin.to_string(),
                key: e.path().to_string(),
                message: describe_serde_error(&e.inner().to_string()),
            })?;
        config.validate(origin)?;
        Ok(config)
    }

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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The (origin, key, message) of the key error a scenario text and `--set`s give.
    pub(crate) fn key_error(text: &str, sets: &[&str]) -> (String, String, String) {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        match SimConfig::from_toml_str(text, "test.toml", &sets) {
            Err(ConfigError::Key {
                origin,
                key,
                message,
            }) => (origin, key, message),
            other => panic!("expected a key error, got {other:?}"),
        }
    }

    #[test]
    fn empty_file_gives_spec_defaults() {
        let c = SimConfig::from_toml_str("", "x", &[]).unwrap();
        assert_eq!(c, SimConfig::default());
        assert_eq!(c.swarms.normal.count, 200);
        assert_eq!(c.swarms.doctor.count, 10);
        assert_eq!(c.swarms.normal.max_force, 180.0);
        assert_eq!(c.epidemic.t_immunity, f64::INFINITY);
    }

    #[test]
    fn partial_swarm_table_keeps_that_swarms_count() {
        let c = SimConfig::from_toml_str("[swarms.doctor]\nmax_speed = 200.0\n", "x", &[]).unwrap();
        assert_eq!(c.swarms.doctor.count, 10);
        assert_eq!(c.swarms.doctor.max_speed, 200.0);
        assert_eq!(c.swarms.normal.max_speed, 180.0);
    }

    #[test]
    fn integers_are_accepted_for_float_keys() {
        let c = SimConfig::from_toml_str("[world]\nwidth = 800\n", "x", &[]).unwrap();
        assert_eq!(c.world.width, 800.0);
    }

    #[test]
    fn round_trip_through_toml_is_exact() {
        let mut c = SimConfig::default();
        c.seed = 7;
        c.epidemic.t_immunity = 12.5;
        c.steering_model = SteeringModel::Adams;
        let back = SimConfig::from_toml_str(&c.to_toml(), "x", &[]).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn unknown_key_is_named_with_allowed_keys() {
        let (origin, key, message) = key_error("[swarms.normal]\ncuont = 3\n", &[]);
        assert_eq!(origin, "test.toml");
        assert_eq!(key, "swarms.normal.cuont");
        assert!(message.contains("unknown key"), "{message}");
        assert!(message.contains("count"), "lists allowed keys: {message}");
    }

    #[test]
    fn unknown_section_is_named() {
        let (_, key, _) = key_error("[wrold]\nwidth = 3\n", &[]);
        assert_eq!(key, "wrold");
    }

    #[test]
    fn wrong_type_is_named() {
        let (_, key, message) = key_error("[swarms.normal]\ncount = \"many\"\n", &[]);
        assert_eq!(key, "swarms.normal.count");
        assert!(message.contains("invalid type"), "{message}");
    }

    #[test]
    fn unknown_enum_value_lists_choices() {
        let (_, key, message) = key_error("steering_model = \"reynolds\"\n", &[]);
        assert_eq!(key, "steering_model");
        assert!(
            message.contains("shiffman") && message.contains("adams"),
            "{message}"
        );
    }

    #[test]
    fn missing_file_error_names_path_and_fix() {
        let err = SimConfig::load(Some(Path::new("/nonexistent/x.toml")), &[]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("/nonexistent/x.toml") && text.contains("assets/scenarios"),
            "{text}"
        );
    }
}
