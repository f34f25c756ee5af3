//! Shiffman's Model B force (docs/model.md §4) for eight boids at once: the same IEEE operations
//! as [`flocking_force`](super::flocking_force) in the same order, lane by lane, with every
//! branch of the scalar code (no neighbours, no direction, over the force limit) a lane mask —
//! so each lane's result is bit for bit the scalar one. Plain lane arithmetic on the baseline,
//! AVX instructions written out on the AVX paths. No systems live here.

use bevy::prelude::*;

use super::models::FlockSums;
use crate::sim::config::SwarmParams;
use crate::sim::lanes::{F8, Width};
use crate::sim::math::UNIT_EPSILON;

/// Two coordinates of eight vectors.
#[derive(Clone, Copy, Debug)]
pub struct V8 {
    /// x of each lane.
    pub x: F8,
    /// y of each lane.
    pub y: F8,
}

impl V8 {
    /// The vectors of `f(lane)` for the eight lanes.
    #[inline(always)]
    pub fn gather(f: impl Fn(usize) -> Vec2) -> V8 {
        let v: [Vec2; 8] = std::array::from_fn(f);
        V8 {
            x: F8(std::array::from_fn(|k| v[k].x)),
            y: F8(std::array::from_fn(|k| v[k].y)),
        }
    }

    /// Lane `k`.
    #[inline(always)]
    pub fn lane(&self, k: usize) -> Vec2 {
        Vec2::new(self.x.0[k], self.y.0[k])
    }

    #[inline(always)]
    fn scale(self, s: F8) -> V8 {
        V8 {
            x: self.x * s,
            y: self.y * s,
        }
    }

    #[inline(always)]
    fn div(self, s: F8) -> V8 {
        V8 {
            x: self.x / s,
            y: self.y / s,
        }
    }

    #[inline(always)]
    fn sub(self, o: V8) -> V8 {
        V8 {
            x: self.x - o.x,
            y: self.y - o.y,
        }
    }

    #[inline(always)]
    fn add(self, o: V8) -> V8 {
        V8 {
            x: self.x + o.x,
            y: self.y + o.y,
        }
    }

    /// `x·x + y·y`, as `Vec2::length_squared` computes it.
    #[inline(always)]
    fn length_squared(self) -> F8 {
        self.x * self.x + self.y * self.y
    }

    /// Each lane where `mask` holds, +0 elsewhere.
    #[inline(always)]
    fn keep(self, mask: F8) -> V8 {
        V8 {
            x: self.x & mask,
            y: self.y & mask,
        }
    }
}

/// `steer(sum / n, v, v_max, f_max)` in every lane where `n > 0`, +0 elsewhere — what
/// `separation`, `alignment` and `cohesion` return.
#[inline(always)]
fn steer_mean(sum: V8, n: F8, v: V8, v_max: F8, f_max: F8) -> V8 {
    let direction = sum.div(n);
    // unit(): no direction below UNIT_EPSILON.
    let len = direction.length_squared().sqrt();
    let unit = direction.div(len).keep(len.cmp_ge(F8::splat(UNIT_EPSILON)));
    let wish = unit.scale(v_max).sub(v);
    // truncate(): scaled down only above the limit.
    let len2 = wish.length_squared();
    let over = len2.cmp_gt(f_max * f_max) & len2.cmp_gt(F8::ZERO);
    let scaled = wish.scale(f_max / len2.sqrt());
    V8 {
        x: F8::select(over, scaled.x, wish.x),
        y: F8::select(over, scaled.y, wish.y),
    }
    .keep(n.cmp_gt(F8::ZERO))
}

/// The Shiffman Model B flocking acceleration of eight boids (lane `k`: `sums[k]`, velocity
/// `v[k]`, parameters `params[k]`, weight factor `gain[k]`), bit for bit
/// `flocking_force(SteeringModel::Shiffman, …)` of each, at `width`. On the AVX paths the lanes
/// are put together by two 8 × 8 transposes
/// ([`Avx::columns`](crate::sim::lanes::Avx::columns)) and the force is worked out in AVX
/// instructions ([`force8`]'s operations, one for one). From plain lane arithmetic LLVM built
/// the lanes and did the arithmetic in 128-bit halves, and the force took a seventh of a
/// 1 000-boid flocking step on one thread; written out, the step is about a tenth faster
/// (BENCHMARKS.md, round 3, twenty-fourth stop).
#[inline(always)]
pub fn shiffman8(
    width: impl Width,
    sums: [&FlockSums; 8],
    v: [Vec2; 8],
    params: [&SwarmParams; 8],
    gain: F8,
) -> V8 {
    #[cfg(target_arch = "x86_64")]
    if let Some(avx) = width.avx() {
        let rows = std::array::from_fn(|k| {
            let (s, v) = (sums[k], v[k]);
            let (a, b, c) = (s.away, s.velocity, s.toward);
            F8([a.x, a.y, b.x, b.y, c.x, c.y, v.x, v.y])
        });
        let [ax, ay, bx, by, cx, cy, vx, vy] = avx.columns(&rows);
        let rows = std::array::from_fn(|k| {
            let (s, p) = (sums[k], params[k]);
            let (ns, na, nc) = (s.n_sep as f32, s.n_ali as f32, s.n_coh as f32);
            let w = [p.separation_weight, p.alignment_weight, p.cohesion_weight];
            F8([ns, na, nc, p.max_speed, p.max_force, w[0], w[1], w[2]])
        });
        let [ns, na, nc, v_max, f_max, ws, wa, wc] = avx.columns(&rows);
        let lanes = |x, y| V8 { x, y };
        // SAFETY: an `Avx` exists only on a CPU with AVX.
        return unsafe {
            x86::force8_avx(
                [lanes(ax, ay), lanes(bx, by), lanes(cx, cy)],
                [ns, na, nc],
                lanes(vx, vy),
                (v_max, f_max),
                [ws, wa, wc].map(|w| w * gain),
            )
        };
    }
    let _ = width; // (no AVX path off x86-64)
    let lane = |f: fn(&SwarmParams) -> f32| F8(std::array::from_fn(|k| f(params[k])));
    let count = |f: fn(&FlockSums) -> u32| F8(std::array::from_fn(|k| f(sums[k]) as f32));
    force8(
        [
            V8::gather(|k| sums[k].away),
            V8::gather(|k| sums[k].velocity),
            V8::gather(|k| sums[k].toward),
        ],
        [count(|s| s.n_sep), count(|s| s.n_ali), count(|s| s.n_coh)],
        V8::gather(|k| v[k]),
        (lane(|p| p.max_speed), lane(|p| p.max_force)),
        [
            lane(|p| p.separation_weight) * gain,
            lane(|p| p.alignment_weight) * gain,
            lane(|p| p.cohesion_weight) * gain,
        ],
    )
}

/// Model B's force from its lanes: the separation, alignment and cohesion sums and counts,
/// the velocity, the speed and force limits, and the three weights (already times the gain).
#[inline(always)]
fn force8(sum: [V8; 3], n: [F8; 3], v: V8, (v_max, f_max): (F8, F8), w: [F8; 3]) -> V8 {
    let sep = steer_mean(sum[0], n[0], v, v_max, f_max);
    let ali = steer_mean(sum[1], n[1], v, v_max, f_max);
    let coh = steer_mean(sum[2], n[2], v, v_max, f_max);
    // f32 · Vec2 multiplies the weight by each coordinate; the three add left to right.
    sep.scale(w[0]).add(ali.scale(w[1])).add(coh.scale(w[2]))
}

/// [`force8`] in AVX instructions, each the lane operation [`force8`] does, in its order.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::V8;
    use crate::sim::lanes::F8;
    use crate::sim::math::UNIT_EPSILON;
    use std::arch::x86_64::*;

    /// [`force8`](super::force8) of the same lanes.
    ///
    /// # Safety
    /// The CPU must have AVX.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn force8_avx(
        sum: [V8; 3],
        n: [F8; 3],
        v: V8,
        (v_max, f_max): (F8, F8),
        w: [F8; 3],
    ) -> V8 {
        let (v, v_max, f_max) = ((v.x.m256(), v.y.m256()), v_max.m256(), f_max.m256());
        let part = |k: usize| {
            let sum = (sum[k].x.m256(), sum[k].y.m256());
            steer_mean(sum, n[k].m256(), v, v_max, f_max)
        };
        let (sep, ali, coh) = (part(0), part(1), part(2));
        let w = [w[0].m256(), w[1].m256(), w[2].m256()];
        let along = |s: __m256, a: __m256, c: __m256| {
            let first = _mm256_add_ps(_mm256_mul_ps(s, w[0]), _mm256_mul_ps(a, w[1]));
            F8::from_m256(_mm256_add_ps(first, _mm256_mul_ps(c, w[2])))
        };
        V8 {
            x: along(sep.0, ali.0, coh.0),
            y: along(sep.1, ali.1, coh.1),
        }
    }

    /// `steer_mean` (see [`force8`](super::force8)): `steer(sum / n, v, v_max, f_max)` where
    /// `n > 0`, +0 elsewhere.
    #[inline]
    #[target_feature(enable = "avx")]
    fn steer_mean(
        (sx, sy): (__m256, __m256),
        n: __m256,
        (vx, vy): (__m256, __m256),
        v_max: __m256,
        f_max: __m256,
    ) -> (__m256, __m256) {
        let zero = _mm256_setzero_ps();
        let (dx, dy) = (_mm256_div_ps(sx, n), _mm256_div_ps(sy, n));
        let len = _mm256_sqrt_ps(length_squared(dx, dy));
        // unit(): no direction below UNIT_EPSILON (an ordered test: false for NaN).
        let has = _mm256_cmp_ps::<_CMP_GE_OQ>(len, _mm256_set1_ps(UNIT_EPSILON));
        let ux = _mm256_and_ps(_mm256_div_ps(dx, len), has);
        let uy = _mm256_and_ps(_mm256_div_ps(dy, len), has);
        let wx = _mm256_sub_ps(_mm256_mul_ps(ux, v_max), vx);
        let wy = _mm256_sub_ps(_mm256_mul_ps(uy, v_max), vy);
        // truncate(): scaled down only above the limit.
        let len2 = length_squared(wx, wy);
        let over = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_GT_OQ>(len2, _mm256_mul_ps(f_max, f_max)),
            _mm256_cmp_ps::<_CMP_GT_OQ>(len2, zero),
        );
        let s = _mm256_div_ps(f_max, _mm256_sqrt_ps(len2));
        let some = _mm256_cmp_ps::<_CMP_GT_OQ>(n, zero);
        // Masks are all ones or all zeros, so `blendv` (which reads the sign bit) selects as
        // `F8::select` does.
        let pick =
            |w: __m256, scaled: __m256| _mm256_and_ps(_mm256_blendv_ps(w, scaled, over), some);
        (
            pick(wx, _mm256_mul_ps(wx, s)),
            pick(wy, _mm256_mul_ps(wy, s)),
        )
    }

    /// `x·x + y·y`, as `Vec2::length_squared` computes it.
    #[inline]
    #[target_feature(enable = "avx")]
    fn length_squared(x: __m256, y: __m256) -> __m256 {
        _mm256_add_ps(_mm256_mul_ps(x, x), _mm256_mul_ps(y, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::{SimConfig, SteeringModel};
    use crate::sim::flocking::flocking_force;
    use crate::sim::lanes::{Baseline, vectorized};
    use rand::{Rng, SeedableRng};

    #[test]
    fn eight_lanes_give_the_scalar_bits() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let base = SimConfig::default().swarms;
        let mut params = [
            base.normal.clone(),
            base.doctor.clone(),
            base.antivax.clone(),
        ];
        // Three weights and two limits that differ from each other and between the swarms, so
        // a lane or a weight taken for another shows.
        for (k, p) in params.iter_mut().enumerate() {
            let k = k as f32;
            p.separation_weight = 1.5 + 0.25 * k;
            p.alignment_weight = 1.0 - 0.2 * k;
            p.cohesion_weight = 0.7 + 0.1 * k;
            p.max_speed += 10.0 * k;
            p.max_force *= 1.0 + 0.3 * k;
        }
        let mut vec = |scale: f32| {
            // Zero, tiny (no direction) and ordinary vectors.
            match rng.random_range(0..6) {
                0 => Vec2::ZERO,
                1 => Vec2::new(3e-7, -2e-7),
                _ => Vec2::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)) * scale,
            }
        };
        for round in 0..500 {
            let sums: [FlockSums; 8] = std::array::from_fn(|_| FlockSums {
                away: vec(5.0),
                velocity: vec(900.0),
                toward: vec(300.0),
                ..FlockSums::default()
            });
            let sums = sums.map(|mut s| {
                s.n_sep = s.away.x.to_bits() % 4;
                s.n_ali = s.velocity.x.to_bits() % 9;
                s.n_coh = s.toward.y.to_bits() % 3;
                s
            });
            let v: [Vec2; 8] = std::array::from_fn(|_| vec(200.0));
            let which: [usize; 8] = std::array::from_fn(|k| (round + k) % 3);
            let gain = F8(std::array::from_fn(|k| {
                [1.0, 0.3, 0.0, 1.0][(round + k) % 4]
            }));
            let args = (sums.each_ref(), v, which.map(|w| &params[w]));
            // At this CPU's width, and at the baseline's.
            let wide = vectorized!(w => { shiffman8(w, args.0, args.1, args.2, gain) });
            let base = shiffman8(Baseline, args.0, args.1, args.2, gain);
            for (k, got) in (0..8).flat_map(|k| [(k, wide.lane(k)), (k, base.lane(k))]) {
                let want = flocking_force(
                    SteeringModel::Shiffman,
                    &sums[k],
                    v[k],
                    &params[which[k]],
                    gain.0[k],
                );
                assert_eq!(
                    (got.x.to_bits(), got.y.to_bits()),
                    (want.x.to_bits(), want.y.to_bits()),
                    "round {round} lane {k}: {got} vs {want}"
                );
            }
        }
    }
}
