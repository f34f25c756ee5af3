//! Reading run folders back (summary.json, metrics.csv) and writing the tables that join many
//! runs: `summary.csv` (one row per run) and `aggregate.csv` (per scenario: mean, standard
//! deviation and 95 % confidence interval of every measure). Used by `experiment`, `sweep`,
//! `merge` and `plot`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use serde_json::Value;

use std::sync::OnceLock;

use crate::sim::metrics::{SWARM_MEASURES, Spread};
use crate::sim::stats::estimate;

/// The epidemic's measures of one run and where `summary.json` has them: `r0` is the first
/// generation's mean secondary infections, `serial_interval_s` the mean serial interval.
const EPIDEMIC_MEASURES: [(&str, &[&str]); 11] = [
    ("peak_infected", &["epidemic", "peak_infected", "count"]),
    ("peak_fraction", &["epidemic", "peak_infected", "fraction"]),
    ("peak_time_s", &["epidemic", "peak_infected", "time_s"]),
    ("attack_rate", &["epidemic", "attack_rate"]),
    ("eradication_time_s", &["epidemic", "eradication_time_s"]),
    ("final_susceptible", &["epidemic", "final", "susceptible"]),
    ("final_infected", &["epidemic", "final", "infected"]),
    ("final_recovered", &["epidemic", "final", "recovered"]),
    ("final_dead", &["epidemic", "final", "dead"]),
    ("r0", &["transmission", "r0_first_generation", "mean"]),
    (
        "serial_interval_s",
        &["transmission", "serial_interval_s", "mean"],
    ),
];

/// How a flocking measure of the tables is made from a `metrics.csv` column of the Normal
/// swarm over the measured window: its mean, or its standard deviation over time.
#[derive(Clone, Debug)]
struct FlockingMeasure {
    name: String,
    column: String,
    sd: bool,
}

/// The Normal swarm's flocking measures the tables report, from the one list of measures
/// (`SWARM_MEASURES`): `mean_<name>_normal`, and `sd_<name>_normal` where it fluctuates.
fn flocking_measures() -> &'static [FlockingMeasure] {
    static LIST: OnceLock<Vec<FlockingMeasure>> = OnceLock::new();
    LIST.get_or_init(|| {
        let mut out = Vec::new();
        for m in &SWARM_MEASURES {
            let column = format!("normal_{}", m.name);
            let stats: &[bool] = match m.experiment {
                Some(Spread::Mean) => &[false],
                Some(Spread::MeanAndSd) => &[false, true],
                None => &[],
            };
            for &sd in stats {
                let kind = if sd { "sd" } else { "mean" };
                out.push(FlockingMeasure {
                    name: format!("{kind}_{}_normal", m.name),
                    column: column.clone(),
                    sd,
                });
            }
        }
        out
    })
}

/// The measures of one run that the tables report, in column order: the epidemic's (from
/// `summary.json`), then the Normal swarm's flocking structure averaged over a window of the
/// run (from `metrics.csv`).
pub fn measures() -> &'static [String] {
    static LIST: OnceLock<Vec<String>> = OnceLock::new();
    LIST.get_or_init(|| {
        EPIDEMIC_MEASURES
            .iter()
            .map(|(name, _)| name.to_string())
            .chain(flocking_measures().iter().map(|m| m.name.clone()))
            .collect()
    })
}

/// One finished run, as read from its folder.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecord {
    /// Scenario name (file stem).
    pub scenario: String,
    /// Label of the run within its scenario (`seed-3`, `sample-00012`).
    pub label: String,
    /// The run's seed.
    pub seed: u64,
    /// Its folder.
    pub dir: PathBuf,
    /// Whether it reached its duration.
    pub completed: bool,
    /// Values of [`measures`] (None: undefined, e.g. never eradicated).
    pub values: Vec<Option<f64>>,
}

impl RunRecord {
    /// The value of a measure by name.
    pub fn get(&self, measure: &str) -> Option<f64> {
        measures()
            .iter()
            .position(|m| m == measure)
            .and_then(|k| self.values[k])
    }
}

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_f64()
}

/// Reads a run folder: the epidemic measures from `summary.json`, the flocking measures from
/// the samples of `metrics.csv` at or after `from` simulated seconds (0: the whole run).
pub fn read_run(dir: &Path, scenario: &str, label: &str, from: f64) -> Result<RunRecord> {
    let path = dir.join("summary.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let v: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", path.display()))?;
    let mut values: Vec<Option<f64>> = EPIDEMIC_MEASURES
        .iter()
        .map(|(_, path)| num(&v, path))
        .collect();
    let series = Series::read(&dir.join("metrics.csv"))?;
    for m in flocking_measures() {
        let xs: Vec<f64> = series
            .column(&m.column)
            .into_iter()
            .filter(|(t, _)| *t >= from - 1e-9)
            .map(|(_, x)| x)
            .collect();
        values.push(estimate(xs).and_then(|e| {
            if m.sd {
                // Over time, not over runs: the population standard deviation.
                let n = e.n as f64;
                (e.n > 1).then(|| e.sd * ((n - 1.0) / n).sqrt())
            } else {
                Some(e.mean)
            }
        }));
    }
    Ok(RunRecord {
        scenario: scenario.to_string(),
        label: label.to_string(),
        seed: v["seed"]
            .as_u64()
            .ok_or_else(|| anyhow!("{} has no seed", path.display()))?,
        dir: dir.to_path_buf(),
        completed: v["completed"].as_bool().unwrap_or(false),
        values,
    })
}

/// Whether a run folder holds a completed run (its summary says so).
pub fn is_complete(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("summary.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["completed"].as_bool())
        .unwrap_or(false)
}

fn cell(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x}"))
}

/// Writes `summary.csv`: `scenario,run,seed,<extra columns>,<measures>,completed`, one row per
/// run. `extra` gives additional named values per run (a sweep's parameters).
pub fn write_summary_csv(
    path: &Path,
    records: &[RunRecord],
    extra: &[(String, Vec<f64>)],
) -> Result<()> {
    let mut out = String::from("scenario,run,seed");
    for (name, _) in extra {
        let _ = write!(out, ",{name}");
    }
    for m in measures() {
        let _ = write!(out, ",{m}");
    }
    out.push_str(",completed\n");
    for (k, r) in records.iter().enumerate() {
        let _ = write!(out, "{},{},{}", r.scenario, r.label, r.seed);
        for (_, values) in extra {
            let _ = write!(out, ",{}", values[k]);
        }
        for v in &r.values {
            let _ = write!(out, ",{}", cell(*v));
        }
        let _ = writeln!(out, ",{}", r.completed);
    }
    std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))
}

/// The values a measure can take: every measure is ≥ 0; shares and order parameters are ≤ 1.
pub fn measure_range(name: &str) -> (f64, f64) {
    let share = [
        "fraction",
        "frac",
        "attack_rate",
        "polarisation",
        "milling",
        "elongation",
    ];
    if share.iter().any(|s| name.contains(s)) {
        (0.0, 1.0)
    } else {
        (0.0, f64::INFINITY)
    }
}

/// Writes `aggregate.csv`: per scenario, the number of runs and, for each measure, how many
/// runs define it and the mean, sd and 95 % CI over those (within the measure's range).
pub fn write_aggregate_csv(path: &Path, records: &[RunRecord]) -> Result<()> {
    let mut by_scenario: BTreeMap<&str, Vec<&RunRecord>> = BTreeMap::new();
    for r in records {
        by_scenario.entry(r.scenario.as_str()).or_default().push(r);
    }
    let mut out = String::from("scenario,runs");
    for m in measures() {
        let _ = write!(out, ",{m}_n,{m}_mean,{m}_sd,{m}_ci95_low,{m}_ci95_high");
    }
    out.push('\n');
    for (scenario, runs) in by_scenario {
        let _ = write!(out, "{scenario},{}", runs.len());
        for (k, name) in measures().iter().enumerate() {
            match estimate(runs.iter().filter_map(|r| r.values[k])) {
                Some(e) => {
                    // The interval within what the measure can be (few runs give wide ones).
                    let (lo, hi) = measure_range(name);
                    let e = crate::sim::stats::Estimate {
                        ci_low: e.ci_low.max(lo),
                        ci_high: e.ci_high.min(hi),
                        ..e
                    };
                    let f = |x: f64| {
                        if x.is_finite() {
                            format!("{x}")
                        } else {
                            String::new()
                        }
                    };
                    let _ = write!(
                        out,
                        ",{},{},{},{},{}",
                        e.n,
                        f(e.mean),
                        f(e.sd),
                        f(e.ci_low),
                        f(e.ci_high)
                    );
                }
                None => out.push_str(",0,,,,"),
            }
        }
        out.push('\n');
    }
    std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))
}

/// A run's time series, read from its `metrics.csv` (or `rt.csv`), with the run's intervention
/// spans from the `interventions.csv` beside it.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Column names.
    pub header: Vec<String>,
    /// Rows of values (None for empty cells).
    pub rows: Vec<Vec<Option<f64>>>,
    /// Every activation of an intervention in the run.
    pub spans: Vec<Span>,
}

/// One activation of an intervention: from its start to its end (the run's end when it was
/// still active).
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The intervention's name.
    pub name: String,
    /// Start, s.
    pub from: f64,
    /// End, s.
    pub to: f64,
}

/// The spans of an `interventions.csv` (none when there is no such file); an activation still
/// open at the end lasts to `end`.
pub fn read_spans(path: &Path, end: f64) -> Vec<Span> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let events: Vec<crate::sim::interventions::InterventionEvent> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            let kind = match *c.get(3)? {
                "start" => crate::sim::interventions::EventKind::Start,
                "end" => crate::sim::interventions::EventKind::End,
                _ => return None,
            };
            Some(crate::sim::interventions::InterventionEvent {
                time_s: c.first()?.parse().ok()?,
                index: c.get(1)?.parse().ok()?,
                name: c.get(2)?.to_string(),
                event: kind,
                affected: c.get(4)?.parse().ok()?,
            })
        })
        .collect();
    crate::sim::interventions::spans(&events, end)
        .into_iter()
        .map(|(name, from, to)| Span { name, from, to })
        .collect()
}

impl Series {
    /// Reads a `metrics.csv`.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut lines = text.lines();
        let header: Vec<String> = lines
            .next()
            .ok_or_else(|| anyhow!("{} is empty", path.display()))?
            .split(',')
            .map(String::from)
            .collect();
        let rows: Vec<Vec<Option<f64>>> = lines
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split(',').map(|c| c.parse::<f64>().ok()).collect())
            .collect();
        let end = rows
            .iter()
            .filter_map(|r| r.first().copied().flatten())
            .fold(0.0, f64::max);
        let spans = read_spans(&path.with_file_name("interventions.csv"), end);
        Ok(Self {
            header,
            rows,
            spans,
        })
    }

    /// One column as (time, value) pairs where both are defined.
    pub fn column(&self, name: &str) -> Vec<(f64, f64)> {
        let Some(k) = self.header.iter().position(|h| h == name) else {
            return Vec::new();
        };
        self.rows
            .iter()
            .filter_map(|r| Some((r.first().copied()??, r.get(k).copied()??)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(scenario: &str, peak: f64, erad: Option<f64>) -> RunRecord {
        let mut values = vec![Some(1.0); measures().len()];
        values[0] = Some(peak);
        values[4] = erad;
        RunRecord {
            scenario: scenario.into(),
            label: "seed-0".into(),
            seed: 1,
            dir: PathBuf::new(),
            completed: true,
            values,
        }
    }

    #[test]
    fn aggregate_groups_by_scenario_and_skips_undefined_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("aggregate.csv");
        let records = [
            record("a", 10.0, Some(5.0)),
            record("a", 20.0, None),
            record("b", 7.0, Some(1.0)),
        ];
        write_aggregate_csv(&path, &records).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let header: Vec<&str> = lines[0].split(',').collect();
        let a: Vec<&str> = lines[1].split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        assert_eq!(a[col("runs")], "2");
        assert_eq!(a[col("peak_infected_mean")], "15");
        // sd of {10, 20} = 7.0711; CI = 15 ± 12.7062·7.0711/√2 = 15 ± 63.53.
        let sd: f64 = a[col("peak_infected_sd")].parse().unwrap();
        assert!((sd - 50f64.sqrt()).abs() < 1e-9);
        let hi: f64 = a[col("peak_infected_ci95_high")].parse().unwrap();
        assert!((hi - (15.0 + 12.706_204_7 * 50f64.sqrt() / 2f64.sqrt())).abs() < 1e-6);
        // Eradication defined in one run of two.
        assert_eq!(a[col("eradication_time_s_n")], "1");
        assert_eq!(a[col("eradication_time_s_mean")], "5");
        assert_eq!(a[col("eradication_time_s_sd")], "");
    }

    #[test]
    fn series_reads_columns_with_gaps() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.csv");
        std::fs::write(&path, "time_s,infected,x\n0.0,3,\n0.5,4,1.5\n").unwrap();
        let s = Series::read(&path).unwrap();
        assert_eq!(s.column("infected"), vec![(0.0, 3.0), (0.5, 4.0)]);
        assert_eq!(s.column("x"), vec![(0.5, 1.5)]);
        assert!(s.column("nope").is_empty());
    }
}
