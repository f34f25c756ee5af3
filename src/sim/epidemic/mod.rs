//! The epidemic (docs/model.md §5): contact and spontaneous infection, cure by doctors, death
//! or recovery at `t_death`, and waning immunity — all rates per second, converted with the
//! step's dt (§5.1), all decided on the state at the start of the step (the snapshot), so
//! results depend neither on iteration order nor on thread count. The rules are pure functions
//! in `rules`; `spread_infection` (here) applies them in `SimSystems::Epidemic` and publishes
//! what happened as events (`Infected`, `Cured`, `Died`, `Recovered`); `stats` keeps the run's
//! epidemic record in `SimSystems::Sample`.

mod aside;
mod rules;
mod stats;
#[cfg(test)]
mod tests;

pub use aside::DecidingAside;
pub use rules::{
    EpidemicStep, PerStep, Transition, falls_below, lowest_partner, partner, step_probability,
    swarms_at_risk, swarms_mix,
};
pub use stats::EpidemicStats;

use bevy::prelude::*;
use serde::Serialize;

use crate::sim::agent::{AgentId, Disease, Health, RunStarted};
use crate::sim::clock::SimClock;
use crate::sim::config::SimConfig;
use crate::sim::metrics::Tally;
use crate::sim::neighbours::Neighbours;
use crate::sim::schedule::{SimSystems, SteerSystems};
use crate::sim::swarm::Swarm;

/// How an infection began.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Infected when the run started (generation 0).
    Initial,
    /// By contact with an infected boid.
    Contact,
    /// Spontaneously (`p_spontaneous_infect`; an imported case, generation 0).
    Spontaneous,
    /// Born infected to two infected parents (generation 0: no single infector).
    Born,
    /// Brought in by an `import` intervention (generation 0).
    Imported,
}

impl Cause {
    /// The name written to `transmissions.csv`.
    pub fn key(self) -> &'static str {
        match self {
            Cause::Initial => "initial",
            Cause::Contact => "contact",
            Cause::Spontaneous => "spontaneous",
            Cause::Born => "born",
            Cause::Imported => "imported",
        }
    }
}

/// The infector of a contact infection, as the step saw it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Source {
    /// Its id.
    pub id: AgentId,
    /// Its swarm.
    pub swarm: Swarm,
    /// Where it was at the start of the step, px.
    pub pos: Vec2,
}

/// A boid was infected (by `source`, or with no infector when `None`).
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Infected {
    /// The infector, if by contact.
    pub source: Option<Source>,
    /// The newly infected boid.
    pub target: AgentId,
    /// Its swarm.
    pub swarm: Swarm,
    /// Where it was at the start of the step, px.
    pub pos: Vec2,
    /// How.
    pub cause: Cause,
    /// Simulated time at the end of the step, s.
    pub time: f64,
}

/// An infected boid survived `t_death` and recovered.
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Recovered {
    /// The boid.
    pub id: AgentId,
    /// Simulated time, s.
    pub time: f64,
}

/// A doctor cured a boid.
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Cured {
    /// The cured boid.
    pub patient: AgentId,
    /// The doctor.
    pub doctor: AgentId,
    /// Simulated time, s.
    pub time: f64,
}

/// A boid died of the disease (and was despawned).
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Died {
    /// The boid.
    pub id: AgentId,
    /// Its swarm.
    pub swarm: Swarm,
    /// Simulated time, s.
    pub time: f64,
}

pub(super) fn plugin(app: &mut App) {
    app.add_event::<Infected>()
        .add_event::<Cured>()
        .add_event::<Died>()
        .add_event::<Recovered>()
        .init_resource::<EpidemicStats>()
        .init_resource::<DecidingAside>()
        .add_observer(|_: Trigger<RunStarted>, mut stats: ResMut<EpidemicStats>| {
            *stats = EpidemicStats::default();
        })
        .add_systems(
            FixedUpdate,
            stats::track_epidemic.in_set(SimSystems::Sample),
        )
        .add_systems(FixedUpdate, aside::decide_aside.in_set(SteerSystems::Aside))
        .add_systems(FixedUpdate, spread_infection.in_set(SimSystems::Epidemic));
}

/// Applies one step of the epidemic.
fn spread_infection(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    neighbours: Neighbours,
    mut boids: Query<&mut Health>,
    mut commands: Commands,
    mut tally: ResMut<Tally>,
    mut stats: ResMut<EpidemicStats>,
    mut infected_events: EventWriter<Infected>,
    mut cured_events: EventWriter<Cured>,
    mut died_events: EventWriter<Died>,
    mut recovered_events: EventWriter<Recovered>,
    mut deciding: ResMut<DecidingAside>,
) {
    let s = &*neighbours.snapshot;
    let dt = time.delta_secs_f64();
    let decisions = aside::decided_aside(&mut deciding, &neighbours, &config, &clock, &time)
        .unwrap_or_else(|| {
            let index = neighbours.index();
            EpidemicStep {
                snapshot: s,
                index: &index,
                params: &config.epidemic,
                seed: config.seed,
                step: clock.step,
                now: clock.time,
                dt,
            }
            .decide()
        });
    let end = clock.time + dt;
    for (i, transition) in decisions {
        let Ok(mut health) = boids.get_mut(s.entity[i]) else {
            continue;
        };
        let id = AgentId(s.id[i]);
        match transition {
            Transition::Infect { source } => {
                health.disease = Disease::Infected { since: end };
                match source {
                    Some(_) => stats.contact_infections += 1,
                    None => stats.spontaneous_infections += 1,
                }
                infected_events.write(Infected {
                    source: source.map(|j| Source {
                        id: AgentId(s.id[j]),
                        swarm: s.swarm[j],
                        pos: s.pos[j],
                    }),
                    target: id,
                    swarm: s.swarm[i],
                    pos: s.pos[i],
                    cause: if source.is_some() {
                        Cause::Contact
                    } else {
                        Cause::Spontaneous
                    },
                    time: end,
                });
            }
            Transition::Cure { doctor } => {
                health.disease = Disease::Recovered {
                    since: end,
                    immunity: config.epidemic.cure_immunity_level,
                };
                stats.cures += 1;
                cured_events.write(Cured {
                    patient: id,
                    doctor: AgentId(s.id[doctor]),
                    time: end,
                });
            }
            Transition::Recover => {
                health.disease = Disease::Recovered {
                    since: end,
                    immunity: config.epidemic.cure_immunity_level,
                };
                stats.recoveries += 1;
                recovered_events.write(Recovered { id, time: end });
            }
            Transition::Wane => health.disease = Disease::Susceptible,
            Transition::Die => {
                commands.entity(s.entity[i]).despawn();
                tally.dead[s.swarm[i].index()] += 1;
                stats.deaths += 1;
                died_events.write(Died {
                    id,
                    swarm: s.swarm[i],
                    time: end,
                });
            }
        }
    }
}
