//! The uniform-grid backend for large populations. Cells are at least the configured query radius
//! wide; boids are counting-sorted into cell order and their position, velocity and swarm copied
//! into cell-ordered arrays, one per coordinate (structure of arrays). Cells are numbered row by
//! row, so the cells of one row of a neighbourhood are contiguous in those arrays: a query scans
//! a few contiguous [`Strip`]s (one per row, split where a row crosses the seam) in place, and
//! the steering pass, which walks the grid cell by cell, copies a cell's strips one after
//! another once and scans that copy for each of the cell's boids. Candidates are tested with
//! the shared minimum-image predicate, so the sets equal brute force.

use bevy::prelude::*;

mod kept;
mod neighbourhood;
mod scan;
mod scatter;
mod sources;
mod span;
mod strips;
#[cfg(test)]
mod tests;

use self::kept::pick_kept;
use self::neighbourhood::Packed;
pub use self::neighbourhood::{Neighbourhood, Strip};
pub use self::scan::Lanes;
use self::scatter::{Entries, Rows, scatter_bounds};
use self::span::{ceil_usize, cell_within, span};
use super::Snapshot;
use crate::sim::parallel::{SERIAL_BELOW, fill_runs, for_each_part, parts_for_pairs, workers};
use crate::sim::space::Space;
use crate::sim::swarm::Swarm;

/// Most cells per boid the grid allocates; sparser worlds get bigger cells.
const MAX_CELLS_PER_BOID: usize = 4;
/// Cells always allowed, whatever the population.
const MIN_CELL_BUDGET: usize = 4096;
/// The same for [`Grid::rebuild_few`]: a rebuild walks every cell three times (count, prefix
/// sum, cursors) and a wide query visits every cell it spans, so a grid of a few boids with
/// thousands of cells costs more than the boids' own work (`matrix/B2_D2.toml`, 130 boids:
/// ~12 000 instructions a rebuild of the infected, ~2 900 a doctor's search among them).
const FEW_MIN_CELLS: usize = 64;
/// SIMD width the arrays are padded for: a scan may read this many entries past a strip's end.
pub const LANES: usize = 8;
/// Most entries [`Grid::map_by_cell`] hands its `finish` at once (a multiple of
/// [`LANES`]).
pub const BATCH: usize = 64;
/// Coordinate of the padding entries: so far away that every radius test fails, yet finite, so
/// that multiplying by a zero weight gives exactly zero.
const FAR: f32 = 1e30;
/// The swarm lane ([`Lanes::swarm`]) of an isolated boid: of no swarm for alignment and
/// cohesion, though still a boid of its own swarm everywhere else.
pub const ISOLATED_LANE: f32 = -2.0;

/// A uniform grid over the world, in cell-ordered arrays.
#[derive(Default, Debug)]
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
    /// x of each entry, px: entry `e` at `e + LANES`, between [`LANES`] far-away padding entries
    /// on either side (so a scan may read eight entries from anywhere in `−8..=len`).
    x: Vec<f32>,
    /// y of each entry, px (laid out as `x`).
    y: Vec<f32>,
    /// Velocity x of each entry, px/s (laid out as `x`).
    vx: Vec<f32>,
    /// Velocity y of each entry, px/s (laid out as `x`).
    vy: Vec<f32>,
    /// Swarm index of each entry as a float (−1 for padding, [`ISOLATED_LANE`] for an isolated
    /// boid), for SIMD comparisons (laid out as `x`).
    swarm_f: Vec<f32>,
    /// Swarm of each entry.
    pub swarm: Vec<Swarm>,
    /// Boids in the snapshot the grid was built from (all of them entries, or a subset).
    boids: usize,
    /// The kept boids' slots, in order (empty when every boid is kept).
    kept: Vec<u32>,
    /// The cell of each kept boid (after a rebuild on one thread, its entry).
    cell_of: Vec<u32>,
    cursor: Vec<u32>,
}

impl Clone for Grid {
    fn clone(&self) -> Self {
        let mut grid = Grid::default();
        grid.clone_from(self);
        grid
    }

    /// Copies `other` into this grid's arrays, reusing their allocations (the derived
    /// `clone_from` would allocate them anew).
    fn clone_from(&mut self, other: &Self) {
        let Grid {
            space,
            cols,
            rows,
            cell_w,
            cell_h,
            start,
            slot,
            x,
            y,
            vx,
            vy,
            swarm_f,
            swarm,
            boids,
            kept,
            cell_of,
            cursor,
        } = other;
        (self.space, self.cols, self.rows) = (*space, *cols, *rows);
        (self.cell_w, self.cell_h, self.boids) = (*cell_w, *cell_h, *boids);
        self.start.clone_from(start);
        self.slot.clone_from(slot);
        for (to, from) in [
            (&mut self.x, x),
            (&mut self.y, y),
            (&mut self.vx, vx),
            (&mut self.vy, vy),
            (&mut self.swarm_f, swarm_f),
        ] {
            to.clone_from(from);
        }
        self.swarm.clone_from(swarm);
        self.kept.clone_from(kept);
        self.cell_of.clone_from(cell_of);
        self.cursor.clone_from(cursor);
    }
}

impl Grid {
    /// Rebuilds the grid from the snapshot with cells at least `cell` px wide.
    pub fn rebuild(&mut self, snapshot: &Snapshot, cell: f32) {
        self.rebuild_on(
            snapshot,
            cell,
            None::<fn(usize) -> bool>,
            None,
            MIN_CELL_BUDGET,
        );
    }

    /// Rebuilds the grid over only the boids whose slot passes `keep` (e.g. the infected, for
    /// a doctor's search): queries then examine only those, and still report snapshot slots.
    /// A counting sort, stable (each cell keeps its boids in slot order): the cells worked out
    /// in parallel, counted and prefix-summed on one thread, then scattered in parallel, each
    /// thread writing the entries of its own run of cells (every thread reads every boid's cell
    /// and keeps its own), so the arrays do not depend on the number of threads. Below
    /// [`SERIAL_BELOW`] kept boids all of it runs on the calling thread, the scatter in two
    /// passes (each boid's entry, then each row copied to it).
    pub fn rebuild_subset(
        &mut self,
        snapshot: &Snapshot,
        cell: f32,
        keep: impl Fn(usize) -> bool + Sync,
    ) {
        self.rebuild_on(snapshot, cell, Some(keep), None, MIN_CELL_BUDGET);
    }

    /// [`Grid::rebuild_subset`] for searches whose result does not depend on the order in which
    /// a query visits the boids (the nearest one, ties by id; a set of pairs): the cells may be
    /// fewer, as few as [`FEW_MIN_CELLS`], so a grid of a handful of boids costs a handful.
    /// (Which cells there are decides that order, so a sum over a query's boids would change
    /// in its last bits.)
    pub fn rebuild_few(
        &mut self,
        snapshot: &Snapshot,
        cell: f32,
        keep: impl Fn(usize) -> bool + Sync,
    ) {
        self.rebuild_on(snapshot, cell, Some(keep), None, FEW_MIN_CELLS);
    }

    /// [`Grid::rebuild_subset`] (every boid with `keep` `None`) on `threads` threads (`None`:
    /// one below [`SERIAL_BELOW`] kept boids, where waking another costs more than the work,
    /// else [`workers`]); the scatter is split into at most that many runs of cells, with at
    /// most `min_cells` cells or four per kept boid, whichever is more. The kept boids are
    /// listed first, so the passes after that read only them: a grid of the doctors or of the
    /// infected no longer walks every boid four times.
    fn rebuild_on(
        &mut self,
        snapshot: &Snapshot,
        cell: f32,
        keep: Option<impl Fn(usize) -> bool + Sync>,
        threads: Option<usize>,
        min_cells: usize,
    ) {
        let space = snapshot.space();
        self.boids = snapshot.len();
        let mut kept = std::mem::take(&mut self.kept);
        kept.clear();
        if let Some(keep) = &keep {
            pick_kept(snapshot.len(), keep, &mut kept);
        }
        let every = keep.is_none();
        let n = if every { snapshot.len() } else { kept.len() };
        // The slot of kept boid `k` (from a slice, whose address the scatter's loop below
        // need not reload after each write).
        let kept_slots = &kept[..];
        let slot_of = move |k: usize| if every { k } else { kept_slots[k] as usize };
        let threads = threads.unwrap_or(if n < SERIAL_BELOW { 1 } else { workers() });
        let budget = (n * MAX_CELLS_PER_BOID).max(min_cells);
        let mut cell = cell.max(1e-3);
        // Columns and rows of cells at least `c` wide: `floor(side / c)`, at least one; the
        // quotients are positive, so `as usize` truncates to the floor (as in `cell_xy`).
        let dims = |c: f32| {
            let whole = |side: f32| ((side / c) as usize).max(1);
            (whole(space.width), whole(space.height))
        };
        let mut fit = dims(cell);
        while fit.0 * fit.1 > budget {
            cell *= 1.5;
            fit = dims(cell);
        }
        self.space = space;
        (self.cols, self.rows) = fit;
        self.cell_w = space.width / self.cols as f32;
        self.cell_h = space.height / self.rows as f32;
        let cells = self.cols * self.rows;

        // Each kept boid's cell, then the count of each cell.
        let mut cell_of = std::mem::take(&mut self.cell_of);
        cell_of.clear();
        cell_of.resize(n, 0);
        let grid = &*self;
        let cells_of = |first: usize, part: &mut [u32]| {
            for (k, c) in part.iter_mut().enumerate() {
                *c = grid.cell_index_of(snapshot.pos[slot_of(first + k)]) as u32;
            }
        };
        if threads == 1 {
            cells_of(0, &mut cell_of);
        } else {
            fill_runs(&mut cell_of, 1, cells_of);
        }
        self.start.clear();
        self.start.resize(cells + 1, 0);
        for &c in &cell_of {
            self.start[c as usize + 1] += 1;
        }
        for c in 0..cells {
            self.start[c + 1] += self.start[c];
        }
        let padded = n + 2 * LANES;
        self.slot.resize(n, 0);
        self.swarm.resize(n, Swarm::Normal);
        // The padding entries on either side: far away, still, of no swarm.
        for (a, pad) in [
            (&mut self.x, FAR),
            (&mut self.y, FAR),
            (&mut self.vx, 0.0),
            (&mut self.vy, 0.0),
            (&mut self.swarm_f, -1.0),
        ] {
            a.resize(padded, 0.0);
            a[..LANES].fill(pad);
            a[n + LANES..].fill(pad);
        }

        // The snapshot's columns as slices here, so the loops read them without reloading
        // each one's address after every write (as fields behind `snapshot`, they did, and the
        // scatter took about a tenth of a 1 000-boid step on 2 threads).
        let rows = Rows {
            pos: &snapshot.pos[..],
            vel: &snapshot.vel[..],
            swarm: &snapshot.swarm[..],
            isolated: &snapshot.isolated[..],
        };
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.start[..cells]);
        let mut entries = Entries {
            slot: self.slot.as_mut_slice(),
            swarm: self.swarm.as_mut_slice(),
            columns: [
                &mut self.x[LANES..n + LANES],
                &mut self.y[LANES..n + LANES],
                &mut self.vx[LANES..n + LANES],
                &mut self.vy[LANES..n + LANES],
                &mut self.swarm_f[LANES..n + LANES],
            ],
        };
        if threads == 1 {
            // On one thread, in two passes: each kept boid's entry (its cell's next free one,
            // written over its cell in `cell_of`), then every row to its entry, with no test of
            // which cells a part writes (about 6 % less time for the snapshot and grid together
            // at 1 000 boids, BENCHMARKS.md, round 3, thirty-first stop).
            for c in cell_of.iter_mut() {
                let at = &mut self.cursor[*c as usize];
                *c = *at;
                *at += 1;
            }
            for (k, &entry) in cell_of.iter().enumerate() {
                entries.put(entry as usize, slot_of(k), &rows);
            }
        } else {
            // The scatter: runs of cells with about the same number of entries, one per thread,
            // each writing the entries of its own cells.
            let bounds = scatter_bounds(&self.start, threads);
            let mut parts = Vec::with_capacity(bounds.len());
            let mut cursor = self.cursor.as_mut_slice();
            for w in bounds.windows(2) {
                let (c0, c1) = (w[0], w[1]);
                let cur;
                (cur, cursor) = std::mem::take(&mut cursor).split_at_mut(c1 - c0);
                let own = entries.split_off((self.start[c1] - self.start[c0]) as usize);
                parts.push((c0..c1, self.start[c0], cur, own));
            }
            for_each_part(parts, |(run, base, cursor, mut own)| {
                let (c0, c1) = (run.start as u32, run.end as u32);
                for (k, &c) in cell_of.iter().enumerate() {
                    if c < c0 || c >= c1 {
                        continue;
                    }
                    let at = &mut cursor[(c - c0) as usize];
                    let entry = (*at - base) as usize;
                    *at += 1;
                    own.put(entry, slot_of(k), &rows);
                }
            });
        }
        self.kept = kept;
        self.cell_of = cell_of;
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

    /// Position of entry `e`, px.
    #[inline]
    pub fn pos(&self, e: usize) -> Vec2 {
        Vec2::new(self.x[e + LANES], self.y[e + LANES])
    }

    /// Velocity of entry `e`, px/s.
    #[inline]
    pub fn vel(&self, e: usize) -> Vec2 {
        Vec2::new(self.vx[e + LANES], self.vy[e + LANES])
    }

    /// The cell of a point: `floor(p / cell)`, clamped to the grid ([`cell_within`]: no call
    /// to libm's `floorf`, which the x86-64 baseline would need, and no saturating
    /// conversion); negative and NaN quotients go to 0.
    #[inline]
    fn cell_xy(&self, p: Vec2) -> (usize, usize) {
        let cx = cell_within(p.x / self.cell_w, self.cols);
        let cy = cell_within(p.y / self.cell_h, self.rows);
        (cx, cy)
    }

    #[inline]
    fn cell_index_of(&self, p: Vec2) -> usize {
        let (cx, cy) = self.cell_xy(p);
        cy * self.cols + cx
    }

    /// The strips of entries a query of `radius` around cell `(cx, cy)` can reach — every cell
    /// once, the cells of a row merged into one strip unless the row crosses the seam — with
    /// their wrap shifts (see [`Neighbourhood`]).
    fn neighbourhood(&self, cx: usize, cy: usize, radius: f32, out: &mut Neighbourhood) {
        out.set(self.space, |strips| {
            self.for_each_strip(cx, cy, radius, |strip| strips.push(strip))
        });
    }

    /// Calls `f` with every strip of entries a query of `radius` around cell `(cx, cy)` can
    /// reach, in order (see [`Grid::neighbourhood`]); returns the axes spanned whole.
    #[inline]
    fn for_each_strip(&self, cx: usize, cy: usize, radius: f32, f: impl FnMut(Strip)) -> BVec2 {
        let wrap = self.space.wraps();
        let xs = span(cx, ceil_usize(radius / self.cell_w), self.cols, wrap);
        let ys = span(cy, ceil_usize(radius / self.cell_h), self.rows, wrap);
        self.strips_of(xs, ys, f)
    }

    /// How many boids a query of `radius` around `centre` examines.
    pub fn candidates(&self, centre: Vec2, radius: f32) -> usize {
        if self.slot.is_empty() || radius <= 0.0 {
            return 0;
        }
        let (cx, cy) = self.cell_xy(self.space.confine(centre, Vec2::ZERO).0);
        let mut near = Neighbourhood::default();
        self.neighbourhood(cx, cy, radius, &mut near);
        near.len()
    }

    /// About how many candidate pairs `sources` boids visit, each scanning every boid of the
    /// cells its neighbourhood of `reach` spans (not only those within `reach`), were the boids
    /// spread evenly over the cells. A neighbourhood is as wide as [`span`] makes one away
    /// from the world's edges.
    fn pairs_within(&self, reach: f32, sources: usize) -> f64 {
        let across = |cell: f32, cells: usize| span(0, ceil_usize(reach / cell), cells, true).len;
        let spanned = across(self.cell_w, self.cols) * across(self.cell_h, self.rows);
        let share = spanned as f64 / (self.cols * self.rows) as f64;
        sources as f64 * self.boids as f64 * share
    }

    /// Maps every boid to a result, cell by cell in parallel, into `out` (one result a boid,
    /// indexed by snapshot slot; every slot is written). A cell's neighbourhood (its strips
    /// within `reach`) is worked out once per part that holds boids of the cell and shared by
    /// those boids (each boid is in its own neighbourhood), so the caller's inner loop is a
    /// straight pass over contiguous arrays. Two stages:
    /// `f(entry, neighbourhood, result)` fills `result`, a slot of a small buffer per part
    /// reset to `S::default()` before each call, with the boid's intermediate result, and
    /// `finish(slots, results, out)` turns a batch of at most [`BATCH`] consecutive entries'
    /// results into theirs (`out[k]` of `results[k]`, the boid of snapshot slot `slots[k]`,
    /// alone: how entries are batched must not change a result). Only the finished results
    /// are kept for every boid, in `out`: each part (a run of entries of about the same
    /// length, in cell order) moves a finished batch straight to its boids' slots. `f` is
    /// called only for the entries `wanted` keeps (their results start as `S::default()` too),
    /// and a cell none of whose entries it keeps has no neighbourhood worked out. The parts are
    /// [`parts_for_pairs`]' (fewer than 256 boids are split too when their neighbourhoods hold
    /// enough candidates, by [`Grid::pairs_within`]'s estimate).
    pub fn map_by_cell<S: Clone + Default, T: Send + Clone + Default + 'static>(
        &self,
        reach: f32,
        wanted: impl Fn(usize) -> bool + Sync,
        f: impl Fn(usize, &Neighbourhood, &mut S) + Sync,
        finish: impl Fn(&[u32], &mut [S], &mut [T]) + Sync,
        out: &mut [T],
    ) {
        let n = self.slot.len();
        let parts = parts_for_pairs(n, || {
            self.pairs_within(reach, (0..n).filter(|&e| wanted(e)).count())
        });
        self.map_by_cell_in(parts, reach, wanted, f, finish, out);
    }

    /// [`Grid::map_by_cell`] in `parts` runs of entries of about the same length each. A run
    /// may start or end inside a cell (each of its runs then works out its neighbourhood), so
    /// that even a grid of a few cells splits evenly; how the entries are split never changes
    /// a result.
    pub(super) fn map_by_cell_in<S: Clone + Default, T: Send + Clone + Default + 'static>(
        &self,
        parts: usize,
        reach: f32,
        wanted: impl Fn(usize) -> bool + Sync,
        f: impl Fn(usize, &Neighbourhood, &mut S) + Sync,
        finish: impl Fn(&[u32], &mut [S], &mut [T]) + Sync,
        out: &mut [T],
    ) {
        let (cells, n) = (self.cols * self.rows, self.slot.len());
        // Every slot of the snapshot is an entry, once (the counting sort places each kept
        // slot once, and all were kept), so the entries' slots are the indices of `out`, each
        // once: the parts below write them concurrently, never two the same.
        assert_eq!(n, self.boids, "map_by_cell needs a grid of every boid");
        assert_eq!(out.len(), n, "map_by_cell writes one result a boid");
        let by_slot = BySlot::new(out);
        let parts = parts.max(1);
        let chunks: Vec<_> = (0..parts)
            .map(|k| n * k / parts..n * (k + 1) / parts)
            .filter(|c| !c.is_empty())
            .collect();
        let (wanted, f, finish, by_slot) = (&wanted, &f, &finish, &by_slot);
        for_each_part(chunks, |chunk| {
            let mut near = Neighbourhood::reusing();
            // The batch holds the results of entries `first..first + len`; `done` their
            // finished results, each then moved to its slot.
            let mut batch = vec![S::default(); BATCH];
            let mut len = 0;
            let mut done = vec![T::default(); BATCH];
            let mut first = chunk.start;
            // Each entry's result starts as a copy of this one (built in place for every
            // entry, the default was written to the stack in pieces and read back whole, which
            // stalled each boid: BENCHMARKS.md, round 3, twenty-fourth stop).
            let blank = S::default();
            let mut flush = |first: usize, batch: &mut [S]| {
                let slots = &self.slot[first..first + batch.len()];
                let done = &mut done[..batch.len()];
                finish(slots, batch, done);
                for (&slot, result) in slots.iter().zip(done) {
                    // SAFETY: `slot` is this entry's alone (see above), and `out` is not
                    // read until every part is done.
                    unsafe { by_slot.put(slot as usize, std::mem::take(result)) };
                }
            };
            // The cell of the run's first entry: the last whose entries start at or before it.
            let c0 = self.start.partition_point(|&s| s as usize <= chunk.start) - 1;
            for c in c0..cells {
                let lo = (self.start[c] as usize).max(chunk.start);
                let hi = (self.start[c + 1] as usize).min(chunk.end);
                if lo >= chunk.end {
                    break;
                }
                let own = lo..hi;
                if own.is_empty() {
                    continue;
                }
                let any = own.clone().any(wanted);
                if any {
                    self.neighbourhood(c % self.cols, c / self.cols, reach, &mut near);
                }
                for e in own {
                    if len == BATCH {
                        flush(first, &mut batch);
                        (first, len) = (e, 0);
                    }
                    batch[len].clone_from(&blank);
                    if any && wanted(e) {
                        f(e, &near, &mut batch[len]);
                    }
                    len += 1;
                }
            }
            flush(first, &mut batch[..len]);
            near.keep_columns();
        });
    }
}

/// A slice that parallel parts write to, each at indices no other part writes: how
/// [`Grid::map_by_cell`] (and [`Grid::map_sources_by_cell`]) puts results straight in slot
/// order from the thread that made them (rather than in cell order, then moved on one thread).
struct BySlot<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: a `BySlot` only hands out writes of `T`s to distinct indices (the caller's promise
// in `put`), which is sending them to the thread that owns the slice.
unsafe impl<T: Send> Sync for BySlot<T> {}

impl<T> BySlot<T> {
    fn new(out: &mut [T]) -> Self {
        Self {
            ptr: out.as_mut_ptr(),
            len: out.len(),
        }
    }

    /// Replaces element `i` with `value`.
    ///
    /// # Safety
    /// No other thread reads or writes element `i` while the slice is shared, and the slice
    /// outlives every call.
    unsafe fn put(&self, i: usize, value: T) {
        assert!(i < self.len, "index {i} out of {}", self.len);
        // SAFETY: in bounds (checked), and element `i` is this caller's alone.
        unsafe { *self.ptr.add(i) = value };
    }
}
