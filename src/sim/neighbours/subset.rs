//! [`SubsetIndex`]: an index over some boids only (the infected a doctor seeks, say), rebuilt by
//! its owner each step. Whatever the main backend, it is a uniform grid over those boids, so a
//! search examines them alone; its queries report snapshot slots like any index. No systems
//! live here.

use bevy::prelude::*;

use super::grid::Grid;
use super::{NeighbourIndex, Snapshot};

/// An index over the boids of a snapshot that pass a filter.
#[derive(Default, Debug, Clone)]
pub struct SubsetIndex(Grid);

impl SubsetIndex {
    /// Rebuilds the index over the slots of `snapshot` that pass `keep`, with cells at least
    /// `cell` px wide (the radius its searches usually use), and few of them when few boids
    /// pass: the order in which a query visits the boids is unspecified (searches here are for
    /// the nearest one, or a set of pairs, never a sum).
    pub fn rebuild(&mut self, snapshot: &Snapshot, cell: f32, keep: impl Fn(usize) -> bool + Sync) {
        self.0.rebuild_few(snapshot, cell, keep);
    }

    /// How many boids it holds.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl NeighbourIndex for SubsetIndex {
    fn for_each_within(&self, centre: Vec2, radius: f32, visit: impl FnMut(usize, Vec2)) {
        self.0.query(centre, radius, visit);
    }

    fn candidates(&self, centre: Vec2, radius: f32) -> usize {
        self.0.candidates(centre, radius)
    }
}
