//! Which cells a query reaches along one axis: a [`Span`] of cell indices around a cell,
//! wrapped around a torus (with the shift of points reached across the seam) or clipped at
//! walls. No systems live here.

/// The distinct cell indices within `k` of `c` along an axis of `n` cells.
#[derive(Clone, Copy)]
pub(super) struct Span {
    pub(super) first: isize,
    pub(super) len: usize,
    pub(super) n: usize,
    /// Covers every cell of a wrapped axis.
    pub(super) full: bool,
}

impl Span {
    #[cfg(test)]
    pub(super) fn iter(self) -> impl Iterator<Item = usize> {
        (0..self.len).map(move |i| (self.first + i as isize).rem_euclid(self.n as isize) as usize)
    }

    /// Cell indices with the shift of their points: −L for cells reached across the low seam
    /// (their points sit near L), +L across the high seam.
    pub(super) fn iter_with_shift(self, l: f32) -> impl Iterator<Item = (usize, f32)> {
        (0..self.len).map(move |i| {
            let raw = self.first + i as isize;
            (self.wrap(raw), self.shift(raw, l))
        })
    }

    /// The cell index of a raw one, `raw mod n`: a span's raw indices lie within one axis'
    /// length of the axis (`−n ≤ raw < 2n`), so one addition or subtraction does, where
    /// `rem_euclid` divides (several divisions a neighbourhood).
    #[inline]
    fn wrap(self, raw: isize) -> usize {
        let n = self.n as isize;
        debug_assert!(
            (-n..2 * n).contains(&raw),
            "{raw} is beyond one wrap of {n}"
        );
        (if raw < 0 {
            raw + n
        } else if raw >= n {
            raw - n
        } else {
            raw
        }) as usize
    }

    fn shift(self, raw: isize, l: f32) -> f32 {
        if self.full {
            0.0
        } else if raw < 0 {
            -l
        } else if raw >= self.n as isize {
            l
        } else {
            0.0
        }
    }

    /// The span as up to three contiguous pieces of cell indices `(first, last, shift)`: the
    /// cells reached across the low seam, those inside the world, those across the high seam.
    pub(super) fn pieces(self, l: f32) -> impl Iterator<Item = (usize, usize, f32)> {
        let (lo, hi) = (self.first, self.first + self.len as isize - 1);
        let n = self.n as isize;
        [
            (lo, hi.min(-1)),
            (lo.max(0), hi.min(n - 1)),
            (lo.max(n), hi),
        ]
        .into_iter()
        .filter(|(a, b)| a <= b)
        .map(move |(a, b)| (self.wrap(a), self.wrap(b), self.shift(a, l)))
    }
}

/// The cells of an axis a disc of radius `r` around coordinate `p` (in cell `c` of size `cell`)
/// overlaps, with a small margin: never more than [`span`] with `k = ⌈r / cell⌉` and always
/// including `c`, so the visit order of the cells kept is unchanged.
pub(super) fn disc_span(p: f32, c: usize, r: f32, cell: f32, n: usize, wrap: bool) -> Span {
    let around = span(c, ceil_usize(r / cell), n, wrap);
    if around.full {
        return around;
    }
    let margin = r * 1e-5 + 1e-3;
    let c = c as isize;
    let first = floor_within((p - r - margin) / cell, around.first, c);
    let last = floor_within(
        (p + r + margin) / cell,
        c,
        around.first + around.len as isize - 1,
    );
    Span {
        first,
        len: (last - first + 1) as usize,
        n,
        full: false,
    }
}

/// `x.floor()` clamped to `lo..=hi` (whole numbers of at most 2²⁴ in size, `lo ≤ hi`), for
/// every `x` but NaN (which gives `lo`: no boid is within a disc around a NaN centre anyway).
/// Clamped first, as a float: the bounds are whole, so the floor of the clamped value is the
/// clamped floor, and the value is then small and finite, so it converts to an integer in
/// one instruction, with no saturation and no call to libm's `floorf` (the x86-64 baseline
/// has no rounding instruction, and every query takes two).
#[inline]
pub(super) fn floor_within(x: f32, lo: isize, hi: isize) -> isize {
    let v = x.max(lo as f32).min(hi as f32);
    // SAFETY: `v` is finite and within `lo..=hi`, well inside `i32` (NaN: `max` gives `lo`).
    let t = unsafe { v.to_int_unchecked::<i32>() } as isize;
    // Truncation rounded a negative fraction up: one lower.
    t - ((t as f32) > v) as isize
}

/// `(q.max(0.0) as usize).min(cells - 1)`: the cell of a quotient `q = coordinate / cell
/// width` (truncation is `floor` for the non-negative quotients that count), clamped to the
/// `cells` of an axis (fewer than 2²⁴), for every `q` (NaN and negative ones give 0, +∞ the
/// last cell). Clamped as a float first, so the conversion needs no saturation. It converts to
/// a signed integer: AVX2 has no unsigned vector conversion, so there a loop of these converts
/// in one instruction rather than a sequence that makes up for the sign.
#[inline]
pub(super) fn cell_within(q: f32, cells: usize) -> usize {
    let v = q.max(0.0).min((cells - 1) as f32);
    // SAFETY: `v` is finite, at least 0 and at most `cells - 1` as an f32; an axis has at most
    // the grid's cell budget (four a boid or 4 096, whichever is more), far below 2³¹ (NaN:
    // `max` gives 0).
    (unsafe { v.to_int_unchecked::<i32>() }) as usize
}

/// `x.ceil() as usize`, without libm's `ceilf`: the truncation, one higher where it dropped a
/// positive fraction. Equal for every `f32`.
#[inline]
pub(super) fn ceil_usize(x: f32) -> usize {
    let t = x as usize;
    if (t as f32) < x {
        t.saturating_add(1)
    } else {
        t
    }
}

pub(super) fn span(c: usize, k: usize, n: usize, wrap: bool) -> Span {
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
