//! Gathering a boid's neighbour sums eight candidates at a time with SIMD, where the neighbour
//! index keeps its candidates in contiguous arrays ([`Near::lanes`]). The lane sums are reduced
//! in a fixed order, so the result does not depend on the machine. No systems live here.

use bevy::prelude::*;

use super::models::{FlockSums, Rules};
use crate::sim::lanes::{F8, Width, vectorized};
use crate::sim::math::UNIT_EPSILON;
use crate::sim::neighbours::Near;

/// [`FlockSums`] of a boid at `p` moving with `v` that sees all round, eight candidates at a
/// time with SIMD where the backend keeps its candidates in contiguous arrays ([`Near::lanes`];
/// `None` elsewhere): the weights of [`FlockSums::add`] as 0/1 lane masks. The boid is in its
/// own neighbourhood (offset exactly zero, so it adds 1 to each count it is within radius of
/// and its own velocity to the alignment sum); that is taken back out at the end. The float
/// sums are grouped differently from the one-by-one path, so the two agree within rounding.
/// The sums only some models read are accumulated only when asked for (zero otherwise): `RAW`
/// [`FlockSums::away_raw`] (the hybrid and adams models), `INVERSE_SQUARE`
/// [`FlockSums::away_sq`] (pygame), `UNIT` [`FlockSums::away_unit`] (report).
pub fn lane_sums<const RAW: bool, const INVERSE_SQUARE: bool, const UNIT: bool>(
    near: &Near,
    p: Vec2,
    v: Vec2,
    swarm: u8,
    r: &Rules,
) -> Option<FlockSums> {
    // One scan per wrapping case (each inlines its own copy of the loop body).
    match (near.wraps().x, near.wraps().y) {
        (false, false) => scan::<RAW, INVERSE_SQUARE, UNIT, false, false>(near, p, v, swarm, r),
        (true, false) => scan::<RAW, INVERSE_SQUARE, UNIT, true, false>(near, p, v, swarm, r),
        (false, true) => scan::<RAW, INVERSE_SQUARE, UNIT, false, true>(near, p, v, swarm, r),
        (true, true) => scan::<RAW, INVERSE_SQUARE, UNIT, true, true>(near, p, v, swarm, r),
    }
}

/// [`lane_sums`] where the neighbourhood wraps each offset along x (`WX`) / y (`WY`).
fn scan<
    const RAW: bool,
    const INVERSE_SQUARE: bool,
    const UNIT: bool,
    const WX: bool,
    const WY: bool,
>(
    near: &Near,
    p: Vec2,
    v: Vec2,
    swarm: u8,
    r: &Rules,
) -> Option<FlockSums> {
    // The whole scan inside `vectorized!`, closure included, so it runs at the CPU's width.
    let (served, acc) = vectorized!(w => {
        let eps2 = UNIT_EPSILON * UNIT_EPSILON;
        let one = F8::splat(1.0);
        let (sep2, ali2, coh2) = (F8::splat(r.sep2), F8::splat(r.ali2), F8::splat(r.coh2));
        let (eps, me) = (F8::splat(eps2), F8::splat(swarm as f32));
        let mut acc = [F8::ZERO; 15];
        let served = near.lanes::<WX, WY>(p, |l| {
            let (dx, dy) = (l.dx, l.dy);
            // Lanes past the last entry are infinitely far: every weight below is 0 there.
            let d2 = dx * dx + dy * dy;
            let same = l.swarm.cmp_eq(me) & one;
            let ws = d2.cmp_lt(sep2) & one;
            let wa = d2.cmp_lt(ali2) & same;
            let wc = d2.cmp_lt(coh2) & same;
            // The separation weight where the offset has a direction (ws·1 or +0, as ws·mask).
            let ws_dir = d2.cmp_ge(eps) & ws;
            let inv = ws_dir / d2.max(eps);
            acc[0] += ws;
            acc[1] -= dx * inv;
            acc[2] -= dy * inv;
            if INVERSE_SQUARE {
                let inv3 = inv / d2.max(eps).sqrt();
                acc[11] -= dx * inv3;
                acc[12] -= dy * inv3;
            }
            if UNIT {
                let inv1 = ws_dir / d2.max(eps).sqrt();
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
        });
        // The AVX paths sum the accumulators eight at a time by transposing them; the
        // baseline one at a time, over the array by value (taking its address there made LLVM
        // turn the SSE2 scan's maxima into scalar code, twice as slow).
        let sums = match w.avx() {
            Some(avx) => avx.sums(&acc),
            None => {
                let mut sums = [0.0; 15];
                for (s, a) in sums.iter_mut().zip(acc) {
                    *s = a.sum();
                }
                sums
            }
        };
        (served, sums)
    });
    if !served {
        return None;
    }
    let sum = |i: usize| acc[i];
    // Take the boid itself back out (offset 0: inside every positive radius, no direction).
    let inside = |r2: f32| (0.0 < r2) as u32;
    let (own_sep, own_ali, own_coh) = (inside(r.sep2), inside(r.ali2), inside(r.coh2));
    Some(FlockSums {
        away: Vec2::new(sum(1), sum(2)),
        away_raw: Vec2::new(sum(3), sum(4)),
        away_sq: Vec2::new(sum(11), sum(12)),
        away_unit: Vec2::new(sum(13), sum(14)),
        n_sep: sum(0) as u32 - own_sep,
        velocity: Vec2::new(sum(6), sum(7)) - v * own_ali as f32,
        n_ali: sum(5) as u32 - own_ali,
        toward: Vec2::new(sum(9), sum(10)),
        n_coh: sum(8) as u32 - own_coh,
    })
}
