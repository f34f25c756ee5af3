//! The run's epidemic record (docs/model.md §8 run summary): the first infected cohort, the
//! peak of I, eradication, and counts of each kind of event. `track_epidemic` keeps it from
//! the state at the start of each step, in `SimSystems::Sample`.

use bevy::prelude::*;
use serde::Serialize;

use crate::sim::clock::SimClock;
use crate::sim::neighbours::Neighbours;

/// The run's epidemic record (docs/model.md §8 run summary).
#[derive(Resource, Clone, Debug, Default, Serialize)]
pub struct EpidemicStats {
    /// Ids infected at t = 0.
    pub first_cohort: Vec<u64>,
    /// Infections caused by the first cohort during their initial infection.
    pub cohort_infections: u64,
    /// By id: a member of the first cohort still in its initial infection (cleared when that
    /// infection ends, so a later reinfection does not count).
    #[serde(skip)]
    in_first_infection: Vec<bool>,
    /// Contact infections.
    pub contact_infections: u64,
    /// Spontaneous infections.
    pub spontaneous_infections: u64,
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
    #[serde(skip)]
    seen: Vec<bool>,
    #[serde(skip)]
    had_infection: bool,
    #[serde(skip)]
    started: bool,
}

impl EpidemicStats {
    /// Mean secondary infections per member of the first cohort (`None` if it was empty).
    pub fn mean_secondary_infections(&self) -> Option<f64> {
        (!self.first_cohort.is_empty())
            .then(|| self.cohort_infections as f64 / self.first_cohort.len() as f64)
    }

    /// Whether boid `id` is in the first cohort's initial infection.
    pub fn in_first_infection(&self, id: u64) -> bool {
        self.in_first_infection
            .get(id as usize)
            .copied()
            .unwrap_or(false)
    }

    /// Boid `id`'s initial infection has ended (a later reinfection does not count).
    pub(super) fn end_first_infection(&mut self, id: u64) {
        if let Some(flag) = self.in_first_infection.get_mut(id as usize) {
            *flag = false;
        }
    }

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
        for i in 0..s.len() {
            if s.disease[i].is_infected() {
                let id = s.id[i];
                stats.first_cohort.push(id);
                if stats.in_first_infection.len() <= id as usize {
                    stats.in_first_infection.resize(id as usize + 1, false);
                }
                stats.in_first_infection[id as usize] = true;
            }
        }
    }
    let mut infected = 0u64;
    for i in 0..s.len() {
        if s.disease[i].is_infected() {
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
