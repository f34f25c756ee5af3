//! Metrics (SPEC §8): per-swarm and overall counts and flocking measures, sampled every
//! `sample_every` simulated seconds in `SimSystems::Record` from the step's snapshot (the state
//! at the start of the step) and kept for the whole run in `MetricsLog`. Cumulative counters
//! (dead, born, caught) live in `Tally`, which the modules that kill, bear or catch update.
//! The flocking measures are pure functions with tests below.

use bevy::prelude::*;
use serde::Serialize;
use std::fmt::Write as _;

use crate::SimSystems;
use crate::sim::agent::{RunStarted, Swarm};
use crate::sim::clock::{SimClock, StepMode};
use crate::sim::config::SimConfig;
use crate::sim::neighbours::{NeighbourIndex, Neighbours, Snapshot};
use crate::sim::space::Space;

/// Time constant of the smoothed growth rate, s (SPEC §8).
pub const GROWTH_TIME_CONSTANT: f64 = 1.0;

/// Cumulative per-swarm counters of the run, indexed by `Swarm::index()`.
#[derive(Resource, Clone, Debug, Default, PartialEq, Serialize)]
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

/// Measures of one swarm (or of everyone) at one instant. `None` where undefined (no boids).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
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
}

impl GroupSample {
    /// `100 · I / alive`.
    pub fn pct_infected(&self) -> Option<f64> {
        (self.alive > 0).then(|| 100.0 * self.infected as f64 / self.alive as f64)
    }
}

/// One row of `metrics.csv`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Sample {
    /// Simulated time, s.
    pub time_s: f64,
    /// Everyone together (flocking measures are not defined across swarms).
    pub overall: GroupSample,
    /// dI/dt smoothed with a 1 s time constant, boids/s.
    pub growth_rate_per_s: f64,
    /// Per swarm, in `Swarm::ALL` order.
    pub swarms: [GroupSample; 3],
}

fn fmt_opt(out: &mut String, v: Option<f64>) {
    if let Some(v) = v {
        let _ = write!(out, "{v:.6}");
    }
}

impl Sample {
    /// The CSV header: `time_s` first, units in the names.
    pub fn csv_header() -> String {
        let mut cols: Vec<String> = [
            "time_s",
            "alive",
            "susceptible",
            "infected",
            "recovered",
            "dead",
            "born",
            "caught",
            "pct_infected",
            "growth_rate_per_s",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for swarm in Swarm::ALL {
            for m in [
                "alive",
                "susceptible",
                "infected",
                "recovered",
                "dead",
                "born",
                "caught",
                "pct_infected",
                "polarisation",
                "cohesion_px",
                "rms_separation_px",
                "nearest_neighbour_px",
                "flocks",
                "mean_speed_px_s",
            ] {
                cols.push(format!("{}_{m}", swarm.key()));
            }
        }
        cols.join(",")
    }

    /// One CSV row matching [`Sample::csv_header`]; undefined values are empty.
    pub fn csv_row(&self) -> String {
        let mut out = String::with_capacity(512);
        let o = &self.overall;
        let _ = write!(
            out,
            "{:.4},{},{},{},{},{},{},{},",
            self.time_s, o.alive, o.susceptible, o.infected, o.recovered, o.dead, o.born, o.caught
        );
        fmt_opt(&mut out, o.pct_infected());
        let _ = write!(out, ",{:.6}", self.growth_rate_per_s);
        for g in &self.swarms {
            let _ = write!(
                out,
                ",{},{},{},{},{},{},{},",
                g.alive, g.susceptible, g.infected, g.recovered, g.dead, g.born, g.caught
            );
            fmt_opt(&mut out, g.pct_infected());
            for v in [
                g.polarisation,
                g.cohesion_px,
                g.rms_separation_px,
                g.nearest_neighbour_px,
            ] {
                out.push(',');
                fmt_opt(&mut out, v);
            }
            out.push(',');
            if let Some(f) = g.flocks {
                let _ = write!(out, "{f}");
            }
            out.push(',');
            fmt_opt(&mut out, g.mean_speed_px_s);
        }
        out
    }
}

/// Every sample of the run, plus when the next one is due.
#[derive(Resource, Clone, Debug, Default)]
pub struct MetricsLog {
    /// Samples in time order.
    pub samples: Vec<Sample>,
    /// Simulated time of the next regular sample, s.
    pub next_due: f64,
    /// Smoothed dI/dt, boids/s.
    pub growth_rate: f64,
    last_infected: Option<(f64, u64)>,
}

/// `|Σ unit(v_i)| / N` (0 = disorder, 1 = aligned); `None` without boids.
pub fn polarisation(velocities: impl IntoIterator<Item = Vec2>) -> Option<f64> {
    let (mut sum, mut n) = (Vec2::ZERO, 0usize);
    for v in velocities {
        sum += crate::sim::flocking::unit(v);
        n += 1;
    }
    (n > 0).then(|| sum.length() as f64 / n as f64)
}

/// Cohesion (mean distance to the centroid) and rms separation `sqrt(2Σ|p − c|²/(N − 1))`,
/// both torus-correct. Rms separation needs two boids.
pub fn spread(space: &Space, points: &[Vec2]) -> (Option<f64>, Option<f64>) {
    let Some(c) = space.centroid(points.iter().copied()) else {
        return (None, None);
    };
    let (mut sum, mut sum2) = (0.0f64, 0.0f64);
    for p in points {
        let d = space.displacement(c, *p).length() as f64;
        sum += d;
        sum2 += d * d;
    }
    let n = points.len() as f64;
    let rms = (points.len() > 1).then(|| (2.0 * sum2 / (n - 1.0)).sqrt());
    (Some(sum / n), rms)
}

/// Distance from slot `i` to the nearest other boid of the same swarm, searching outward from
/// `radius` and falling back to a full scan; `None` if it is alone in its swarm.
pub fn nearest_same_swarm(
    index: &impl NeighbourIndex,
    snapshot: &Snapshot,
    i: usize,
    radius: f32,
) -> Option<f32> {
    let space = snapshot.space();
    let swarm = snapshot.swarm[i];
    let limit = if space.wraps() {
        0.5 * space.width.min(space.height) * 0.999
    } else {
        f32::INFINITY
    };
    let mut r = radius.max(1.0).min(limit);
    loop {
        let mut best = f32::INFINITY;
        index.for_each_within(snapshot.pos[i], r, |j, off| {
            if j != i && snapshot.swarm[j] == swarm {
                best = best.min(off.length());
            }
        });
        if best.is_finite() {
            return Some(best);
        }
        if r >= limit || r > 1e7 {
            break;
        }
        r = (r * 2.0).min(limit);
    }
    // Beyond the largest unique query radius: scan (rare; only isolated boids get here).
    (0..snapshot.len())
        .filter(|&j| j != i && snapshot.swarm[j] == swarm)
        .map(|j| space.distance(snapshot.pos[i], snapshot.pos[j]))
        .min_by(f32::total_cmp)
}

/// Union-find over slots.
struct Groups {
    parent: Vec<u32>,
}

impl Groups {
    fn new(n: usize) -> Self {
        Self {
            parent: (0..n as u32).collect(),
        }
    }

    fn root(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    fn join(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            // Smaller root wins: deterministic whatever the visiting order.
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent[hi as usize] = lo;
        }
    }
}

/// Number of flocks per swarm: connected groups of same-swarm boids linked when closer than
/// their swarm's alignment radius.
pub fn flock_counts(
    index: &impl NeighbourIndex,
    snapshot: &Snapshot,
    config: &SimConfig,
) -> [u64; 3] {
    let n = snapshot.len();
    let mut groups = Groups::new(n);
    for i in 0..n {
        let swarm = snapshot.swarm[i];
        let r = config.swarms.get(swarm).alignment_radius;
        index.for_each_within(snapshot.pos[i], r, |j, _| {
            if j > i && snapshot.swarm[j] == swarm {
                groups.join(i as u32, j as u32);
            }
        });
    }
    let mut counts = [0u64; 3];
    for i in 0..n {
        if groups.root(i as u32) == i as u32 {
            counts[snapshot.swarm[i].index()] += 1;
        }
    }
    counts
}

/// Measures every swarm in the snapshot. Counters come from `tally`.
pub fn measure(
    time_s: f64,
    snapshot: &Snapshot,
    index: &impl NeighbourIndex,
    config: &SimConfig,
    tally: &Tally,
    growth_rate_per_s: f64,
) -> Sample {
    let space = snapshot.space();
    let flocks = flock_counts(index, snapshot, config);
    let mut sample = Sample {
        time_s,
        growth_rate_per_s,
        ..default()
    };
    let mut points: Vec<Vec2> = Vec::new();
    for swarm in Swarm::ALL {
        let k = swarm.index();
        let slots: Vec<usize> = (0..snapshot.len())
            .filter(|&i| snapshot.swarm[i] == swarm)
            .collect();
        let g = &mut sample.swarms[k];
        g.alive = slots.len() as u64;
        for &i in &slots {
            match snapshot.disease[i] {
                d if d.is_infected() => g.infected += 1,
                d if d.is_recovered() => g.recovered += 1,
                _ => g.susceptible += 1,
            }
        }
        g.dead = tally.dead[k];
        g.born = tally.born[k];
        g.caught = tally.caught[k];
        if slots.is_empty() {
            continue;
        }
        g.polarisation = polarisation(slots.iter().map(|&i| snapshot.vel[i]));
        points.clear();
        points.extend(slots.iter().map(|&i| snapshot.pos[i]));
        (g.cohesion_px, g.rms_separation_px) = spread(&space, &points);
        let start = config.swarms.get(swarm).alignment_radius;
        let nn: Vec<f32> = slots
            .iter()
            .filter_map(|&i| nearest_same_swarm(index, snapshot, i, start))
            .collect();
        g.nearest_neighbour_px =
            (!nn.is_empty()).then(|| nn.iter().map(|&d| d as f64).sum::<f64>() / nn.len() as f64);
        g.flocks = Some(flocks[k]);
        g.mean_speed_px_s = Some(
            slots
                .iter()
                .map(|&i| snapshot.vel[i].length() as f64)
                .sum::<f64>()
                / slots.len() as f64,
        );
    }
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
        .add_observer(reset_metrics)
        .add_systems(FixedUpdate, record_metrics.in_set(SimSystems::Record));
}

fn reset_metrics(_: Trigger<RunStarted>, mut tally: ResMut<Tally>, mut log: ResMut<MetricsLog>) {
    *tally = Tally::default();
    *log = MetricsLog::default();
}

/// Updates the growth rate every step and records a sample when one is due (always on the
/// final observation of a run).
fn record_metrics(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    mode: Res<StepMode>,
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
            let alpha = 1.0 - (-elapsed / GROWTH_TIME_CONSTANT).exp();
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
    let sample = measure(
        now,
        snapshot,
        &neighbours.index(),
        &config,
        &tally,
        log.growth_rate,
    );
    log.samples.push(sample);
    while log.next_due <= now + half_step {
        log.next_due += config.sample_every;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::agent::Disease;
    use crate::sim::config::IndexKind;
    use crate::sim::neighbours::{AllBackends, Row};

    fn snapshot(space: Space, pts: &[(Vec2, Vec2, Swarm)]) -> Snapshot {
        let rows = pts
            .iter()
            .enumerate()
            .map(|(i, &(pos, vel, swarm))| Row {
                entity: Entity::from_raw(i as u32),
                id: i as u64,
                pos,
                vel,
                swarm,
                disease: Disease::Susceptible,
            })
            .collect();
        Snapshot::from_rows(space, rows)
    }

    #[test]
    fn polarisation_extremes() {
        assert_eq!(
            polarisation([Vec2::X * 3.0, Vec2::X, Vec2::X * 9.0]),
            Some(1.0)
        );
        let p = polarisation([Vec2::X, -Vec2::X, Vec2::Y, -Vec2::Y]).unwrap();
        assert!(p < 1e-6);
        assert_eq!(polarisation(std::iter::empty()), None);
    }

    #[test]
    fn spread_by_hand_and_across_the_seam() {
        let space = Space::torus(100.0, 100.0);
        // Two boids 10 px apart across the seam: centroid between them, each 5 px away.
        let (coh, rms) = spread(&space, &[Vec2::new(95.0, 50.0), Vec2::new(5.0, 50.0)]);
        assert!((coh.unwrap() - 5.0).abs() < 1e-3);
        // sqrt(2·(25 + 25)/1) = 10 = the pair distance.
        assert!((rms.unwrap() - 10.0).abs() < 1e-3);
        assert_eq!(spread(&space, &[Vec2::new(1.0, 1.0)]).1, None);
    }

    #[test]
    fn nearest_neighbour_and_flocks() {
        let space = Space::torus(1000.0, 1000.0);
        let n = Swarm::Normal;
        let s = snapshot(
            space,
            &[
                (Vec2::new(10.0, 10.0), Vec2::X, n),
                (Vec2::new(990.0, 10.0), Vec2::X, n), // 20 px across the seam
                (Vec2::new(500.0, 500.0), Vec2::X, n), // far away: its own flock
                (Vec2::new(12.0, 10.0), Vec2::X, Swarm::Doctor), // other swarm: ignored
            ],
        );
        let b = AllBackends::new(s, 50.0);
        let config = SimConfig::default();
        for kind in [IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute] {
            let idx = b.get(kind);
            assert!((nearest_same_swarm(&idx, &b.snapshot, 0, 50.0).unwrap() - 20.0).abs() < 1e-3);
            let far = nearest_same_swarm(&idx, &b.snapshot, 2, 50.0).unwrap();
            assert!(
                (far - Vec2::new(490.0, 490.0).length()).abs() < 0.5,
                "{far}"
            );
            assert_eq!(nearest_same_swarm(&idx, &b.snapshot, 3, 50.0), None);
            assert_eq!(flock_counts(&idx, &b.snapshot, &config), [2, 1, 0]);
        }
    }

    #[test]
    fn csv_row_matches_header() {
        let sample = Sample::default();
        assert_eq!(
            Sample::csv_header().split(',').count(),
            sample.csv_row().split(',').count()
        );
        assert!(Sample::csv_header().starts_with("time_s,alive,"));
        assert!(Sample::csv_header().contains("normal_polarisation"));
        assert!(Sample::csv_header().contains("normal_cohesion_px"));
        assert!(Sample::csv_header().contains("normal_mean_speed_px_s"));
    }
}
