//! The `sweep` and `merge` commands: Latin-hypercube sampling over named config keys, written
//! once to `manifest.csv` (`design`); each sample runs `--replicates` seeds; `--shard I/K` runs
//! the samples with `sample % K == I`, so a cluster job array shares the work (each shard
//! writes `summary-shard-I-of-K.csv`, one row per run); `merge` joins the shard summaries into
//! one `summary.csv`, checks that no run is missing and analyses the sweep (`merge`).

mod design;
mod merge;
#[cfg(test)]
mod tests;

pub use design::{Manifest, Param, latin_hypercube, parse_param, parse_shard, shard_samples};
pub use merge::{analyse, merge, redraw};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, bail};

use super::jobs::{Job, JobStatus, derive_seed, execute};
use super::results::{RunRecord, is_complete, measures, read_run, write_summary_csv};
use crate::sim::config::keys::{self, Kind};
use crate::sim::config::{SimConfig, Value};
use crate::sim::stats::estimate;

/// Options of a sweep.
pub struct SweepOptions {
    /// Base scenario.
    pub base: PathBuf,
    /// `--set` overrides of the base.
    pub sets: Vec<String>,
    /// Swept keys.
    pub params: Vec<Param>,
    /// Number of samples.
    pub samples: usize,
    /// Runs per sample, each with its own seed.
    pub replicates: usize,
    /// Seed of the design and the runs' seeds.
    pub seed: u64,
    /// Which shard to run (index, count).
    pub shard: (usize, usize),
    /// Runs at a time.
    pub jobs: usize,
    /// Overrides the base duration.
    pub duration: Option<f64>,
    /// Output folder (shared by every shard).
    pub out: PathBuf,
    /// Progress bar.
    pub progress: bool,
    /// Ctrl-C.
    pub stop: Option<Arc<AtomicBool>>,
}

/// What one shard did.
#[derive(Debug, Default)]
pub struct SweepReport {
    /// Samples in this shard.
    pub shard_samples: usize,
    /// Outcomes, per run of the shard: (sample, status).
    pub outcomes: Vec<(usize, JobStatus)>,
    /// The shard's summary file.
    pub summary: PathBuf,
}

/// The value of `key` a run uses when the design asks for `v`: whole-number keys rounded,
/// `f32` keys at `f32` precision.
fn value_for(key: &str, v: f64) -> Value {
    match keys::find(key).map(|k| k.kind) {
        Some(Kind::Int) => Value::Int(v.round() as i64),
        None if crate::sim::config::interventions::is_whole(key) => Value::Int(v.round() as i64),
        _ => Value::Float(v),
    }
}

/// `v` as the run of `key` uses and prints it (`0.7` for an `f32` key, `303` for a count), or
/// as sampled when the base does not accept it (the sample then fails with the reason).
fn as_run(base: &SimConfig, key: &str, v: f64) -> String {
    base.with_edit(key, value_for(key, v), "--param")
        .ok()
        .and_then(|c| c.get(key).ok())
        .map_or_else(|| v.to_string(), |x| x.to_string())
}

/// A sample's config: the base with each swept key set.
fn sample_config(
    base: &SimConfig,
    keys: &[String],
    values: &[f64],
    seed: u64,
    duration: Option<f64>,
) -> Result<SimConfig, String> {
    let mut config = base.clone();
    for (key, v) in keys.iter().zip(values) {
        config = config
            .with_edit(key, value_for(key, *v), "--param")
            .map_err(|e| e.to_string())?;
    }
    config.seed = seed;
    if let Some(d) = duration {
        config.duration = d;
    }
    config.validate("--duration").map_err(|e| e.to_string())?;
    Ok(config)
}

/// The label (and folder name under `runs/`) of replicate `r` of sample `s`: `sample-00012`
/// with one replicate per sample, `sample-00012-rep-3` with several.
pub fn run_label(s: usize, r: usize, replicates: usize) -> String {
    if replicates <= 1 {
        format!("sample-{s:05}")
    } else {
        format!("sample-{s:05}-rep-{r}")
    }
}

/// The seed of replicate `r` of sample `s` (the first replicate's is the manifest's).
fn run_seed(seed: u64, s: usize, r: usize, replicates: usize) -> u64 {
    derive_seed(seed, s * replicates.max(1) + r)
}

fn base_name(base: &Path) -> String {
    base.file_stem()
        .map_or("base".into(), |s| s.to_string_lossy().into_owned())
}

/// Runs one shard of a sweep.
pub fn run(opts: &SweepOptions) -> Result<SweepReport> {
    if opts.samples == 0 {
        bail!("--samples must be at least 1");
    }
    if opts.replicates == 0 {
        bail!("--replicates must be at least 1");
    }
    let base = SimConfig::load(Some(&opts.base), &opts.sets)?;
    // Check every key before running anything.
    for p in &opts.params {
        base.with_edit(&p.key, value_for(&p.key, p.lo), "--param")?;
    }
    crate::run::output::create_folder(&opts.out)?;
    let unit = latin_hypercube(opts.samples, opts.params.len(), opts.seed);
    let k = opts.replicates;
    // The design in the values the runs use (whole numbers rounded, f32 keys at f32
    // precision), so the manifest, the summaries and the rank correlations see what was run.
    let design = Manifest {
        keys: opts.params.iter().map(|p| p.key.clone()).collect(),
        replicates: k,
        rows: unit
            .iter()
            .enumerate()
            .map(|(s, row)| {
                let values = row
                    .iter()
                    .zip(&opts.params)
                    .map(|(u, p)| as_run(&base, &p.key, p.at(*u)).parse().unwrap_or(f64::NAN))
                    .collect();
                (run_seed(opts.seed, s, 0, k), values)
            })
            .collect(),
    };
    let manifest = design.text();
    let path = opts.out.join("manifest.csv");
    match std::fs::read_to_string(&path) {
        Ok(existing) if existing != manifest => bail!(
            "{} was made with other --param/--samples/--replicates/--seed values; use a new --out folder for a different sweep",
            path.display()
        ),
        Ok(_) => {}
        Err(_) => {
            // Shards may start together: write to a private file, then rename into place.
            let tmp = opts
                .out
                .join(format!("manifest.csv.{}", std::process::id()));
            std::fs::write(&tmp, &manifest)
                .with_context(|| format!("cannot write {}", tmp.display()))?;
            std::fs::rename(&tmp, &path)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    let name = base_name(&opts.base);
    let mine = shard_samples(opts.samples, opts.shard.0, opts.shard.1);
    let mut jobs = Vec::new();
    let mut outcomes = Vec::new();
    for &s in &mine {
        for r in 0..k {
            let seed = run_seed(opts.seed, s, r, k);
            match sample_config(&base, &design.keys, &design.rows[s].1, seed, opts.duration) {
                Ok(config) => jobs.push((
                    s,
                    Job {
                        scenario: name.clone(),
                        label: run_label(s, r, k),
                        config,
                        dir: opts.out.join("runs").join(run_label(s, r, k)),
                    },
                )),
                Err(e) => outcomes.push((s, JobStatus::Failed(e))),
            }
        }
    }
    let list: Vec<Job> = jobs.iter().map(|(_, j)| j.clone()).collect();
    for (j, o) in execute(&list, opts.jobs, opts.progress, opts.stop.clone())
        .into_iter()
        .enumerate()
    {
        outcomes.push((jobs[j].0, o));
    }
    outcomes.sort_by_key(|o| o.0);
    let summary = opts.out.join(format!(
        "summary-shard-{}-of-{}.csv",
        opts.shard.0, opts.shard.1
    ));
    let (records, extra) = sample_runs(&opts.out, &name, &design, &mine);
    write_summary_csv(&summary, &records, &extra)?;
    Ok(SweepReport {
        shard_samples: mine.len(),
        outcomes,
        summary,
    })
}

/// One empty column per parameter of the design.
fn parameter_columns(design: &Manifest) -> Vec<(String, Vec<f64>)> {
    design
        .keys
        .iter()
        .map(|k| (k.clone(), Vec::new()))
        .collect()
}

/// Every complete run of `samples`, with the parameter values of its sample as columns.
fn sample_runs(
    dir: &Path,
    name: &str,
    design: &Manifest,
    samples: &[usize],
) -> (Vec<RunRecord>, Vec<(String, Vec<f64>)>) {
    let mut records = Vec::new();
    let mut extra = parameter_columns(design);
    for &s in samples {
        for r in 0..design.replicates {
            let label = run_label(s, r, design.replicates);
            let run = dir.join("runs").join(&label);
            if !is_complete(&run) {
                continue;
            }
            if let Ok(rec) = read_run(&run, name, &label, 0.0) {
                records.push(rec);
                for (k, col) in extra.iter_mut().enumerate() {
                    col.1.push(design.rows[s].1[k]);
                }
            }
        }
    }
    (records, extra)
}

/// One record per sample of `samples` with a complete run: each measure's mean over the
/// sample's replicates that define it (with one replicate, the run itself), and the sample's
/// parameter values as columns.
pub fn sample_points(
    dir: &Path,
    name: &str,
    design: &Manifest,
    samples: &[usize],
) -> (Vec<RunRecord>, Vec<(String, Vec<f64>)>) {
    let (runs, _) = sample_runs(dir, name, design, samples);
    let mut records = Vec::new();
    let mut extra = parameter_columns(design);
    for &s in samples {
        let prefix = run_label(s, 0, 1);
        let mine: Vec<&RunRecord> = runs
            .iter()
            .filter(|r| r.label == prefix || r.label.starts_with(&format!("{prefix}-")))
            .collect();
        let Some(first) = mine.first() else { continue };
        let values = (0..measures().len())
            .map(|m| estimate(mine.iter().filter_map(|r| r.values[m])).map(|e| e.mean))
            .collect();
        records.push(RunRecord {
            label: prefix,
            values,
            ..(*first).clone()
        });
        for (k, col) in extra.iter_mut().enumerate() {
            col.1.push(design.rows[s].1[k]);
        }
    }
    (records, extra)
}
