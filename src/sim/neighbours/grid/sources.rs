//! Boids that are not in a grid, searching it a cell's neighbourhood at a time:
//! [`Grid::map_sources_by_cell`], how Antivax boids look for doctors in a grid of the doctors
//! alone. A query from each boid works out which cells its disc reaches afresh; grouped by the
//! cell they are in, the boids of a cell share that cell's neighbourhood. No systems live here.

use bevy::prelude::*;

use super::by_cell::BySlot;
use super::span::ceil_usize;
use super::{Grid, Neighbourhood};
use crate::sim::neighbours::Snapshot;
use crate::sim::parallel::{for_each_part, map_light_chunks, part_size};

impl Grid {
    /// `f(slot, neighbourhood)` for every slot of `snapshot` that passes `source`, by slot
    /// (`T::default()` for the others): `neighbourhood` holds the strips a query of `reach`
    /// from the cell of this grid the boid is in can reach. The boids are grouped by that cell
    /// (a counting sort, stable), and each part of the parallel loop works out a cell's
    /// neighbourhood once for its boids of the cell. Where `reach` is at most a cell
    /// ([`Grid::reach_is_one_cell`], which this asks), for a radius up to `reach` the hits of
    /// [`Grid::for_each_hit`] over the neighbourhood's strips from the boid's position are those
    /// of [`Grid::query`] from it, in the same order and with the same offsets: a query's cells
    /// are some of the neighbourhood's (the disc's span never leaves the cell's span of
    /// `reach`, and each spans a whole axis only where the other does), visited row by row in
    /// the same order, and no boid of another cell is within the radius.
    pub fn map_sources_by_cell<T: Send + Clone + Default + 'static>(
        &self,
        snapshot: &Snapshot,
        reach: f32,
        source: impl Fn(usize) -> bool + Sync,
        f: impl Fn(usize, &Neighbourhood) -> T + Sync,
    ) -> Vec<T> {
        assert!(
            self.reach_is_one_cell(reach),
            "a neighbourhood of {reach} px is more than the cells next to a cell"
        );
        let n = snapshot.len();
        let cells = self.cols * self.rows;
        // Each source and its cell (the cell a query from it starts at: of its position
        // confined to the world), in slot order.
        let keyed: Vec<(u32, u32)> = map_light_chunks(n, |range| {
            range
                .filter(|&i| source(i))
                .map(|i| {
                    let p = self.space.confine(snapshot.pos[i], Vec2::ZERO).0;
                    (self.cell_index_of(p) as u32, i as u32)
                })
                .collect()
        });
        let mut start = vec![0u32; cells + 1];
        for &(c, _) in &keyed {
            start[c as usize + 1] += 1;
        }
        for c in 0..cells {
            start[c + 1] += start[c];
        }
        let mut by_cell = vec![(0u32, 0u32); keyed.len()];
        for &(c, i) in &keyed {
            let at = &mut start[c as usize];
            by_cell[*at as usize] = (c, i);
            *at += 1;
        }
        // Each part writes its boids' results straight to their slots, each slot once (a
        // source is listed once).
        let mut out = vec![T::default(); n];
        let by_slot = BySlot::new(&mut out);
        let size = part_size(by_cell.len());
        for_each_part(by_cell.chunks(size).collect(), |part| {
            let mut hood = Neighbourhood::default();
            let mut at = None;
            for &(c, i) in part {
                if at != Some(c) {
                    let cell = c as usize;
                    self.neighbourhood(cell % self.cols, cell / self.cols, reach, &mut hood);
                    at = Some(c);
                }
                // SAFETY: slot `i` is this source's alone, and `out` is not read until every
                // part is done.
                unsafe { by_slot.put(i as usize, f(i as usize, &hood)) };
            }
        });
        out
    }

    /// Whether a neighbourhood of `reach` is a cell and those next to it along each axis of
    /// more than three cells (of three or fewer, every neighbourhood and every query spans the
    /// whole axis): true for a grid built with cells of `reach` or wider, unless rounding made
    /// its cells a hair narrower. Then [`Grid::map_sources_by_cell`] gives a query's hits.
    pub fn reach_is_one_cell(&self, reach: f32) -> bool {
        let one = |cell: f32, n: usize| n <= 3 || ceil_usize(reach / cell) <= 1;
        one(self.cell_w, self.cols) && one(self.cell_h, self.rows)
    }
}
