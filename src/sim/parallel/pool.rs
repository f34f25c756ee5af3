//! The headless runner's own worker threads for the parallel loops of [`super`]. Between loops
//! an idle worker spins for a short while before it sleeps, so a loop that starts within that
//! while starts on every thread at once. A sleeping thread takes tens of microseconds to wake
//! (a median of ~35 µs on the 2-core KVM machine of BENCHMARKS.md), which is more than the
//! whole parallel work of a 1 000-boid step; Bevy's compute pool puts its threads to sleep at
//! once. A loop is split into the same parts whichever pool runs it, and which thread runs a
//! part never changes a result. No systems live here.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

/// How long an idle worker spins, waiting for the next loop, before it sleeps: longer than
/// the serial stretches between the loops of a step (so consecutive loops find it awake), short
/// enough that a finished run leaves no thread busy for long.
const SPIN: Duration = Duration::from_micros(500);

/// Spins between two looks at the clock (and two offers of the core to another thread).
const SPINS_PER_CHECK: u32 = 64;

/// A body a job owns (one started with [`Pool::start`]), which nothing borrows.
type OwnedBody = Box<dyn Fn(usize) + Send + Sync>;

/// One loop: parts `0..parts`, each run by the first thread that claims it.
struct Job {
    /// The loop's body, its lifetime erased. It is called only for a claimed part, and the
    /// thread that started the loop returns only once every claimed part is done, so the body
    /// outlives every call. A started job's (`owned`) is its own instead: a box given up with
    /// `Box::into_raw`, freed when the job drops, so it lives as long as the job.
    body: *const (dyn Fn(usize) + Sync),
    /// Whether `body` is the job's own (from [`Pool::start`]).
    owned: bool,
    parts: usize,
    /// The next part to claim (claims past `parts` run nothing).
    next: AtomicUsize,
    /// Parts done.
    done: AtomicUsize,
    /// The first panic of a part, re-raised on the thread that started the loop.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

// SAFETY: `body` points to a `Sync` closure, called from several threads at once only while
// the thread that owns it waits for them, or owned by the job and `Send` (it may be dropped on
// a worker; see `Job::body`).
unsafe impl Send for Job {}
// SAFETY: as above; every other field is `Sync`.
unsafe impl Sync for Job {}

impl Job {
    /// Runs unclaimed parts until there are none.
    fn work(&self) {
        loop {
            let part = self.next.fetch_add(1, Ordering::Relaxed);
            if part >= self.parts {
                return;
            }
            // SAFETY: this part was unclaimed until now, so the loop's owner still waits for
            // it, or the job owns the body; either way it is alive (see `Job::body`).
            let body = unsafe { &*self.body };
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| body(part))) {
                lock(&self.panic).get_or_insert(panic);
            }
            self.done.fetch_add(1, Ordering::Release);
        }
    }
}

/// What the workers and the thread that starts loops share.
struct Shared {
    /// Bumped (under `state`'s lock) for every new loop; read by spinning workers without it.
    epoch: AtomicU64,
    state: Mutex<State>,
    wake: Condvar,
}

/// The latest loop and how many workers sleep.
struct State {
    job: Option<Arc<Job>>,
    sleeping: usize,
}

/// Worker threads that run the parts of one loop at a time beside the thread that starts it
/// (and a job started with [`Pool::start`], which a worker may still run while the next loop
/// starts: that loop then has one worker fewer).
pub(super) struct Pool {
    shared: Arc<Shared>,
    /// Held while a loop runs (and while a job is started). A loop started meanwhile, by
    /// another thread (a second simulation of the process) or inside a part, is not run here.
    owner: Mutex<()>,
}

/// A lock, whether or not a panicking thread held it (parts' panics are caught and re-raised
/// on the loop's own thread; the data behind these locks stays whole).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pool {
    /// A pool of `workers` threads (besides the threads that start loops).
    pub(super) fn new(workers: usize) -> Self {
        let shared = Arc::new(Shared {
            epoch: AtomicU64::new(0),
            state: Mutex::new(State {
                job: None,
                sleeping: 0,
            }),
            wake: Condvar::new(),
        });
        for k in 0..workers {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(format!("sim-worker-{k}"))
                .spawn(move || worker(&shared))
                .expect("the system let the simulation start a worker thread");
        }
        Self {
            shared,
            owner: Mutex::new(()),
        }
    }

    /// Runs `body(part)` for every part of `0..parts`, on this thread and the workers, and
    /// returns once all are done (re-raising the first part's panic). Returns `false`, having
    /// run nothing, while the pool runs another loop (another thread's, or this one's from
    /// inside one of its parts).
    pub(super) fn run(&self, parts: usize, body: &(dyn Fn(usize) + Sync)) -> bool {
        let Some(_owner) = self.own() else {
            return false;
        };
        let body: *const (dyn Fn(usize) + Sync + '_) = body;
        // SAFETY: only the lifetime changes; this function returns only once every part that
        // calls `body` is done (see `Job::body`).
        let body: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(body) };
        let job = Arc::new(Job::new(body, false, parts));
        self.publish(&job);
        job.work();
        Started(job).finish();
        true
    }

    /// Hands `body(0)` to a worker and returns at once; [`Started::join`] waits for it (or
    /// runs it, if no worker has claimed it yet). `None`, having started nothing, while the
    /// pool runs a loop (as [`Pool::run`] refuses one). The pool stays free for loops meanwhile:
    /// one started while a worker runs this finds one thread fewer.
    pub(super) fn start(&self, body: OwnedBody) -> Option<Started> {
        let _owner = self.own()?;
        let body: *const (dyn Fn(usize) + Sync) = Box::into_raw(body);
        let job = Arc::new(Job::new(body, true, 1));
        self.publish(&job);
        Some(Started(job))
    }

    /// The pool for this thread, unless a loop runs (or a job is being started).
    fn own(&self) -> Option<MutexGuard<'_, ()>> {
        match self.owner.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Makes `job` the latest loop and wakes the sleeping workers.
    fn publish(&self, job: &Arc<Job>) {
        let mut state = lock(&self.shared.state);
        state.job = Some(Arc::clone(job));
        self.shared.epoch.fetch_add(1, Ordering::Release);
        if state.sleeping > 0 {
            self.shared.wake.notify_all();
        }
    }
}

impl Job {
    fn new(body: *const (dyn Fn(usize) + Sync), owned: bool, parts: usize) -> Self {
        Job {
            body,
            owned,
            parts,
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            panic: Mutex::new(None),
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: an owned body came from `Box::into_raw` in `Pool::start` and is freed
            // only here, once, when no thread can call it any more (the job is gone).
            drop(unsafe { Box::from_raw(self.body.cast_mut()) });
        }
    }
}

/// A job handed to the workers, to be waited for.
pub(super) struct Started(Arc<Job>);

impl Started {
    /// Runs the parts no thread has claimed yet, waits for the others, and re-raises the first
    /// part's panic.
    pub(super) fn join(self) {
        self.0.work();
        self.finish();
    }

    /// Waits for the parts other threads claimed (spinning, as they are short) and re-raises
    /// the first part's panic.
    fn finish(self) {
        let job = &self.0;
        spin_until(|| job.done.load(Ordering::Acquire) >= job.parts, || false);
        if let Some(panic) = lock(&job.panic).take() {
            resume_unwind(panic);
        }
    }
}

/// Spins until `done()` holds (true), or until `give_up()` does (false), which is asked every
/// [`SPINS_PER_CHECK`] spins, when the core is also offered to other threads.
fn spin_until(done: impl Fn() -> bool, give_up: impl Fn() -> bool) -> bool {
    let mut spins = 0u32;
    while !done() {
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(SPINS_PER_CHECK) {
            if give_up() {
                return false;
            }
            std::thread::yield_now();
        }
        std::hint::spin_loop();
    }
    true
}

/// A worker: waits for each new loop and runs its parts, for the life of the process.
fn worker(shared: &Shared) {
    let mut seen = 0;
    loop {
        seen = next_epoch(shared, seen);
        let job = lock(&shared.state).job.clone();
        if let Some(job) = job {
            job.work();
        }
    }
}

/// Waits until the epoch is no longer `seen` and returns it: spinning for [`SPIN`] (offering
/// the core to other threads now and then), then asleep until a loop starts.
fn next_epoch(shared: &Shared, seen: u64) -> u64 {
    let since = Instant::now();
    let moved = || shared.epoch.load(Ordering::Acquire) != seen;
    if spin_until(moved, || since.elapsed() > SPIN) {
        return shared.epoch.load(Ordering::Acquire);
    }
    let mut state = lock(&shared.state);
    loop {
        let epoch = shared.epoch.load(Ordering::Acquire);
        if epoch != seen {
            return epoch;
        }
        state.sleeping += 1;
        state = shared
            .wake
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner);
        state.sleeping -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::thread::ThreadId;

    /// Waits (up to ten seconds) until `done` holds.
    fn wait_for(done: impl Fn() -> bool) -> bool {
        let since = Instant::now();
        while !done() {
            if since.elapsed() > Duration::from_secs(10) {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    /// Runs a loop of 40 parts in which the caller's parts wait until a worker has started
    /// one and a worker's until the caller has, so both must join in; checks every part ran
    /// once. (A worker that waited for nobody could claim every part while a busy machine kept
    /// the caller off its core.)
    fn run_with_a_worker(pool: &Pool) {
        let caller = std::thread::current().id();
        let counts: Vec<AtomicUsize> = (0..40).map(|_| AtomicUsize::new(0)).collect();
        let ran_by: Mutex<Vec<ThreadId>> = Mutex::new(Vec::new());
        let (by_caller, by_worker) = (AtomicBool::new(false), AtomicBool::new(false));
        let ran = pool.run(counts.len(), &|k| {
            counts[k].fetch_add(1, Ordering::Relaxed);
            let me = std::thread::current().id();
            lock(&ran_by).push(me);
            if me == caller {
                by_caller.store(true, Ordering::Relaxed);
                assert!(
                    wait_for(|| by_worker.load(Ordering::Relaxed)),
                    "no worker ran a part"
                );
            } else {
                by_worker.store(true, Ordering::Relaxed);
                assert!(
                    wait_for(|| by_caller.load(Ordering::Relaxed)),
                    "the caller ran no part"
                );
            }
        });
        assert!(ran);
        assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1));
        assert!(lock(&ran_by).contains(&caller));
    }

    #[test]
    fn every_part_runs_once_on_the_caller_and_the_workers_awake_or_asleep() {
        let pool = Pool::new(1);
        run_with_a_worker(&pool);
        // Straight after a loop the worker spins; long after, it sleeps and must be woken.
        run_with_a_worker(&pool);
        std::thread::sleep(SPIN * 4);
        run_with_a_worker(&pool);
    }

    #[test]
    fn a_loop_started_while_one_runs_is_refused_and_the_running_one_finishes() {
        let pool = Pool::new(1);
        let (inner, other_thread) = (AtomicBool::new(true), AtomicBool::new(true));
        let count = AtomicUsize::new(0);
        assert!(pool.run(4, &|k| {
            count.fetch_add(1, Ordering::Relaxed);
            if k == 0 {
                inner.store(pool.run(3, &|_| {}), Ordering::Relaxed);
                let other = std::thread::scope(|s| s.spawn(|| pool.run(3, &|_| {})).join());
                other_thread.store(other.expect("no panic"), Ordering::Relaxed);
            }
        }));
        assert_eq!(count.into_inner(), 4);
        assert!(
            !inner.into_inner(),
            "a loop inside a part was handed to the busy pool"
        );
        assert!(
            !other_thread.into_inner(),
            "another thread's loop was handed to the busy pool"
        );
        assert!(pool.run(2, &|_| {}), "the pool is free again");
    }

    /// A started job runs once, on a worker while the caller goes on (here the caller waits
    /// for the worker to take it), or in `join` when no worker has; loops run meanwhile; its
    /// panic reaches `join`.
    #[test]
    fn a_started_job_runs_once_beside_the_caller_or_in_join() {
        let pool = Pool::new(1);
        let (taken, count) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicUsize::new(0)),
        );
        let (t, c) = (Arc::clone(&taken), Arc::clone(&count));
        let caller = std::thread::current().id();
        let started = pool
            .start(Box::new(move |_| {
                assert_ne!(std::thread::current().id(), caller, "a worker took it");
                t.store(true, Ordering::Relaxed);
                c.fetch_add(1, Ordering::Relaxed);
            }))
            .expect("the pool is free");
        assert!(
            wait_for(|| taken.load(Ordering::Relaxed)),
            "no worker took it"
        );
        assert!(pool.run(3, &|_| {}), "the pool runs loops meanwhile");
        started.join();
        assert_eq!(count.load(Ordering::Relaxed), 1);
        // A job published while the worker is busy is run by `join` if the worker has not
        // claimed it; once, either way.
        let (busy, running) = (
            Arc::new(AtomicBool::new(true)),
            Arc::new(AtomicBool::new(false)),
        );
        let (b, r) = (Arc::clone(&busy), Arc::clone(&running));
        let first = pool.start(Box::new(move |_| {
            r.store(true, Ordering::Relaxed);
            while b.load(Ordering::Relaxed) {}
        }));
        assert!(
            wait_for(|| running.load(Ordering::Relaxed)),
            "no worker took it"
        );
        let c = Arc::clone(&count);
        let second = pool.start(Box::new(move |_| {
            c.fetch_add(1, Ordering::Relaxed);
        }));
        second.expect("the pool is free").join();
        assert_eq!(count.load(Ordering::Relaxed), 2);
        busy.store(false, Ordering::Relaxed);
        first.expect("the pool is free").join();
        let failing = pool.start(Box::new(|_| panic!("aside")));
        let outcome = catch_unwind(AssertUnwindSafe(|| failing.expect("free").join()));
        assert_eq!(
            outcome.expect_err("re-raised").downcast_ref(),
            Some(&"aside")
        );
    }

    #[test]
    fn a_part_s_panic_reaches_the_caller_once_every_part_is_done() {
        let pool = Pool::new(1);
        let count = AtomicUsize::new(0);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            pool.run(50, &|k| {
                if k == 7 {
                    panic!("part seven");
                }
                std::thread::sleep(Duration::from_micros(200));
                count.fetch_add(1, Ordering::Relaxed);
            })
        }));
        let panic = outcome.expect_err("the part's panic is re-raised");
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"part seven"));
        assert_eq!(
            count.into_inner(),
            49,
            "every other part ran before the panic returned"
        );
        assert!(pool.run(2, &|_| {}), "the pool still works");
    }
}
