//! Doctor movement strategies (docs/model.md §5.3): `passive`, `seek_nearest` (the nearest infected
//! boid other than itself within `seek_radius`) and `seek_centroid` (the torus centroid of every
//! infected boid), steering with a clamped Reynolds seek scaled by `seek_weight`. Curing itself is
//! part of the epidemic. Isolated boids (docs/model.md §11) are not sought. `seek_infected` runs in
//! `SimSystems::Steer` and adds each doctor's seek to its `Steering`.

use std::f32::consts::PI;

use bevy::prelude::*;

use crate::sim::config::{DoctorBehavior, SimConfig};
use crate::sim::math::steer;
use crate::sim::neighbours::{NeighbourIndex, Neighbours, Snapshot, SubsetIndex};
use crate::sim::schedule::{SimSystems, SteerSystems};
use crate::sim::steering::{Part, Steering};
use crate::sim::swarm::Swarm;

/// The smallest first ring `seek_nearest` searches, px.
const FIRST_SEEK_RING: f32 = 40.0;

/// Infected boids a doctor's first ring holds on average where they are spread evenly: with 3,
/// a doctor needs a second search once in twenty (e⁻³).
const FIRST_RING_HOLDS: f32 = 3.0;

/// The seek acceleration toward a target `offset` away (minimum image):
/// `truncate(unit(offset)·v_max − v, F_max) · weight`; at most `weight · F_max`.
pub fn seek_force(offset: Vec2, v: Vec2, v_max: f32, f_max: f32, weight: f32) -> Vec2 {
    steer(offset, v, v_max, f_max) * weight
}

/// Offset from slot `i` to the nearest infected boid other than itself within `radius`
/// (ties go to the lower id), if any: the nearest boid of `index` that `infected` keeps. With
/// an index of the infected alone ([`InfectedIndex`]) that is every boid of it, and `infected`
/// can keep them all, saving a look at each one's state (a read far from the last, in a
/// city's snapshot). Searches outward in doubling radii from `first` (at least
/// [`FIRST_SEEK_RING`]), so a doctor next to an infected boid does not scan its whole seek
/// radius. Which radii are searched changes only the time taken: the nearest boid within the
/// first radius that holds any is the nearest within `radius`, and its offset is the same
/// from any query.
pub fn nearest_infected(
    index: &impl NeighbourIndex,
    snapshot: &Snapshot,
    i: usize,
    (first, radius): (f32, f32),
    infected: impl Fn(usize) -> bool,
) -> Option<Vec2> {
    let mut r = first.max(FIRST_SEEK_RING).min(radius);
    loop {
        let mut best: Option<(f32, usize, Vec2)> = None;
        index.for_each_within(snapshot.pos[i], r, |j, offset| {
            if j == i || !infected(j) {
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

/// The first ring of a doctor's search among `infected` boids in a world of `area` px² with
/// a seek radius of `radius`: the radius that holds [`FIRST_RING_HOLDS`] of them on average
/// where they are spread evenly, at least [`FIRST_SEEK_RING`] and at most `radius`. With few
/// infected a fixed small ring missed: at 100 000 boids, 6 000 of them infected, the 10 000
/// doctors made 17 500–20 300 searches a step (BENCHMARKS.md, round 3, thirty-fifth stop).
pub fn first_seek_ring(infected: usize, area: f32, radius: f32) -> f32 {
    let even = (FIRST_RING_HOLDS * area / (PI * infected.max(1) as f32)).sqrt();
    even.max(FIRST_SEEK_RING).min(radius)
}

/// An index over the infected only, so a doctor's search examines infected boids alone, and
/// the first ring of the step's searches ([`first_seek_ring`] of their number). Its cells are
/// as wide as the ring of the step before (the number is known once the grid is built); the
/// cells change only the time a search takes. The nearest infected boid does not depend on
/// the index that finds it (ties go to the lower id), so this serves every backend.
#[derive(Resource, Default)]
pub struct InfectedIndex {
    /// The grid of the infected.
    pub index: SubsetIndex,
    /// The first ring of this step's searches, px (0 until the grid is first built).
    pub first_ring: f32,
}

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
        let radius = config.doctors.seek_radius;
        let cell = infected.first_ring.max(FIRST_SEEK_RING);
        infected.index.rebuild(s, cell, |i| s.is_contagious(i));
        let space = s.space();
        let count = infected.index.len();
        infected.first_ring = first_seek_ring(count, space.width * space.height, radius);
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
    let (index, first) = (&infected.index, infected.first_ring);
    let behavior = config.doctors.behavior;
    let centroid = match behavior {
        DoctorBehavior::SeekCentroid => infected_centroid(s),
        _ => None,
    };
    let params = &config.swarms.doctor;
    let space = s.space();
    // Every doctor's seek by slot, worked out in parallel (a doctor's search is most of the
    // work) as it is added. The test of the swarm is inlined into the loop over the slots,
    // and a doctor's search is a call: as one function, each of the nine in ten boids that are
    // not doctors paid for the search's frame.
    // (`identity` because an attribute on a closure is allowed as a call's argument.)
    let search = std::convert::identity(
        #[inline(never)]
        |i: usize| {
            let offset = match behavior {
                DoctorBehavior::Passive => None,
                // The index holds the contagious boids alone (`index_infected`, this step).
                DoctorBehavior::SeekNearest => {
                    nearest_infected(index, s, i, (first, config.doctors.seek_radius), |_| true)
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
        },
    );
    let seek_of = |i: usize| {
        if s.swarm[i] == Swarm::Doctor {
            search(i)
        } else {
            Vec2::ZERO
        }
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
            let sick = |j| b.snapshot.is_contagious(j);
            let off = nearest_infected(&b.get(kind), &b.snapshot, 0, (40.0, 300.0), sick).unwrap();
            assert!(
                (off - Vec2::new(-50.0, 0.0)).length() < 1e-3,
                "{kind:?}: {off}"
            );
            assert_eq!(
                nearest_infected(&b.get(kind), &b.snapshot, 0, (40.0, 40.0), sick),
                None
            );
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

    #[test]
    fn the_first_ring_holds_three_infected_where_they_are_even() {
        // 6 000 infected on 6 267² px: π r² · 6 000 / 6 267² = 3 at r = 79.06 px.
        let r = first_seek_ring(6000, 6267.0 * 6267.0, 300.0);
        assert!((r - 79.06).abs() < 0.01, "{r}");
        // None infected, or very few: the whole seek radius; very many: the smallest ring.
        assert_eq!(first_seek_ring(0, 1e6, 300.0), 300.0);
        assert_eq!(first_seek_ring(2, 1e8, 300.0), 300.0);
        assert_eq!(first_seek_ring(1_000_000, 1e6, 300.0), FIRST_SEEK_RING);
    }

    #[test]
    fn the_nearest_infected_is_the_same_whatever_the_first_ring_and_the_cells() {
        use crate::sim::neighbours::SubsetIndex;
        use rand::{Rng, SeedableRng};
        // Few infected (their grid's cells grow to fill its small budget) and many (cells of
        // 40 px), each with a seek radius that leaves many doctors none in reach.
        let (mut found, mut missed) = (0, 0);
        for (share, radius) in [(0.005, 150.0), (0.1, 60.0)] {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
            let space = Space::torus(1500.0, 900.0);
            let rows = (0..3000)
                .map(|k| Row {
                    entity: Entity::from_raw(k as u32),
                    id: k as u64,
                    pos: Vec2::new(rng.random::<f32>() * 1500.0, rng.random::<f32>() * 900.0),
                    vel: Vec2::ZERO,
                    swarm: Swarm::ALL[k % 3],
                    disease: if rng.random::<f64>() < share {
                        Disease::Infected { since: 0.0 }
                    } else {
                        Disease::Susceptible
                    },
                })
                .collect();
            let s = Snapshot::from_rows(space, rows);
            let grid_of = |cell: f32| {
                let mut index = SubsetIndex::default();
                index.rebuild(&s, cell, |i| s.is_contagious(i));
                index
            };
            let (fine, coarse) = (grid_of(FIRST_SEEK_RING), grid_of(170.0));
            let bits = |o: Option<Vec2>| o.map(|v| (v.x.to_bits(), v.y.to_bits()));
            // By brute force: the lowest-id infected boid at the least distance in reach.
            let brute = |i: usize| {
                (0..s.len())
                    .filter(|&j| j != i && s.is_contagious(j))
                    .map(|j| (space.displacement(s.pos[i], s.pos[j]), j))
                    .filter(|(d, _)| d.length_squared() < radius * radius)
                    .min_by(|(a, j), (b, k)| {
                        (a.length_squared(), j)
                            .partial_cmp(&(b.length_squared(), k))
                            .unwrap()
                    })
                    .map(|(d, _)| d)
            };
            for i in (0..s.len()).filter(|&i| s.swarm[i] == Swarm::Doctor) {
                let want = bits(brute(i));
                let firsts = [
                    (&fine, 40.0),
                    (&fine, 90.0),
                    (&coarse, 40.0),
                    (&coarse, 300.0),
                ];
                for (index, first) in firsts {
                    // The grids hold the infected alone: every boid in them is sought.
                    let got = bits(nearest_infected(index, &s, i, (first, radius), |_| true));
                    assert_eq!(got, want, "doctor {i}, first ring {first}, radius {radius}");
                }
                if want.is_some() {
                    found += 1
                } else {
                    missed += 1
                }
            }
        }
        assert!(
            found > 600 && missed > 400,
            "{found} found, {missed} with none in reach"
        );
    }
}
