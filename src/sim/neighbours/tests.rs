//! Every backend against brute force: the same neighbour sets and the same minimum-image
//! offsets, across the seam, at the edges and corners, on worlds small enough that a
//! neighbourhood spans a whole axis; and the batched traversal against single queries.

use super::grid::BATCH;
use super::snapshot::tests::random_snapshot;
use super::test_support::AllBackends;
use super::*;
use crate::sim::agent::Disease;
use crate::sim::lanes::F8;
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
                    // Counting without visiting finds as many (the grid's count is its own
                    // scan, eight entries at a time), or the cap when there are as many: the
                    // grid stops after the strip that reaches it.
                    for kind in [IndexKind::Brute, IndexKind::Kdtree, IndexKind::Grid] {
                        let n_in = want.len();
                        for cap in [usize::MAX, n_in + 1, n_in, n_in / 2, 1, 0] {
                            let count = b.get(kind).count_within(centre, radius, cap);
                            assert_eq!(count, n_in.min(cap), "{kind:?} counts n={n} r={radius}");
                        }
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

#[test]
fn a_batched_traversal_gives_each_boid_its_own_result_on_every_backend() {
    for (n, w) in [
        (0usize, 300.0),
        (1, 300.0),
        (7, 300.0),
        (400, 500.0),
        (3000, 1500.0),
        // Crowded into four cells: most parts of the traversal get no cell at all.
        (3000, 100.0),
    ] {
        let space = Space::torus(w, 0.8 * w);
        let b = AllBackends::new(random_snapshot(space, n, n as u64 + 5), 40.0);
        let s = &b.snapshot;
        let reach = 40.0;
        let source = |i: usize| i % 3 != 1;
        for kind in [IndexKind::Brute, IndexKind::Kdtree, IndexKind::Grid] {
            let index = b.get(kind);
            // Each source learns its own state and how many boids it has within reach.
            type Seen = (bool, (Vec2, Vec2, Swarm), usize);
            let mut got = vec![(u32::MAX, false, (Vec2::ZERO, Vec2::ZERO, Swarm::Normal), 0); n];
            index.map_near_batched(
                s,
                reach,
                source,
                Targets::Every,
                |i, near, seen: &mut Seen| {
                    let mut count = 0;
                    near.for_each_within(s.pos[i], reach, |_, _| count += 1);
                    *seen = (true, near.source(s, i), count);
                },
                |slots: &[u32],
                 seen: &mut [Seen],
                 out: &mut [(u32, bool, (Vec2, Vec2, Swarm), usize)]| {
                    assert!(slots.len() <= BATCH && slots.len() == seen.len());
                    assert_eq!(slots.len(), out.len());
                    for ((o, seen), &slot) in out.iter_mut().zip(seen.iter()).zip(slots) {
                        *o = (slot, seen.0, seen.1, seen.2);
                    }
                },
                &mut got,
            );
            for (i, (slot, ran, own, count)) in got.into_iter().enumerate() {
                assert_eq!(slot as usize, i, "{kind:?} n={n}: result in the wrong slot");
                assert_eq!(ran, source(i), "{kind:?} n={n} slot {i}");
                if ran {
                    assert_eq!(own, (s.pos[i], s.vel[i], s.swarm[i]), "{kind:?} slot {i}");
                    let want = b.get(IndexKind::Brute).within(s.pos[i], reach).len();
                    assert_eq!(count, want, "{kind:?} n={n} slot {i}");
                }
            }
        }
    }
}

#[test]
fn hits_found_eight_at_a_time_are_the_one_by_one_hits_with_their_squared_lengths() {
    // Worlds where the grid's neighbourhoods cross the seams, and span whole axes; a target
    // filter; radii below the reach, at it, and of zero.
    let (mut checked, mut kept_checked) = (0, 0);
    for (n, w, h) in [
        (1usize, 300.0, 200.0),
        (500, 400.0, 300.0),
        (900, 120.0, 700.0),
    ] {
        let space = Space::torus(w, h);
        let b = AllBackends::new(random_snapshot(space, n, n as u64 + 17), 40.0);
        let s = &b.snapshot;
        let reach = 40.0;
        let target = |j: usize| j % 5 != 2;
        for radius in [0.0, 13.0, 39.5, reach] {
            // The lanes' hits, the same with only swarm 0's lanes kept, and the one-by-one hits.
            type Hits = Vec<(usize, u32)>;
            let got: Vec<(bool, Hits, Hits, Hits)> = b.get(IndexKind::Grid).map_near(
                s,
                reach,
                false,
                |_| true,
                Targets::Where(&target),
                |i, near| {
                    // The source's own entry is its place in the grid.
                    assert_eq!(near.entry().map(|e| b.grid.slot[e] as usize), Some(i));
                    let (mut lanes, mut kept, mut one_by_one) =
                        (Vec::new(), Vec::new(), Vec::new());
                    let served = near.within_by_lanes(
                        s.pos[i],
                        radius,
                        |_, _, _| u32::MAX,
                        |j, e, d2| {
                            // The entry reported is the hit's own place in the grid.
                            assert_eq!(b.grid.slot[e] as usize, j, "entry {e}");
                            lanes.push((j, d2.to_bits()))
                        },
                        |_| panic!("every lane kept is a whole hit"),
                    );
                    // Swarm 0's lanes kept whole, then as entries alone: the same boids, in
                    // the same order.
                    let mut entries = Vec::new();
                    near.within_by_lanes(
                        s.pos[i],
                        radius,
                        |l, _, _| l.swarm.cmp_eq(F8::ZERO).move_mask(),
                        |j, _, d2| kept.push((j, d2.to_bits())),
                        |_| panic!("no lane is kept as an entry alone"),
                    );
                    near.within_by_lanes(
                        s.pos[i],
                        radius,
                        |l, _, _| l.swarm.cmp_eq(F8::ZERO).move_mask() << 8,
                        |_, _, _| panic!("every lane kept is an entry alone"),
                        |e| entries.push(b.grid.slot[e] as usize),
                    );
                    let kept_slots: Vec<usize> = kept.iter().map(|&(j, _)| j).collect();
                    assert_eq!(
                        entries, kept_slots,
                        "entries alone, slot {i}, radius {radius}"
                    );
                    near.for_each_within(s.pos[i], radius, |j, off| {
                        one_by_one.push((j, off.length_squared().to_bits()))
                    });
                    (served, lanes, kept, one_by_one)
                },
            );
            for (i, (served, lanes, kept, one_by_one)) in got.into_iter().enumerate() {
                assert!(served, "the grid serves lanes");
                assert_eq!(lanes, one_by_one, "slot {i}, radius {radius}, {w}x{h}");
                let of_swarm_0: Hits = one_by_one
                    .into_iter()
                    .filter(|&(j, _)| s.swarm[j].index() == 0)
                    .collect();
                assert_eq!(kept, of_swarm_0, "kept, slot {i}, radius {radius}, {w}x{h}");
                kept_checked += kept.len();
                checked += lanes.len();
            }
        }
        // Elsewhere nothing is called and the caller is told to go one by one.
        let none = b.get(IndexKind::Brute).map_near(
            s,
            reach,
            false,
            |_| true,
            Targets::Every,
            |i, near| {
                assert_eq!(near.entry(), None, "brute force has no entries");
                near.within_by_lanes(
                    s.pos[i],
                    reach,
                    |_, _, _| u32::MAX,
                    |_, _, _| panic!("no lanes here"),
                    |_| panic!("no lanes here"),
                )
            },
        );
        assert!(none.iter().all(|served| !served));
    }
    assert!(checked > 5000, "{checked} hits");
    assert!(
        kept_checked > 1000 && kept_checked < checked,
        "{kept_checked} of {checked} hits kept"
    );
}

#[test]
fn a_search_among_few_targets_finds_a_query_s_hits_in_its_order() {
    // The grid's traversal with few targets (Antivax boids among the doctors) searches a grid
    // of the targets a cell's neighbourhood at a time: it must find, for every source, the
    // hits of a query of that grid from it, in the same order and with the same offsets (a
    // sum over them, as the flight from doctors, then has the same bits). Worlds whose
    // neighbourhoods cross the seams, span a whole axis (three cells across) or stop at walls.
    let mut checked = 0;
    for (w, h, boundary, n) in [
        (1440.0, 1000.0, Boundary::Wrap, 3000),
        (300.0, 250.0, Boundary::Wrap, 400),
        (700.0, 500.0, Boundary::Bounce, 1500),
    ] {
        let space = Space {
            width: w,
            height: h,
            boundary,
        };
        let b = AllBackends::new(random_snapshot(space, n, n as u64), 50.0);
        let s = &b.snapshot;
        let (reach, target, source) = (
            100.0,
            |j: usize| j % 4 == 1,
            |i: usize| !i.is_multiple_of(3),
        );
        let mut targets = Grid::default();
        targets.rebuild_subset(s, reach, target);
        type Hits = Vec<(usize, u32, u32)>;
        for radius in [0.0, 37.0, 99.5, reach] {
            let got: Vec<Option<Hits>> = b.get(IndexKind::Grid).map_near(
                s,
                reach,
                true,
                source,
                Targets::Where(&target),
                |i, near| {
                    let mut hits = Vec::new();
                    near.for_each_within(s.pos[i], radius, |j, off| {
                        hits.push((j, off.x.to_bits(), off.y.to_bits()))
                    });
                    Some(hits)
                },
            );
            for (i, hits) in got.into_iter().enumerate() {
                let mut queried = Vec::new();
                targets.query(s.pos[i], radius, |j, off| {
                    queried.push((j, off.x.to_bits(), off.y.to_bits()))
                });
                checked += queried.len() * usize::from(source(i));
                let want = source(i).then_some(queried);
                assert_eq!(hits, want, "slot {i} within {radius} in {w} x {h}");
            }
        }
    }
    assert!(
        checked > 20_000,
        "only {checked} hits: the test examines too little"
    );
}
