//! One sample of the run's measures ([`Sample`]: one row of `metrics.csv`), and the one list
//! of the per-swarm measures ([`SWARM_MEASURES`]): their column names, how each is read, and
//! how it reaches the run summary and an experiment's summary. The CSV header and rows, the
//! summary and the experiment columns are all written from that list. No systems live here.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

use crate::sim::swarm::Swarm;

/// Measures of one swarm (or of everyone) at one instant. `None` where undefined (no boids).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupSample {
    /// Boids alive.
    pub alive: u64,
    /// Susceptible.
    pub susceptible: u64,
    /// Infected.
    pub infected: u64,
    /// Recovered.
    pub recovered: u64,
    /// Died so far.
    pub dead: u64,
    /// Born so far.
    pub born: u64,
    /// Caught so far.
    pub caught: u64,
    /// `|Σ unit(v)| / N`.
    pub polarisation: Option<f64>,
    /// Mean torus distance to the circular-mean centroid, px.
    pub cohesion_px: Option<f64>,
    /// `sqrt(2 Σ|p − c|² / (N − 1))`, px.
    pub rms_separation_px: Option<f64>,
    /// Mean distance to the nearest same-swarm boid, px.
    pub nearest_neighbour_px: Option<f64>,
    /// Connected groups when same-swarm boids within r_ali are linked.
    pub flocks: Option<u64>,
    /// Mean speed, px/s.
    pub mean_speed_px_s: Option<f64>,
    /// Members of the largest flock / alive in the swarm (1 = one flock holds everyone).
    pub largest_flock_frac: Option<f64>,
    /// Standard deviation / mean of the per-boid nearest-neighbour distances (a lattice is low).
    pub nn_cv: Option<f64>,
    /// Size-weighted mean over flocks of ≥ 3 boids of `|Σ r × v| / Σ |r||v|` (1 = a mill).
    pub milling: Option<f64>,
    /// `1 − λ₂/λ₁` of the largest flock's gyration tensor (0 = round, → 1 = a line).
    pub elongation: Option<f64>,
}

impl GroupSample {
    /// `100 · I / alive`.
    pub fn pct_infected(&self) -> Option<f64> {
        (self.alive > 0).then(|| 100.0 * self.infected as f64 / self.alive as f64)
    }
}

/// One row of `metrics.csv`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Simulated time, s.
    pub time_s: f64,
    /// Everyone together (flocking measures are not defined across swarms).
    pub overall: GroupSample,
    /// dI/dt smoothed with a 1 s time constant, boids/s.
    pub growth_rate_per_s: f64,
    /// Interventions active at this time (docs/model.md §11).
    #[serde(default)]
    pub interventions_active: u32,
    /// Per swarm, in `Swarm::ALL` order.
    pub swarms: [GroupSample; 3],
}

/// The value of one measure in one sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    /// A count, always defined.
    Count(u64),
    /// A whole number that may be undefined (the flocks of a swarm with no boids).
    Whole(Option<u64>),
    /// A number that may be undefined.
    Real(Option<f64>),
}

impl Cell {
    /// The value as a number, if defined.
    pub fn value(self) -> Option<f64> {
        match self {
            Cell::Count(c) => Some(c as f64),
            Cell::Whole(w) => w.map(|x| x as f64),
            Cell::Real(r) => r,
        }
    }

    /// As written in `metrics.csv`: counts whole, numbers to 6 decimals, undefined empty.
    fn write(self, out: &mut String) {
        match self {
            Cell::Count(c) => {
                let _ = write!(out, "{c}");
            }
            Cell::Whole(Some(w)) => {
                let _ = write!(out, "{w}");
            }
            Cell::Real(Some(r)) => {
                let _ = write!(out, "{r:.6}");
            }
            Cell::Whole(None) | Cell::Real(None) => {}
        }
    }

    /// As a JSON value (`null` when undefined).
    pub fn json(self) -> serde_json::Value {
        match self {
            Cell::Count(c) => c.into(),
            Cell::Whole(w) => w.map_or(serde_json::Value::Null, Into::into),
            Cell::Real(r) => r.map_or(serde_json::Value::Null, Into::into),
        }
    }
}

/// One per-swarm measure: a column of `metrics.csv` for each swarm (`normal_<name>`, …).
#[derive(Clone, Copy, Debug)]
pub struct Measure {
    /// Column name after the swarm's prefix; also its key in `summary.json`.
    pub name: &'static str,
    /// How it is read from a sample.
    pub read: fn(&GroupSample) -> Cell,
    /// Also an overall column (counts, not flocking measures, add up across swarms).
    pub overall: bool,
    /// Its final value is in `summary.json` (under `swarms.<swarm>.final`).
    pub in_final: bool,
    /// Its mean over the run's samples is in `summary.json` under this key.
    pub run_mean: Option<&'static str>,
    /// An experiment's `summary.csv` has its mean (`mean_<name>_normal`) over the measured
    /// window, and with `sd` also its standard deviation over time (`sd_<name>_normal`).
    pub experiment: Option<Spread>,
}

/// Which statistics over time of a measure an experiment reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spread {
    /// The mean over the window.
    Mean,
    /// The mean and the standard deviation over the window (how much it fluctuates).
    MeanAndSd,
}

const fn count(name: &'static str, read: fn(&GroupSample) -> Cell) -> Measure {
    Measure {
        name,
        read,
        overall: true,
        in_final: true,
        run_mean: None,
        experiment: None,
    }
}

const fn flocking(
    name: &'static str,
    read: fn(&GroupSample) -> Cell,
    run_mean: Option<&'static str>,
    experiment: Option<Spread>,
) -> Measure {
    Measure {
        name,
        read,
        overall: false,
        in_final: true,
        run_mean,
        experiment,
    }
}

/// Every per-swarm measure, in column order (docs/model.md §8).
pub const SWARM_MEASURES: [Measure; 18] = [
    count("alive", |g| Cell::Count(g.alive)),
    count("susceptible", |g| Cell::Count(g.susceptible)),
    count("infected", |g| Cell::Count(g.infected)),
    count("recovered", |g| Cell::Count(g.recovered)),
    count("dead", |g| Cell::Count(g.dead)),
    count("born", |g| Cell::Count(g.born)),
    count("caught", |g| Cell::Count(g.caught)),
    Measure {
        in_final: false,
        ..count("pct_infected", |g| Cell::Real(g.pct_infected()))
    },
    flocking(
        "polarisation",
        |g| Cell::Real(g.polarisation),
        Some("mean_polarisation"),
        Some(Spread::MeanAndSd),
    ),
    flocking(
        "cohesion_px",
        |g| Cell::Real(g.cohesion_px),
        Some("mean_cohesion_px"),
        None,
    ),
    flocking(
        "rms_separation_px",
        |g| Cell::Real(g.rms_separation_px),
        None,
        None,
    ),
    flocking(
        "nearest_neighbour_px",
        |g| Cell::Real(g.nearest_neighbour_px),
        Some("mean_nearest_neighbour_px"),
        Some(Spread::Mean),
    ),
    flocking(
        "flocks",
        |g| Cell::Whole(g.flocks),
        Some("mean_flocks"),
        Some(Spread::Mean),
    ),
    flocking(
        "mean_speed_px_s",
        |g| Cell::Real(g.mean_speed_px_s),
        Some("mean_speed_px_s"),
        None,
    ),
    flocking(
        "largest_flock_frac",
        |g| Cell::Real(g.largest_flock_frac),
        Some("mean_largest_flock_frac"),
        Some(Spread::Mean),
    ),
    flocking(
        "nn_cv",
        |g| Cell::Real(g.nn_cv),
        Some("mean_nn_cv"),
        Some(Spread::Mean),
    ),
    flocking(
        "milling",
        |g| Cell::Real(g.milling),
        Some("mean_milling"),
        Some(Spread::Mean),
    ),
    flocking(
        "elongation",
        |g| Cell::Real(g.elongation),
        Some("mean_elongation"),
        Some(Spread::Mean),
    ),
];

impl Sample {
    /// The CSV header: `time_s` first, units in the names.
    pub fn csv_header() -> String {
        let mut cols = vec!["time_s".to_string()];
        cols.extend(
            SWARM_MEASURES
                .iter()
                .filter(|m| m.overall)
                .map(|m| m.name.to_string()),
        );
        cols.push("growth_rate_per_s".into());
        cols.push("interventions_active".into());
        for swarm in Swarm::ALL {
            cols.extend(
                SWARM_MEASURES
                    .iter()
                    .map(|m| format!("{}_{}", swarm.key(), m.name)),
            );
        }
        cols.join(",")
    }

    /// One CSV row matching [`Sample::csv_header`]; undefined values are empty.
    pub fn csv_row(&self) -> String {
        let mut out = String::with_capacity(512);
        let _ = write!(out, "{:.4}", self.time_s);
        for m in SWARM_MEASURES.iter().filter(|m| m.overall) {
            out.push(',');
            (m.read)(&self.overall).write(&mut out);
        }
        let _ = write!(
            out,
            ",{:.6},{}",
            self.growth_rate_per_s, self.interventions_active
        );
        for g in &self.swarms {
            for m in &SWARM_MEASURES {
                out.push(',');
                (m.read)(g).write(&mut out);
            }
        }
        out
    }
}
