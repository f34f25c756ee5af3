//! Randomness, all derived from the run's seed (STYLE §7). `SimRng` is the sequential generator
//! for spawning; per-boid, per-step draws come from a stateless hash of
//! `(seed, step, id, other, purpose)`, so results never depend on iteration order or on the
//! number of threads. No systems live here.

use bevy::prelude::*;
use rand::SeedableRng;
use rand_pcg::Pcg64;

/// The run's sequential generator (spawning, respawning, litters). Seeded from the config seed.
#[derive(Resource)]
pub struct SimRng(pub Pcg64);

impl SimRng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Self(Pcg64::seed_from_u64(seed))
    }
}

/// What a per-step draw is for; each purpose is an independent stream. Extensions define their
/// own with a value of 1000 or more (e.g. `const VACCINATE: Purpose = Purpose(1000);`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Purpose(pub u64);

impl Purpose {
    /// Flocking noise direction.
    pub const NOISE: Purpose = Purpose(1);
    /// Contact infection roll of one (target, source) pair.
    pub const INFECT: Purpose = Purpose(2);
    /// Spontaneous infection roll.
    pub const SPONTANEOUS: Purpose = Purpose(3);
    /// Cure roll of one (patient, doctor) pair.
    pub const CURE: Purpose = Purpose(4);
    /// Death-or-recovery roll at `t_death`.
    pub const DEATH: Purpose = Purpose(5);
    /// Reproduction roll of one pair.
    pub const OFFSPRING: Purpose = Purpose(6);
    /// Promotion to doctor.
    pub const PROMOTE: Purpose = Purpose(7);
    /// Sex and litter details.
    pub const LITTER: Purpose = Purpose(8);
    /// Where a caught boid reappears.
    pub const RESPAWN: Purpose = Purpose(9);
    /// Which boids an intervention's vaccination round or importation picks.
    pub const CHOOSE: Purpose = Purpose(10);
    /// An intervention's vaccination roll per second.
    pub const VACCINATE: Purpose = Purpose(11);
    /// An intervention's detection roll (test and isolate).
    pub const DETECT: Purpose = Purpose(12);
}

/// SplitMix64 finaliser: a strong 64-bit mixer.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A 64-bit hash of a draw's coordinates: `mix64(mix64(mix64(mix64(seed ^ purpose · K) ^ step)
/// ^ id) ^ other)`, with `K = 0xA076_1D64_78BD_642F` (a wrapping product).
#[inline]
pub fn draw_bits(seed: u64, step: u64, id: u64, other: u64, purpose: Purpose) -> u64 {
    Draws::new(seed, step, purpose).bits(id, other)
}

/// A uniform number in `[0, 1)` for one draw.
#[inline]
pub fn draw_unit(seed: u64, step: u64, id: u64, other: u64, purpose: Purpose) -> f64 {
    Draws::new(seed, step, purpose).unit(id, other)
}

/// One step's draws for one purpose: the half of [`draw_bits`]' hash that depends only on the
/// seed, the purpose and the step, worked out once. A loop over the boids that draws for one
/// purpose makes it before the loop and then hashes only each draw's `id` and `other` (the
/// same bits as [`draw_bits`], in two of its four mixing rounds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draws(u64);

impl Draws {
    /// The draws of `purpose` in step `step` of a run of `seed`.
    #[inline]
    pub fn new(seed: u64, step: u64, purpose: Purpose) -> Self {
        Self(mix64(
            mix64(seed ^ purpose.0.wrapping_mul(0xA076_1D64_78BD_642F)) ^ step,
        ))
    }

    /// [`draw_bits`] of this step and purpose for `id` and `other`.
    #[inline]
    pub fn bits(self, id: u64, other: u64) -> u64 {
        mix64(mix64(self.0 ^ id) ^ other)
    }

    /// [`draw_unit`] of this step and purpose for `id` and `other`.
    #[inline]
    pub fn unit(self, id: u64, other: u64) -> f64 {
        (self.bits(id, other) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// A seeded generator for draws that need several numbers (e.g. a litter).
pub fn draw_rng(seed: u64, step: u64, id: u64, other: u64, purpose: Purpose) -> Pcg64 {
    Pcg64::seed_from_u64(draw_bits(seed, step, id, other, purpose))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_reproducible_and_distinct() {
        let a = draw_unit(1, 2, 3, 4, Purpose::INFECT);
        assert_eq!(a, draw_unit(1, 2, 3, 4, Purpose::INFECT));
        assert_ne!(a, draw_unit(1, 2, 3, 4, Purpose::CURE));
        assert_ne!(a, draw_unit(1, 3, 3, 4, Purpose::INFECT));
        assert_ne!(a, draw_unit(2, 2, 3, 4, Purpose::INFECT));
        assert_ne!(a, draw_unit(1, 2, 4, 3, Purpose::INFECT));
    }

    /// The hash is part of every run's results (a changed bit changes who is infected): these
    /// values were worked out outside this code, by a separate implementation of the hash.
    #[test]
    fn draw_bits_are_the_hash_documented_on_it() {
        let cases = [
            ((1, 2, 3, 4, Purpose::INFECT), 0x7d7a_1b46_c9d3_7c8a),
            (
                (42, 18_000, 129, 0, Purpose::SPONTANEOUS),
                0x3c42_81d8_97fa_bb42,
            ),
            (
                (u64::MAX, 7, 1 << 40, (1 << 32) + 5, Purpose(1000)),
                0x40b1_55cb_4828_6780,
            ),
        ];
        for ((seed, step, id, other, purpose), want) in cases {
            assert_eq!(draw_bits(seed, step, id, other, purpose), want);
            let draws = Draws::new(seed, step, purpose);
            assert_eq!(draws.bits(id, other), want);
            let unit = (want >> 11) as f64 / (1u64 << 53) as f64;
            assert_eq!(draws.unit(id, other), unit);
            assert_eq!(draw_unit(seed, step, id, other, purpose), unit);
        }
    }

    #[test]
    fn draws_are_uniform() {
        let n = 100_000u64;
        let mut sum = 0.0;
        let mut below_tenth = 0;
        for i in 0..n {
            let u = draw_unit(42, i, 7, 0, Purpose::NOISE);
            assert!((0.0..1.0).contains(&u));
            sum += u;
            if u < 0.1 {
                below_tenth += 1;
            }
        }
        let mean = sum / n as f64;
        // Standard error of the mean of U(0,1) over 1e5 draws is 0.0009; allow 5 of them.
        assert!((mean - 0.5).abs() < 0.0045, "{mean}");
        // Binomial(1e5, 0.1): sd ≈ 95; allow 5 sd.
        assert!((below_tenth as i64 - 10_000).abs() < 475, "{below_tenth}");
    }
}
