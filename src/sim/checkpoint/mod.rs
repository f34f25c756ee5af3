//! Checkpoints (docs/model.md §12): the whole state of a run at a step boundary — every
//! simulated entity with every component, the clock, the id counter, the spawn generator, the
//! live configuration, the interventions' state and every log the outputs are built from — as
//! a value ([`Checkpoint`]) that can be restored into any simulation or app bit-exactly, and as
//! bytes ([`format`]: a header with magic, versions and a CRC-32, then a postcard body).
//!
//! Nothing can be left out silently: [`capture`] refuses an entity that carries a component it
//! does not save (engine components the view re-attaches aside), and tests/checkpoints.rs fails
//! when a resource of the simulation is in neither [`saved_resources`] nor
//! [`rebuilt_resources`]. No systems live here.

pub mod format;

use std::any::type_name;

use bevy::prelude::*;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

use crate::sim::agent::{
    AgentId, Boid, Breeding, Health, IdCounter, Isolated, Position, ResetRequest, Velocity, boid,
    despawn_simulated,
};
use crate::sim::clock::SimClock;
use crate::sim::config::SimConfig;
use crate::sim::doctors::InfectedIndex;
use crate::sim::epidemic::{DecidingAside, EpidemicStats};
use crate::sim::flocking::WeightGain;
use crate::sim::interventions::InterventionLog;
use crate::sim::metrics::{ActiveInterventions, MetricsLog, Tally};
use crate::sim::neighbours::{IndexState, Snapshot};
use crate::sim::predators::{Predator, PredatorIndex, PreyFlight};
use crate::sim::rng::SimRng;
use crate::sim::schedule::StepMode;
use crate::sim::steering::Steering;
use crate::sim::swarm::Swarm;
use crate::sim::transmission::TransmissionLog;

pub use format::{CheckpointError, decode, encode};

/// One boid, every component it carries (its `Name` is rebuilt from swarm and id).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoidState {
    /// Stable id.
    pub id: AgentId,
    /// Swarm.
    pub swarm: Swarm,
    /// Position, px.
    pub position: Position,
    /// Velocity, px/s.
    pub velocity: Velocity,
    /// Disease state and age.
    pub health: Health,
    /// Sex and when it may breed again.
    pub breeding: Breeding,
    /// Detected by test-and-isolate, if it is.
    pub isolated: Option<Isolated>,
}

/// One predator, every component it carries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredatorState {
    /// Its id, target, steering and catches.
    pub predator: Predator,
    /// Position, px.
    pub position: Position,
    /// Velocity, px/s.
    pub velocity: Velocity,
}

/// A simulated entity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum EntityState {
    /// A boid.
    Boid(BoidState),
    /// A predator.
    Predator(PredatorState),
}

/// Where a branch came from: the checkpoint it was resumed from and what it changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parent {
    /// The checkpoint file, as given.
    pub file: String,
    /// The moment it branched, s (a step boundary).
    pub time_s: f64,
    /// The `--set` changes, as given (`KEY=VALUE`).
    pub changed: Vec<String>,
}

/// The headless run's own state: the `agents.csv` rows written so far (they are in no log) and
/// when the next are due.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// Every row of `agents.csv` after its header, as written.
    pub agents_rows: String,
    /// Time of the next agents snapshot, s.
    pub agents_next_due: f64,
    /// Time of the last one written, s.
    pub agents_last: Option<f64>,
}

/// The whole state of a run at a step boundary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The live configuration as TOML (with any active intervention's `set` in force).
    pub config: String,
    /// Step count and simulated time.
    pub clock: SimClock,
    /// The next boid id.
    pub next_id: u64,
    /// The sequential generator (spawning).
    pub rng: Pcg64,
    /// Every simulated entity, in the order the world holds them.
    pub entities: Vec<EntityState>,
    /// Every metrics sample, and when the next is due.
    pub metrics: MetricsLog,
    /// Cumulative per-swarm counters.
    pub tally: Tally,
    /// The epidemic's record (peak, eradication, event counts, who was ever infected).
    pub stats: EpidemicStats,
    /// Every infection.
    pub transmissions: TransmissionLog,
    /// The interventions' state and their starts and ends.
    pub interventions: InterventionLog,
    /// Interventions active (sampled into `metrics.csv`).
    pub active_interventions: u32,
    /// The headless run's own state (none in the app).
    pub run: Option<RunState>,
    /// Set on a branch: where it came from.
    pub parent: Option<Parent>,
}

impl Checkpoint {
    /// The configuration it holds.
    pub fn config(&self) -> Result<SimConfig, CheckpointError> {
        SimConfig::from_toml_str(&self.config, "checkpoint", &[])
            .map_err(|e| CheckpointError::Config(e.to_string()))
    }

    /// Simulated time, s.
    pub fn time(&self) -> f64 {
        self.clock.time
    }

    /// Boids in it.
    pub fn boids(&self) -> usize {
        self.entities
            .iter()
            .filter(|e| matches!(e, EntityState::Boid(_)))
            .count()
    }
}

/// The components a checkpoint saves, by type name.
pub fn saved_components() -> [&'static str; 9] {
    [
        type_name::<Boid>(),
        type_name::<AgentId>(),
        type_name::<Swarm>(),
        type_name::<Position>(),
        type_name::<Velocity>(),
        type_name::<Health>(),
        type_name::<Breeding>(),
        type_name::<Isolated>(),
        type_name::<Predator>(),
    ]
}

/// The simulation's resources a checkpoint saves, by type name.
pub fn saved_resources() -> [&'static str; 10] {
    [
        type_name::<SimConfig>(),
        type_name::<SimClock>(),
        type_name::<IdCounter>(),
        type_name::<SimRng>(),
        type_name::<MetricsLog>(),
        type_name::<Tally>(),
        type_name::<EpidemicStats>(),
        type_name::<TransmissionLog>(),
        type_name::<InterventionLog>(),
        type_name::<ActiveInterventions>(),
    ]
}

/// The simulation's resources every step rebuilds before reading (or that only steer the
/// driver): a restore empties them.
pub fn rebuilt_resources() -> [&'static str; 10] {
    [
        type_name::<Snapshot>(),
        type_name::<IndexState>(),
        type_name::<InfectedIndex>(),
        type_name::<DecidingAside>(),
        type_name::<PredatorIndex>(),
        type_name::<WeightGain>(),
        type_name::<PreyFlight>(),
        type_name::<Steering>(),
        type_name::<StepMode>(),
        type_name::<ResetRequest>(),
    ]
}

/// Whether a component is the engine's (a name, or what the view attaches to draw a boid):
/// rebuilt, never saved.
fn is_engine(name: &str) -> bool {
    name.starts_with("bevy_") || name.starts_with("pandemic_boids::view::")
}

/// Captures the state at the current step boundary. Fails, naming it, on an entity with a
/// component checkpoints do not save (an extension's own component), and before a run started.
pub fn capture(world: &mut World) -> Result<Checkpoint, CheckpointError> {
    let Some(rng) = world.get_resource::<SimRng>().map(|r| r.0.clone()) else {
        return Err(CheckpointError::NotStarted);
    };
    if world.resource::<ResetRequest>().pending {
        return Err(CheckpointError::NotStarted);
    }
    let saved = saved_components();
    let entities: Vec<Entity> = world
        .query_filtered::<Entity, With<Position>>()
        .iter(world)
        .collect();
    let mut out = Vec::with_capacity(entities.len());
    // Entities of one archetype carry the same components: check each archetype once.
    let mut checked = Vec::new();
    for entity in entities {
        let e = world.entity(entity);
        let archetype = e.archetype();
        if !checked.contains(&archetype.id()) {
            checked.push(archetype.id());
            for id in archetype.components() {
                let name = world.components().get_name(id).unwrap_or_default();
                if !is_engine(&name) && !saved.contains(&name.as_ref()) {
                    return Err(CheckpointError::Unsaved(name.to_string()));
                }
            }
        }
        let (Some(&position), Some(&velocity)) = (e.get::<Position>(), e.get::<Velocity>()) else {
            continue;
        };
        if let Some(&predator) = e.get::<Predator>() {
            out.push(EntityState::Predator(PredatorState {
                predator,
                position,
                velocity,
            }));
            continue;
        }
        let state = (|| {
            Some(BoidState {
                id: *e.get::<AgentId>()?,
                swarm: *e.get::<Swarm>()?,
                position,
                velocity,
                health: *e.get::<Health>()?,
                breeding: *e.get::<Breeding>()?,
                isolated: e.get::<Isolated>().copied(),
            })
        })();
        match state {
            Some(b) if e.contains::<Boid>() => out.push(EntityState::Boid(b)),
            _ => {
                return Err(CheckpointError::Unsaved(format!(
                    "entity {entity} (not a boid)"
                )));
            }
        }
    }
    Ok(Checkpoint {
        config: world.resource::<SimConfig>().to_toml(),
        clock: *world.resource::<SimClock>(),
        next_id: world.resource::<IdCounter>().0,
        rng,
        entities: out,
        metrics: world.resource::<MetricsLog>().clone(),
        tally: world.resource::<Tally>().clone(),
        stats: world.resource::<EpidemicStats>().clone(),
        transmissions: world.resource::<TransmissionLog>().clone(),
        interventions: world.resource::<InterventionLog>().clone(),
        active_interventions: world.resource::<ActiveInterventions>().0,
        run: None,
        parent: None,
    })
}

/// Puts the world into the checkpoint's state: the next step continues exactly as the run it
/// was captured from did. `config` replaces the checkpoint's own (a branch's changed copy).
pub fn restore(world: &mut World, checkpoint: &Checkpoint, config: SimConfig) {
    despawn_simulated(world);
    world
        .resource_mut::<Time<Fixed>>()
        .set_timestep_seconds(config.dt);
    world.insert_resource(config);
    world.insert_resource(checkpoint.clock);
    world.insert_resource(IdCounter(checkpoint.next_id));
    world.insert_resource(SimRng(checkpoint.rng.clone()));
    world.insert_resource(checkpoint.metrics.clone());
    world.insert_resource(checkpoint.tally.clone());
    world.insert_resource(checkpoint.stats.clone());
    world.insert_resource(checkpoint.transmissions.clone());
    world.insert_resource(checkpoint.interventions.clone());
    world.insert_resource(ActiveInterventions(checkpoint.active_interventions));
    world.insert_resource(Snapshot::default());
    world.insert_resource(IndexState::default());
    world.insert_resource(InfectedIndex::default());
    world.insert_resource(DecidingAside::default());
    world.insert_resource(PredatorIndex::default());
    world.insert_resource(WeightGain::default());
    world.insert_resource(PreyFlight::default());
    // Kept parts stay kept (the window's inspector); the first step makes new ones.
    if let Some(mut steering) = world.get_resource_mut::<Steering>() {
        steering.clear();
    }
    world.insert_resource(StepMode::Full);
    world.insert_resource(ResetRequest::default());
    // In the order the world held them, so every table iterates as it did.
    for entity in &checkpoint.entities {
        match entity {
            EntityState::Boid(b) => {
                let mut e = world.spawn(boid(
                    b.id,
                    b.swarm,
                    b.position.0,
                    b.velocity.0,
                    b.health,
                    b.breeding,
                ));
                if let Some(isolated) = b.isolated {
                    e.insert(isolated);
                }
            }
            EntityState::Predator(p) => {
                world.spawn((
                    Name::new(format!("Predator #{}", p.predator.id)),
                    p.predator,
                    p.position,
                    p.velocity,
                ));
            }
        }
    }
    world.flush();
}
