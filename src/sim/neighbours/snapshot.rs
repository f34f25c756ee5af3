//! The step's [`Snapshot`]: every boid's position, velocity, swarm and disease state copied
//! from the ECS once per step (in `SimSystems::Index`), as a structure of arrays in `AgentId`
//! order. A boid's index here is its "slot"; every neighbour query reports slots. No systems
//! live here.

use std::sync::atomic::{AtomicBool, Ordering};

use bevy::prelude::*;

use crate::sim::agent::Disease;
use crate::sim::parallel::{for_each_part, parts_for};
use crate::sim::space::Space;
use crate::sim::swarm::Swarm;

/// The step's copy of every boid, in `AgentId` order. A boid's index here is its "slot".
#[derive(Resource, Default, Debug)]
pub struct Snapshot {
    /// The world the positions live in.
    pub space: Space,
    /// Entity of each slot.
    pub entity: Vec<Entity>,
    /// Stable id of each slot (ascending).
    pub id: Vec<u64>,
    /// Position, px.
    pub pos: Vec<Vec2>,
    /// Velocity, px/s.
    pub vel: Vec<Vec2>,
    /// Swarm.
    pub swarm: Vec<Swarm>,
    /// Disease state at the start of the step.
    pub disease: Diseases,
    /// Isolated by test-and-isolate (docs/model.md §11): infects and attracts no one. All
    /// `false` until [`Snapshot::isolate`] says otherwise.
    pub isolated: Vec<bool>,
    /// `Entity::index()` → slot + 1 (0 = not a boid).
    slot_by_entity: Vec<u32>,
}

/// One boid's row, as gathered from the ECS.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// Entity.
    pub entity: Entity,
    /// Stable id.
    pub id: u64,
    /// Position, px.
    pub pos: Vec2,
    /// Velocity, px/s.
    pub vel: Vec2,
    /// Swarm.
    pub swarm: Swarm,
    /// Disease state.
    pub disease: Disease,
}

impl Clone for Snapshot {
    fn clone(&self) -> Self {
        let mut s = Snapshot::default();
        s.clone_from(self);
        s
    }

    /// Copies `other` into this snapshot's columns, reusing their allocations (the derived
    /// `clone_from` would allocate them anew).
    fn clone_from(&mut self, other: &Self) {
        let Snapshot {
            space,
            entity,
            id,
            pos,
            vel,
            swarm,
            disease,
            isolated,
            slot_by_entity,
        } = other;
        self.space = *space;
        self.entity.clone_from(entity);
        self.id.clone_from(id);
        self.pos.clone_from(pos);
        self.vel.clone_from(vel);
        self.swarm.clone_from(swarm);
        self.disease.0.clone_from(&disease.0);
        self.isolated.clone_from(isolated);
        self.slot_by_entity.clone_from(slot_by_entity);
    }
}

impl Snapshot {
    /// Builds a snapshot from rows in any order (they are sorted by id).
    pub fn from_rows(space: Space, rows: Vec<Row>) -> Self {
        let mut s = Snapshot::default();
        let mut rows = rows;
        s.fill(space, &mut rows);
        s
    }

    /// Refills the snapshot from `rows`, reusing its buffers.
    pub fn fill(&mut self, space: Space, rows: &mut [Row]) {
        self.refill(space, rows.iter().copied());
    }

    /// Refills the snapshot from the rows `rows()` gives, in any order: in place when they are
    /// the boids the snapshot already holds (the usual step: nobody spawned, died or was
    /// edited since) — each row written to its boid's slot, so nothing is sorted — and
    /// otherwise by [`Snapshot::refill`] from a fresh `rows()`.
    pub fn update<I: ExactSizeIterator<Item = Row>>(&mut self, space: Space, rows: impl Fn() -> I) {
        if !self.rewrite(space, rows()) {
            self.refill(space, rows());
        }
    }

    /// Writes each row to the slot of its entity, if every row is a boid of the snapshot with
    /// the same id and there are as many rows as boids (so every slot is written once and the
    /// slots stay in id order); false, with the arrays part written, as soon as one is not.
    fn rewrite(&mut self, space: Space, rows: impl ExactSizeIterator<Item = Row>) -> bool {
        if rows.len() != self.len() || space != self.space {
            return false;
        }
        for r in rows {
            match self.slot_of(r.entity) {
                Some(slot) if self.id[slot] == r.id => {
                    self.pos[slot] = r.pos;
                    self.vel[slot] = r.vel;
                    self.swarm[slot] = r.swarm;
                    self.disease.set(slot, r.disease);
                }
                _ => return false,
            }
        }
        self.isolated.fill(false);
        true
    }

    /// [`Snapshot::rewrite`] with each slot's row looked up by its entity, the slots split
    /// between the threads: true if the ECS holds `count` boids and `row_of` finds each boid
    /// of the snapshot with the same id (then they are the same boids), every slot rewritten;
    /// false, with the arrays part written, if not. The result does not depend on the split.
    pub fn rewrite_each(
        &mut self,
        space: Space,
        count: usize,
        row_of: impl Fn(Entity) -> Option<Row> + Sync,
    ) -> bool {
        let n = self.len();
        if count != n || space != self.space {
            return false;
        }
        let size = n.div_ceil(parts_for(n)).max(1);
        let (entity, id) = (&self.entity[..], &self.id[..]);
        let parts: Vec<_> = (self.pos.chunks_mut(size))
            .zip(self.vel.chunks_mut(size))
            .zip(self.swarm.chunks_mut(size))
            .zip(self.disease.0.chunks_mut(size))
            .enumerate()
            .map(|(c, (((pos, vel), swarm), disease))| (c * size, pos, vel, swarm, disease))
            .collect();
        let same = AtomicBool::new(true);
        for_each_part(parts, |(first, pos, vel, swarm, disease)| {
            for k in 0..pos.len() {
                let slot = first + k;
                match row_of(entity[slot]) {
                    Some(r) if r.id == id[slot] => {
                        pos[k] = r.pos;
                        vel[k] = r.vel;
                        swarm[k] = r.swarm;
                        disease[k] = Diseases::pack(r.disease);
                    }
                    _ => {
                        same.store(false, Ordering::Relaxed);
                        return;
                    }
                }
            }
        });
        let same = same.into_inner();
        if same {
            self.isolated.fill(false);
        }
        same
    }

    /// Refills the snapshot from `rows` in any order, reusing its buffers: each row goes
    /// straight into the arrays (no copy of the rows is kept), which are then put in id order.
    pub fn refill(&mut self, space: Space, rows: impl ExactSizeIterator<Item = Row>) {
        let n = rows.len();
        self.space = space;
        self.entity.clear();
        self.id.clear();
        self.pos.clear();
        self.vel.clear();
        self.swarm.clear();
        self.disease.clear();
        self.entity.reserve_exact(n);
        self.id.reserve_exact(n);
        self.pos.reserve_exact(n);
        self.vel.reserve_exact(n);
        self.swarm.reserve_exact(n);
        self.disease.reserve_exact(n);
        for r in rows {
            self.entity.push(r.entity);
            self.id.push(r.id);
            self.pos.push(r.pos);
            self.vel.push(r.vel);
            self.swarm.push(r.swarm);
            self.disease.push(r.disease);
        }
        // Queries usually yield rows in id order already; after a despawn they are out of
        // order.
        if !self.id.is_sorted() {
            let order = order_by_id(&self.id);
            gather(&mut self.entity, &order);
            gather(&mut self.id, &order);
            gather(&mut self.pos, &order);
            gather(&mut self.vel, &order);
            gather(&mut self.swarm, &order);
            gather(&mut self.disease.0, &order);
        }
        self.isolated.clear();
        self.isolated.resize(self.id.len(), false);
        self.slot_by_entity.clear();
        for (slot, e) in self.entity.iter().enumerate() {
            let e = e.index() as usize;
            if self.slot_by_entity.len() <= e {
                self.slot_by_entity.resize(e + 1, 0);
            }
            self.slot_by_entity[e] = slot as u32 + 1;
        }
    }

    /// Number of boids.
    #[inline]
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// Whether there are no boids.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }

    /// The world geometry (the default torus before the first capture).
    pub fn space(&self) -> Space {
        self.space
    }

    /// The slot of an entity, if it was a boid when the snapshot was taken.
    #[inline]
    pub fn slot_of(&self, entity: Entity) -> Option<usize> {
        let slot = *self.slot_by_entity.get(entity.index() as usize)? as usize;
        (slot > 0 && self.entity[slot - 1] == entity).then(|| slot - 1)
    }

    /// Marks the boid of `entity` as isolated.
    pub fn isolate(&mut self, entity: Entity) {
        if let Some(slot) = self.slot_of(entity) {
            self.isolated[slot] = true;
        }
    }

    /// Whether slot `j` is infected and can pass it on (not isolated).
    #[inline]
    pub fn is_contagious(&self, j: usize) -> bool {
        self.disease.is_infected(j) && !self.isolated[j]
    }

    /// The slot of an id (binary search: ids are ascending).
    pub fn slot_of_id(&self, id: u64) -> Option<usize> {
        self.id.binary_search(&id).ok()
    }
}

/// Disease states by slot in 16 B each, where a [`Disease`] takes 24 (a city's snapshot is
/// 11 MB smaller): a recovered boid's time and immunity as they are, and for the other states a
/// time and, in the immunity's place, a NaN whose payload names the state (nothing in the model
/// produces those bits).
/// [`Diseases::get`] gives back the very `Disease` that was stored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diseases(Vec<[u64; 2]>);

/// The immunity word of a susceptible boid and of an infected one: quiet NaNs with payloads.
const SUSCEPTIBLE: u64 = 0x7ff8_5375_7363_0001;
const INFECTED: u64 = 0x7ff8_496e_6665_0002;

impl Diseases {
    /// The two words of `d`.
    #[inline]
    fn pack(d: Disease) -> [u64; 2] {
        match d {
            Disease::Susceptible => [0, SUSCEPTIBLE],
            Disease::Infected { since } => [since.to_bits(), INFECTED],
            Disease::Recovered { since, immunity } => [since.to_bits(), immunity.to_bits()],
        }
    }

    /// Slot `i`'s state.
    #[inline]
    pub fn get(&self, i: usize) -> Disease {
        let [since, word] = self.0[i];
        match word {
            SUSCEPTIBLE => Disease::Susceptible,
            INFECTED => Disease::Infected {
                since: f64::from_bits(since),
            },
            _ => Disease::Recovered {
                since: f64::from_bits(since),
                immunity: f64::from_bits(word),
            },
        }
    }

    /// Whether slot `i` is infected (as `get(i).is_infected()`, one compare).
    #[inline]
    pub fn is_infected(&self, i: usize) -> bool {
        self.0[i][1] == INFECTED
    }

    /// Sets slot `i`'s state.
    #[inline]
    pub fn set(&mut self, i: usize, d: Disease) {
        self.0[i] = Self::pack(d);
    }

    /// Adds a slot.
    #[inline]
    pub fn push(&mut self, d: Disease) {
        self.0.push(Self::pack(d));
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every slot's state, in slot order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Disease> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    fn clear(&mut self) {
        self.0.clear();
    }

    fn reserve_exact(&mut self, n: usize) {
        self.0.reserve_exact(n);
    }
}

impl FromIterator<Disease> for Diseases {
    fn from_iter<I: IntoIterator<Item = Disease>>(iter: I) -> Self {
        Self(iter.into_iter().map(Self::pack).collect())
    }
}

/// `a[order[0]], a[order[1]], …` in place of `a`.
fn gather<T: Copy>(a: &mut Vec<T>, order: &[u32]) {
    *a = order.iter().map(|&k| a[k as usize]).collect();
}

/// The positions of `ids` in ascending id order (ids are distinct): by a counting pass over
/// the ids when they are dense (a run spawns ids from 0 and few die), by sorting otherwise.
fn order_by_id(ids: &[u64]) -> Vec<u32> {
    let max = ids.iter().copied().max().unwrap_or(0);
    if max as usize > 4 * ids.len() + 1024 {
        let mut order: Vec<u32> = (0..ids.len() as u32).collect();
        order.sort_unstable_by_key(|&k| ids[k as usize]);
        return order;
    }
    // Where each id is, then the ids present in ascending order.
    let mut at = vec![u32::MAX; max as usize + 1];
    for (k, &id) in ids.iter().enumerate() {
        at[id as usize] = k as u32;
    }
    at.retain(|&k| k != u32::MAX);
    at
}

#[cfg(test)]
pub(crate) mod tests {
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
            if let (
                Disease::Recovered { immunity: a, .. },
                Disease::Recovered { immunity: b, .. },
            ) = (got, *want)
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
        let check = |s: &Snapshot, rows: &[Row], what: &str| {
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
        };
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
        let lookup = |rows: &[Row]| {
            let by_entity: std::collections::HashMap<Entity, Row> =
                rows.iter().map(|r| (r.entity, *r)).collect();
            move |e: Entity| by_entity.get(&e).copied()
        };
        let mut each = Snapshot::from_rows(space, before_rows(&before));
        each.isolate(rows[10].entity);
        assert!(each.rewrite_each(space, rows.len(), lookup(&rows)));
        let want = Snapshot::from_rows(space, rows.clone());
        assert_eq!(each.entity, want.entity);
        assert_eq!(each.id, want.id);
        assert_eq!(each.pos, want.pos);
        assert_eq!(each.vel, want.vel);
        assert_eq!(each.swarm, want.swarm);
        assert_eq!(each.disease, want.disease);
        assert_eq!(each.isolated, want.isolated);
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
}
