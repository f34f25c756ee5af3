//! A new disease rule added from outside the crate, as a whole tool: a vaccination campaign
//! that gives susceptible boids full immunity at a rate per second while anyone is infected.
//! It follows the README's recipe — a pure function with a test, a thin system placed in an
//! existing phase, randomness drawn from the run's seed, its parameters in its own config
//! section `[extensions.vaccination]` — and hands everything to `cli::main_with`, so this
//! binary is the whole `pandemic-boids` tool (`run`, `experiment`, `sweep`, `compare`, the
//! window) plus the campaign.
//!
//! Run it with, e.g.:
//!   cargo run --release --example vaccination -- run --scenario assets/scenarios/sir.toml \
//!     --set extensions.vaccination.rate_per_s=0.1 --out out/vaccination

use std::process::ExitCode;

use bevy::prelude::*;
use pandemic_boids::sim::agent::{AgentId, Disease, Health};
use pandemic_boids::sim::clock::SimClock;
use pandemic_boids::sim::config::SimConfig;
use pandemic_boids::sim::epidemic::step_probability;
use pandemic_boids::sim::metrics::MetricsLog;
use pandemic_boids::sim::rng::{Purpose, draw_unit};
use pandemic_boids::{PopulationSystems, SimSystems};
use serde::Deserialize;

/// This rule's own random stream.
const VACCINATE: Purpose = Purpose(1000);

/// `[extensions.vaccination]`: the campaign's parameters (no section: no campaign).
#[derive(Deserialize, Default, Clone, Copy, Debug)]
#[serde(deny_unknown_fields, default)]
struct Campaign {
    /// Vaccinations per second offered to each susceptible boid (a probability per second).
    rate_per_s: f64,
}

/// The section's check, run with every other key's validation: one line, what is allowed.
fn check(section: &toml::Value) -> Result<(), String> {
    let c: Campaign = section
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| e.message().to_string())?;
    if !(0.0..=1.0).contains(&c.rate_per_s) {
        return Err(format!(
            "rate_per_s {} is out of range; allowed: 0 to 1 (a probability per second)",
            c.rate_per_s
        ));
    }
    Ok(())
}

/// The rule itself, as a pure function: does a susceptible boid get vaccinated this step?
fn vaccinated(disease: &Disease, rate_per_s: f64, dt: f64, draw: f64) -> bool {
    disease.is_susceptible() && draw < step_probability(rate_per_s, dt)
}

/// The thin system: gather, call, write. It reads the live counts a rule usually needs from the
/// last sample of `MetricsLog` (everyone together: `overall.infected`, `overall.alive`, …).
fn vaccinate(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    metrics: Res<MetricsLog>,
    mut boids: Query<(&AgentId, &mut Health)>,
) {
    let Ok(campaign) = config.extension::<Campaign>("vaccination") else {
        return;
    };
    let infected = metrics.samples.last().map_or(0, |s| s.overall.infected);
    if campaign.rate_per_s <= 0.0 || infected == 0 {
        return;
    }
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

fn main() -> ExitCode {
    pandemic_boids::sim::extensions::add_section("vaccination", check);
    pandemic_boids::cli::main_with(|app| {
        // In the Population phase (after the epidemic step), after aging — the other writer
        // of `Health` there.
        app.add_systems(
            FixedUpdate,
            vaccinate
                .in_set(SimSystems::Population)
                .after(PopulationSystems::Life),
        );
    })
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

    #[test]
    fn a_rate_outside_0_to_1_is_refused_in_one_line() {
        let bad: toml::Value = toml::from_str("rate_per_s = 2.0").unwrap();
        assert!(check(&bad).unwrap_err().contains("allowed: 0 to 1"));
        let typo: toml::Value = toml::from_str("rate_per_sec = 0.1").unwrap();
        assert!(check(&typo).unwrap_err().contains("rate_per_sec"));
    }
}
