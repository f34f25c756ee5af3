//! Deterministic data parallelism: split `0..n` into contiguous chunks, map each chunk on a
//! worker, and concatenate the results in chunk order. The output never depends on the number
//! of threads. The workers are Bevy's compute task pool's in the window, and in a headless run
//! on several threads the run's own ([`pool`]), which stay awake between the loops of a step.
//! Also how many threads that pool gets (the app and the headless runner both configure it
//! here). No systems live here.

use bevy::app::{TaskPoolOptions, TaskPoolPlugin, TaskPoolThreadAssignmentPolicy};
use bevy::tasks::{AsyncComputeTaskPool, ComputeTaskPool, IoTaskPool, TaskPool, TaskPoolBuilder};
use std::cell::Cell;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

mod pool;

use pool::{Pool, Started};

/// Threads a headless simulation of this process computes on (0: not set, as in the app):
/// the first [`init_headless_task_pools`] call sets it, as the first app creates the pools.
static HEADLESS_THREADS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread runs work handed aside ([`aside`]).
    static ASIDE: Cell<bool> = const { Cell::new(false) };
}

/// Whether the parallel loops run on the calling thread alone: a headless simulation asked for
/// one thread (`--threads 1`), or this thread runs work handed aside ([`aside`]: the other
/// threads are busy with the rest of the step).
#[inline]
pub fn serial() -> bool {
    HEADLESS_THREADS.load(Ordering::Relaxed) == 1 || ASIDE.with(Cell::get)
}

/// Every core this process may use, asked once: the standard library reads the process's CPU
/// set and its cgroup's CPU quota files for it each time (about 30 µs on the 2-core Zen 4 VM
/// of BENCHMARKS.md, round 3, twenty-eighth stop).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

/// Threads of the IO and of the async-compute pool, in the window and headless: the simulation
/// uses neither, but a plugin added by an extension may.
const SIDE_POOL_THREADS: usize = 1;

/// Task pools for the window: the compute pool gets every core (systems run on its threads).
pub fn task_pools(threads: Option<usize>) -> TaskPoolPlugin {
    pools(threads.unwrap_or_else(cores))
}

/// Creates the task pools of a headless simulation on `threads` threads in all (default: every
/// core), unless the process has them already. Its systems run on the calling thread, which also
/// works on every parallel loop it starts (a Bevy scope runs tasks on the thread waiting for it),
/// so the compute pool gets `threads − 1` threads (at least one); with one thread the loops run
/// inline and the pool (which Bevy needs) stays idle. `--threads 1` then computes on one thread, as
/// a peer's single-threaded run does. With several threads the loops go to the run's own workers
/// ([`pool`]) and Bevy's pool is only their fallback (see [`for_each_part`]). The pools are made
/// here rather than by Bevy's `TaskPoolPlugin`, which would also tick them from the main thread at
/// the end of every update — for tasks a headless run never spawns there, at a sixth of a small
/// step's cost — and by their builders rather than `TaskPoolOptions`, which asks the standard
/// library for the number of cores again. The IO and async-compute pools get
/// [`SIDE_POOL_THREADS`] each, as in the window.
pub fn init_headless_task_pools(threads: Option<usize>) {
    let threads = threads.unwrap_or_else(cores).max(1);
    let _ = HEADLESS_THREADS.compare_exchange(0, threads, Ordering::Relaxed, Ordering::Relaxed);
    let pool = |threads: usize, name: &str| {
        TaskPoolBuilder::new()
            .num_threads(threads)
            .thread_name(name.to_string())
            .build()
    };
    IoTaskPool::get_or_init(|| pool(SIDE_POOL_THREADS, "IO Task Pool"));
    AsyncComputeTaskPool::get_or_init(|| pool(SIDE_POOL_THREADS, "Async Compute Task Pool"));
    ComputeTaskPool::get_or_init(|| pool((threads - 1).max(1), "Compute Task Pool"));
}

/// Task pools whose compute pool has `cores` threads. Bevy's default gives the compute pool
/// only what the IO and async pools leave, which is one thread on a 2-core machine; the
/// simulation's parallel loops need the compute pool, so it gets them here and the other pools
/// [`SIDE_POOL_THREADS`] each.
fn pools(cores: usize) -> TaskPoolPlugin {
    let side = || TaskPoolThreadAssignmentPolicy {
        min_threads: SIDE_POOL_THREADS,
        max_threads: SIDE_POOL_THREADS,
        percent: 0.0,
        on_thread_spawn: None,
        on_thread_destroy: None,
    };
    TaskPoolPlugin {
        task_pool_options: TaskPoolOptions {
            min_total_threads: 1,
            max_total_threads: usize::MAX,
            io: side(),
            async_compute: side(),
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

/// Whether [`for_each_item!`] runs on the calling thread whatever the number of items: in
/// every headless run. With several threads, Bevy's `par_iter_mut` would wake a thread of
/// Bevy's pool for each query (tens of microseconds) while the run's own workers spin for the
/// core it needs; a query's items take tens of nanoseconds each. Measured on the AVX2 machine
/// of BENCHMARKS.md (round 3, eleventh stop), 2 threads, 4 alternating pairs: `bench` pandemic
/// 100 000 boids 37.2 ms a step with the items inline against 39.6 ms with `par_iter_mut`
/// (inline faster in 3 of 4).
pub fn items_inline() -> bool {
    HEADLESS_THREADS.load(Ordering::Relaxed) != 0
}

/// Below this many items the work runs on the calling thread.
const MIN_PARALLEL: usize = 256;

/// Queries with fewer entities than this are iterated inline by [`for_each_item!`], and
/// [`map_light_chunks`] and the grid's build run inline below it: for a few hundred boids,
/// waking the pool costs more than the work.
pub const SERIAL_BELOW: usize = 2048;

/// Runs `f` on every item of a mutable query: on the compute pool (`par_iter_mut`) when there
/// are at least [`SERIAL_BELOW`] of `n` items, inline otherwise (and in a headless run, see
/// [`items_inline`]). Items are independent, so the result is the same either way.
#[macro_export]
macro_rules! for_each_item {
    ($query:expr, $n:expr, $f:expr) => {
        if $n < $crate::sim::parallel::SERIAL_BELOW || $crate::sim::parallel::items_inline() {
            $query.iter_mut().for_each($f)
        } else {
            $query.par_iter_mut().for_each($f)
        }
    };
}

/// How many threads compute: one with `--threads 1` (see [`serial`]) and in the browser
/// (one thread there); in a headless run the compute pool's and the calling thread (which
/// works on the loops it starts); in the window the compute pool's (the systems run on it).
pub fn workers() -> usize {
    if serial() || cfg!(target_arch = "wasm32") {
        return 1;
    }
    let pool = ComputeTaskPool::get_or_init(TaskPool::default).thread_num();
    match HEADLESS_THREADS.load(Ordering::Relaxed) {
        0 => pool.max(1),
        _ => pool + 1,
    }
}

/// How many parts work on `n` items is split into: one (on the calling thread) below
/// [`MIN_PARALLEL`] items or with one thread, otherwise about eight per thread, each of at
/// least a quarter of [`MIN_PARALLEL`] items. Threads take parts one at a time, so one that
/// finishes early takes another; the finer split evens out parts of unequal cost (AVX2 machine
/// of BENCHMARKS.md, round 3, eleventh stop, 2 threads, 8 alternating pairs: `bench` pandemic
/// 10 000 / 100 000 boids 2.27 / 26.2 ms a step against 2.39 / 27.3 with four per thread,
/// faster in 7 and 6 of 8; flocking alone unchanged).
pub fn parts_for(n: usize) -> usize {
    if n < MIN_PARALLEL || serial() {
        return 1;
    }
    let threads = ComputeTaskPool::get_or_init(TaskPool::default).thread_num() + 1;
    (threads * 8).min(n.div_ceil(MIN_PARALLEL / 4))
}

/// Pair visits (one boid against one candidate neighbour: about a nanosecond in the flocking
/// scan) from which a loop of fewer than [`MIN_PARALLEL`] items is split, where a headless run's
/// own workers are awake between loops (such a loop costs them about a microsecond to start);
/// each part gets at least half as many. Measured on the 2-core Zen 4 of BENCHMARKS.md (round 3,
/// thirtieth stop): `matrix/B2_D2` with 75 and 90 boids (about 4 200 and 6 100 pairs in its
/// flocking loop) ran faster split in two than not; fewer pairs were not tried.
const MIN_PARALLEL_PAIRS: f64 = 4096.0;

/// How many parts a loop over `n` items that visits about `pairs()` pairs in all is split into:
/// [`parts_for`] from [`MIN_PARALLEL`] items up. Below, where a few items can still each visit
/// many candidates (130 boids that all see each other visit 17 000 pairs a loop), a part per
/// thread ([`small_parts`]), but only in a headless run with workers of its own: Bevy's pool
/// (the window's, or a batch's side by side) puts its threads to sleep, and waking one takes
/// longer than such a loop. `pairs` is asked only then.
pub fn parts_for_pairs(n: usize, pairs: impl FnOnce() -> f64) -> usize {
    let parts = parts_for(n);
    let workers = own_workers_now();
    if parts > 1 || workers == 0 {
        return parts;
    }
    small_parts(workers + 1, n, pairs())
}

/// Parts of a loop of fewer than [`MIN_PARALLEL`] items (`n`) visiting `pairs` pairs, on
/// `threads` threads that are awake: one per thread from [`MIN_PARALLEL_PAIRS`] pairs, but each
/// of at least half that many pairs and at most one per item; else one. (Two parts per thread,
/// each taken by whichever thread is free, were slower on `matrix/B2_D2`: 512 against 482 ms,
/// medians of 16.)
fn small_parts(threads: usize, n: usize, pairs: f64) -> usize {
    if pairs < MIN_PARALLEL_PAIRS {
        return 1;
    }
    let most = (2.0 * pairs / MIN_PARALLEL_PAIRS) as usize;
    threads.min(most).min(n).max(1)
}

/// [`map_chunks`] for work of tens of nanoseconds per item: on the calling thread below
/// [`SERIAL_BELOW`] items, where handing parts to the pool would cost more than the work.
pub fn map_light_chunks<T: Send + 'static>(
    n: usize,
    f: impl Fn(Range<usize>) -> Vec<T> + Sync,
) -> Vec<T> {
    if n < SERIAL_BELOW {
        f(0..n)
    } else {
        map_chunks(n, f)
    }
}

/// Maps `f` over contiguous chunks of `0..n` in parallel and concatenates the chunk results in
/// order.
pub fn map_chunks<T: Send + 'static>(
    n: usize,
    f: impl Fn(Range<usize>) -> Vec<T> + Sync,
) -> Vec<T> {
    let chunks = parts_for(n);
    if chunks == 1 {
        return f(0..n);
    }
    let size = n.div_ceil(chunks);
    let mut parts: Vec<Vec<T>> = (0..chunks).map(|_| Vec::new()).collect();
    for_each_part(parts.iter_mut().enumerate().collect(), |(c, part)| {
        *part = f((c * size).min(n)..((c + 1) * size).min(n));
    });
    parts.into_iter().flatten().collect()
}

/// Fills `out[i] = f(i)` in parallel.
pub fn fill<T: Send>(out: &mut [T], f: impl Fn(usize) -> T + Sync) {
    fill_runs(out, 1, per_item(f));
}

/// A part's work for [`fill_runs`] that sets each item `i` of the part to `f(i)`.
pub fn per_item<T>(f: impl Fn(usize) -> T + Sync) -> impl Fn(usize, &mut [T]) + Sync {
    move |first, part| {
        for (k, slot) in part.iter_mut().enumerate() {
            *slot = f(first + k);
        }
    }
}

/// [`fill_runs`] for work of tens of nanoseconds per item: on the calling thread below
/// [`SERIAL_BELOW`] items, as [`map_light_chunks`].
pub fn fill_runs_light<T: Send>(out: &mut [T], run: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    if out.len() < SERIAL_BELOW {
        f(0, out);
    } else {
        fill_runs(out, run, f);
    }
}

/// Calls `f(first, part)` on consecutive parts of `out` in parallel, `first` being the index
/// of the part's first item; every part but the last is a whole number of `run` items (so a
/// caller that works `run` items at a time never straddles two parts).
pub fn fill_runs<T: Send>(out: &mut [T], run: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    match run_part_size(out.len(), run) {
        None => f(0, out),
        Some(size) => for_each_part(
            out.chunks_mut(size)
                .enumerate()
                .map(|(c, part)| (c * size, part))
                .collect(),
            |(first, part)| f(first, part),
        ),
    }
}

/// [`fill_runs`] over two slices of the same length at once: `f(first, a_part, b_part)` with
/// the same items of each.
pub fn zip_runs<A: Send, B: Send>(
    a: &mut [A],
    b: &mut [B],
    run: usize,
    f: impl Fn(usize, &mut [A], &mut [B]) + Sync,
) {
    assert_eq!(a.len(), b.len(), "zip_runs needs slices of one length");
    match run_part_size(a.len(), run) {
        None => f(0, a, b),
        Some(size) => for_each_part(
            a.chunks_mut(size)
                .zip(b.chunks_mut(size))
                .enumerate()
                .map(|(c, (a, b))| (c * size, a, b))
                .collect(),
            |(first, a, b)| f(first, a, b),
        ),
    }
}

/// `0..n` in `parts` runs of about the same length, in order, the empty ones (more parts than
/// items) left out.
pub fn even_runs(n: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    (0..parts)
        .map(|k| n * k / parts..n * (k + 1) / parts)
        .filter(|run| !run.is_empty())
        .collect()
}

/// Items per part when `n` items are split in [`parts_for`] parts (all `n`, at least 1, for
/// one part): for loops that cut several slices alike (`chunks(part_size(n))` each).
pub fn part_size(n: usize) -> usize {
    run_part_size(n, 1).unwrap_or(n).max(1)
}

/// Items per part when `n` items are split in parts of whole `run`s ([`parts_for`] of them),
/// or `None` for one part.
fn run_part_size(n: usize, run: usize) -> Option<usize> {
    let chunks = parts_for(n);
    (chunks > 1).then(|| n.div_ceil(chunks).next_multiple_of(run.max(1)))
}

/// Runs `f` on every part, in parallel unless there is only one: on the headless run's own
/// workers ([`pool`]) when it has them and they are free, else on Bevy's compute pool.
pub fn for_each_part<P: Send>(parts: Vec<P>, f: impl Fn(P) + Sync) {
    if parts.len() <= 1 || serial() {
        parts.into_iter().for_each(f);
        return;
    }
    let parts = match headless_pool() {
        Some(pool) => {
            // Each part is taken out of its cell by the one thread that claims it.
            let cells: Vec<Mutex<Option<P>>> =
                parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
            let take = |k: usize| {
                cells[k]
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take()
            };
            let ran = pool.run(cells.len(), &|k| {
                if let Some(p) = take(k) {
                    f(p);
                }
            });
            if ran {
                return;
            }
            (0..cells.len()).filter_map(take).collect()
        }
        None => parts,
    };
    let pool = ComputeTaskPool::get_or_init(TaskPool::default);
    let f = &f;
    pool.scope(|s| {
        for p in parts {
            s.spawn(async move { f(p) });
        }
    });
}

/// Work handed to a worker thread of a headless run while the calling thread goes on: its
/// result is collected by [`Aside::join`].
#[must_use = "the result comes only from join"]
pub struct Aside<T> {
    started: Started,
    result: Arc<Mutex<Option<T>>>,
}

impl<T> Aside<T> {
    /// Waits for the work (running it here if no worker has taken it yet) and returns its
    /// result; re-raises its panic.
    pub fn join(self) -> T {
        self.started.join();
        self.result
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .expect("the work ran once and left its result")
    }
}

/// Whether loops here run on a headless run's own workers ([`pool`]): not in the window, not
/// with one thread, not side by side, not inside work handed aside.
pub fn own_pool_here() -> bool {
    !serial() && own_workers_now() > 0
}

/// Whether [`aside`] can hand work to a worker here: where loops run on the headless run's
/// own workers ([`own_pool_here`]).
pub fn can_aside() -> bool {
    own_pool_here()
}

/// Hands `f` to an idle worker of a headless run's own pool ([`pool`]) and returns at once, or
/// `None` (having started nothing) where there is no such worker (the window, one thread,
/// simulations side by side) or the pool is busy. `f` runs on one thread and every parallel
/// loop it starts runs there too ([`serial`]); loops the calling thread starts meanwhile find
/// one worker fewer. How `f`'s result is worked out must not depend on where it runs: if no
/// worker has taken it by [`Aside::join`], the calling thread runs it there. Dropping the
/// [`Aside`] does not cancel it. `join` spins while a worker finishes it, so `f` should take
/// microseconds, not seconds.
pub fn aside<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<Aside<T>> {
    if !can_aside() {
        return None;
    }
    let pool = headless_pool()?;
    let result = Arc::new(Mutex::new(None));
    let out = Arc::clone(&result);
    let f = Mutex::new(Some(f));
    let started = pool.start(Box::new(move |_| {
        let Some(f) = f.lock().unwrap_or_else(PoisonError::into_inner).take() else {
            return;
        };
        let was = ASIDE.with(|a| a.replace(true));
        let value = catch_unwind(AssertUnwindSafe(f));
        ASIDE.with(|a| a.set(was));
        match value {
            Ok(value) => *out.lock().unwrap_or_else(PoisonError::into_inner) = Some(value),
            Err(panic) => resume_unwind(panic),
        }
    }))?;
    Some(Aside { started, result })
}

/// The headless run's own workers, made at the first loop that uses them (see
/// [`own_workers`]).
fn headless_pool() -> Option<&'static Pool> {
    static POOL: OnceLock<Pool> = OnceLock::new();
    let workers = own_workers_now();
    // The thread count is set once per process, so the first answer holds for every later one.
    (workers > 0).then(|| POOL.get_or_init(|| Pool::new(workers)))
}

/// [`own_workers`] of this process now: its headless thread count, its cores, and whether
/// simulations run side by side.
fn own_workers_now() -> usize {
    own_workers(
        HEADLESS_THREADS.load(Ordering::Relaxed),
        cores(),
        SIDE_BY_SIDE.load(Ordering::Relaxed) > 0,
    )
}

/// How many workers of its own a headless run of `threads` threads has on a machine of
/// `cores` cores: one fewer than the threads (the calling thread works too), but no more than
/// the other cores (a spinning worker must not take the core of a thread with work). None in
/// the window (`threads` 0: its systems run on Bevy's compute pool), with one thread, or while
/// simulations run `side_by_side` ([`SideBySide`]); their loops go to Bevy's pool.
fn own_workers(threads: usize, cores: usize, side_by_side: bool) -> usize {
    if side_by_side {
        return 0;
    }
    threads.min(cores).saturating_sub(1)
}

/// How many [`SideBySide`] guards are alive.
static SIDE_BY_SIDE: AtomicUsize = AtomicUsize::new(0);

/// While one is alive, several simulations of this process run at once (a batch's jobs, one
/// per core) and their loops go to Bevy's compute pool, whose threads sleep as soon as they
/// are idle: the headless run's own workers, which spin between loops, would take cores the
/// other simulations need.
#[must_use = "simulations count as side by side only while the guard lives"]
pub struct SideBySide(());

impl SideBySide {
    /// Marks simulations as running side by side until the guard drops.
    pub fn begin() -> Self {
        SIDE_BY_SIDE.fetch_add(1, Ordering::Relaxed);
        Self(())
    }
}

impl Drop for SideBySide {
    fn drop(&mut self) {
        SIDE_BY_SIDE.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_workers_only_headless_on_several_threads_and_cores_and_not_side_by_side() {
        // The window, one thread, one core: none.
        assert_eq!(own_workers(0, 8, false), 0);
        assert_eq!(own_workers(1, 8, false), 0);
        assert_eq!(own_workers(4, 1, false), 0);
        // One fewer than the threads, at most the other cores.
        assert_eq!(own_workers(2, 2, false), 1);
        assert_eq!(own_workers(3, 8, false), 2);
        assert_eq!(own_workers(8, 2, false), 1);
        // A batch's runs side by side: none.
        assert_eq!(own_workers(2, 2, true), 0);
        assert_eq!(own_workers(8, 8, true), 0);
    }

    #[test]
    fn a_small_loop_is_split_one_part_a_thread_only_when_it_visits_enough_pairs() {
        // Too few pairs: one part, whatever the threads.
        assert_eq!(small_parts(2, 130, MIN_PARALLEL_PAIRS - 1.0), 1);
        assert_eq!(small_parts(8, 130, 0.0), 1);
        // Enough: one part per thread, each of at least half the threshold's pairs, at most
        // one per item, at least one.
        assert_eq!(small_parts(2, 130, MIN_PARALLEL_PAIRS), 2);
        assert_eq!(small_parts(8, 130, MIN_PARALLEL_PAIRS), 2);
        assert_eq!(small_parts(8, 130, 2.5 * MIN_PARALLEL_PAIRS), 5);
        assert_eq!(small_parts(8, 130, 17_000.0), 8);
        assert_eq!(small_parts(8, 3, 1e6), 3);
        assert_eq!(small_parts(2, 0, 1e6), 1);
    }

    #[test]
    fn chunks_concatenate_in_order() {
        for n in [0, 1, 255, 256, 1000, 4097] {
            let got = map_chunks(n, |r| r.map(|i| i * 2).collect());
            assert_eq!(got, (0..n).map(|i| i * 2).collect::<Vec<_>>());
            let mut out = vec![0usize; n];
            fill(&mut out, |i| i + 1);
            assert_eq!(out, (1..=n).collect::<Vec<_>>());
            // Runs of 8 never straddle two parts: each part starts on a multiple of 8.
            let mut out = vec![0usize; n];
            fill_runs(&mut out, 8, |first, part| {
                assert_eq!(first % 8, 0);
                for (k, x) in part.iter_mut().enumerate() {
                    *x = first + k;
                }
            });
            assert_eq!(out, (0..n).collect::<Vec<_>>());
            // Two slices split alike: each part sees the same items of both.
            let mut a: Vec<usize> = (0..n).collect();
            let mut b = vec![0usize; n];
            zip_runs(&mut a, &mut b, 64, |first, a, b| {
                assert_eq!(first % 64, 0);
                assert_eq!(a.len(), b.len());
                for (k, (a, b)) in a.iter().zip(b.iter_mut()).enumerate() {
                    assert_eq!(*a, first + k);
                    *b = a * 3;
                }
            });
            assert_eq!(b, (0..n).map(|i| i * 3).collect::<Vec<_>>());
        }
    }
}
