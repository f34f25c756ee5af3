//! Predators (docs/model.md §7, reference/boids-predator-prey.txt converted to per-second units):
//! hunters that pick the most isolated boid in range, chase it with predictive pursuit and catch it
//! within `catch_radius`; prey near a predator flee and flock less. Predators have their own
//! neighbour index resource ([`PredatorIndex`], a uniform grid over a predator snapshot with cells
//! the size of the fear radius) that every boid queries for fear: with a handful of predators such
//! a query touches nine mostly empty cells.
//!
//! Phases: `Index` (rebuild the predator index), `Sense` (prey fear → `WeightGain` and each
//! boid's flight), `Steer` (the flights added to `Steering`; targets and pursuit), `Integrate`
//! (move predators), `Population` (catches: remove or respawn).

use bevy::prelude::*;
use rand::Rng;

use crate::sim::agent::{Boid, Position, RunStarted, Velocity};
use crate::sim::clock::SimClock;
use crate::sim::config::{CatchMode, PredatorsConfig, SimConfig};
use crate::sim::flocking::WeightGain;
use crate::sim::math::{steer, truncate, unit};
use crate::sim::metrics::Tally;
use crate::sim::movement::{SpeedBand, integrate};
use crate::sim::neighbours::{NeighbourIndex, Neighbours, Row, Snapshot};
use crate::sim::parallel::for_each_part;
use crate::sim::rng::{Purpose, SimRng, draw_rng};
use crate::sim::schedule::{IntegrateSystems, PopulationSystems, SimSystems, SteerSystems};
use crate::sim::space::Space;
use crate::sim::steering::{Part, Steering};
use crate::sim::swarm::Swarm;

/// Flee acceleration at full urgency, px/s²: 10 px/frame² at the reference 60 frames/s.
pub const FLEE_ACCELERATION: f32 = 36_000.0;
/// How much full urgency lowers the flocking weights (×(1 − 0.7u)).
pub const FEAR_FLOCKING_DROP: f32 = 0.7;
/// Isolation bonus per missing neighbour, px, and the neighbour count that earns none.
pub const ISOLATION_BONUS_PX: f32 = 30.0;
/// Neighbour count above which a boid is not considered isolated.
pub const ISOLATION_COUNT: f32 = 5.0;

/// A predator (not a boid).
#[derive(
    Component, Reflect, Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize,
)]
#[reflect(Component)]
pub struct Predator {
    /// Stable id (spawn order among predators).
    pub id: u64,
    /// The boid it is chasing, by id.
    pub target: Option<u64>,
    /// Its steering this step, px/s².
    pub steer: Vec2,
    /// Boids it caught.
    pub caught: u64,
}

/// The factor fear of urgency `u` puts on a boid's flocking weights: `1 − 0.7u`.
pub fn fear_gain(u: f32) -> f32 {
    1.0 - FEAR_FLOCKING_DROP * u
}

/// The predators at the start of the step, in id order. There are few: they reach boids
/// through the boids' index, never the other way round.
#[derive(Resource, Default)]
pub struct PredatorIndex {
    /// Predators at the start of the step, in id order.
    pub snapshot: Snapshot,
}

/// A boid was caught.
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Caught {
    /// The boid's id.
    pub prey: u64,
    /// The predator's id.
    pub predator: u64,
    /// Simulated time, s.
    pub time: f64,
}

/// Fear of a boid at `offset = p_prey − p_predator` from its nearest predator: urgency
/// `u = 1 − d/fear_radius` (0 outside) and the flee acceleration
/// `truncate(unit(offset)·36 000·u², F_max·(1 + 4u))`.
pub fn fear(offset: Vec2, fear_radius: f32, boid_f_max: f32) -> (f32, Vec2) {
    let d = offset.length();
    if fear_radius <= 0.0 || d >= fear_radius {
        return (0.0, Vec2::ZERO);
    }
    let u = 1.0 - d / fear_radius;
    let flee = truncate(
        unit(offset) * FLEE_ACCELERATION * u * u,
        boid_f_max * (1.0 + 4.0 * u),
    );
    (u, flee)
}

/// Target score of a candidate `distance` away with `neighbours` within the isolation radius:
/// `distance − (5 − n)·30`; the lowest score is chased.
pub fn target_score(distance: f32, neighbours: usize) -> f32 {
    distance - (ISOLATION_COUNT - neighbours as f32) * ISOLATION_BONUS_PX
}

/// The pursuit steer toward where the target will be: aim at `offset + v_t·(d/speed)`.
pub fn pursuit(offset: Vec2, target_vel: Vec2, v: Vec2, p: &PredatorsConfig) -> Vec2 {
    let lead = offset + target_vel * (offset.length() / p.speed);
    steer(lead, v, p.speed, p.max_force)
}

/// A boid within a predator's detection range: its distance, snapshot slot and offset from
/// the predator.
pub type Sighting = (f32, usize, Vec2);

/// How many other boids are within `radius` of the boid of slot `j`, up to `cap`: one count of
/// the boids within `radius` of it ([`NeighbourIndex::count_within`]), less the boid itself,
/// which is among them (at offset zero) whenever `radius²` is positive; `cap` if there are at
/// least as many.
pub fn isolation(
    index: &impl NeighbourIndex,
    boids: &Snapshot,
    j: usize,
    radius: f32,
    cap: usize,
) -> usize {
    let itself = (0.0 < radius * radius) as usize;
    index
        .count_within(boids.pos[j], radius, cap.saturating_add(itself))
        .saturating_sub(itself)
}

/// Whether a boid of slot `j` scoring `score` loses to the best so far, `(best, slot)`: it
/// scores more, or as much with a higher slot.
fn loses(score: f32, j: usize, best: Option<(f32, usize)>) -> bool {
    best.is_some_and(|(b, bj)| score > b || (score == b && j > bj))
}

/// The fewest neighbours with which a boid `d` away, of slot `j`, loses to `best` (a
/// [`target_score`] grows with the neighbours): its neighbours need counting only up to there.
/// `usize::MAX` before there is a best; at least 1 when it would win alone.
fn neighbours_to_lose(d: f32, j: usize, best: Option<(f32, usize)>) -> usize {
    let Some((b, _)) = best else {
        return usize::MAX;
    };
    // Distances and scores are finite (a backend reports only offsets shorter than the
    // radius), so the steps below end.
    debug_assert!(d.is_finite() && b.is_finite(), "{d} against {b}");
    // The score is d − 150 + 30n: the estimate is exact up to rounding, which the steps mend.
    let mut n =
        (((b - d) / ISOLATION_BONUS_PX + ISOLATION_COUNT).max(0.0) as usize).saturating_add(1);
    while n > 1 && loses(target_score(d, n - 1), j, best) {
        n -= 1;
    }
    while !loses(target_score(d, n), j, best) {
        n += 1;
    }
    n
}

/// `seen` nearest first, in rings [`ISOLATION_BONUS_PX`] wide (in the order seen within a
/// ring): a counting sort, whose order only makes [`choose_target`] faster (its best so far
/// is good early, so later boids need fewer neighbours counted, or none).
fn nearest_rings_first(seen: &[Sighting]) -> Vec<Sighting> {
    let ring = |d: f32| (d / ISOLATION_BONUS_PX) as usize;
    let rings = seen.iter().map(|s| ring(s.0) + 1).max().unwrap_or(0);
    let mut start = vec![0usize; rings + 1];
    for s in seen {
        start[ring(s.0) + 1] += 1;
    }
    for k in 1..start.len() {
        start[k] += start[k - 1];
    }
    let mut sorted = vec![(0.0, 0, Vec2::ZERO); seen.len()];
    for s in seen {
        let at = &mut start[ring(s.0)];
        sorted[*at] = *s;
        *at += 1;
    }
    sorted
}

/// The best target of a predator at `at` among the boids within `detection_range`: the lowest
/// [`target_score`] (ties go to the lower id). Returns its slot and offset. The boids are
/// scored nearest first (by rings), each against the best so far: one that loses with no
/// neighbours at all is skipped, and the others' neighbours are counted only up to the count
/// with which they would lose. The target is the one the reference model's search finds
/// (scoring nearest first and stopping at the first boid that cannot beat the best so far), as
/// both find the lowest score, and a boid skipped here or there scores worse.
pub fn choose_target(
    index: &impl NeighbourIndex,
    boids: &Snapshot,
    at: Vec2,
    p: &PredatorsConfig,
) -> Option<(usize, Vec2)> {
    let mut seen: Vec<Sighting> = Vec::new();
    index.for_each_within(at, p.detection_range, |j, offset| {
        seen.push((offset.length(), j, offset));
    });
    let mut best: Option<(f32, usize, Vec2)> = None;
    for (d, j, offset) in nearest_rings_first(&seen) {
        let so_far = best.map(|(b, bj, _)| (b, bj));
        if loses(target_score(d, 0), j, so_far) {
            continue;
        }
        let cap = neighbours_to_lose(d, j, so_far);
        let n = isolation(index, boids, j, p.isolation_radius, cap);
        // Fewer than `cap` neighbours: counted exactly, and it beats the best so far.
        if n < cap {
            best = Some((target_score(d, n), j, offset));
        }
    }
    best.map(|(_, j, offset)| (j, offset))
}

/// A point on a random edge and a heading into the world, at `speed`.
pub fn edge_respawn(space: &Space, speed: f32, rng: &mut impl Rng) -> (Vec2, Vec2) {
    let (w, h) = (space.width, space.height);
    let along: f32 = rng.random();
    let spread = (rng.random::<f32>() - 0.5) * std::f32::consts::FRAC_PI_2;
    let (p, inward) = match rng.random_range(0..4u8) {
        0 => (Vec2::new(along * w, 0.0), Vec2::Y),
        1 => (Vec2::new(along * w, h.next_down()), -Vec2::Y),
        2 => (Vec2::new(0.0, along * h), Vec2::X),
        _ => (Vec2::new(w.next_down(), along * h), -Vec2::X),
    };
    (
        space.confine(p, Vec2::ZERO).0,
        crate::sim::math::from_angle(spread).rotate(inward) * speed,
    )
}

pub(super) fn plugin(app: &mut App) {
    app.register_type::<Predator>()
        .init_resource::<PredatorIndex>()
        .init_resource::<PreyFlight>()
        .add_event::<Caught>()
        .add_observer(spawn_predators)
        // Most runs never have a predator, and then these systems would do nothing: each runs
        // only when it could do something (Bevy asks the first condition once a step, before
        // `index_predators`). The fear (`sense_predators`) runs in every step that moves the
        // world (not in an observation): without predators it empties the prey's fear and
        // flight, which the flocking and `flee_predators` read.
        .add_systems(
            FixedUpdate,
            (
                index_predators.in_set(SimSystems::Index),
                flee_predators.in_set(SteerSystems::Flee),
                catch_prey.in_set(PopulationSystems::Catches),
            )
                .run_if(predators_or_their_index),
        )
        .add_systems(
            FixedUpdate,
            (
                sense_predators.in_set(SimSystems::Sense),
                hunt.run_if(any_predator).in_set(SimSystems::Steer),
                move_predators
                    .run_if(any_predator)
                    .in_set(IntegrateSystems::Predators),
            ),
        );
}

/// Whether there is a predator, or the predators' index still holds some (the step after the
/// last is gone empties it). Without either, `index_predators` would index nobody again,
/// `catch_prey` would find no one in the (empty) index, and `flee_predators` would add nothing:
/// it reads only the prey's flight, which `sense_predators` empties in every step that moves the
/// world when the index is empty. A predator that appears later in the step is not in this
/// step's index either way.
fn predators_or_their_index(
    predators: Query<(), With<Predator>>,
    index: Res<PredatorIndex>,
) -> bool {
    !predators.is_empty() || !index.snapshot.is_empty()
}

/// Whether there is a predator to hunt or move.
fn any_predator(predators: Query<(), With<Predator>>) -> bool {
    !predators.is_empty()
}

/// Spawns the run's predators (uniform positions, random headings at full speed).
fn spawn_predators(
    _: Trigger<RunStarted>,
    config: Res<SimConfig>,
    mut rng: ResMut<SimRng>,
    mut commands: Commands,
) {
    let p = &config.predators;
    let size = config.space().size();
    for id in 0..p.count as u64 {
        let pos = Vec2::new(rng.0.random::<f32>(), rng.0.random::<f32>()) * size;
        let heading = rng.0.random::<f32>() * std::f32::consts::TAU;
        commands.spawn((
            Name::new(format!("Predator #{id}")),
            Predator { id, ..default() },
            Position(config.space().confine(pos, Vec2::ZERO).0),
            Velocity(crate::sim::math::from_angle(heading) * p.speed),
        ));
    }
}

fn index_predators(
    config: Res<SimConfig>,
    predators: Query<(Entity, &Predator, &Position, &Velocity)>,
    mut index: ResMut<PredatorIndex>,
) {
    let space = config.space();
    let rows: Vec<Row> = predators
        .iter()
        .map(|(entity, p, pos, vel)| Row {
            entity,
            id: p.id,
            pos: space.confine(pos.0, Vec2::ZERO).0,
            vel: vel.0,
            swarm: default(),
            disease: default(),
        })
        .collect();
    index.snapshot = Snapshot::from_rows(space, rows);
}

/// Each boid's flight from its nearest predator this step, px/s², by snapshot slot (empty
/// when there are no predators): worked out with the fear in `SimSystems::Sense`, added to
/// `Steering` after the other parts.
#[derive(Resource, Default, Debug)]
pub struct PreyFlight {
    per_slot: Vec<Vec2>,
}

/// Each boid fears its nearest predator within `fear_radius`.
fn sense_predators(
    config: Res<SimConfig>,
    neighbours: Neighbours,
    predators: Res<PredatorIndex>,
    mut gain: ResMut<WeightGain>,
    mut flight: ResMut<PreyFlight>,
) {
    let boid_snapshot = &*neighbours.snapshot;
    if predators.snapshot.is_empty() {
        // Without predators nothing is feared and no one flees (most runs never have any; this
        // also ends the fear of a run whose predators are gone).
        gain.per_slot.clear();
        flight.per_slot.clear();
        return;
    }
    // Scattered from the few predators over the boids' index: each boid keeps the offset
    // from its nearest predator (predators in id order; a tie keeps the first). Only the boids
    // near a predator are visited; the others keep a gain of 1 (`fear_gain(0)`) and no flight.
    let index = neighbours.index();
    let radius = config.predators.fear_radius;
    let mut near: Vec<(usize, Vec2)> = Vec::new();
    for &at in &predators.snapshot.pos {
        index.for_each_within(at, radius, |i, away| near.push((i, away)));
    }
    // Stable: a boid's offsets stay in the predators' order.
    near.sort_by_key(|&(i, _)| i);
    let n = boid_snapshot.len();
    gain.per_slot.clear();
    gain.per_slot.resize(n, 1.0);
    flight.per_slot.clear();
    flight.per_slot.resize(n, Vec2::ZERO);
    for offsets in near.chunk_by(|a, b| a.0 == b.0) {
        let (i, mut away) = offsets[0];
        for &(_, other) in &offsets[1..] {
            if other.length_squared() < away.length_squared() {
                away = other;
            }
        }
        let f_max = config.swarms.get(boid_snapshot.swarm[i]).max_force;
        // Fear makes a boid flock less.
        let (u, flee) = fear(away, radius, f_max);
        gain.per_slot[i] = fear_gain(u);
        flight.per_slot[i] = flee;
    }
}

/// Adds every boid's flight from predators to its steering (nothing without predators).
fn flee_predators(flight: Res<PreyFlight>, mut steering: ResMut<Steering>) {
    if !flight.per_slot.is_empty() {
        steering.add(Part::Flee, |i| flight.per_slot[i]);
    }
}

/// Predators pick targets and steer toward them.
fn hunt(
    config: Res<SimConfig>,
    neighbours: Neighbours,
    mut predators: Query<(&mut Predator, &Position, &Velocity)>,
) {
    let boids = &*neighbours.snapshot;
    let index = neighbours.index();
    let p = &config.predators;
    // Each predator's choice (hundreds of candidates, each with its own query) worked out in
    // parallel, one predator a part; then written in the query's order.
    let mut chosen: Vec<(Vec2, Option<(usize, Vec2)>)> =
        predators.iter().map(|(_, pos, _)| (pos.0, None)).collect();
    for_each_part(chosen.iter_mut().collect(), |(at, choice)| {
        *choice = choose_target(&index, boids, *at, p);
    });
    for ((mut predator, _, vel), (_, choice)) in predators.iter_mut().zip(chosen) {
        match choice {
            Some((j, offset)) => {
                predator.target = Some(boids.id[j]);
                predator.steer = pursuit(offset, boids.vel[j], vel.0, p);
            }
            None => {
                predator.target = None;
                predator.steer = Vec2::ZERO;
            }
        }
    }
}

fn move_predators(
    config: Res<SimConfig>,
    time: Res<Time>,
    mut predators: Query<(&Predator, &mut Position, &mut Velocity), Without<Boid>>,
) {
    let space = config.space();
    // The source gives predators a top speed only (docs/model.md §7): no floor.
    let band = SpeedBand {
        min: 0.0,
        max: config.predators.speed,
    };
    for (predator, mut pos, mut vel) in &mut predators {
        (pos.0, vel.0) = integrate(
            pos.0,
            vel.0,
            predator.steer,
            time.delta_secs(),
            band,
            &space,
        );
    }
}

/// The smallest distance over a step between two points moving in straight lines: `d0` is
/// their offset at the start, `delta` how the offset changes over the step.
pub fn closest_approach(d0: Vec2, delta: Vec2) -> f32 {
    let dd = delta.length_squared();
    let t = if dd > 0.0 {
        (-d0.dot(delta) / dd).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (d0 + t * delta).length()
}

/// Each predator, in id order, catches the boid that came closest to it during the step,
/// if that was within `catch_radius` — both moving in straight lines from their positions at
/// the start of the step to those after it (a swept test: closing at 450 px/s, a predator
/// moves 15 px per step at 30 steps/s, more than a 10 px catch radius, so testing positions
/// only would miss catches at coarse steps). A boid is caught once.
fn catch_prey(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    neighbours: Neighbours,
    predators: Res<PredatorIndex>,
    mut hunters: Query<(&mut Predator, &Position), Without<Boid>>,
    mut boids: Query<(&mut Position, &mut Velocity), With<Boid>>,
    mut tally: ResMut<Tally>,
    mut caught_events: EventWriter<Caught>,
    mut commands: Commands,
) {
    let boid_snapshot = &*neighbours.snapshot;
    let index = neighbours.index();
    let p = &config.predators;
    let space = config.space();
    let dt = time.delta_secs();
    // How far apart a predator and a boid can start and still meet within the step.
    let fastest = Swarm::ALL
        .iter()
        .map(|&s| config.swarms.get(s).max_speed)
        .fold(0.0, f32::max);
    let reach = p.catch_radius + (p.speed + fastest) * dt * 1.01;
    let mut taken: Vec<usize> = Vec::new();
    for k in 0..predators.snapshot.len() {
        let start = predators.snapshot.pos[k];
        let Ok((_, end)) = hunters.get(predators.snapshot.entity[k]) else {
            continue;
        };
        let moved = space.displacement(start, end.0);
        let mut best: Option<(f32, usize)> = None;
        index.for_each_within(start, reach, |j, d0| {
            // A boid that died of the disease earlier in this step is gone (its despawn was
            // applied after the Epidemic phase): it cannot also be caught.
            let Ok((at, _)) = boids.get(boid_snapshot.entity[j]) else {
                return;
            };
            let delta = space.displacement(boid_snapshot.pos[j], at.0) - moved;
            let d = closest_approach(d0, delta);
            if d < p.catch_radius
                && !taken.contains(&j)
                && best.is_none_or(|(b, bj)| d < b || (d == b && j < bj))
            {
                best = Some((d, j));
            }
        });
        let Some((_, j)) = best else { continue };
        taken.push(j);
        let swarm = boid_snapshot.swarm[j];
        tally.caught[swarm.index()] += 1;
        let predator_id = predators.snapshot.id[k];
        if let Ok((mut hunter, _)) = hunters.get_mut(predators.snapshot.entity[k]) {
            hunter.caught += 1;
        }
        let entity = boid_snapshot.entity[j];
        match p.catch {
            CatchMode::Remove => {
                commands.entity(entity).despawn();
                tally.removed[swarm.index()] += 1;
            }
            CatchMode::Respawn => {
                let mut rng = draw_rng(
                    config.seed,
                    clock.step,
                    boid_snapshot.id[j],
                    predator_id,
                    Purpose::RESPAWN,
                );
                let (at, v) = edge_respawn(&space, config.swarms.get(swarm).max_speed, &mut rng);
                if let Ok((mut pos, mut vel)) = boids.get_mut(entity) {
                    pos.0 = at;
                    vel.0 = v;
                }
            }
        }
        caught_events.write(Caught {
            prey: boid_snapshot.id[j],
            predator: predator_id,
            time: clock.time + time.delta_secs_f64(),
        });
    }
}

#[cfg(test)]
mod tests;
