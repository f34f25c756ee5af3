//! Every backend against brute force: the same neighbour sets and the same minimum-image
//! offsets, across the seam, at the edges and corners, on worlds small enough that a
//! neighbourhood spans a whole axis; and the batched traversal against single queries.

use super::snapshot::tests::random_snapshot;
use super::test_support::AllBackends;
use super::*;
use crate::sim::agent::Disease;
use crate::sim::space::{Boundary, Space};
use rand::{Rng, SeedableRng};

#[test]
fn all_backends_match_brute_force_on_random_layouts() {
    let mut checked = 0;
    for (seed, (w, h, boundary)) in [
        (1920.0, 1080.0, Boundary::Wrap),
        (300.0, 200.0, Boundary::Wrap),
        (130.0, 130.0, Boundary::Wrap),
        (500.0, 400.0, Boundary::Bounce),
    ]
    .into_iter()
    .enumerate()
    {
        let space = Space {
            width: w,
            height: h,
            boundary,
        };
        for (n, cell) in [
            (0usize, 25.0),
            (1, 25.0),
            (7, 50.0),
            (400, 25.0),
            (900, 60.0),
        ] {
            let b = AllBackends::new(
                random_snapshot(space, n, seed as u64 * 100 + n as u64),
                cell,
            );
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed as u64);
            for q in 0..60 {
                let centre = if q % 2 == 0 && n > 0 {
                    b.snapshot.pos[q % n]
                } else {
                    let p = Vec2::new(rng.random::<f32>() * w, rng.random::<f32>() * h);
                    if q % 3 == 0 {
                        Vec2::new(w - 0.5, 0.25)
                    } else {
                        p
                    }
                };
                let half = 0.5 * w.min(h);
                for radius in [0.0, 1.0, 10.0, 25.0, 50.0, 120.0, half - 0.01] {
                    if radius >= half {
                        continue;
                    }
                    let want = b.get(IndexKind::Brute).within(centre, radius);
                    for kind in [IndexKind::Kdtree, IndexKind::Grid] {
                        let got = b.get(kind).within(centre, radius);
                        assert_eq!(
                            got, want,
                            "{kind:?} n={n} r={radius} at {centre} in {w}x{h} {boundary:?}"
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 5000);
}

#[test]
fn offsets_are_minimum_image_and_identical_across_backends() {
    let space = Space::torus(200.0, 100.0);
    let b = AllBackends::new(random_snapshot(space, 300, 9), 30.0);
    for centre in [
        Vec2::new(1.0, 1.0),
        Vec2::new(199.5, 50.0),
        Vec2::new(100.0, 99.9),
    ] {
        let collect = |kind| {
            let mut v = Vec::new();
            b.get(kind)
                .for_each_within(centre, 30.0, |slot, off| v.push((slot, off)));
            v.sort_by_key(|x| x.0);
            v
        };
        let brute = collect(IndexKind::Brute);
        assert!(!brute.is_empty());
        for &(slot, off) in &brute {
            assert_eq!(off, space.displacement(centre, b.snapshot.pos[slot]));
            assert!(off.length() < 30.0);
        }
        assert_eq!(collect(IndexKind::Kdtree), brute);
        assert_eq!(collect(IndexKind::Grid), brute);
    }
}

#[test]
fn a_neighbour_across_the_seam_is_found() {
    let space = Space::torus(1920.0, 1080.0);
    let rows = vec![
        Row {
            entity: Entity::from_raw(0),
            id: 0,
            pos: Vec2::new(1.0, 1.0),
            vel: Vec2::X,
            swarm: Swarm::Normal,
            disease: Disease::Susceptible,
        },
        Row {
            entity: Entity::from_raw(1),
            id: 1,
            pos: Vec2::new(1915.0, 1075.0),
            vel: Vec2::X,
            swarm: Swarm::Normal,
            disease: Disease::Susceptible,
        },
    ];
    let b = AllBackends::new(Snapshot::from_rows(space, rows), 50.0);
    for kind in [IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute] {
        assert_eq!(
            b.get(kind).within(Vec2::new(1.0, 1.0), 25.0),
            vec![0, 1],
            "{kind:?}"
        );
    }
}
