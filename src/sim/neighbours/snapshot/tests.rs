//! Tests of the snapshot: its rows by slot in id order, its entity map, the packed disease
//! states, and its rewrites in place (on one thread and by entity on every thread).

use super::*;
use rand::{Rng, SeedableRng};

/// `n` boids at random in `space`, a third hugging an edge or a corner (where wrap-around
/// matters), with ids in reverse order of entities.
pub(crate) fn random_snapshot(space: Space, n: usize, seed: u64) -> Snapshot {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut rows = Vec::new();
    for i in 0..n {
        let mut p = Vec2::new(
            rng.random::<f32>() * space.width,
            rng.random::<f32>() * space.height,
        );
        match i % 6 {
            0 => p.x = rng.random::<f32>() * 3.0,
            1 => p.y = space.height - rng.random::<f32>() * 3.0,
            2 => {
                p = Vec2::new(
                    space.width - rng.random::<f32>() * 2.0,
                    rng.random::<f32>() * 2.0,
                )
            }
            _ => {}
        }
        let p = space.confine(p, Vec2::ZERO).0;
        rows.push(Row {
            entity: Entity::from_raw(i as u32 * 3 + 1),
            id: (n - i) as u64,
            pos: p,
            vel: crate::sim::math::from_angle(rng.random::<f32>() * 6.3) * 100.0,
            swarm: Swarm::ALL[i % 3],
            disease: Disease::Susceptible,
        });
    }
    Snapshot::from_rows(space, rows)
}

#[test]
fn a_packed_disease_state_is_the_one_stored() {
    let states = [
        Disease::Susceptible,
        Disease::Infected { since: 0.0 },
        Disease::Infected { since: 12.35 },
        Disease::Recovered {
            since: 3.5,
            immunity: 1.0,
        },
        Disease::Recovered {
            since: 0.0,
            immunity: 0.0,
        },
        Disease::Recovered {
            since: 7.25,
            immunity: -0.0,
        },
        Disease::Recovered {
            since: 1.0,
            immunity: f64::NAN,
        },
        Disease::Recovered {
            since: f64::INFINITY,
            immunity: 0.3,
        },
    ];
    let mut d: Diseases = states.iter().copied().collect();
    assert_eq!(std::mem::size_of::<[u64; 2]>(), 16);
    assert_eq!(d.len(), states.len());
    for (i, want) in states.iter().enumerate() {
        let got = d.get(i);
        // Bit for bit, NaN and −0 included.
        assert_eq!(format!("{got:?}"), format!("{want:?}"), "slot {i}");
        if let (Disease::Recovered { immunity: a, .. }, Disease::Recovered { immunity: b, .. }) =
            (got, *want)
        {
            assert_eq!(a.to_bits(), b.to_bits(), "slot {i}");
        }
        assert_eq!(d.is_infected(i), want.is_infected(), "slot {i}");
    }
    d.set(0, Disease::Infected { since: 2.0 });
    d.set(1, Disease::Susceptible);
    assert_eq!(d.get(0), Disease::Infected { since: 2.0 });
    assert!(d.is_infected(0) && !d.is_infected(1));
    assert_eq!(d.get(1), Disease::Susceptible);
    assert_eq!(d.iter().count(), states.len());
}

#[test]
fn an_update_in_place_gives_the_snapshot_a_refill_gives() {
    let space = Space::torus(100.0, 80.0);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
    let mut rows: Vec<Row> = (0..40u32)
        .map(|i| Row {
            entity: Entity::from_raw(i * 2 + 1),
            id: (40 - i) as u64 * 3,
            pos: Vec2::new(rng.random::<f32>() * 100.0, rng.random::<f32>() * 80.0),
            vel: Vec2::new(rng.random(), rng.random()),
            swarm: Swarm::ALL[i as usize % 3],
            disease: Disease::Susceptible,
        })
        .collect();
    let check = |s: &Snapshot, rows: &[Row], what: &str| is_from_rows(s, space, rows, what);
    let mut s = Snapshot::default();
    s.update(space, || rows.iter().copied());
    check(&s, &rows, "first");
    // The same boids, moved, infected and met in another order: rewritten in place.
    for (k, r) in rows.iter_mut().enumerate() {
        r.pos = Vec2::new(k as f32, 2.0 * k as f32);
        r.disease = Disease::Infected { since: k as f64 };
    }
    rows.rotate_left(7);
    s.isolate(rows[3].entity);
    assert!(s.rewrite(space, rows.iter().copied()));
    s.update(space, || rows.iter().copied());
    check(&s, &rows, "moved");
    // A boid gone, one replaced by a new entity, one given another id, a resized world:
    // each is refilled (after a rewrite that stopped part way).
    let mut gone = rows.clone();
    gone.remove(5);
    let mut replaced = rows.clone();
    replaced[20].entity = Entity::from_raw(1000);
    let mut renamed = rows.clone();
    renamed[30].id = 1;
    for (what, next) in [
        ("gone", &gone),
        ("replaced", &replaced),
        ("renamed", &renamed),
    ] {
        let mut s = Snapshot::from_rows(space, rows.clone());
        assert!(!s.rewrite(space, next.iter().copied()), "{what}");
        s.update(space, || next.iter().copied());
        check(&s, next, what);
    }
    let wider = Space::torus(200.0, 80.0);
    assert!(!s.rewrite(wider, rows.iter().copied()));
}

#[test]
fn a_rewrite_by_entity_on_every_thread_gives_the_rewrite_in_place() {
    // Enough boids for several parts; ids in reverse order of entities.
    let space = Space::torus(900.0, 700.0);
    let before = random_snapshot(space, 3000, 4);
    let mut rows = before_rows(&before);
    // The same boids moved, turned, infected or recovered, one isolated.
    for (k, r) in rows.iter_mut().enumerate() {
        r.pos = Vec2::new((k % 900) as f32, (k / 900) as f32 * 7.5);
        r.vel = Vec2::new(k as f32, -(k as f32));
        r.swarm = Swarm::ALL[(k + 1) % 3];
        r.disease = match k % 3 {
            0 => Disease::Infected { since: k as f64 },
            1 => Disease::Recovered {
                since: 0.5,
                immunity: k as f64 / 3000.0,
            },
            _ => Disease::Susceptible,
        };
    }
    let mut each = Snapshot::from_rows(space, before_rows(&before));
    each.isolate(rows[10].entity);
    assert!(each.rewrite_each(space, rows.len(), lookup(&rows)));
    is_from_rows(&each, space, &rows, "the same boids");
    // Not the same boids: one more or fewer, one gone (another in its place), one with
    // another id, another world.
    let mut replaced = rows.clone();
    replaced[2500].entity = Entity::from_raw(1_000_000);
    let mut renamed = rows.clone();
    renamed[1700].id = 5_000_000;
    let fresh = || Snapshot::from_rows(space, before_rows(&before));
    assert!(!fresh().rewrite_each(space, rows.len() + 1, lookup(&rows)));
    assert!(!fresh().rewrite_each(space, rows.len() - 1, lookup(&rows)));
    assert!(!fresh().rewrite_each(space, rows.len(), lookup(&replaced)));
    assert!(!fresh().rewrite_each(space, rows.len(), lookup(&renamed)));
    let wider = Space::torus(1000.0, 700.0);
    assert!(!fresh().rewrite_each(wider, rows.len(), lookup(&rows)));
}

#[test]
fn a_rewrite_by_entity_after_boids_have_gone_gives_the_refill() {
    let space = Space::torus(900.0, 700.0);
    let before = random_snapshot(space, 3000, 5);
    // None gone, the first, the last, one, a run, some in every part, and all.
    let gone_sets: [Vec<usize>; 7] = [
        vec![],
        vec![0],
        vec![2999],
        vec![1234],
        (500..900).collect(),
        (0..3000).step_by(7).collect(),
        (0..3000).collect(),
    ];
    for gone in gone_sets {
        let mut rows = before_rows(&before);
        for r in &mut rows {
            r.pos.x = (r.pos.x + 3.0) % 900.0;
            r.disease = Disease::Infected { since: r.id as f64 };
        }
        let kept: Vec<Row> = (0..rows.len())
            .filter(|k| !gone.contains(&before.slot_of(rows[*k].entity).unwrap()))
            .map(|k| rows[k])
            .collect();
        let mut each = Snapshot::from_rows(space, before_rows(&before));
        // Isolation flags are the step's own: cleared, as a refill has them.
        each.isolate(before.entity[2000]);
        assert!(
            each.rewrite_each(space, kept.len(), lookup(&kept)),
            "{gone:?}"
        );
        is_from_rows(&each, space, &kept, &format!("{} gone", gone.len()));
        for &slot in &gone {
            assert_eq!(each.slot_of(before.entity[slot]), None);
        }
        // One gone and one born in its place (as many as before, or one more): not these.
        if let Some(&g) = gone.first() {
            let mut born = kept.clone();
            born.push(Row {
                entity: Entity::from_raw(2_000_000),
                id: 9_000_000,
                ..rows[g]
            });
            let fresh = || Snapshot::from_rows(space, before_rows(&before));
            assert!(!fresh().rewrite_each(space, born.len(), lookup(&born)));
            assert!(!fresh().rewrite_each(space, kept.len() + 1, lookup(&kept)));
            // One gone and another with a new id.
            if let Some(other) = kept.iter().position(|r| r.id != rows[g].id) {
                let mut renamed = kept.clone();
                renamed[other].id = 7_000_000;
                assert!(!fresh().rewrite_each(space, kept.len(), lookup(&renamed)));
            }
        }
    }
}

/// Asserts that `s` is the snapshot of `rows` in `space`: every column, and each row's slot.
fn is_from_rows(s: &Snapshot, space: Space, rows: &[Row], what: &str) {
    let want = Snapshot::from_rows(space, rows.to_vec());
    assert_eq!(s.entity, want.entity, "{what}");
    assert_eq!(s.id, want.id, "{what}");
    assert_eq!(s.pos, want.pos, "{what}");
    assert_eq!(s.vel, want.vel, "{what}");
    assert_eq!(s.swarm, want.swarm, "{what}");
    assert_eq!(s.disease, want.disease, "{what}");
    assert_eq!(s.isolated, want.isolated, "{what}");
    for r in rows {
        assert_eq!(s.slot_of(r.entity), want.slot_of(r.entity), "{what}");
    }
}

/// A lookup of `rows` by entity, as a query's `get` (`None` for an entity not among them).
fn lookup(rows: &[Row]) -> impl Fn(Entity) -> Option<Row> + Sync + use<> {
    let by_entity: std::collections::HashMap<Entity, Row> =
        rows.iter().map(|r| (r.entity, *r)).collect();
    move |e: Entity| by_entity.get(&e).copied()
}

/// The rows of a snapshot.
fn before_rows(s: &Snapshot) -> Vec<Row> {
    (0..s.len())
        .map(|i| Row {
            entity: s.entity[i],
            id: s.id[i],
            pos: s.pos[i],
            vel: s.vel[i],
            swarm: s.swarm[i],
            disease: s.disease.get(i),
        })
        .collect()
}

#[test]
fn rows_out_of_order_are_put_in_id_order_dense_or_sparse() {
    let row = |id: u64| Row {
        entity: Entity::from_raw(id as u32),
        id,
        pos: Vec2::ZERO,
        vel: Vec2::ZERO,
        swarm: Swarm::Normal,
        disease: Disease::Susceptible,
    };
    for ids in [vec![5u64, 0, 3, 9, 1], vec![1_000_000, 2, 70_000, 1]] {
        let mut rows: Vec<Row> = ids.iter().map(|&i| row(i)).collect();
        let mut s = Snapshot::default();
        s.fill(Space::torus(10.0, 10.0), &mut rows);
        let mut want = ids.clone();
        want.sort_unstable();
        assert_eq!(s.id, want);
        // Every array moved with its id.
        let entities: Vec<u64> = s.entity.iter().map(|e| e.index() as u64).collect();
        assert_eq!(entities, want);
    }
}

#[test]
fn snapshot_is_in_id_order_and_maps_entities() {
    let s = random_snapshot(Space::torus(100.0, 100.0), 50, 1);
    assert!(s.id.windows(2).all(|w| w[0] < w[1]));
    for (slot, e) in s.entity.iter().enumerate() {
        assert_eq!(s.slot_of(*e), Some(slot));
        assert_eq!(s.slot_of_id(s.id[slot]), Some(slot));
    }
    assert_eq!(s.slot_of(Entity::from_raw(1_000_000)), None);
}
