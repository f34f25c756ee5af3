//! The uniform-grid backend for large populations. Cells are at least the configured query radius
//! wide; boids are counting-sorted into cell order and their position, velocity and swarm copied
//! into cell-ordered arrays, one per coordinate (structure of arrays). Cells are numbered row by
//! row, so the cells of one row of a neighbourhood are contiguous in those arrays: a query scans
//! a few contiguous [`Strip`]s (one per row, split where a row crosses the seam) in place, and
//! the steering pass, which walks the grid cell by cell, copies a cell's strips one after
//! another once and scans that copy for each of the cell's boids. Candidates are tested with
//! the shared minimum-image predicate, so the sets equal brute force.

use bevy::prelude::*;

mod by_cell;
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
use self::scatter::{Entries, Rows};
use self::span::{ceil_usize, cell_within, span};
use super::Snapshot;
use crate::sim::lanes::vectorized;
use crate::sim::parallel::{SERIAL_BELOW, even_runs, fill_runs, for_each_part, workers};
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
/// Most boids whose results [`Grid::map_by_cell`] stages when it is split between threads
/// (from [`SERIAL_BELOW`] boids). Written straight to their slots, the parts' results land in
/// cache lines that the other threads write too (slots are in id order, entries in cell
/// order), and on the 2-core Xeon of BENCHMARKS.md (round 3, thirty-seventh stop) moving them
/// cost more on two threads than on one. Staged, they take a second array of results: in
/// `city.toml` (1.4 million boids) that raised the peak memory by 8 MB, while its step took no
/// less time. Below [`SERIAL_BELOW`] their cache lines are few, and staging adds a loop: staged
/// there too, `matrix/B2_D2.toml` (130 boids) took 636.6 ms against 614.1 (medians of 16 runs;
/// BENCHMARKS.md, round 3, thirty-eighth stop).
pub const STAGED_MAX: usize = 1 << 20;
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
    /// The entry of each kept boid (in the order of `kept`; of each slot, when every boid is
    /// kept).
    entry_of: Vec<u32>,
    /// Each cell's next free entry, while the grid is rebuilt.
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
            entry_of,
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
        self.entry_of.clone_from(entry_of);
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
    /// in parallel; counted, prefix-summed and each boid's entry found on one thread; then
    /// scattered in parallel, each thread writing its own run of entries (every thread reads
    /// every boid's entry and keeps its own), so the arrays do not depend on the number of
    /// threads. Below [`SERIAL_BELOW`] kept boids all of it runs on the calling thread.
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
    /// else [`workers`]); the scatter is split into at most that many runs of entries. The grid
    /// has at most `min_cells` cells or four per kept boid, whichever is more. The kept boids are
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

        // Each kept boid's cell (in `entry_of` until the pass below makes it the boid's entry),
        // then the count of each cell.
        let mut entry_of = std::mem::take(&mut self.entry_of);
        entry_of.clear();
        entry_of.resize(n, 0);
        let grid = &*self;
        // At the CPU's vector width. With every boid kept the positions are read in a row, so
        // that loop takes eight boids at a time on the AVX-512 path and four on AVX2 (as built
        // here), two divisions each; every cell is the one a boid at a time gets (a division
        // is rounded once at any width, and the clamp and the truncation are exact). One at a
        // time, the loop held about 30 % of `Grid::rebuild_on`'s own `perf` samples in a
        // 1 000-boid rebuild on one thread (BENCHMARKS.md, round 3, thirty-eighth stop).
        let cells_of = |first: usize, part: &mut [u32]| {
            vectorized!({
                if every {
                    let pos = &snapshot.pos[first..first + part.len()];
                    for (c, &p) in part.iter_mut().zip(pos) {
                        *c = grid.cell_index_of(p) as u32;
                    }
                } else {
                    for (k, c) in part.iter_mut().enumerate() {
                        *c = grid.cell_index_of(snapshot.pos[slot_of(first + k)]) as u32;
                    }
                }
            })
        };
        if threads == 1 {
            cells_of(0, &mut entry_of);
        } else {
            fill_runs(&mut entry_of, 1, cells_of);
        }
        self.start.clear();
        self.start.resize(cells + 1, 0);
        for &c in &entry_of {
            self.start[c as usize + 1] += 1;
        }
        for c in 0..cells {
            self.start[c + 1] += self.start[c];
        }
        // Each kept boid's entry, its cell's next free one (so a cell keeps its boids in slot
        // order), written over its cell: on one thread, in slot order (threads writing the
        // entries of their own cells, as the scatter below once found them, would share the
        // cache lines of `entry_of`). `map_by_cell` finds a boid's staged result by it.
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.start[..cells]);
        for c in entry_of.iter_mut() {
            let at = &mut self.cursor[*c as usize];
            *c = *at;
            *at += 1;
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
            for (k, &entry) in entry_of.iter().enumerate() {
                entries.put(entry as usize, slot_of(k), &rows);
            }
        } else {
            // The scatter: a run of entries of about the same length per thread, each thread
            // writing its own entries (every thread reads every boid's entry and keeps its own).
            let parts: Vec<_> = even_runs(n, threads)
                .into_iter()
                .map(|run| (run.clone(), entries.split_off(run.len())))
                .collect();
            for_each_part(parts, |(run, mut own)| {
                for (k, &entry) in entry_of.iter().enumerate() {
                    let entry = entry as usize;
                    if run.contains(&entry) {
                        own.put(entry - run.start, slot_of(k), &rows);
                    }
                }
            });
        }
        self.kept = kept;
        self.entry_of = entry_of;
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
}
