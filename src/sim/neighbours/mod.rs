//! Neighbour search (docs/model.md §3). Once per step, in `SimSystems::Index`, the ECS is
//! copied into a compact [`Snapshot`] (structure of arrays, in `AgentId` order) and the active
//! index backend is rebuilt from it: bevy_spatial's `KDTree2<Boid>` resource (default), a
//! uniform [`Grid`], or brute force. Every other system finds neighbours only through this
//! module — one query at a time ([`NeighbourIndex`]) or every boid's neighbourhood in one
//! batched, parallel traversal ([`IndexRef::map_near`], which serves each backend's fastest
//! walk: kd groups, grid cells, or plain queries; [`IndexRef::map_near_batched`] when a result
//! is finished several boids at a time) — reading the snapshot by slot, never
//! `Query::get` per neighbour, and never naming a backend. All backends return the same sets,
//! wrap-around included.

mod brute;
mod grid;
mod kdtree;
mod near;
mod snapshot;
mod subset;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;

pub use brute::Brute;
pub use grid::{Grid, ISOLATED_LANE, Lanes, Neighbourhood, Strip};
pub use kdtree::{Candidates, KdTree, splits as kd_splits};
pub use near::{Near, Targets};
pub use snapshot::{Row, Snapshot};
pub use subset::SubsetIndex;

use bevy::ecs::component::Tick;
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_spatial::kdtree::KDTree2;

use crate::sim::agent::{AgentId, Boid, Health, Isolated, Position, Velocity};
use crate::sim::config::{IndexKind, SimConfig};
use crate::sim::parallel::{SERIAL_BELOW, own_pool_here};
use crate::sim::schedule::SimSystems;
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

    /// How many boids are within `radius` of `centre`, up to `cap`: the calls
    /// [`NeighbourIndex::for_each_within`] would make, or `cap` if they would be at least as
    /// many (a backend may count without them, and stop once it has counted `cap`).
    fn count_within(&self, centre: Vec2, radius: f32, cap: usize) -> usize {
        let mut n = 0;
        self.for_each_within(centre, radius, |_, _| n += 1);
        n.min(cap)
    }

    /// The slots within `radius` of `centre`, sorted (convenience for tests and the UI).
    fn within(&self, centre: Vec2, radius: f32) -> Vec<usize> {
        let mut out = Vec::new();
        self.for_each_within(centre, radius, |slot, _| out.push(slot));
        out.sort_unstable();
        out
    }
}

/// Which backend the current index was built with, and its grid (kept warm between steps).
#[derive(Resource, Default)]
pub struct IndexState {
    /// The backend the last rebuild used; queries go to it.
    pub kind: IndexKind,
    /// The grid backend's arrays (empty unless `kind` is `Grid`).
    pub grid: Grid,
}

/// A copy of a step's index that owns its data ([`Neighbours::copy_index_into`]): the grid's
/// arrays, or brute force over the copied snapshot.
#[derive(Default)]
pub struct OwnedIndex {
    kind: IndexKind,
    grid: Grid,
}

impl OwnedIndex {
    /// The index to query, over (a copy of) the snapshot it was built from.
    pub fn index<'a>(&'a self, snapshot: &'a Snapshot) -> IndexRef<'a> {
        match self.kind {
            IndexKind::Grid => IndexRef::Grid(&self.grid),
            IndexKind::Brute | IndexKind::Kdtree => IndexRef::Brute(Brute::new(snapshot)),
        }
    }
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

    fn count_within(&self, centre: Vec2, radius: f32, cap: usize) -> usize {
        match self {
            IndexRef::KdTree(t) => t.count_within(centre, radius, cap),
            IndexRef::Grid(g) => g.count_within(centre, radius, cap),
            IndexRef::Brute(b) => b.count_within(centre, radius, cap),
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

    /// Copies the index into `to` (reusing its arrays), for work that outlives this system;
    /// `false` for the KD-tree (bevy_spatial's resource is not copied; `to` is then of no use).
    pub fn copy_index_into(&self, to: &mut OwnedIndex) -> bool {
        to.kind = self.state.kind;
        match self.state.kind {
            IndexKind::Grid => to.grid.clone_from(&self.state.grid),
            IndexKind::Brute => {}
            IndexKind::Kdtree => return false,
        }
        true
    }

    /// When the snapshot and the index were last changed: equal ticks later in a step mean
    /// both are as they were.
    pub fn changed_at(&self) -> [Tick; 2] {
        [self.snapshot.last_changed(), self.state.last_changed()]
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

/// What [`capture_snapshot`] reads of a boid.
type BoidRow<'a> = (
    Entity,
    &'a AgentId,
    &'a Position,
    &'a Velocity,
    &'a Swarm,
    &'a Health,
);

/// Copies every boid into the snapshot, in id order.
fn capture_snapshot(
    config: Res<SimConfig>,
    boids: Query<(Entity, &AgentId, &Position, &Velocity, &Swarm, &Health), With<Boid>>,
    isolated: Query<Entity, (With<Boid>, With<Isolated>)>,
    mut snapshot: ResMut<Snapshot>,
) {
    let space = config.space();
    let row = |(entity, id, p, v, swarm, health): BoidRow| Row {
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
    };
    // In a headless run with workers of its own, from SERIAL_BELOW boids, the usual step (the
    // same boids as the last, or some of them: the others caught or dead) looks each slot's
    // boid up by its entity, the slots split between the threads: the same rows, a fifth less
    // time at 100 000 boids on 2 threads (BENCHMARKS.md, round 3, thirty-fourth stop; the
    // window, where a loop wakes Bevy's threads, was not measured and walks as before).
    // Otherwise, or when a boid was born, one walk of the query.
    // Where the lookup by slot fails, so would the walk's rewrite in place (which needs the
    // same boids): the snapshot is refilled at once.
    let n = boids.iter().len();
    if n >= SERIAL_BELOW && own_pool_here() {
        if !snapshot.rewrite_each(space, n, |e| boids.get(e).ok().map(row)) {
            snapshot.refill(space, boids.iter().map(row));
        }
    } else {
        snapshot.update(space, || boids.iter().map(row));
    }
    for entity in &isolated {
        snapshot.isolate(entity);
    }
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
