//! Eight `f32` lanes for the neighbour scans, and the vector width they run at, chosen when the
//! program starts rather than when it was built: one binary runs on every x86-64 CPU and uses
//! AVX-512 or AVX2 where the CPU has them (SSE2, the x86-64 baseline, elsewhere; `simd128` in a
//! browser build made with it; NEON on ARM).
//!
//! [`F8`] is plain arithmetic on an array of eight lanes, each lane the IEEE operation a scalar
//! would do; [`vectorized!`] compiles the code it is given once per width and runs the one this
//! CPU supports. Every lane does the same operations in the same order at any width and every
//! sum over the lanes is reduced in one fixed order ([`F8::sum`]), so results are bit-identical
//! whichever path runs (`tests/vector_paths.rs` forces each path and compares the files).
//! Where LLVM does not find good code for plain lane arithmetic on its own, a block asks for
//! its [`Width`] and uses code written for it (the AVX paths' transposing lane sums,
//! [`Avx::sums`]). The path can be forced with the environment variable `PANDEMIC_BOIDS_SIMD`
//! (`baseline`, `avx2`, `avx512`); [`Path::current`] says which one runs. No systems live here.

use std::ops::{Add, AddAssign, BitAnd, Div, Mul, Neg, Sub, SubAssign};
use std::sync::atomic::{AtomicU8, Ordering};

/// Eight `f32` lanes. Comparisons give masks (every bit set where true, 0 where false) that
/// `&` with a value to keep it where true.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(32))]
pub struct F8(pub [f32; 8]);

macro_rules! lanewise {
    ($($trait:ident $fn:ident $op:tt),*) => {$(
        impl $trait for F8 {
            type Output = F8;
            #[inline(always)]
            fn $fn(self, o: F8) -> F8 {
                F8(std::array::from_fn(|i| self.0[i] $op o.0[i]))
            }
        }
    )*};
}
lanewise!(Add add +, Sub sub -, Mul mul *, Div div /);

impl AddAssign for F8 {
    #[inline(always)]
    fn add_assign(&mut self, o: F8) {
        *self = *self + o;
    }
}

impl SubAssign for F8 {
    #[inline(always)]
    fn sub_assign(&mut self, o: F8) {
        *self = *self - o;
    }
}

impl Neg for F8 {
    type Output = F8;
    #[inline(always)]
    fn neg(self) -> F8 {
        F8(self.0.map(|x| -x))
    }
}

impl BitAnd for F8 {
    type Output = F8;
    #[inline(always)]
    fn bitand(self, o: F8) -> F8 {
        F8(std::array::from_fn(|i| {
            f32::from_bits(self.0[i].to_bits() & o.0[i].to_bits())
        }))
    }
}

impl From<[f32; 8]> for F8 {
    #[inline(always)]
    fn from(a: [f32; 8]) -> F8 {
        F8(a)
    }
}

/// The mask lane for `b`: every bit set, or none.
#[inline(always)]
fn mask(b: bool) -> f32 {
    f32::from_bits(if b { u32::MAX } else { 0 })
}

macro_rules! comparisons {
    ($($fn:ident $op:tt),*) => {$(
        #[doc = concat!("Lane mask of `self ", stringify!($op), " o`.")]
        #[inline(always)]
        pub fn $fn(self, o: F8) -> F8 {
            F8(std::array::from_fn(|i| mask(self.0[i] $op o.0[i])))
        }
    )*};
}

impl F8 {
    /// Every lane 0.
    pub const ZERO: F8 = F8([0.0; 8]);

    /// Every lane `x`.
    #[inline(always)]
    pub fn splat(x: f32) -> F8 {
        F8([x; 8])
    }

    /// Lanes `a[k..k + 8]` (the arrays scanned are padded to whole groups of eight).
    #[inline(always)]
    pub fn load(a: &[f32], k: usize) -> F8 {
        F8(a[k..k + 8].try_into().expect("lane arrays are padded"))
    }

    comparisons!(cmp_eq ==, cmp_lt <, cmp_le <=, cmp_gt >, cmp_ge >=);

    /// The larger of each pair, as the x86 `max` instruction gives it: `self` where `self > o`,
    /// else `o` (so `o` where either is NaN) — one instruction at every width.
    #[inline(always)]
    pub fn max(self, o: F8) -> F8 {
        F8(std::array::from_fn(|i| {
            let (a, b) = (self.0[i], o.0[i]);
            if a > b { a } else { b }
        }))
    }

    /// `a` in the lanes where `mask` is set, `b` elsewhere.
    #[inline(always)]
    pub fn select(mask: F8, a: F8, b: F8) -> F8 {
        F8(std::array::from_fn(|i| {
            if mask.0[i].to_bits() != 0 {
                a.0[i]
            } else {
                b.0[i]
            }
        }))
    }

    /// Square root of each lane.
    #[inline(always)]
    pub fn sqrt(self) -> F8 {
        F8(self.0.map(f32::sqrt))
    }

    /// Bit `i` set where lane `i`'s sign bit is (a mask's true lanes).
    #[inline(always)]
    pub fn move_mask(self) -> u32 {
        let mut bits = 0;
        for (i, x) in self.0.iter().enumerate() {
            bits |= (x.to_bits() >> 31) << i;
        }
        bits
    }

    /// Each lane wrapped into `(−L/2, L/2]` as `space::wrap_axis` wraps a difference of two
    /// in-world coordinates (within `(−L, L)`): `L` subtracted above `L/2`, added at or below
    /// `−L/2`.
    #[inline(always)]
    pub fn wrap_axis(self, l: f32) -> F8 {
        let (lv, hv) = (F8::splat(l), F8::splat(0.5 * l));
        (self - (self.cmp_gt(hv) & lv)) + (self.cmp_le(-hv) & lv)
    }

    /// The lanes added in one fixed order, `(((a0+a1)+a2)+a3) + (((a4+a5)+a6)+a7)`: the same
    /// sum at every vector width.
    #[inline(always)]
    pub fn sum(self) -> f32 {
        let a = self.0;
        (((a[0] + a[1]) + a[2]) + a[3]) + (((a[4] + a[5]) + a[6]) + a[7])
    }
}

/// A vector width the scans can run at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// What every CPU of the architecture has: SSE2 on x86-64, NEON on 64-bit ARM, `simd128`
    /// in a browser build made with it, scalar elsewhere.
    Baseline,
    /// x86-64 with AVX2 and FMA (256-bit vectors).
    Avx2,
    /// x86-64 with AVX-512 (F, VL, BW, DQ) as well.
    Avx512,
}

/// Every path, narrowest first.
pub const PATHS: [Path; 3] = [Path::Baseline, Path::Avx2, Path::Avx512];

/// The environment variable that forces a path.
pub const ENV: &str = "PANDEMIC_BOIDS_SIMD";

/// The chosen path as [`Path::code`]; 0 until the first use.
static CHOSEN: AtomicU8 = AtomicU8::new(0);

impl Path {
    /// The name `PANDEMIC_BOIDS_SIMD` takes and `bench` prints.
    pub fn name(self) -> &'static str {
        match self {
            Path::Baseline => "baseline",
            Path::Avx2 => "avx2",
            Path::Avx512 => "avx512",
        }
    }

    /// What the path means on this build, e.g. "avx2 (256-bit)".
    pub fn describe(self) -> String {
        let base = if cfg!(target_arch = "x86_64") {
            "SSE2, 128-bit"
        } else if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
            "wasm simd128, 128-bit"
        } else if cfg!(target_arch = "aarch64") {
            "NEON, 128-bit"
        } else {
            "scalar"
        };
        match self {
            Path::Baseline => format!("baseline ({base})"),
            Path::Avx2 => "avx2 (AVX2 + FMA, 256-bit)".to_string(),
            Path::Avx512 => "avx512 (AVX-512 F/VL/BW/DQ)".to_string(),
        }
    }

    /// The path named `name` (as [`Path::name`] gives it, in any case; `sse2` is `baseline`).
    pub fn parse(name: &str) -> Option<Path> {
        let name = name.trim().to_ascii_lowercase();
        if name == "sse2" {
            return Some(Path::Baseline);
        }
        PATHS.into_iter().find(|p| p.name() == name)
    }

    /// Whether `PANDEMIC_BOIDS_SIMD` chose the path (rather than the CPU's widest).
    pub fn forced() -> bool {
        std::env::var(ENV).is_ok_and(|v| !v.trim().is_empty())
    }

    fn code(self) -> u8 {
        self as u8 + 1
    }

    fn from_code(c: u8) -> Path {
        PATHS[(c - 1) as usize]
    }

    /// Whether this CPU can run the path.
    pub fn supported(self) -> bool {
        match self {
            Path::Baseline => true,
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => {
                Path::Avx2.supported()
                    && std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512dq")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The widest path this CPU supports.
    pub fn widest() -> Path {
        PATHS
            .into_iter()
            .rev()
            .find(|p| p.supported())
            .unwrap_or(Path::Baseline)
    }

    /// The path the scans run at: `PANDEMIC_BOIDS_SIMD` if set (see [`Path::from_env`]),
    /// else the widest this CPU supports. Chosen once.
    pub fn current() -> Path {
        match CHOSEN.load(Ordering::Relaxed) {
            0 => {
                let p = Path::from_env().unwrap_or_else(|_| Path::widest());
                CHOSEN.store(p.code(), Ordering::Relaxed);
                p
            }
            c => Path::from_code(c),
        }
    }

    /// The path `PANDEMIC_BOIDS_SIMD` asks for (the widest supported when unset or empty), or
    /// a one-line error naming the problem and the fix. The command line checks this first,
    /// so a bad value stops a run instead of being ignored.
    pub fn from_env() -> Result<Path, String> {
        let Ok(value) = std::env::var(ENV) else {
            return Ok(Path::widest());
        };
        if value.trim().is_empty() {
            return Ok(Path::widest());
        }
        let names = PATHS.map(Path::name).join(", ");
        let path = Path::parse(&value).ok_or_else(|| {
            format!(
                "{ENV}={value:?} is not a vector path: use one of {names} (sse2 is baseline), \
                 or unset it"
            )
        })?;
        if !path.supported() {
            let can: Vec<_> = PATHS
                .into_iter()
                .filter(|p| p.supported())
                .map(Path::name)
                .collect();
            return Err(format!(
                "{ENV}={value:?}: this CPU cannot run that path; use {} or unset it",
                can.join(" or ")
            ));
        }
        Ok(path)
    }
}

/// Runs a block compiled for the [`Path::current`] vector width: `vectorized!({ … })`, or
/// `vectorized!(w => { … })` to have the block's [`Width`] as `w` (for the operations written
/// once per width, such as [`Width::sums`]). The block is compiled once per path, each copy
/// inside a function built for that path's instructions, so whatever it inlines (every [`F8`]
/// operation is `#[inline(always)]`) uses them. (A macro, not a function taking a closure: one
/// closure called from every path would be compiled once, for the baseline; and the block's
/// closure is always inlined into each path's function: left to the inliner, a large block
/// stays a function of its own, built for the baseline.) Meant for whole scans — a
/// neighbourhood, a strip of candidates — where the choice costs a load and a branch.
macro_rules! vectorized {
    ($body:block) => {
        $crate::sim::lanes::vectorized!(_w => $body)
    };
    ($w:pat => $body:block) => {
        match $crate::sim::lanes::Path::current() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Path::current` only returns a path this CPU supports, and both wide
            // paths have AVX.
            $crate::sim::lanes::Path::Avx512 => unsafe {
                let $w = $crate::sim::lanes::Avx::assume();
                $crate::sim::lanes::avx512(
                    #[inline(always)]
                    || $body,
                )
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            $crate::sim::lanes::Path::Avx2 => unsafe {
                let $w = $crate::sim::lanes::Avx::assume();
                $crate::sim::lanes::avx2(
                    #[inline(always)]
                    || $body,
                )
            },
            _ => {
                let $w = $crate::sim::lanes::Baseline;
                $body
            }
        }
    };
}
pub(crate) use vectorized;

/// What a block run by [`vectorized!`] knows of its vector width: which of the operations
/// written for a width by hand it may use (for the few places where LLVM does not find good
/// code from plain lane arithmetic on its own). Known when the block is compiled, so the test
/// costs nothing.
pub trait Width: Copy {
    /// The AVX operations, on the paths that have them.
    fn avx(self) -> Option<Avx>;
}

/// The baseline width: SSE2 on x86-64 (two 128-bit halves), plain lanes elsewhere.
#[derive(Clone, Copy, Debug)]
pub struct Baseline;

impl Width for Baseline {
    #[inline(always)]
    fn avx(self) -> Option<Avx> {
        None
    }
}

/// The AVX2 and AVX-512 paths (both have AVX's 256-bit vectors). Only [`vectorized!`] makes
/// one, on a CPU that has AVX.
#[derive(Clone, Copy, Debug)]
pub struct Avx(());

impl Width for Avx {
    #[inline(always)]
    fn avx(self) -> Option<Avx> {
        Some(self)
    }
}

impl Avx {
    /// # Safety
    /// The CPU must have AVX (every path but the baseline does).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn assume() -> Avx {
        Avx(())
    }

    /// `rows[k].sum()` for every `k`, bit for bit: the lane sums of many vectors, eight at a
    /// time by transposing them (left to itself, LLVM gathered the lanes from memory on the
    /// AVX-512 path, which cost a third of that path's flocking scan).
    #[inline(always)]
    pub fn sums<const N: usize>(self, rows: &[F8; N]) -> [f32; N] {
        let mut out = [0.0; N];
        #[cfg(target_arch = "x86_64")]
        for (rows, out) in rows.chunks(8).zip(out.chunks_mut(8)) {
            let eight = std::array::from_fn(|k| rows.get(k).copied().unwrap_or(F8::ZERO));
            // SAFETY: an `Avx` exists only on a CPU with AVX.
            let sums = unsafe { x86::sums_avx(&eight) };
            out.copy_from_slice(&sums.0[..out.len()]);
        }
        #[cfg(not(target_arch = "x86_64"))]
        for (s, r) in out.iter_mut().zip(rows) {
            *s = r.sum();
        }
        out
    }
}

/// The transposing lane sums of [`Width::sums`] in AVX instructions.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::F8;
    use std::arch::x86_64::*;

    /// Lane `k`: `rows[k].sum()`, with AVX: an 8 × 8 transpose, then the columns added in
    /// [`F8::sum`]'s order.
    ///
    /// # Safety
    /// The CPU must have AVX.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn sums_avx(rows: &[F8; 8]) -> F8 {
        // SAFETY: F8 is 32 bytes aligned to 32.
        let r = |k: usize| unsafe { _mm256_load_ps(rows[k].0.as_ptr()) };
        // Pairs of rows interleaved: lo = r[a][0] r[b][0] r[a][1] r[b][1] | the same of lanes 4
        // and 5; hi the same of lanes 2, 3 | 6, 7.
        let (t0, t1) = (
            _mm256_unpacklo_ps(r(0), r(1)),
            _mm256_unpackhi_ps(r(0), r(1)),
        );
        let (t2, t3) = (
            _mm256_unpacklo_ps(r(2), r(3)),
            _mm256_unpackhi_ps(r(2), r(3)),
        );
        let (t4, t5) = (
            _mm256_unpacklo_ps(r(4), r(5)),
            _mm256_unpackhi_ps(r(4), r(5)),
        );
        let (t6, t7) = (
            _mm256_unpacklo_ps(r(6), r(7)),
            _mm256_unpackhi_ps(r(6), r(7)),
        );
        // Lane j | j + 4 of four rows: s_j of rows 0-3, u_j of rows 4-7.
        let s0 = _mm256_shuffle_ps::<0x44>(t0, t2);
        let s1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
        let s2 = _mm256_shuffle_ps::<0x44>(t1, t3);
        let s3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
        let u0 = _mm256_shuffle_ps::<0x44>(t4, t6);
        let u1 = _mm256_shuffle_ps::<0xEE>(t4, t6);
        let u2 = _mm256_shuffle_ps::<0x44>(t5, t7);
        let u3 = _mm256_shuffle_ps::<0xEE>(t5, t7);
        // Column j: lane j of every row.
        let c0 = _mm256_permute2f128_ps::<0x20>(s0, u0);
        let c1 = _mm256_permute2f128_ps::<0x20>(s1, u1);
        let c2 = _mm256_permute2f128_ps::<0x20>(s2, u2);
        let c3 = _mm256_permute2f128_ps::<0x20>(s3, u3);
        let c4 = _mm256_permute2f128_ps::<0x31>(s0, u0);
        let c5 = _mm256_permute2f128_ps::<0x31>(s1, u1);
        let c6 = _mm256_permute2f128_ps::<0x31>(s2, u2);
        let c7 = _mm256_permute2f128_ps::<0x31>(s3, u3);
        let front = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), c2), c3);
        let back = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c4, c5), c6), c7);
        let mut out = F8::ZERO;
        // SAFETY: as above.
        unsafe { _mm256_store_ps(out.0.as_mut_ptr(), _mm256_add_ps(front, back)) };
        out
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma,sse3,ssse3,sse4.1,sse4.2,popcnt,bmi1,bmi2,lzcnt")]
#[doc(hidden)]
pub unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(
    enable = "avx,avx2,fma,sse3,ssse3,sse4.1,sse4.2,popcnt,bmi1,bmi2,lzcnt,avx512f,avx512vl,avx512bw,avx512dq"
)]
#[doc(hidden)]
pub unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(test)]
mod tests {
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
}
