//! Flocking steering (docs/model.md §4): separation across all swarms, alignment and cohesion
//! within a swarm, field of view, noise; the baseline Shiffman Model B plus the `hybrid`,
//! `adams`, `pygame` and `report` models. The maths is in `models`, the SIMD gathering in `gather`;
//! `steer_boids` (phase `SimSystems::Steer`) traverses every boid's neighbourhood once, calls
//! them, and writes `Steering::flocking` and `Steering::noise`, in parallel over boids.

mod gather;
mod models;
#[cfg(test)]
mod tests;

pub use gather::lane_sums;
pub use models::{
    ADAMS_REFERENCE_FPS, FULL_FOV, FlockSums, Rules, alignment, cohesion, flocking_force, in_view,
    noise_force, separation,
};

use bevy::prelude::*;

use crate::sim::agent::{Boid, Steering};
use crate::sim::clock::SimClock;
use crate::sim::config::{SimConfig, SteeringModel};
use crate::sim::neighbours::{IndexRef, Neighbours, Snapshot};
use crate::sim::rng::{Purpose, draw_unit};
use crate::sim::schedule::SteerSystems;
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

/// Every boid's flocking and noise accelerations, px/s², indexed by snapshot slot, from one
/// batched traversal of the neighbourhoods ([`IndexRef::map_near`]): SIMD over contiguous
/// candidates where the backend has them and the boid sees all round, one neighbour at a time
/// otherwise. Each boid's result depends only on the snapshot, so the output is the same for
/// any number of threads.
pub fn flocking_forces(
    snapshot: &Snapshot,
    index: &IndexRef,
    config: &SimConfig,
    gain: &WeightGain,
    dt: f32,
    step: u64,
) -> Vec<(Vec2, Vec2)> {
    let model = config.steering_model;
    let rules = Swarm::ALL.map(|s| Rules::new(config.swarms.get(s), model));
    let reach = rules.iter().map(|r| r.query_radius).fold(0.0, f32::max);
    index.map_near(
        snapshot,
        reach,
        false,
        |_| true,
        |_| true,
        |i, near| {
            let swarm = snapshot.swarm[i];
            let r = &rules[swarm.index()];
            let (p, v) = (snapshot.pos[i], snapshot.vel[i]);
            let me = swarm.index() as u8;
            let simd = match (r.cos_fov, model) {
                (Some(_), _) => None,
                (None, SteeringModel::Pygame) => lane_sums::<true, false>(near, p, v, me, r),
                (None, SteeringModel::Report) => lane_sums::<false, true>(near, p, v, me, r),
                (None, _) => lane_sums::<false, false>(near, p, v, me, r),
            };
            let sums = simd.unwrap_or_else(|| {
                let mut sums = FlockSums::default();
                near.for_each_within(p, r.query_radius, |j, offset| {
                    if j != i {
                        let same = snapshot.swarm[j] == swarm && !snapshot.isolated[j];
                        sums.add(r, v, offset, snapshot.vel[j], same);
                    }
                });
                sums
            });
            let params = config.swarms.get(swarm);
            let noise = if params.noise > 0.0 {
                let draw = draw_unit(config.seed, step, snapshot.id[i], 0, Purpose::NOISE);
                noise_force(params.noise, dt, draw)
            } else {
                Vec2::ZERO
            };
            // Predator fear scales the flocking weights (docs/model.md §7).
            (flocking_force(model, &sums, v, params, gain.of(i)), noise)
        },
    )
}

/// Writes every boid's flocking and noise accelerations.
fn steer_boids(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    gain: Res<WeightGain>,
    neighbours: Neighbours,
    mut boids: Query<(Entity, &mut Steering), With<Boid>>,
) {
    let snapshot = &*neighbours.snapshot;
    let forces = flocking_forces(
        snapshot,
        &neighbours.index(),
        &config,
        &gain,
        time.delta_secs(),
        clock.step,
    );
    crate::for_each_item!(boids, snapshot.len(), |(entity, mut steering)| {
        if let Some(i) = snapshot.slot_of(entity) {
            (steering.flocking, steering.noise) = forces[i];
        }
    });
}
