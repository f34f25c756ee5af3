//! The flocking and structure measures of docs/model.md §8 as pure functions over positions
//! and velocities: polarisation, cohesion and RMS separation, nearest neighbours, and each
//! flock's milling and elongation (the flocks themselves are found in `flocks`). No systems
//! live here.

use bevy::prelude::*;

use crate::sim::math::unit;
use crate::sim::neighbours::{NeighbourIndex, Snapshot};
use crate::sim::space::{CentroidSums, Space};

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
pub(super) fn first_search_radius(space: &Space, radius: f32) -> f32 {
    radius.max(1.0).min(search_limit(space))
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
