//! How fast checkpoints are (BENCHMARKS.md, "Checkpoints"): for the `bench` pandemic workload
//! of N boids (default 100 000), the median over 5 repeats of writing a checkpoint file
//! (capture + encode + write), of restoring one (read + decode + restore into a running
//! simulation), its size per boid, and the app's worst jump on a timeline with a mark every
//! simulated second (restore + 59 replayed steps) at 10 000 boids.
//!
//! `cargo run --release --example checkpoint_speed -- [N]`

use std::time::Instant;

use pandemic_boids::run::Simulation;
use pandemic_boids::run::bench::pandemic;
use pandemic_boids::sim::checkpoint::{decode, encode, restore};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let dir = std::env::temp_dir().join("pandemic-boids-checkpoint-speed");
    std::fs::create_dir_all(&dir).expect("temp folder");
    let file = dir.join("bench.ckpt");
    let mut config = pandemic(n);
    config.neighbour_index = pandemic_boids::sim::config::IndexKind::Grid;
    let mut sim = Simulation::new(config.clone(), None);
    for _ in 0..30 {
        sim.step();
    }
    let (mut write, mut read) = (Vec::new(), Vec::new());
    let mut bytes = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let checkpoint = sim.checkpoint().expect("checkpoint");
        let data = encode(&checkpoint);
        std::fs::write(&file, &data).expect("write");
        write.push(t.elapsed().as_secs_f64() * 1e3);
        bytes = data.len();
        let t = Instant::now();
        let data = std::fs::read(&file).expect("read");
        let checkpoint = decode(&data).expect("decode");
        restore(sim.world_mut(), &checkpoint, config.clone());
        read.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "{n} boids: write {:.1} ms, restore {:.1} ms (median of 5), {} bytes = {:.1} B/boid",
        median(write),
        median(read),
        bytes,
        bytes as f64 / n as f64
    );
    // The app's worst jump at 10 000 boids: restore a mark, replay 59 steps.
    let mut config = pandemic(10_000);
    config.neighbour_index = pandemic_boids::sim::config::IndexKind::Grid;
    let mut sim = Simulation::new(config.clone(), None);
    for _ in 0..60 {
        sim.step();
    }
    let mark = encode(&sim.checkpoint().expect("checkpoint"));
    let mut jumps = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        restore(
            sim.world_mut(),
            &decode(&mark).expect("decode"),
            config.clone(),
        );
        for _ in 0..59 {
            sim.step();
        }
        jumps.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "10000 boids: worst timeline jump (restore + 59 steps) {:.0} ms (median of 5)",
        median(jumps)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
