//! The flocking and structure measures of docs/model.md §8 as pure functions over positions
//! and velocities: polarisation, cohesion and RMS separation, nearest neighbours, flocks
//! (connected groups), and each flock's milling and elongation. No systems live here.

use std::sync::atomic::{AtomicU32, Ordering};

use bevy::prelude::*;

use crate::sim::config::SimConfig;
use crate::sim::lanes::{Avx, F8};
use crate::sim::math::unit;
use crate::sim::neighbours::{ISOLATED_LANE, IndexRef, Lanes, NeighbourIndex, Snapshot, Targets};
use crate::sim::space::{CentroidSums, Space};
use crate::sim::swarm::Swarm;

/// `|Σ unit(v_i)| / N` (0 = disorder, 1 = aligned); `None` without boids.
pub fn polarisation(velocities: impl IntoIterator<Item = Vec2>) -> Option<f64> {
    let (mut sum, mut n) = (Vec2::ZERO, 0usize);
    for v in velocities {
        sum += unit(v);
        n += 1;
    }
    (n > 0).then(|| sum.length() as f64 / n as f64)
}

/// Cohesion (mean distance to the centroid) and rms separation `sqrt(2Σ|p − c|²/(N − 1))`,
/// both torus-correct. Rms separation needs two boids.
pub fn cohesion_and_rms(space: &Space, points: &[Vec2]) -> (Option<f64>, Option<f64>) {
    cohesion_and_rms_of(space, points.iter().copied())
}

/// [`cohesion_and_rms`] of the points an iterator gives (read twice, in order), so a sample
/// measures a swarm without a copy of its points.
pub fn cohesion_and_rms_of(
    space: &Space,
    points: impl Iterator<Item = Vec2> + Clone,
) -> (Option<f64>, Option<f64>) {
    cohesion_and_rms_about(space, space.centroid(points.clone()), points)
}

/// [`cohesion_and_rms_of`] given the points' centroid (`None`: there are none), worked out by
/// the caller (see [`Space::centroid_term`]).
pub fn cohesion_and_rms_about(
    space: &Space,
    centroid: Option<Vec2>,
    points: impl Iterator<Item = Vec2>,
) -> (Option<f64>, Option<f64>) {
    let Some(c) = centroid else {
        return (None, None);
    };
    let (mut sum, mut sum2, mut count) = (0.0f64, 0.0f64, 0usize);
    for p in points {
        let d = space.displacement(c, p).length() as f64;
        sum += d;
        sum2 += d * d;
        count += 1;
    }
    let n = count as f64;
    let rms = (count > 1).then(|| (2.0 * sum2 / (n - 1.0)).sqrt());
    (Some(sum / n), rms)
}

/// Distance from slot `i` to the nearest other boid of the same swarm, searching outward from
/// `radius` and falling back to a full scan; `None` if it is alone in its swarm.
pub fn nearest_same_swarm(
    index: &impl NeighbourIndex,
    snapshot: &Snapshot,
    i: usize,
    radius: f32,
) -> Option<f32> {
    let space = snapshot.space();
    let swarm = snapshot.swarm[i];
    let limit = search_limit(&space);
    let mut r = first_search_radius(&space, radius);
    loop {
        let mut best = f32::INFINITY;
        index.for_each_within(snapshot.pos[i], r, |j, off| {
            if j != i && snapshot.swarm[j] == swarm {
                best = best.min(off.length());
            }
        });
        if best.is_finite() {
            return Some(best);
        }
        if r >= limit || r > 1e7 {
            break;
        }
        r = (r * 2.0).min(limit);
    }
    // Beyond the largest unique query radius: scan (rare; only isolated boids get here).
    (0..snapshot.len())
        .filter(|&j| j != i && snapshot.swarm[j] == swarm)
        .map(|j| space.distance(snapshot.pos[i], snapshot.pos[j]))
        .min_by(f32::total_cmp)
}

/// The largest radius [`nearest_same_swarm`] queries before scanning every boid: just under
/// half the smaller side on a torus (a larger disc would meet boids twice).
fn search_limit(space: &Space) -> f32 {
    if space.wraps() {
        0.5 * space.width.min(space.height) * 0.999
    } else {
        f32::INFINITY
    }
}

/// The radius [`nearest_same_swarm`] first queries when asked to start at `radius`.
fn first_search_radius(space: &Space, radius: f32) -> f32 {
    radius.max(1.0).min(search_limit(space))
}

/// Union-find over slots, shared by the threads of a traversal. A join links the larger root
/// under the smaller (`parent[x] ≤ x` always), so every group's root ends as its lowest slot
/// whatever the order of the joins, on any number of threads.
struct Groups {
    parent: Vec<AtomicU32>,
}

impl Groups {
    fn new(n: usize) -> Self {
        Self {
            parent: (0..n as u32).map(AtomicU32::new).collect(),
        }
    }

    #[inline]
    fn root(&self, mut x: u32) -> u32 {
        loop {
            let p = self.parent[x as usize].load(Ordering::Acquire);
            if p == x {
                return x;
            }
            let grand = self.parent[p as usize].load(Ordering::Acquire);
            if grand == p {
                // `x` hangs from the root already: nothing to halve, and no write (a locked
                // write of the same value would still take the cache line from other threads).
                return p;
            }
            // Path halving; if another thread moved `x` meanwhile, its new parent is as good.
            let _ = self.parent[x as usize].compare_exchange(
                p,
                grand,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            x = grand;
        }
    }

    /// Every slot's root (its group's lowest slot), in the parents' own array: visited in
    /// order, a slot's parent, never above it, has its root already.
    fn into_roots(self) -> Vec<u32> {
        let mut root: Vec<u32> = self.parent.into_iter().map(AtomicU32::into_inner).collect();
        for i in 0..root.len() {
            root[i] = root[root[i] as usize];
        }
        root
    }

    /// Puts `a` and `b` in one group; returns a root they shared on the way out.
    fn join(&self, a: u32, b: u32) -> u32 {
        loop {
            let (ra, rb) = (self.root(a), self.root(b));
            if ra == rb {
                return ra;
            }
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            // Only while `hi` is still a root; otherwise look again.
            let linked = self.parent[hi as usize].compare_exchange(
                hi,
                lo,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            if linked.is_ok() {
                return lo;
            }
        }
    }
}

/// One boid's links in [`flocks_and_nearest`]: it joins the groups of boid `i` and each other
/// boid of its swarm it hears of, and keeps the nearest squared distance among them.
struct Link<'a> {
    groups: &'a Groups,
    swarms: &'a [Swarm],
    isolated: &'a [bool],
    i: usize,
    swarm: Swarm,
    /// A root of `i`'s group (see [`flocks_and_nearest`]).
    root_i: u32,
    best2: f32,
}

impl Link<'_> {
    /// Boid `j` is within the radius, `d2` its squared distance: if it is another of `i`'s
    /// swarm, `best2` keeps the smaller of the two, and the link of `i` and `j` is joined from
    /// the lower slot's side (the other side skips it). Always inlined: it runs once a
    /// neighbour, inside the scan's loop, and as a call it passed its arguments through
    /// memory.
    #[inline(always)]
    fn hit(&mut self, j: usize, d2: f32) {
        if j != self.i && self.swarms[j] == self.swarm {
            self.best2 = self.best2.min(d2);
            if j > self.i {
                self.join(j);
            }
        }
    }

    /// [`Link::hit`] for the neighbours the lanes pass on ([`flocks_and_nearest`]): either one
    /// of `i`'s swarm at a distance, not isolated and ahead of `i` (its distance already taken
    /// by the lanes), whose link is joined; or one the lanes could not sort out (at `i`'s very
    /// point, or isolated, `i` itself among them), taken as [`Link::hit`] takes it but joined
    /// whichever slot is lower.
    #[inline(always)]
    fn hit_kept(&mut self, j: usize, d2: f32) {
        if d2 > 0.0 && !self.isolated[j] {
            self.join(j);
        } else if j != self.i && self.swarms[j] == self.swarm {
            self.best2 = self.best2.min(d2);
            self.join(j);
        }
    }

    /// `j`'s group joined with `i`'s, unless it is `i`'s already.
    #[inline(always)]
    fn join(&mut self, j: usize) {
        if self.groups.root(j as u32) != self.root_i {
            self.root_i = self.groups.join(self.i as u32, j as u32);
        }
    }
}

/// The flock pass's test of a block of eight neighbourhood entries around one boid (see
/// [`flocks_and_nearest`]), in two forms that give the same bits: AVX instructions on the
/// AVX2 and AVX-512 paths, plain lanes on the baseline path (and in the test that compares the
/// two). On the AVX2 path LLVM compiled the plain form by carrying its masks through 128-bit
/// halves, packing and widening them between the tests: about a hundred instructions a block.
#[derive(Clone, Copy)]
struct FlockTest {
    /// The boid's swarm index as a float, as [`Lanes::swarm`] holds it.
    swarm: f32,
    /// The boid's position, px, as the world holds it.
    centre: Vec2,
    /// Its swarm's alignment radius, squared, px².
    r2: f32,
}

impl FlockTest {
    /// Lowers `nearest[k]` (a squared distance's bits) to `d2[k]`, if smaller, where lane `k`
    /// holds a boid of this boid's swarm with `0 < d2 < r2`. Returns the bits of the lanes to
    /// pass on one by one: boids of the swarm with `d2 > 0` ahead of this one (greater y, or
    /// equal y and greater x), boids of the swarm at `d2 = 0` (this one among them), and
    /// isolated boids. The caller keeps only the bits of lanes within the radius.
    #[inline(always)]
    fn block(&self, l: &Lanes, d2: F8, avx: Option<Avx>, nearest: &mut [u32; 8]) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if avx.is_some() {
            // SAFETY: an `Avx` exists only on a CPU with AVX.
            return unsafe { self.block_avx(l, d2, nearest) };
        }
        let _ = avx;
        self.block_lanes(l, d2, nearest)
    }

    /// [`FlockTest::block`] in plain lanes.
    #[inline(always)]
    fn block_lanes(&self, l: &Lanes, d2: F8, nearest: &mut [u32; 8]) -> u32 {
        let same = l.swarm.cmp_eq(F8::splat(self.swarm));
        let apart = same & d2.cmp_gt(F8::ZERO);
        // +∞ added to the other lanes (+0 to these leaves them as they are). The minimum of
        // floats of one sign is that of their bits as integers, an instruction LLVM keeps as it
        // is: a float minimum of the value in memory became a masked store, slow on AMD
        // processors.
        let (zero, far) = (F8::ZERO, F8::splat(f32::INFINITY));
        let apart_d2 = d2 + F8::select(apart & d2.cmp_lt(F8::splat(self.r2)), zero, far);
        for (m, d) in nearest.iter_mut().zip(apart_d2.0) {
            *m = (*m).min(d.to_bits());
        }
        let (cx, cy) = (F8::splat(self.centre.x), F8::splat(self.centre.y));
        let ahead = apart & (l.y.cmp_gt(cy) | (l.y.cmp_eq(cy) & l.x.cmp_gt(cx)));
        let at_i = same & d2.cmp_eq(F8::ZERO);
        (ahead | at_i | l.swarm.cmp_eq(F8::splat(ISOLATED_LANE))).move_mask()
    }

    /// [`FlockTest::block`] in AVX instructions: the same tests (ordered comparisons, false
    /// with a NaN, as Rust's), and the minimum as floats, which for these (positive or +∞)
    /// is that of their bits; a NaN, which no position gives, would be passed over by both.
    ///
    /// # Safety
    /// The CPU must have AVX.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    #[target_feature(enable = "avx")]
    unsafe fn block_avx(&self, l: &Lanes, d2: F8, nearest: &mut [u32; 8]) -> u32 {
        use std::arch::x86_64::*;
        // SAFETY: an F8 is 32 bytes aligned to 32; `nearest` is read and written unaligned.
        let (swarm, x, y, d2) = unsafe {
            (
                _mm256_load_ps(l.swarm.0.as_ptr()),
                _mm256_load_ps(l.x.0.as_ptr()),
                _mm256_load_ps(l.y.0.as_ptr()),
                _mm256_load_ps(d2.0.as_ptr()),
            )
        };
        let zero = _mm256_setzero_ps();
        let same = _mm256_cmp_ps::<_CMP_EQ_OQ>(swarm, _mm256_set1_ps(self.swarm));
        let apart = _mm256_and_ps(same, _mm256_cmp_ps::<_CMP_GT_OQ>(d2, zero));
        let within = _mm256_cmp_ps::<_CMP_LT_OQ>(d2, _mm256_set1_ps(self.r2));
        // +0 where the lane counts, +∞ elsewhere.
        let far = _mm256_andnot_ps(_mm256_and_ps(apart, within), _mm256_set1_ps(f32::INFINITY));
        let kept = nearest.as_mut_ptr().cast::<f32>();
        // SAFETY: `nearest` holds eight 4-byte lanes.
        unsafe {
            // The new value first: `min` gives its second operand where either is NaN.
            let least = _mm256_min_ps(_mm256_add_ps(d2, far), _mm256_loadu_ps(kept));
            _mm256_storeu_ps(kept, least);
        }
        let (cx, cy) = (_mm256_set1_ps(self.centre.x), _mm256_set1_ps(self.centre.y));
        let after = _mm256_or_ps(
            _mm256_cmp_ps::<_CMP_GT_OQ>(y, cy),
            _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_EQ_OQ>(y, cy),
                _mm256_cmp_ps::<_CMP_GT_OQ>(x, cx),
            ),
        );
        let ahead = _mm256_and_ps(apart, after);
        let at_i = _mm256_and_ps(same, _mm256_cmp_ps::<_CMP_EQ_OQ>(d2, zero));
        let lone = _mm256_cmp_ps::<_CMP_EQ_OQ>(swarm, _mm256_set1_ps(ISOLATED_LANE));
        _mm256_movemask_ps(_mm256_or_ps(_mm256_or_ps(ahead, at_i), lone)) as u32
    }
}

/// The flocks of every swarm: connected groups of same-swarm boids linked when closer than their
/// swarm's alignment radius (docs/model.md §8). Per swarm, a list of flocks, each a list of slots
/// in ascending order; flocks are ordered by their lowest slot, so the result does not depend on
/// the order the index visits boids.
pub fn flocks(index: &IndexRef, snapshot: &Snapshot, config: &SimConfig) -> [Vec<Vec<u32>>; 3] {
    flocks_and_nearest(index, snapshot, config).0
}

/// [`flocks`], and by slot the distance to the nearest other boid of the same swarm within the
/// swarm's alignment radius (+∞ where there is none: [`nearest_same_swarm`] searches further),
/// from one pass over every boid's neighbourhood (the index's batched traversal, cell by cell
/// on the grid): the sample's nearest-neighbour search starts at that radius, so the same
/// neighbours serve both. Links are joined as they are found, on every thread at once.
pub fn flocks_and_nearest(
    index: &IndexRef,
    snapshot: &Snapshot,
    config: &SimConfig,
) -> ([Vec<Vec<u32>>; 3], Vec<f32>) {
    let n = snapshot.len();
    let groups = Groups::new(n);
    let radius = Swarm::ALL.map(|s| config.swarms.get(s).alignment_radius);
    let reach = radius.iter().copied().fold(0.0, f32::max);
    // Whether the query is the nearest search's own first one (always, unless the radius is
    // under a pixel or near half the world); otherwise that search runs on its own.
    let same_search = radius.map(|r| first_search_radius(&snapshot.space(), r) == r);
    let nearest = index.map_near(
        snapshot,
        reach,
        false,
        |_| true,
        Targets::Every,
        |i, near| {
            let (p, _, swarm) = near.source(snapshot, i);
            let (r, same_search) = (radius[swarm.index()], same_search[swarm.index()]);
            // The nearest squared distance: its square root is the nearest distance, to the
            // bit (a correctly rounded square root never reverses an order), at one root a boid.
            // A root `i`'s group had: a neighbour whose root it is needs no join. Groups only
            // merge, so a root that is still one still holds `i`, however old the value; in a
            // flock most links find their two ends joined already.
            let mut link = Link {
                groups: &groups,
                swarms: &snapshot.swarm,
                isolated: &snapshot.isolated,
                i,
                swarm,
                root_i: groups.root(i as u32),
                best2: f32::INFINITY,
            };
            // Eight candidates at a time on the grid. For the neighbours of `i`'s swarm at a
            // distance, the lanes keep the nearest distance themselves, and pass on, to be
            // joined, only those ahead of `i`: after it in the order of y, then x, of the
            // positions the world holds, an order both boids of a link agree on. Each link of
            // two boids at different points is then joined from one side, with no test per
            // neighbour; the test it replaces (is `j` the higher slot?) went either way at
            // random, and the processor mispredicted it half the time. The lanes pass on the
            // rest one by one: isolated boids (lane −2: only the snapshot knows their swarm)
            // and boids at `i`'s very point (`i` itself among them). The same distances and
            // flocks as one at a time elsewhere: a minimum is the same in any order, and a
            // group the same whichever of its links are joined, and how often.
            let test = FlockTest {
                swarm: swarm.index() as f32,
                centre: p,
                r2: r * r,
            };
            let mut lanes_nearest = [f32::INFINITY.to_bits(); 8];
            let served = near.within_by_lanes(
                p,
                r,
                #[inline(always)]
                |l, d2, avx| test.block(l, d2, avx, &mut lanes_nearest),
                #[inline(always)]
                |j, d2| link.hit_kept(j, d2),
            );
            if served {
                link.best2 = lanes_nearest
                    .map(f32::from_bits)
                    .into_iter()
                    .fold(link.best2, f32::min);
            } else {
                near.for_each_within(p, r, |j, off| link.hit(j, off.length_squared()));
            }
            let best2 = link.best2;
            if same_search {
                best2.sqrt()
            } else {
                f32::INFINITY
            }
        },
    );
    // Every slot's root (in the union-find's array), and each flock's size, so each list is
    // allocated once at its size. Slots are `u32`s: at a city's metrics sample these arrays
    // are the sample's peak of memory (BENCHMARKS.md, eighteenth stop).
    let root_of = groups.into_roots();
    let mut flock = vec![0u32; n];
    for &r in &root_of {
        flock[r as usize] += 1;
    }
    // A root is the lowest slot of its flock, so visiting slots in order meets every flock's
    // root before its other members: there its size becomes its place in the swarm's list.
    let mut out: [Vec<Vec<u32>>; 3] = Default::default();
    for (i, &r) in root_of.iter().enumerate() {
        let r = r as usize;
        let list = &mut out[snapshot.swarm[i].index()];
        if r == i {
            let size = flock[r] as usize;
            flock[r] = list.len() as u32;
            list.push(Vec::with_capacity(size));
        }
        list[flock[r] as usize].push(i as u32);
    }
    (out, nearest)
}

/// Number of flocks per swarm (see [`flocks`]).
pub fn flock_counts(index: &IndexRef, snapshot: &Snapshot, config: &SimConfig) -> [u64; 3] {
    flocks(index, snapshot, config).map(|f| f.len() as u64)
}

/// Standard deviation (population) over mean; `None` for fewer than two values or a zero
/// mean. The `nn_cv` of docs/model.md §8 applied to nearest-neighbour distances.
pub fn coefficient_of_variation<X: Copy + Into<f64>>(xs: &[X]) -> Option<f64> {
    coefficient_of_variation_of(xs.iter().map(|&x| x.into()))
}

/// [`coefficient_of_variation`] of the values an iterator gives (read three times, in order).
pub fn coefficient_of_variation_of(xs: impl Iterator<Item = f64> + Clone) -> Option<f64> {
    let n = xs.clone().count();
    if n < 2 {
        return None;
    }
    let n = n as f64;
    let mean = xs.clone().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = xs.map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    Some(var.sqrt() / mean)
}

/// Offsets of a flock's members from its centre: the torus centroid (circular mean per axis,
/// docs/model.md §2) refined by the mean of the minimum-image offsets from it, so the offsets sum
/// to zero exactly as on a plane. Valid while the flock spans less than half the world per axis.
pub fn offsets_from_centre(space: &Space, points: &[Vec2]) -> Vec<Vec2> {
    Centring::of(space, points.iter().copied())
        .map(|c| points.iter().map(|&p| c.offset(p)).collect())
        .unwrap_or_default()
}

/// A flock's centre and mean offset, from which [`offsets_from_centre`]'s offset of any of its
/// points is worked out when asked for, with the same operations as the list's: no copy of a
/// flock is kept.
#[derive(Clone, Copy)]
struct Centring {
    space: Space,
    centre: Vec2,
    mean: Vec2,
}

impl Centring {
    /// From the points an iterator gives (read twice, in order); `None` without points.
    fn of(space: &Space, points: impl Iterator<Item = Vec2> + Clone) -> Option<Self> {
        Self::about(space, space.centroid(points.clone())?, points)
    }

    /// From the points' centroid, worked out by the caller, and the points; `None` without
    /// points.
    fn about(space: &Space, centre: Vec2, points: impl Iterator<Item = Vec2>) -> Option<Self> {
        let (mut sum, mut count) = (Vec2::ZERO, 0usize);
        for p in points {
            sum += space.displacement(centre, p);
            count += 1;
        }
        let (space, mean) = (*space, sum / count as f32);
        Some(Self {
            space,
            centre,
            mean,
        })
    }

    /// The offset of `p` from the centre.
    fn offset(&self, p: Vec2) -> Vec2 {
        self.space.displacement(self.centre, p) - self.mean
    }
}

/// Milling of one flock (docs/model.md §8): `|Σ r_i × v_i| / Σ |r_i||v_i|` with `r_i` the offsets
/// from the flock's centre — 1 when every boid circles the centre the same way, 0 for translation.
/// `None` when undefined (every boid at the centre or at rest).
pub fn milling(offsets: &[Vec2], velocities: &[Vec2]) -> Option<f64> {
    milling_of(offsets.iter().copied().zip(velocities.iter().copied()))
}

/// [`milling`] of the (offset, velocity) pairs an iterator gives.
fn milling_of(members: impl Iterator<Item = (Vec2, Vec2)>) -> Option<f64> {
    let (mut torque, mut norm) = (0.0f64, 0.0f64);
    for (r, v) in members {
        torque += r.perp_dot(v) as f64;
        norm += (r.length() * v.length()) as f64;
    }
    (norm > 0.0).then(|| torque.abs() / norm)
}

/// Elongation of a flock (docs/model.md §8): `1 − λ₂/λ₁` of the gyration tensor `Σ r rᵀ / N` of the
/// offsets from its centre — 0 for a round flock, → 1 for a line. `None` if all coincide.
pub fn elongation(offsets: &[Vec2]) -> Option<f64> {
    elongation_of(offsets.iter().copied())
}

/// [`elongation`] of the offsets an iterator gives.
fn elongation_of(offsets: impl Iterator<Item = Vec2>) -> Option<f64> {
    let (mut xx, mut xy, mut yy, mut count) = (0.0f64, 0.0f64, 0.0f64, 0usize);
    for r in offsets {
        let (x, y) = (r.x as f64, r.y as f64);
        xx += x * x;
        xy += x * y;
        yy += y * y;
        count += 1;
    }
    if count == 0 {
        return None;
    }
    let n = count as f64;
    let (xx, xy, yy) = (xx / n, xy / n, yy / n);
    // Eigenvalues of the symmetric 2 × 2 tensor.
    let mid = 0.5 * (xx + yy);
    let half_gap = (0.25 * (xx - yy).powi(2) + xy * xy).sqrt();
    let (l1, l2) = (mid + half_gap, (mid - half_gap).max(0.0));
    (l1 > 0.0).then(|| 1.0 - l2 / l1)
}

/// Flocks of at least this many boids count for milling and elongation (two boids always
/// form a "line" and have no rotation to speak of).
pub const MIN_SHAPED_FLOCK: usize = 3;

/// Structure measures of one swarm from its flocks (slot lists): the largest flock's share
/// of the swarm, the size-weighted milling over flocks of at least [`MIN_SHAPED_FLOCK`], and
/// the largest flock's elongation (`None` where undefined).
pub fn flock_structure(
    snapshot: &Snapshot,
    flocks: &[Vec<u32>],
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let space = snapshot.space();
    let centres: Vec<Option<Vec2>> = flocks
        .iter()
        .map(|f| {
            (f.len() >= MIN_SHAPED_FLOCK)
                .then(|| space.centroid(f.iter().map(|&i| snapshot.pos[i as usize])))
                .flatten()
        })
        .collect();
    flock_structure_about(snapshot, flocks, &centres)
}

/// The centroid of a swarm's boids (`slots`, its slots in ascending order) and of each of its
/// `flocks` of at least [`MIN_SHAPED_FLOCK`] boids (by flock; `None` for the others), from one
/// pass over the boids: each boid's centroid term (on a torus its sines and cosines) is worked
/// out once and added to its swarm's sums and its flock's, in slot order, which is the order
/// [`Space::centroid`] of each would add them in, so the centroids are its to the bit.
pub fn swarm_and_flock_centres(
    snapshot: &Snapshot,
    slots: impl Iterator<Item = usize>,
    flocks: &[Vec<u32>],
) -> (Option<Vec2>, Vec<Option<Vec2>>) {
    let space = snapshot.space();
    // The flocks measured, numbered, and the number of each boid's (u32::MAX: none).
    let shaped: Vec<usize> = (0..flocks.len())
        .filter(|&f| flocks[f].len() >= MIN_SHAPED_FLOCK)
        .collect();
    let mut shaped_of = vec![u32::MAX; snapshot.len()];
    for (c, &f) in shaped.iter().enumerate() {
        for &i in &flocks[f] {
            shaped_of[i as usize] = c as u32;
        }
    }
    let mut swarm_sums = CentroidSums::default();
    let mut flock_sums = vec![CentroidSums::default(); shaped.len()];
    for i in slots {
        let term = space.centroid_term(snapshot.pos[i]);
        swarm_sums.add(&term);
        if let Some(sums) = flock_sums.get_mut(shaped_of[i] as usize) {
            sums.add(&term);
        }
    }
    let mut centres = vec![None; flocks.len()];
    for (&f, sums) in shaped.iter().zip(&flock_sums) {
        centres[f] = space.centroid_of(sums);
    }
    (space.centroid_of(&swarm_sums), centres)
}

/// [`flock_structure`] given the centroid of each flock of at least [`MIN_SHAPED_FLOCK`]
/// (`centres[k]` of `flocks[k]`; the others' are not read), worked out by the caller (see
/// [`Space::centroid_term`]).
pub fn flock_structure_about(
    snapshot: &Snapshot,
    flocks: &[Vec<u32>],
    centres: &[Option<Vec2>],
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let alive: usize = flocks.iter().map(Vec::len).sum();
    // The largest flock; ties go to the one with the lowest slot (the earlier one).
    let Some((largest, _)) = flocks
        .iter()
        .enumerate()
        .reduce(|best, f| if f.1.len() > best.1.len() { f } else { best })
    else {
        return (None, None, None);
    };
    // Each flock's offsets are worked out from the snapshot as they are read: no copy of a
    // flock's points, velocities or offsets (the largest can hold most of a swarm).
    let space = snapshot.space();
    let centring = |k: usize| {
        let points = flocks[k].iter().map(|&i| snapshot.pos[i as usize]);
        centres[k].and_then(|c| Centring::about(&space, c, points))
    };
    let (mut weighted, mut weight) = (0.0f64, 0.0f64);
    // The largest flock's centring, kept from the loop for its elongation.
    let mut largest_centring = None;
    for (k, f) in flocks.iter().enumerate() {
        if f.len() < MIN_SHAPED_FLOCK {
            continue;
        }
        let Some(c) = centring(k) else { continue };
        if k == largest {
            largest_centring = Some(c);
        }
        if let Some(m) = milling_of(
            f.iter()
                .map(|&i| (c.offset(snapshot.pos[i as usize]), snapshot.vel[i as usize])),
        ) {
            weighted += m * f.len() as f64;
            weight += f.len() as f64;
        }
    }
    let shape = largest_centring.and_then(|c| {
        elongation_of(
            flocks[largest]
                .iter()
                .map(|&i| c.offset(snapshot.pos[i as usize])),
        )
    });
    (
        Some(flocks[largest].len() as f64 / alive as f64),
        (weight > 0.0).then(|| weighted / weight),
        shape,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The flock pass's block in AVX instructions gives the lanes' bits: the same mask and the
    /// same nearest distances, block after block, on values drawn to tie (the boid's own x, y
    /// and swarm, distance 0 and the radius itself), isolated and far-away lanes among them.
    #[test]
    fn the_flock_block_in_avx_is_the_flock_block_in_lanes() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx") {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
            let test = FlockTest {
                swarm: 1.0,
                centre: Vec2::new(40.0, 60.0),
                r2: 100.0,
            };
            let mut pick = |options: &[f32]| options[rng.random_range(0..options.len())];
            let (mut lanes, mut avx) = ([f32::INFINITY.to_bits(); 8], [0u32; 8]);
            avx.copy_from_slice(&lanes);
            let (mut passed, mut kept) = (0, 0);
            for _ in 0..2000 {
                let mut draw = |options: &[f32]| F8(std::array::from_fn(|_| pick(options)));
                let l = Lanes {
                    x: draw(&[39.0, 40.0, 41.0, 1e30]),
                    y: draw(&[59.0, 60.0, 61.0, 1e30]),
                    dx: F8::ZERO,
                    dy: F8::ZERO,
                    vx: F8::ZERO,
                    vy: F8::ZERO,
                    swarm: draw(&[-2.0, -1.0, 0.0, 1.0, 1.0]),
                };
                let d2 = draw(&[0.0, 1.0, 2.5, 99.0, 100.0, 101.0, f32::INFINITY]);
                let by_lanes = test.block_lanes(&l, d2, &mut lanes);
                // SAFETY: the CPU has AVX (checked above).
                let by_avx = unsafe { test.block_avx(&l, d2, &mut avx) };
                assert_eq!(by_avx, by_lanes, "{l:?} {d2:?}");
                assert_eq!(avx, lanes);
                passed += by_lanes.count_ones();
                kept += lanes
                    .iter()
                    .filter(|&&m| m != f32::INFINITY.to_bits())
                    .count();
            }
            // Both kinds of lanes were met: passed on, and kept as nearest.
            assert!(passed > 1000 && kept > 0, "{passed} passed, {kept} kept");
            assert_eq!(lanes.map(f32::from_bits), [1.0; 8]);
        }
    }
}
