//! The sections of a scenario file (`[world]`, `[swarms.*]`, `[epidemic]`, …) with their
//! defaults (docs/model.md) and the enums their keys choose from. Every field is a config key:
//! its `///` comment is the key's description (the panel's hover text, docs/configuration.md)
//! and its `#[reflect(@Spec…)]` says what it allows. Adding a key is adding a field here with
//! both, plus its default. No systems live here.

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use super::SimConfig;
use super::spec::{MAX_BOIDS, Spec};
use crate::sim::space::Boundary;
use crate::sim::swarm::Swarm;

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
    /// The flocking-dynamics report's own model: one perception radius (`alignment_radius`)
    /// for all three rules, separation from the mean of unit vectors away, each rule
    /// `w·(v_max·unit(·) − v)` with no truncation and no clamp (`max_force` unused).
    Report,
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
    /// Width of the world.
    #[reflect(@Spec::number().unit("px").at_least(1.0).at_most(1e8).slider(200.0, 20000.0).log())]
    pub width: f32,
    /// Height of the world.
    #[reflect(@Spec::number().unit("px").at_least(1.0).at_most(1e8).slider(200.0, 20000.0).log())]
    pub height: f32,
    /// wrap: a torus (distances take the short way round); bounce: walls reflect boids.
    #[reflect(@Spec::choice("boundary"))]
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

/// `[swarms.<name>]`: how many boids a swarm starts with and how they flock (docs/model.md
/// §4 defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(deny_unknown_fields)]
pub struct SwarmParams {
    /// Boids of this swarm spawned at the start (Normals may turn Antivax).
    #[reflect(@Spec::count("boids", MAX_BOIDS).on_reset())]
    pub count: u32,
    /// v_max: top speed; also the speed steers aim for.
    #[reflect(@Spec::number().unit("px/s").above(0.0).at_most(1e6))]
    pub max_speed: f32,
    /// F_max: each steering rule is truncated to it (the total under the hybrid model).
    #[reflect(@Spec::number().unit("px/s²").at_most(1e8).slider(0.0, 2000.0))]
    pub max_force: f32,
    /// v_min: a slower boid is sped up to it along its heading.
    #[reflect(@Spec::number().unit("px/s").at_most_key("max_speed"))]
    pub min_speed: f32,
    /// r_sep: neighbours of every swarm closer than this push apart.
    #[reflect(@Spec::radius())]
    pub separation_radius: f32,
    /// r_ali: same-swarm neighbours closer than this are matched in heading; flocks link at it.
    #[reflect(@Spec::radius())]
    pub alignment_radius: f32,
    /// r_coh: same-swarm neighbours closer than this pull toward their centre.
    #[reflect(@Spec::radius())]
    pub cohesion_radius: f32,
    /// w_sep: weight of separation (px³/s² under the pygame model).
    #[reflect(@Spec::weight(1e9))]
    pub separation_weight: f32,
    /// w_ali: weight of alignment.
    #[reflect(@Spec::weight(1e6))]
    pub alignment_weight: f32,
    /// w_coh: weight of cohesion.
    #[reflect(@Spec::weight(1e6))]
    pub cohesion_weight: f32,
    /// Half-angle a boid sees for the flocking rules (π = all round).
    #[reflect(@Spec::number().unit("rad").label("field of view (half-angle)")
        .at_most(std::f64::consts::PI + 1e-3).slider(0.1, std::f64::consts::PI + 1e-5))]
    pub fov: f32,
    /// Strength of a random acceleration: its velocity kick over a step is noise·√dt in a
    /// random direction (a Wiener increment, so frame-rate independent).
    #[reflect(@Spec::number().unit("px·s^-3/2").at_most(1e8).slider(0.0, 1000.0))]
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

/// `[epidemic]`: infection, cure, death and immunity (docs/model.md §5). Probabilities are per
/// second unless the unit says otherwise (`p_initial_*`, `p_death`, `cure_immunity_level`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(deny_unknown_fields)]
pub struct EpidemicConfig {
    /// Chance a Normal/Antivax boid starts infected.
    #[reflect(@Spec::probability("at spawn").on_reset())]
    pub p_initial_infect_normal: f64,
    /// Chance a Doctor starts infected.
    #[reflect(@Spec::probability("at spawn").on_reset())]
    pub p_initial_infect_doctor: f64,
    /// Infection chance per second of contact with an infected Normal/Antivax boid.
    #[reflect(@Spec::probability("per s"))]
    pub p_infect_normal: f64,
    /// Infection chance per second of contact with an infected Doctor.
    #[reflect(@Spec::probability("per s"))]
    pub p_infect_doctor: f64,
    /// Infection chance per second of every susceptible boid, without contact.
    #[reflect(@Spec::probability("per s"))]
    pub p_spontaneous_infect: f64,
    /// Cure chance per second of each doctor–infected pair within the doctor's radius.
    #[reflect(@Spec::probability("per s"))]
    pub p_cure: f64,
    /// Chance an infected boid dies when t_death has passed (else it recovers).
    #[reflect(@Spec::probability("at t_death").label("p_death"))]
    pub p_death: f64,
    /// Seconds from infection to death or recovery (inf: only doctors end an infection).
    #[reflect(@Spec::never_time())]
    pub t_death: f64,
    /// Seconds for immunity to wane to zero (inf: permanent, SIR; finite: SIRS).
    #[reflect(@Spec::never_time())]
    pub t_immunity: f64,
    /// Immunity right after recovery; infection chances are multiplied by 1 − immunity.
    #[reflect(@Spec::probability("").label("immunity after recovery"))]
    pub cure_immunity_level: f64,
    /// Contact radius of a Normal/Antivax boid (also its breeding range).
    #[reflect(@Spec::radius())]
    pub r_interact_normal: f32,
    /// Contact radius of a Doctor, which is also its cure radius.
    #[reflect(@Spec::radius())]
    pub r_interact_doctor: f32,
    /// Contact radius multiplier of an infected Normal/Antivax boid.
    #[reflect(@Spec::factor())]
    pub infected_radius_factor_normal: f32,
    /// Contact and cure radius multiplier of an infected Doctor.
    #[reflect(@Spec::factor())]
    pub infected_radius_factor_doctor: f32,
    /// Cure chance multiplier when the doctor is infected.
    #[reflect(@Spec::factor())]
    pub infected_cure_factor: f64,
    /// Whether infection passes between Doctors and the other boids (Normal and Antivax boids
    /// always infect each other; cures always cross).
    #[reflect(@Spec::flag())]
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

    /// Contact radius of a boid of `swarm`, debuffed when it is infected, px (docs/model.md
    /// §5.2).
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
    /// passive: only flock; seek_nearest: to the nearest infected; seek_centroid: to their
    /// centre.
    #[reflect(@Spec::choice("doctor behaviour"))]
    pub behavior: DoctorBehavior,
    /// How far seek_nearest looks for an infected boid.
    #[reflect(@Spec::module_radius(|c| c.doctors.behavior == DoctorBehavior::SeekNearest))]
    pub seek_radius: f32,
    /// Multiplier of the seek steer (at most seek_weight · F_max).
    #[reflect(@Spec::weight(1e6))]
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
    /// Chance a Normal boid is spawned as Antivax.
    #[reflect(@Spec::probability("at spawn").on_reset())]
    pub p_antivax: f64,
    /// Antivax boids flee doctors closer than this.
    #[reflect(@Spec::module_radius(|c| c.antivax.p_antivax > 0.0 || c.swarms.antivax.count > 0))]
    pub repulsion_radius: f32,
    /// Multiplier of the Antivax flight steer.
    #[reflect(@Spec::weight(1e6))]
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
    /// Turns births, aging and promotion to Doctor on.
    #[reflect(@Spec::flag())]
    pub enabled: bool,
    /// Breeding chance per second of a Normal/Antivax opposite-sex pair in contact.
    #[reflect(@Spec::probability("per s"))]
    pub p_offspring_normal: f64,
    /// Breeding chance per second of a Doctor opposite-sex pair in contact.
    #[reflect(@Spec::probability("per s"))]
    pub p_offspring_doctor: f64,
    /// Breeding chance multiplier of a pair when either parent is infected.
    #[reflect(@Spec::factor())]
    pub infected_offspring_factor: f64,
    /// Mean litter size of Normal/Antivax parents.
    #[reflect(@Spec::number().unit("boids").at_most(100.0).slider(0.0, 10.0))]
    pub litter_mean_normal: f64,
    /// Standard deviation of the Normal/Antivax litter size.
    #[reflect(@Spec::number().unit("boids").at_most(100.0).slider(0.0, 10.0))]
    pub litter_sd_normal: f64,
    /// Mean litter size of Doctor parents.
    #[reflect(@Spec::number().unit("boids").at_most(100.0).slider(0.0, 10.0))]
    pub litter_mean_doctor: f64,
    /// Standard deviation of the Doctor litter size.
    #[reflect(@Spec::number().unit("boids").at_most(100.0).slider(0.0, 10.0))]
    pub litter_sd_doctor: f64,
    /// Seconds both parents wait before they can breed again.
    #[reflect(@Spec::time(0.0, 60.0))]
    pub cooldown: f64,
    /// Age from which any boid may breed and a Normal may become a Doctor (the initial
    /// population starts at age 0).
    #[reflect(@Spec::time(0.0, 60.0))]
    pub t_adult: f64,
    /// Chance per second an adult Normal becomes a Doctor.
    #[reflect(@Spec::probability("per s"))]
    pub p_become_doctor: f64,
    /// No births while this many boids are alive; a litter is cut to fit.
    #[reflect(@Spec::count("boids", MAX_BOIDS))]
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

fn predators_on(c: &SimConfig) -> bool {
    c.predators.count > 0
}

/// `[predators]`: hunters that chase isolated boids (docs/model.md §7).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(deny_unknown_fields)]
pub struct PredatorsConfig {
    /// Predators spawned at the start (0 = none).
    #[reflect(@Spec::count("predators", 100_000.0).slider(0.0, 50.0).on_reset())]
    pub count: u32,
    /// Top speed of a predator (it has no minimum).
    #[reflect(@Spec::number().unit("px/s").above(0.0).at_most(1e6))]
    pub speed: f32,
    /// Steering limit of a predator.
    #[reflect(@Spec::number().unit("px/s²").at_most(1e8).slider(0.0, 2000.0))]
    pub max_force: f32,
    /// A boid closer than this to a predator is caught.
    #[reflect(@Spec::module_radius(predators_on))]
    pub catch_radius: f32,
    /// Predators only see boids closer than this.
    #[reflect(@Spec::module_radius(predators_on))]
    pub detection_range: f32,
    /// Neighbours within this radius make a candidate less isolated (a worse target).
    #[reflect(@Spec::module_radius(predators_on))]
    pub isolation_radius: f32,
    /// Boids closer than this to a predator flee and flock less.
    #[reflect(@Spec::module_radius(predators_on))]
    pub fear_radius: f32,
    /// remove: a caught boid is gone; respawn: it reappears at a random edge heading inward.
    #[reflect(@Spec::choice("on catch"))]
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
