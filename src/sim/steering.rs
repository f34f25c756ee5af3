//! This step's steering (docs/model.md §4): every boid's acceleration, by snapshot slot. The
//! force modules add their parts in the order of `SteerSystems` (flocking and noise first,
//! then the doctors' seek, the Antivax flight from doctors, the flight from predators) and the
//! integrator applies the sum. Each part of each boid is kept too when asked — the window does,
//! for its inspector (48 bytes a boid more); a headless run keeps only the sums, 8 bytes a boid
//! rather than the 48 of a component of five parts with Bevy's change ticks. Its one observer
//! forgets every boid's steering when a run starts; no systems live here.

use bevy::prelude::*;

use crate::sim::agent::RunStarted;
use crate::sim::parallel::{fill_runs, zip_runs};

/// One boid's steering this step, part by part, px/s².
#[derive(Reflect, Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SteeringParts {
    /// Separation + alignment + cohesion, weighted (flocking module).
    pub flocking: Vec2,
    /// Random acceleration (flocking module).
    pub noise: Vec2,
    /// Doctor seek toward the infected (doctors module).
    pub seek: Vec2,
    /// Antivax flight from doctors (antivax module).
    pub repulsion: Vec2,
    /// Flight from predators (predators module).
    pub flee: Vec2,
    /// The forces extensions add, summed ([`Part::Other`]; zero without any).
    pub other: Vec2,
}

impl SteeringParts {
    /// The total acceleration F of docs/model.md §4: the parts added in this order, as
    /// [`Steering`] adds them — the very bits it applies while at most one force of an
    /// extension is at work (with more, `other` is their sum, and the applied total adds them
    /// one by one, so the last bit may differ: [`Steering::total`] is the one applied).
    pub fn total(&self) -> Vec2 {
        self.flocking + self.noise + self.seek + self.repulsion + self.flee + self.other
    }

    fn set(&mut self, part: Part, value: Vec2) {
        match part {
            Part::Seek => self.seek = value,
            Part::Repulsion => self.repulsion = value,
            Part::Flee => self.flee = value,
            Part::Other => self.other += value,
        }
    }
}

/// A part of a boid's steering that is added after flocking and noise, which start the sums
/// ([`Steering::start`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Doctor seek toward the infected.
    Seek,
    /// Antivax flight from doctors.
    Repulsion,
    /// Flight from predators.
    Flee,
    /// A force of an extension (systems in `SimSystems::Steer` ordered after
    /// `SteerSystems::Flee`); the inspector shows the sum of every such part as `other`.
    Other,
}

/// Every boid's steering this step, by snapshot slot (the `Snapshot` of `SimSystems::Index`):
/// the total acceleration the integrator applies and, when [`Steering::keeping_parts`], each
/// part. A new force adds its part with [`Steering::add`] (as [`Part::Other`]) from a system
/// in `SimSystems::Steer` ordered after `SteerSystems::Flee`.
#[derive(Resource, Debug, Default)]
pub struct Steering {
    /// Total acceleration of each slot, px/s².
    total: Vec<Vec2>,
    /// The parts of each slot (empty unless kept).
    parts: Vec<SteeringParts>,
    /// Whether the parts are kept.
    keep_parts: bool,
}

impl Steering {
    /// Steering that keeps every boid's parts as well as its total (for an inspector).
    pub fn keeping_parts() -> Self {
        Self {
            keep_parts: true,
            ..Self::default()
        }
    }

    /// Starts the step's sums for `n` boids: `write(totals, parts)` fills every slot's total
    /// with its flocking + noise and, when parts are kept, those two parts of `parts` (`None`
    /// otherwise). It must write every slot. Every other part starts at zero.
    pub fn start(
        &mut self,
        n: usize,
        write: impl FnOnce(&mut [Vec2], Option<&mut [SteeringParts]>),
    ) {
        self.total.resize(n, Vec2::ZERO);
        self.parts.clear();
        if self.keep_parts {
            self.parts.resize(n, SteeringParts::default());
            write(&mut self.total, Some(&mut self.parts));
        } else {
            write(&mut self.total, None);
        }
    }

    /// Adds `part(slot)` to every boid's total, after the parts added before it. `part` is
    /// called once for every slot, from several threads at once: it must depend only on the
    /// slot (read the step's `Snapshot` for the boid's position, velocity, swarm, entity and
    /// id).
    pub fn add(&mut self, which: Part, part: impl Fn(usize) -> Vec2 + Sync) {
        if self.parts.is_empty() {
            fill_runs(&mut self.total, 1, |first, total| {
                for (k, t) in total.iter_mut().enumerate() {
                    *t += part(first + k);
                }
            });
        } else {
            zip_runs(
                &mut self.total,
                &mut self.parts,
                1,
                |first, total, parts| {
                    for (k, (t, p)) in total.iter_mut().zip(parts).enumerate() {
                        let value = part(first + k);
                        *t += value;
                        p.set(which, value);
                    }
                },
            );
        }
    }

    /// The total acceleration of `slot` (zero for a slot this step has none for).
    pub fn total(&self, slot: usize) -> Vec2 {
        self.total.get(slot).copied().unwrap_or(Vec2::ZERO)
    }

    /// The parts of `slot`, if they are kept and the step had it.
    pub fn parts(&self, slot: usize) -> Option<&SteeringParts> {
        self.parts.get(slot)
    }

    /// Boids with a total this step.
    pub fn len(&self) -> usize {
        self.total.len()
    }

    /// Whether no boid has a total.
    pub fn is_empty(&self) -> bool {
        self.total.is_empty()
    }

    /// Forgets every boid's steering (a run restored from a checkpoint has none until its
    /// first step).
    pub fn clear(&mut self) {
        self.total.clear();
        self.parts.clear();
    }
}

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Steering>()
        .register_type::<SteeringParts>()
        .add_observer(forget_steering);
}

/// A new run's boids have no steering until its first step (the slots are another run's).
fn forget_steering(_: Trigger<RunStarted>, mut steering: ResMut<Steering>) {
    steering.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f32, y: f32) -> Vec2 {
        Vec2::new(x, y)
    }

    /// Three boids: flocking (1, 2)·slot, noise (0.5, 0); then a seek and a flight.
    fn step(steering: &mut Steering) {
        steering.start(3, |total, parts| {
            for (i, t) in total.iter_mut().enumerate() {
                let i = i as f32;
                *t = v(i, 2.0 * i) + v(0.5, 0.0);
            }
            if let Some(parts) = parts {
                for (i, p) in parts.iter_mut().enumerate() {
                    let i = i as f32;
                    (p.flocking, p.noise) = (v(i, 2.0 * i), v(0.5, 0.0));
                }
            }
        });
        steering.add(
            Part::Seek,
            |i| if i == 1 { v(10.0, 0.0) } else { Vec2::ZERO },
        );
        steering.add(Part::Flee, |i| v(0.0, -(i as f32)));
        steering.add(Part::Other, |_| v(0.25, 0.0));
        steering.add(Part::Other, |_| v(0.0, 0.25));
    }

    #[test]
    fn the_totals_add_the_parts_in_order() {
        let mut steering = Steering::default();
        step(&mut steering);
        // Slot 1: (1, 2) + (0.5, 0) + (10, 0) + (0, −1) + (0.25, 0) + (0, 0.25) = (11.75, 1.25).
        assert_eq!(steering.total(0), v(0.75, 0.25));
        assert_eq!(steering.total(1), v(11.75, 1.25));
        assert_eq!(steering.total(2), v(2.75, 2.25));
        assert_eq!(steering.total(3), Vec2::ZERO);
        assert_eq!(steering.len(), 3);
        assert!(steering.parts(1).is_none(), "parts are not kept by default");
    }

    #[test]
    fn kept_parts_add_up_to_the_totals_bit_for_bit() {
        let mut steering = Steering::keeping_parts();
        step(&mut steering);
        let p = steering.parts(1).copied().unwrap();
        assert_eq!(p.seek, v(10.0, 0.0));
        assert_eq!(p.flee, v(0.0, -1.0));
        assert_eq!(p.repulsion, Vec2::ZERO);
        assert_eq!(p.other, v(0.25, 0.25), "extensions' parts add up");
        for i in 0..3 {
            let total = steering.parts(i).unwrap().total();
            assert_eq!(
                total.to_array().map(f32::to_bits),
                steering.total(i).to_array().map(f32::to_bits)
            );
        }
        // A new step starts every part again: last step's seek is gone.
        steering.start(3, |total, parts| {
            total.fill(Vec2::ZERO);
            parts
                .unwrap()
                .iter_mut()
                .for_each(|p| p.flocking = Vec2::ZERO);
        });
        assert_eq!(steering.parts(1).unwrap().seek, Vec2::ZERO);
        steering.clear();
        assert!(steering.is_empty() && steering.parts(0).is_none());
    }
}
