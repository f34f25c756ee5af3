//! Tests of the lanes, the paths and the width-specific sums: every path gives the same bits.

use super::*;

/// Held by the tests that switch the chosen path, so they do not switch it under each other.
static SWITCHING: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn lanes_do_what_a_scalar_does() {
    let a = F8([1.0, -2.0, 3.5, 0.0, -0.0, 8.0, f32::NAN, 1e30]);
    let b = F8::splat(2.0);
    assert_eq!((a + b).0[1], 0.0);
    assert_eq!((a * b).0[2], 7.0);
    assert_eq!((a / b).0[5], 4.0);
    assert_eq!((-a).0[0], -1.0);
    // Masks: all bits where true; `&` keeps the value where true.
    let m = a.cmp_lt(b);
    assert_eq!(m.move_mask(), 0b0001_1011);
    assert_eq!(
        (m & F8::splat(1.0)).0,
        [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    );
    assert_eq!(a.cmp_ge(b).move_mask(), 0b1010_0100);
    // `|` of masks: set where either is; its mask of bits is the two masks' `|`.
    let either = m | a.cmp_ge(b);
    assert_eq!(either.move_mask(), 0b1011_1111);
    assert_eq!(either.move_mask(), m.move_mask() | a.cmp_ge(b).move_mask());
    assert_eq!((F8::splat(1.0) | F8::ZERO).0, [1.0; 8]);
    // max: where either is NaN, the second.
    assert_eq!(a.max(b).0, [2.0, 2.0, 3.5, 2.0, 2.0, 8.0, 2.0, 1e30]);
    assert!(b.max(a).0[6].is_nan());
    assert_eq!(F8::splat(9.0).sqrt().0, [3.0; 8]);
    assert_eq!(F8::select(m, a, b).0[..3], [1.0, -2.0, 2.0]);
    let d = F8([-60.0, -50.0, -49.0, 0.0, 49.0, 50.0, 51.0, 99.0]);
    assert_eq!(
        d.wrap_axis(100.0).0,
        d.0.map(|x| crate::sim::space::wrap_axis(x, 100.0))
    );
}

#[test]
fn the_sum_is_taken_in_one_fixed_order() {
    // 1e8 swallows a 1 (its float spacing is 8): the two halves lose their ones, while a
    // left-to-right sum keeps the last three.
    let x = F8([1e8, 1.0, 1.0, 1.0, -1e8, 1.0, 1.0, 1.0]);
    assert_eq!(x.sum(), 0.0);
    assert_eq!(x.0.iter().sum::<f32>(), 3.0);
}

#[test]
fn every_path_gives_the_same_bits() {
    let f = || {
        let a = F8([0.3, 1.7, -2.2, 9.1, 0.01, 5.5, -7.25, 3.0]);
        let d2 = a * a + F8::splat(0.1);
        let x = (F8::splat(1.0) & d2.cmp_ge(F8::splat(0.5))) / d2.max(F8::splat(0.2)).sqrt();
        // Lanes whose sum depends on the order of adding (see the test above).
        x.sum() + (x.cmp_ge(F8::ZERO) & F8([1e8, 1.0, 1.0, 1.0, -1e8, 1.0, 1.0, 1.0])).sum()
    };
    let _switching = SWITCHING.lock().unwrap_or_else(|e| e.into_inner());
    // The reference is the baseline's (not whatever path the test machine picks).
    CHOSEN.store(Path::Baseline.code(), Ordering::Relaxed);
    let want = vectorized!({ f() });
    for p in PATHS.into_iter().filter(|p| p.supported()) {
        CHOSEN.store(p.code(), Ordering::Relaxed);
        assert_eq!(vectorized!({ f() }).to_bits(), want.to_bits(), "{p:?}");
    }
    CHOSEN.store(0, Ordering::Relaxed);
}

#[test]
fn transposed_lane_sums_are_each_vectors_sum_on_every_path() {
    // Fifteen vectors (a whole group of eight and a short one). Each half of a vector
    // cancels 1e8s so that adding its lanes in any other order gives another sum (1e8 + 1
    // rounds to 1e8), each vector's halves are turned by its own amount, and each is scaled
    // by its own factor: a transpose that mixes up lanes or vectors fails.
    let base = [1e8f32, 1.0, -1e8, 0.5, 2.0, 1e8, 3.0, -1e8];
    let rows: [F8; 15] = std::array::from_fn(|k| {
        F8(std::array::from_fn(|i| {
            let turned = (i / 4) * 4 + (i % 4 + k) % 4;
            base[turned] * (k + 1) as f32
        }))
    });
    let want = rows.map(|r| r.sum().to_bits());
    let _switching = SWITCHING.lock().unwrap_or_else(|e| e.into_inner());
    let mut checked = 0;
    for p in PATHS.into_iter().filter(|p| p.supported()) {
        CHOSEN.store(p.code(), Ordering::Relaxed);
        let got = vectorized!(w => { w.avx().map(|avx| avx.sums(&rows)) });
        assert_eq!(got.is_some(), p != Path::Baseline, "{p:?}");
        if let Some(got) = got {
            assert_eq!(got.map(f32::to_bits), want, "{p:?}");
            checked += 1;
        }
    }
    CHOSEN.store(0, Ordering::Relaxed);
    // Every x86-64 machine this project builds on has AVX2 (checked, not assumed).
    if cfg!(target_arch = "x86_64") && Path::Avx2.supported() {
        assert!(checked >= 1);
    }
}

#[test]
fn names_round_trip_and_the_widest_is_supported() {
    for p in PATHS {
        assert_eq!(Path::parse(p.name()), Some(p));
    }
    assert_eq!(Path::parse("sse9"), None);
    assert_eq!(Path::parse(" AVX2"), Some(Path::Avx2));
    assert_eq!(Path::parse("sse2"), Some(Path::Baseline));
    assert!(Path::widest().supported());
}

#[test]
fn counts_add_one_where_a_mask_is_set_on_every_path() {
    let a = F8([0.5, 3.0, -1.0, 7.0, 2.0, f32::NAN, 9.0, 1.0]);
    let limits = [2.0, 8.0, 0.0, 100.0];
    // Lane by lane, how many limits each value is under (a NaN is under none).
    let want: [u32; 8] =
        a.0.map(|x| limits.iter().filter(|&&l| x < l).count() as u32);
    let count = || {
        let mut n = Counts::ZERO;
        for l in limits {
            n.add(a.cmp_lt(F8::splat(l)));
        }
        n
    };
    let _switching = SWITCHING.lock().unwrap_or_else(|e| e.into_inner());
    for p in PATHS.into_iter().filter(|p| p.supported()) {
        CHOSEN.store(p.code(), Ordering::Relaxed);
        let n = vectorized!({ count() });
        assert_eq!(n.0, want, "{p:?}");
        assert_eq!(n.total(), want.iter().sum::<u32>(), "{p:?}");
    }
    CHOSEN.store(0, Ordering::Relaxed);
    // A mask with no bit set adds nothing.
    let mut n = Counts::ZERO;
    n.add(F8::ZERO);
    assert_eq!(n, Counts::ZERO);
}

#[test]
fn sines_and_cosines_are_libm_s_on_every_path() {
    use crate::sim::trig::{sincos8, tests::*};
    let mut angles = bound_angles();
    angles.extend(position_angles(4099));
    let _switching = SWITCHING.lock().unwrap_or_else(|e| e.into_inner());
    for p in PATHS.into_iter().filter(|p| p.supported()) {
        CHOSEN.store(p.code(), Ordering::Relaxed);
        assert_libm_s(&angles, |x| vectorized!({ sincos8(x) }).into());
    }
    CHOSEN.store(0, Ordering::Relaxed);
}

#[test]
fn the_chosen_path_is_read_back_as_it_was_stored() {
    for p in PATHS {
        assert_eq!(Path::from_code(p.code()), p);
    }
}
