//! The flocking and structure measures of docs/model.md §8 as pure functions over positions
//! and velocities: polarisation, cohesion and RMS separation, nearest neighbours, and each
//! flock's milling and elongation (the flocks themselves are found in `flocks`). Each function
//! adds its terms to running sums (`Summed`, `Distances`, `Milling`, `Gyration`); a sample's
//! passes over every boid (`swarms`) add the same terms to the same sums. No systems live here.

use std::ops::AddAssign;

use bevy::prelude::*;

use crate::sim::math::unit;
use crate::sim::neighbours::{NeighbourIndex, Snapshot};
use crate::sim::space::Space;

/// `|Σ unit(v_i)| / N` (0 = disorder, 1 = aligned); `None` without boids.
pub fn polarisation(velocities: impl IntoIterator<Item = Vec2>) -> Option<f64> {
    let mut headings = Summed::default();
    for v in velocities {
        headings.add(unit(v));
    }
    headings.polarisation()
}

/// Values added in order: their sum and how many. The running sums of [`polarisation`] (the
/// unit velocities), of a [`Centring`] (the displacements from the centroid) and of a mean and
/// [`coefficient_of_variation`].
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Summed<T> {
    sum: T,
    n: usize,
}

impl<T: AddAssign> Summed<T> {
    /// Adds one value.
    #[inline]
    pub(super) fn add(&mut self, x: T) {
        self.sum += x;
        self.n += 1;
    }
}

impl Summed<Vec2> {
    /// [`polarisation`] of the unit velocities added.
    pub(super) fn polarisation(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum.length() as f64 / self.n as f64)
    }
}

impl Summed<f64> {
    /// The mean; `None` without values.
    pub(super) fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    /// Standard deviation (population) over mean, given the sum of the values' squared
    /// deviations from their mean (`(x − mean).powi(2)`, added in the same order); `None` for
    /// fewer than two values or a mean of zero or less.
    pub(super) fn coefficient_of_variation(&self, squares: f64) -> Option<f64> {
        if self.n < 2 {
            return None;
        }
        let mean = self.mean()?;
        if mean <= 0.0 {
            return None;
        }
        Some((squares / self.n as f64).sqrt() / mean)
    }
}

/// Cohesion (mean distance to the centroid) and rms separation `sqrt(2Σ|p − c|²/(N − 1))`,
/// both torus-correct. Rms separation needs two boids.
pub fn cohesion_and_rms(space: &Space, points: &[Vec2]) -> (Option<f64>, Option<f64>) {
    cohesion_and_rms_of(space, points.iter().copied())
}

/// [`cohesion_and_rms`] of the points an iterator gives (read twice, in order), with no copy of
/// them.
pub fn cohesion_and_rms_of(
    space: &Space,
    points: impl Iterator<Item = Vec2> + Clone,
) -> (Option<f64>, Option<f64>) {
    cohesion_and_rms_about(space, space.centroid(points.clone()), points)
}

/// [`cohesion_and_rms_of`] given the points' centroid (`None`: there are none).
pub fn cohesion_and_rms_about(
    space: &Space,
    centroid: Option<Vec2>,
    points: impl Iterator<Item = Vec2>,
) -> (Option<f64>, Option<f64>) {
    let Some(c) = centroid else {
        return (None, None);
    };
    let mut distances = Distances::default();
    for p in points {
        distances.add(space.displacement(c, p).length() as f64);
    }
    distances.cohesion_and_rms()
}

/// The running sums of [`cohesion_and_rms`]: each point's distance from the centroid, added in
/// order.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Distances {
    sum: f64,
    sum2: f64,
    count: usize,
}

impl Distances {
    /// Adds one point's distance from the centroid, px.
    #[inline]
    pub(super) fn add(&mut self, d: f64) {
        self.sum += d;
        self.sum2 += d * d;
        self.count += 1;
    }

    /// The cohesion and rms separation of the distances added.
    pub(super) fn cohesion_and_rms(&self) -> (Option<f64>, Option<f64>) {
        let n = self.count as f64;
        let rms = (self.count > 1).then(|| (2.0 * self.sum2 / (n - 1.0)).sqrt());
        (Some(self.sum / n), rms)
    }
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
pub(super) fn first_search_radius(space: &Space, radius: f32) -> f32 {
    radius.max(1.0).min(search_limit(space))
}

/// Standard deviation (population) over mean; `None` for fewer than two values or a zero
/// mean. The `nn_cv` of docs/model.md §8 applied to nearest-neighbour distances.
pub fn coefficient_of_variation<X: Copy + Into<f64>>(xs: &[X]) -> Option<f64> {
    coefficient_of_variation_of(xs.iter().map(|&x| x.into()))
}

/// [`coefficient_of_variation`] of the values an iterator gives (read twice, in order).
pub fn coefficient_of_variation_of(xs: impl Iterator<Item = f64> + Clone) -> Option<f64> {
    let mut sums = Summed::default();
    for x in xs.clone() {
        sums.add(x);
    }
    let mean = sums.mean()?;
    let mut squares = 0.0;
    for x in xs {
        squares += (x - mean).powi(2);
    }
    sums.coefficient_of_variation(squares)
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
pub(super) struct Centring {
    space: Space,
    centre: Vec2,
    mean: Vec2,
}

impl Centring {
    /// From the points an iterator gives (read twice, in order); `None` without points.
    fn of(space: &Space, points: impl Iterator<Item = Vec2> + Clone) -> Option<Self> {
        let centre = space.centroid(points.clone())?;
        let mut offsets = Summed::default();
        for p in points {
            offsets.add(space.displacement(centre, p));
        }
        Some(Self::new(space, centre, &offsets))
    }

    /// From the points' centroid and their displacements from it.
    pub(super) fn new(space: &Space, centre: Vec2, offsets: &Summed<Vec2>) -> Self {
        Self {
            space: *space,
            centre,
            mean: offsets.sum / offsets.n as f32,
        }
    }

    /// The offset of `p` from the centre.
    #[inline]
    pub(super) fn offset(&self, p: Vec2) -> Vec2 {
        self.space.displacement(self.centre, p) - self.mean
    }
}

/// Milling of one flock (docs/model.md §8): `|Σ r_i × v_i| / Σ |r_i||v_i|` with `r_i` the offsets
/// from the flock's centre — 1 when every boid circles the centre the same way, 0 for translation.
/// `None` when undefined (every boid at the centre or at rest).
pub fn milling(offsets: &[Vec2], velocities: &[Vec2]) -> Option<f64> {
    let mut sums = Milling::default();
    for (&r, &v) in offsets.iter().zip(velocities) {
        sums.add(Milling::terms(r, v));
    }
    sums.milling()
}

/// The running sums of [`milling`], added in order.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Milling {
    torque: f64,
    norm: f64,
}

impl Milling {
    /// What a boid at offset `r` moving at `v` adds: its torque and its norm.
    #[inline]
    pub(super) fn terms(r: Vec2, v: Vec2) -> [f64; 2] {
        [r.perp_dot(v) as f64, (r.length() * v.length()) as f64]
    }

    /// Adds one boid's [`Milling::terms`].
    #[inline]
    pub(super) fn add(&mut self, [torque, norm]: [f64; 2]) {
        self.torque += torque;
        self.norm += norm;
    }

    /// [`milling`] of the boids added.
    pub(super) fn milling(&self) -> Option<f64> {
        (self.norm > 0.0).then(|| self.torque.abs() / self.norm)
    }
}

/// Elongation of a flock (docs/model.md §8): `1 − λ₂/λ₁` of the gyration tensor `Σ r rᵀ / N` of the
/// offsets from its centre — 0 for a round flock, → 1 for a line. `None` if all coincide.
pub fn elongation(offsets: &[Vec2]) -> Option<f64> {
    let mut gyration = Gyration::default();
    for &r in offsets {
        gyration.add(r);
    }
    gyration.elongation()
}

/// The running sums of [`elongation`]: the gyration tensor of the offsets added, in order.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Gyration {
    xx: f64,
    xy: f64,
    yy: f64,
    count: usize,
}

impl Gyration {
    /// Adds one offset from the centre.
    #[inline]
    pub(super) fn add(&mut self, r: Vec2) {
        let (x, y) = (r.x as f64, r.y as f64);
        self.xx += x * x;
        self.xy += x * y;
        self.yy += y * y;
        self.count += 1;
    }

    /// [`elongation`] of the offsets added.
    pub(super) fn elongation(&self) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let n = self.count as f64;
        let (xx, xy, yy) = (self.xx / n, self.xy / n, self.yy / n);
        // Eigenvalues of the symmetric 2 × 2 tensor.
        let mid = 0.5 * (xx + yy);
        let half_gap = (0.25 * (xx - yy).powi(2) + xy * xy).sqrt();
        let (l1, l2) = (mid + half_gap, (mid - half_gap).max(0.0));
        (l1 > 0.0).then(|| 1.0 - l2 / l1)
    }
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
    let Some(largest) = largest_flock(flocks) else {
        return (None, None, None);
    };
    let space = snapshot.space();
    let (mut milling, mut shape) = (Vec::new(), None);
    for (k, f) in flocks.iter().enumerate() {
        if f.len() < MIN_SHAPED_FLOCK {
            continue;
        }
        let points = f.iter().map(|&i| snapshot.pos[i as usize]);
        let c = Centring::of(&space, points).expect("a shaped flock has boids");
        let (mut sums, mut gyration) = (Milling::default(), Gyration::default());
        for &i in f {
            let r = c.offset(snapshot.pos[i as usize]);
            sums.add(Milling::terms(r, snapshot.vel[i as usize]));
            if k == largest {
                gyration.add(r);
            }
        }
        milling.push(sums);
        if k == largest {
            shape = gyration.elongation();
        }
    }
    structure_of(flocks, largest, &milling, shape)
}

/// The largest of a swarm's flocks; ties go to the one with the lowest slot (the earlier one).
pub(super) fn largest_flock(flocks: &[Vec<u32>]) -> Option<usize> {
    (0..flocks.len()).reduce(|best, k| {
        if flocks[k].len() > flocks[best].len() {
            k
        } else {
            best
        }
    })
}

/// [`flock_structure`]'s measures from `largest` ([`largest_flock`]), the [`Milling`] sums of
/// each flock of at least [`MIN_SHAPED_FLOCK`] boids (in the flocks' order) and the largest
/// flock's elongation.
pub(super) fn structure_of(
    flocks: &[Vec<u32>],
    largest: usize,
    milling: &[Milling],
    shape: Option<f64>,
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let alive: usize = flocks.iter().map(Vec::len).sum();
    let shaped = flocks.iter().filter(|f| f.len() >= MIN_SHAPED_FLOCK);
    let (mut weighted, mut weight) = (0.0f64, 0.0f64);
    for (f, sums) in shaped.zip(milling) {
        if let Some(m) = sums.milling() {
            weighted += m * f.len() as f64;
            weight += f.len() as f64;
        }
    }
    (
        Some(flocks[largest].len() as f64 / alive as f64),
        (weight > 0.0).then(|| weighted / weight),
        shape,
    )
}
