//! The flocks of docs/model.md §8 (connected groups of boids of one swarm within its alignment
//! radius) and each boid's nearest neighbour of its swarm, found together in one pass over every
//! boid's neighbourhood: a union-find shared by the threads, fed eight candidates at a time by
//! the lanes' test ([`FlockTest`]). No systems live here.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

use bevy::prelude::*;

use super::structure::first_search_radius;
use crate::sim::config::SimConfig;
use crate::sim::lanes::{Avx, F8};
use crate::sim::neighbours::{ISOLATED_LANE, IndexRef, Lanes, Snapshot, Targets};
use crate::sim::swarm::Swarm;

/// Union-find over the boids (counted by grid entry or by slot, see [`flocks_and_nearest`]),
/// shared by the threads of a traversal. A join links the larger root under the smaller
/// (`parent[x] ≤ x` always), so every group's root ends as its lowest index whatever the order
/// of the joins, on any number of threads.
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

    /// Every boid's root (its group's lowest index), in the parents' own array: visited in
    /// order, an index's parent, never above it, has its root already.
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
/// boid of its swarm it hears of, and keeps the nearest squared distance among them. The
/// union-find counts boids by their place in the traversal (see [`flocks_and_nearest`]):
/// `me` is `i`'s. What changes is in cells, so that the lanes' two kinds of hit can share it.
struct Link<'a> {
    groups: &'a Groups,
    /// The union-find's parents, at hand for [`Link::join`]'s first look.
    parent: &'a [AtomicU32],
    swarms: &'a [Swarm],
    i: usize,
    me: usize,
    swarm: Swarm,
    /// A root of `i`'s group (see [`flocks_and_nearest`]).
    root_i: Cell<u32>,
    best2: Cell<f32>,
}

impl Link<'_> {
    /// Boid `j` is within the radius, `d2` its squared distance, where the union-find counts
    /// boids by slot: if it is another of `i`'s swarm, `best2` keeps the smaller of the two,
    /// and the link of `i` and `j` is joined from the lower slot's side (the other side skips
    /// it). Always inlined: it runs once a neighbour, inside the scan's loop, and as a call it
    /// passed its arguments through memory.
    #[inline(always)]
    fn hit(&self, j: usize, d2: f32) {
        if j != self.i && self.swarms[j] == self.swarm {
            self.best2.set(self.best2.get().min(d2));
            if j > self.i {
                self.join(j);
            }
        }
    }

    /// [`Link::hit`] for the neighbours the lanes could not sort out ([`flocks_and_nearest`]):
    /// at `i`'s very point, or isolated, `i` itself among them; `j` the slot and `at` the grid
    /// entry. Taken as [`Link::hit`] takes it, but joined whichever slot is lower.
    #[inline(always)]
    fn hit_kept(&self, j: usize, at: usize, d2: f32) {
        if j != self.i && self.swarms[j] == self.swarm {
            self.best2.set(self.best2.get().min(d2));
            self.join(at);
        }
    }

    /// The group of the boid the union-find counts `k` joined with `i`'s, unless it is `i`'s
    /// already.
    #[inline(always)]
    fn join(&self, k: usize) {
        // Most neighbours hang from `i`'s root already: one load settles them.
        let root_i = self.root_i.get();
        if self.parent[k].load(Ordering::Acquire) == root_i {
            return;
        }
        if self.groups.root(k as u32) != root_i {
            self.root_i.set(self.groups.join(self.me as u32, k as u32));
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
    /// pass on one by one: bit `k` for boids of the swarm at `d2 = 0` (this one among them)
    /// and isolated boids, and bit `8 + k` for boids of the swarm with `d2 > 0` ahead of this
    /// one (greater y, or equal y and greater x), whose link needs only their grid entry (see
    /// [`crate::sim::neighbours::Near::within_by_lanes`]). The caller keeps only the bits of
    /// lanes within the radius.
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
        let lone = l.swarm.cmp_eq(F8::splat(ISOLATED_LANE));
        (at_i | lone).move_mask() | ahead.move_mask() << 8
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
        let (swarm, x, y, d2) = (l.swarm.m256(), l.x.m256(), l.y.m256(), d2.m256());
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
        let rest = _mm256_movemask_ps(_mm256_or_ps(at_i, lone)) as u32;
        rest | (_mm256_movemask_ps(ahead) as u32) << 8
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
/// swarm's alignment radius (+∞ where there is none: [`super::nearest_same_swarm`] searches
/// further), from one pass over every boid's neighbourhood (the index's batched traversal, cell
/// by cell on the grid): the sample's nearest-neighbour search starts at that radius, so the same
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
    // The union-find counts the grid's boids by entry, the order its traversal visits them
    // in (cell by cell), and the other backends' by slot. A thread's run of cells is a run of
    // entries, so each thread mostly writes parents of its own; in slot order, which is random
    // in space, both wrote all over the same cache lines (BENCHMARKS.md, twenty-third stop).
    let entry_slots = match index {
        IndexRef::Grid(grid) => Some(&grid.slot[..]),
        _ => None,
    };
    let nearest = index.map_near(
        snapshot,
        reach,
        false,
        |_| true,
        Targets::Every,
        |i, near| {
            let (p, _, swarm) = near.source(snapshot, i);
            let (r, same_search) = (radius[swarm.index()], same_search[swarm.index()]);
            // The grid's traversal always serves lanes, and only it has entries.
            let me = near.entry().unwrap_or(i);
            // The nearest squared distance: its square root is the nearest distance, to the
            // bit (a correctly rounded square root never reverses an order), at one root a boid.
            // A root `i`'s group had: a neighbour whose root it is needs no join. Groups only
            // merge, so a root that is still one still holds `i`, however old the value; in a
            // flock most links find their two ends joined already.
            let link = Link {
                groups: &groups,
                parent: &groups.parent,
                swarms: &snapshot.swarm,
                i,
                me,
                swarm,
                root_i: Cell::new(groups.root(me as u32)),
                best2: Cell::new(f32::INFINITY),
            };
            // Eight candidates at a time on the grid. For the neighbours of `i`'s swarm at a
            // distance, the lanes keep the nearest distance themselves, and pass on, to be
            // joined, only those ahead of `i`: after it in the order of y, then x, of the
            // positions the world holds, an order both boids of a link agree on. These come as
            // grid entries alone: their link is joined with no look at the snapshot (which
            // boid, its swarm, whether it is isolated), which their lanes settled. Each link of
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
                |j, at, d2| link.hit_kept(j, at, d2),
                #[inline(always)]
                |at| link.join(at),
            );
            if served {
                link.best2.set(
                    lanes_nearest
                        .map(f32::from_bits)
                        .into_iter()
                        .fold(link.best2.get(), f32::min),
                );
            } else {
                debug_assert!(
                    near.entry().is_none(),
                    "the union-find counts this boid by slot"
                );
                near.for_each_within(p, r, |j, off| link.hit(j, off.length_squared()));
            }
            let best2 = link.best2.get();
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
    let root_of = roots_by_slot(groups.into_roots(), entry_slots);
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

/// Every slot's root (its group's lowest slot), from every boid's root as the union-find
/// counts them (`by_index`: its group's lowest index; by grid entry where `entry_slots` gives
/// each entry's slot, else by slot), worked out in its array.
/// At a city's sample these arrays are the peak of memory (BENCHMARKS.md, eighteenth and
/// twenty-third stops): a second array of roots was one more word a boid (5 MB in the city),
/// so the entries' roots are put in slot order in place.
fn roots_by_slot(mut by_index: Vec<u32>, entry_slots: Option<&[u32]>) -> Vec<u32> {
    let n = by_index.len();
    if let Some(slot) = entry_slots {
        assert!(
            n <= 1 << 31,
            "slots above 2^31 leave no bit to mark a group's lowest slot"
        );
        // A root entry, the lowest of its group, comes before the group's other entries: there
        // its value becomes the group's lowest slot so far, marked; each later entry lowers it.
        for e in 0..n {
            let r = by_index[e] as usize;
            by_index[r] = if r == e {
                MARK | slot[e]
            } else {
                MARK | slot[e].min(by_index[r] & !MARK)
            };
        }
        // Each entry's lowest slot: a root's own value, unmarked here, or its root's, which
        // comes before it and so is unmarked already.
        for e in 0..n {
            let v = by_index[e];
            by_index[e] = if v & MARK != 0 {
                v & !MARK
            } else {
                by_index[v as usize]
            };
        }
        permute_to_slots(&mut by_index, slot);
    }
    by_index
}

/// The bit [`roots_by_slot`] and [`permute_to_slots`] mark values with (slots are below it).
const MARK: u32 = 1 << 31;

/// Moves `values[e]` to `values[slot[e]]` for every `e` (`slot` a permutation, every value
/// below [`MARK`]), in place: each cycle of the permutation is followed once, a placed value
/// marked so that its cycle is not followed again.
fn permute_to_slots(values: &mut [u32], slot: &[u32]) {
    for start in 0..values.len() {
        if values[start] & MARK != 0 {
            continue;
        }
        let (mut at, mut carried) = (start, values[start]);
        loop {
            let to = slot[at] as usize;
            let next = values[to];
            values[to] = carried | MARK;
            if to == start {
                break;
            }
            (at, carried) = (to, next);
        }
    }
    for v in values {
        *v &= !MARK;
    }
}

/// Number of flocks per swarm (see [`flocks`]).
pub fn flock_counts(index: &IndexRef, snapshot: &Snapshot, config: &SimConfig) -> [u64; 3] {
    flocks(index, snapshot, config).map(|f| f.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Values moved in place to their slots are the values a plain scatter puts there: random
    /// permutations of every size up to 300, and the identity (cycles of one).
    #[test]
    fn values_permuted_in_place_are_the_scatter_s() {
        use rand::seq::SliceRandom;
        let mut rng = rand_pcg::Pcg64::seed_from_u64(8);
        for n in (0..300).chain([1000]) {
            let mut slot: Vec<u32> = (0..n).collect();
            if n % 7 != 0 {
                slot.shuffle(&mut rng);
            }
            let values: Vec<u32> = (0..n).map(|_| rng.random_range(0..MARK)).collect();
            let mut want = vec![0; n as usize];
            for (e, &s) in slot.iter().enumerate() {
                want[s as usize] = values[e];
            }
            let mut got = values.clone();
            permute_to_slots(&mut got, &slot);
            assert_eq!(got, want, "n = {n}");
        }
    }

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
            let (mut passed, mut alone, mut kept) = (0, 0, 0);
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
                alone += (by_lanes >> 8).count_ones();
                kept += lanes
                    .iter()
                    .filter(|&&m| m != f32::INFINITY.to_bits())
                    .count();
            }
            // Every kind of lane was met: passed on whole, passed on as an entry alone, and
            // kept as nearest.
            assert!(
                passed > 1000 && alone > 0 && alone < passed && kept > 0,
                "{passed} passed, {alone} as entries alone, {kept} kept"
            );
            assert_eq!(lanes.map(f32::from_bits), [1.0; 8]);
        }
    }
}
