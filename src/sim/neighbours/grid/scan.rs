//! Scanning the grid's cell-ordered arrays eight entries at a time: point queries
//! ([`Grid::query`]) that test a strip's entries with SIMD and work out each
//! hit's offset exactly, and the neighbourhood walk ([`Grid::lanes`]) that hands a caller's
//! sums whole blocks of lanes. No systems live here.

use bevy::prelude::*;

use super::span::{Span, disc_span};
use super::{FAR, Grid, LANES, Neighbourhood, Packed, Strip};
use crate::sim::lanes::{F8, vectorized};

/// Eight neighbourhood entries at a time (see [`Grid::lanes`]): positions, offsets from the
/// centre, velocities and swarm indices as floats. Lanes past the neighbourhood's last entry
/// hold far-away entries: offsets of about 10³⁰ px, whose squares are +∞, and no velocity.
#[derive(Clone, Copy, Debug)]
pub struct Lanes {
    /// Positions' x, px, as the world holds them (not moved to the centre's side of a wrap).
    pub x: F8,
    /// Positions' y, px, likewise.
    pub y: F8,
    /// Minimum-image x offsets, px.
    pub dx: F8,
    /// Minimum-image y offsets, px.
    pub dy: F8,
    /// Velocity x, px/s.
    pub vx: F8,
    /// Velocity y, px/s.
    pub vy: F8,
    /// Swarm index as a float (−1 in the lanes past the neighbourhood's last entry, −2 for an
    /// isolated boid).
    pub swarm: F8,
}

/// Blocks [`Grid::lanes_within`] holds before handing their hits out.
const PENDING: usize = 32;

/// A bit for each lane of a block.
const LANE_BITS: u32 = (1 << LANES) - 1;

/// The blocks of a [`Grid::lanes_within`] scan with lanes kept, in order, whose hits are handed
/// out after the scan, or whenever [`PENDING`] of them wait: with the calls to `hit` off the
/// per-block path, the scan's loop keeps its values in registers. For each block: where it
/// starts in the packed copy, its kept lanes' bits and their squared distances. Also where the
/// hand-out has got to in the neighbourhood's strips: blocks come in packed order, so that
/// walk only moves forward, from one hand-out to the next.
#[derive(Default)]
struct Pending {
    start: [usize; PENDING],
    bits: [u32; PENDING],
    d2: [F8; PENDING],
    len: usize,
    /// Where the hand-out has got to: the strips entered so far, where the last of them ends
    /// in the packed copy, and what turns a place in it into an entry (`entry = m + base`,
    /// wrapping).
    strips: usize,
    end: usize,
    base: usize,
}

impl Pending {
    #[inline(always)]
    fn push(&mut self, start: usize, bits: u32, d2: F8) {
        self.start[self.len] = start;
        self.bits[self.len] = bits;
        self.d2[self.len] = d2;
        self.len += 1;
    }

    /// Calls `hit(entry, d2)` or `hit_entry(entry)` (see [`Grid::lanes_within`]) for every
    /// kept lane of the blocks held, in order, and empties them.
    #[inline(always)]
    fn hand_out(
        &mut self,
        hood: &Neighbourhood,
        hit: &mut impl FnMut(usize, f32),
        hit_entry: &mut impl FnMut(usize),
    ) {
        for b in 0..self.len {
            let full = self.bits[b] & LANE_BITS;
            let entry_only = (self.bits[b] >> LANES) & !full;
            let mut bits = full | entry_only;
            while bits != 0 {
                let k = bits.trailing_zeros() as usize;
                let m = self.start[b] + k;
                // Far-away lanes never pass, so `m` is an entry of some strip.
                while m >= self.end {
                    let strip = &hood.strips[self.strips];
                    self.base = strip.lo.wrapping_sub(self.end);
                    self.end += strip.hi - strip.lo;
                    self.strips += 1;
                }
                let entry = m.wrapping_add(self.base);
                if entry_only & (1 << k) != 0 {
                    hit_entry(entry);
                } else {
                    hit(entry, self.d2[b].0[k]);
                }
                bits &= bits - 1;
            }
        }
        self.len = 0;
    }
}

impl Grid {
    /// Visits every boid within `radius` of `centre` (see [`super::NeighbourIndex`]). Only the
    /// cells the disc overlaps are scanned — a contact radius much smaller than the cells (which
    /// are sized for the largest flocking radius) reads one or two cells per axis, not three.
    pub fn query(&self, centre: Vec2, radius: f32, mut visit: impl FnMut(usize, Vec2)) {
        let Some((xs, ys, _)) = self.disc_spans(centre, radius) else {
            return;
        };
        let near = Neighbourhood::of_query(self.space, BVec2::new(xs.full, ys.full));
        let r2 = radius * radius;
        self.strips_of(xs, ys, |strip| {
            self.for_each_hit(&near, &strip, centre, r2, |e, offset| {
                visit(self.slot[e] as usize, offset)
            });
        });
    }

    /// How many boids are within `radius` of `centre`, up to `cap`: the visits of
    /// [`Grid::query`], counted eight entries at a time with nothing done per hit, or `cap` if
    /// there are at least as many (the strips after the one that reaches it are not scanned;
    /// the row of the centre's cell, where a disc has most of its hits, is scanned first). The
    /// lanes' test is the query's own (one block loop, [`Grid::for_each_block`], serves both).
    pub fn count_within(&self, centre: Vec2, radius: f32, cap: usize) -> usize {
        let Some((xs, ys, row)) = self.disc_spans(centre, radius) else {
            return 0;
        };
        let wrap_each = BVec2::new(xs.full, ys.full);
        let r2 = radius * radius;
        let mut n = 0;
        vectorized!({
            self.strips_row_first(xs, ys, row, |strip| {
                if n < cap {
                    self.for_each_block(
                        wrap_each,
                        &strip,
                        centre,
                        r2,
                        #[inline(always)]
                        |_, bits| n += bits.count_ones() as usize,
                    )
                }
            })
        });
        n.min(cap)
    }

    /// The cells along x and along y that a disc of `radius` around `centre` overlaps, and the
    /// row of the centre's cell; `None` where no boid can be within it (an empty grid, a radius
    /// of 0 or less). Inlined into each query: as a call, its spans came back through memory.
    #[inline(always)]
    fn disc_spans(&self, centre: Vec2, radius: f32) -> Option<(Span, Span, usize)> {
        if self.slot.is_empty() || radius <= 0.0 {
            return None;
        }
        let centre_in = self.space.confine(centre, Vec2::ZERO).0;
        let (cx, cy) = self.cell_xy(centre_in);
        let wrap = self.space.wraps();
        Some((
            disc_span(centre_in.x, cx, radius, self.cell_w, self.cols, wrap),
            disc_span(centre_in.y, cy, radius, self.cell_h, self.rows, wrap),
            cy,
        ))
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
            self.for_each_block(
                near.wrap_each,
                strip,
                centre,
                r2,
                #[inline(always)]
                |k, mut bits| {
                    while bits != 0 {
                        let e = k + bits.trailing_zeros() as usize;
                        let offset = near.offset(self, strip, e, centre);
                        // The scalar test decides (it is the shared predicate; the lanes'
                        // test, the same bit for bit, only skips the misses eight at a time).
                        if offset.length_squared() < r2 {
                            hit(e, offset);
                        }
                        bits &= bits - 1;
                    }
                },
            )
        })
    }

    /// Calls `block(k, bits)` for each block of eight entries `k..k + 8` of `strip`, in order,
    /// with bit `i` of `bits` set where entry `k + i` is in the strip and its minimum-image
    /// offset from `centre` (wrapped on its own along the axes of `wrap_each`) is shorter than
    /// `sqrt(r2)`. Always inlined, into the caller's `vectorized!` block.
    #[inline(always)]
    fn for_each_block(
        &self,
        wrap_each: BVec2,
        strip: &Strip,
        centre: Vec2,
        r2: f32,
        mut block: impl FnMut(usize, u32),
    ) {
        let wrap = |d: F8, on: bool, l: f32| if on { d.wrap_axis(l) } else { d };
        let (cx, cy) = (F8::splat(centre.x), F8::splat(centre.y));
        let (sx, sy) = (F8::splat(strip.sx), F8::splat(strip.sy));
        let r2v = F8::splat(r2);
        let mut k = strip.lo;
        while k < strip.hi {
            let x = F8::load(&self.x, k + LANES);
            let y = F8::load(&self.y, k + LANES);
            let dx = wrap((x - cx) + sx, wrap_each.x, self.space.width);
            let dy = wrap((y - cy) + sy, wrap_each.y, self.space.height);
            let bits = (dx * dx + dy * dy).cmp_lt(r2v).move_mask();
            // Lanes past the strip's end belong to the next cells.
            let valid = (strip.hi - k).min(LANES);
            block(k, bits & ((1u32 << valid) - 1));
            k += LANES;
        }
    }

    /// Visits every entry of a neighbourhood eight at a time, as offsets from `centre` and
    /// velocities ([`Lanes`]). An entry goes to lane `m mod 8`, `m` its position in the
    /// neighbourhood's strips taken one after another, so every lane sees the same entries in
    /// the same order however the strips fall (sums over lanes, reduced in a fixed order, are
    /// then the same on every machine). The entries are read in whole blocks from the
    /// neighbourhood's packed copy ([`Packed`]), made by the first call after the strips
    /// change and read by every boid of the cell. The lanes past the last entry are far away
    /// (see [`Lanes`]): a weight of 0 there adds ±0 to a sum, which leaves it as it is (a sum
    /// that starts at +0 is never −0). The boid at `centre` (if it is an entry) is visited too,
    /// at offset exactly zero. Always inlined: the caller runs it inside `vectorized!` with
    /// `visit` (see [`crate::sim::lanes`]). `WX` / `WY` must be the neighbourhood's
    /// `wrap_each` (the caller picks the loop for its case, so the loop does not test it).
    #[inline(always)]
    pub fn lanes<const WX: bool, const WY: bool>(
        &self,
        hood: &Neighbourhood,
        centre: Vec2,
        mut visit: impl FnMut(&Lanes),
    ) {
        debug_assert_eq!(hood.wrap_each, BVec2::new(WX, WY));
        let packed = hood.packed(self);
        let (cx, cy) = (F8::splat(centre.x), F8::splat(centre.y));
        let [x, y, vx, vy, swarm, sx, sy] =
            (packed.columns.each_ref()).map(|a| a[..packed.len].as_chunks::<LANES>().0);
        let columns = x.iter().zip(y).zip(vx).zip(vy).zip(swarm).zip(sx).zip(sy);
        for ((((((x, y), vx), vy), swarm), sx), sy) in columns {
            let dx = (F8(*x) - cx) + F8(*sx);
            let dy = (F8(*y) - cy) + F8(*sy);
            visit(&Lanes {
                x: F8(*x),
                y: F8(*y),
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
            });
        }
    }

    /// Calls `hit(entry, d2)` for every entry of a neighbourhood whose squared minimum-image
    /// distance `d2` from `centre` is under `r2` and whose lane `keep` keeps, strip by strip
    /// and in entry order within each: the hits, their order and the squared lengths of their
    /// offsets of [`Grid::for_each_hit`] over the neighbourhood's strips (of those kept), found
    /// in its packed copy eight at a time (the offsets as [`Grid::lanes`] gives them, which
    /// differ from a query's only in the sign of a zero). `keep(lanes, d2)` sees each block
    /// first and returns a bit per lane (bit `k` for lane `k`; a set bit keeps it): a filter
    /// on what the lanes hold (their swarm), tested eight at a time rather than per hit. A
    /// lane whose bit `8 + k` is set instead (and bit `k` not) goes to `hit_entry(entry)`,
    /// in the same order: a hit that needs nothing but where it is in the grid. The hits are
    /// handed out in batches after the blocks they come from have been seen ([`Pending`]), so
    /// `keep` must not depend on what `hit` or `hit_entry` did.
    /// Always inlined, for the same reason as [`Grid::lanes`]; the closures handed in should
    /// be too (`#[inline(always)]` on each): as calls, each hit paid for its arguments' trip
    /// through memory.
    #[inline(always)]
    pub fn lanes_within<const WX: bool, const WY: bool>(
        &self,
        hood: &Neighbourhood,
        centre: Vec2,
        r2: f32,
        mut keep: impl FnMut(&Lanes, F8) -> u32,
        mut hit: impl FnMut(usize, f32),
        mut hit_entry: impl FnMut(usize),
    ) {
        let r2v = F8::splat(r2);
        let mut pending = Pending::default();
        let mut block = 0;
        self.lanes::<WX, WY>(
            hood,
            centre,
            #[inline(always)]
            |l| {
                let d2 = l.dx * l.dx + l.dy * l.dy;
                let within = d2.cmp_lt(r2v).move_mask();
                if within != 0 {
                    let kept = keep(l, d2) & (within | within << LANES);
                    if kept != 0 {
                        pending.push(block, kept, d2);
                        if pending.len == PENDING {
                            pending.hand_out(hood, &mut hit, &mut hit_entry);
                        }
                    }
                }
                block += LANES;
            },
        );
        pending.hand_out(hood, &mut hit, &mut hit_entry);
    }

    /// Copies the entries of `strips`, one after another, into `packed` (see [`Packed`]).
    /// Whole blocks of eight are copied, so a strip's last block may carry up to seven entries
    /// past its end (the grid's later entries or its back padding); the next strip's copy
    /// overwrites them, and after the last come the far-away entries. The columns only grow,
    /// so a cell's copy allocates nothing once they are as long as the longest before.
    pub(super) fn pack(&self, strips: &[Strip], packed: &mut Packed) {
        let len: usize = strips.iter().map(|s| s.hi - s.lo).sum();
        let whole = len.next_multiple_of(LANES);
        // Room for the last strip's whole last block.
        let room = whole + LANES;
        for c in &mut packed.columns {
            if c.len() < room {
                c.resize(room, 0.0);
            }
        }
        let [x, y, vx, vy, swarm, sx, sy] = &mut packed.columns;
        let mut at = 0;
        for strip in strips {
            let (n, from) = (strip.hi - strip.lo, strip.lo + LANES);
            let copied = n.next_multiple_of(LANES);
            let (src, to) = (from..from + copied, at..at + copied);
            // The five columns copied and the two shifts filled in one loop, block by block: a
            // strip is only a few blocks, and a copy call per column cost more than the
            // copying. A strip's last block may run past its end (see above).
            let [xs, ys, vxs, vys, sws] = [&self.x, &self.y, &self.vx, &self.vy, &self.swarm_f]
                .map(|c| c[src.clone()].as_chunks::<LANES>().0);
            let [xd, yd, vxd, vyd, swd, sxd, syd] = [
                &mut *x,
                &mut *y,
                &mut *vx,
                &mut *vy,
                &mut *swarm,
                &mut *sx,
                &mut *sy,
            ]
            .map(|c| c[to.clone()].as_chunks_mut::<LANES>().0);
            for b in 0..xs.len() {
                xd[b] = xs[b];
                yd[b] = ys[b];
                vxd[b] = vxs[b];
                vyd[b] = vys[b];
                swd[b] = sws[b];
                sxd[b] = [strip.sx; LANES];
                syd[b] = [strip.sy; LANES];
            }
            at += n;
        }
        // Far away, still, of no swarm, unshifted: as the grid's own padding (one whole block,
        // of which the lanes up to `whole` count).
        for (c, pad) in packed
            .columns
            .iter_mut()
            .zip([FAR, FAR, 0.0, 0.0, -1.0, 0.0, 0.0])
        {
            c[len..len + LANES].copy_from_slice(&[pad; LANES]);
        }
        packed.len = whole;
    }
}
