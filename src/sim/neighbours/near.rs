//! The batched traversal: [`IndexRef::map_near`] gives every source boid its neighbourhood —
//! the candidates within reach, as a [`Near`] — in one parallel pass that uses each backend's
//! fastest walk (the KD-tree a kd group at a time, the grid a cell at a time over its
//! contiguous arrays, brute force one query per boid). Modules above ask "who is near each of
//! these boids?" and never name a backend. No systems live here.

use bevy::prelude::*;

use super::grid::BATCH;
use super::grid::{Grid, Lanes, Neighbourhood};
use super::kdtree::Candidates;
use super::{IndexRef, NeighbourIndex, Snapshot};
use crate::sim::lanes::{Avx, F8, Width, vectorized};
use crate::sim::parallel::{fill, zip_runs};
use crate::sim::swarm::Swarm;

/// Which boids a traversal ([`IndexRef::map_near`]) reports as neighbours.
#[derive(Clone, Copy)]
pub enum Targets<'a> {
    /// Every boid (flocking, flocks): no filter to call for each candidate.
    Every,
    /// The boids whose slot passes the filter.
    Where(&'a (dyn Fn(usize) -> bool + Sync)),
}

impl Targets<'_> {
    /// Whether the boid of slot `j` is a target.
    #[inline(always)]
    pub fn has(&self, j: usize) -> bool {
        match self {
            Targets::Every => true,
            Targets::Where(f) => f(j),
        }
    }
}

/// One source boid's candidates, as its backend serves them during [`IndexRef::map_near`]:
/// only boids that pass the traversal's target filter are ever reported.
pub struct Near<'a> {
    kind: NearKind<'a>,
    target: Targets<'a>,
}

enum NearKind<'a> {
    /// The grid cells around the source's cell; the source is grid entry `entry`.
    Cells {
        grid: &'a Grid,
        hood: &'a Neighbourhood,
        entry: usize,
    },
    /// A kd group's candidates (already filtered).
    Group(&'a Candidates),
    /// Plain queries of an index.
    Query(&'a IndexRef<'a>),
    /// The neighbourhood of the source's cell in a grid over the targets alone (see
    /// [`Grid::map_sources_by_cell`]), searched from the source's position.
    Hood {
        grid: &'a Grid,
        hood: &'a Neighbourhood,
    },
}

impl Near<'_> {
    /// The source boid's position, velocity and swarm (the boid of snapshot slot `slot`), read
    /// where the backend keeps them next to its neighbours' — the grid's cell-ordered arrays,
    /// which a traversal reads in order, rather than the snapshot's slot-ordered ones, which
    /// it would read in a scattered order. The same values either way. Always inlined: as a
    /// call, its result came back through memory and stalled each boid (store forwarding;
    /// BENCHMARKS.md, fourteenth stop).
    #[inline(always)]
    pub fn source(&self, snapshot: &Snapshot, slot: usize) -> (Vec2, Vec2, Swarm) {
        match &self.kind {
            NearKind::Cells { grid, entry, .. } => {
                (grid.pos(*entry), grid.vel(*entry), grid.swarm[*entry])
            }
            _ => (snapshot.pos[slot], snapshot.vel[slot], snapshot.swarm[slot]),
        }
    }

    /// Calls `hit(slot, offset)` for every target whose minimum-image offset from `centre` is
    /// shorter than `radius` (at most the traversal's reach), in the backend's order — the
    /// order a query of `radius` would give.
    #[inline]
    pub fn for_each_within(&self, centre: Vec2, radius: f32, mut hit: impl FnMut(usize, Vec2)) {
        match &self.kind {
            NearKind::Cells { grid, hood, .. } => {
                let r2 = radius * radius;
                for strip in &hood.strips {
                    grid.for_each_hit(hood, strip, centre, r2, |e, offset| {
                        let slot = grid.slot[e] as usize;
                        if self.target.has(slot) {
                            hit(slot, offset);
                        }
                    });
                }
            }
            NearKind::Group(cands) => cands.for_each_within(centre, radius * radius, hit),
            NearKind::Query(index) => index.for_each_within(centre, radius, |j, offset| {
                if self.target.has(j) {
                    hit(j, offset)
                }
            }),
            NearKind::Hood { grid, hood } => {
                let r2 = radius * radius;
                for strip in &hood.strips {
                    grid.for_each_hit(hood, strip, centre, r2, |e, offset| {
                        hit(grid.slot[e] as usize, offset)
                    });
                }
            }
        }
    }

    /// The source boid's grid entry (its place in the grid's cell-ordered arrays) where the
    /// backend is the grid, whose entries [`Near::within_by_lanes`] also reports; `None`
    /// elsewhere.
    #[inline(always)]
    pub fn entry(&self) -> Option<usize> {
        match &self.kind {
            NearKind::Cells { entry, .. } => Some(*entry),
            _ => None,
        }
    }

    /// Where the backend keeps its candidates in contiguous arrays (see [`Near::lanes`]), calls
    /// `hit(slot, entry, d2)` (`entry` its place in the grid, see [`Near::entry`]) for every
    /// target whose minimum-image offset from `centre` is shorter than `radius` (at most the
    /// traversal's reach) and whose lane `keep` keeps, with the offset's squared length — the
    /// targets and `offset.length_squared()` of [`Near::for_each_within`], in its order, found
    /// eight candidates at a time in the packed copy of the neighbourhood — and returns true;
    /// otherwise calls nothing and returns false.
    /// `keep(lanes, d2, avx)` filters a block of eight candidates at once (see
    /// [`Grid::lanes_within`]); it may drop only candidates `hit` would ignore, and must not
    /// depend on what `hit` or `hit_entry` did (the hits come in batches, after their
    /// blocks). The lanes it marks as needing only their entry (bit `8 + k` for lane `k`, see
    /// [`Grid::lanes_within`]) go to `hit_entry(entry)` instead, in the same order. `avx` is
    /// `Some` on the AVX2 and AVX-512 paths and `None` on the baseline one (see [`Width`]): its
    /// presence proves the CPU has AVX, so a `keep` may then use AVX instructions. Mark the
    /// three closures `#[inline(always)]`.
    #[inline(always)]
    pub fn within_by_lanes(
        &self,
        centre: Vec2,
        radius: f32,
        mut keep: impl FnMut(&Lanes, F8, Option<Avx>) -> u32,
        mut hit: impl FnMut(usize, usize, f32),
        mut hit_entry: impl FnMut(usize),
    ) -> bool {
        let NearKind::Cells { grid, hood, .. } = &self.kind else {
            return false;
        };
        let r2 = radius * radius;
        macro_rules! scan {
            ($wx:literal, $wy:literal, $avx:ident) => {
                grid.lanes_within::<$wx, $wy>(
                    hood,
                    centre,
                    r2,
                    #[inline(always)]
                    |l: &Lanes, d2: F8| keep(l, d2, $avx),
                    #[inline(always)]
                    |e: usize, d2: f32| {
                        let slot = grid.slot[e] as usize;
                        if self.target.has(slot) {
                            hit(slot, e, d2);
                        }
                    },
                    #[inline(always)]
                    |e: usize| {
                        // Every boid a target: no need to know which boid it is.
                        if matches!(self.target, Targets::Every)
                            || self.target.has(grid.slot[e] as usize)
                        {
                            hit_entry(e);
                        }
                    },
                )
            };
        }
        vectorized!(w => {
            let avx = w.avx();
            match (hood.wrap_each.x, hood.wrap_each.y) {
                (false, false) => scan!(false, false, avx),
                (true, false) => scan!(true, false, avx),
                (false, true) => scan!(false, true, avx),
                (true, true) => scan!(true, true, avx),
            }
        });
        true
    }

    /// Where the backend keeps its candidates in contiguous arrays (the grid, traversed with
    /// every boid a target), visits them eight at a time as offsets from `centre` and
    /// velocities ([`Lanes`], see [`Grid::lanes`]) and returns true; otherwise visits nothing
    /// and returns false (use [`Near::for_each_within`]).
    /// `WX` / `WY` must be [`Near::wraps`]' axes.
    #[inline(always)]
    pub fn lanes<const WX: bool, const WY: bool>(
        &self,
        centre: Vec2,
        visit: impl FnMut(&Lanes),
    ) -> bool {
        debug_assert!(
            matches!(self.target, Targets::Every),
            "lanes carry every candidate: traverse with Targets::Every"
        );
        match &self.kind {
            NearKind::Cells { grid, hood, .. } => {
                grid.lanes::<WX, WY>(hood, centre, visit);
                true
            }
            _ => false,
        }
    }

    /// The axes along which [`Near::lanes`] wraps each offset on its own (the neighbourhood
    /// spans the whole wrapped axis); none where there are no lanes.
    #[inline]
    pub fn wraps(&self) -> BVec2 {
        match &self.kind {
            NearKind::Cells { hood, .. } => hood.wrap_each,
            _ => BVec2::FALSE,
        }
    }
}

impl IndexRef<'_> {
    /// For every boid whose slot passes `source`, `f(slot, near)` with its candidates within
    /// `reach` that are `target`s; the results by slot (`T::default()` for the others).
    /// `few_targets` says the targets are a small share of the boids (doctors, the infected):
    /// backends that gain from it then index them alone. The result does not depend on the
    /// number of threads.
    pub fn map_near<T: Send + Sync + Clone + Default + 'static>(
        &self,
        snapshot: &Snapshot,
        reach: f32,
        few_targets: bool,
        source: impl Fn(usize) -> bool + Sync,
        target: Targets,
        f: impl Fn(usize, &Near) -> T + Sync,
    ) -> Vec<T> {
        match self {
            IndexRef::KdTree(tree) => tree.map_by_group_where(
                reach,
                &source,
                |j| target.has(j),
                |i, c| {
                    f(
                        i,
                        &Near {
                            kind: NearKind::Group(c),
                            target,
                        },
                    )
                },
            ),
            IndexRef::Grid(grid) if !few_targets => {
                let mut out = vec![T::default(); snapshot.len()];
                batched_on_grid(
                    grid,
                    reach,
                    source,
                    target,
                    |i, near, out: &mut T| *out = f(i, near),
                    |_, done: &mut [T], out: &mut [T]| out.swap_with_slice(done),
                    &mut out,
                );
                out
            }
            IndexRef::Grid(_) => {
                // A grid of the targets alone, with cells of the reach, searched by the
                // sources a cell's neighbourhood at a time.
                let mut subset = Grid::default();
                subset.rebuild_subset(snapshot, reach, |j| target.has(j));
                if subset.reach_is_one_cell(reach) {
                    return subset.map_sources_by_cell(snapshot, reach, &source, |i, hood| {
                        let kind = NearKind::Hood {
                            grid: &subset,
                            hood,
                        };
                        f(i, &Near { kind, target })
                    });
                }
                // Cells a rounding narrower than the reach: a query each.
                let queries = IndexRef::Grid(&subset);
                per_source(snapshot.len(), &source, |i| {
                    let kind = NearKind::Query(&queries);
                    f(i, &Near { kind, target })
                })
            }
            IndexRef::Brute(_) => per_source(snapshot.len(), &source, |i| {
                f(
                    i,
                    &Near {
                        kind: NearKind::Query(self),
                        target,
                    },
                )
            }),
        }
    }

    /// [`IndexRef::map_near`] in two stages, for a result worked out several boids at a time,
    /// into `out` (by slot, one result a boid of the snapshot): `f(slot, near, result)` fills
    /// `result`, which starts as `S::default()`, with the source's intermediate result, and
    /// `finish(slots, results, out)` turns a batch of them into theirs (`out[k]` of
    /// `results[k]`, the boid of slot `slots[k]`, alone: how boids are batched must not change
    /// a result). On the grid the intermediate results live only in a small buffer per
    /// thread, and the batches follow the traversal (cell order), so nothing is read from the
    /// snapshot out of order; elsewhere they are all made first and finished in slot order.
    pub fn map_near_batched<S: Send + Sync + Clone + Default + 'static, T>(
        &self,
        snapshot: &Snapshot,
        reach: f32,
        source: impl Fn(usize) -> bool + Sync,
        target: Targets,
        f: impl Fn(usize, &Near, &mut S) + Sync,
        finish: impl Fn(&[u32], &mut [S], &mut [T]) + Sync,
        out: &mut [T],
    ) where
        T: Send + Sync + Clone + Default + 'static,
    {
        let IndexRef::Grid(grid) = self else {
            let mut done = self.map_near(snapshot, reach, false, source, target, |i, near| {
                let mut result = S::default();
                f(i, near, &mut result);
                result
            });
            zip_runs(&mut done, out, BATCH, |first, done, out| {
                for (k, (done, out)) in done
                    .chunks_mut(BATCH)
                    .zip(out.chunks_mut(BATCH))
                    .enumerate()
                {
                    let lo = first + k * BATCH;
                    let slots: [u32; BATCH] = std::array::from_fn(|m| (lo + m) as u32);
                    finish(&slots[..done.len()], done, out);
                }
            });
            return;
        };
        batched_on_grid(grid, reach, source, target, f, finish, out);
    }
}

/// [`IndexRef::map_near_batched`] on the grid: cell by cell ([`Grid::map_by_cell`]). Its own
/// function so that [`IndexRef::map_near`] can call it directly: through `map_near_batched`,
/// whose other backends call `map_near`, each would instantiate the other without end.
fn batched_on_grid<
    S: Send + Clone + Default + 'static,
    T: Send + Sync + Clone + Default + 'static,
>(
    grid: &Grid,
    reach: f32,
    source: impl Fn(usize) -> bool + Sync,
    target: Targets,
    f: impl Fn(usize, &Near, &mut S) + Sync,
    finish: impl Fn(&[u32], &mut [S], &mut [T]) + Sync,
    out: &mut [T],
) {
    grid.map_by_cell(
        reach,
        |e| source(grid.slot[e] as usize),
        |e, hood, result| {
            let kind = NearKind::Cells {
                grid,
                hood,
                entry: e,
            };
            f(grid.slot[e] as usize, &Near { kind, target }, result);
        },
        finish,
        out,
    );
}

/// `f(slot)` for every slot of `n` that passes `source`, in parallel; by slot.
fn per_source<T: Send + Clone + Default + 'static>(
    n: usize,
    source: &(impl Fn(usize) -> bool + Sync),
    f: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let mut out = vec![T::default(); n];
    fill(&mut out, |i| if source(i) { f(i) } else { T::default() });
    out
}
