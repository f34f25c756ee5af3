//! How long a sleeping thread takes to wake, on this machine (BENCHMARKS.md, round 3, eleventh
//! stop: why a headless run's workers spin between the loops of a step). One thread works
//! (spins) for a given time, then wakes a second thread that sleeps on a condition variable and
//! notes when it woke; 1 000 times for each working time. Then the same hand-over to a thread
//! that spins on an atomic instead of sleeping. Prints the 10th, 50th and 90th percentiles, µs.
//!
//! `cargo run --release --example wake_latency`

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Hand-overs per working time.
const ROUNDS: usize = 1000;

/// Percentiles 10, 50 and 90 of `xs`, µs.
fn percentiles(mut xs: Vec<f64>) -> [f64; 3] {
    xs.sort_by(f64::total_cmp);
    [0.1, 0.5, 0.9].map(|q| xs[((xs.len() - 1) as f64 * q) as usize])
}

/// Spins for `d` (the waking thread's work between hand-overs).
fn work_for(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Wake-ups of a thread asleep on a condition variable, after `gap` of work each, µs.
fn sleeping(gap: Duration) -> Vec<f64> {
    // (round sent, when it was sent); the sleeper answers with the round it saw.
    let shared = Arc::new((Mutex::new((0usize, None::<Instant>)), Condvar::new()));
    let seen = Arc::new(AtomicU64::new(0));
    let (s, seen2) = (Arc::clone(&shared), Arc::clone(&seen));
    let sleeper = std::thread::spawn(move || {
        let mut latencies = Vec::with_capacity(ROUNDS);
        let (lock, wake) = &*s;
        for round in 1..=ROUNDS {
            let mut state = lock.lock().expect("no panic holds it");
            while state.0 < round {
                state = wake.wait(state).expect("no panic holds it");
            }
            let sent = state.1.expect("sent with the round");
            latencies.push(sent.elapsed().as_secs_f64() * 1e6);
            seen2.store(round as u64, Ordering::Release);
        }
        latencies
    });
    let (lock, wake) = &*shared;
    for round in 1..=ROUNDS {
        work_for(gap);
        {
            let mut state = lock.lock().expect("no panic holds it");
            *state = (round, Some(Instant::now()));
        }
        wake.notify_one();
        // Wait until the sleeper has seen it (it then goes back to sleep while we work).
        while seen.load(Ordering::Acquire) < round as u64 {
            std::hint::spin_loop();
        }
    }
    sleeper.join().expect("the sleeper finishes")
}

/// Hand-overs to a thread that spins on an atomic, µs (half a round trip).
fn spinning() -> Vec<f64> {
    let flag = Arc::new(AtomicU64::new(0));
    let f = Arc::clone(&flag);
    let spinner = std::thread::spawn(move || {
        for round in 1..=ROUNDS as u64 {
            while f.load(Ordering::Acquire) != 2 * round - 1 {
                std::hint::spin_loop();
            }
            f.store(2 * round, Ordering::Release);
        }
    });
    let mut latencies = Vec::with_capacity(ROUNDS);
    for round in 1..=ROUNDS as u64 {
        let sent = Instant::now();
        flag.store(2 * round - 1, Ordering::Release);
        while flag.load(Ordering::Acquire) != 2 * round {
            std::hint::spin_loop();
        }
        latencies.push(sent.elapsed().as_secs_f64() * 1e6 / 2.0);
    }
    spinner.join().expect("the spinner finishes");
    latencies
}

fn main() {
    println!("wake-up of a sleeping thread, µs (p10 / p50 / p90 of {ROUNDS}):");
    for gap_us in [5, 20, 100, 300] {
        let [p10, p50, p90] = percentiles(sleeping(Duration::from_micros(gap_us)));
        println!("  after {gap_us:>3} µs of work: {p10:6.1} / {p50:6.1} / {p90:6.1}");
    }
    let [p10, p50, p90] = percentiles(spinning());
    println!("hand-over to a spinning thread, µs: {p10:.3} / {p50:.3} / {p90:.3}");
}
