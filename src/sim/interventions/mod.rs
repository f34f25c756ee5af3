//! Interventions at run time (docs/model.md §11): at every step boundary, before the step's
//! snapshot ([`SimSystems::Intervene`]), each `[[interventions]]` entry of the config is checked
//! in file order — started when its trigger fires (`at`, or `when` its condition has held on
//! the samples for `for` seconds), ended by `duration`, `until` or its switch — and its actions
//! applied: `set` keys (restored at the end), vaccination, test-and-isolate, importation. Every
//! choice of boids comes from the run's hashed draws, so a run with interventions is as
//! reproducible as one without. The choices are pure functions in `actions`; the log of starts
//! and ends is [`InterventionLog`].

mod actions;
#[cfg(test)]
mod tests;

pub use actions::{chosen, measure_value};

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use crate::sim::agent::{AgentId, Boid, Disease, Health, Isolated, Position, RunStarted, Velocity};
use crate::sim::clock::SimClock;
use crate::sim::config::{SimConfig, Value};
use crate::sim::epidemic::{Cause, EpidemicStats, Infected, step_probability};
use crate::sim::metrics::{ActiveInterventions, MetricsLog};
use crate::sim::rng::{Draws, Purpose, draw_unit};
use crate::sim::schedule::SimSystems;
use crate::sim::swarm::Swarm;
use crate::sim::transmission::TransmissionLog;

/// Where an intervention is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Waiting for its trigger.
    #[default]
    Armed,
    /// Acting.
    Active,
    /// Over (it started once, or was switched off before it could).
    Ended,
}

impl Phase {
    /// As the app shows it.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Armed => "armed",
            Phase::Active => "active",
            Phase::Ended => "ended",
        }
    }
}

/// The run-time state of one intervention.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// Where it is.
    pub phase: Phase,
    /// When the current (or last) activation started, s.
    pub since: f64,
    /// Since when its `when` condition has held, s.
    pub holding_since: Option<f64>,
    /// The keys its `set` changed, with the values they had before.
    pub restore: Vec<(String, Value)>,
    /// Boids affected in the current (or last) activation.
    pub affected: u64,
    /// Boids affected in every activation.
    pub total_affected: u64,
    /// Times it has started.
    pub starts: u32,
}

/// A start or an end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// It started.
    Start,
    /// It ended.
    End,
}

impl EventKind {
    /// As written to `interventions.csv`.
    pub fn key(self) -> &'static str {
        match self {
            EventKind::Start => "start",
            EventKind::End => "end",
        }
    }
}

/// One row of `interventions.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InterventionEvent {
    /// Simulated time (a step boundary), s.
    pub time_s: f64,
    /// Position in the config's list.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Start or end.
    pub event: EventKind,
    /// Boids affected: at a start, those its start acted on (vaccinated by `fraction`,
    /// imported); at an end, every boid the activation acted on (also those vaccinated by
    /// `rate_per_s` or isolated while it was active).
    pub affected: u64,
}

/// The interventions' state and every start and end of the run.
#[derive(Resource, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InterventionLog {
    /// One per entry of `SimConfig::interventions`.
    pub status: Vec<Status>,
    /// Starts and ends in time order.
    pub events: Vec<InterventionEvent>,
    /// Samples of the metrics log already looked at.
    seen_samples: usize,
}

impl InterventionLog {
    /// How many are active.
    pub fn active(&self) -> u32 {
        self.status
            .iter()
            .filter(|s| s.phase == Phase::Active)
            .count() as u32
    }

    /// Every activation as (name, start, end) — `end` for one still active.
    pub fn spans(&self, end: f64) -> Vec<(String, f64, f64)> {
        spans(&self.events, end)
    }
}

/// `config` as it would be without the `set` changes of the active interventions (their
/// keys back at the values they had before): what a saved scenario or a link should hold.
pub fn as_configured(config: &SimConfig, log: &InterventionLog) -> SimConfig {
    let mut out = config.clone();
    for status in log.status.iter().filter(|s| s.phase == Phase::Active) {
        for (key, before) in status.restore.iter().rev() {
            let _ = crate::sim::config::keys::set(&mut out, key, before);
        }
    }
    out
}

/// Every activation in `events` as (name, start, end) — `end` for one still active.
pub fn spans(events: &[InterventionEvent], end: f64) -> Vec<(String, f64, f64)> {
    let mut out = Vec::new();
    for (k, e) in events.iter().enumerate() {
        if e.event != EventKind::Start {
            continue;
        }
        let stop = events[k + 1..]
            .iter()
            .find(|x| x.index == e.index && x.event == EventKind::End)
            .map_or(end, |x| x.time_s);
        out.push((e.name.clone(), e.time_s, stop));
    }
    out
}

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<InterventionLog>()
        .add_observer(|_: Trigger<RunStarted>, mut log: ResMut<InterventionLog>| {
            *log = InterventionLog::default();
        })
        .add_systems(
            FixedUpdate,
            (release_isolated, intervene)
                .chain()
                .run_if(intervening)
                .in_set(SimSystems::Intervene),
        );
}

/// Whether the interventions' systems have anything to do this step: an intervention in the
/// config, or an isolated boid to release. Without either both would do nothing, and most runs
/// have neither.
fn intervening(config: Res<SimConfig>, isolated: Query<(), With<Isolated>>) -> bool {
    !config.interventions.is_empty() || !isolated.is_empty()
}

const CHOOSE: Purpose = Purpose::CHOOSE;
const VACCINATE: Purpose = Purpose::VACCINATE;
const DETECT: Purpose = Purpose::DETECT;

/// One boid as the interventions see it.
type BoidItem<'a> = (
    Entity,
    &'a AgentId,
    &'a Swarm,
    &'a Position,
    &'a mut Health,
    &'a mut Velocity,
    Has<Isolated>,
);

/// Releases each detected boid whose infection has ended (only the isolated are visited).
fn release_isolated(
    detected: Query<(Entity, &Health), (With<Boid>, With<Isolated>)>,
    mut commands: Commands,
) {
    for (entity, health) in &detected {
        if !health.disease.is_infected() {
            commands.entity(entity).remove::<Isolated>();
        }
    }
}

/// Checks every intervention and applies what is due.
#[allow(clippy::too_many_arguments)]
fn intervene(
    mut config: ResMut<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    metrics: Res<MetricsLog>,
    transmissions: Res<TransmissionLog>,
    mut log: ResMut<InterventionLog>,
    mut active: ResMut<ActiveInterventions>,
    mut stats: ResMut<EpidemicStats>,
    mut boids: Query<BoidItem, With<Boid>>,
    mut commands: Commands,
    mut infected: EventWriter<Infected>,
) {
    let (now, dt, step, seed) = (clock.time, time.delta_secs_f64(), clock.step, config.seed);
    let n = config.interventions.len();
    if n == 0 {
        return;
    }
    log.status.resize(n, Status::default());
    // The sample taken since the last look, if any: conditions are checked on samples.
    let sample = (metrics.samples.len() > log.seen_samples).then(|| {
        log.seen_samples = metrics.samples.len();
        metrics.samples.last().cloned().unwrap_or_default()
    });
    // R_t is estimated only when a condition asks for it, at most once a step.
    let window = config.rt_window;
    let mut rt_cache: Option<Option<f64>> = None;
    let mut value_of = |measure: &str, s: &crate::sim::metrics::Sample| {
        if measure == "r_t" {
            *rt_cache
                .get_or_insert_with(|| actions::latest_rt(&transmissions.records, window, dt, now))
        } else {
            measure_value(measure, &s.overall)
        }
    };
    for i in 0..n {
        let iv = config.interventions[i].clone();
        let name = iv.display_name(i);
        let status = &mut log.status[i];
        let mut events = Vec::new();
        match status.phase {
            Phase::Armed if !iv.enabled => {}
            Phase::Armed => {
                let fires = match (&iv.at, &iv.when, &sample) {
                    (Some(at), _, _) => now >= at - 0.5 * dt,
                    (None, Some(cond), Some(s)) => {
                        match value_of(cond.measure, s).map(|x| cond.holds(x)) {
                            Some(true) => {
                                let since = *status.holding_since.get_or_insert(s.time_s);
                                s.time_s - since >= iv.hold - 0.5 * dt
                            }
                            _ => {
                                status.holding_since = None;
                                false
                            }
                        }
                    }
                    _ => false,
                };
                if fires {
                    status.phase = Phase::Active;
                    status.since = now;
                    status.holding_since = None;
                    status.starts += 1;
                    status.restore.clear();
                    // Every key together; a set no longer allowed (the user edited another key
                    // meanwhile) is skipped whole.
                    if let Ok(next) = iv.applied_to(&config) {
                        status.restore = iv
                            .set
                            .keys()
                            .filter_map(|k| Some((k.clone(), config.get(k).ok()?)))
                            .collect();
                        *config = next;
                    }
                    let mut affected = 0;
                    if let Some(v) = iv.vaccinate.as_ref().filter(|v| v.fraction.is_some()) {
                        let pool = pool(&boids, v.swarm, |d| d.is_susceptible());
                        let take = (v.fraction.unwrap_or(0.0) * pool.len() as f64).round() as usize;
                        for e in chosen(&pool, take, |id| {
                            draw_unit(seed, step, id, i as u64, CHOOSE)
                        }) {
                            if let Ok((.., mut h, _, _)) = boids.get_mut(e) {
                                h.disease = vaccinated(now, v.efficacy);
                                affected += 1;
                            }
                        }
                    }
                    if let Some(imp) = &iv.import {
                        let pool = pool(&boids, imp.swarm, Disease::is_susceptible);
                        for e in chosen(&pool, imp.count as usize, |id| {
                            draw_unit(seed, step, id, i as u64 + (1 << 32), CHOOSE)
                        }) {
                            if let Ok((_, id, swarm, pos, mut h, _, _)) = boids.get_mut(e) {
                                h.disease = Disease::Infected { since: now };
                                stats.imported_infections += 1;
                                infected.write(Infected {
                                    source: None,
                                    target: *id,
                                    swarm: *swarm,
                                    pos: pos.0,
                                    cause: Cause::Imported,
                                    time: now,
                                });
                                affected += 1;
                            }
                        }
                    }
                    status.affected = affected;
                    status.total_affected += affected;
                    events.push((EventKind::Start, affected));
                }
            }
            Phase::Active | Phase::Ended => {}
        }
        let status = &mut log.status[i];
        // Only one-off actions and no end: it is over as soon as it has started.
        let one_off = iv.duration.is_none()
            && iv.until.is_none()
            && iv.set.is_empty()
            && iv.isolate.is_none()
            && iv.vaccinate.as_ref().is_none_or(|v| v.rate_per_s.is_none());
        if status.phase == Phase::Active && (events.is_empty() || one_off) {
            let ends = one_off
                || !iv.enabled
                || iv
                    .duration
                    .is_some_and(|d| now >= status.since + d - 0.5 * dt)
                || match (&iv.until, &sample) {
                    (Some(cond), Some(s)) => {
                        value_of(cond.measure, s).is_some_and(|x| cond.holds(x))
                    }
                    _ => false,
                };
            if ends {
                // Every key back together (they were allowed together before).
                let mut next = config.clone();
                for (key, before) in status.restore.drain(..).rev() {
                    let _ = crate::sim::config::keys::set(&mut next, &key, &before);
                }
                *config = next;
                status.phase = if iv.once || iv.at.is_some() {
                    Phase::Ended
                } else {
                    Phase::Armed
                };
                events.push((EventKind::End, status.affected));
            }
        }
        // Acting while active (also in the step it starts).
        if status.phase == Phase::Active {
            let mut affected = 0;
            if let Some(rate) = iv.vaccinate.as_ref().and_then(|v| v.rate_per_s) {
                let v = iv.vaccinate.as_ref().expect("checked");
                let p = step_probability(rate, dt);
                let draws = Draws::new(seed, step, VACCINATE);
                for (_, id, swarm, _, mut h, _, _) in &mut boids {
                    if h.disease.is_susceptible()
                        && v.swarm.is_none_or(|s| s == *swarm)
                        && draws.unit(id.0, i as u64) < p
                    {
                        h.disease = vaccinated(now, v.efficacy);
                        affected += 1;
                    }
                }
            }
            if let Some(iso) = &iv.isolate {
                let p = step_probability(iso.detect_per_s, dt);
                let draws = Draws::new(seed, step, DETECT);
                for (entity, id, _, _, h, mut vel, isolated) in &mut boids {
                    let Disease::Infected { since } = h.disease else {
                        continue;
                    };
                    if !isolated
                        && now - since >= iso.delay - 0.5 * dt
                        && draws.unit(id.0, i as u64) < p
                    {
                        commands.entity(entity).insert(Isolated { since: now });
                        vel.0 = Vec2::ZERO;
                        affected += 1;
                    }
                }
            }
            status.affected += affected;
            status.total_affected += affected;
        }
        for (event, affected) in events {
            log.events.push(InterventionEvent {
                time_s: now,
                index: i,
                name: name.clone(),
                event,
                affected,
            });
        }
    }
    active.0 = log.active();
}

/// The state a vaccinated boid takes at `now`.
fn vaccinated(now: f64, efficacy: f64) -> Disease {
    Disease::Recovered {
        since: now,
        immunity: efficacy,
    }
}

/// The boids (entity, id) of `swarm` (every swarm when `None`) whose disease passes `keep`,
/// in id order.
fn pool(
    boids: &Query<BoidItem, With<Boid>>,
    swarm: Option<Swarm>,
    keep: impl Fn(&Disease) -> bool,
) -> Vec<(Entity, u64)> {
    let mut out: Vec<(Entity, u64)> = boids
        .iter()
        .filter(|(_, _, s, _, h, _, _)| swarm.is_none_or(|w| w == **s) && keep(&h.disease))
        .map(|(e, id, ..)| (e, id.0))
        .collect();
    out.sort_unstable_by_key(|&(_, id)| id);
    out
}
