//! The uniform-grid backend for large populations. Cells are at least the configured query radius
//! wide; boids are counting-sorted into cell order (positions copied alongside their slots, so a
//! query reads contiguous memory); a query visits the rings of cells its radius can reach,
//! wrapping around the torus, and tests candidates with the shared minimum-image predicate.

use bevy::prelude::*;

use super::Snapshot;
use crate::sim::space::Space;

/// Most cells per boid the grid allocates; sparser worlds get bigger cells.
const MAX_CELLS_PER_BOID: usize = 4;
/// Cells always allowed, whatever the population.
const MIN_CELL_BUDGET: usize = 4096;

/// A uniform grid over the world, in cell-ordered arrays.
#[derive(Default, Debug, Clone)]
pub struct Grid {
    space: Option<Space>,
    cols: usize,
    rows: usize,
    cell_w: f32,
    cell_h: f32,
    /// Entries of cell `c` are `start[c]..start[c + 1]`.
    pub start: Vec<u32>,
    /// Snapshot slot of each entry, in cell order.
    pub slot: Vec<u32>,
    /// Position of each entry, in cell order.
    pub pos: Vec<Vec2>,
    cell_of_slot: Vec<u32>,
}

impl Grid {
    /// Rebuilds the grid from the snapshot with cells at least `cell` px wide.
    pub fn rebuild(&mut self, snapshot: &Snapshot, cell: f32) {
        let space = snapshot.space();
        let n = snapshot.len();
        let budget = (n * MAX_CELLS_PER_BOID).max(MIN_CELL_BUDGET);
        let mut cell = cell.max(1e-3);
        while ((space.width / cell).floor() as usize).max(1)
            * ((space.height / cell).floor() as usize).max(1)
            > budget
        {
            cell *= 1.5;
        }
        self.space = Some(space);
        self.cols = ((space.width / cell).floor() as usize).max(1);
        self.rows = ((space.height / cell).floor() as usize).max(1);
        self.cell_w = space.width / self.cols as f32;
        self.cell_h = space.height / self.rows as f32;
        let cells = self.cols * self.rows;

        // Counting sort: count, prefix-sum, scatter (stable, so each cell stays in slot order).
        self.start.clear();
        self.start.resize(cells + 1, 0);
        self.cell_of_slot.clear();
        for p in &snapshot.pos {
            let c = self.cell_index(*p);
            self.cell_of_slot.push(c as u32);
            self.start[c + 1] += 1;
        }
        for c in 0..cells {
            self.start[c + 1] += self.start[c];
        }
        self.slot.clear();
        self.slot.resize(n, 0);
        self.pos.clear();
        self.pos.resize(n, Vec2::ZERO);
        let mut cursor: Vec<u32> = self.start[..cells].to_vec();
        for (slot, &c) in self.cell_of_slot.iter().enumerate() {
            let at = cursor[c as usize] as usize;
            cursor[c as usize] += 1;
            self.slot[at] = slot as u32;
            self.pos[at] = snapshot.pos[slot];
        }
    }

    /// Columns and rows of cells.
    pub fn dims(&self) -> (usize, usize) {
        (self.cols, self.rows)
    }

    /// Cell width and height, px.
    pub fn cell_size(&self) -> Vec2 {
        Vec2::new(self.cell_w, self.cell_h)
    }

    #[inline]
    fn cell_xy(&self, p: Vec2) -> (usize, usize) {
        let cx = ((p.x / self.cell_w).floor().max(0.0) as usize).min(self.cols - 1);
        let cy = ((p.y / self.cell_h).floor().max(0.0) as usize).min(self.rows - 1);
        (cx, cy)
    }

    #[inline]
    fn cell_index(&self, p: Vec2) -> usize {
        let (cx, cy) = self.cell_xy(p);
        cy * self.cols + cx
    }

    /// Visits every boid within `radius` of `centre` (see [`super::NeighbourIndex`]).
    pub fn query(
        &self,
        snapshot: &Snapshot,
        centre: Vec2,
        radius: f32,
        mut visit: impl FnMut(usize, Vec2),
    ) {
        let Some(space) = self.space else { return };
        if self.slot.is_empty() || radius <= 0.0 {
            return;
        }
        debug_assert_eq!(
            self.slot.len(),
            snapshot.len(),
            "grid built from another snapshot"
        );
        let (cx, cy) = self.cell_xy(space.confine(centre, Vec2::ZERO).0);
        let kx = (radius / self.cell_w).ceil() as usize;
        let ky = (radius / self.cell_h).ceil() as usize;
        let r2 = radius * radius;
        let wrap = space.wraps();
        let cols = span(cx, kx, self.cols, wrap);
        let rows = span(cy, ky, self.rows, wrap);
        for row in rows.iter() {
            for col in cols.iter() {
                let c = row * self.cols + col;
                let (a, b) = (self.start[c] as usize, self.start[c + 1] as usize);
                for e in a..b {
                    let offset = space.displacement(centre, self.pos[e]);
                    if offset.length_squared() < r2 {
                        visit(self.slot[e] as usize, offset);
                    }
                }
            }
        }
    }
}

/// The distinct cell indices within `k` of `c` along an axis of `n` cells.
#[derive(Clone, Copy)]
struct Span {
    first: isize,
    len: usize,
    n: usize,
}

impl Span {
    fn iter(self) -> impl Iterator<Item = usize> {
        (0..self.len).map(move |i| (self.first + i as isize).rem_euclid(self.n as isize) as usize)
    }
}

fn span(c: usize, k: usize, n: usize, wrap: bool) -> Span {
    if wrap {
        if 2 * k + 1 >= n {
            Span {
                first: 0,
                len: n,
                n,
            }
        } else {
            Span {
                first: c as isize - k as isize,
                len: 2 * k + 1,
                n,
            }
        }
    } else {
        let lo = c.saturating_sub(k);
        let hi = (c + k).min(n - 1);
        Span {
            first: lo as isize,
            len: hi - lo + 1,
            n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_wrap_and_never_repeat_a_cell() {
        let all: Vec<usize> = span(0, 1, 10, true).iter().collect();
        assert_eq!(all, vec![9, 0, 1]);
        let all: Vec<usize> = span(1, 2, 4, true).iter().collect();
        assert_eq!(all, vec![0, 1, 2, 3]);
        let all: Vec<usize> = span(0, 1, 10, false).iter().collect();
        assert_eq!(all, vec![0, 1]);
        let all: Vec<usize> = span(9, 3, 10, false).iter().collect();
        assert_eq!(all, vec![6, 7, 8, 9]);
    }
}
