//! Antivax behaviour (docs/model.md §5.4): Antivax boids flee doctors within `repulsion_radius` with
//! `truncate(unit(mean_j unit(p_i − p_d)/d)·v_max − v, F_max) · repulsion_weight`. (Conversion at
//! spawn is part of recruitment; flocking with their own kind falls out of the swarm rules.)
//! `flee_doctors` runs in `SimSystems::Steer` and owns `Steering::repulsion`.

use bevy::prelude::*;

use crate::sim::agent::{Boid, Steering};
use crate::sim::config::{IndexKind, SimConfig};
use crate::sim::math::{UNIT_EPSILON, steer};
use crate::sim::neighbours::{Grid, IndexRef, NeighbourIndex, Neighbours, Snapshot};
use crate::sim::swarm::Swarm;
use crate::{SimSystems, SteerSystems};

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
    let (mut away, mut n) = (Vec2::ZERO, 0u32);
    index.for_each_within(s.pos[i], radius, |j, offset| {
        if j != i && s.swarm[j] == Swarm::Doctor {
            n += 1;
            let d2 = offset.length_squared();
            if d2.sqrt() >= UNIT_EPSILON {
                away -= offset / d2;
            }
        }
    });
    if n == 0 {
        return Vec2::ZERO;
    }
    steer(away / n as f32, s.vel[i], v_max, f_max) * weight
}

/// On the grid backend, a grid over the doctors only, so an Antivax boid's search examines
/// doctors alone (large populations); the other backends search their main index.
#[derive(Resource, Default)]
pub struct DoctorIndex(pub Grid);

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<DoctorIndex>().add_systems(
        FixedUpdate,
        (
            index_doctors.in_set(SimSystems::Sense),
            flee_doctors.in_set(SteerSystems::Flee),
        ),
    );
}

fn index_doctors(config: Res<SimConfig>, neighbours: Neighbours, mut doctors: ResMut<DoctorIndex>) {
    if neighbours.kind() == IndexKind::Grid {
        let s = &*neighbours.snapshot;
        doctors
            .0
            .rebuild_subset(s, config.antivax.repulsion_radius, |i| {
                s.swarm[i] == Swarm::Doctor
            });
    }
}

/// Writes every boid's `Steering::repulsion` (zero unless Antivax with a doctor near).
fn flee_doctors(
    config: Res<SimConfig>,
    neighbours: Neighbours,
    doctors: Res<DoctorIndex>,
    mut boids: Query<(Entity, &mut Steering), With<Boid>>,
) {
    let s = &*neighbours.snapshot;
    let index = match neighbours.kind() {
        IndexKind::Grid => IndexRef::Grid(&doctors.0),
        _ => neighbours.index(),
    };
    let p = &config.swarms.antivax;
    let a = &config.antivax;
    crate::for_each_item!(boids, s.len(), |(entity, mut steering)| {
        let f = s
            .slot_of(entity)
            .filter(|&i| s.swarm[i] == Swarm::Antivax)
            .map(|i| {
                repulsion(
                    &index,
                    s,
                    i,
                    a.repulsion_radius,
                    p.max_speed,
                    p.max_force,
                    a.repulsion_weight,
                )
            })
            .unwrap_or(Vec2::ZERO);
        if steering.repulsion != f {
            steering.repulsion = f;
        }
    });
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
