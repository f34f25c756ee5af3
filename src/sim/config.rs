//! The run configuration: every model parameter, its default from docs/model.md, TOML loading with dotted
//! `--set` overrides, and validation with one-line errors that name the file, the key and what is
//! allowed. The live `SimConfig` resource is what every simulation system reads; the UI edits it.
//! No systems live here.

use std::path::Path;

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use crate::sim::agent::Swarm;
use crate::sim::space::{Boundary, Space};

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

    /// Checks every value against its allowed range (first problem found).
    pub fn validate(&self, origin: &str) -> Result<(), ConfigError> {
        let mut v = Validator {
            origin,
            error: None,
        };
        v.int_at_most("seed", self.seed, i64::MAX as u64, "fits a TOML integer");
        v.range("dt", self.dt, Open(0.0), Closed(1.0), "s");
        v.range("duration", self.duration, Closed(0.0), Closed(1e9), "s");
        v.range(
            "sample_every",
            self.sample_every,
            Open(0.0),
            Closed(1e9),
            "s",
        );
        v.range(
            "agents_every",
            self.agents_every,
            Closed(0.0),
            Closed(1e9),
            "s (0 = no agents.csv)",
        );
        v.range(
            "world.width",
            self.world.width as f64,
            Closed(1.0),
            Closed(1e8),
            "px",
        );
        v.range(
            "world.height",
            self.world.height as f64,
            Closed(1.0),
            Closed(1e8),
            "px",
        );
        // Minimum-image distances are unique only below half the world (docs/model.md §2).
        let half = 0.5 * self.world.width.min(self.world.height) as f64;
        let radius_max = if self.world.boundary == Boundary::Wrap {
            Open(half)
        } else {
            Closed(1e8)
        };
        // Radii of modules that are off are only checked once the module is on.
        let seek_active = self.doctors.behavior == DoctorBehavior::SeekNearest;
        let antivax_active = self.antivax.p_antivax > 0.0 || self.swarms.antivax.count > 0;
        let predators_active = self.predators.count > 0;
        for swarm in Swarm::ALL {
            let p = self.swarms.get(swarm);
            let k = |name: &str| format!("swarms.{}.{name}", swarm.key());
            v.int_at_most(&k("count"), p.count as u64, 20_000_000, "boids");
            v.range(
                &k("max_speed"),
                p.max_speed as f64,
                Open(0.0),
                Closed(1e6),
                "px/s",
            );
            v.range(
                &k("max_force"),
                p.max_force as f64,
                Closed(0.0),
                Closed(1e8),
                "px/s²",
            );
            v.range(
                &k("min_speed"),
                p.min_speed as f64,
                Closed(0.0),
                Closed(p.max_speed as f64),
                "px/s (at most max_speed)",
            );
            v.range(
                &k("separation_radius"),
                p.separation_radius as f64,
                Closed(0.0),
                radius_max,
                RADIUS_RULE,
            );
            v.range(
                &k("alignment_radius"),
                p.alignment_radius as f64,
                Closed(0.0),
                radius_max,
                RADIUS_RULE,
            );
            v.range(
                &k("cohesion_radius"),
                p.cohesion_radius as f64,
                Closed(0.0),
                radius_max,
                RADIUS_RULE,
            );
            v.range(
                &k("separation_weight"),
                p.separation_weight as f64,
                Closed(0.0),
                Closed(1e9),
                "(px³/s² under the pygame model)",
            );
            v.range(
                &k("alignment_weight"),
                p.alignment_weight as f64,
                Closed(0.0),
                Closed(1e6),
                "",
            );
            v.range(
                &k("cohesion_weight"),
                p.cohesion_weight as f64,
                Closed(0.0),
                Closed(1e6),
                "",
            );
            v.range(
                &k("fov"),
                p.fov as f64,
                Closed(0.0),
                Closed(std::f64::consts::PI + 1e-3),
                "rad half-angle (π = all round)",
            );
            v.range(
                &k("noise"),
                p.noise as f64,
                Closed(0.0),
                Closed(1e8),
                "px/s²",
            );
        }
        let e = &self.epidemic;
        for (key, p) in [
            (
                "epidemic.p_initial_infect_normal",
                e.p_initial_infect_normal,
            ),
            (
                "epidemic.p_initial_infect_doctor",
                e.p_initial_infect_doctor,
            ),
            ("epidemic.p_infect_normal", e.p_infect_normal),
            ("epidemic.p_infect_doctor", e.p_infect_doctor),
            ("epidemic.p_spontaneous_infect", e.p_spontaneous_infect),
            ("epidemic.p_cure", e.p_cure),
            ("epidemic.p_death", e.p_death),
            ("epidemic.cure_immunity_level", e.cure_immunity_level),
            ("epidemic.infected_cure_factor", e.infected_cure_factor),
            ("antivax.p_antivax", self.antivax.p_antivax),
            (
                "population.p_offspring_normal",
                self.population.p_offspring_normal,
            ),
            (
                "population.p_offspring_doctor",
                self.population.p_offspring_doctor,
            ),
            (
                "population.infected_offspring_factor",
                self.population.infected_offspring_factor,
            ),
            (
                "population.p_become_doctor",
                self.population.p_become_doctor,
            ),
        ] {
            v.range(key, p, Closed(0.0), Closed(1.0), "a probability");
        }
        v.time("epidemic.t_death", e.t_death);
        v.time("epidemic.t_immunity", e.t_immunity);
        v.range(
            "epidemic.r_interact_normal",
            e.r_interact_normal as f64,
            Closed(0.0),
            radius_max,
            RADIUS_RULE,
        );
        v.range(
            "epidemic.r_interact_doctor",
            e.r_interact_doctor as f64,
            Closed(0.0),
            radius_max,
            RADIUS_RULE,
        );
        v.range(
            "epidemic.infected_radius_factor_normal",
            e.infected_radius_factor_normal as f64,
            Closed(0.0),
            Closed(1.0),
            "a multiplier",
        );
        v.range(
            "epidemic.infected_radius_factor_doctor",
            e.infected_radius_factor_doctor as f64,
            Closed(0.0),
            Closed(1.0),
            "a multiplier",
        );
        v.range(
            "doctors.seek_radius",
            self.doctors.seek_radius as f64,
            Closed(0.0),
            if seek_active { radius_max } else { Closed(1e8) },
            RADIUS_RULE,
        );
        v.range(
            "doctors.seek_weight",
            self.doctors.seek_weight as f64,
            Closed(0.0),
            Closed(1e6),
            "",
        );
        v.range(
            "antivax.repulsion_radius",
            self.antivax.repulsion_radius as f64,
            Closed(0.0),
            if antivax_active {
                radius_max
            } else {
                Closed(1e8)
            },
            RADIUS_RULE,
        );
        v.range(
            "antivax.repulsion_weight",
            self.antivax.repulsion_weight as f64,
            Closed(0.0),
            Closed(1e6),
            "",
        );
        let pop = &self.population;
        v.range(
            "population.litter_mean_normal",
            pop.litter_mean_normal,
            Closed(0.0),
            Closed(100.0),
            "boids",
        );
        v.range(
            "population.litter_sd_normal",
            pop.litter_sd_normal,
            Closed(0.0),
            Closed(100.0),
            "boids",
        );
        v.range(
            "population.litter_mean_doctor",
            pop.litter_mean_doctor,
            Closed(0.0),
            Closed(100.0),
            "boids",
        );
        v.range(
            "population.litter_sd_doctor",
            pop.litter_sd_doctor,
            Closed(0.0),
            Closed(100.0),
            "boids",
        );
        v.range(
            "population.cooldown",
            pop.cooldown,
            Closed(0.0),
            Closed(1e9),
            "s",
        );
        v.range(
            "population.t_adult",
            pop.t_adult,
            Closed(0.0),
            Closed(1e9),
            "s",
        );
        v.int_at_most(
            "population.max_population",
            pop.max_population as u64,
            20_000_000,
            "boids",
        );
        let pr = &self.predators;
        v.int_at_most("predators.count", pr.count as u64, 100_000, "predators");
        v.range(
            "predators.speed",
            pr.speed as f64,
            Open(0.0),
            Closed(1e6),
            "px/s",
        );
        v.range(
            "predators.max_force",
            pr.max_force as f64,
            Closed(0.0),
            Closed(1e8),
            "px/s²",
        );
        let predator_limit = if predators_active {
            radius_max
        } else {
            Closed(1e8)
        };
        for (key, r) in [
            ("predators.catch_radius", pr.catch_radius),
            ("predators.detection_range", pr.detection_range),
            ("predators.isolation_radius", pr.isolation_radius),
            ("predators.fear_radius", pr.fear_radius),
        ] {
            v.range(key, r as f64, Closed(0.0), predator_limit, RADIUS_RULE);
        }
        match v.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// What a radius must respect, for error messages.
const RADIUS_RULE: &str = "px (below half the smaller world side on a torus)";

/// One end of an allowed range.
#[derive(Clone, Copy)]
enum Bound {
    Open(f64),
    Closed(f64),
}
use Bound::{Closed, Open};

struct Validator<'a> {
    origin: &'a str,
    error: Option<ConfigError>,
}

impl Validator<'_> {
    fn fail(&mut self, key: &str, message: String) {
        if self.error.is_none() {
            self.error = Some(ConfigError::Key {
                origin: self.origin.to_string(),
                key: key.to_string(),
                message,
            });
        }
    }

    fn range(&mut self, key: &str, value: f64, lo: Bound, hi: Bound, unit: &str) {
        if !value.is_finite() {
            self.fail(
                key,
                format!(
                    "{value} is not a finite number; allowed: {}",
                    describe(lo, hi, unit)
                ),
            );
            return;
        }
        let ok_lo = match lo {
            Open(b) => value > b,
            Closed(b) => value >= b,
        };
        let ok_hi = match hi {
            Open(b) => value < b,
            Closed(b) => value <= b,
        };
        if !(ok_lo && ok_hi) {
            self.fail(
                key,
                format!(
                    "{value} is out of range; allowed: {}",
                    describe(lo, hi, unit)
                ),
            );
        }
    }

    /// A duration that may be `inf` (never) but must be positive and not NaN.
    fn time(&mut self, key: &str, value: f64) {
        if value.is_nan() || value <= 0.0 {
            self.fail(
                key,
                format!("{value} is out of range; allowed: a time > 0 s, or inf for never"),
            );
        }
    }

    fn int_at_most(&mut self, key: &str, value: u64, max: u64, what: &str) {
        if value > max {
            self.fail(
                key,
                format!("{value} is out of range; allowed: 0 ..= {max} ({what})"),
            );
        }
    }
}

fn describe(lo: Bound, hi: Bound, unit: &str) -> String {
    let l = match lo {
        Open(b) => format!("> {b}"),
        Closed(b) => format!("≥ {b}"),
    };
    let h = match hi {
        Open(b) => format!("< {b}"),
        Closed(b) => format!("≤ {b}"),
    };
    if unit.is_empty() {
        format!("{l} and {h}")
    } else {
        format!("{l} and {h}, {unit}")
    }
}

/// Turns serde's messages into ones that also say what is allowed.
fn describe_serde_error(message: &str) -> String {
    let m = one_line(message);
    if let Some(rest) = m.strip_prefix("unknown field ") {
        return format!("unknown key {rest}; remove it or fix its spelling");
    }
    if let Some(rest) = m.strip_prefix("unknown variant ") {
        return format!("unknown value {rest}");
    }
    m
}

fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('|') && *l != "^" && !l.starts_with("in `"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The value at a dotted key of a config table.
pub fn table_get<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let mut parts = key.split('.').peekable();
    let mut node = table;
    while let Some(part) = parts.next() {
        let v = node.get(part)?;
        if parts.peek().is_none() {
            return Some(v);
        }
        node = v.as_table()?;
    }
    None
}

/// Splits `KEY=VALUE`; the value is TOML (`1.5`, `true`, `"x"`) or, failing that, a bare string.
fn parse_set(arg: &str) -> Result<(String, toml::Value), ConfigError> {
    let (key, raw) = arg
        .split_once('=')
        .ok_or_else(|| ConfigError::SetSyntax { arg: arg.into() })?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(|part| part.trim().is_empty()) {
        return Err(ConfigError::SetSyntax { arg: arg.into() });
    }
    let raw = raw.trim();
    let value = format!("v = {raw}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    Ok((key.to_string(), value))
}

/// Sets `a.b.c = value` in a table, creating intermediate tables.
fn insert_dotted(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let mut parts: Vec<&str> = key.split('.').map(str::trim).collect();
    let last = parts.pop().expect("split yields one part");
    let mut cur = table;
    for part in parts {
        let entry = cur
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = entry
            .as_table_mut()
            .ok_or_else(|| format!("`{part}` is a value, not a section"))?;
    }
    cur.insert(last.to_string(), value);
    Ok(())
}

/// Overlays `top` on `base`, table by table; keys only in `top` are kept (and later rejected
/// by `deny_unknown_fields` if they are not real keys).
fn merge_values(base: &mut toml::Value, top: toml::Value) {
    match (base, top) {
        (toml::Value::Table(b), toml::Value::Table(t)) => {
            for (k, v) in t {
                match b.get_mut(&k) {
                    Some(slot) => merge_values(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_error(text: &str, sets: &[&str]) -> (String, String, String) {
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
    fn out_of_range_values_are_rejected() {
        for (text, expect_key) in [
            (
                "[swarms.normal]\nseparation_radius = -1.0\n",
                "swarms.normal.separation_radius",
            ),
            (
                "[swarms.doctor]\nmin_speed = 300.0\n",
                "swarms.doctor.min_speed",
            ),
            (
                "[epidemic]\np_infect_normal = 1.5\n",
                "epidemic.p_infect_normal",
            ),
            ("dt = 0.0\n", "dt"),
            ("dt = -0.01\n", "dt"),
            ("dt = nan\n", "dt"),
            ("[world]\nwidth = inf\n", "world.width"),
            ("[epidemic]\nt_death = 0.0\n", "epidemic.t_death"),
            (
                "[swarms.normal]\nalignment_radius = 600.0\n",
                "swarms.normal.alignment_radius",
            ),
        ] {
            let (_, key, message) = key_error(text, &[]);
            assert_eq!(key, expect_key, "{text}");
            assert!(message.contains("allowed"), "{message}");
        }
    }

    #[test]
    fn edits_apply_one_key_and_are_validated() {
        let c = SimConfig::default();
        let e = c
            .with_edit(
                "swarms.doctor.max_speed",
                toml::Value::Float(200.0),
                "panel",
            )
            .unwrap();
        assert_eq!(e.swarms.doctor.max_speed, 200.0);
        assert_eq!(e.swarms.normal.max_speed, 180.0);
        let e = c
            .with_edit(
                "doctors.behavior",
                toml::Value::String("seek_centroid".into()),
                "panel",
            )
            .unwrap();
        assert_eq!(e.doctors.behavior, DoctorBehavior::SeekCentroid);
        let err = c
            .with_edit(
                "swarms.normal.min_speed",
                toml::Value::Float(500.0),
                "panel",
            )
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("panel: `swarms.normal.min_speed`"),
            "{err}"
        );
        assert!(
            c.with_edit("swarms.normal.nope", toml::Value::Float(1.0), "panel")
                .is_err()
        );
    }

    #[test]
    fn radii_of_modules_that_are_off_are_not_checked() {
        // A 500 px world: the default 300 px seek radius is too long, but doctors are passive.
        let small = "[world]\nwidth = 500.0\nheight = 500.0\n[antivax]\np_antivax = 0.0\n";
        SimConfig::from_toml_str(small, "x", &[]).unwrap();
        let (_, key, _) = key_error(
            &format!("{small}[doctors]\nbehavior = \"seek_nearest\"\n"),
            &[],
        );
        assert_eq!(key, "doctors.seek_radius");
        let (_, key, _) = key_error(&format!("{small}[predators]\ncount = 1\n"), &[]);
        assert_eq!(key, "predators.detection_range");
    }

    #[test]
    fn infinite_times_mean_never() {
        let c = SimConfig::from_toml_str("[epidemic]\nt_death = inf\n", "x", &[]).unwrap();
        assert!(c.epidemic.t_death.is_infinite());
    }

    #[test]
    fn set_overrides_dotted_keys_with_typed_values() {
        let sets = [
            "swarms.normal.count=500".to_string(),
            "steering_model=hybrid".to_string(),
            "world.boundary=\"bounce\"".to_string(),
            "epidemic.cross_swarm_infection=true".to_string(),
        ];
        let c = SimConfig::from_toml_str("", "x", &sets).unwrap();
        assert_eq!(c.swarms.normal.count, 500);
        assert_eq!(c.steering_model, SteeringModel::Hybrid);
        assert_eq!(c.world.boundary, Boundary::Bounce);
        assert!(c.epidemic.cross_swarm_infection);
    }

    #[test]
    fn bad_set_is_blamed_on_set() {
        let (origin, key, _) = key_error("", &["swarms.normal.speed=3"]);
        assert_eq!(origin, "--set");
        assert_eq!(key, "swarms.normal.speed");
        let (origin, key, _) = key_error("", &["swarms.normal.count=-3"]);
        assert_eq!(
            (origin.as_str(), key.as_str()),
            ("--set", "swarms.normal.count")
        );
        assert!(matches!(
            SimConfig::from_toml_str("", "x", &["novalue".into()]),
            Err(ConfigError::SetSyntax { .. })
        ));
    }

    #[test]
    fn syntax_error_is_one_line() {
        let err = SimConfig::from_toml_str("seed = = 3", "bad.toml", &[]).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("bad.toml: not valid TOML"), "{text}");
        assert!(!text.contains('\n'), "{text}");
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
