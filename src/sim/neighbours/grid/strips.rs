//! The strips of a grid's entries that a block of cells covers: a row's cells one after
//! another in the cell-ordered arrays, cut where the row crosses a seam. Queries and
//! neighbourhoods walk them; no systems live here.

use bevy::prelude::*;

use super::span::Span;
use super::{Grid, Strip};

impl Grid {
    /// Calls `f` with the strips of entries of the cells `xs` × `ys`, row by row; returns the
    /// axes spanned whole.
    #[inline]
    pub(super) fn strips_of(&self, xs: Span, ys: Span, mut f: impl FnMut(Strip)) -> BVec2 {
        for (row, sy) in ys.iter_with_shift(self.space.height) {
            self.row_strips(xs, row, sy, &mut f);
        }
        BVec2::new(xs.full, ys.full)
    }

    /// The strips of [`Grid::strips_of`], those of row `first` (when `ys` has it) before the
    /// others, which keep their order: for a count that may stop early, the centre's row first.
    #[inline]
    pub(super) fn strips_row_first(
        &self,
        xs: Span,
        ys: Span,
        first: usize,
        mut f: impl FnMut(Strip),
    ) {
        let rows = || ys.iter_with_shift(self.space.height);
        for (row, sy) in rows().filter(|&(row, _)| row == first) {
            self.row_strips(xs, row, sy, &mut f);
        }
        for (row, sy) in rows().filter(|&(row, _)| row != first) {
            self.row_strips(xs, row, sy, &mut f);
        }
    }

    /// Calls `f` with the strips of entries of the cells `xs` of `row`, whose points are shifted
    /// by `sy` along y.
    #[inline(always)]
    fn row_strips(&self, xs: Span, row: usize, sy: f32, f: &mut impl FnMut(Strip)) {
        let base = row * self.cols;
        // The columns split into at most three pieces: across the low seam, in the world,
        // across the high seam; each piece is a contiguous strip of entries.
        for (first, last, sx) in xs.pieces(self.space.width) {
            let lo = self.start[base + first] as usize;
            let hi = self.start[base + last + 1] as usize;
            if lo < hi {
                f(Strip { lo, hi, sx, sy });
            }
        }
    }
}
