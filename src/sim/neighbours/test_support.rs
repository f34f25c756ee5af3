//! Test support for the modules' unit tests: every backend built over one snapshot, so a test
//! can run the same query or rule on each and compare. Compiled for tests only.

use bevy_spatial::kdtree::KDTree2;

use super::{Grid, IndexRef, Snapshot, index_ref, kdtree};
use crate::sim::agent::Boid;
use crate::sim::config::IndexKind;

/// Builds every backend over the same snapshot.
pub(crate) struct AllBackends {
    /// The snapshot.
    pub(crate) snapshot: Snapshot,
    /// KD-tree over it.
    pub(crate) kdtree: KDTree2<Boid>,
    /// Grid over it.
    pub(crate) grid: Grid,
}

impl AllBackends {
    /// Builds all three backends; `cell` is the grid cell size.
    pub(crate) fn new(snapshot: Snapshot, cell: f32) -> Self {
        let mut kdtree = KDTree2::<Boid>::default();
        kdtree::rebuild(&mut kdtree, &snapshot);
        let mut grid = Grid::default();
        grid.rebuild(&snapshot, cell);
        Self {
            snapshot,
            kdtree,
            grid,
        }
    }

    /// One backend.
    pub(crate) fn get(&self, kind: IndexKind) -> IndexRef<'_> {
        index_ref(kind, &self.snapshot, &self.kdtree, &self.grid)
    }
}

pub(crate) use super::snapshot::tests::random_snapshot;
