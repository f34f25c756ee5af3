//! The traversal of every boid of a grid cell by cell ([`Grid::map_by_cell`]): the steering
//! pass's, the epidemic's contact search's and a metrics sample's, each boid's result computed
//! with its cell's neighbourhood and put in the boid's slot. No systems live here.

use std::ops::Range;

use super::{BATCH, Grid, Neighbourhood, STAGED_MAX};
use crate::sim::parallel::{SERIAL_BELOW, even_runs, fill_runs, for_each_part, parts_for_pairs};

impl Grid {
    /// Maps every boid to a result, cell by cell in parallel, into `out` (one result a boid,
    /// indexed by snapshot slot; every slot is written). A cell's neighbourhood (its strips
    /// within `reach`) is worked out once per part that holds boids of the cell and shared by
    /// those boids (each boid is in its own neighbourhood), so the caller's inner loop is a
    /// straight pass over contiguous arrays. Two stages:
    /// `f(entry, neighbourhood, result)` fills `result`, a slot of a small buffer per part
    /// reset to `S::default()` before each call, with the boid's intermediate result, and
    /// `finish(slots, results, out)` turns a batch of at most [`BATCH`] consecutive entries'
    /// results into theirs (`out[k]` of `results[k]`, the boid of snapshot slot `slots[k]`,
    /// alone: how entries are batched must not change a result). Only the finished results
    /// are kept for every boid, in `out`: on one thread each finished batch is moved straight to
    /// its boids' slots. Split into parts (runs of entries of about the same length, in cell
    /// order), from [`SERIAL_BELOW`] to [`STAGED_MAX`] boids the parts' results are staged:
    /// kept in entry order until every part is done, then copied to `out` a run of slots per
    /// part; otherwise each part moves its finished batches straight to their slots. `f` is
    /// called only for the entries `wanted` keeps (their results start as `S::default()` too),
    /// and a cell none of whose entries it keeps has no neighbourhood worked out. The parts are
    /// [`parts_for_pairs`]' (fewer than 256 boids are split too when their neighbourhoods hold
    /// enough candidates, by [`Grid::pairs_within`]'s estimate).
    pub fn map_by_cell<S: Clone + Default, T: Send + Sync + Clone + Default + 'static>(
        &self,
        reach: f32,
        wanted: impl Fn(usize) -> bool + Sync,
        f: impl Fn(usize, &Neighbourhood, &mut S) + Sync,
        finish: impl Fn(&[u32], &mut [S], &mut [T]) + Sync,
        out: &mut [T],
    ) {
        let n = self.slot.len();
        let parts = parts_for_pairs(n, || {
            self.pairs_within(reach, (0..n).filter(|&e| wanted(e)).count())
        });
        let stage = (SERIAL_BELOW..=STAGED_MAX).contains(&n);
        self.map_by_cell_in(parts, stage, reach, wanted, f, finish, out);
    }

    /// [`Grid::map_by_cell`] in `parts` runs of entries of about the same length each, their
    /// results staged if `stage`. A run may start or end inside a cell (each of its runs then
    /// works out its neighbourhood), so that even a grid of a few cells splits evenly; neither
    /// how the entries are split nor staging ever changes a result.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn map_by_cell_in<S: Clone + Default, T: Send + Sync + Clone + Default + 'static>(
        &self,
        parts: usize,
        stage: bool,
        reach: f32,
        wanted: impl Fn(usize) -> bool + Sync,
        f: impl Fn(usize, &Neighbourhood, &mut S) + Sync,
        finish: impl Fn(&[u32], &mut [S], &mut [T]) + Sync,
        out: &mut [T],
    ) {
        let n = self.slot.len();
        // Every slot of the snapshot is an entry, once (the counting sort places each kept
        // slot once, and all were kept), so the entries' slots are the indices of `out`, each
        // once (unstaged, the parts write them concurrently, never two the same), and
        // `entry_of` is indexed by slot.
        assert_eq!(n, self.boids, "map_by_cell needs a grid of every boid");
        assert_eq!(out.len(), n, "map_by_cell writes one result a boid");
        let chunks = even_runs(n, parts);
        if chunks.len() <= 1 || !stage {
            let by_slot = BySlot::new(out);
            let (wanted, f, finish, by_slot) = (&wanted, &f, &finish, &by_slot);
            for_each_part(chunks, |chunk| {
                let mut done = vec![T::default(); BATCH];
                self.each_batch(chunk, reach, wanted, f, |first, batch| {
                    let slots = &self.slot[first..first + batch.len()];
                    let done = &mut done[..batch.len()];
                    finish(slots, batch, done);
                    for (&slot, result) in slots.iter().zip(done) {
                        // SAFETY: `slot` is this entry's alone (see above), and `out` is not
                        // read until every part is done.
                        unsafe { by_slot.put(slot as usize, std::mem::take(result)) };
                    }
                });
            });
            return;
        }
        // Staged: each part's finished results stay in entry order, in its own run of
        // `staged`; then each part of the slots takes its boids' results from their entries.
        let mut staged = vec![T::default(); n];
        let mut rest = staged.as_mut_slice();
        let chunks: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let own;
                (own, rest) = std::mem::take(&mut rest).split_at_mut(chunk.len());
                (chunk, own)
            })
            .collect();
        let (wanted, f, finish) = (&wanted, &f, &finish);
        for_each_part(chunks, |(chunk, own)| {
            let base = chunk.start;
            self.each_batch(chunk, reach, wanted, f, |first, batch| {
                let slots = &self.slot[first..first + batch.len()];
                finish(slots, batch, &mut own[first - base..][..batch.len()]);
            });
        });
        let staged = &staged[..];
        fill_runs(out, 1, |first, part| {
            let entries = &self.entry_of[first..first + part.len()];
            for (result, &entry) in part.iter_mut().zip(entries) {
                result.clone_from(&staged[entry as usize]);
            }
        });
    }

    /// `flush(first, results)` for each batch of at most [`BATCH`] consecutive entries of
    /// `run`, in order, `results` their intermediate results: each reset to `S::default()`,
    /// then, for an entry `wanted` keeps, filled by `f(entry, neighbourhood, result)`. A cell's
    /// neighbourhood is worked out once for its entries in the run, if `wanted` keeps any.
    fn each_batch<S: Clone + Default>(
        &self,
        run: Range<usize>,
        reach: f32,
        wanted: &impl Fn(usize) -> bool,
        f: &impl Fn(usize, &Neighbourhood, &mut S),
        mut flush: impl FnMut(usize, &mut [S]),
    ) {
        let cells = self.cols * self.rows;
        let mut near = Neighbourhood::reusing();
        // The batch holds the results of entries `first..first + len`.
        let mut batch = vec![S::default(); BATCH];
        let mut len = 0;
        let mut first = run.start;
        // Each entry's result starts as a copy of this one (built in place for every entry, the
        // default was written to the stack in pieces and read back whole, which stalled each
        // boid: BENCHMARKS.md, round 3, twenty-fourth stop).
        let blank = S::default();
        // The cell of the run's first entry: the last whose entries start at or before it.
        let c0 = self.start.partition_point(|&s| s as usize <= run.start) - 1;
        for c in c0..cells {
            let lo = (self.start[c] as usize).max(run.start);
            let hi = (self.start[c + 1] as usize).min(run.end);
            if lo >= run.end {
                break;
            }
            let own = lo..hi;
            if own.is_empty() {
                continue;
            }
            let any = own.clone().any(wanted);
            if any {
                self.neighbourhood(c % self.cols, c / self.cols, reach, &mut near);
            }
            for e in own {
                if len == BATCH {
                    flush(first, &mut batch);
                    (first, len) = (e, 0);
                }
                batch[len].clone_from(&blank);
                if any && wanted(e) {
                    f(e, &near, &mut batch[len]);
                }
                len += 1;
            }
        }
        flush(first, &mut batch[..len]);
        near.keep_columns();
    }
}

/// A slice that parallel parts write to, each at indices no other part writes: how
/// [`Grid::map_by_cell`] (unstaged) and [`Grid::map_sources_by_cell`] put results straight in
/// slot order from the thread that made them.
pub(super) struct BySlot<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: a `BySlot` only hands out writes of `T`s to distinct indices (the caller's promise
// in `put`), which is sending them to the thread that owns the slice.
unsafe impl<T: Send> Sync for BySlot<T> {}

impl<T> BySlot<T> {
    pub(super) fn new(out: &mut [T]) -> Self {
        Self {
            ptr: out.as_mut_ptr(),
            len: out.len(),
        }
    }

    /// Replaces element `i` with `value`.
    ///
    /// # Safety
    /// No other thread reads or writes element `i` while the slice is shared, and the slice
    /// outlives every call.
    pub(super) unsafe fn put(&self, i: usize, value: T) {
        assert!(i < self.len, "index {i} out of {}", self.len);
        // SAFETY: in bounds (checked), and element `i` is this caller's alone.
        unsafe { *self.ptr.add(i) = value };
    }
}
