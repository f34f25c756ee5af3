//! Gathering a boid's neighbour sums eight candidates at a time with SIMD, where the neighbour
//! index keeps its candidates in contiguous arrays ([`Near::lanes`]). The lane sums are reduced
//! in a fixed order, so the result does not depend on the machine. No systems live here.

use bevy::prelude::*;

use super::models::{FlockSums, Rules};
use crate::sim::lanes::{Counts, F8, Width, vectorized};
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
    // One scan per wrapping case and per whether alignment and cohesion share a radius (each
    // inlines its own copy of the loop body).
    let same = r.ali2 == r.coh2;
    macro_rules! scan {
        ($($wx:literal $wy:literal $same:literal),*) => {
            match (near.wraps().x, near.wraps().y, same) {
                $(($wx, $wy, $same) => {
                    scan::<RAW, INVERSE_SQUARE, UNIT, $wx, $wy, $same>(near, p, v, swarm, r)
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
) -> Option<FlockSums> {
    // The whole scan inside `vectorized!`, closure included, so it runs at the CPU's width.
    let (served, acc, counts) = vectorized!(w => {
        let eps2 = UNIT_EPSILON * UNIT_EPSILON;
        let one = F8::splat(1.0);
        let (sep2, ali2, coh2) = (F8::splat(r.sep2), F8::splat(r.ali2), F8::splat(r.coh2));
        let (eps, me) = (F8::splat(eps2), F8::splat(swarm as f32));
        // Sums (x, y each): away, velocity, toward, then the ones only some models read: raw
        // away, away / d³, unit away.
        let mut acc = [F8::ZERO; 12];
        // Separation, alignment and cohesion neighbours.
        let mut n = [Counts::ZERO; 3];
        let served = near.lanes::<WX, WY>(p, |l| {
            let (dx, dy) = (l.dx, l.dy);
            // Lanes past the last entry are infinitely far: every mask below is clear there.
            let d2 = dx * dx + dy * dy;
            let same = l.swarm.cmp_eq(me);
            let ws = d2.cmp_lt(sep2);
            let wa = d2.cmp_lt(ali2) & same;
            // A weight of 0 or 1 is a mask here: `x & mask` is x or +0 where `x · weight` is
            // x or ±0, and adding ±0 leaves a sum that started at +0 as it is (it is never −0).
            // Separation where the offset has a direction: there d2 ≥ ε², so 1 / d2 is
            // 1 / max(d2, ε²); elsewhere +0.
            let ws_dir = d2.cmp_ge(eps) & ws;
            let inv = (one / d2) & ws_dir;
            n[0].add(ws);
            acc[0] -= dx * inv;
            acc[1] -= dy * inv;
            if RAW {
                acc[6] -= dx & ws;
                acc[7] -= dy & ws;
            }
            if INVERSE_SQUARE {
                let inv3 = inv / d2.max(eps).sqrt();
                acc[8] -= dx * inv3;
                acc[9] -= dy * inv3;
            }
            if UNIT {
                let inv1 = (ws_dir & one) / d2.max(eps).sqrt();
                acc[10] -= dx * inv1;
                acc[11] -= dy * inv1;
            }
            n[1].add(wa);
            acc[2] += l.vx & wa;
            acc[3] += l.vy & wa;
            // With one radius for alignment and cohesion, their neighbours are the same.
            let wc = if SAME { wa } else { d2.cmp_lt(coh2) & same };
            if !SAME {
                n[2].add(wc);
            }
            acc[4] += dx & wc;
            acc[5] += dy & wc;
        });
        // The AVX paths sum the accumulators eight at a time by transposing them; the
        // baseline one at a time, over the array by value (taking its address there made LLVM
        // turn the SSE2 scan's maxima into scalar code, twice as slow).
        let sums = match w.avx() {
            // The last four only where a model reads them.
            Some(avx) if !(RAW || INVERSE_SQUARE || UNIT) => {
                let mut sums = [0.0; 12];
                let first: &[F8; 8] = acc[..8].try_into().expect("twelve sums");
                sums[..8].copy_from_slice(&avx.sums(first));
                sums
            }
            Some(avx) => avx.sums(&acc),
            None => {
                let mut sums = [0.0; 12];
                for (s, a) in sums.iter_mut().zip(acc) {
                    *s = a.sum();
                }
                sums
            }
        };
        let counts = n.map(Counts::total);
        (served, sums, counts)
    });
    if !served {
        return None;
    }
    let sum = |i: usize| Vec2::new(acc[2 * i], acc[2 * i + 1]);
    let [n_sep, n_ali, n_coh] = counts;
    let n_coh = if SAME { n_ali } else { n_coh };
    // Take the boid itself back out (offset 0: inside every positive radius, no direction).
    let inside = |r2: f32| (0.0 < r2) as u32;
    let (own_sep, own_ali, own_coh) = (inside(r.sep2), inside(r.ali2), inside(r.coh2));
    Some(FlockSums {
        away: sum(0),
        away_raw: sum(3),
        away_sq: sum(4),
        away_unit: sum(5),
        n_sep: n_sep - own_sep,
        velocity: sum(1) - v * own_ali as f32,
        n_ali: n_ali - own_ali,
        toward: sum(2),
        n_coh: n_coh - own_coh,
    })
}
