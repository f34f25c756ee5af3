//! What a block run by [`vectorized!`](super::vectorized) knows of the vector width it is
//! compiled for ([`Width`]: [`Baseline`] or [`Avx`]), and the few operations written by hand for
//! a width where LLVM does not find good code from plain lane arithmetic on its own: the AVX
//! paths' transposing lane sums ([`Avx::sums`]) and 8 × 8 transposes ([`Avx::columns`]). The
//! other hand-written AVX code is the metrics sample's flock test, `FlockTest::block_avx` in
//! `sim/metrics/flocks.rs`, and Model B's force for eight boids, `force8_avx` in
//! `sim/flocking/batch.rs`. No systems live here.

use super::F8;

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

    /// The columns of eight rows: `out[j].0[k] == rows[k].0[j]`, by an 8 × 8 transpose (how
    /// [`Avx::sums`] starts).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn columns(self, rows: &[F8; 8]) -> [F8; 8] {
        // SAFETY: an `Avx` exists only on a CPU with AVX.
        unsafe { x86::columns_avx(rows) }
    }
}

/// Eight lanes in and out of an AVX register, for the blocks written in AVX instructions.
#[cfg(target_arch = "x86_64")]
impl F8 {
    /// The lanes as an AVX register.
    ///
    /// # Safety
    /// Called from code without AVX enabled, the CPU must have AVX.
    #[inline]
    #[target_feature(enable = "avx")]
    pub fn m256(self) -> std::arch::x86_64::__m256 {
        // SAFETY: an F8 is 32 bytes aligned to 32.
        unsafe { std::arch::x86_64::_mm256_load_ps(self.0.as_ptr()) }
    }

    /// The lanes of an AVX register.
    ///
    /// # Safety
    /// Called from code without AVX enabled, the CPU must have AVX.
    #[inline]
    #[target_feature(enable = "avx")]
    pub fn from_m256(v: std::arch::x86_64::__m256) -> F8 {
        let mut out = F8::ZERO;
        // SAFETY: as in `m256`.
        unsafe { std::arch::x86_64::_mm256_store_ps(out.0.as_mut_ptr(), v) };
        out
    }
}

/// The transposing lane sums of [`Avx::sums`] in AVX instructions.
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
        let [c0, c1, c2, c3, c4, c5, c6, c7] = transpose(rows);
        let front = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), c2), c3);
        let back = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c4, c5), c6), c7);
        F8::from_m256(_mm256_add_ps(front, back))
    }

    /// The columns of eight rows ([`Avx::columns`](super::Avx::columns)).
    ///
    /// # Safety
    /// The CPU must have AVX.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn columns_avx(rows: &[F8; 8]) -> [F8; 8] {
        transpose(rows).map(|c| F8::from_m256(c))
    }

    /// Column `j` of eight rows: lane `j` of every row, by an 8 × 8 transpose.
    #[inline]
    #[target_feature(enable = "avx")]
    fn transpose(rows: &[F8; 8]) -> [__m256; 8] {
        let r = |k: usize| rows[k].m256();
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
        [
            _mm256_permute2f128_ps::<0x20>(s0, u0),
            _mm256_permute2f128_ps::<0x20>(s1, u1),
            _mm256_permute2f128_ps::<0x20>(s2, u2),
            _mm256_permute2f128_ps::<0x20>(s3, u3),
            _mm256_permute2f128_ps::<0x31>(s0, u0),
            _mm256_permute2f128_ps::<0x31>(s1, u1),
            _mm256_permute2f128_ps::<0x31>(s2, u2),
            _mm256_permute2f128_ps::<0x31>(s3, u3),
        ]
    }
}
