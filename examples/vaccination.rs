//! A new disease rule added from outside the crate: a vaccination campaign that gives
//! susceptible boids full immunity at a rate per second. It follows the README's recipe — a
//! pure function with a test, a thin system placed in an existing phase, randomness drawn from
//! the run's seed — and runs the default pandemic with and without it.
//!
//! Run it with: cargo run --release --example vaccination

use bevy::prelude::*;
use pandemic_boids::run::Simulation;
use pandemic_boids::sim::agent::{AgentId, Disease, Health};
use pandemic_boids::sim::clock::SimClock;
use pandemic_boids::sim::config::SimConfig;
use pandemic_boids::sim::epidemic::{EpidemicStats, step_probability};
use pandemic_boids::sim::rng::{Purpose, draw_unit};
use pandemic_boids::{PopulationSystems, SimSystems};

/// This rule's own random stream.
const VACCINATE: Purpose = Purpose(1000);

/// Vaccinations per second offered to each susceptible boid.
#[derive(Resource, Clone, Copy)]
struct Campaign {
    rate_per_s: f64,
}

/// The rule itself, as a pure function: does a susceptible boid get vaccinated this step?
fn vaccinated(disease: &Disease, rate_per_s: f64, dt: f64, draw: f64) -> bool {
    disease.is_susceptible() && draw < step_probability(rate_per_s, dt)
}

/// The thin system: gather, call, write.
fn vaccinate(
    campaign: Res<Campaign>,
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    mut boids: Query<(&AgentId, &mut Health)>,
) {
    let dt = time.delta_secs_f64();
    for (id, mut health) in &mut boids {
        let draw = draw_unit(config.seed, clock.step, id.0, 0, VACCINATE);
        if vaccinated(&health.disease, campaign.rate_per_s, dt, draw) {
            health.disease = Disease::Recovered {
                since: clock.time + dt,
                immunity: 1.0,
            };
        }
    }
}

/// The plugin: one resource, one system in the `Population` phase (after the epidemic step),
/// after aging — the other writer of `Health` there.
fn vaccination(rate_per_s: f64) -> impl Fn(&mut App) {
    move |app: &mut App| {
        app.insert_resource(Campaign { rate_per_s }).add_systems(
            FixedUpdate,
            vaccinate
                .in_set(SimSystems::Population)
                .after(PopulationSystems::Life),
        );
    }
}

fn run(rate_per_s: Option<f64>) -> (u64, u64) {
    let mut sim = Simulation::with(SimConfig::default(), None, |app| {
        if let Some(rate) = rate_per_s {
            app.add_plugins(vaccination(rate));
        }
    });
    sim.run_until(60.0);
    sim.observe();
    let stats = sim.world().resource::<EpidemicStats>();
    (stats.deaths, stats.peak_infected)
}

fn main() {
    let (deaths, peak) = run(None);
    println!("no campaign:            {deaths:>3} deaths, peak {peak} infected");
    for rate in [0.02, 0.1] {
        let (deaths, peak) = run(Some(rate));
        println!("vaccinating {rate:>4}/s:    {deaths:>3} deaths, peak {peak} infected");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_susceptible_boids_are_vaccinated_at_the_per_second_rate() {
        let s = Disease::Susceptible;
        let i = Disease::Infected { since: 0.0 };
        // p_step at 0.5/s over 1/60 s = 1 − 0.5^(1/60) ≈ 0.01148.
        assert!(vaccinated(&s, 0.5, 1.0 / 60.0, 0.011));
        assert!(!vaccinated(&s, 0.5, 1.0 / 60.0, 0.012));
        assert!(!vaccinated(&i, 0.5, 1.0 / 60.0, 0.0));
    }
}
