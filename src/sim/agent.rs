//! Boids (docs/model.md §1): their components, the `boid` spawn bundle, and the start of a run —
//! despawn everything, reseed, spawn the initial population with its initial infections and Antivax
//! conversions. Systems run in `SimSystems::Spawn`.

use bevy::prelude::*;
use rand::Rng;
use std::f32::consts::TAU;

use crate::sim::config::SimConfig;
use crate::sim::rng::SimRng;
use crate::sim::schedule::SimSystems;
use crate::sim::swarm::Swarm;

/// World position, px; inside the world after every integration.
#[derive(
    Component,
    Reflect,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Deref,
    DerefMut,
    serde::Serialize,
    serde::Deserialize,
)]
#[reflect(Component)]
pub struct Position(pub Vec2);

/// Velocity, px/s.
#[derive(
    Component,
    Reflect,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Deref,
    DerefMut,
    serde::Serialize,
    serde::Deserialize,
)]
#[reflect(Component)]
pub struct Velocity(pub Vec2);

/// Stable spawn-order id: results never depend on `Entity` numbering.
#[derive(
    Component,
    Reflect,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
#[reflect(Component)]
pub struct AgentId(pub u64);

/// Marker of every boid (not predators); the KD-tree resource is keyed on it.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
#[reflect(Component)]
pub struct Boid;

/// Disease state (docs/model.md §5.2). Times are simulation seconds.
#[derive(Reflect, Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Disease {
    /// Can be infected.
    #[default]
    Susceptible,
    /// Infectious since the given time.
    Infected {
        /// When the infection happened, s.
        since: f64,
    },
    /// Recovered (cured or survived) at `since`, with the immunity it had then.
    Recovered {
        /// When the recovery happened, s.
        since: f64,
        /// Immunity at `since`, 0..1; decays linearly to 0 over `t_immunity`.
        immunity: f64,
    },
}

impl Disease {
    /// Whether the boid is infectious.
    pub fn is_infected(&self) -> bool {
        matches!(self, Disease::Infected { .. })
    }

    /// Whether the boid is susceptible (never infected or immunity fully waned).
    pub fn is_susceptible(&self) -> bool {
        matches!(self, Disease::Susceptible)
    }

    /// Whether the boid has recovered and still counts as R.
    pub fn is_recovered(&self) -> bool {
        matches!(self, Disease::Recovered { .. })
    }

    /// When a recovered boid's immunity has waned to zero (`None` if not recovered; infinite
    /// when immunity is permanent): `t_immunity` after recovery, or at once if it recovered
    /// with no immunity.
    pub fn immunity_ends(&self, t_immunity: f64) -> Option<f64> {
        match *self {
            Disease::Recovered { since, immunity } => Some(if immunity <= 0.0 {
                since
            } else {
                since + t_immunity
            }),
            _ => None,
        }
    }

    /// Current immunity at time `now`: linear decay to zero over `t_immunity` (∞ = permanent).
    pub fn immunity(&self, now: f64, t_immunity: f64) -> f64 {
        match *self {
            Disease::Recovered { since, immunity } => {
                if t_immunity.is_infinite() {
                    immunity
                } else {
                    (immunity * (1.0 - (now - since) / t_immunity)).clamp(0.0, 1.0)
                }
            }
            _ => 0.0,
        }
    }
}

/// A boid detected by test-and-isolate (docs/model.md §11): it stays where it is, infects no
/// one and attracts no one until its infection ends.
#[derive(
    Component, Reflect, Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize,
)]
#[reflect(Component)]
pub struct Isolated {
    /// When it was detected, s.
    pub since: f64,
}

/// Disease state plus age.
#[derive(
    Component, Reflect, Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize,
)]
#[reflect(Component)]
pub struct Health {
    /// S / I / R.
    pub disease: Disease,
    /// Age, s.
    pub age: f64,
}

/// Biological sex, for reproduction (docs/model.md §6).
#[derive(
    Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize,
)]
pub enum Sex {
    /// Female.
    #[default]
    Female,
    /// Male.
    Male,
}

/// Reproduction state: sex and when the boid may breed again (docs/model.md §6).
#[derive(
    Component, Reflect, Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize,
)]
#[reflect(Component)]
pub struct Breeding {
    /// 50/50 at spawn.
    pub sex: Sex,
    /// Simulation time from which the boid may breed, s.
    pub ready_at: f64,
}

/// The next id to hand out.
#[derive(Resource, Default, Debug)]
pub struct IdCounter(pub u64);

impl IdCounter {
    /// Takes the next id.
    pub fn take(&mut self) -> AgentId {
        let id = AgentId(self.0);
        self.0 += 1;
        id
    }
}

/// Set to start (or restart) a run at the next step; a `Some` seed replaces the config's.
#[derive(Resource, Debug, Default)]
pub struct ResetRequest {
    /// Whether a reset is pending.
    pub pending: bool,
    /// New seed, if any.
    pub seed: Option<u64>,
}

/// Triggered at the start of every run, after the old entities are gone and before the new
/// population is spawned: modules reset their own resources in observers.
#[derive(Event, Debug, Clone, Copy)]
pub struct RunStarted {
    /// The run's seed.
    pub seed: u64,
}

/// A boid's components, ready to spawn.
pub fn boid(
    id: AgentId,
    swarm: Swarm,
    position: Vec2,
    velocity: Vec2,
    health: Health,
    breeding: Breeding,
) -> (Boid, AgentId, Swarm, Position, Velocity, Health, Breeding) {
    (
        Boid,
        id,
        swarm,
        Position(position),
        Velocity(velocity),
        health,
        breeding,
    )
}

/// One boid of the initial population, before it is spawned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recruit {
    /// Swarm after Antivax conversion.
    pub swarm: Swarm,
    /// Position, px.
    pub position: Vec2,
    /// Velocity, px/s.
    pub velocity: Vec2,
    /// Infected at t = 0.
    pub infected: bool,
    /// Sex.
    pub sex: Sex,
}

/// Draws the initial population (docs/model.md §1, §5.2, §5.4): uniform positions, random headings
/// at v_max, Antivax conversion of Normals, initial infections, 50/50 sex. Swarms are drawn in
/// `Swarm::ALL` order, so the result depends only on the config and the generator.
pub fn recruit_population(config: &SimConfig, rng: &mut impl Rng) -> Vec<Recruit> {
    let size = config.space().size();
    let mut out = Vec::new();
    for swarm in Swarm::ALL {
        let params = config.swarms.get(swarm);
        for _ in 0..params.count {
            let position = Vec2::new(rng.random::<f32>(), rng.random::<f32>()) * size;
            let heading = rng.random::<f32>() * TAU;
            let converted =
                swarm == Swarm::Normal && rng.random::<f64>() < config.antivax.p_antivax;
            let swarm = if converted { Swarm::Antivax } else { swarm };
            let p_initial = match swarm {
                Swarm::Doctor => config.epidemic.p_initial_infect_doctor,
                _ => config.epidemic.p_initial_infect_normal,
            };
            let infected = rng.random::<f64>() < p_initial;
            let sex = if rng.random::<bool>() {
                Sex::Male
            } else {
                Sex::Female
            };
            // Antivax boids fly at their own swarm's speed.
            let speed = config.swarms.get(swarm).max_speed;
            out.push(Recruit {
                swarm,
                position: config.space().confine(position, Vec2::ZERO).0,
                velocity: crate::sim::math::from_angle(heading) * speed,
                infected,
                sex,
            });
        }
    }
    out
}

pub(super) fn plugin(app: &mut App) {
    app.register_type::<(Position, Velocity, AgentId, Boid, Swarm, Health, Breeding)>()
        .init_resource::<IdCounter>()
        .insert_resource(ResetRequest {
            pending: true,
            seed: None,
        })
        .add_systems(
            FixedUpdate,
            begin_run
                .run_if(|r: Res<ResetRequest>| r.pending)
                .in_set(SimSystems::Spawn),
        );
}

/// Despawns every simulated entity (boids and predators: whatever has a `Position`).
pub fn despawn_simulated(world: &mut World) {
    let doomed: Vec<Entity> = world
        .query_filtered::<Entity, With<Position>>()
        .iter(world)
        .collect();
    for entity in doomed {
        world.despawn(entity);
    }
}

/// Starts a run: despawns every simulated entity, reseeds, tells the other modules
/// (`RunStarted`: each resets what it owns, the clock included), then spawns the initial
/// population.
fn begin_run(world: &mut World) {
    let new_seed = {
        let mut request = world.resource_mut::<ResetRequest>();
        request.pending = false;
        request.seed.take()
    };
    if let Some(seed) = new_seed {
        world.resource_mut::<SimConfig>().seed = seed;
    }
    let config = world.resource::<SimConfig>().clone();
    despawn_simulated(world);
    world.insert_resource(IdCounter::default());
    world.insert_resource(SimRng::new(config.seed));
    world.trigger(RunStarted { seed: config.seed });

    let recruits = recruit_population(&config, &mut world.resource_mut::<SimRng>().0);
    // Ids in recruit order, as `IdCounter::take` hands them out.
    let first = {
        let mut ids = world.resource_mut::<IdCounter>();
        let first = ids.0;
        ids.0 += recruits.len() as u64;
        first
    };
    // One batch: the table is sized once for the whole population (spawning one at a time
    // doubles it, leaving up to half unused), and no copy of the bundles is kept meanwhile.
    world.spawn_batch(recruits.into_iter().enumerate().map(move |(k, r)| {
        let disease = if r.infected {
            Disease::Infected { since: 0.0 }
        } else {
            Disease::Susceptible
        };
        boid(
            AgentId(first + k as u64),
            r.swarm,
            r.position,
            r.velocity,
            Health { disease, age: 0.0 },
            Breeding {
                sex: r.sex,
                ready_at: 0.0,
            },
        )
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn recruitment_follows_counts_and_is_seeded() {
        let mut config = SimConfig::default();
        config.swarms.normal.count = 1000;
        config.swarms.doctor.count = 50;
        config.antivax.p_antivax = 0.1;
        config.epidemic.p_initial_infect_normal = 0.05;
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        let a = recruit_population(&config, &mut rng);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        assert_eq!(a, recruit_population(&config, &mut rng));
        assert_eq!(a.len(), 1050);
        let doctors = a.iter().filter(|r| r.swarm == Swarm::Doctor).count();
        let antivax = a.iter().filter(|r| r.swarm == Swarm::Antivax).count();
        assert_eq!(doctors, 50);
        // Binomial(1000, 0.1): mean 100, sd 9.5.
        assert!((60..140).contains(&antivax), "{antivax}");
        let space = config.space();
        assert!(a.iter().all(|r| space.contains(r.position)));
        assert!(a.iter().all(|r| (r.velocity.length() - 180.0).abs() < 1e-3));
    }

    #[test]
    fn immunity_decays_linearly() {
        let d = Disease::Recovered {
            since: 10.0,
            immunity: 0.8,
        };
        assert_eq!(d.immunity(10.0, f64::INFINITY), 0.8);
        assert!((d.immunity(15.0, 20.0) - 0.6).abs() < 1e-12);
        assert_eq!(d.immunity(40.0, 20.0), 0.0);
        assert_eq!(Disease::Susceptible.immunity(3.0, 1.0), 0.0);
    }
}
