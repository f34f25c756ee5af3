//! The epidemic's decisions worked out beside the step: they read only the state at the start
//! of the step (the snapshot and its index), so once flocking, which needs every thread, is
//! done, an idle worker of a headless run works them out while the calling thread steers and
//! moves the boids; `spread_infection` collects them. Where nothing can be handed aside (the
//! window, one thread, the KD-tree, large populations, whose decisions are parallel loops of
//! their own) or anything they read has changed since (an extension's system), they are worked
//! out in `spread_infection` as before: the same decisions either way. No systems live here
//! but `decide_aside`.

use bevy::ecs::component::Tick;
use bevy::prelude::*;

use super::rules::{EpidemicStep, Transition};
use crate::sim::clock::SimClock;
use crate::sim::config::SimConfig;
use crate::sim::neighbours::{Neighbours, OwnedIndex, Snapshot};
use crate::sim::parallel::{Aside, aside, can_aside, parts_for};

/// A step's decisions: each changing boid's slot and transition, in slot order.
pub type Decisions = Vec<(usize, Transition)>;

/// What the decisions read, copied for the worker (and handed back with them, so the next
/// step's copy reuses the arrays).
#[derive(Default)]
struct Copies {
    snapshot: Snapshot,
    index: OwnedIndex,
}

/// Decisions being worked out aside, and when what they read last changed; the copies the
/// last ones were worked out from. Empty between steps but for those copies (a checkpoint's
/// restore starts it afresh).
#[derive(Resource, Default)]
pub struct DecidingAside {
    pending: Option<(Aside<(Decisions, Box<Copies>)>, [Tick; 5])>,
    spare: Option<Box<Copies>>,
    used: u64,
}

impl DecidingAside {
    /// Steps whose decisions were worked out aside and used, since the simulation began.
    pub fn used(&self) -> u64 {
        self.used
    }
}

/// When everything the decisions read last changed: the snapshot, its index, the config, the
/// clock and the step's time.
fn read_at(
    neighbours: &Neighbours,
    config: &Res<SimConfig>,
    clock: &Res<SimClock>,
    time: &Res<Time>,
) -> [Tick; 5] {
    let [snapshot, index] = neighbours.changed_at();
    [
        snapshot,
        index,
        config.last_changed(),
        clock.last_changed(),
        time.last_changed(),
    ]
}

/// Starts the step's decisions on an idle worker, where one can take them.
pub(super) fn decide_aside(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    neighbours: Neighbours,
    mut deciding: ResMut<DecidingAside>,
) {
    let deciding = &mut *deciding;
    if let Some((started, _)) = deciding.pending.take() {
        // Started in a step that never collected them (a run condition an extension put on
        // `Epidemic`, say): only the copies are kept.
        deciding.spare = Some(started.join().1);
    }
    // With more boids the step's other loops (and the decisions' own) are split between the
    // threads: a worker busy with the decisions would slow them.
    if parts_for(neighbours.snapshot.len()) > 1 || !can_aside() {
        return;
    }
    let mut copies = deciding.spare.take().unwrap_or_default();
    if !neighbours.copy_index_into(&mut copies.index) {
        deciding.spare = Some(copies);
        return;
    }
    copies.snapshot.clone_from(&neighbours.snapshot);
    let (params, seed, step, now) = (config.epidemic.clone(), config.seed, clock.step, clock.time);
    let dt = time.delta_secs_f64();
    let read = read_at(&neighbours, &config, &clock, &time);
    deciding.pending = aside(move || {
        let decisions = {
            let Copies { snapshot, index } = &*copies;
            EpidemicStep {
                snapshot,
                index: &index.index(snapshot),
                params: &params,
                seed,
                step,
                now,
                dt,
            }
            .decide()
        };
        (decisions, copies)
    })
    .map(|started| (started, read));
}

/// The decisions started aside (in this step: a pending job of an earlier one fails the check,
/// as the snapshot changes every step), if nothing they read has changed since they started.
pub(super) fn decided_aside(
    deciding: &mut DecidingAside,
    neighbours: &Neighbours,
    config: &Res<SimConfig>,
    clock: &Res<SimClock>,
    time: &Res<Time>,
) -> Option<Decisions> {
    let (started, read) = deciding.pending.take()?;
    let (decisions, copies) = started.join();
    deciding.spare = Some(copies);
    let fresh = read == read_at(neighbours, config, clock, time);
    deciding.used += u64::from(fresh);
    fresh.then_some(decisions)
}
