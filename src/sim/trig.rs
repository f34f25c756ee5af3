//! The sine and cosine of eight angles at once, each to the bit that libm's `sincos` gives it
//! ([`sincos8`]): libm's own steps (an angle past π/4 less a multiple of π/2, kept as a head and
//! a tail, then the two kernel polynomials of that remainder), done in every lane and picked
//! per lane with selects rather than branches, so that in a `vectorized!` block the compiler
//! turns them into vector instructions of the CPU's width. A torus's centroid takes two angles
//! a boid at each metrics sample (`space::Space::centroid_terms`), and one call at a time spent
//! most of a sample's first pass over the boids on them. No systems live here.
//!
//! The steps and coefficients are those of FreeBSD's msun (`s_sin.c`, `e_rem_pio2.c`,
//! `k_sin.c`, `k_cos.c`), as the `libm` crate (rust-lang's, under the MIT licence) carries
//! them. Their notices: `s_sin.c` and `e_rem_pio2.c`: "Copyright (C) 1993 by Sun
//! Microsystems, Inc. All rights reserved. Developed at SunPro, a Sun Microsystems, Inc.
//! business. Permission to use, copy, modify, and distribute this software is freely granted,
//! provided that this notice is preserved." (`e_rem_pio2.c` "Optimized by Bruce D. Evans.");
//! `k_sin.c` and `k_cos.c`: the same, "Developed at SunSoft, a Sun Microsystems, Inc.
//! business".

/// Angles worked out at once.
pub const LANES: usize = 8;

// The kernels' coefficients, by their bits.
const S1: f64 = f64::from_bits(0xBFC5_5555_5555_5549);
const S2: f64 = f64::from_bits(0x3F81_1111_1110_F8A6);
const S3: f64 = f64::from_bits(0xBF2A_01A0_19C1_61D5);
const S4: f64 = f64::from_bits(0x3EC7_1DE3_57B1_FE7D);
const S5: f64 = f64::from_bits(0xBE5A_E5E6_8A2B_9CEB);
const S6: f64 = f64::from_bits(0x3DE5_D93A_5ACF_D57C);
const C1: f64 = f64::from_bits(0x3FA5_5555_5555_554C);
const C2: f64 = f64::from_bits(0xBF56_C16C_16C1_5177);
const C3: f64 = f64::from_bits(0x3EFA_01A0_19CB_1590);
const C4: f64 = f64::from_bits(0xBE92_7E4F_809C_52AD);
const C5: f64 = f64::from_bits(0x3E21_EE9E_BDB4_B1C4);
const C6: f64 = f64::from_bits(0xBDA8_FAE9_BE88_38D4);
// π/2's first 33 bits, and the rest of it after them.
const PIO2_1: f64 = f64::from_bits(0x3FF9_21FB_5440_0000);
const PIO2_1T: f64 = f64::from_bits(0x3DD0_B461_1A62_6331);

// Bounds on an angle's high word (its top 32 bits, sign cleared), as libm tests them.
/// Below: |x| < 2^-27·√2, whose sine is x and cosine 1.
const TINY: u32 = 0x3e46_a09e;
/// At most: |x| ≲ π/4, taken as it is.
const QUARTER: u32 = 0x3fe9_21fb;
// At most: x up to about 3π/4 (5π/4, 7π/4, 9π/4), which libm takes one (two, three, four)
// π/2 off.
const LESS_ONE: u32 = 0x4002_d97c;
const LESS_TWO: u32 = 0x400f_6a7a;
const LESS_THREE: u32 = 0x4015_fdbc;
const LESS_FOUR: u32 = 0x401c_463b;

/// The sine and cosine of each of `x`, as `libm::sincos` gives them, bit for bit (a test
/// compares them over the angles a position gives and around every bound above). Lanes with an
/// angle below about −π/4, from about 9π/4 on, next to π/2, π, 3π/2 or 2π (where libm takes
/// the multiple off in more pieces), NaN or infinite are libm's own call. Always inlined: it
/// takes the vector width of the `vectorized!` block it is in.
#[inline(always)]
pub fn sincos8(x: [f64; LANES]) -> ([f64; LANES], [f64; LANES]) {
    let (mut sin, mut cos) = ([0.0; LANES], [0.0; LANES]);
    let mut by_call = 0u32;
    for k in 0..LANES {
        let (s, c, in_lanes) = lane(x[k]);
        (sin[k], cos[k]) = (s, c);
        by_call |= u32::from(!in_lanes) << k;
    }
    if by_call != 0 {
        by_libm(x, by_call, &mut sin, &mut cos);
    }
    (sin, cos)
}

/// The lanes of [`sincos8`] left to libm (bit `k` set: lane `k`).
#[cold]
#[inline(never)]
fn by_libm(x: [f64; LANES], lanes: u32, sin: &mut [f64; LANES], cos: &mut [f64; LANES]) {
    for k in (0..LANES).filter(|k| (lanes >> k) & 1 == 1) {
        (sin[k], cos[k]) = libm::sincos(x[k]);
    }
}

/// One lane of [`sincos8`]: its sine and cosine, and whether they are libm's (false: the
/// caller asks libm).
#[inline(always)]
fn lane(x: f64) -> (f64, f64, bool) {
    let bits = x.to_bits();
    let high = (bits >> 32) as u32 & 0x7fff_ffff;
    let positive = bits >> 63 == 0;
    let small = high <= QUARTER;
    // The multiple of π/2 libm takes off: none up to π/4, then one more past each bound.
    let q = u32::from(high > QUARTER)
        + u32::from(high > LESS_ONE)
        + u32::from(high > LESS_TWO)
        + u32::from(high > LESS_THREE);
    // Where libm takes the multiple off in more pieces, the result nearly cancelling.
    let near_multiple = (high <= LESS_TWO && high & 0xf_ffff == 0x9_21fb)
        || high == 0x4012_d97c
        || high == 0x4019_21fb;
    let in_lanes = small || (positive && high <= LESS_FOUR && !near_multiple);
    // The remainder as head + tail: with q = 0, exactly (x, +0), as libm passes a small angle.
    let qf = f64::from(q);
    let z = x - qf * PIO2_1;
    let head = z - qf * PIO2_1T;
    let tail = (z - head) - qf * PIO2_1T;
    // The kernels, grouped as libm groups them; the sine's has a form without the tail.
    let z = head * head;
    let w = z * z;
    let r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    let v = z * head;
    let s = if small {
        head + v * (S1 + z * r)
    } else {
        head - ((z * (0.5 * tail - v * r) - tail) - v * S1)
    };
    let r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let c = w + (((1.0 - w) - hz) + (z * r - head * tail));
    // The quadrant: q = 1 gives (c, −s), 2 (−s, −c), 3 (−c, s), 0 and 4 (s, c).
    let n = q & 3;
    let (a, b) = if n & 1 == 1 { (c, s) } else { (s, c) };
    let sin = if n >= 2 { -a } else { a };
    let cos = if n == 1 || n == 2 { -b } else { b };
    if high < TINY {
        (x, 1.0, in_lanes)
    } else {
        (sin, cos, in_lanes)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::f32::consts::TAU;

    /// Every angle of `angles` through `sincos` (eight at a time: [`sincos8`] on some vector
    /// path), against libm's, bit for bit.
    pub(crate) fn assert_libm_s(
        angles: &[f64],
        sincos: impl Fn([f64; LANES]) -> [[f64; LANES]; 2],
    ) {
        for chunk in angles.chunks(LANES) {
            let mut x = [0.0; LANES];
            x[..chunk.len()].copy_from_slice(chunk);
            let [sin, cos] = sincos(x);
            for k in 0..LANES {
                let (s, c) = libm::sincos(x[k]);
                let a = x[k];
                assert_eq!(
                    sin[k].to_bits(),
                    s.to_bits(),
                    "sin {a:e} ({:#x})",
                    a.to_bits()
                );
                assert_eq!(
                    cos[k].to_bits(),
                    c.to_bits(),
                    "cos {a:e} ({:#x})",
                    a.to_bits()
                );
            }
        }
    }

    /// The angles a position gives (an `f32` in `[0, 2π]`, widened): one in every `step` of
    /// them all, from 0 up, and the last.
    pub(crate) fn position_angles(step: usize) -> Vec<f64> {
        let top = TAU.to_bits();
        (0..=top)
            .step_by(step)
            .chain([top])
            .map(|b| f64::from(f32::from_bits(b)))
            .collect()
    }

    /// Angles around each bound libm tests, on either side, of both signs (the lanes' own
    /// steps, and the lanes handed to libm: negative angles, past 9π/4, next to a multiple of
    /// π/2, NaN and ±∞), each in every lane position, next to angles of each kind.
    pub(crate) fn bound_angles() -> Vec<f64> {
        let mut angles = vec![0.0, -0.0, f64::NAN, f64::INFINITY, -f64::INFINITY, 1e300];
        angles.extend([f64::MIN_POSITIVE, 5e-324, 1e-30, 100.0, 1e6, 1e9]);
        let highs = [
            TINY,
            QUARTER,
            LESS_ONE,
            LESS_TWO,
            LESS_THREE,
            LESS_FOUR,
            0x3ff9_21fb,
            0x4009_21fb,
            0x4012_d97c,
            0x4019_21fb,
        ];
        for high in highs {
            for h in [high - 1, high, high + 1] {
                for low in [0, 1, 0x5444_2d18, 0x8000_0000, u32::MAX - 1, u32::MAX] {
                    let x = f64::from_bits(u64::from(h) << 32 | u64::from(low));
                    angles.extend([x, -x, x.next_up(), x.next_down()]);
                }
            }
        }
        for f in [
            std::f64::consts::FRAC_PI_4,
            std::f64::consts::FRAC_PI_2,
            std::f64::consts::PI,
            3.0 * std::f64::consts::FRAC_PI_2,
            std::f64::consts::TAU,
            9.0 * std::f64::consts::FRAC_PI_4,
        ] {
            let mut x = f;
            for _ in 0..64 {
                x = x.next_down();
            }
            for _ in 0..128 {
                angles.extend([x, -x, f64::from(x as f32)]);
                x = x.next_up();
            }
        }
        (0..LANES)
            .flat_map(|shift| std::iter::repeat_n(1.0, shift).chain(angles.iter().copied()))
            .collect()
    }

    /// One angle a position gives in every 331, so every octant of the circle at every
    /// exponent. (All 1 086 918 620 of them gave libm's bits when this was written: a step of
    /// 1, 77 s in the test build. `sim::lanes`' test takes one in 4 099 and the bounds' angles
    /// on every vector path.)
    #[test]
    fn eight_lanes_give_libm_s_bits_for_a_position_s_angles() {
        let angles = position_angles(331);
        assert!(angles.len() > 3_000_000);
        assert_libm_s(&angles, |x| sincos8(x).into());
    }

    #[test]
    fn eight_lanes_give_libm_s_bits_at_every_bound() {
        assert_libm_s(&bound_angles(), |x| sincos8(x).into());
    }

    /// The lanes work out every angle a position gives but the four next to a multiple of π/2
    /// that libm reduces in more pieces, and leave to libm what the doc of [`sincos8`] says.
    #[test]
    fn the_lanes_take_a_position_s_angles_and_leave_the_rest() {
        let near_multiple = [0x3ff9_21fb, 0x4009_21fb, 0x4012_d97c, 0x4019_21fb];
        for x in position_angles(331).into_iter().chain(bound_angles()) {
            let high = (x.to_bits() >> 32) as u32 & 0x7fff_ffff;
            let position =
                (0.0..=f64::from(TAU)).contains(&x) && !(x == 0.0 && x.is_sign_negative());
            let small = high <= QUARTER;
            let in_lanes = lane(x).2;
            if small || (position && !near_multiple.contains(&high)) {
                assert!(in_lanes, "{x:e} ({:#x}) left to libm", x.to_bits());
            }
            if !small && (x < 0.0 || high > LESS_FOUR || near_multiple.contains(&high)) {
                assert!(!in_lanes, "{x:e} ({:#x}) in the lanes", x.to_bits());
            }
            if !x.is_finite() {
                assert!(!in_lanes, "{x} in the lanes");
            }
        }
    }
}
