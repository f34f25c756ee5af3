//! Metrics (docs/model.md §8): per-swarm and overall counts and flocking measures, sampled every
//! `sample_every` simulated seconds in `SimSystems::Sample` from the step's snapshot (the state
//! at the start of the step) and kept for the whole run in `MetricsLog`. Cumulative counters
//! (dead, born, caught) live in `Tally`, which the modules that kill, bear or catch update.
//! The flocking measures are pure functions with tests below.

use bevy::prelude::*;
use serde::Serialize;
use std::fmt::Write as _;

use crate::sim::schedule::SimSystems;
use crate::sim::agent::RunStarted;
use crate::sim::clock::SimClock;
use crate::sim::schedule::StepMode;
use crate::sim::config::SimConfig;
use crate::sim::math::unit;
use crate::sim::neighbours::{NeighbourIndex, Neighbours, Snapshot};
use crate::sim::space::Space;
use crate::sim::swarm::Swarm;

/// Time constant of the smoothed growth rate, s (docs/model.md §8).
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
                "largest_flock_frac",
                "nn_cv",
                "milling",
                "elongation",
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
            for v in [
                g.mean_speed_px_s,
                g.largest_flock_frac,
                g.nn_cv,
                g.milling,
                g.elongation,
            ] {
                out.push(',');
                fmt_opt(&mut out, v);
            }
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
        sum += unit(v);
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

/// The flocks of every swarm: connected groups of same-swarm boids linked when closer than
/// their swarm's alignment radius (docs/model.md §8). Per swarm, a list of flocks, each a list of slots
/// in ascending order; flocks are ordered by their lowest slot, so the result does not depend
/// on the order the index visits boids.
pub fn flocks(
    index: &impl NeighbourIndex,
    snapshot: &Snapshot,
    config: &SimConfig,
) -> [Vec<Vec<usize>>; 3] {
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
    // A root is the lowest slot of its flock, so visiting slots in order meets every flock's
    // root before its other members.
    let mut flock_of_root: Vec<u32> = vec![u32::MAX; n];
    let mut out: [Vec<Vec<usize>>; 3] = Default::default();
    for i in 0..n {
        let root = groups.root(i as u32) as usize;
        let list = &mut out[snapshot.swarm[i].index()];
        if flock_of_root[root] == u32::MAX {
            flock_of_root[root] = list.len() as u32;
            list.push(Vec::new());
        }
        list[flock_of_root[root] as usize].push(i);
    }
    out
}

/// Number of flocks per swarm (see [`flocks`]).
pub fn flock_counts(
    index: &impl NeighbourIndex,
    snapshot: &Snapshot,
    config: &SimConfig,
) -> [u64; 3] {
    flocks(index, snapshot, config).map(|f| f.len() as u64)
}

/// Standard deviation (population) over mean; `None` for fewer than two values or a zero
/// mean. The `nn_cv` of docs/model.md §8 applied to nearest-neighbour distances.
pub fn coefficient_of_variation(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    Some(var.sqrt() / mean)
}

/// Offsets of a flock's members from its centre: the torus centroid (circular mean per axis,
/// docs/model.md §2) refined by the mean of the minimum-image offsets from it, so the offsets sum to
/// zero exactly as on a plane. Valid while the flock spans less than half the world per axis.
pub fn offsets_from_centre(space: &Space, points: &[Vec2]) -> Vec<Vec2> {
    let Some(c) = space.centroid(points.iter().copied()) else {
        return Vec::new();
    };
    let raw: Vec<Vec2> = points.iter().map(|p| space.displacement(c, *p)).collect();
    let mean = raw.iter().copied().sum::<Vec2>() / raw.len() as f32;
    raw.into_iter().map(|r| r - mean).collect()
}

/// Milling of one flock (docs/model.md §8): `|Σ r_i × v_i| / Σ |r_i||v_i|` with `r_i` the offsets from
/// the flock's centre — 1 when every boid circles the centre the same way, 0 for translation.
/// `None` when undefined (every boid at the centre or at rest).
pub fn milling(offsets: &[Vec2], velocities: &[Vec2]) -> Option<f64> {
    let (mut torque, mut norm) = (0.0f64, 0.0f64);
    for (r, v) in offsets.iter().zip(velocities) {
        torque += r.perp_dot(*v) as f64;
        norm += (r.length() * v.length()) as f64;
    }
    (norm > 0.0).then(|| torque.abs() / norm)
}

/// Elongation of a flock (docs/model.md §8): `1 − λ₂/λ₁` of the gyration tensor `Σ r rᵀ / N` of the
/// offsets from its centre — 0 for a round flock, → 1 for a line. `None` if all coincide.
pub fn elongation(offsets: &[Vec2]) -> Option<f64> {
    let n = offsets.len() as f64;
    if n == 0.0 {
        return None;
    }
    let (mut xx, mut xy, mut yy) = (0.0f64, 0.0f64, 0.0f64);
    for r in offsets {
        let (x, y) = (r.x as f64, r.y as f64);
        xx += x * x;
        xy += x * y;
        yy += y * y;
    }
    let (xx, xy, yy) = (xx / n, xy / n, yy / n);
    // Eigenvalues of the symmetric 2 × 2 tensor.
    let mid = 0.5 * (xx + yy);
    let half_gap = (0.25 * (xx - yy).powi(2) + xy * xy).sqrt();
    let (l1, l2) = (mid + half_gap, (mid - half_gap).max(0.0));
    (l1 > 0.0).then(|| 1.0 - l2 / l1)
}

/// Flocks of at least this many boids count for milling and elongation (two boids always
/// form a "line" and have no rotation to speak of).
pub const MIN_SHAPED_FLOCK: usize = 3;

/// Structure measures of one swarm from its flocks (slot lists): the largest flock's share
/// of the swarm, the size-weighted milling over flocks of at least [`MIN_SHAPED_FLOCK`], and
/// the largest flock's elongation (`None` where undefined).
pub fn flock_structure(
    snapshot: &Snapshot,
    flocks: &[Vec<usize>],
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let alive: usize = flocks.iter().map(Vec::len).sum();
    // The largest flock; ties go to the one with the lowest slot (the earlier one).
    let Some(largest) = flocks
        .iter()
        .reduce(|best, f| if f.len() > best.len() { f } else { best })
    else {
        return (None, None, None);
    };
    let space = snapshot.space();
    let centred = |f: &[usize]| {
        let pts: Vec<Vec2> = f.iter().map(|&i| snapshot.pos[i]).collect();
        offsets_from_centre(&space, &pts)
    };
    let (mut weighted, mut weight) = (0.0f64, 0.0f64);
    for f in flocks.iter().filter(|f| f.len() >= MIN_SHAPED_FLOCK) {
        let vel: Vec<Vec2> = f.iter().map(|&i| snapshot.vel[i]).collect();
        if let Some(m) = milling(&centred(f), &vel) {
            weighted += m * f.len() as f64;
            weight += f.len() as f64;
        }
    }
    let shape = (largest.len() >= MIN_SHAPED_FLOCK)
        .then(|| elongation(&centred(largest)))
        .flatten();
    (
        Some(largest.len() as f64 / alive as f64),
        (weight > 0.0).then(|| weighted / weight),
        shape,
    )
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
    for (swarm, d) in snapshot.swarm.iter().zip(&snapshot.disease) {
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
    index: &impl NeighbourIndex,
    config: &SimConfig,
    tally: &Tally,
    growth_rate_per_s: f64,
) -> Sample {
    let space = snapshot.space();
    let all_flocks = flocks(index, snapshot, config);
    let counts = count_by_swarm(snapshot);
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
        let c = counts[k];
        (g.alive, g.susceptible, g.infected, g.recovered) =
            (c.alive, c.susceptible, c.infected, c.recovered);
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
        let nn: Vec<f64> = slots
            .iter()
            .filter_map(|&i| nearest_same_swarm(index, snapshot, i, start))
            .map(f64::from)
            .collect();
        g.nearest_neighbour_px = (!nn.is_empty()).then(|| nn.iter().sum::<f64>() / nn.len() as f64);
        g.nn_cv = coefficient_of_variation(&nn);
        g.flocks = Some(all_flocks[k].len() as u64);
        (g.largest_flock_frac, g.milling, g.elongation) = flock_structure(snapshot, &all_flocks[k]);
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
        .add_systems(FixedUpdate, record_metrics.in_set(SimSystems::Sample));
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
    let sample = measure(
        now,
        snapshot,
        &neighbours.index(),
        &config,
        &tally,
        log.growth_rate,
    );
    log.samples.push(sample);
    log.next_due = next_sample_time(now, half_step, config.sample_every);
}

/// The first multiple of `every` later than `now + tolerance`: when the sample after one taken
/// at `now` is due. Computed, not counted up to, so a `sample_every` far below the step costs
/// nothing (a step still records at most one sample).
pub fn next_sample_time(now: f64, tolerance: f64, every: f64) -> f64 {
    (((now + tolerance) / every).floor() + 1.0) * every
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::agent::Disease;
    use crate::sim::config::IndexKind;
    use crate::sim::neighbours::Row;
    use crate::sim::neighbours::test_support::AllBackends;

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

    /// A snapshot of one swarm from positions and velocities, on a 1000 × 1000 torus.
    fn flock(pts: &[(Vec2, Vec2)]) -> Snapshot {
        let rows: Vec<(Vec2, Vec2, Swarm)> =
            pts.iter().map(|&(p, v)| (p, v, Swarm::Normal)).collect();
        snapshot(Space::torus(1000.0, 1000.0), &rows)
    }

    fn measured(s: Snapshot) -> GroupSample {
        let b = AllBackends::new(s, 50.0);
        let sample = measure(
            0.0,
            &b.snapshot,
            &b.get(IndexKind::Brute),
            &SimConfig::default(),
            &Tally::default(),
            0.0,
        );
        sample.swarms[0].clone()
    }

    /// A ring of `n` boids of radius `r` around `c`, wrapped into the world.
    fn ring(c: Vec2, r: f32, n: usize, vel: impl Fn(Vec2) -> Vec2) -> Vec<(Vec2, Vec2)> {
        (0..n)
            .map(|k| {
                let dir = crate::sim::math::from_angle(k as f32 / n as f32 * std::f32::consts::TAU);
                let p = Space::torus(1000.0, 1000.0)
                    .confine(c + dir * r, Vec2::ZERO)
                    .0;
                (p, vel(dir))
            })
            .collect()
    }

    #[test]
    fn a_rotating_ring_mills_and_a_translating_one_does_not_also_across_the_seam() {
        // 40 boids on a ring of radius 80 (neighbours 12.6 px apart: one flock). Centred on
        // the corner of the torus, so the ring is cut by both seams.
        for centre in [Vec2::new(500.0, 500.0), Vec2::new(0.0, 0.0)] {
            let turning = measured(flock(&ring(centre, 80.0, 40, |d| d.perp() * 150.0)));
            assert_eq!(turning.flocks, Some(1));
            assert_eq!(turning.largest_flock_frac, Some(1.0));
            let m = turning.milling.unwrap();
            assert!(m > 0.999, "rotating ring at {centre}: milling {m}");
            // Round: equal eigenvalues.
            assert!(
                turning.elongation.unwrap() < 1e-3,
                "{:?}",
                turning.elongation
            );
            let moving = measured(flock(&ring(centre, 80.0, 40, |_| Vec2::new(150.0, 0.0))));
            let m = moving.milling.unwrap();
            assert!(m < 1e-4, "translating ring at {centre}: milling {m}");
            // Half turning clockwise, half anticlockwise: no net rotation.
            let mixed = ring(centre, 80.0, 40, |d| d.perp() * 150.0)
                .into_iter()
                .enumerate()
                .map(|(k, (p, v))| (p, if k % 2 == 0 { v } else { -v }))
                .collect::<Vec<_>>();
            assert!(measured(flock(&mixed)).milling.unwrap() < 1e-4);
        }
    }

    #[test]
    fn a_line_is_elongated_also_across_the_seam() {
        for start in [Vec2::new(300.0, 400.0), Vec2::new(900.0, 990.0)] {
            // 30 boids 10 px apart along a diagonal, each nudged 1 px sideways in turn.
            let dir = Vec2::new(1.0, 0.5).normalize();
            let pts: Vec<(Vec2, Vec2)> = (0..30)
                .map(|k| {
                    let side = if k % 2 == 0 { 1.0 } else { -1.0 };
                    let p = start + dir * (10.0 * k as f32) + dir.perp() * side;
                    (
                        Space::torus(1000.0, 1000.0).confine(p, Vec2::ZERO).0,
                        dir * 100.0,
                    )
                })
                .collect();
            let g = measured(flock(&pts));
            assert_eq!(g.flocks, Some(1));
            // λ₁ = 10²·(30² − 1)/12 = 7491.7, λ₂ = 1: elongation = 1 − 1/7491.7.
            let e = g.elongation.unwrap();
            assert!(
                (e - (1.0 - 1.0 / 7491.7)).abs() < 1e-4,
                "line from {start}: {e}"
            );
            // Pure translation along the line.
            assert!(g.milling.unwrap() < 1e-3);
        }
    }

    #[test]
    fn a_square_lattice_has_no_spread_in_nearest_neighbour_distance() {
        // 12 × 12 boids 20 px apart, straddling both seams.
        let pts: Vec<(Vec2, Vec2)> = (0..144)
            .map(|k| {
                let p = Vec2::new(
                    880.0 + 20.0 * (k % 12) as f32,
                    880.0 + 20.0 * (k / 12) as f32,
                );
                (
                    Space::torus(1000.0, 1000.0).confine(p, Vec2::ZERO).0,
                    Vec2::X * 100.0,
                )
            })
            .collect();
        let g = measured(flock(&pts));
        assert!((g.nearest_neighbour_px.unwrap() - 20.0).abs() < 1e-3);
        assert!(g.nn_cv.unwrap() < 1e-4, "{:?}", g.nn_cv);
        assert_eq!((g.flocks, g.largest_flock_frac), (Some(1), Some(1.0)));
        // A square is as wide as it is long.
        assert!(g.elongation.unwrap() < 1e-3, "{:?}", g.elongation);
    }

    #[test]
    fn random_points_have_the_poisson_nearest_neighbour_spread() {
        // For a Poisson process the nearest-neighbour distance is Rayleigh distributed:
        // cv = sqrt(4/π − 1) = 0.5227. 3000 points: the estimate's sd is about 0.01.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let pts: Vec<(Vec2, Vec2)> = (0..3000)
            .map(|_| (Vec2::new(rng.random(), rng.random()) * 1000.0, Vec2::X))
            .collect();
        let cv = measured(flock(&pts)).nn_cv.unwrap();
        assert!((cv - 0.5227).abs() < 0.04, "{cv}");
    }

    #[test]
    fn largest_flock_share_counts_only_the_biggest_group() {
        // A flock of 6, a flock of 3 and a loner: 6 / 10.
        let mut pts = Vec::new();
        for k in 0..6 {
            pts.push((Vec2::new(100.0 + 10.0 * k as f32, 100.0), Vec2::X));
        }
        for k in 0..3 {
            pts.push((Vec2::new(600.0 + 10.0 * k as f32, 600.0), Vec2::X));
        }
        pts.push((Vec2::new(300.0, 800.0), Vec2::X));
        let g = measured(flock(&pts));
        assert_eq!(g.flocks, Some(3));
        assert_eq!(g.largest_flock_frac, Some(0.6));
    }

    #[test]
    fn structure_helpers_edge_cases() {
        assert_eq!(coefficient_of_variation(&[3.0]), None);
        assert_eq!(coefficient_of_variation(&[2.0, 2.0, 2.0]), Some(0.0));
        // {1, 3}: mean 2, population sd 1.
        assert_eq!(coefficient_of_variation(&[1.0, 3.0]), Some(0.5));
        assert_eq!(milling(&[Vec2::ZERO], &[Vec2::X]), None);
        assert_eq!(elongation(&[Vec2::ZERO, Vec2::ZERO]), None);
        assert_eq!(elongation(&[Vec2::X, -Vec2::X]), Some(1.0));
        let s = flock(&[
            (Vec2::new(1.0, 1.0), Vec2::X),
            (Vec2::new(5.0, 1.0), Vec2::X),
        ]);
        // Two boids: a flock, but too small for milling or elongation.
        assert_eq!(flock_structure(&s, &[vec![0, 1]]), (Some(1.0), None, None));
        assert_eq!(flock_structure(&s, &[]), (None, None, None));
    }

    #[test]
    fn next_sample_time_is_one_step_of_every_ahead() {
        assert_eq!(next_sample_time(0.0, 0.01, 0.5), 0.5);
        assert_eq!(next_sample_time(0.5, 0.01, 0.5), 1.0);
        assert_eq!(next_sample_time(0.499, 0.01, 0.5), 1.0);
        // A sampling interval far below the step: the next sample is the next step's.
        let t = next_sample_time(10.0, 0.5 / 60.0, 1e-9);
        assert!(t > 10.0 && t < 10.0 + 1.0 / 60.0, "{t}");
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
        for m in ["largest_flock_frac", "nn_cv", "milling", "elongation"] {
            assert!(
                Sample::csv_header().contains(&format!("antivax_{m}")),
                "{m}"
            );
        }
    }
}
