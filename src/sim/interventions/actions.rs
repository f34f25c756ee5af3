//! The interventions' pure parts: the value of a condition's measure in a sample, the latest
//! reported R_t, and which boids a vaccination round or an importation picks. No systems live
//! here.

use bevy::prelude::*;

use crate::sim::metrics::GroupSample;
use crate::sim::reproduction::reproduction_series;
use crate::sim::transmission::Transmission;

/// The value of a condition's measure (one of `config::interventions::MEASURES`, except `r_t`)
/// in the sample of everyone together; fractions of the boids alive (`None` with none alive).
pub fn measure_value(measure: &str, g: &GroupSample) -> Option<f64> {
    let frac = |x: u64| (g.alive > 0).then(|| x as f64 / g.alive as f64);
    match measure {
        "infected_frac" => frac(g.infected),
        "infected" => Some(g.infected as f64),
        "susceptible_frac" => frac(g.susceptible),
        "susceptible" => Some(g.susceptible as f64),
        "recovered_frac" => frac(g.recovered),
        "recovered" => Some(g.recovered as f64),
        "dead" => Some(g.dead as f64),
        "alive" => Some(g.alive as f64),
        _ => None,
    }
}

/// The latest R_t that `rt.csv` would report at `now` (posterior mean; `None` while the data
/// do not yet dominate the prior).
pub fn latest_rt(records: &[Transmission], window: f64, bin: f64, now: f64) -> Option<f64> {
    reproduction_series(records, window, bin, now)
        .last()
        .and_then(|row| row.reported())
        .map(|r| r[0])
}

/// The `take` boids of `pool` (entity, id) with the lowest draws `draw(id)`, in id order: a
/// choice that depends only on the run's seed, the step and the ids.
pub fn chosen(pool: &[(Entity, u64)], take: usize, draw: impl Fn(u64) -> f64) -> Vec<Entity> {
    let mut ranked: Vec<(f64, u64, Entity)> =
        pool.iter().map(|&(e, id)| (draw(id), id, e)).collect();
    ranked.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    ranked.truncate(take);
    ranked.sort_unstable_by_key(|r| r.1);
    ranked.into_iter().map(|r| r.2).collect()
}
