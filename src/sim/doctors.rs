//! Doctor movement strategies (docs/model.md §5.3): `passive`, `seek_nearest` (the nearest infected
//! boid other than itself within `seek_radius`) and `seek_centroid` (the torus centroid of every
//! infected boid), steering with a clamped Reynolds seek scaled by `seek_weight`. Curing itself is
//! part of the epidemic. Isolated boids (docs/model.md §11) are not sought. `seek_infected` runs in
//! `SimSystems::Steer` and adds each doctor's seek to its `Steering`.

use bevy::prelude::*;

use crate::sim::config::{DoctorBehavior, SimConfig};
use crate::sim::math::steer;
use crate::sim::neighbours::{NeighbourIndex, Neighbours, Snapshot, SubsetIndex};
use crate::sim::schedule::{SimSystems, SteerSystems};
use crate::sim::steering::{Part, Steering};
use crate::sim::swarm::Swarm;

/// Radius of the first ring `seek_nearest` searches, px.
const FIRST_SEEK_RING: f32 = 40.0;

/// The seek acceleration toward a target `offset` away (minimum image):
/// `truncate(unit(offset)·v_max − v, F_max) · weight`; at most `weight · F_max`.
pub fn seek_force(offset: Vec2, v: Vec2, v_max: f32, f_max: f32, weight: f32) -> Vec2 {
    steer(offset, v, v_max, f_max) * weight
}

/// Offset from slot `i` to the nearest infected boid other than itself within `radius`
/// (ties go to the lower id), if any. Searches outward in doubling radii, so a doctor next to
/// an infected boid does not scan its whole seek radius.
pub fn nearest_infected(
    index: &impl NeighbourIndex,
    snapshot: &Snapshot,
    i: usize,
    radius: f32,
) -> Option<Vec2> {
    let mut r = radius.min(FIRST_SEEK_RING);
    loop {
        let mut best: Option<(f32, usize, Vec2)> = None;
        index.for_each_within(snapshot.pos[i], r, |j, offset| {
            if j == i || !snapshot.is_contagious(j) {
                return;
            }
            let d2 = offset.length_squared();
            if best.is_none_or(|(b2, bj, _)| d2 < b2 || (d2 == b2 && j < bj)) {
                best = Some((d2, j, offset));
            }
        });
        // The nearest within r is the nearest overall: anything closer is within r too.
        if best.is_some() || r >= radius {
            return best.map(|(_, _, offset)| offset);
        }
        r = (r * 2.0).min(radius);
    }
}

/// Torus centroid of every infected boid in the snapshot, if any.
pub fn infected_centroid(snapshot: &Snapshot) -> Option<Vec2> {
    snapshot.space().centroid(
        (0..snapshot.len())
            .filter(|&i| snapshot.is_contagious(i))
            .map(|i| snapshot.pos[i]),
    )
}

/// An index over the infected only, so a doctor's search examines infected boids alone. The
/// nearest infected boid does not depend on the index that finds it (ties go to the lower id),
/// so this serves every backend.
#[derive(Resource, Default)]
pub struct InfectedIndex(pub SubsetIndex);

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<InfectedIndex>().add_systems(
        FixedUpdate,
        (
            index_infected.in_set(SimSystems::Sense),
            seek_infected.in_set(SteerSystems::Seek),
        ),
    );
}

fn index_infected(
    config: Res<SimConfig>,
    neighbours: Neighbours,
    mut infected: ResMut<InfectedIndex>,
) {
    if config.doctors.behavior == DoctorBehavior::SeekNearest {
        let s = &*neighbours.snapshot;
        infected
            .0
            .rebuild(s, FIRST_SEEK_RING, |i| s.is_contagious(i));
    }
}

/// Adds every doctor's seek to its steering (zero for passive doctors; nothing without
/// doctors, or when all are passive).
fn seek_infected(
    config: Res<SimConfig>,
    neighbours: Neighbours,
    infected: Res<InfectedIndex>,
    mut steering: ResMut<Steering>,
) {
    let s = &*neighbours.snapshot;
    let index = &infected.0;
    let behavior = config.doctors.behavior;
    let centroid = match behavior {
        DoctorBehavior::SeekCentroid => infected_centroid(s),
        _ => None,
    };
    let params = &config.swarms.doctor;
    let space = s.space();
    // Every doctor's seek by slot, worked out in parallel (a doctor's search is most of the
    // work) as it is added.
    let seek_of = |i: usize| {
        if s.swarm[i] != Swarm::Doctor {
            return Vec2::ZERO;
        }
        let offset = match behavior {
            DoctorBehavior::Passive => None,
            DoctorBehavior::SeekNearest => {
                nearest_infected(index, s, i, config.doctors.seek_radius)
            }
            DoctorBehavior::SeekCentroid => centroid.map(|c| space.displacement(s.pos[i], c)),
        };
        offset.map_or(Vec2::ZERO, |offset| {
            seek_force(
                offset,
                s.vel[i],
                params.max_speed,
                params.max_force,
                config.doctors.seek_weight,
            )
        })
    };
    // Passive doctors, or none: every seek is zero, with nothing to search or add.
    if behavior != DoctorBehavior::Passive && s.swarm.contains(&Swarm::Doctor) {
        steering.add(Part::Seek, seek_of);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::agent::Disease;
    use crate::sim::config::IndexKind;
    use crate::sim::neighbours::Row;
    use crate::sim::neighbours::test_support::AllBackends;
    use crate::sim::space::Space;

    fn world(boids: &[(Vec2, Swarm, bool)]) -> AllBackends {
        let rows = boids
            .iter()
            .enumerate()
            .map(|(k, &(pos, swarm, sick))| Row {
                entity: Entity::from_raw(k as u32),
                id: k as u64,
                pos,
                vel: Vec2::new(0.0, 100.0),
                swarm,
                disease: if sick {
                    Disease::Infected { since: 0.0 }
                } else {
                    Disease::Susceptible
                },
            })
            .collect();
        AllBackends::new(Snapshot::from_rows(Space::torus(1000.0, 800.0), rows), 50.0)
    }

    #[test]
    fn nearest_infected_skips_self_and_healthy_and_wraps() {
        let b = world(&[
            (Vec2::new(10.0, 400.0), Swarm::Doctor, true), // itself infected: skipped
            (Vec2::new(30.0, 400.0), Swarm::Normal, false), // healthy
            (Vec2::new(960.0, 400.0), Swarm::Normal, true), // 50 px across the seam
            (Vec2::new(100.0, 400.0), Swarm::Normal, true), // 90 px
        ]);
        for kind in [IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute] {
            let off = nearest_infected(&b.get(kind), &b.snapshot, 0, 300.0).unwrap();
            assert!(
                (off - Vec2::new(-50.0, 0.0)).length() < 1e-3,
                "{kind:?}: {off}"
            );
            assert_eq!(nearest_infected(&b.get(kind), &b.snapshot, 0, 40.0), None);
        }
    }

    #[test]
    fn seek_is_bounded_by_weight_times_f_max_and_points_at_target() {
        let (v_max, f_max, w) = (180.0, 180.0, 5.0);
        for (offset, v) in [
            (Vec2::new(-50.0, 0.0), Vec2::new(180.0, 0.0)),
            (Vec2::new(3.0, 4.0), Vec2::new(0.0, -180.0)),
            (Vec2::new(0.0, 250.0), Vec2::new(0.0, 170.0)),
        ] {
            let f = seek_force(offset, v, v_max, f_max, w);
            assert!(f.length() <= w * f_max + 1e-3, "{f}");
        }
        // From rest the seek points straight at the target.
        let f = seek_force(Vec2::new(-50.0, 0.0), Vec2::ZERO, v_max, f_max, w);
        assert!((f - Vec2::new(-w * f_max, 0.0)).length() < 1e-3);
    }

    #[test]
    fn centroid_of_infected_straddling_the_seam() {
        let b = world(&[
            (Vec2::new(990.0, 100.0), Swarm::Normal, true),
            (Vec2::new(10.0, 100.0), Swarm::Normal, true),
            (Vec2::new(500.0, 500.0), Swarm::Normal, false),
        ]);
        let c = infected_centroid(&b.snapshot).unwrap();
        assert!(c.x < 1e-2 || c.x > 999.99, "{c}");
        assert!((c.y - 100.0).abs() < 1e-2);
        // A doctor at x = 980 steers +x (the short way, across the seam), not −x.
        let space = b.snapshot.space();
        let f = seek_force(
            space.displacement(Vec2::new(980.0, 100.0), c),
            Vec2::ZERO,
            180.0,
            180.0,
            5.0,
        );
        assert!(f.x > 0.0, "{f}");
    }
}
