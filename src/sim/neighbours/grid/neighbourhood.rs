//! A query's neighbourhood on the grid: the contiguous strips of entries it reaches, with their
//! wrap shifts, and the packed copy of their entries that the flocking pass scans in whole
//! blocks. No systems live here.

use std::cell::{Cell, UnsafeCell};

use bevy::prelude::*;

use super::Grid;
use crate::sim::space::{Space, wrap_axis};

/// A contiguous strip of grid entries within a query's reach, with the shift that turns
/// `p_j − centre` into the minimum-image offset for every entry of the strip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strip {
    /// First entry.
    pub lo: usize,
    /// One past the last entry.
    pub hi: usize,
    /// Shift to add to `x_j − x`, px (±W for cells reached across the seam).
    pub sx: f32,
    /// Shift to add to `y_j − y`, px.
    pub sy: f32,
}

/// The strips of a neighbourhood, and per axis whether it spans the whole wrapped axis: there no
/// single shift fits (the shifts are zero) and each candidate's difference is wrapped on its own.
#[derive(Debug, Default)]
pub struct Neighbourhood {
    /// The strips, each entry once.
    pub strips: Vec<Strip>,
    /// Wrap each candidate's difference along x / y.
    pub wrap_each: BVec2,
    pub(super) space: Space,
    /// Whether `columns` holds the packed copy of the current strips.
    packed: Cell<bool>,
    /// The strips' entries copied one after another, made by the first [`Grid::lanes`] after
    /// the strips change and shared by every boid of the cell (see [`Packed`]). Written only
    /// while `packed` is clear, which no reference into it outlives (see
    /// [`Neighbourhood::packed`]): a cell's copy then costs no moves of the columns and no
    /// trip to the thread's spare ones.
    columns: UnsafeCell<Packed>,
}

/// A neighbourhood's entries in one run of whole blocks of eight ([`LANES`](super::LANES)):
/// entry `m` of the strips taken one after another at index `m`, with its strip's shift, then
/// far-away entries up to the next multiple of eight. A cell's boids each scan it in `len / 8`
/// blocks, where a scan of the strips in place would take a partial block at both ends of each
/// strip, and work out each strip's blocks again for every boid: the flocking pass of a
/// 1 000-boid run takes 12 % fewer instructions, the copies included, and that of
/// `matrix/B2_D2` 16 %.
#[derive(Debug, Default)]
pub(super) struct Packed {
    /// Entries and far-away ones after them: a multiple of eight.
    pub(super) len: usize,
    /// x, y, vx, vy, swarm (as in the grid) and the strip's shifts sx, sy of each entry; as
    /// long as the longest copy yet, which may be longer than `len`.
    pub(super) columns: [Vec<f32>; 7],
}

thread_local! {
    /// The columns of this thread's last packed copy, for its next one: a step's parts then
    /// allocate none (at 1 000 boids on 2 threads, 16 parts a step each allocated seven
    /// columns and grew them).
    pub(super) static COLUMNS: Cell<Packed> = Cell::new(Packed::default());
}

impl Neighbourhood {
    /// An empty neighbourhood that packs into the columns this thread's last one left
    /// ([`COLUMNS`]; give them back with [`Neighbourhood::keep_columns`]).
    pub(super) fn reusing() -> Self {
        Self {
            columns: UnsafeCell::new(COLUMNS.take()),
            ..default()
        }
    }

    /// A neighbourhood with no strips of its own, for a query's offsets
    /// ([`Neighbourhood::offset`]): `wrap_each` on `space`.
    pub(super) fn of_query(space: Space, wrap_each: BVec2) -> Self {
        Self {
            space,
            wrap_each,
            ..default()
        }
    }

    /// Leaves the packed columns to this thread's next neighbourhood ([`COLUMNS`]).
    pub(super) fn keep_columns(&mut self) {
        self.packed.set(false);
        COLUMNS.set(std::mem::take(self.columns.get_mut()));
    }

    /// Whether the packed copy of the current strips has been made.
    #[cfg(test)]
    pub(super) fn is_packed(&self) -> bool {
        self.packed.get()
    }

    /// Sets the strips from `fill` (called with the list, cleared) and the world.
    pub(super) fn set(&mut self, space: Space, fill: impl FnOnce(&mut Vec<Strip>) -> BVec2) {
        self.strips.clear();
        self.space = space;
        self.wrap_each = fill(&mut self.strips);
        self.packed.set(false);
    }

    /// The world.
    pub fn space(&self) -> Space {
        self.space
    }

    /// The packed copy of the strips' entries of `grid` (see [`Packed`]), made if the strips
    /// changed since the last.
    #[inline]
    pub(super) fn packed(&self, grid: &Grid) -> &Packed {
        if !self.packed.get() {
            // SAFETY: the only references into `columns` are the ones handed out below, and
            // only while `packed` is set; it is cleared only through `&mut self`, which ends
            // them all, so none is alive here (and the cell is not `Sync`: no other thread).
            grid.pack(&self.strips, unsafe { &mut *self.columns.get() });
            self.packed.set(true);
        }
        // SAFETY: no `&mut` into `columns` is alive: the only one is the copy above, done.
        unsafe { &*self.columns.get() }
    }

    /// Number of entries in reach.
    pub fn len(&self) -> usize {
        self.strips.iter().map(|r| r.hi - r.lo).sum()
    }

    /// Whether nothing is in reach.
    pub fn is_empty(&self) -> bool {
        self.strips.iter().all(|r| r.hi == r.lo)
    }

    /// Minimum-image offset from `centre` to entry `k` of `strip` of `grid`: `(p_k − centre)` plus
    /// the strip's shift, or the wrapped difference where the neighbourhood spans the whole axis —
    /// bit for bit what `Space::displacement` gives for any point within the query radius.
    #[inline]
    pub fn offset(&self, grid: &Grid, strip: &Strip, k: usize, centre: Vec2) -> Vec2 {
        let p = grid.pos(k);
        let dx = (p.x - centre.x) + strip.sx;
        let dy = (p.y - centre.y) + strip.sy;
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
