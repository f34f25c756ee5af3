//! A sample's per-swarm flocking measures (docs/model.md §8) from three passes over every boid
//! in slot order, rather than about ten for each swarm: each boid's terms (its heading and
//! speed, its centroid term — sines and cosines on a torus, eight boids' at once in vector
//! lanes (`trig`) —, then its distances and offsets) are worked out in parallel, a block of
//! slots at a time, and added on the calling thread, in slot order, to its swarm's running
//! sums and its flock's. These are `structure`'s and `space`'s sums, which each measure's own
//! function adds the same terms to, so each swarm's and each flock's sums get the same terms
//! in the same order as that function over the swarm or the flock alone: the figures are the
//! functions' own, to the bit, on any number of threads. No systems live here.

use bevy::prelude::*;

use super::sample::GroupSample;
use super::structure::{
    Centring, Distances, Gyration, MIN_SHAPED_FLOCK, Milling, Summed, largest_flock, structure_of,
};
use crate::sim::lanes::vectorized;
use crate::sim::math::unit;
use crate::sim::neighbours::Snapshot;
use crate::sim::parallel::{fill_runs_light, per_item};
use crate::sim::space::{CentroidSums, CentroidTerm};
use crate::sim::trig::LANES;

/// Slots whose terms are held at once: at most 56 bytes a slot (the first pass's), so about
/// 0.23 MB however many boids there are (a city's sample is its peak of memory).
const BLOCK: usize = 4096;

/// A boid's flock number where it is in no flock of at least [`MIN_SHAPED_FLOCK`].
const UNSHAPED: u32 = u32::MAX;

/// Hands `add` every slot of `0..n` with its term, in slot order. The terms are worked out in
/// parallel, a [`BLOCK`] at a time, into one buffer, by `fill(first, terms)`, which writes the
/// terms of the slots from `first` on into `terms`: a whole number of [`LANES`] of them but at
/// the end of a block ([`fill_runs_light`]: on the calling thread for a block of fewer than
/// 2 048 slots; [`per_item`] makes a `fill` of a function of one slot).
fn in_slot_order<T: Copy + Default + Send>(
    n: usize,
    fill: impl Fn(usize, &mut [T]) + Sync,
    mut add: impl FnMut(usize, T),
) {
    let mut terms = vec![T::default(); BLOCK.min(n)];
    for start in (0..n).step_by(BLOCK) {
        let block = &mut terms[..BLOCK.min(n - start)];
        fill_runs_light(block, LANES, |first, part| fill(start + first, part));
        for (k, &t) in block.iter().enumerate() {
            add(start + k, t);
        }
    }
}

/// One swarm's running sums.
#[derive(Default)]
struct SwarmSums {
    members: usize,
    headings: Summed<Vec2>,
    /// Σ |v|, px/s.
    speed: f64,
    centre: CentroidSums,
    /// The nearest distances found (NaN: none).
    nearest: Summed<f64>,
    /// Σ (d − mean)² of the same.
    nearest_squares: f64,
    distances: Distances,
    /// Of the offsets in its largest flock, if that has at least [`MIN_SHAPED_FLOCK`] boids.
    gyration: Gyration,
}

/// Sets each swarm's flocking measures in `groups` (by `Swarm::index()`) from the snapshot,
/// `flocks` (each swarm's, lists of slots in ascending order, as `flocks` finds them) and
/// `nearest` (by slot, each boid's nearest distance to one of its swarm; NaN: none): the
/// polarisation, cohesion, rms separation, nearest-neighbour mean and coefficient of
/// variation, flock count and structure, and mean speed. Swarms without boids keep `None`.
pub(super) fn measure_swarms(
    snapshot: &Snapshot,
    flocks: &[Vec<Vec<u32>>; 3],
    nearest: &[f32],
    groups: &mut [GroupSample; 3],
) {
    let (space, n) = (snapshot.space(), snapshot.len());
    let (pos, vel, swarm) = (&snapshot.pos, &snapshot.vel, &snapshot.swarm);
    // The flocks measured for their shape, numbered across the swarms in order (`first[k]`:
    // swarm `k`'s first), each boid's number, and the number of each swarm's largest flock.
    let largest = flocks.each_ref().map(|list| largest_flock(list));
    let mut shaped_of = vec![UNSHAPED; n];
    let (mut shaped, mut first, mut largest_shaped) = (0u32, [0usize; 4], [UNSHAPED; 3]);
    for (k, list) in flocks.iter().enumerate() {
        first[k] = shaped as usize;
        for (f, members) in list.iter().enumerate() {
            if members.len() < MIN_SHAPED_FLOCK {
                continue;
            }
            if largest[k] == Some(f) {
                largest_shaped[k] = shaped;
            }
            for &i in members {
                shaped_of[i as usize] = shaped;
            }
            shaped += 1;
        }
    }
    first[3] = shaped as usize;
    let shaped = shaped as usize;
    let mut sums: [SwarmSums; 3] = default();

    // Headings, speeds, each swarm's centroid and each shaped flock's, nearest distances.
    let mut flock_centres = vec![CentroidSums::default(); shaped];
    // Each boid's heading, speed and centroid term; the terms of eight boids at once, in a
    // block compiled for the CPU's vector width.
    let first_terms =
        |i: usize, term: CentroidTerm| Some((unit(vel[i]), vel[i].length() as f64, term));
    in_slot_order(
        n,
        |from, terms| {
            vectorized!({
                let whole = terms.len() - terms.len() % LANES;
                let mut runs = terms.chunks_exact_mut(LANES);
                for (run, eight) in (&mut runs).enumerate() {
                    let s = from + run * LANES;
                    let p: [Vec2; LANES] = std::array::from_fn(|k| pos[s + k]);
                    for (k, term) in space.centroid_terms(p).into_iter().enumerate() {
                        eight[k] = first_terms(s + k, term);
                    }
                }
                let s = from + whole;
                for (k, t) in runs.into_remainder().iter_mut().enumerate() {
                    *t = first_terms(s + k, space.centroid_term(pos[s + k]));
                }
            })
        },
        |i, terms| {
            let (heading, speed, term) = terms.expect("every slot's terms are worked out");
            let s = &mut sums[swarm[i].index()];
            s.members += 1;
            s.headings.add(heading);
            s.speed += speed;
            s.centre.add(&term);
            if let Some(c) = flock_centres.get_mut(shaped_of[i] as usize) {
                c.add(&term);
            }
            if !nearest[i].is_nan() {
                s.nearest.add(f64::from(nearest[i]));
            }
        },
    );
    let centre = sums.each_ref().map(|s| space.centroid_of(&s.centre));
    let flock_centre: Vec<Vec2> = flock_centres
        .iter()
        .map(|c| space.centroid_of(c).expect("a shaped flock has boids"))
        .collect();
    let nearest_mean = sums.each_ref().map(|s| s.nearest.mean());

    // Distances from the swarm's centroid and displacements from the flock's; the nearest
    // distances' squared deviations.
    let mut offsets = vec![Summed::default(); shaped];
    in_slot_order(
        n,
        per_item(|i| {
            let c = centre[swarm[i].index()].expect("a swarm with a boid has a centroid");
            let from_flock = flock_centre.get(shaped_of[i] as usize);
            (
                space.displacement(c, pos[i]).length() as f64,
                from_flock.map_or(Vec2::ZERO, |&f| space.displacement(f, pos[i])),
            )
        }),
        |i, (from_centre, from_flock)| {
            let k = swarm[i].index();
            sums[k].distances.add(from_centre);
            if let Some(o) = offsets.get_mut(shaped_of[i] as usize) {
                o.add(from_flock);
            }
            if let (Some(mean), false) = (nearest_mean[k], nearest[i].is_nan()) {
                sums[k].nearest_squares += (f64::from(nearest[i]) - mean).powi(2);
            }
        },
    );

    // Each shaped flock's milling, and the largest flock's offsets (if shaped).
    let mut milling = vec![Milling::default(); shaped];
    if shaped > 0 {
        let centring: Vec<Centring> = flock_centre
            .iter()
            .zip(&offsets)
            .map(|(&c, o)| Centring::new(&space, c, o))
            .collect();
        in_slot_order(
            n,
            per_item(|i| {
                centring.get(shaped_of[i] as usize).map(|c| {
                    let r = c.offset(pos[i]);
                    (r, Milling::terms(r, vel[i]))
                })
            }),
            |i, offset| {
                let Some((r, terms)) = offset else { return };
                let (c, k) = (shaped_of[i], swarm[i].index());
                milling[c as usize].add(terms);
                if largest_shaped[k] == c {
                    sums[k].gyration.add(r);
                }
            },
        );
    }

    for (k, (g, s)) in groups.iter_mut().zip(&sums).enumerate() {
        if s.members == 0 {
            continue;
        }
        g.polarisation = s.headings.polarisation();
        (g.cohesion_px, g.rms_separation_px) = s.distances.cohesion_and_rms();
        g.nearest_neighbour_px = s.nearest.mean();
        g.nn_cv = s.nearest.coefficient_of_variation(s.nearest_squares);
        g.flocks = Some(flocks[k].len() as u64);
        if let Some(largest) = largest[k] {
            // No offsets were added unless the largest flock is shaped: then this is `None`.
            let shape = s.gyration.elongation();
            (g.largest_flock_frac, g.milling, g.elongation) =
                structure_of(&flocks[k], largest, &milling[first[k]..first[k + 1]], shape);
        }
        g.mean_speed_px_s = Some(s.speed / s.members as f64);
    }
}
