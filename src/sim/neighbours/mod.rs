//! Neighbour search (docs/model.md §3). Once per step, in `SimSystems::Index`, the ECS is copied into a
//! compact [`Snapshot`] (structure of arrays, in `AgentId` order) and the active index backend is
//! rebuilt from it: bevy_spatial's `KDTree2<Boid>` resource (default), a uniform [`Grid`], or
//! brute force. Every other system finds neighbours only through [`NeighbourIndex`], reading the
//! snapshot by slot — never `Query::get` per neighbour. All backends return the same sets,
//! wrap-around included.

mod brute;
mod grid;
mod kdtree;
#[cfg(test)]
pub(crate) mod test_support;

pub use brute::Brute;
pub use grid::{Grid, Neighbourhood, Run};
pub use kdtree::{Candidates, KdTree, splits as kd_splits};

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_spatial::kdtree::KDTree2;

use crate::SimSystems;
use crate::sim::agent::{AgentId, Boid, Disease, Health, Position, Velocity};
use crate::sim::config::{IndexKind, SimConfig};
use crate::sim::space::Space;
use crate::sim::swarm::Swarm;

/// Answers "who is within `radius` of this point?" on the world of the snapshot it was built
/// from. Implemented by every backend; the sets must be identical across backends.
pub trait NeighbourIndex {
    /// Calls `visit(slot, offset)` for every boid whose minimum-image offset from `centre`
    /// (`offset = p_j − centre`) is strictly shorter than `radius`. A boid standing at `centre`
    /// is included, so callers skip their own slot. `radius` must be below half the smaller
    /// world side on a torus (the config enforces it).
    fn for_each_within(&self, centre: Vec2, radius: f32, visit: impl FnMut(usize, Vec2));

    /// How many boids a query of `radius` around `centre` examines (for benchmarks).
    fn candidates(&self, centre: Vec2, radius: f32) -> usize;

    /// The slots within `radius` of `centre`, sorted (convenience for tests and the UI).
    fn within(&self, centre: Vec2, radius: f32) -> Vec<usize> {
        let mut out = Vec::new();
        self.for_each_within(centre, radius, |slot, _| out.push(slot));
        out.sort_unstable();
        out
    }
}

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

/// Which backend the current index was built with, and its grid (kept warm between steps).
#[derive(Resource, Default)]
pub struct IndexState {
    /// The backend the last rebuild used; queries go to it.
    pub kind: IndexKind,
    /// The grid backend's arrays (empty unless `kind` is `Grid`).
    pub grid: Grid,
    /// Scratch rows for the snapshot capture.
    rows: Vec<Row>,
}

/// A borrowed, ready-to-query neighbour index over a snapshot.
pub enum IndexRef<'a> {
    /// bevy_spatial's KD-tree.
    KdTree(KdTree<'a>),
    /// Uniform grid.
    Grid(&'a Grid),
    /// Every pair.
    Brute(Brute<'a>),
}

impl NeighbourIndex for IndexRef<'_> {
    #[inline]
    fn for_each_within(&self, centre: Vec2, radius: f32, visit: impl FnMut(usize, Vec2)) {
        match self {
            IndexRef::KdTree(t) => t.for_each_within(centre, radius, visit),
            IndexRef::Grid(g) => g.query(centre, radius, visit),
            IndexRef::Brute(b) => b.for_each_within(centre, radius, visit),
        }
    }

    fn candidates(&self, centre: Vec2, radius: f32) -> usize {
        match self {
            IndexRef::KdTree(t) => t.candidates(centre, radius),
            IndexRef::Grid(g) => g.candidates(centre, radius),
            IndexRef::Brute(b) => b.candidates(centre, radius),
        }
    }
}

/// System parameter giving systems the step's snapshot and its neighbour index.
#[derive(SystemParam)]
pub struct Neighbours<'w> {
    /// The step's snapshot.
    pub snapshot: Res<'w, Snapshot>,
    kdtree: Res<'w, KDTree2<Boid>>,
    state: Res<'w, IndexState>,
}

impl Neighbours<'_> {
    /// The index to query.
    pub fn index(&self) -> IndexRef<'_> {
        index_ref(
            self.state.kind,
            &self.snapshot,
            &self.kdtree,
            &self.state.grid,
        )
    }

    /// The backend the index was built with.
    pub fn kind(&self) -> IndexKind {
        self.state.kind
    }

    /// The KD-tree resource (meaningful when `kind()` is `Kdtree`).
    pub fn kdtree(&self) -> &KDTree2<Boid> {
        &self.kdtree
    }

    /// The grid (meaningful when `kind()` is `Grid`).
    pub fn grid(&self) -> &Grid {
        &self.state.grid
    }
}

/// Borrows the backend `kind` over `snapshot`.
pub fn index_ref<'a>(
    kind: IndexKind,
    snapshot: &'a Snapshot,
    kdtree: &'a KDTree2<Boid>,
    grid: &'a Grid,
) -> IndexRef<'a> {
    match kind {
        IndexKind::Kdtree => IndexRef::KdTree(KdTree::new(kdtree, snapshot)),
        IndexKind::Grid => IndexRef::Grid(grid),
        IndexKind::Brute => IndexRef::Brute(Brute::new(snapshot)),
    }
}

/// The step's index as stored in a world (outside systems: the inspector, benchmarks).
pub fn world_index(world: &World) -> IndexRef<'_> {
    let state = world.resource::<IndexState>();
    index_ref(
        state.kind,
        world.resource::<Snapshot>(),
        world.resource::<KDTree2<Boid>>(),
        &state.grid,
    )
}

/// The cell size the grid uses: the largest flocking query radius, the query every boid makes
/// every step, so a query visits 3 × 3 cells. (Half-width cells, 5 × 5 per query, examine fewer
/// candidates but measured slower: the per-cell overhead outweighed the saving.)
pub fn grid_cell_size(config: &SimConfig) -> f32 {
    Swarm::ALL
        .iter()
        .map(|&s| config.swarms.get(s).query_radius())
        .fold(1.0, f32::max)
}

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Snapshot>()
        .init_resource::<IndexState>()
        .init_resource::<KDTree2<Boid>>()
        .add_systems(
            FixedUpdate,
            (capture_snapshot, rebuild_index)
                .chain()
                .in_set(SimSystems::Index),
        );
}

/// Copies every boid into the snapshot, in id order.
fn capture_snapshot(
    config: Res<SimConfig>,
    boids: Query<(Entity, &AgentId, &Position, &Velocity, &Swarm, &Health), With<Boid>>,
    mut snapshot: ResMut<Snapshot>,
    mut state: ResMut<IndexState>,
) {
    let space = config.space();
    let mut rows = std::mem::take(&mut state.rows);
    rows.clear();
    rows.extend(boids.iter().map(|(entity, id, p, v, swarm, health)| Row {
        entity,
        id: id.0,
        // Positions are inside the world after integration; this also covers hand edits in
        // the inspector, so every backend can rely on it.
        pos: if space.contains(p.0) {
            p.0
        } else {
            space.confine(p.0, Vec2::ZERO).0
        },
        vel: v.0,
        swarm: *swarm,
        disease: health.disease,
    }));
    snapshot.fill(space, &mut rows);
    state.rows = rows;
}

/// Rebuilds the configured backend from the snapshot (our own system, not bevy_spatial's
/// timer-driven update, so the index is never a step stale).
fn rebuild_index(
    config: Res<SimConfig>,
    snapshot: Res<Snapshot>,
    mut kdtree: ResMut<KDTree2<Boid>>,
    mut state: ResMut<IndexState>,
) {
    let kind = config.neighbour_index;
    state.kind = kind;
    match kind {
        IndexKind::Kdtree => kdtree::rebuild(&mut kdtree, &snapshot),
        IndexKind::Grid => state.grid.rebuild(&snapshot, grid_cell_size(&config)),
        IndexKind::Brute => {}
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::AllBackends;
    use super::*;
    use crate::sim::space::Boundary;
    use rand::{Rng, SeedableRng};

    fn random_snapshot(space: Space, n: usize, seed: u64) -> Snapshot {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let mut rows = Vec::new();
        for i in 0..n {
            // A third of the points hug an edge or a corner, where wrap-around matters.
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
}
