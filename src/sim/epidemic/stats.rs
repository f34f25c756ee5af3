//! The run's epidemic record (docs/model.md §8 run summary): the size of the first infected
//! cohort, the peak of I, eradication, the boids ever infected, and counts of each kind of
//! event. `track_epidemic` keeps it from
//! the state at the start of each step, in `SimSystems::Sample`.

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use crate::sim::clock::SimClock;
use crate::sim::neighbours::Neighbours;

/// The run's epidemic record (docs/model.md §8 run summary).
#[derive(Resource, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EpidemicStats {
    /// Boids infected at t = 0 (their mean secondary infections, R0 from the first
    /// generation, come from the transmission record).
    pub first_cohort: u64,
    /// Contact infections.
    pub contact_infections: u64,
    /// Spontaneous infections.
    pub spontaneous_infections: u64,
    /// Infections brought in by `import` interventions.
    pub imported_infections: u64,
    /// Cures.
    pub cures: u64,
    /// Deaths.
    pub deaths: u64,
    /// Natural recoveries at `t_death`.
    pub recoveries: u64,
    /// Distinct boids ever infected.
    pub ever_infected: u64,
    /// Peak of I: count.
    pub peak_infected: u64,
    /// Peak of I as a fraction of the living.
    pub peak_fraction: f64,
    /// When the peak (first) happened, s.
    pub peak_time_s: f64,
    /// First time I = 0 after being > 0, s.
    pub eradication_time_s: Option<f64>,
    seen: Vec<bool>,
    had_infection: bool,
    started: bool,
}

impl EpidemicStats {
    fn mark(&mut self, id: u64) {
        let k = id as usize;
        if self.seen.len() <= k {
            self.seen.resize(k + 1, false);
        }
        if !self.seen[k] {
            self.seen[k] = true;
            self.ever_infected += 1;
        }
    }
}

pub(super) fn track_epidemic(
    clock: Res<SimClock>,
    neighbours: Neighbours,
    mut stats: ResMut<EpidemicStats>,
) {
    let s = &*neighbours.snapshot;
    if !stats.started {
        stats.started = true;
        stats.first_cohort = s.disease.iter().filter(|d| d.is_infected()).count() as u64;
    }
    let mut infected = 0u64;
    for i in 0..s.len() {
        if s.disease.is_infected(i) {
            infected += 1;
            // Every infection (contact, spontaneous, born infected) shows in the next snapshot,
            // so this one place counts the boids ever infected.
            stats.mark(s.id[i]);
        }
    }
    if infected > stats.peak_infected {
        stats.peak_infected = infected;
        stats.peak_fraction = infected as f64 / s.len().max(1) as f64;
        stats.peak_time_s = clock.time;
    }
    if infected > 0 {
        stats.had_infection = true;
    } else if stats.had_infection && stats.eradication_time_s.is_none() {
        stats.eradication_time_s = Some(clock.time);
    }
}
