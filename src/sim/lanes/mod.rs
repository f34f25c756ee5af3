//! Eight `f32` lanes for the neighbour scans, and the vector width they run at, chosen when the
//! program starts rather than when it was built: one binary runs on every x86-64 CPU and uses
//! AVX-512 or AVX2 where the CPU has them (SSE2, the x86-64 baseline, elsewhere; `simd128` in a
//! browser build made with it; NEON on ARM).
//!
//! [`F8`] is plain arithmetic on an array of eight lanes, each lane the IEEE operation a scalar
//! would do, and [`Counts`] counts the lanes where [`F8`]'s comparisons hold; [`vectorized!`]
//! compiles the code it is given once per width and runs the one this CPU supports. Every lane
//! does the same operations in the same order at any width and every sum over the lanes is
//! reduced in one fixed order ([`F8::sum`]), so results are bit-identical whichever path runs
//! (`tests/vector_paths.rs` forces each path and compares the files).
//! Where LLVM does not find good code for plain lane arithmetic on its own, a block asks for
//! its [`Width`] and uses code written for it (the AVX paths' transposing lane sums,
//! [`Avx::sums`]). The path can be forced with the environment variable `PANDEMIC_BOIDS_SIMD`
//! (`baseline`, `avx2`, `avx512`); [`Path::current`] says which one runs. No systems live here.

mod width;

pub use width::{Avx, Baseline, Width};

use std::ops::{Add, AddAssign, BitAnd, BitOr, Div, Mul, Neg, Sub, SubAssign};
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

impl BitOr for F8 {
    type Output = F8;
    #[inline(always)]
    fn bitor(self, o: F8) -> F8 {
        F8(std::array::from_fn(|i| {
            f32::from_bits(self.0[i].to_bits() | o.0[i].to_bits())
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

    /// Bit `i` set where lane `i`'s sign bit is (a mask's true lanes). On x86-64 two `movmskps`
    /// (SSE, in every x86-64 CPU): the lane-by-lane loop compiled to a dozen shifts and ors.
    #[inline(always)]
    pub fn move_mask(self) -> u32 {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_loadu_ps, _mm_movemask_ps};
            let half = |at: usize| {
                // SAFETY: SSE is part of x86-64's baseline, and the load reads lanes
                // `at..at + 4` of the eight.
                unsafe { _mm_movemask_ps(_mm_loadu_ps(self.0[at..at + 4].as_ptr())) as u32 }
            };
            half(0) | (half(4) << 4)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let mut bits = 0;
            for (i, x) in self.0.iter().enumerate() {
                bits |= (x.to_bits() >> 31) << i;
            }
            bits
        }
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

/// Eight `u32` counts, one per lane, for counting the lanes where masks are set: adding a mask
/// is one integer subtraction (a set lane is −1 as an integer), where counting in [`F8`] takes
/// an `&` with 1.0 and a float addition.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(32))]
pub struct Counts(pub [u32; 8]);

impl Counts {
    /// Every lane 0.
    pub const ZERO: Counts = Counts([0; 8]);

    /// One more in each lane where `mask` is set (every bit set, as [`F8`]'s comparisons
    /// give it; a lane with no bit set adds nothing).
    #[inline(always)]
    pub fn add(&mut self, mask: F8) {
        self.0 = std::array::from_fn(|i| self.0[i].wrapping_sub(mask.0[i].to_bits()));
    }

    /// The lanes' counts added up.
    #[inline(always)]
    pub fn total(self) -> u32 {
        self.0.iter().fold(0, |a, &c| a.wrapping_add(c))
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

    #[inline]
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
    /// else the widest this CPU supports. Chosen once; after that a load and a compare, inlined
    /// into every scan (each boid's flocking scan asks).
    #[inline]
    pub fn current() -> Path {
        match CHOSEN.load(Ordering::Relaxed) {
            0 => Path::choose(),
            c => Path::from_code(c),
        }
    }

    #[cold]
    #[inline(never)]
    fn choose() -> Path {
        let p = Path::from_env().unwrap_or_else(|_| Path::widest());
        CHOSEN.store(p.code(), Ordering::Relaxed);
        p
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
/// once per width, such as [`Avx::sums`]). The block is compiled once per path, each copy
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
mod tests;
