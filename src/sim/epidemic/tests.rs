//! Tests of the epidemic's rules on hand-built layouts, every backend.

use super::*;
use crate::sim::config::{EpidemicConfig, IndexKind};
use crate::sim::neighbours::Row;
use crate::sim::neighbours::Snapshot;
use crate::sim::neighbours::test_support::AllBackends;
use crate::sim::space::Space;

#[test]
fn step_probability_compounds_to_the_per_second_rate() {
    for p in [0.0, 0.1, 0.5, 0.8, 1.0] {
        for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
            let q = step_probability(p, dt);
            let steps = (1.0 / dt).round() as i32;
            let survive_one_second = (1.0 - q).powi(steps);
            assert!((1.0 - survive_one_second - p).abs() < 1e-9, "p={p} dt={dt}");
        }
    }
    assert_eq!(step_probability(0.5, 1.0), 0.5);
    assert_eq!(step_probability(0.5, 0.0), 0.0);
}

#[test]
fn the_lowest_partner_of_each_slot_is_kept_whatever_the_order() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    let n = 50;
    for round in 0..200 {
        let mut pairs: Vec<(usize, usize)> = (0..rng.random_range(0..120))
            .map(|_| (rng.random_range(0..n), rng.random_range(0..n)))
            .collect();
        // Partner 0 (kept as 1) and slot n − 1 at the edges.
        if round % 3 == 0 {
            pairs.push((n - 1, 0));
        }
        let mut want: Vec<Option<usize>> = vec![None; n];
        for &(i, j) in &pairs {
            want[i] = Some(want[i].map_or(j, |k: usize| k.min(j)));
        }
        for shuffled in [false, true] {
            if shuffled {
                pairs.reverse();
            }
            let kept = lowest_partner(n, pairs.clone());
            let got: Vec<Option<usize>> = kept.iter().map(|&k| partner(k)).collect();
            assert_eq!(got, want, "round {round}");
        }
    }
}

#[test]
fn a_draw_is_below_a_lowered_rate_exactly_when_the_power_says_so() {
    // Every answer of the shortcut equals the one from always working out the power, for
    // draws on and around each step probability and around the bound.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    for p_max in [1e-9, 0.002, 0.3, 0.5, 0.999, 1.0] {
        for dt in [1.0 / 60.0, 0.05, 1.0] {
            let bound = step_probability(p_max, dt);
            for immunity in [0.0, 1e-12, 0.25, 0.5, 0.999_999, 1.0] {
                let p = p_max * (1.0 - immunity);
                let exact = step_probability(p, dt);
                let mut draws = vec![0.0, exact, bound, rng.random::<f64>()];
                for x in [exact, bound] {
                    draws.extend([x.next_down(), x.next_up(), x * (1.0 - 1e-15), x * 1.01]);
                }
                for u in draws.into_iter().filter(|u| (0.0..1.0).contains(u)) {
                    assert_eq!(
                        falls_below(u, p, p_max, bound, dt),
                        u < exact,
                        "u={u} p={p} p_max={p_max} dt={dt}"
                    );
                }
            }
        }
    }
}

pub(crate) fn world(boids: &[(Vec2, Swarm, Disease)]) -> AllBackends {
    let rows = boids
        .iter()
        .enumerate()
        .map(|(k, &(pos, swarm, disease))| Row {
            entity: Entity::from_raw(k as u32),
            id: k as u64,
            pos,
            vel: Vec2::X,
            swarm,
            disease,
        })
        .collect();
    AllBackends::new(
        Snapshot::from_rows(Space::torus(1000.0, 1000.0), rows),
        50.0,
    )
}

fn decide(
    b: &AllBackends,
    params: &EpidemicConfig,
    step: u64,
    now: f64,
    dt: f64,
) -> Vec<(usize, Transition)> {
    decide_seeded(b, params, 7, step, now, dt)
}

fn decide_seeded(
    b: &AllBackends,
    params: &EpidemicConfig,
    seed: u64,
    step: u64,
    now: f64,
    dt: f64,
) -> Vec<(usize, Transition)> {
    let index = b.get(IndexKind::Kdtree);
    EpidemicStep {
        snapshot: &b.snapshot,
        index: &index,
        params,
        seed,
        step,
        now,
        dt,
    }
    .decide()
}

const I0: Disease = Disease::Infected { since: 0.0 };
const S: Disease = Disease::Susceptible;

#[test]
fn certain_infection_within_radius_only() {
    let mut params = EpidemicConfig {
        p_infect_normal: 1.0,
        ..default()
    };
    params.t_death = f64::INFINITY;
    let b = world(&[
        (Vec2::new(100.0, 100.0), Swarm::Normal, I0),
        (Vec2::new(120.0, 100.0), Swarm::Normal, S), // 20 < 30·0.8 = 24
        (Vec2::new(125.0, 100.0), Swarm::Normal, S), // 25 > 24
        (Vec2::new(85.0, 100.0), Swarm::Doctor, S),  // other swarm
        (Vec2::new(100.0, 115.0), Swarm::Antivax, S), // one population with Normals
    ]);
    let t = decide(&b, &params, 0, 0.0, 1.0 / 60.0);
    assert_eq!(
        t,
        vec![
            (1, Transition::Infect { source: Some(0) }),
            (4, Transition::Infect { source: Some(0) })
        ]
    );
    params.cross_swarm_infection = true;
    let t = decide(&b, &params, 0, 0.0, 1.0 / 60.0);
    assert_eq!(
        t,
        vec![
            (1, Transition::Infect { source: Some(0) }),
            (3, Transition::Infect { source: Some(0) }),
            (4, Transition::Infect { source: Some(0) })
        ]
    );
}

#[test]
fn antivax_and_normal_boids_infect_each_other_but_not_doctors() {
    let params = EpidemicConfig::default();
    for (target, source, mix) in [
        (Swarm::Antivax, Swarm::Normal, true),
        (Swarm::Normal, Swarm::Antivax, true),
        (Swarm::Antivax, Swarm::Antivax, true),
        (Swarm::Doctor, Swarm::Antivax, false),
        (Swarm::Normal, Swarm::Doctor, false),
        (Swarm::Doctor, Swarm::Doctor, true),
    ] {
        assert_eq!(
            swarms_mix(&params, target, source),
            mix,
            "{target:?} ← {source:?}"
        );
    }
}

#[test]
fn infection_reaches_across_the_seam() {
    let params = EpidemicConfig {
        p_infect_normal: 1.0,
        ..default()
    };
    let b = world(&[
        (Vec2::new(995.0, 995.0), Swarm::Normal, I0),
        (Vec2::new(5.0, 5.0), Swarm::Normal, S),
    ]);
    assert_eq!(
        decide(&b, &params, 0, 0.0, 0.01),
        vec![(1, Transition::Infect { source: Some(0) })]
    );
}

#[test]
fn doctors_cure_any_swarm_but_never_themselves() {
    let params = EpidemicConfig {
        p_cure: 1.0,
        p_infect_normal: 0.0,
        p_infect_doctor: 0.0,
        ..default()
    };
    let b = world(&[
        (Vec2::new(500.0, 500.0), Swarm::Doctor, S),
        (Vec2::new(520.0, 500.0), Swarm::Normal, I0),
        (Vec2::new(480.0, 500.0), Swarm::Antivax, I0),
        (Vec2::new(500.0, 530.0), Swarm::Doctor, I0), // cured by doctor 0 (30 < 40)
        (Vec2::new(500.0, 470.0), Swarm::Normal, S),  // healthy: no-op
        (Vec2::new(100.0, 100.0), Swarm::Doctor, I0), // alone: never cured
    ]);
    let t = decide(&b, &params, 0, 0.0, 0.01);
    assert_eq!(
        t,
        vec![
            (1, Transition::Cure { doctor: 0 }),
            (2, Transition::Cure { doctor: 0 }),
            (3, Transition::Cure { doctor: 0 }),
        ]
    );
}

#[test]
fn an_infected_doctor_cures_within_its_debuffed_radius() {
    let params = EpidemicConfig {
        p_cure: 1.0,
        infected_cure_factor: 1.0,
        p_infect_doctor: 0.0,
        p_infect_normal: 0.0,
        ..default()
    };
    let b = world(&[
        (Vec2::new(500.0, 500.0), Swarm::Doctor, I0),
        (Vec2::new(527.0, 500.0), Swarm::Normal, I0), // 27 < 40·0.7 = 28
        (Vec2::new(470.0, 500.0), Swarm::Normal, I0), // 30 > 28
    ]);
    assert_eq!(
        decide(&b, &params, 0, 0.0, 0.01),
        vec![(1, Transition::Cure { doctor: 0 })]
    );
}

#[test]
fn death_or_recovery_at_t_death() {
    let mut params = EpidemicConfig {
        p_infect_normal: 0.0,
        t_death: 5.0,
        p_death: 1.0,
        ..default()
    };
    let b = world(&[(Vec2::new(100.0, 100.0), Swarm::Normal, I0)]);
    // Step ending at 4.99 s: nothing; ending at 5.0 s: dies.
    assert!(decide(&b, &params, 299, 4.98, 0.01).is_empty());
    assert_eq!(
        decide(&b, &params, 300, 4.99, 0.01),
        vec![(0, Transition::Die)]
    );
    params.p_death = 0.0;
    assert_eq!(
        decide(&b, &params, 300, 4.99, 0.01),
        vec![(0, Transition::Recover)]
    );
    params.t_death = f64::INFINITY;
    assert!(decide(&b, &params, 300, 1e6, 0.01).is_empty());
}

#[test]
fn immunity_wanes_and_lowers_susceptibility() {
    let params = EpidemicConfig {
        p_infect_normal: 1.0,
        t_immunity: 10.0,
        t_death: f64::INFINITY,
        ..default()
    };
    // Full immunity: p·(1 − 1) = 0, never infected.
    let b = world(&[
        (Vec2::new(100.0, 100.0), Swarm::Normal, I0),
        (
            Vec2::new(110.0, 100.0),
            Swarm::Normal,
            Disease::Recovered {
                since: 0.0,
                immunity: 1.0,
            },
        ),
    ]);
    assert!(decide(&b, &params, 0, 0.0, 0.01).is_empty());
    // Half-waned at t = 5: p = 0.5 per second.
    let mut hits = 0;
    let trials = 4000;
    for step in 0..trials {
        if !decide(&b, &params, step, 5.0, 1.0).is_empty() {
            hits += 1;
        }
    }
    let rate = hits as f64 / trials as f64;
    assert!((rate - 0.5).abs() < 0.03, "{rate}");
    // Waned completely at 10 s: back to susceptible.
    let lone = world(&[(
        Vec2::new(100.0, 100.0),
        Swarm::Normal,
        Disease::Recovered {
            since: 0.0,
            immunity: 1.0,
        },
    )]);
    assert!(decide(&lone, &params, 0, 9.0, 0.5).is_empty());
    assert_eq!(
        decide(&lone, &params, 0, 9.5, 0.5),
        vec![(0, Transition::Wane)]
    );
}

#[test]
fn lowest_id_infector_wins() {
    let params = EpidemicConfig {
        p_infect_normal: 1.0,
        ..default()
    };
    let b = world(&[
        (Vec2::new(100.0, 100.0), Swarm::Normal, I0),
        (Vec2::new(110.0, 100.0), Swarm::Normal, S),
        (Vec2::new(120.0, 100.0), Swarm::Normal, I0),
    ]);
    assert_eq!(
        decide(&b, &params, 0, 0.0, 0.01)[0],
        (1, Transition::Infect { source: Some(0) })
    );
}

/// Fraction of seeded trials in which slot `target` changes state within `seconds`, the
/// pair held still, stepping at `dt`.
fn fraction_changed(
    b: &AllBackends,
    params: &EpidemicConfig,
    dt: f64,
    seconds: f64,
    trials: u64,
) -> f64 {
    let steps = (seconds / dt).round() as u64;
    let mut hits = 0;
    for seed in 0..trials {
        for k in 0..steps {
            if !decide_seeded(b, params, 1000 + seed, k, k as f64 * dt, dt).is_empty() {
                hits += 1;
                break;
            }
        }
    }
    hits as f64 / trials as f64
}

/// Per-second rates hold at every dt. 2000 trials per case: the binomial standard error of
/// a fraction near 0.5 is ≤ 0.0112, so a tolerance of 0.045 is four standard errors. Two
/// wrong conversions must fall outside it: the per-second p applied per frame (≈ 1.0 after
/// a second) and `p·dt` per step (≈ 1 − e^−p after a second); [`assert_rate`] checks that
/// each case's p is one where the second is detectable.
const TRIALS: u64 = 2000;
const TOLERANCE: f64 = 0.045;

/// The fraction changed within one second under the wrong conversion `p·dt` per step.
fn linear_conversion(p: f64, dt: f64) -> f64 {
    1.0 - (1.0 - p * dt).powf(1.0 / dt)
}

/// `f` (measured within one second) matches the per-second `p`, and the test could tell
/// `p` from the `p·dt` conversion.
fn assert_rate(f: f64, p: f64, dt: f64, what: &str) {
    assert!(
        (f - p).abs() < TOLERANCE,
        "{what}, dt = {dt}: changed within 1 s in {f} of trials, expected {p}"
    );
    let wrong = linear_conversion(p, dt);
    assert!(
        (wrong - p).abs() > 2.0 * TOLERANCE,
        "{what}: p = {p} cannot tell the p·dt conversion ({wrong}) apart"
    );
}

#[test]
fn contact_infection_rate_is_per_second_at_every_dt() {
    let params = EpidemicConfig {
        p_infect_normal: 0.5,
        t_death: f64::INFINITY,
        ..default()
    };
    let b = world(&[
        (Vec2::new(100.0, 100.0), Swarm::Normal, I0),
        (Vec2::new(115.0, 100.0), Swarm::Normal, S),
    ]);
    for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
        let f = fraction_changed(&b, &params, dt, 1.0, TRIALS);
        assert_rate(f, 0.5, dt, "contact infection");
    }
}

#[test]
fn cure_rate_is_per_second_at_every_dt() {
    let params = EpidemicConfig {
        p_cure: 0.8,
        p_infect_normal: 0.0,
        p_infect_doctor: 0.0,
        t_death: f64::INFINITY,
        ..default()
    };
    let b = world(&[
        (Vec2::new(100.0, 100.0), Swarm::Doctor, S),
        (Vec2::new(130.0, 100.0), Swarm::Normal, I0),
    ]);
    for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
        let f = fraction_changed(&b, &params, dt, 1.0, TRIALS);
        assert_rate(f, 0.8, dt, "cure");
    }
    // An infected doctor cures at half the rate: p_cure 1.0 × 0.5 = 0.5 per second.
    let params = EpidemicConfig {
        p_cure: 1.0,
        ..params
    };
    let b = world(&[
        (Vec2::new(100.0, 100.0), Swarm::Doctor, I0),
        (Vec2::new(120.0, 100.0), Swarm::Normal, I0),
    ]);
    let f = fraction_changed(&b, &params, 1.0 / 60.0, 1.0, TRIALS);
    // The doctor itself is never cured (it is alone with a Normal), so only slot 1 changes.
    assert_rate(f, 0.5, 1.0 / 60.0, "cure by an infected doctor");
}

#[test]
fn spontaneous_infection_rate_is_per_second_at_every_dt() {
    // 0.6 per second: `p·dt` per step would give 1 − e^−0.6 = 0.45 within a second.
    let params = EpidemicConfig {
        p_spontaneous_infect: 0.6,
        ..default()
    };
    let b = world(&[(Vec2::new(100.0, 100.0), Swarm::Normal, S)]);
    for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
        let f = fraction_changed(&b, &params, dt, 1.0, TRIALS);
        assert_rate(f, 0.6, dt, "spontaneous infection");
    }
}

#[test]
fn pairs_are_brute_forces_with_few_sources_or_many() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    let params = EpidemicConfig {
        p_infect_normal: 1.0,
        p_infect_doctor: 1.0,
        p_cure: 1.0,
        infected_cure_factor: 1.0,
        cross_swarm_infection: true,
        ..default()
    };
    // Two infected in 400 boids: contacts by one query per source (cures by the traversal, a
    // third being doctors); half of them infected: the full traversal; a tenth doctors and a
    // few infected: cures by one query per doctor on a grid of the infected alone. Last, two
    // infected in a crowd 30 px across: a query has hundreds of hits, more than `query_each`
    // holds at once.
    let cases = [
        (0.0, None, 150.0),
        (0.5, None, 150.0),
        (0.02, Some(10), 150.0),
        (0.0, None, 15.0),
    ];
    for (share, every_doctor, spread) in cases {
        let boids: Vec<_> = (0..400)
            .map(|k| {
                // Crowded about the seam, so each source has neighbours on both sides of it.
                let mut coordinate = || (rng.random_range(-spread..spread) + 1000.0) % 1000.0;
                let pos = Vec2::new(coordinate(), coordinate());
                let swarm = match every_doctor {
                    None => Swarm::ALL[rng.random_range(0..3)],
                    Some(m) if k % m == 0 => Swarm::Doctor,
                    Some(_) => [Swarm::Normal, Swarm::Antivax][rng.random_range(0..2)],
                };
                let sick = k < 2 || rng.random_bool(share);
                (pos, swarm, if sick { I0 } else { S })
            })
            .collect();
        let b = world(&boids);
        let s = &b.snapshot;
        let within = |i: usize, j: usize, r: f32| {
            i != j && s.space().displacement(s.pos[j], s.pos[i]).length_squared() < r * r
        };
        let (mut contacts, mut cures) = (Vec::new(), Vec::new());
        for j in 0..s.len() {
            for i in 0..s.len() {
                let (sick_i, sick_j) = (s.disease.is_infected(i), s.disease.is_infected(j));
                if sick_j && !sick_i && within(i, j, params.contact_radius(s.swarm[j], true)) {
                    contacts.push((i, j));
                }
                let doctor = s.swarm[j] == Swarm::Doctor;
                if doctor && sick_i && within(i, j, params.contact_radius(Swarm::Doctor, sick_j)) {
                    cures.push((i, j));
                }
            }
        }
        contacts.sort();
        cures.sort();
        assert!(
            contacts.len() > 10 && cures.len() > 10,
            "{share}: {contacts:?} {cures:?}"
        );
        if every_doctor.is_some() {
            // Few doctors and few infected: the path through a grid of the targets.
            let count = |f: &dyn Fn(usize) -> bool| (0..s.len()).filter(|&i| f(i)).count();
            let doctors = count(&|i| s.swarm[i] == Swarm::Doctor);
            let infected = count(&|i| s.disease.is_infected(i));
            assert!(
                doctors * 8 < s.len() && infected * 8 < s.len(),
                "{doctors} {infected}"
            );
        }
        for kind in [IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute] {
            let index = b.get(kind);
            let step = EpidemicStep {
                snapshot: s,
                index: &index,
                params: &params,
                seed: 1,
                step: 0,
                now: 0.0,
                dt: 1.0,
            };
            let (mut c, mut k) = (step.contact_pairs(), step.cure_pairs());
            c.sort();
            k.sort();
            assert_eq!(c, contacts, "{kind:?} share {share}");
            assert_eq!(k, cures, "{kind:?} share {share}");
        }
    }
}
