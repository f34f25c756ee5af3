//! Shiffman's Model B force (docs/model.md §4) for eight boids at once: the same IEEE operations
//! as [`flocking_force`](super::flocking_force) in the same order, lane by lane, with every
//! branch of the scalar code (no neighbours, no direction, over the force limit) a lane mask —
//! so each lane's result is bit for bit the scalar one. No systems live here.

use bevy::prelude::*;

use super::models::FlockSums;
use crate::sim::config::SwarmParams;
use crate::sim::lanes::F8;
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
/// `flocking_force(SteeringModel::Shiffman, …)` of each.
#[inline(always)]
pub fn shiffman8(sums: &[FlockSums; 8], v: V8, params: [&SwarmParams; 8], gain: F8) -> V8 {
    let lane = |f: fn(&SwarmParams) -> f32| F8(std::array::from_fn(|k| f(params[k])));
    let (v_max, f_max) = (lane(|p| p.max_speed), lane(|p| p.max_force));
    let count = |f: fn(&FlockSums) -> u32| F8(std::array::from_fn(|k| f(&sums[k]) as f32));
    let sep = steer_mean(
        V8::gather(|k| sums[k].away),
        count(|s| s.n_sep),
        v,
        v_max,
        f_max,
    );
    let ali = steer_mean(
        V8::gather(|k| sums[k].velocity),
        count(|s| s.n_ali),
        v,
        v_max,
        f_max,
    );
    let coh = steer_mean(
        V8::gather(|k| sums[k].toward),
        count(|s| s.n_coh),
        v,
        v_max,
        f_max,
    );
    let ws = lane(|p| p.separation_weight) * gain;
    let wa = lane(|p| p.alignment_weight) * gain;
    let wc = lane(|p| p.cohesion_weight) * gain;
    // f32 · Vec2 multiplies the weight by each coordinate; the three add left to right.
    sep.scale(ws).add(ali.scale(wa)).add(coh.scale(wc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::{SimConfig, SteeringModel};
    use crate::sim::flocking::flocking_force;
    use rand::{Rng, SeedableRng};

    #[test]
    fn eight_lanes_give_the_scalar_bits() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let base = SimConfig::default().swarms;
        let params = [
            base.normal.clone(),
            base.doctor.clone(),
            base.antivax.clone(),
        ];
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
            let got = shiffman8(&sums, V8::gather(|k| v[k]), which.map(|w| &params[w]), gain);
            for k in 0..8 {
                let want = flocking_force(
                    SteeringModel::Shiffman,
                    &sums[k],
                    v[k],
                    &params[which[k]],
                    gain.0[k],
                );
                let got = got.lane(k);
                assert_eq!(
                    (got.x.to_bits(), got.y.to_bits()),
                    (want.x.to_bits(), want.y.to_bits()),
                    "round {round} lane {k}: {got} vs {want}"
                );
            }
        }
    }
}
