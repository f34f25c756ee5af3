//! Helpers shared by the integration tests: small configs, running a simulation for a while,
//! reading components back, and the binary under test.
#![allow(dead_code)]

use std::path::PathBuf;

use pandemic_boids::run::Simulation;
use pandemic_boids::sim::agent::{Health, Position, Velocity};
use pandemic_boids::sim::config::SimConfig;
use pandemic_boids::sim::swarm::Swarm;

/// The model defaults with a seed and the epidemic quiet (nobody starts infected).
pub fn flocking_only(seed: u64) -> SimConfig {
    let mut c = SimConfig {
        seed,
        ..SimConfig::default()
    };
    c.epidemic.p_initial_infect_normal = 0.0;
    c.epidemic.p_initial_infect_doctor = 0.0;
    c
}

/// A simulation of `config` run to `seconds`, with a final observation.
pub fn run_for(config: SimConfig, seconds: f64) -> Simulation {
    let mut sim = Simulation::new(config, None);
    sim.run_until(seconds);
    sim.observe();
    sim
}

/// Every boid's (swarm, position, velocity, health).
pub fn boids(sim: &mut Simulation) -> Vec<(Swarm, Position, Velocity, Health)> {
    let world = sim.world_mut();
    let mut q = world.query::<(&Swarm, &Position, &Velocity, &Health)>();
    q.iter(world).map(|(s, p, v, h)| (*s, *p, *v, *h)).collect()
}

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pandemic-boids"))
}

/// The shipped scenario folder.
pub fn scenarios() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join("scenarios")
}

/// Mean and standard error of the mean.
pub fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, (var / n).sqrt())
}
