//! Deterministic data parallelism on Bevy's compute task pool: split `0..n` into contiguous
//! chunks, map each chunk on a worker, and concatenate the results in chunk order. The output
//! never depends on the number of threads. Also how many threads that pool gets (the app and
//! the headless runner both configure it here). No systems live here.

use bevy::app::{TaskPoolOptions, TaskPoolPlugin, TaskPoolThreadAssignmentPolicy};
use bevy::tasks::{ComputeTaskPool, TaskPool};
use std::ops::Range;

/// Task pools with `threads` compute threads (default: every core). Bevy's default gives the
/// compute pool only what the IO and async pools leave, which is one thread on a 2-core machine;
/// the simulation's parallel loops need the compute pool, so it gets every core here and the
/// other pools one thread each.
pub fn task_pools(threads: Option<usize>) -> TaskPoolPlugin {
    let cores = threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let one = || TaskPoolThreadAssignmentPolicy {
        min_threads: 1,
        max_threads: 1,
        percent: 0.0,
        on_thread_spawn: None,
        on_thread_destroy: None,
    };
    TaskPoolPlugin {
        task_pool_options: TaskPoolOptions {
            min_total_threads: 1,
            max_total_threads: usize::MAX,
            io: one(),
            async_compute: one(),
            compute: TaskPoolThreadAssignmentPolicy {
                min_threads: cores.max(1),
                max_threads: cores.max(1),
                percent: 1.0,
                on_thread_spawn: None,
                on_thread_destroy: None,
            },
        },
    }
}

/// Below this many items the work runs on the calling thread.
const MIN_PARALLEL: usize = 256;

/// Queries with fewer entities than this are iterated inline by [`for_each_item!`]: for a few
/// hundred boids, waking the pool costs more than the work.
pub const SERIAL_BELOW: usize = 2048;

/// Runs `f` on every item of a mutable query: on the compute pool (`par_iter_mut`) when there
/// are at least [`SERIAL_BELOW`] of `n` items, inline otherwise. Items are independent, so the
/// result is the same either way.
#[macro_export]
macro_rules! for_each_item {
    ($query:expr, $n:expr, $f:expr) => {
        if $n < $crate::sim::parallel::SERIAL_BELOW {
            $query.iter_mut().for_each($f)
        } else {
            $query.par_iter_mut().for_each($f)
        }
    };
}

/// Maps `f` over contiguous chunks of `0..n` in parallel and concatenates the chunk results in
/// order.
pub fn map_chunks<T: Send + 'static>(
    n: usize,
    f: impl Fn(Range<usize>) -> Vec<T> + Sync,
) -> Vec<T> {
    if n < MIN_PARALLEL {
        return f(0..n);
    }
    let pool = ComputeTaskPool::get_or_init(TaskPool::default);
    let chunks = (pool.thread_num().max(1) * 4).min(n.div_ceil(MIN_PARALLEL / 4));
    let size = n.div_ceil(chunks);
    let f = &f;
    let parts: Vec<Vec<T>> = pool.scope(|s| {
        for c in 0..chunks {
            let range = (c * size).min(n)..((c + 1) * size).min(n);
            s.spawn(async move { f(range) });
        }
    });
    parts.into_iter().flatten().collect()
}

/// Fills `out[i] = f(i)` in parallel.
pub fn fill<T: Send + 'static>(out: &mut [T], f: impl Fn(usize) -> T + Sync) {
    let n = out.len();
    if n < MIN_PARALLEL {
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = f(i);
        }
        return;
    }
    let pool = ComputeTaskPool::get_or_init(TaskPool::default);
    let chunks = (pool.thread_num().max(1) * 4).min(n.div_ceil(MIN_PARALLEL / 4));
    let size = n.div_ceil(chunks);
    let f = &f;
    pool.scope(|s| {
        for (c, part) in out.chunks_mut(size).enumerate() {
            s.spawn(async move {
                for (k, slot) in part.iter_mut().enumerate() {
                    *slot = f(c * size + k);
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_concatenate_in_order() {
        for n in [0, 1, 255, 256, 1000, 4097] {
            let got = map_chunks(n, |r| r.map(|i| i * 2).collect());
            assert_eq!(got, (0..n).map(|i| i * 2).collect::<Vec<_>>());
            let mut out = vec![0usize; n];
            fill(&mut out, |i| i + 1);
            assert_eq!(out, (1..=n).collect::<Vec<_>>());
        }
    }
}
