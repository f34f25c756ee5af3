//! The uniform-grid backend for large populations. Cells are at least the configured query radius
//! wide; boids are counting-sorted into cell order, and their position, velocity and swarm are
//! copied into cell-ordered arrays (structure of arrays), so a query — and the steering pass,
//! which walks the grid cell by cell — reads contiguous memory. A query visits the rings of
//! cells its radius can reach, wrapping around the torus, and tests candidates with the shared
//! minimum-image predicate, so its sets equal brute force.

use std::ops::Range;

use bevy::prelude::*;

use super::Snapshot;
use crate::sim::parallel::map_chunks;
use crate::sim::space::{Space, wrap_axis};
use crate::sim::swarm::Swarm;

/// Most cells per boid the grid allocates; sparser worlds get bigger cells.
const MAX_CELLS_PER_BOID: usize = 4;
/// Cells always allowed, whatever the population.
const MIN_CELL_BUDGET: usize = 4096;

/// A uniform grid over the world, in cell-ordered arrays.
#[derive(Default, Debug, Clone)]
pub struct Grid {
    space: Space,
    cols: usize,
    rows: usize,
    cell_w: f32,
    cell_h: f32,
    /// Entries of cell `c` are `start[c]..start[c + 1]`.
    pub start: Vec<u32>,
    /// Snapshot slot of each entry, in cell order.
    pub slot: Vec<u32>,
    /// Position of each entry, px.
    pub pos: Vec<Vec2>,
    /// Velocity of each entry, px/s.
    pub vel: Vec<Vec2>,
    /// Swarm of each entry.
    pub swarm: Vec<Swarm>,
    cell_of_slot: Vec<u32>,
    cursor: Vec<u32>,
}

impl Grid {
    /// Rebuilds the grid from the snapshot with cells at least `cell` px wide.
    pub fn rebuild(&mut self, snapshot: &Snapshot, cell: f32) {
        self.rebuild_subset(snapshot, cell, |_| true);
    }

    /// Rebuilds the grid over only the boids whose slot passes `keep` (e.g. the infected, for
    /// a doctor's search): queries then examine only those, and still report snapshot slots.
    pub fn rebuild_subset(&mut self, snapshot: &Snapshot, cell: f32, keep: impl Fn(usize) -> bool) {
        let space = snapshot.space();
        self.cell_of_slot.clear();
        self.cell_of_slot
            .extend((0..snapshot.len()).map(|i| if keep(i) { 0 } else { u32::MAX }));
        let n = self.cell_of_slot.iter().filter(|&&c| c != u32::MAX).count();
        let budget = (n * MAX_CELLS_PER_BOID).max(MIN_CELL_BUDGET);
        let mut cell = cell.max(1e-3);
        let count = |c: f32| {
            ((space.width / c).floor() as usize).max(1)
                * ((space.height / c).floor() as usize).max(1)
        };
        while count(cell) > budget {
            cell *= 1.5;
        }
        self.space = space;
        self.cols = ((space.width / cell).floor() as usize).max(1);
        self.rows = ((space.height / cell).floor() as usize).max(1);
        self.cell_w = space.width / self.cols as f32;
        self.cell_h = space.height / self.rows as f32;
        let cells = self.cols * self.rows;

        // Counting sort: count, prefix-sum, scatter (stable, so each cell stays in slot order).
        self.start.clear();
        self.start.resize(cells + 1, 0);
        let mut cell_of_slot = std::mem::take(&mut self.cell_of_slot);
        for (slot, c) in cell_of_slot.iter_mut().enumerate() {
            if *c != u32::MAX {
                let cell = self.cell_index_of(snapshot.pos[slot]);
                *c = cell as u32;
                self.start[cell + 1] += 1;
            }
        }
        self.cell_of_slot = cell_of_slot;
        for c in 0..cells {
            self.start[c + 1] += self.start[c];
        }
        self.slot.resize(n, 0);
        self.pos.resize(n, Vec2::ZERO);
        self.vel.resize(n, Vec2::ZERO);
        self.swarm.resize(n, Swarm::Normal);
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.start[..cells]);
        for (slot, &c) in self.cell_of_slot.iter().enumerate() {
            if c == u32::MAX {
                continue;
            }
            let at = self.cursor[c as usize] as usize;
            self.cursor[c as usize] += 1;
            self.slot[at] = slot as u32;
            self.pos[at] = snapshot.pos[slot];
            self.vel[at] = snapshot.vel[slot];
            self.swarm[at] = snapshot.swarm[slot];
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

    /// The world the grid covers.
    pub fn space(&self) -> Space {
        self.space
    }

    /// Number of boids indexed.
    pub fn len(&self) -> usize {
        self.slot.len()
    }

    /// Whether the grid is empty.
    pub fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    #[inline]
    fn cell_xy(&self, p: Vec2) -> (usize, usize) {
        let cx = ((p.x / self.cell_w).floor().max(0.0) as usize).min(self.cols - 1);
        let cy = ((p.y / self.cell_h).floor().max(0.0) as usize).min(self.rows - 1);
        (cx, cy)
    }

    #[inline]
    fn cell_index_of(&self, p: Vec2) -> usize {
        let (cx, cy) = self.cell_xy(p);
        cy * self.cols + cx
    }

    /// Collects the cells a query of `radius` around cell `(cx, cy)` can reach, each once, with
    /// the shift that turns `p_j − centre` into the minimum-image offset for every point of the
    /// cell. Returns, per axis, whether the query spans the whole wrapped axis: there no single
    /// shift fits a cell (the shift is zero) and each candidate must be wrapped on its own.
    fn cells_near(&self, cx: usize, cy: usize, radius: f32, out: &mut Vec<Near>) -> BVec2 {
        out.clear();
        let space = self.space();
        let wrap = space.wraps();
        let kx = (radius / self.cell_w).ceil() as usize;
        let ky = (radius / self.cell_h).ceil() as usize;
        let xs = span(cx, kx, self.cols, wrap);
        let ys = span(cy, ky, self.rows, wrap);
        for (row, sy) in ys.iter_with_shift(space.height) {
            for (col, sx) in xs.iter_with_shift(space.width) {
                let c = row * self.cols + col;
                let range = self.start[c] as usize..self.start[c + 1] as usize;
                if !range.is_empty() {
                    out.push(Near {
                        range,
                        shift: Vec2::new(sx, sy),
                    });
                }
            }
        }
        BVec2::new(wrap && xs.full, wrap && ys.full)
    }

    /// Calls `f` with the entry range of every cell a query of `radius` around cell `(cx, cy)`
    /// can reach, each cell once.
    #[inline]
    fn for_each_cell_near(
        &self,
        cx: usize,
        cy: usize,
        radius: f32,
        mut f: impl FnMut(Range<usize>),
    ) {
        let wrap = self.space().wraps();
        let kx = (radius / self.cell_w).ceil() as usize;
        let ky = (radius / self.cell_h).ceil() as usize;
        let cols = span(cx, kx, self.cols, wrap);
        for row in span(cy, ky, self.rows, wrap).iter() {
            for col in cols.iter() {
                let c = row * self.cols + col;
                let range = self.start[c] as usize..self.start[c + 1] as usize;
                if !range.is_empty() {
                    f(range);
                }
            }
        }
    }

    /// Visits every boid within `radius` of `centre` (see [`super::NeighbourIndex`]).
    pub fn query(&self, centre: Vec2, radius: f32, mut visit: impl FnMut(usize, Vec2)) {
        if self.slot.is_empty() || radius <= 0.0 {
            return;
        }
        let space = self.space();
        let (cx, cy) = self.cell_xy(space.confine(centre, Vec2::ZERO).0);
        let r2 = radius * radius;
        self.for_each_cell_near(cx, cy, radius, |range| {
            for e in range {
                let offset = space.displacement(centre, self.pos[e]);
                if offset.length_squared() < r2 {
                    visit(self.slot[e] as usize, offset);
                }
            }
        });
    }

    /// How many boids a query of `radius` around `centre` examines.
    pub fn candidates(&self, centre: Vec2, radius: f32) -> usize {
        if self.slot.is_empty() || radius <= 0.0 {
            return 0;
        }
        let (cx, cy) = self.cell_xy(self.space().confine(centre, Vec2::ZERO).0);
        let mut n = 0;
        self.for_each_cell_near(cx, cy, radius, |range| n += range.len());
        n
    }

    /// Maps `f(entry, block)` over every boid, cell by cell in parallel, and returns the results
    /// indexed by snapshot slot. For each cell the candidates of every cell within `reach` are
    /// gathered once into a contiguous [`Block`] shared by all the cell's boids (the boid itself
    /// included), so the caller's inner loop is a straight pass over small arrays, with the
    /// same minimum-image offsets as every other backend.
    pub fn map_by_cell<T: Send + Clone + Default + 'static>(
        &self,
        reach: f32,
        f: impl Fn(usize, &Block) -> T + Sync,
    ) -> Vec<T> {
        let cells = self.cols * self.rows;
        let space = self.space();
        let pairs: Vec<(u32, T)> = map_chunks(cells, |chunk| {
            let mut out = Vec::new();
            let mut near: Vec<Near> = Vec::with_capacity(49);
            let mut block = Block {
                space,
                ..Block::default()
            };
            for c in chunk {
                let own = self.start[c] as usize..self.start[c + 1] as usize;
                if own.is_empty() {
                    continue;
                }
                block.wrap_each = self.cells_near(c % self.cols, c / self.cols, reach, &mut near);
                block.clear();
                for cell in &near {
                    for j in cell.range.clone() {
                        block.push(j, self.pos[j], cell.shift, self.vel[j], self.swarm[j]);
                    }
                }
                block.pad();
                for e in own {
                    out.push((self.slot[e], f(e, &block)));
                }
            }
            out
        });
        let mut by_slot = vec![T::default(); self.slot.len()];
        for (slot, v) in pairs {
            by_slot[slot as usize] = v;
        }
        by_slot
    }
}

/// One cell of a neighbourhood: its entries and the wrap shift of its points.
#[derive(Clone, Debug)]
struct Near {
    range: Range<usize>,
    shift: Vec2,
}

/// SIMD width the gathered arrays are padded to.
pub const BLOCK_LANES: usize = 8;
/// Coordinate of the padding candidates: so far away that every radius test fails, yet finite,
/// so that multiplying by a zero weight gives exactly zero.
const FAR: f32 = 1e30;

/// The candidates around one grid cell, gathered into contiguous arrays (one per coordinate,
/// so loops over them vectorise) for [`Grid::map_by_cell`]. The arrays are padded with
/// far-away candidates to a multiple of [`BLOCK_LANES`]; [`Block::len`] counts the real ones.
#[derive(Clone, Debug, Default)]
pub struct Block {
    /// Grid entry of each candidate (to skip the boid itself).
    pub entry: Vec<u32>,
    /// x, px.
    pub x: Vec<f32>,
    /// y, px.
    pub y: Vec<f32>,
    /// Wrap shift along x of the candidate's cell.
    pub sx: Vec<f32>,
    /// Wrap shift along y.
    pub sy: Vec<f32>,
    /// Velocity x, px/s.
    pub vx: Vec<f32>,
    /// Velocity y, px/s.
    pub vy: Vec<f32>,
    /// Swarm index.
    pub swarm: Vec<u8>,
    /// Swarm index as a float (for SIMD comparisons).
    pub swarm_f: Vec<f32>,
    /// Per axis: the neighbourhood spans the whole wrapped axis, so each candidate's offset is
    /// wrapped on its own (its shift is zero); otherwise `(p − centre) + shift` is the minimum
    /// image.
    pub wrap_each: BVec2,
    real: usize,
    space: Space,
}

impl Block {
    fn clear(&mut self) {
        self.entry.clear();
        self.x.clear();
        self.y.clear();
        self.sx.clear();
        self.sy.clear();
        self.vx.clear();
        self.vy.clear();
        self.swarm.clear();
        self.swarm_f.clear();
        self.real = 0;
    }

    fn push(&mut self, entry: usize, p: Vec2, shift: Vec2, v: Vec2, swarm: Swarm) {
        self.entry.push(entry as u32);
        self.x.push(p.x);
        self.y.push(p.y);
        self.sx.push(shift.x);
        self.sy.push(shift.y);
        self.vx.push(v.x);
        self.vy.push(v.y);
        self.swarm.push(swarm.index() as u8);
        self.swarm_f.push(swarm.index() as f32);
        self.real += 1;
    }

    /// Pads the arrays to a multiple of [`BLOCK_LANES`] with far-away candidates.
    fn pad(&mut self) {
        while !self.entry.len().is_multiple_of(BLOCK_LANES) {
            self.entry.push(u32::MAX);
            self.x.push(FAR);
            self.y.push(FAR);
            self.sx.push(0.0);
            self.sy.push(0.0);
            self.vx.push(0.0);
            self.vy.push(0.0);
            self.swarm.push(u8::MAX);
            self.swarm_f.push(-1.0);
        }
    }

    /// Number of real candidates.
    pub fn len(&self) -> usize {
        self.real
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.real == 0
    }

    /// Length of the padded arrays (a multiple of [`BLOCK_LANES`]).
    pub fn padded_len(&self) -> usize {
        self.entry.len()
    }

    /// The world the block lives in.
    pub fn space(&self) -> Space {
        self.space
    }

    /// Minimum-image offset from `centre` to candidate `k`: per axis `(p_k − centre) + shift`,
    /// or the wrapped difference where the block spans the whole axis — bit for bit what
    /// `Space::displacement` gives for any point within the query radius.
    #[inline]
    pub fn offset(&self, k: usize, centre: Vec2) -> Vec2 {
        let dx = (self.x[k] - centre.x) + self.sx[k];
        let dy = (self.y[k] - centre.y) + self.sy[k];
        Vec2::new(
            if self.wrap_each.x {
                wrap_axis(dx, self.space.width)
            } else {
                dx
            },
            if self.wrap_each.y {
                wrap_axis(dy, self.space.height)
            } else {
                dy
            },
        )
    }
}

/// The distinct cell indices within `k` of `c` along an axis of `n` cells.
#[derive(Clone, Copy)]
struct Span {
    first: isize,
    len: usize,
    n: usize,
    /// Covers every cell of a wrapped axis.
    full: bool,
}

impl Span {
    fn iter(self) -> impl Iterator<Item = usize> {
        (0..self.len).map(move |i| (self.first + i as isize).rem_euclid(self.n as isize) as usize)
    }

    /// Cell indices with the shift of their points: −L for cells reached across the low seam
    /// (their points sit near L), +L across the high seam.
    fn iter_with_shift(self, l: f32) -> impl Iterator<Item = (usize, f32)> {
        (0..self.len).map(move |i| {
            let raw = self.first + i as isize;
            let shift = if self.full {
                0.0
            } else if raw < 0 {
                -l
            } else if raw >= self.n as isize {
                l
            } else {
                0.0
            };
            (raw.rem_euclid(self.n as isize) as usize, shift)
        })
    }
}

fn span(c: usize, k: usize, n: usize, wrap: bool) -> Span {
    if wrap {
        if 2 * k + 1 >= n {
            Span {
                first: 0,
                len: n,
                n,
                full: true,
            }
        } else {
            Span {
                first: c as isize - k as isize,
                len: 2 * k + 1,
                n,
                full: false,
            }
        }
    } else {
        let lo = c.saturating_sub(k);
        let hi = (c + k).min(n - 1);
        Span {
            first: lo as isize,
            len: hi - lo + 1,
            n,
            full: false,
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
