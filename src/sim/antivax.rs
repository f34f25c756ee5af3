//! Antivax behaviour (docs/model.md §5.4): Antivax boids flee doctors within `repulsion_radius`
//! with `truncate(unit(mean_j unit(p_i − p_d)/d)·v_max − v, F_max) · repulsion_weight`. (Conversion
//! at spawn is part of recruitment; flocking with their own kind falls out of the swarm rules.)
//! `flee_doctors` runs in `SimSystems::Steer` and adds each Antivax boid's flight to its
//! `Steering`.

use bevy::prelude::*;

use crate::sim::config::SimConfig;
use crate::sim::math::{UNIT_EPSILON, steer};
use crate::sim::neighbours::{NeighbourIndex, Neighbours, Snapshot, Targets};
use crate::sim::schedule::SteerSystems;
use crate::sim::steering::{Part, Steering};
use crate::sim::swarm::Swarm;

/// The doctors an Antivax boid flees, summed as they are found: `Σ unit(p_i − p_d)/d` and how
/// many.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flight {
    away: Vec2,
    n: u32,
}

impl Flight {
    /// Adds a doctor at `offset = p_d − p_i`.
    #[inline]
    pub fn add(&mut self, offset: Vec2) {
        self.n += 1;
        let d2 = offset.length_squared();
        if d2.sqrt() >= UNIT_EPSILON {
            self.away -= offset / d2;
        }
    }

    /// The flight acceleration: `truncate(unit(mean)·v_max − v, F_max)·weight`, zero without
    /// doctors.
    pub fn force(&self, v: Vec2, v_max: f32, f_max: f32, weight: f32) -> Vec2 {
        if self.n == 0 {
            return Vec2::ZERO;
        }
        steer(self.away / self.n as f32, v, v_max, f_max) * weight
    }
}

/// The flight acceleration of Antivax slot `i` from doctors closer than `radius`.
pub fn repulsion(
    index: &impl NeighbourIndex,
    s: &Snapshot,
    i: usize,
    radius: f32,
    v_max: f32,
    f_max: f32,
    weight: f32,
) -> Vec2 {
    let mut flight = Flight::default();
    index.for_each_within(s.pos[i], radius, |j, offset| {
        if j != i && s.swarm[j] == Swarm::Doctor {
            flight.add(offset);
        }
    });
    flight.force(s.vel[i], v_max, f_max, weight)
}

pub(super) fn plugin(app: &mut App) {
    app.add_systems(FixedUpdate, flee_doctors.in_set(SteerSystems::Repulsion));
}

/// Adds every boid's flight from doctors to its steering (zero unless Antivax with a doctor
/// near; nothing when no one can flee).
fn flee_doctors(config: Res<SimConfig>, neighbours: Neighbours, mut steering: ResMut<Steering>) {
    let s = &*neighbours.snapshot;
    let p = &config.swarms.antivax;
    let a = &config.antivax;
    let radius = a.repulsion_radius;
    // Every Antivax boid's flight, by slot, from one traversal of their neighbourhoods among
    // the doctors (a few of the boids). Without Antivax boids or without doctors no one flees:
    // nothing to index, search or add.
    if !(s.swarm.contains(&Swarm::Antivax) && s.swarm.contains(&Swarm::Doctor)) {
        return;
    }
    let forces = neighbours.index().map_near(
        s,
        radius,
        true,
        |i| s.swarm[i] == Swarm::Antivax,
        Targets::Where(&|j| s.swarm[j] == Swarm::Doctor),
        |i, doctors| {
            let mut flight = Flight::default();
            doctors.for_each_within(s.pos[i], radius, |_, offset| flight.add(offset));
            flight.force(s.vel[i], p.max_speed, p.max_force, a.repulsion_weight)
        },
    );
    steering.add(Part::Repulsion, |i| forces[i]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::agent::Disease;
    use crate::sim::config::IndexKind;
    use crate::sim::neighbours::Row;
    use crate::sim::neighbours::test_support::AllBackends;
    use crate::sim::space::Space;

    #[test]
    fn antivax_flee_doctors_only() {
        let rows = [
            (Vec2::new(500.0, 500.0), Swarm::Antivax),
            (Vec2::new(540.0, 500.0), Swarm::Doctor),
            (Vec2::new(500.0, 520.0), Swarm::Normal),
        ]
        .iter()
        .enumerate()
        .map(|(k, &(pos, swarm))| Row {
            entity: Entity::from_raw(k as u32),
            id: k as u64,
            pos,
            vel: Vec2::ZERO,
            swarm,
            disease: Disease::Susceptible,
        })
        .collect();
        let b = AllBackends::new(
            Snapshot::from_rows(Space::torus(1000.0, 1000.0), rows),
            50.0,
        );
        let f = repulsion(
            &b.get(IndexKind::Kdtree),
            &b.snapshot,
            0,
            100.0,
            180.0,
            180.0,
            3.0,
        );
        // Away from the doctor (−x), full F_max times the weight, since the boid is at rest.
        assert!((f - Vec2::new(-540.0, 0.0)).length() < 1e-3, "{f}");
        assert_eq!(
            repulsion(
                &b.get(IndexKind::Kdtree),
                &b.snapshot,
                0,
                30.0,
                180.0,
                180.0,
                3.0
            ),
            Vec2::ZERO
        );
    }
}
