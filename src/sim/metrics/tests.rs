//! Tests of the measures on hand-made layouts: rings, lines, lattices, random points, the
//! seam.

use super::*;
use crate::sim::agent::Disease;
use crate::sim::config::IndexKind;
use crate::sim::neighbours::test_support::AllBackends;
use crate::sim::neighbours::{NeighbourIndex, Row};
use crate::sim::space::{Boundary, Space};

fn snapshot(space: Space, pts: &[(Vec2, Vec2, Swarm)]) -> Snapshot {
    let rows = pts
        .iter()
        .enumerate()
        .map(|(i, &(pos, vel, swarm))| Row {
            entity: Entity::from_raw(i as u32),
            id: i as u64,
            pos,
            vel,
            swarm,
            disease: Disease::Susceptible,
        })
        .collect();
    Snapshot::from_rows(space, rows)
}

#[test]
fn polarisation_extremes() {
    assert_eq!(
        polarisation([Vec2::X * 3.0, Vec2::X, Vec2::X * 9.0]),
        Some(1.0)
    );
    let p = polarisation([Vec2::X, -Vec2::X, Vec2::Y, -Vec2::Y]).unwrap();
    assert!(p < 1e-6);
    assert_eq!(polarisation(std::iter::empty()), None);
}

#[test]
fn spread_by_hand_and_across_the_seam() {
    let space = Space::torus(100.0, 100.0);
    // Two boids 10 px apart across the seam: centroid between them, each 5 px away.
    let (coh, rms) = cohesion_and_rms(&space, &[Vec2::new(95.0, 50.0), Vec2::new(5.0, 50.0)]);
    assert!((coh.unwrap() - 5.0).abs() < 1e-3);
    // sqrt(2·(25 + 25)/1) = 10 = the pair distance.
    assert!((rms.unwrap() - 10.0).abs() < 1e-3);
    assert_eq!(cohesion_and_rms(&space, &[Vec2::new(1.0, 1.0)]).1, None);
}

#[test]
fn nearest_neighbour_and_flocks() {
    let space = Space::torus(1000.0, 1000.0);
    let n = Swarm::Normal;
    let s = snapshot(
        space,
        &[
            (Vec2::new(10.0, 10.0), Vec2::X, n),
            (Vec2::new(990.0, 10.0), Vec2::X, n), // 20 px across the seam
            (Vec2::new(500.0, 500.0), Vec2::X, n), // far away: its own flock
            (Vec2::new(12.0, 10.0), Vec2::X, Swarm::Doctor), // other swarm: ignored
        ],
    );
    let b = AllBackends::new(s, 50.0);
    let config = SimConfig::default();
    for kind in [IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute] {
        let idx = b.get(kind);
        assert!((nearest_same_swarm(&idx, &b.snapshot, 0, 50.0).unwrap() - 20.0).abs() < 1e-3);
        let far = nearest_same_swarm(&idx, &b.snapshot, 2, 50.0).unwrap();
        assert!(
            (far - Vec2::new(490.0, 490.0).length()).abs() < 0.5,
            "{far}"
        );
        assert_eq!(nearest_same_swarm(&idx, &b.snapshot, 3, 50.0), None);
        assert_eq!(flock_counts(&idx, &b.snapshot, &config), [2, 1, 0]);
    }
}

#[test]
fn one_query_per_boid_gives_its_nearest_within_the_radius_and_the_flocks() {
    // Random boids of all three swarms, a third against an edge or a corner, on every backend:
    // the fused pass's distance is the nearest search's own answer, bit for bit, wherever
    // that search finds someone within the alignment radius, and +∞ exactly where it does
    // not; its flocks are `flocks`'.
    let space = Space::torus(600.0, 400.0);
    let s = crate::sim::neighbours::test_support::random_snapshot(space, 200, 11);
    let b = AllBackends::new(s, 50.0);
    let config = SimConfig::default();
    for kind in [IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute] {
        let idx = b.get(kind);
        let (fused, nearest) = flocks_and_nearest(&idx, &b.snapshot, &config);
        assert_eq!(fused, flocks(&idx, &b.snapshot, &config));
        let (mut within, mut beyond) = (0, 0);
        for (i, &d) in nearest.iter().enumerate() {
            let r = config.swarms.get(b.snapshot.swarm[i]).alignment_radius;
            let searched = nearest_same_swarm(&idx, &b.snapshot, i, r);
            if d.is_finite() {
                assert_eq!(
                    Some(d.to_bits()),
                    searched.map(f32::to_bits),
                    "{kind:?} slot {i}"
                );
                within += 1;
            } else {
                assert!(
                    searched.is_none_or(|x| x >= r),
                    "{kind:?} slot {i}: {searched:?}"
                );
                beyond += 1;
            }
        }
        // Both cases occur (about one boid in ten has no one of its swarm that close).
        assert!(within > 0 && beyond > 0, "{kind:?}: {within} / {beyond}");
    }
}

#[test]
fn the_grid_s_lanes_find_the_flocks_and_nearest_of_boids_at_one_point_on_one_row_or_isolated() {
    // The grid's pass takes distances lane by lane and joins a link only from the boid behind
    // (by y, then x); boids at one point, boids on one row (one y) and isolated boids (lane
    // −2) are where that rule could lose a link or a distance. The flocks and distances must
    // be the brute-force backend's, which takes every neighbour one by one.
    let space = Space::torus(600.0, 400.0);
    let mut s = crate::sim::neighbours::test_support::random_snapshot(space, 300, 5);
    // Slots three apart share a swarm: pairs at one point, and a row of ten 30 px apart
    // (within the 50 px alignment radius of the default swarms).
    for k in (0..60).step_by(6) {
        s.pos[k + 3] = s.pos[k];
    }
    let row_y = s.pos[150].y;
    for (n, k) in (150..180).step_by(3).enumerate() {
        s.pos[k] = Vec2::new(20.0 + 30.0 * n as f32, row_y);
    }
    for k in (0..300).step_by(7) {
        s.isolated[k] = true;
    }
    let b = AllBackends::new(s, 50.0);
    let config = SimConfig::default();
    let brute = flocks_and_nearest(&b.get(IndexKind::Brute), &b.snapshot, &config);
    let grid = flocks_and_nearest(&b.get(IndexKind::Grid), &b.snapshot, &config);
    assert_eq!(grid.0, brute.0);
    let bits = |d: &[f32]| d.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&grid.1), bits(&brute.1));
    // The cases are there: boids at a distance of 0, a flock along the row, isolated members.
    assert!(grid.1.iter().filter(|&&d| d == 0.0).count() >= 10);
    let row = &grid.0[b.snapshot.swarm[150].index()]
        .iter()
        .find(|f| f.contains(&150))
        .unwrap();
    assert!((150..180).step_by(3).all(|k| row.contains(&k)), "{row:?}");
    let isolated_in_flocks = (0..300)
        .filter(|&i| b.snapshot.isolated[i])
        .filter(|&i| {
            grid.0[b.snapshot.swarm[i].index()]
                .iter()
                .any(|f| f.len() > 1 && f.contains(&(i as u32)))
        })
        .count();
    assert!(isolated_in_flocks > 0);
}

#[test]
fn a_sample_s_passes_over_every_boid_give_each_measure_s_own_bits() {
    // `measure` works out every boid's terms in parallel, blocks of slots at a time, and adds
    // them in slot order to its swarm's sums and its flock's; each measure it reports is the
    // measure's own function over that swarm (or flock) alone, to the bit. Dense enough for
    // flocks of every size, on a torus and between walls, in one block and in several (the
    // last block's last three slots after its whole runs of eight).
    for (n, width, height) in [(400, 500.0, 300.0), (9_003, 2_500.0, 1_350.0)] {
        for boundary in [Boundary::Wrap, Boundary::Bounce] {
            let space = Space {
                boundary,
                ..Space::torus(width, height)
            };
            let s = crate::sim::neighbours::test_support::random_snapshot(space, n, 29);
            let at = format!("{n} {boundary:?}");
            let wanted = assert_measures_are_their_functions_own(s, &at);
            let defined = wanted.iter().flatten().filter(|x| x.is_some()).count();
            assert_eq!(defined, 30, "{at}: every measure of every swarm defined");
        }
    }
    // Normal boids in a ring (a shaped flock), Doctors in pairs far apart (flocks, none
    // shaped), no Antivax boids.
    let mut pts: Vec<(Vec2, Vec2, Swarm)> = ring(Vec2::new(300.0, 300.0), 40.0, 12, |d| d.perp())
        .into_iter()
        .map(|(p, v)| (p, v * 50.0, Swarm::Normal))
        .collect();
    for k in 0..4 {
        let p = Vec2::new(100.0 + 200.0 * k as f32, 800.0);
        pts.push((p, Vec2::X * 30.0, Swarm::Doctor));
        pts.push((p + Vec2::new(10.0, 5.0), Vec2::Y * 20.0, Swarm::Doctor));
    }
    let wanted = assert_measures_are_their_functions_own(
        snapshot(Space::torus(1000.0, 1000.0), &pts),
        "hand-made",
    );
    let [normal, doctor, antivax] = wanted.map(|w| w.map(|x| x.is_some()));
    assert!(normal.iter().all(|&d| d), "{normal:?}");
    // The Doctors' milling and elongation are undefined (no flock of three), the rest not.
    assert_eq!(doctor.iter().filter(|&&d| !d).count(), 2, "{doctor:?}");
    assert!(antivax.iter().all(|&d| !d), "{antivax:?}");
}

/// Asserts that each swarm's measures in a sample of `s` (grid index, default config) are,
/// to the bit, their own functions' over that swarm alone; returns those, by swarm, in the
/// order polarisation, cohesion, rms separation, nearest-neighbour mean and coefficient of
/// variation, flocks, largest flock's share, milling, elongation, mean speed.
fn assert_measures_are_their_functions_own(s: Snapshot, at: &str) -> [[Option<f64>; 10]; 3] {
    let b = AllBackends::new(s, 50.0);
    let (s, idx, config) = (&b.snapshot, b.get(IndexKind::Grid), SimConfig::default());
    let sample = measure(0.0, s, &idx, &config, &Tally::default(), 0.0);
    let all_flocks = flocks(&idx, s, &config);
    let bits = |x: Option<f64>| x.map(f64::to_bits);
    Swarm::ALL.map(|swarm| {
        let k = swarm.index();
        let slots: Vec<usize> = (0..s.len()).filter(|&i| s.swarm[i] == swarm).collect();
        let points: Vec<Vec2> = slots.iter().map(|&i| s.pos[i]).collect();
        let velocities = slots.iter().map(|&i| s.vel[i]);
        let radius = config.swarms.get(swarm).alignment_radius;
        let nearest: Vec<f64> = slots
            .iter()
            .filter_map(|&i| nearest_same_swarm(&idx, s, i, radius))
            .map(f64::from)
            .collect();
        let (coh, rms) = cohesion_and_rms(&s.space(), &points);
        let (frac, mill, elong) = flock_structure(s, &all_flocks[k]);
        let speed = velocities.clone().map(|v| v.length() as f64).sum::<f64>();
        let members = (!slots.is_empty()).then_some(slots.len() as f64);
        let want = [
            polarisation(velocities),
            coh,
            rms,
            (!nearest.is_empty()).then(|| nearest.iter().sum::<f64>() / nearest.len() as f64),
            coefficient_of_variation(&nearest),
            members.map(|_| all_flocks[k].len() as f64),
            frac,
            mill,
            elong,
            members.map(|m| speed / m),
        ];
        let g = &sample.swarms[k];
        let got = [
            g.polarisation,
            g.cohesion_px,
            g.rms_separation_px,
            g.nearest_neighbour_px,
            g.nn_cv,
            g.flocks.map(|f| f as f64),
            g.largest_flock_frac,
            g.milling,
            g.elongation,
            g.mean_speed_px_s,
        ];
        assert_eq!(got.map(bits), want.map(bits), "{at} {swarm:?}");
        want
    })
}

#[test]
fn flocks_joined_on_every_thread_at_once_are_the_connected_groups() {
    // Enough boids that the traversal is split among threads and links are joined
    // concurrently; the groups are compared with a plain union-find of every pair within
    // the radius, joined one by one on this thread.
    let space = Space::torus(2400.0, 1600.0);
    let s = crate::sim::neighbours::test_support::random_snapshot(space, 6000, 3);
    let b = AllBackends::new(s, 50.0);
    let config = SimConfig::default();
    let s = &b.snapshot;
    let n = s.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            x = parent[x];
        }
        x
    }
    let brute = b.get(IndexKind::Brute);
    for i in 0..n {
        let r = config.swarms.get(s.swarm[i]).alignment_radius;
        brute.for_each_within(s.pos[i], r, |j, _| {
            if j != i && s.swarm[j] == s.swarm[i] {
                let (a, c) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(c)] = a.min(c);
            }
        });
    }
    let mut want: [Vec<Vec<u32>>; 3] = Default::default();
    let mut place = vec![usize::MAX; n];
    for i in 0..n {
        let (r, list) = (root(&mut parent, i), &mut want[s.swarm[i].index()]);
        if place[r] == usize::MAX {
            place[r] = list.len();
            list.push(Vec::new());
        }
        list[place[r]].push(i as u32);
    }
    assert!(
        want.iter().map(Vec::len).sum::<usize>() > 100,
        "too few flocks to test"
    );
    for kind in [IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute] {
        assert_eq!(flocks(&b.get(kind), s, &config), want, "{kind:?}");
    }
}

/// A snapshot of one swarm from positions and velocities, on a 1000 × 1000 torus.
fn flock(pts: &[(Vec2, Vec2)]) -> Snapshot {
    let rows: Vec<(Vec2, Vec2, Swarm)> = pts.iter().map(|&(p, v)| (p, v, Swarm::Normal)).collect();
    snapshot(Space::torus(1000.0, 1000.0), &rows)
}

fn measured(s: Snapshot) -> GroupSample {
    let b = AllBackends::new(s, 50.0);
    let sample = measure(
        0.0,
        &b.snapshot,
        &b.get(IndexKind::Brute),
        &SimConfig::default(),
        &Tally::default(),
        0.0,
    );
    sample.swarms[0].clone()
}

/// A ring of `n` boids of radius `r` around `c`, wrapped into the world.
fn ring(c: Vec2, r: f32, n: usize, vel: impl Fn(Vec2) -> Vec2) -> Vec<(Vec2, Vec2)> {
    (0..n)
        .map(|k| {
            let dir = crate::sim::math::from_angle(k as f32 / n as f32 * std::f32::consts::TAU);
            let p = Space::torus(1000.0, 1000.0)
                .confine(c + dir * r, Vec2::ZERO)
                .0;
            (p, vel(dir))
        })
        .collect()
}

#[test]
fn a_rotating_ring_mills_and_a_translating_one_does_not_also_across_the_seam() {
    // 40 boids on a ring of radius 80 (neighbours 12.6 px apart: one flock). Centred on
    // the corner of the torus, so the ring is cut by both seams.
    for centre in [Vec2::new(500.0, 500.0), Vec2::new(0.0, 0.0)] {
        let turning = measured(flock(&ring(centre, 80.0, 40, |d| d.perp() * 150.0)));
        assert_eq!(turning.flocks, Some(1));
        assert_eq!(turning.largest_flock_frac, Some(1.0));
        let m = turning.milling.unwrap();
        assert!(m > 0.999, "rotating ring at {centre}: milling {m}");
        // Round: equal eigenvalues.
        assert!(
            turning.elongation.unwrap() < 1e-3,
            "{:?}",
            turning.elongation
        );
        let moving = measured(flock(&ring(centre, 80.0, 40, |_| Vec2::new(150.0, 0.0))));
        let m = moving.milling.unwrap();
        assert!(m < 1e-4, "translating ring at {centre}: milling {m}");
        // Half turning clockwise, half anticlockwise: no net rotation.
        let mixed = ring(centre, 80.0, 40, |d| d.perp() * 150.0)
            .into_iter()
            .enumerate()
            .map(|(k, (p, v))| (p, if k % 2 == 0 { v } else { -v }))
            .collect::<Vec<_>>();
        assert!(measured(flock(&mixed)).milling.unwrap() < 1e-4);
    }
}

#[test]
fn a_line_is_elongated_also_across_the_seam() {
    for start in [Vec2::new(300.0, 400.0), Vec2::new(900.0, 990.0)] {
        // 30 boids 10 px apart along a diagonal, each nudged 1 px sideways in turn.
        let dir = Vec2::new(1.0, 0.5).normalize();
        let pts: Vec<(Vec2, Vec2)> = (0..30)
            .map(|k| {
                let side = if k % 2 == 0 { 1.0 } else { -1.0 };
                let p = start + dir * (10.0 * k as f32) + dir.perp() * side;
                (
                    Space::torus(1000.0, 1000.0).confine(p, Vec2::ZERO).0,
                    dir * 100.0,
                )
            })
            .collect();
        let g = measured(flock(&pts));
        assert_eq!(g.flocks, Some(1));
        // λ₁ = 10²·(30² − 1)/12 = 7491.7, λ₂ = 1: elongation = 1 − 1/7491.7.
        let e = g.elongation.unwrap();
        assert!(
            (e - (1.0 - 1.0 / 7491.7)).abs() < 1e-4,
            "line from {start}: {e}"
        );
        // Pure translation along the line.
        assert!(g.milling.unwrap() < 1e-3);
    }
}

#[test]
fn a_square_lattice_has_no_spread_in_nearest_neighbour_distance() {
    // 12 × 12 boids 20 px apart, straddling both seams.
    let pts: Vec<(Vec2, Vec2)> = (0..144)
        .map(|k| {
            let p = Vec2::new(
                880.0 + 20.0 * (k % 12) as f32,
                880.0 + 20.0 * (k / 12) as f32,
            );
            (
                Space::torus(1000.0, 1000.0).confine(p, Vec2::ZERO).0,
                Vec2::X * 100.0,
            )
        })
        .collect();
    let g = measured(flock(&pts));
    assert!((g.nearest_neighbour_px.unwrap() - 20.0).abs() < 1e-3);
    assert!(g.nn_cv.unwrap() < 1e-4, "{:?}", g.nn_cv);
    assert_eq!((g.flocks, g.largest_flock_frac), (Some(1), Some(1.0)));
    // A square is as wide as it is long.
    assert!(g.elongation.unwrap() < 1e-3, "{:?}", g.elongation);
}

#[test]
fn random_points_have_the_poisson_nearest_neighbour_cohesion_and_rms() {
    // For a Poisson process the nearest-neighbour distance is Rayleigh distributed:
    // cv = sqrt(4/π − 1) = 0.5227. 3000 points: the estimate's sd is about 0.01.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    let pts: Vec<(Vec2, Vec2)> = (0..3000)
        .map(|_| (Vec2::new(rng.random(), rng.random()) * 1000.0, Vec2::X))
        .collect();
    let cv = measured(flock(&pts)).nn_cv.unwrap();
    assert!((cv - 0.5227).abs() < 0.04, "{cv}");
}

#[test]
fn largest_flock_share_counts_only_the_biggest_group() {
    // A flock of 6, a flock of 3 and a loner: 6 / 10.
    let mut pts = Vec::new();
    for k in 0..6 {
        pts.push((Vec2::new(100.0 + 10.0 * k as f32, 100.0), Vec2::X));
    }
    for k in 0..3 {
        pts.push((Vec2::new(600.0 + 10.0 * k as f32, 600.0), Vec2::X));
    }
    pts.push((Vec2::new(300.0, 800.0), Vec2::X));
    let g = measured(flock(&pts));
    assert_eq!(g.flocks, Some(3));
    assert_eq!(g.largest_flock_frac, Some(0.6));
}

#[test]
fn structure_helpers_edge_cases() {
    assert_eq!(coefficient_of_variation(&[3.0]), None);
    assert_eq!(coefficient_of_variation(&[2.0, 2.0, 2.0]), Some(0.0));
    // {1, 3}: mean 2, population sd 1.
    assert_eq!(coefficient_of_variation(&[1.0, 3.0]), Some(0.5));
    assert_eq!(milling(&[Vec2::ZERO], &[Vec2::X]), None);
    assert_eq!(elongation(&[Vec2::ZERO, Vec2::ZERO]), None);
    assert_eq!(elongation(&[Vec2::X, -Vec2::X]), Some(1.0));
    let s = flock(&[
        (Vec2::new(1.0, 1.0), Vec2::X),
        (Vec2::new(5.0, 1.0), Vec2::X),
    ]);
    // Two boids: a flock, but too small for milling or elongation.
    assert_eq!(flock_structure(&s, &[vec![0, 1]]), (Some(1.0), None, None));
    assert_eq!(flock_structure(&s, &[]), (None, None, None));
}

#[test]
fn next_sample_time_is_one_step_of_every_ahead() {
    assert_eq!(next_sample_time(0.0, 0.01, 0.5), 0.5);
    assert_eq!(next_sample_time(0.5, 0.01, 0.5), 1.0);
    assert_eq!(next_sample_time(0.499, 0.01, 0.5), 1.0);
    // A sampling interval far below the step: the next sample is the next step's.
    let t = next_sample_time(10.0, 0.5 / 60.0, 1e-9);
    assert!(t > 10.0 && t < 10.0 + 1.0 / 60.0, "{t}");
}

#[test]
fn csv_row_matches_header() {
    let sample = Sample::default();
    assert_eq!(
        Sample::csv_header().split(',').count(),
        sample.csv_row().split(',').count()
    );
    assert!(Sample::csv_header().starts_with("time_s,alive,"));
    assert!(Sample::csv_header().contains("normal_polarisation"));
    assert!(Sample::csv_header().contains("normal_cohesion_px"));
    assert!(Sample::csv_header().contains("normal_mean_speed_px_s"));
    for m in ["largest_flock_frac", "nn_cv", "milling", "elongation"] {
        assert!(
            Sample::csv_header().contains(&format!("antivax_{m}")),
            "{m}"
        );
    }
}
