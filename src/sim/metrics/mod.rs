//! Metrics (docs/model.md §8): per-swarm and overall counts and flocking measures, sampled every
//! `sample_every` simulated seconds in `SimSystems::Sample` from the step's snapshot (the state
//! at the start of the step) and kept for the whole run in `MetricsLog`. Cumulative counters
//! (dead, born, caught) live in `Tally`, which the modules that kill, bear or catch update. The
//! measures are pure functions in `structure` and `flocks`; `swarms` works out a sample's
//! per-swarm measures in three passes over every boid; `sample` holds the one list of them
//! that every output is written from.

mod flocks;
mod sample;
mod structure;
mod swarms;
#[cfg(test)]
mod tests;

pub use flocks::{flock_counts, flocks, flocks_and_nearest};
pub use sample::{Cell, GroupSample, Measure, SWARM_MEASURES, Sample, Spread};
pub use structure::{
    MIN_SHAPED_FLOCK, coefficient_of_variation, coefficient_of_variation_of, cohesion_and_rms,
    cohesion_and_rms_about, cohesion_and_rms_of, elongation, flock_structure, milling,
    nearest_same_swarm, offsets_from_centre, polarisation,
};

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use crate::sim::agent::RunStarted;
use crate::sim::clock::SimClock;
use crate::sim::config::SimConfig;
use crate::sim::neighbours::{IndexRef, Neighbours, Snapshot};
use crate::sim::parallel::map_chunks;
use crate::sim::schedule::{SimSystems, StepMode};
use crate::sim::swarm::Swarm;
use swarms::measure_swarms;

/// Time constant of the smoothed growth rate, s (docs/model.md §8).
pub const GROWTH_TIME_CONSTANT: f64 = 1.0;

/// Cumulative per-swarm counters of the run, indexed by `Swarm::index()`.
#[derive(Resource, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    /// Boids alive at the start of the run.
    pub spawned: [u64; 3],
    /// Died of the disease.
    pub dead: [u64; 3],
    /// Born (population module).
    pub born: [u64; 3],
    /// Caught by predators (removed or respawned).
    pub caught: [u64; 3],
    /// Caught and removed (not respawned): these leave the population.
    pub removed: [u64; 3],
    /// Normals promoted to Doctor (population module).
    pub promoted: u64,
}

/// How many interventions are active (written by `sim::interventions`, sampled into
/// `metrics.csv`).
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActiveInterventions(pub u32);

/// Every sample of the run, plus when the next one is due.
#[derive(Resource, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricsLog {
    /// Samples in time order.
    pub samples: Vec<Sample>,
    /// Simulated time of the next regular sample, s.
    pub next_due: f64,
    /// Smoothed dI/dt, boids/s.
    pub growth_rate: f64,
    last_infected: Option<(f64, u64)>,
}

/// How many boids of a group are alive, susceptible, infected and recovered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Alive.
    pub alive: u64,
    /// Susceptible.
    pub susceptible: u64,
    /// Infected.
    pub infected: u64,
    /// Recovered.
    pub recovered: u64,
}

/// The disease counts of every swarm in the snapshot, by `Swarm::index()`.
pub fn count_by_swarm(snapshot: &Snapshot) -> [Counts; 3] {
    let mut out = [Counts::default(); 3];
    for (swarm, d) in snapshot.swarm.iter().zip(snapshot.disease.iter()) {
        let c = &mut out[swarm.index()];
        c.alive += 1;
        if d.is_infected() {
            c.infected += 1;
        } else if d.is_recovered() {
            c.recovered += 1;
        } else {
            c.susceptible += 1;
        }
    }
    out
}

/// Measures every swarm in the snapshot. Counters come from `tally`.
pub fn measure(
    time_s: f64,
    snapshot: &Snapshot,
    index: &IndexRef,
    config: &SimConfig,
    tally: &Tally,
    growth_rate_per_s: f64,
) -> Sample {
    let (all_flocks, mut nearest) = flocks_and_nearest(index, snapshot, config);
    // Found within the alignment radius with the flock links; searched further, in parallel,
    // only for the few boids with no one of their swarm that close (NaN: alone in its swarm).
    let alignment = |i: usize| config.swarms.get(snapshot.swarm[i]).alignment_radius;
    let far: Vec<usize> = (0..snapshot.len())
        .filter(|&i| !nearest[i].is_finite())
        .collect();
    let found = map_chunks(far.len(), |range| {
        far[range]
            .iter()
            .map(|&i| nearest_same_swarm(index, snapshot, i, alignment(i)).unwrap_or(f32::NAN))
            .collect()
    });
    for (&i, d) in far.iter().zip(found) {
        nearest[i] = d;
    }
    let counts = count_by_swarm(snapshot);
    let mut sample = Sample {
        time_s,
        growth_rate_per_s,
        ..default()
    };
    for (k, g) in sample.swarms.iter_mut().enumerate() {
        let c = counts[k];
        (g.alive, g.susceptible, g.infected, g.recovered) =
            (c.alive, c.susceptible, c.infected, c.recovered);
        g.dead = tally.dead[k];
        g.born = tally.born[k];
        g.caught = tally.caught[k];
    }
    measure_swarms(snapshot, &all_flocks, &nearest, &mut sample.swarms);
    let o = &mut sample.overall;
    for g in &sample.swarms {
        o.alive += g.alive;
        o.susceptible += g.susceptible;
        o.infected += g.infected;
        o.recovered += g.recovered;
        o.dead += g.dead;
        o.born += g.born;
        o.caught += g.caught;
    }
    sample
}

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Tally>()
        .init_resource::<MetricsLog>()
        .init_resource::<ActiveInterventions>()
        .add_observer(reset_metrics)
        .add_systems(FixedUpdate, record_metrics.in_set(SimSystems::Sample));
}

fn reset_metrics(
    _: Trigger<RunStarted>,
    mut tally: ResMut<Tally>,
    mut log: ResMut<MetricsLog>,
    mut active: ResMut<ActiveInterventions>,
) {
    *tally = Tally::default();
    *log = MetricsLog::default();
    *active = ActiveInterventions::default();
}

/// Updates the growth rate every step and records a sample when one is due (always on the
/// final observation of a run).
fn record_metrics(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    mode: Res<StepMode>,
    active: Res<ActiveInterventions>,
    neighbours: Neighbours,
    mut tally: ResMut<Tally>,
    mut log: ResMut<MetricsLog>,
) {
    let snapshot = &*neighbours.snapshot;
    let now = clock.time;
    if clock.step == 0 && log.samples.is_empty() {
        for (k, swarm) in Swarm::ALL.iter().enumerate() {
            tally.spawned[k] = snapshot.swarm.iter().filter(|s| *s == swarm).count() as u64;
        }
    }
    let infected = snapshot.disease.iter().filter(|d| d.is_infected()).count() as u64;
    if let Some((t0, i0)) = log.last_infected {
        let elapsed = now - t0;
        if elapsed > 0.0 {
            let rate = (infected as f64 - i0 as f64) / elapsed;
            let alpha = 1.0 - libm::exp(-elapsed / GROWTH_TIME_CONSTANT);
            log.growth_rate += alpha * (rate - log.growth_rate);
        }
    }
    log.last_infected = Some((now, infected));

    let half_step = 0.5 * config.dt;
    let already = log
        .samples
        .last()
        .is_some_and(|s| (s.time_s - now).abs() < 1e-9);
    let due = now >= log.next_due - half_step || (*mode == StepMode::Observe && !already);
    if !due || already {
        return;
    }
    let mut sample = measure(
        now,
        snapshot,
        &neighbours.index(),
        &config,
        &tally,
        log.growth_rate,
    );
    sample.interventions_active = active.0;
    log.samples.push(sample);
    log.next_due = next_sample_time(now, half_step, config.sample_every);
}

/// The first multiple of `every` later than `now + tolerance`: when the sample after one taken
/// at `now` is due. Computed, not counted up to, so a `sample_every` far below the step costs
/// nothing (a step still records at most one sample).
pub fn next_sample_time(now: f64, tolerance: f64, every: f64) -> f64 {
    (((now + tolerance) / every).floor() + 1.0) * every
}
