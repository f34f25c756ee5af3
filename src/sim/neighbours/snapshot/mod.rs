//! The step's [`Snapshot`]: every boid's position, velocity, swarm and disease state copied
//! from the ECS once per step (in `SimSystems::Index`), as a structure of arrays in `AgentId`
//! order. A boid's index here is its "slot"; every neighbour query reports slots. No systems
//! live here.

use std::sync::atomic::{AtomicBool, Ordering};

use bevy::prelude::*;

use crate::sim::agent::Disease;
use crate::sim::parallel::{for_each_part, part_size};
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
    /// between the threads, also when boids have gone since (caught, dead): true if the ECS
    /// holds `count` boids and `row_of` finds each boid of the snapshot that is still there
    /// with the same id, every other boid having gone (then the ECS holds these boids and no
    /// others); every slot is then rewritten and the slots of the boids gone removed, the rest
    /// keeping their order (that of [`Snapshot::refill`], which sorts). False, with the arrays
    /// part written, if not (a boid born, an entity with another id). The result does not
    /// depend on the split. A step where a boid was caught or died had refilled the snapshot
    /// on one thread, 2.3 ms at 100 000 boids (BENCHMARKS.md, round 3, thirty-sixth stop).
    pub fn rewrite_each(
        &mut self,
        space: Space,
        count: usize,
        row_of: impl Fn(Entity) -> Option<Row> + Sync,
    ) -> bool {
        let n = self.len();
        if count > n || space != self.space {
            return false;
        }
        let size = part_size(n);
        let (entity, id) = (&self.entity[..], &self.id[..]);
        // The slots of the boids gone, by part (in slot order).
        let mut gone: Vec<Vec<u32>> = vec![Vec::new(); n.div_ceil(size)];
        let parts: Vec<_> = self
            .pos
            .chunks_mut(size)
            .zip(self.vel.chunks_mut(size))
            .zip(self.swarm.chunks_mut(size))
            .zip(self.disease.0.chunks_mut(size))
            .zip(gone.iter_mut())
            .enumerate()
            .map(|(c, ((((pos, vel), swarm), disease), gone))| {
                (c * size, pos, vel, swarm, disease, gone)
            })
            .collect();
        let same = AtomicBool::new(true);
        for_each_part(parts, |(first, pos, vel, swarm, disease, gone)| {
            for k in 0..pos.len() {
                let slot = first + k;
                match row_of(entity[slot]) {
                    Some(r) if r.id == id[slot] => {
                        pos[k] = r.pos;
                        vel[k] = r.vel;
                        swarm[k] = r.swarm;
                        disease[k] = Diseases::pack(r.disease);
                    }
                    None => gone.push(slot as u32),
                    Some(_) => {
                        same.store(false, Ordering::Relaxed);
                        return;
                    }
                }
            }
        });
        let gone = gone.concat();
        if !same.into_inner() || n - gone.len() != count {
            return false;
        }
        if !gone.is_empty() {
            self.remove_slots(&gone);
        }
        self.isolated.clear();
        self.isolated.resize(self.len(), false);
        true
    }

    /// Removes the boids of the slots `gone` (ascending), the others keeping their order.
    fn remove_slots(&mut self, gone: &[u32]) {
        for &slot in gone {
            self.slot_by_entity[self.entity[slot as usize].index() as usize] = 0;
        }
        remove_at(&mut self.entity, gone);
        remove_at(&mut self.id, gone);
        remove_at(&mut self.pos, gone);
        remove_at(&mut self.vel, gone);
        remove_at(&mut self.swarm, gone);
        remove_at(&mut self.disease.0, gone);
        // The boids after the first gone have moved down.
        for (slot, e) in self.entity.iter().enumerate().skip(gone[0] as usize) {
            self.slot_by_entity[e.index() as usize] = slot as u32 + 1;
        }
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

    /// Asks the CPU to start loading what a decision about slot `i` reads of it (its id,
    /// disease words and swarm; with `position`, its position too), so that the loads of
    /// several slots overlap where one after another each would wait for memory. A hint only:
    /// nothing read or written changes, and off x86-64 it does nothing. At 100 000 boids the
    /// three columns take 2.5 MB (3.3 with the positions), more than a core's own (L2) cache
    /// on the machines of BENCHMARKS.md, and a search's hits lie anywhere in them
    /// (BENCHMARKS.md, round 3, thirty-ninth stop).
    #[inline(always)]
    pub fn prefetch(&self, i: usize, position: bool) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            fn fetch<T>(item: Option<&T>) {
                if let Some(item) = item {
                    // SAFETY: SSE, which the intrinsic needs, is part of every x86-64 CPU, and
                    // a prefetch neither faults nor changes memory (this address is valid too).
                    unsafe { _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast()) };
                }
            }
            fetch(self.id.get(i));
            fetch(self.disease.0.get(i));
            fetch(self.swarm.get(i));
            if position {
                fetch(self.pos.get(i));
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (i, position);
    }

    /// The slot of an id (binary search: ids are ascending).
    pub fn slot_of_id(&self, id: u64) -> Option<usize> {
        self.id.binary_search(&id).ok()
    }
}

/// Removes the items at `at` (ascending indices) from `v`, the others keeping their order: each
/// run between two of them moved down at once.
fn remove_at<T: Copy>(v: &mut Vec<T>, at: &[u32]) {
    let mut to = at.first().map_or(v.len(), |&a| a as usize);
    for (k, &a) in at.iter().enumerate() {
        let end = at.get(k + 1).map_or(v.len(), |&b| b as usize);
        let from = a as usize + 1;
        v.copy_within(from..end, to);
        to += end - from;
    }
    v.truncate(to);
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
pub(crate) mod tests;
