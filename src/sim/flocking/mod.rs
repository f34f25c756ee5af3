//! Flocking steering (docs/model.md §4): separation across all swarms, alignment and cohesion
//! within a swarm, field of view, noise; the baseline Shiffman Model B plus the `hybrid`,
//! `adams`, `pygame` and `report` models. The maths is in `models`, the SIMD gathering in `gather`,
//! Model B's force for eight boids at once in `batch`; `steer_boids` (phase `SimSystems::Steer`)
//! traverses every boid's neighbourhood once, calls them, and starts each boid's `Steering` with
//! its flocking and noise accelerations, in parallel over boids.

mod batch;
mod gather;
mod models;
#[cfg(test)]
mod tests;

pub use batch::{V8, shiffman8};
pub use gather::lane_sums;
pub use models::{
    ADAMS_REFERENCE_FPS, FULL_FOV, FlockSums, Rules, alignment, cohesion, flocking_force, in_view,
    noise_force, separation,
};

use bevy::prelude::*;

use crate::sim::clock::SimClock;
use crate::sim::config::{SimConfig, SteeringModel};
use crate::sim::lanes::{F8, vectorized};
use crate::sim::neighbours::{IndexRef, Near, Neighbours, Snapshot, Targets};
use crate::sim::parallel::zip_runs;
use crate::sim::rng::{Draws, Purpose};
use crate::sim::schedule::SteerSystems;
use crate::sim::steering::{Steering, SteeringParts};
use crate::sim::swarm::Swarm;

/// Per-boid factor on the three flocking weights this step, by snapshot slot; a boid without an
/// entry flocks at full weight. Modules that make boids flock less write it before
/// `SimSystems::Steer` (predator fear: `1 − 0.7u`, docs/model.md §7).
#[derive(Resource, Default, Debug, Clone)]
pub struct WeightGain {
    /// The factor of each slot (empty: 1 for everyone).
    pub per_slot: Vec<f32>,
}

impl WeightGain {
    /// The factor on a slot's flocking weights.
    #[inline]
    pub fn of(&self, slot: usize) -> f32 {
        self.per_slot.get(slot).copied().unwrap_or(1.0)
    }
}

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<WeightGain>()
        .add_systems(FixedUpdate, steer_boids.in_set(SteerSystems::Flocking));
}

/// What the traversal learns of one boid for [`flocking_forces_into`]' second stage: its
/// neighbour sums, noise, and the velocity and swarm the force needs (so the force is worked
/// out without going back to the snapshot).
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    sums: FlockSums,
    noise: Vec2,
    vel: Vec2,
    swarm: Swarm,
}

/// Every boid's flocking and noise accelerations, px/s², as `put(flocking, noise)` into `out`
/// by snapshot slot, from one batched traversal of the neighbourhoods
/// ([`IndexRef::map_near_batched`]): SIMD over contiguous candidates where the backend has them
/// and the boid sees all round, one neighbour at a time otherwise; then the forces of each
/// batch of boids, Model B's eight at a time ([`shiffman8`]). Each boid's result depends only
/// on the snapshot, so the output is the same for any number of threads and any batching.
#[allow(clippy::too_many_arguments)]
pub fn flocking_forces_into<T: Send + Sync + Clone + Default + 'static>(
    snapshot: &Snapshot,
    index: &IndexRef,
    config: &SimConfig,
    gain: &WeightGain,
    dt: f32,
    step: u64,
    put: impl Fn(Vec2, Vec2) -> T + Sync,
    out: &mut [T],
) {
    let model = config.steering_model;
    let rules = Swarm::ALL.map(|s| Rules::new(config.swarms.get(s), model));
    let reach = rules.iter().map(|r| r.query_radius).fold(0.0, f32::max);
    let noise_draws = Draws::new(config.seed, step, Purpose::NOISE);
    let see = |i: usize, near: &Near, seen: &mut Seen| {
        let (p, v, swarm) = near.source(snapshot, i);
        let r = &rules[swarm.index()];
        let me = swarm.index() as u8;
        // The sums straight into the batch's buffer (see `lane_sums`). `seen` arrives as
        // `Seen::default()`, so the one-by-one scan below adds into zero sums.
        let sums = &mut seen.sums;
        let served = match (r.cos_fov, model) {
            (Some(_), _) => false,
            (None, SteeringModel::Shiffman) => {
                lane_sums::<false, false, false>(near, p, v, me, r, sums)
            }
            (None, SteeringModel::Hybrid | SteeringModel::Adams) => {
                lane_sums::<true, false, false>(near, p, v, me, r, sums)
            }
            (None, SteeringModel::Pygame) => {
                lane_sums::<false, true, false>(near, p, v, me, r, sums)
            }
            (None, SteeringModel::Report) => {
                lane_sums::<false, false, true>(near, p, v, me, r, sums)
            }
        };
        if !served {
            near.for_each_within(p, r.query_radius, |j, offset| {
                if j != i {
                    let same = snapshot.swarm[j] == swarm && !snapshot.isolated[j];
                    sums.add(r, v, offset, snapshot.vel[j], same);
                }
            });
        }
        let params = config.swarms.get(swarm);
        seen.noise = if params.noise > 0.0 {
            let draw = noise_draws.unit(snapshot.id[i], 0);
            noise_force(params.noise, dt, draw)
        } else {
            Vec2::ZERO
        };
        seen.vel = v;
        seen.swarm = swarm;
    };
    // Predator fear scales the flocking weights (docs/model.md §7).
    let finish = |slots: &[u32], seen: &mut [Seen], out: &mut [T]| {
        if model != SteeringModel::Shiffman {
            for ((o, s), &slot) in out.iter_mut().zip(seen.iter()).zip(slots) {
                let params = config.swarms.get(s.swarm);
                let force = flocking_force(model, &s.sums, s.vel, params, gain.of(slot as usize));
                *o = put(force, s.noise);
            }
            return;
        }
        // Model B eight boids at a time (bit for bit the scalar forces); a short last group
        // repeats its last boid.
        vectorized!(w => {
            for (g, run) in out.chunks_mut(8).enumerate() {
                let at = |k: usize| (g * 8 + k).min(seen.len() - 1);
                let f = shiffman8(
                    w,
                    std::array::from_fn(|k| &seen[at(k)].sums),
                    std::array::from_fn(|k| seen[at(k)].vel),
                    std::array::from_fn(|k| config.swarms.get(seen[at(k)].swarm)),
                    F8(std::array::from_fn(|k| gain.of(slots[at(k)] as usize))),
                );
                for (k, o) in run.iter_mut().enumerate() {
                    *o = put(f.lane(k), seen[g * 8 + k].noise);
                }
            }
        })
    };
    index.map_near_batched(snapshot, reach, |_| true, Targets::Every, see, finish, out);
}

/// Starts every boid's steering with its flocking and noise accelerations: their sum straight
/// into the totals, or both parts too when they are kept.
fn steer_boids(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    gain: Res<WeightGain>,
    neighbours: Neighbours,
    mut steering: ResMut<Steering>,
) {
    let snapshot = &*neighbours.snapshot;
    let index = neighbours.index();
    let (dt, step) = (time.delta_secs(), clock.step);
    steering.start(snapshot.len(), |total, parts| match parts {
        None => {
            let sum = |flocking: Vec2, noise: Vec2| flocking + noise;
            flocking_forces_into(snapshot, &index, &config, &gain, dt, step, sum, total);
        }
        Some(parts) => {
            // The two parts straight into each boid's kept parts, then their sums.
            let part = |flocking, noise| SteeringParts {
                flocking,
                noise,
                ..default()
            };
            flocking_forces_into(snapshot, &index, &config, &gain, dt, step, part, parts);
            zip_runs(total, parts, 1, |_, total, parts| {
                for (t, p) in total.iter_mut().zip(parts) {
                    *t = p.flocking + p.noise;
                }
            });
        }
    });
}
