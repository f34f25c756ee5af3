//! The step's [`Snapshot`]: every boid's position, velocity, swarm and disease state copied
//! from the ECS once per step (in `SimSystems::Index`), as a structure of arrays in `AgentId`
//! order. A boid's index here is its "slot"; every neighbour query reports slots. No systems
//! live here.

use bevy::prelude::*;

use crate::sim::agent::Disease;
use crate::sim::space::Space;
use crate::sim::swarm::Swarm;

/// The step's copy of every boid, in `AgentId` order. A boid's index here is its "slot".
#[derive(Resource, Default, Debug, Clone)]
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
    pub disease: Vec<Disease>,
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
        // Queries usually yield rows in id order already; after a despawn they are out of
        // order, and ids are dense enough to place by a counting pass.
        if !rows.is_sorted_by_key(|r| r.id) {
            order_by_id(rows);
        }
        self.space = space;
        self.entity.clear();
        self.id.clear();
        self.pos.clear();
        self.vel.clear();
        self.swarm.clear();
        self.disease.clear();
        self.isolated.clear();
        self.isolated.resize(rows.len(), false);
        self.slot_by_entity.clear();
        for (slot, r) in rows.iter().enumerate() {
            self.entity.push(r.entity);
            self.id.push(r.id);
            self.pos.push(r.pos);
            self.vel.push(r.vel);
            self.swarm.push(r.swarm);
            self.disease.push(r.disease);
            let e = r.entity.index() as usize;
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
        self.disease[j].is_infected() && !self.isolated[j]
    }

    /// The slot of an id (binary search: ids are ascending).
    pub fn slot_of_id(&self, id: u64) -> Option<usize> {
        self.id.binary_search(&id).ok()
    }
}

/// Puts rows in ascending id order: by a counting pass over the ids when they are dense (a run
/// spawns ids from 0 and few die), by sorting otherwise.
fn order_by_id(rows: &mut [Row]) {
    let max = rows.iter().map(|r| r.id).max().unwrap_or(0);
    if max as usize > 4 * rows.len() + 1024 {
        rows.sort_unstable_by_key(|r| r.id);
        return;
    }
    // Rank of each id among those present, then each row to its rank.
    let mut rank = vec![u32::MAX; max as usize + 1];
    for r in rows.iter() {
        rank[r.id as usize] = 0;
    }
    for (next, slot) in rank.iter_mut().filter(|s| **s == 0).enumerate() {
        *slot = next as u32;
    }
    let sorted: Vec<Row> = {
        let mut out = rows.to_vec();
        for r in rows.iter() {
            out[rank[r.id as usize] as usize] = *r;
        }
        out
    };
    rows.copy_from_slice(&sorted);
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
            order_by_id(&mut rows);
            let mut want = ids.clone();
            want.sort_unstable();
            assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), want);
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
