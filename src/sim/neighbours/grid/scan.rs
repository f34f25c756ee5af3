//! Scanning the grid's cell-ordered arrays eight entries at a time: point queries
//! ([`Grid::query`]) that test a strip's entries with SIMD and work out each
//! hit's offset exactly, and the neighbourhood walk ([`Grid::lanes`]) that hands a caller's
//! sums whole blocks of lanes. No systems live here.

use bevy::prelude::*;

use super::span::disc_span;
use super::{Grid, LANES, Neighbourhood, Strip};
use crate::sim::lanes::{F8, vectorized};

/// Eight lanes of +∞, eight of +0, eight of +∞: the windows [`lane_off`] reads.
static OFF: [f32; 3 * LANES] = {
    let mut m = [f32::INFINITY; 3 * LANES];
    let mut i = LANES;
    while i < 2 * LANES {
        m[i] = 0.0;
        i += 1;
    }
    m
};

/// Eight neighbourhood entries at a time (see [`Grid::lanes`]): offsets from the centre,
/// velocities, swarm indices as floats, and which lanes hold an entry, as a distance penalty.
#[derive(Clone, Copy, Debug)]
pub struct Lanes {
    /// Minimum-image x offsets, px.
    pub dx: F8,
    /// Minimum-image y offsets, px.
    pub dy: F8,
    /// Velocity x, px/s.
    pub vx: F8,
    /// Velocity y, px/s.
    pub vy: F8,
    /// Swarm index as a float.
    pub swarm: F8,
    /// +0 where the lane holds an entry of the neighbourhood, +∞ elsewhere, px²: added to a
    /// lane's squared distance it leaves an entry's unchanged (a square is never −0) and puts
    /// every other lane beyond any radius, so a scan needs no mask of its own. (A float mask
    /// ANDed into every weight made LLVM split the AVX-512 code into per-lane compares.)
    pub off: F8,
}

impl Grid {
    /// Visits every boid within `radius` of `centre` (see [`super::NeighbourIndex`]). Only the
    /// cells the disc overlaps are scanned — a contact radius much smaller than the cells (which
    /// are sized for the largest flocking radius) reads one or two cells per axis, not three.
    pub fn query(&self, centre: Vec2, radius: f32, mut visit: impl FnMut(usize, Vec2)) {
        if self.slot.is_empty() || radius <= 0.0 {
            return;
        }
        let centre_in = self.space.confine(centre, Vec2::ZERO).0;
        let (cx, cy) = self.cell_xy(centre_in);
        let wrap = self.space.wraps();
        let xs = disc_span(centre_in.x, cx, radius, self.cell_w, self.cols, wrap);
        let ys = disc_span(centre_in.y, cy, radius, self.cell_h, self.rows, wrap);
        let near = Neighbourhood {
            strips: Vec::new(),
            wrap_each: BVec2::new(xs.full, ys.full),
            space: self.space,
        };
        let r2 = radius * radius;
        self.strips_of(xs, ys, |strip| {
            self.for_each_hit(&near, &strip, centre, r2, |e, offset| {
                visit(self.slot[e] as usize, offset)
            });
        });
    }

    /// Calls `hit(entry, offset)`, in entry order, for every entry of `strip` whose minimum-image
    /// offset from `centre` is shorter than `sqrt(r2)`. Eight entries are tested at a time with
    /// SIMD; each hit's offset is then worked out exactly as [`Neighbourhood::offset`] does, so
    /// the hits and their offsets are those of a one-by-one scan.
    #[inline]
    pub(in crate::sim::neighbours) fn for_each_hit(
        &self,
        near: &Neighbourhood,
        strip: &Strip,
        centre: Vec2,
        r2: f32,
        mut hit: impl FnMut(usize, Vec2),
    ) {
        vectorized!({
            let wrap = |d: F8, on: bool, l: f32| if on { d.wrap_axis(l) } else { d };
            let (cx, cy) = (F8::splat(centre.x), F8::splat(centre.y));
            let (sx, sy) = (F8::splat(strip.sx), F8::splat(strip.sy));
            let r2v = F8::splat(r2);
            let mut k = strip.lo;
            while k < strip.hi {
                let x = F8::load(&self.x, k + LANES);
                let y = F8::load(&self.y, k + LANES);
                let dx = wrap((x - cx) + sx, near.wrap_each.x, self.space.width);
                let dy = wrap((y - cy) + sy, near.wrap_each.y, self.space.height);
                let mut bits = (dx * dx + dy * dy).cmp_lt(r2v).move_mask();
                // Lanes past the strip's end belong to the next cells.
                let valid = (strip.hi - k).min(LANES);
                bits &= (1u32 << valid) - 1;
                while bits != 0 {
                    let e = k + bits.trailing_zeros() as usize;
                    let offset = near.offset(self, strip, e, centre);
                    // The scalar test decides (it is the shared predicate; the SIMD one only
                    // skips the clear misses).
                    if offset.length_squared() < r2 {
                        hit(e, offset);
                    }
                    bits &= bits - 1;
                }
                k += LANES;
            }
        })
    }

    /// Visits every entry of a neighbourhood eight at a time, as offsets from `centre` and
    /// velocities ([`Lanes`]). An entry goes to lane `m mod 8`, `m` its position in the
    /// neighbourhood's strips taken one after another, so every lane sees the same entries in
    /// the same order however the strips fall (sums over lanes, reduced in a fixed order, are
    /// then the same on every machine). Entries outside the strips have `off` infinite; the boid
    /// at `centre` (if it is an entry) is visited too, at offset exactly zero. Always inlined:
    /// the caller runs it inside `vectorized!` with `visit` (see [`crate::sim::lanes`]).
    /// `WX` / `WY` must be the neighbourhood's `wrap_each` (the caller picks the loop for its
    /// case, so the loop does not test it).
    #[inline(always)]
    pub fn lanes<'a, const WX: bool, const WY: bool>(
        &'a self,
        hood: &Neighbourhood,
        centre: Vec2,
        mut visit: impl FnMut(&Lanes),
    ) {
        debug_assert_eq!(hood.wrap_each, BVec2::new(WX, WY));
        let (cx, cy) = (F8::splat(centre.x), F8::splat(centre.y));
        // Lane of the next entry.
        let mut lane = 0usize;
        for strip in &hood.strips {
            // The strip's blocks of eight: the first reads `lane` entries before the strip (the
            // arrays' front padding, or earlier entries) so that its first entry lands in
            // `lane`; the last may read up to seven past its end (later entries, or the back
            // padding). Each array is sliced to those blocks once, so the loop checks no bounds on
            // them.
            let first = strip.lo + LANES - lane;
            let blocks = (strip.hi - strip.lo + lane).div_ceil(LANES);
            let window = first..first + blocks * LANES;
            let (sx, sy) = (F8::splat(strip.sx), F8::splat(strip.sy));
            let blocks_of = |a: &'a [f32]| a[window.clone()].as_chunks::<LANES>().0;
            let columns = blocks_of(&self.x)
                .iter()
                .zip(blocks_of(&self.y))
                .zip(blocks_of(&self.vx))
                .zip(blocks_of(&self.vy))
                .zip(blocks_of(&self.swarm_f));
            // Entries of the strip are lanes `lane..` of the first block and `..end` of the last.
            let end = strip.hi - strip.lo + lane - (blocks - 1) * LANES;
            for (b, ((((x, y), vx), vy), swarm)) in columns.enumerate() {
                let from = if b == 0 { lane } else { 0 };
                let to = if b + 1 == blocks { end } else { LANES };
                let dx = (F8(*x) - cx) + sx;
                let dy = (F8(*y) - cy) + sy;
                visit(&Lanes {
                    dx: if WX {
                        dx.wrap_axis(self.space.width)
                    } else {
                        dx
                    },
                    dy: if WY {
                        dy.wrap_axis(self.space.height)
                    } else {
                        dy
                    },
                    vx: F8(*vx),
                    vy: F8(*vy),
                    swarm: F8(*swarm),
                    off: lane_off(from, to),
                });
            }
            lane = (lane + (strip.hi - strip.lo)) % LANES;
        }
    }
}

/// +0 in lanes `from..to` (`from ≤ to ≤ 8`), +∞ elsewhere: the sum of two windows of
/// [`OFF`], +∞ before `from` and +∞ from `to` on.
#[inline(always)]
pub(super) fn lane_off(from: usize, to: usize) -> F8 {
    debug_assert!(from <= to && to <= LANES);
    F8::load(&OFF, LANES - from) + F8::load(&OFF, 2 * LANES - to)
}
