//! Gathering a boid's neighbour sums eight candidates at a time with SIMD, where the neighbour
//! index keeps its candidates in contiguous arrays ([`Near::lanes`]). The lane sums are reduced
//! in a fixed order, so the result does not depend on the machine. No systems live here.

use bevy::prelude::*;

use super::models::{FlockSums, Rules};
use crate::sim::lanes::{Avx, Counts, F8, Width, vectorized};
use crate::sim::math::UNIT_EPSILON;
use crate::sim::neighbours::Near;

/// [`FlockSums`] of a boid at `p` moving with `v` that sees all round, eight candidates at a
/// time with SIMD where the backend keeps its candidates in contiguous arrays ([`Near::lanes`]):
/// the weights of [`FlockSums::add`] as 0/1 lane masks. The boid is in its own neighbourhood
/// (offset exactly zero, so it adds 1 to each count it is within radius of and its own
/// velocity to the alignment sum); that is taken back out at the end. The float
/// sums are grouped differently from the one-by-one path, so the two agree within rounding.
/// The sums only some models read are accumulated only when asked for (zero otherwise): `RAW`
/// [`FlockSums::away_raw`] (the hybrid and adams models), `INVERSE_SQUARE`
/// [`FlockSums::away_sq`] (pygame), `UNIT` [`FlockSums::away_unit`] (report). Writes the sums
/// into `out` and returns `true`; where the backend has no contiguous candidates it returns
/// `false` and leaves `out` as it is (the caller then scans one by one). It fills `out` rather
/// than returning a value, which was copied on its way and stalled each boid (store
/// forwarding; BENCHMARKS.md, fourteenth stop).
pub fn lane_sums<const RAW: bool, const INVERSE_SQUARE: bool, const UNIT: bool>(
    near: &Near,
    p: Vec2,
    v: Vec2,
    swarm: u8,
    r: &Rules,
    out: &mut FlockSums,
) -> bool {
    // One scan per wrapping case and per whether alignment and cohesion share a radius (each
    // inlines its own copy of the loop body).
    let same = r.ali2 == r.coh2;
    macro_rules! scan {
        ($($wx:literal $wy:literal $same:literal),*) => {
            match (near.wraps().x, near.wraps().y, same) {
                $(($wx, $wy, $same) => {
                    scan::<RAW, INVERSE_SQUARE, UNIT, $wx, $wy, $same>(near, p, v, swarm, r, out)
                })*
            }
        };
    }
    scan!(
        false false false, true false false, false true false, true true false,
        false false true, true false true, false true true, true true true
    )
}

/// [`lane_sums`] where the neighbourhood wraps each offset along x (`WX`) / y (`WY`), and
/// alignment and cohesion have the same radius (`SAME`), so the same neighbours.
fn scan<
    const RAW: bool,
    const INVERSE_SQUARE: bool,
    const UNIT: bool,
    const WX: bool,
    const WY: bool,
    const SAME: bool,
>(
    near: &Near,
    p: Vec2,
    v: Vec2,
    swarm: u8,
    r: &Rules,
    out: &mut FlockSums,
) -> bool {
    // The whole scan inside `vectorized!`, closure included, so it runs at the CPU's width:
    // with masks on the AVX paths, with 0/1 weights on the baseline (the same bits; see
    // `masked_sums`).
    let (served, acc, counts) = vectorized!(w => {
        match w.avx() {
            Some(avx) => {
                masked_sums::<RAW, INVERSE_SQUARE, UNIT, WX, WY, SAME>(avx, near, p, swarm, r)
            }
            None => weighted_sums::<RAW, INVERSE_SQUARE, UNIT, WX, WY>(near, p, swarm, r),
        }
    });
    if !served {
        return false;
    }
    let sum = |i: usize| Vec2::new(acc[2 * i], acc[2 * i + 1]);
    let [n_sep, n_ali, n_coh] = counts;
    let n_coh = if SAME { n_ali } else { n_coh };
    // Take the boid itself back out (offset 0: inside every positive radius, no direction).
    let inside = |r2: f32| (0.0 < r2) as u32;
    let (own_sep, own_ali, own_coh) = (inside(r.sep2), inside(r.ali2), inside(r.coh2));
    *out = FlockSums {
        away: sum(0),
        away_raw: sum(3),
        away_sq: sum(4),
        away_unit: sum(5),
        n_sep: n_sep - own_sep,
        velocity: sum(1) - v * own_ali as f32,
        n_ali: n_ali - own_ali,
        toward: sum(2),
        n_coh: n_coh - own_coh,
    };
    true
}

/// The constants a scan's blocks use, in every lane: 1, the squared radii, ε² (below it an
/// offset has no direction) and the boid's swarm.
struct Limits {
    one: F8,
    sep2: F8,
    ali2: F8,
    coh2: F8,
    eps: F8,
    me: F8,
}

impl Limits {
    #[inline(always)]
    fn new(r: &Rules, swarm: u8) -> Limits {
        Limits {
            one: F8::splat(1.0),
            sep2: F8::splat(r.sep2),
            ali2: F8::splat(r.ali2),
            coh2: F8::splat(r.coh2),
            eps: F8::splat(UNIT_EPSILON * UNIT_EPSILON),
            me: F8::splat(swarm as f32),
        }
    }
}

/// The sums of a scan: whether the backend served lanes; away, velocity, toward, raw away,
/// away / d³ and unit away (x, y each); the separation, alignment and cohesion counts.
type Sums = (bool, [f32; 12], [u32; 3]);

/// [`scan`]'s sums on the AVX paths, where a weight of 0 or 1 is a mask: `x & mask` is x or +0
/// where `x · weight` ([`weighted_sums`]) is x or ±0, and adding ±0 leaves a sum that started
/// at +0 as it is (it is never −0); counts are integer lanes, and 1 / d2 where the offset has a
/// direction is 1 / max(d2, ε²) there (d2 ≥ ε²). So the bits are [`weighted_sums`]'s, in 36
/// instructions a block on AVX2 against about 50 (default model, equal radii). The sums only
/// some models read are worked out only for them. (The SSE2 path keeps the weights it was
/// measured fast with: with the masks, and before the block was always inlined, its scan took
/// up to 1.8 times as long.)
#[inline(always)]
fn masked_sums<
    const RAW: bool,
    const INVERSE_SQUARE: bool,
    const UNIT: bool,
    const WX: bool,
    const WY: bool,
    const SAME: bool,
>(
    avx: Avx,
    near: &Near,
    p: Vec2,
    swarm: u8,
    r: &Rules,
) -> Sums {
    let lim = Limits::new(r, swarm);
    let mut acc = [F8::ZERO; 12];
    let mut n = [Counts::ZERO; 3];
    let served = near.lanes::<WX, WY>(
        p,
        #[inline(always)]
        |l| {
            let (dx, dy) = (l.dx, l.dy);
            // Lanes past the last entry are infinitely far: every mask below is clear there.
            let d2 = dx * dx + dy * dy;
            let same = l.swarm.cmp_eq(lim.me);
            let ws = d2.cmp_lt(lim.sep2);
            let wa = d2.cmp_lt(lim.ali2) & same;
            let ws_dir = d2.cmp_ge(lim.eps) & ws;
            let inv = (lim.one / d2) & ws_dir;
            n[0].add(ws);
            acc[0] -= dx * inv;
            acc[1] -= dy * inv;
            if RAW {
                acc[6] -= dx & ws;
                acc[7] -= dy & ws;
            }
            if INVERSE_SQUARE {
                let inv3 = inv / d2.max(lim.eps).sqrt();
                acc[8] -= dx * inv3;
                acc[9] -= dy * inv3;
            }
            if UNIT {
                let inv1 = (ws_dir & lim.one) / d2.max(lim.eps).sqrt();
                acc[10] -= dx * inv1;
                acc[11] -= dy * inv1;
            }
            n[1].add(wa);
            acc[2] += l.vx & wa;
            acc[3] += l.vy & wa;
            // With one radius for alignment and cohesion, their neighbours are the same.
            let wc = if SAME { wa } else { d2.cmp_lt(lim.coh2) & same };
            if !SAME {
                n[2].add(wc);
            }
            acc[4] += dx & wc;
            acc[5] += dy & wc;
        },
    );
    // Summed eight at a time by transposing; the last four only where a model reads them.
    let mut sums = [0.0; 12];
    if RAW || INVERSE_SQUARE || UNIT {
        sums = avx.sums(&acc);
    } else {
        let first: &[F8; 8] = acc[..8].try_into().expect("twelve sums");
        sums[..8].copy_from_slice(&avx.sums(first));
    }
    // With `SAME` the cohesion count stays 0 here; `scan` takes the alignment count for it.
    (served, sums, n.map(Counts::total))
}

/// [`scan`]'s sums on the baseline: the weights of [`FlockSums::add`] as 0/1 lane floats,
/// multiplied in, and the counts as float sums (whole numbers far below 2²⁴, so exact).
#[inline(always)]
fn weighted_sums<
    const RAW: bool,
    const INVERSE_SQUARE: bool,
    const UNIT: bool,
    const WX: bool,
    const WY: bool,
>(
    near: &Near,
    p: Vec2,
    swarm: u8,
    r: &Rules,
) -> Sums {
    let lim = Limits::new(r, swarm);
    let mut acc = [F8::ZERO; 15];
    // Always inlined (here and in `masked_sums`): left to the inliner, the baseline's block,
    // which sits in `lane_sums` itself with every variant's, stayed a function called for each
    // block of eight, and the SSE2 scan took over twice as long.
    let served = near.lanes::<WX, WY>(
        p,
        #[inline(always)]
        |l| {
            let (dx, dy) = (l.dx, l.dy);
            let d2 = dx * dx + dy * dy;
            let same = l.swarm.cmp_eq(lim.me) & lim.one;
            let ws = d2.cmp_lt(lim.sep2) & lim.one;
            let wa = d2.cmp_lt(lim.ali2) & same;
            let wc = d2.cmp_lt(lim.coh2) & same;
            // The separation weight where the offset has a direction (ws·1 or +0, as ws·mask).
            let ws_dir = d2.cmp_ge(lim.eps) & ws;
            let inv = ws_dir / d2.max(lim.eps);
            acc[0] += ws;
            acc[1] -= dx * inv;
            acc[2] -= dy * inv;
            if INVERSE_SQUARE {
                let inv3 = inv / d2.max(lim.eps).sqrt();
                acc[11] -= dx * inv3;
                acc[12] -= dy * inv3;
            }
            if UNIT {
                let inv1 = ws_dir / d2.max(lim.eps).sqrt();
                acc[13] -= dx * inv1;
                acc[14] -= dy * inv1;
            }
            if RAW {
                acc[3] -= dx * ws;
                acc[4] -= dy * ws;
            }
            acc[5] += wa;
            acc[6] += l.vx * wa;
            acc[7] += l.vy * wa;
            acc[8] += wc;
            acc[9] += dx * wc;
            acc[10] += dy * wc;
        },
    );
    // One at a time, over the array by value (taking its address here made LLVM turn the SSE2
    // scan's maxima into scalar code, twice as slow).
    let mut s = [0.0; 15];
    for (s, a) in s.iter_mut().zip(acc) {
        *s = a.sum();
    }
    let sums = [
        s[1], s[2], s[6], s[7], s[9], s[10], s[3], s[4], s[11], s[12], s[13], s[14],
    ];
    (served, sums, [s[0] as u32, s[5] as u32, s[8] as u32])
}
