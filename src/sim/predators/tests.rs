//! Predators' rules against hand-worked values (fear, pursuit, respawn) and the target choice
//! against the reference model's nearest-first search on every backend.

use super::*;
use crate::sim::agent::Disease;
use crate::sim::config::IndexKind;
use crate::sim::neighbours::test_support::{AllBackends, random_snapshot};
use crate::sim::space::Boundary;
use crate::sim::swarm::Swarm;
use rand::SeedableRng;

fn close(a: Vec2, b: Vec2) -> bool {
    (a - b).length() < 1e-2
}

#[test]
fn fear_urgency_and_flee_at_known_distances() {
    // d = 75 of 150: u = 0.5; 36 000·0.25 = 9 000 px/s², capped at 180·(1 + 2) = 540.
    let (u, flee) = fear(Vec2::new(75.0, 0.0), 150.0, 180.0);
    assert!((u - 0.5).abs() < 1e-6);
    assert!(close(flee, Vec2::new(540.0, 0.0)));
    // d = 145: u = 1/30; 36 000/900 = 40 px/s², under the cap 180·(1 + 4/30) = 204.
    let (u, flee) = fear(Vec2::new(0.0, -145.0), 150.0, 180.0);
    assert!((u - 1.0 / 30.0).abs() < 1e-5);
    assert!(close(flee, Vec2::new(0.0, -40.0)), "{flee}");
    assert_eq!(fear(Vec2::new(150.0, 0.0), 150.0, 180.0), (0.0, Vec2::ZERO));
    // Flocking weights drop by 0.7u.
    assert!((fear_gain(0.5) - 0.65).abs() < 1e-6);
    assert_eq!(fear_gain(0.0), 1.0);
}

#[test]
fn pursuit_leads_the_target() {
    let p = PredatorsConfig::default();
    // Target 270 px ahead (+x) moving +y at 100 px/s: lead = (270, 0) + (0, 100)·1 s.
    let v = Vec2::ZERO;
    let s = pursuit(Vec2::new(270.0, 0.0), Vec2::new(0.0, 100.0), v, &p);
    let want = truncate(Vec2::new(270.0, 100.0).normalize() * 270.0, 108.0);
    assert!(close(s, want), "{s} vs {want}");
    assert!(s.length() <= p.max_force + 1e-3);
}

#[test]
fn the_isolated_boid_is_chosen() {
    let p = PredatorsConfig::default();
    assert_eq!(target_score(100.0, 5), 100.0);
    assert_eq!(target_score(100.0, 0), -50.0);
    let mut rows = Vec::new();
    let mut push = |pos: Vec2| {
        let k = rows.len() as u32;
        rows.push(Row {
            entity: Entity::from_raw(k),
            id: k as u64,
            pos,
            vel: Vec2::ZERO,
            swarm: Swarm::Normal,
            disease: Disease::Susceptible,
        });
    };
    // A flock of six 100 px away and a loner 200 px away: the loner scores 200 − 150 = 50,
    // flock members about 100 − 0 = 100.
    for k in 0..6 {
        push(Vec2::new(600.0 + k as f32 * 5.0, 500.0));
    }
    push(Vec2::new(500.0, 700.0));
    push(Vec2::new(950.0, 500.0)); // beyond the 300 px detection range
    let b = AllBackends::new(
        Snapshot::from_rows(Space::torus(2000.0, 2000.0), rows),
        50.0,
    );
    let at = Vec2::new(500.0, 500.0);
    for kind in [IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute] {
        let (j, off) = choose_target(&b.get(kind), &b.snapshot, at, &p).unwrap();
        assert_eq!(j, 6, "{kind:?}");
        assert!(close(off, Vec2::new(0.0, 200.0)));
    }
}

/// The reference model's search, as the first version ran it: every boid in range sorted nearest
/// first (ties by slot), each scored with its neighbours counted one by one, stopping at
/// the first that cannot beat the best so far.
fn search_nearest_first(
    index: &impl NeighbourIndex,
    boids: &Snapshot,
    at: Vec2,
    p: &PredatorsConfig,
) -> Option<(usize, Vec2)> {
    let mut near: Vec<(f32, usize, Vec2)> = Vec::new();
    index.for_each_within(at, p.detection_range, |j, offset| {
        near.push((offset.length(), j, offset));
    });
    near.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut best: Option<(f32, usize, Vec2)> = None;
    for (d, j, offset) in near {
        if best.is_some_and(|(b, _, _)| target_score(d, 0) > b) {
            break;
        }
        let mut n = 0usize;
        index.for_each_within(boids.pos[j], p.isolation_radius, |k, _| {
            n += (k != j) as usize
        });
        let score = target_score(d, n);
        if best.is_none_or(|(b, bj, _)| score < b || (score == b && j < bj)) {
            best = Some((score, j, offset));
        }
    }
    best.map(|(_, j, offset)| (j, offset))
}

#[test]
fn the_target_is_the_one_a_nearest_first_search_finds() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
    let mut differs = 0;
    // Sparse to dense (about 1 to 40 boids within the 50 px isolation radius), on a torus
    // and between walls; isolation radii around the spacing, so that counts vary.
    for (n, boundary) in [(60, true), (600, true), (3000, false), (6000, true)] {
        let side = 800.0;
        let space = Space {
            width: side,
            height: side,
            boundary: if boundary {
                Boundary::Wrap
            } else {
                Boundary::Bounce
            },
        };
        let boids = random_snapshot(space, n, n as u64);
        let b = AllBackends::new(boids, 50.0);
        for radius in [20.0, 50.0] {
            let p = PredatorsConfig {
                isolation_radius: radius,
                ..default()
            };
            for _ in 0..8 {
                let at = Vec2::new(rng.random::<f32>(), rng.random::<f32>()) * side;
                let want = search_nearest_first(&b.get(IndexKind::Brute), &b.snapshot, at, &p);
                for kind in [IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute] {
                    let got = choose_target(&b.get(kind), &b.snapshot, at, &p);
                    assert_eq!(got, want, "{kind:?} n={n} r={radius} at {at}");
                }
                // The nearest boid is not always the target.
                let nearest = want.map(|(j, _)| j);
                let mut first = None;
                b.get(IndexKind::Brute)
                    .for_each_within(at, p.detection_range, |j, o| {
                        if first.is_none_or(|(d, k): (f32, usize)| {
                            o.length() < d || (o.length() == d && j < k)
                        }) {
                            first = Some((o.length(), j));
                        }
                    });
                differs += (first.map(|(_, j)| j) != nearest) as usize;
            }
        }
    }
    assert!(
        differs > 8,
        "the search only ever chose the nearest boid ({differs})"
    );
}

#[test]
fn neighbours_to_lose_is_the_fewest_that_lose() {
    assert_eq!(neighbours_to_lose(10.0, 3, None), usize::MAX);
    let mut checked = 0;
    for d in [0.0, 0.5, 10.0, 29.99, 30.0, 150.0, 299.9] {
        for b in [
            -150.0, -140.0, -100.5, -20.0, 0.0, 12.25, 150.0, 600.0, 1000.0,
        ] {
            for (j, bj) in [(1, 2), (2, 1)] {
                let best = Some((b, bj));
                if loses(target_score(d, 0), j, best) {
                    continue;
                }
                let n = neighbours_to_lose(d, j, best);
                assert!(loses(target_score(d, n), j, best), "d={d} b={b} j={j}: {n}");
                for fewer in 0..n {
                    assert!(
                        !loses(target_score(d, fewer), j, best),
                        "d={d} b={b}: {fewer}"
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 60, "{checked}");
}

#[test]
fn a_tie_goes_to_the_lower_slot_on_every_backend() {
    // Seen from (500, 500): a loner 130 px away (130 − 150 = −20) and a boid 100 px away with
    // one neighbour (100 − 120 = −20), exactly; the neighbour, 140 px away with one, scores 20.
    let p = PredatorsConfig::default();
    let at = Vec2::new(500.0, 500.0);
    let (loner, pair, third) = (
        Vec2::new(500.0, 630.0),
        Vec2::new(600.0, 500.0),
        Vec2::new(640.0, 500.0),
    );
    for (first, second) in [(loner, pair), (pair, loner)] {
        let rows = [first, second, third]
            .iter()
            .enumerate()
            .map(|(k, &pos)| Row {
                entity: Entity::from_raw(k as u32),
                id: k as u64,
                pos,
                vel: Vec2::ZERO,
                swarm: Swarm::Normal,
                disease: Disease::Susceptible,
            })
            .collect();
        let b = AllBackends::new(
            Snapshot::from_rows(Space::torus(2000.0, 2000.0), rows),
            50.0,
        );
        let want = search_nearest_first(&b.get(IndexKind::Brute), &b.snapshot, at, &p);
        assert_eq!(want.map(|(j, _)| j), Some(0));
        for kind in [IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute] {
            let got = choose_target(&b.get(kind), &b.snapshot, at, &p);
            assert_eq!(got, want, "{kind:?}, {first} first");
        }
    }
}

#[test]
fn respawn_is_on_an_edge_heading_inward() {
    let space = Space::torus(1000.0, 600.0);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    for _ in 0..200 {
        let (p, v) = edge_respawn(&space, 180.0, &mut rng);
        assert!(space.contains(p));
        let normal = if p.y == 0.0 {
            Vec2::Y
        } else if p.y > 599.0 {
            -Vec2::Y
        } else if p.x == 0.0 {
            Vec2::X
        } else {
            assert!(p.x > 999.0, "{p} is not on an edge");
            -Vec2::X
        };
        assert!(v.dot(normal) > 0.0, "{p} {v} heads out");
        assert!((v.length() - 180.0).abs() < 1e-3);
    }
}
