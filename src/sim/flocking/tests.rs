//! Tests of the steering models with hand-computed values, and every backend against brute
//! force.

use super::*;
use crate::sim::config::SwarmParams;
use crate::sim::math::unit;
use std::f32::consts::TAU;

fn params() -> SwarmParams {
    SwarmParams::with_count(1)
}

fn close(a: Vec2, b: Vec2) -> bool {
    (a - b).length() < 1e-3
}

fn sums_of(me_vel: Vec2, neighbours: &[(Vec2, Vec2, bool)], p: &SwarmParams) -> FlockSums {
    sums_under(SteeringModel::Shiffman, me_vel, neighbours, p)
}

fn sums_under(
    model: SteeringModel,
    me_vel: Vec2,
    neighbours: &[(Vec2, Vec2, bool)],
    p: &SwarmParams,
) -> FlockSums {
    let rules = Rules::new(p, model);
    let mut s = FlockSums::default();
    for &(offset, vel, same) in neighbours {
        s.add(&rules, me_vel, offset, vel, same);
    }
    s
}

#[test]
fn one_neighbour_separation_by_hand() {
    // Boid at rest-ish moving +x at 100 px/s; one neighbour 10 px to its right (d = (10,0)).
    // s = unit(p_i − p_j)/d = (−1,0)/10 → unit(s)·v_max − v = (−180 − 100, 0) → truncated to
    // F_max = 180: f_sep = (−180, 0).
    let p = params();
    let v = Vec2::new(100.0, 0.0);
    let s = sums_of(v, &[(Vec2::new(10.0, 0.0), Vec2::ZERO, false)], &p);
    assert_eq!(s.n_sep, 1);
    assert!(close(s.away, Vec2::new(-0.1, 0.0)));
    assert!(close(separation(&s, v, &p), Vec2::new(-180.0, 0.0)));
    // Another swarm: no alignment or cohesion.
    assert_eq!((s.n_ali, s.n_coh), (0, 0));
    // Whole Model B force: w_sep·f_sep only = 1.5·(−180, 0).
    let f = flocking_force(SteeringModel::Shiffman, &s, v, &p, 1.0);
    assert!(close(f, Vec2::new(-270.0, 0.0)), "{f}");
}

#[test]
fn alignment_and_cohesion_by_hand() {
    // Boid moving (0, 100); one same-swarm neighbour 30 px to its right moving (100, 0),
    // outside r_sep (25) but inside r_ali = r_coh = 50.
    let p = params();
    let v = Vec2::new(0.0, 100.0);
    let s = sums_of(
        v,
        &[(Vec2::new(30.0, 0.0), Vec2::new(100.0, 0.0), true)],
        &p,
    );
    assert_eq!((s.n_sep, s.n_ali, s.n_coh), (0, 1, 1));
    // Alignment: unit(v̄)·180 − v = (180, −100); |·| = 205.9 > 180 → ×180/205.9.
    let want = Vec2::new(180.0, -100.0) * (180.0 / Vec2::new(180.0, -100.0).length());
    assert!(close(alignment(&s, v, &p), want));
    // Cohesion toward the neighbour: direction (1, 0): the same numbers.
    assert!(close(cohesion(&s, v, &p), want));
    let f = flocking_force(SteeringModel::Shiffman, &s, v, &p, 1.0);
    assert!(close(f, 2.0 * want));
}

#[test]
fn separation_averages_inverse_distance_directions() {
    // Two neighbours: (5, 0) and (0, 10). s = mean((−1,0)/5, (0,−1)/10) = (−0.1, −0.05).
    let p = params();
    let v = Vec2::ZERO;
    let s = sums_of(
        v,
        &[
            (Vec2::new(5.0, 0.0), Vec2::ZERO, true),
            (Vec2::new(0.0, 10.0), Vec2::ZERO, true),
        ],
        &p,
    );
    let dir = Vec2::new(-0.1, -0.05).normalize();
    assert!(close(separation(&s, v, &p), dir * 180.0));
}

#[test]
fn a_neighbour_across_the_seam_pulls_the_right_way() {
    // The index reports minimum-image offsets: a boid at x = 1915 seen from x = 5 on a
    // 1920-wide torus is at offset (−10, 0), so cohesion points −x, separation +x.
    let p = params();
    let v = Vec2::new(0.0, 100.0);
    let offset = crate::sim::space::Space::torus(1920.0, 1080.0)
        .displacement(Vec2::new(5.0, 500.0), Vec2::new(1915.0, 500.0));
    assert_eq!(offset, Vec2::new(-10.0, 0.0));
    let s = sums_of(v, &[(offset, Vec2::new(0.0, 100.0), true)], &p);
    assert!(cohesion(&s, v, &p).x < 0.0);
    assert!(separation(&s, v, &p).x > 0.0);
}

#[test]
fn no_neighbours_no_force_and_coincident_points_are_finite() {
    let p = params();
    let v = Vec2::new(50.0, 0.0);
    let s = FlockSums::default();
    for model in ALL_MODELS {
        assert_eq!(flocking_force(model, &s, v, &p, 1.0), Vec2::ZERO);
    }
    let s = sums_of(v, &[(Vec2::ZERO, Vec2::new(1.0, 1.0), true)], &p);
    assert_eq!(s.n_sep, 1);
    for model in ALL_MODELS {
        assert!(flocking_force(model, &s, v, &p, 1.0).is_finite());
    }
}

#[test]
fn field_of_view_hides_neighbours_behind() {
    let mut p = params();
    p.fov = 1.05; // ±60°
    let v = Vec2::new(100.0, 0.0);
    let behind = sums_of(v, &[(Vec2::new(-10.0, 0.0), Vec2::ZERO, true)], &p);
    assert_eq!(behind, FlockSums::default());
    let ahead = sums_of(v, &[(Vec2::new(10.0, 5.0), Vec2::ZERO, true)], &p);
    assert_eq!(ahead.n_sep, 1);
    let side = sums_of(v, &[(Vec2::new(5.0, 10.0), Vec2::ZERO, true)], &p);
    assert_eq!(side.n_sep, 0, "63° is outside a 60° half-angle");
    assert!(in_view(Vec2::ZERO, Vec2::new(-1.0, 0.0), Some(0.5)));
}

#[test]
fn hybrid_uses_raw_separation_and_clamps_the_total() {
    // Neighbour at (3, 4) (d = 5): raw separation = (−3, −4), w_sep 1.5 → (−4.5, −6).
    let mut p = params();
    p.separation_radius = 12.0;
    let v = Vec2::new(180.0, 0.0);
    let s = sums_of(v, &[(Vec2::new(3.0, 4.0), Vec2::ZERO, false)], &p);
    let f = flocking_force(SteeringModel::Hybrid, &s, v, &p, 1.0);
    assert!(close(f, Vec2::new(-4.5, -6.0)), "{f}");
    // Same-swarm neighbour moving −x: alignment (−360, 0) alone exceeds F_max → clamped.
    let s = sums_of(
        v,
        &[(Vec2::new(0.0, 40.0), Vec2::new(-180.0, 0.0), true)],
        &p,
    );
    let f = flocking_force(SteeringModel::Hybrid, &s, v, &p, 1.0);
    assert!((f.length() - 180.0).abs() < 1e-3, "{f}");
}

#[test]
fn adams_reproduces_its_per_frame_update_at_60_fps() {
    // Adams: v_f += w_match (v̄_f − v_f) per frame. In px/s at dt = 1/60 the kick F·dt must
    // equal 60 × the per-frame kick.
    let mut p = params();
    p.alignment_weight = 0.05;
    p.cohesion_weight = 0.0005;
    p.separation_weight = 0.05;
    let v_f = Vec2::new(3.0, 0.0);
    let nbr_v_f = Vec2::new(0.0, 3.0);
    let off = Vec2::new(4.0, 30.0);
    let s = sums_of(v_f * 60.0, &[(off, nbr_v_f * 60.0, true)], &p);
    let f = flocking_force(SteeringModel::Adams, &s, v_f * 60.0, &p, 1.0);
    let kick_f = 0.05 * (nbr_v_f - v_f) + 0.0005 * off; // outside r_sep = 25 (|off| > 25)
    assert!(close(f / 60.0, kick_f * 60.0), "{f} vs {kick_f}");
}

const ALL_MODELS: [SteeringModel; 5] = [
    SteeringModel::Shiffman,
    SteeringModel::Hybrid,
    SteeringModel::Adams,
    SteeringModel::Pygame,
    SteeringModel::Report,
];

#[test]
fn report_separation_is_the_mean_of_unit_vectors_with_one_radius() {
    // The report's model, R = 50 (alignment_radius): neighbours at (10, 0) and (0, −40) of
    // another swarm, and one at (60, 0) beyond R. s = (−1, 0) + (0, 1) = (−1, 1) — unit
    // vectors, no 1/d (Model B would weigh the near one four times as much); with v = (100, 0)
    // and w_sep = 1: f_sep = 180·unit(s/2) − v = (−127.28, 127.28) − (100, 0), not truncated.
    let mut p = params();
    p.separation_radius = 5.0; // ignored by the report model
    p.cohesion_radius = 5.0;
    p.separation_weight = 1.0;
    let v = Vec2::new(100.0, 0.0);
    let s = sums_under(
        SteeringModel::Report,
        v,
        &[
            (Vec2::new(10.0, 0.0), Vec2::ZERO, false),
            (Vec2::new(0.0, -40.0), Vec2::ZERO, false),
            (Vec2::new(60.0, 0.0), Vec2::ZERO, false),
        ],
        &p,
    );
    assert_eq!(s.n_sep, 2);
    assert!(close(s.away_unit, Vec2::new(-1.0, 1.0)), "{}", s.away_unit);
    let f = flocking_force(SteeringModel::Report, &s, v, &p, 1.0);
    let h = 180.0 / 2f32.sqrt();
    assert!(close(f, Vec2::new(-h - 100.0, h)), "{f}");
    assert!(
        f.length() > p.max_force,
        "no truncation: |f| = {}",
        f.length()
    );
}

#[test]
fn report_alignment_and_cohesion_share_the_radius_and_count_it_inclusively() {
    // One same-swarm neighbour at exactly R = 50 px (d ≤ R counts) moving (0, 100); the boid
    // moves (100, 0). Alignment: w_ali·(180·(0, 1) − (100, 0)) = (−100, 180); cohesion toward
    // (50, 0): w_coh·(180·(1, 0) − (100, 0)) = (80, 0); separation from the same neighbour
    // (one radius for all three rules): w_sep·(180·(−1, 0) − (100, 0)) = (−280, 0).
    let mut p = params();
    (p.alignment_weight, p.cohesion_weight, p.separation_weight) = (1.0, 1.0, 0.5);
    let v = Vec2::new(100.0, 0.0);
    let s = sums_under(
        SteeringModel::Report,
        v,
        &[(Vec2::new(50.0, 0.0), Vec2::new(0.0, 100.0), true)],
        &p,
    );
    assert_eq!((s.n_sep, s.n_ali, s.n_coh), (1, 1, 1));
    let f = flocking_force(SteeringModel::Report, &s, v, &p, 1.0);
    let want = Vec2::new(-100.0, 180.0) + Vec2::new(80.0, 0.0) + 0.5 * Vec2::new(-280.0, 0.0);
    assert!(close(f, want), "{f} vs {want}");
    // Model B would see no separation neighbour at 50 px (r_sep = 25) and cap each rule.
    let b = sums_of(
        v,
        &[(Vec2::new(50.0, 0.0), Vec2::new(0.0, 100.0), true)],
        &p,
    );
    assert_eq!(
        (b.n_sep, b.n_ali),
        (0, 0),
        "50 px is not < r_ali = 50 under Model B"
    );
}

#[test]
fn pygame_separation_is_an_inverse_square_sum() {
    // Neighbours at (10, 0) and (0, −5), another swarm: Σ unit(p_i − p_j)/d² =
    // (−1, 0)/100 + (0, 1)/25 = (−0.01, 0.04); w_sep = 40 000 px³/s² → (−400, 1600), not
    // truncated to F_max and not normalised.
    let mut p = params();
    p.separation_weight = 40_000.0;
    let v = Vec2::new(100.0, 0.0);
    let s = sums_of(
        v,
        &[
            (Vec2::new(10.0, 0.0), Vec2::ZERO, false),
            (Vec2::new(0.0, -5.0), Vec2::ZERO, false),
        ],
        &p,
    );
    assert!(close(s.away_sq, Vec2::new(-0.01, 0.04)), "{}", s.away_sq);
    let f = flocking_force(SteeringModel::Pygame, &s, v, &p, 1.0);
    assert!(close(f, Vec2::new(-400.0, 1600.0)), "{f}");
    // Halving the distance quadruples the push: it grows without bound as boids close in.
    let near = sums_of(v, &[(Vec2::new(5.0, 0.0), Vec2::ZERO, false)], &p);
    let far = sums_of(v, &[(Vec2::new(10.0, 0.0), Vec2::ZERO, false)], &p);
    let ratio = flocking_force(SteeringModel::Pygame, &near, v, &p, 1.0).length()
        / flocking_force(SteeringModel::Pygame, &far, v, &p, 1.0).length();
    assert!((ratio - 4.0).abs() < 1e-4, "{ratio}");
    // A coincident neighbour has no direction.
    let on_top = sums_of(v, &[(Vec2::ZERO, Vec2::ZERO, false)], &p);
    assert_eq!(
        flocking_force(SteeringModel::Pygame, &on_top, v, &p, 1.0),
        Vec2::ZERO
    );
}

#[test]
fn pygame_alignment_and_cohesion_are_not_truncated() {
    // Boid moving (0, 100); one same-swarm neighbour 30 px to its right moving (100, 0)
    // (outside r_sep). Alignment: w_ali·(180·(1, 0) − (0, 100)) = (180, −100), |·| = 205.9
    // > F_max = 180 but kept; cohesion toward the neighbour: the same vector.
    let mut p = params();
    p.alignment_weight = 2.0;
    p.cohesion_weight = 0.5;
    let v = Vec2::new(0.0, 100.0);
    let s = sums_of(
        v,
        &[(Vec2::new(30.0, 0.0), Vec2::new(100.0, 0.0), true)],
        &p,
    );
    let f = flocking_force(SteeringModel::Pygame, &s, v, &p, 1.0);
    assert!(close(f, 2.5 * Vec2::new(180.0, -100.0)), "{f}");
    // Predator fear scales all three weights.
    let half = flocking_force(SteeringModel::Pygame, &s, v, &p, 0.5);
    assert!(close(half * 2.0, f));
}

#[test]
fn noise_kick_scales_with_root_dt() {
    let a = noise_force(80.0, 1.0 / 60.0, 0.25) * (1.0 / 60.0);
    let b = noise_force(80.0, 1.0 / 15.0, 0.25) * (1.0 / 15.0);
    assert!((b.length() / a.length() - 2.0).abs() < 1e-4);
    assert!(close(unit(a), Vec2::Y));
    assert_eq!(noise_force(0.0, 0.1, 0.3), Vec2::ZERO);
}

#[test]
fn gain_scales_the_weights() {
    let p = params();
    let v = Vec2::new(100.0, 0.0);
    let s = sums_of(
        v,
        &[(Vec2::new(30.0, 0.0), Vec2::new(0.0, 100.0), true)],
        &p,
    );
    let full = flocking_force(SteeringModel::Shiffman, &s, v, &p, 1.0);
    let half = flocking_force(SteeringModel::Shiffman, &s, v, &p, 0.5);
    assert!(close(half * 2.0, full));
}

#[test]
fn every_backend_gives_brute_force_forces_across_the_seam_and_with_fov() {
    use crate::sim::agent::Disease;
    use crate::sim::config::IndexKind;
    use crate::sim::neighbours::Row;
    use crate::sim::neighbours::test_support::AllBackends;
    use crate::sim::swarm::Swarm;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
    // The small world makes grid neighbourhoods span whole axes (each candidate wrapped).
    for (w, h) in [(400.0, 300.0), (1000.0, 1000.0), (200.0, 160.0)] {
        let space = crate::sim::space::Space::torus(w, h);
        let rows: Vec<Row> = (0..1500)
            .map(|i| {
                // Crowd the seams and corners.
                let mut p = Vec2::new(rng.random::<f32>() * w, rng.random::<f32>() * h);
                if i % 3 == 0 {
                    p.x = (rng.random::<f32>() * 40.0 - 20.0).rem_euclid(w);
                }
                Row {
                    entity: Entity::from_raw(i),
                    id: i as u64,
                    pos: p,
                    vel: crate::sim::math::from_angle(rng.random::<f32>() * TAU) * 120.0,
                    swarm: Swarm::ALL[i as usize % 3],
                    disease: Disease::Susceptible,
                }
            })
            .collect();
        let b = AllBackends::new(Snapshot::from_rows(space, rows), 50.0);
        let mut config = SimConfig::default();
        config.swarms.normal.fov = 1.5;
        config.swarms.doctor.alignment_radius = 70.0;
        config.swarms.antivax.noise = 50.0;
        for model in ALL_MODELS {
            config.steering_model = model;
            let gain = WeightGain::default();
            let forces = |kind| {
                let mut out = vec![(Vec2::ZERO, Vec2::ZERO); b.snapshot.len()];
                let (index, pair) = (b.get(kind), |f, n| (f, n));
                flocking_forces_into(
                    &b.snapshot,
                    &index,
                    &config,
                    &gain,
                    1.0 / 60.0,
                    3,
                    pair,
                    &mut out,
                );
                out
            };
            let want = forces(IndexKind::Brute);
            for kind in [IndexKind::Kdtree, IndexKind::Grid] {
                let got = forces(kind);
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    let tol = 1e-3 * (1.0 + w.0.length());
                    assert!(
                        (g.0 - w.0).length() <= tol,
                        "{kind:?} {model:?} slot {i}: {} vs {}",
                        g.0,
                        w.0
                    );
                    assert_eq!(g.1, w.1, "noise is drawn from (seed, step, id)");
                }
            }
        }
    }
}
