//! Timing entry point for krABMaga's `flockers` example (`bench/peer/run.sh` puts it in place of
//! the example's own `main.rs`): N birds at the example's density (1 000 on 100 × 100, the side
//! scaled with √N), its parameters, `--warmup` untimed then `--steps` timed `schedule.step`
//! calls on one thread; prints the median and mean ms per step as one JSON line.

use std::time::Instant;

use krabmaga::engine::schedule::Schedule;
use krabmaga::engine::state::State;

use crate::model::state::Flocker;

mod model;

// The example's parameters; its model reads them from the crate root.
pub static COHESION: f32 = 0.8;
pub static AVOIDANCE: f32 = 1.0;
pub static RANDOMNESS: f32 = 1.1;
pub static CONSISTENCY: f32 = 0.7;
pub static MOMENTUM: f32 = 1.0;
pub static JUMP: f32 = 0.7;
pub static DISCRETIZATION: f32 = 10.0 / 1.5;
pub static TOROIDAL: bool = true;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|k| args.get(k + 1))
        .map(|v| v.parse().expect("a whole number"))
        .unwrap_or(default)
}

fn main() {
    let birds = arg("--birds", 1000) as u32;
    let steps = arg("--steps", 200);
    let warmup = arg("--warmup", 10);
    let side = 100.0 * (birds as f32 / 1000.0).sqrt();
    let mut state = Flocker::new((side, side), birds);
    let mut schedule = Schedule::new();
    state.init(&mut schedule);
    for _ in 0..warmup {
        schedule.step(&mut state);
    }
    let mut ms = Vec::with_capacity(steps as usize);
    for _ in 0..steps {
        let t = Instant::now();
        schedule.step(&mut state);
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    ms.sort_by(f64::total_cmp);
    let median = ms[ms.len() / 2];
    println!(
        "{{\"birds\":{birds},\"side\":{side},\"steps\":{steps},\"warmup\":{warmup},\
         \"median_ms\":{median},\"mean_ms\":{mean}}}"
    );
}
