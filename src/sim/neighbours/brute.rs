//! The brute-force backend: every boid is tested against the query. O(n) per query; it is the
//! reference the KD-tree and grid are proved against, and fine for a few hundred boids.

use bevy::prelude::*;

use super::{NeighbourIndex, Snapshot};

/// Brute-force queries over a snapshot.
pub struct Brute<'a> {
    snapshot: &'a Snapshot,
}

impl<'a> Brute<'a> {
    /// Queries over `snapshot`.
    pub fn new(snapshot: &'a Snapshot) -> Self {
        Self { snapshot }
    }
}

impl NeighbourIndex for Brute<'_> {
    fn for_each_within(&self, centre: Vec2, radius: f32, mut visit: impl FnMut(usize, Vec2)) {
        let space = self.snapshot.space();
        let r2 = radius * radius;
        for (slot, p) in self.snapshot.pos.iter().enumerate() {
            let offset = space.displacement(centre, *p);
            if offset.length_squared() < r2 {
                visit(slot, offset);
            }
        }
    }

    fn candidates(&self, _centre: Vec2, _radius: f32) -> usize {
        self.snapshot.len()
    }
}
