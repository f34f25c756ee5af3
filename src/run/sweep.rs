//! The `sweep` and `merge` commands: Latin-hypercube sampling over named config keys, written
//! once to `manifest.csv`; `--shard I/K` runs the samples with `sample % K == I`, so a cluster
//! job array shares the work (each shard writes `summary-shard-I-of-K.csv`); `merge` joins the
//! shard summaries into one `summary.csv` and checks that no sample is missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, anyhow, bail};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::jobs::{Job, JobStatus, derive_seed, execute};
use super::plots::{plot_sweep, prcc_heatmap, tornado};
use super::results::{RunRecord, is_complete, read_run, write_summary_csv};
use super::sensitivity;
use crate::sim::config::keys::{self, Kind};
use crate::sim::config::{SimConfig, Value};
use crate::sim::rng::mix64;

/// One swept key and its range.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Dotted config key.
    pub key: String,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Sample uniformly in log space.
    pub log: bool,
}

/// Parses `KEY=LO..HI` or `KEY=LO..HI:log`.
pub fn parse_param(s: &str) -> Result<Param, String> {
    let bad = || {
        format!(
            "--param `{s}`: expected KEY=LO..HI or KEY=LO..HI:log, e.g. epidemic.p_infect_normal=0.1..0.9"
        )
    };
    let (key, range) = s.split_once('=').ok_or_else(bad)?;
    let (range, log) = match range.strip_suffix(":log") {
        Some(r) => (r, true),
        None => (range, false),
    };
    let (lo, hi) = range.split_once("..").ok_or_else(bad)?;
    let lo: f64 = lo.trim().parse().map_err(|_| bad())?;
    let hi: f64 = hi.trim().parse().map_err(|_| bad())?;
    if key.trim().is_empty() || !lo.is_finite() || !hi.is_finite() || lo > hi {
        return Err(format!("--param `{s}`: need a key and finite LO ≤ HI"));
    }
    if log && lo <= 0.0 {
        return Err(format!("--param `{s}`: a :log range needs LO > 0"));
    }
    Ok(Param {
        key: key.trim().to_string(),
        lo,
        hi,
        log,
    })
}

impl Param {
    /// Maps a unit value in [0, 1) into the range.
    pub fn at(&self, u: f64) -> f64 {
        if self.log {
            (self.lo.ln() + u * (self.hi.ln() - self.lo.ln())).exp()
        } else {
            self.lo + u * (self.hi - self.lo)
        }
    }
}

/// A Latin hypercube: `samples` points in [0, 1)^`dims`; along every dimension each of the
/// `samples` equal strata holds exactly one point.
pub fn latin_hypercube(samples: usize, dims: usize, seed: u64) -> Vec<Vec<f64>> {
    let columns: Vec<Vec<f64>> = (0..dims)
        .map(|d| {
            let mut rng = Pcg64::seed_from_u64(mix64(seed ^ mix64(d as u64 + 0x5eed)));
            let mut strata: Vec<usize> = (0..samples).collect();
            strata.shuffle(&mut rng);
            strata
                .into_iter()
                .map(|stratum| (stratum as f64 + rng.random::<f64>()) / samples as f64)
                .collect()
        })
        .collect();
    (0..samples)
        .map(|s| columns.iter().map(|c| c[s]).collect())
        .collect()
}

/// The samples a shard `index/count` runs.
pub fn shard_samples(samples: usize, index: usize, count: usize) -> Vec<usize> {
    (0..samples).filter(|s| s % count == index).collect()
}

/// Parses `I/K` (0 ≤ I < K).
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || {
        format!(
            "--shard `{s}`: expected I/K with 0 ≤ I < K, e.g. --shard 0/8 (Slurm: $SLURM_ARRAY_TASK_ID/8)"
        )
    };
    let (i, k) = s.split_once('/').ok_or_else(bad)?;
    let (i, k): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        k.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || i >= k {
        return Err(bad());
    }
    Ok((i, k))
}

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
    /// Outcomes, per sample of the shard.
    pub outcomes: Vec<(usize, JobStatus)>,
    /// The shard's summary file.
    pub summary: PathBuf,
}

fn manifest_text(params: &[Param], values: &[Vec<f64>], seeds: &[u64]) -> String {
    let mut out = String::from("sample,seed");
    for p in params {
        out.push(',');
        out.push_str(&p.key);
    }
    out.push('\n');
    for (s, row) in values.iter().enumerate() {
        out.push_str(&format!("{s},{}", seeds[s]));
        for v in row {
            out.push_str(&format!(",{v}"));
        }
        out.push('\n');
    }
    out
}

/// Reads `manifest.csv`: parameter keys and, per sample, its seed and values.
pub fn read_manifest(dir: &Path) -> Result<(Vec<String>, Vec<(u64, Vec<f64>)>)> {
    let path = dir.join("manifest.csv");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .split(',')
        .map(String::from)
        .collect();
    if header.len() < 2 || header[0] != "sample" || header[1] != "seed" {
        bail!("{} is not a sweep manifest", path.display());
    }
    let rows = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            let seed = cells
                .get(1)
                .and_then(|c| c.parse().ok())
                .ok_or_else(|| anyhow!("bad row in {}", path.display()))?;
            let values = cells[2..]
                .iter()
                .map(|c| c.parse().unwrap_or(f64::NAN))
                .collect();
            Ok((seed, values))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((header[2..].to_vec(), rows))
}

/// The value of `key` a run uses when the design asks for `v`: whole-number keys rounded,
/// `f32` keys at `f32` precision.
fn value_for(key: &str, v: f64) -> Value {
    match keys::find(key).map(|k| k.kind) {
        Some(Kind::Int) => Value::Int(v.round() as i64),
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

fn base_name(base: &Path) -> String {
    base.file_stem()
        .map_or("base".into(), |s| s.to_string_lossy().into_owned())
}

/// Runs one shard of a sweep.
pub fn run(opts: &SweepOptions) -> Result<SweepReport> {
    if opts.samples == 0 {
        bail!("--samples must be at least 1");
    }
    let base = SimConfig::load(Some(&opts.base), &opts.sets)?;
    // Check every key before running anything.
    for p in &opts.params {
        base.with_edit(&p.key, value_for(&p.key, p.lo), "--param")
            .map_err(|e| anyhow!("{e}"))?;
    }
    std::fs::create_dir_all(&opts.out).map_err(|e| {
        anyhow!(
            "cannot write to output folder `{}`: {e} (choose a folder you can write to with --out)",
            opts.out.display()
        )
    })?;
    let unit = latin_hypercube(opts.samples, opts.params.len(), opts.seed);
    // The design in the values the runs use (whole numbers rounded, f32 keys at f32
    // precision), so the manifest, the summaries and the rank correlations see what was run.
    let values: Vec<Vec<f64>> = unit
        .iter()
        .map(|row| {
            row.iter()
                .zip(&opts.params)
                .map(|(u, p)| {
                    let text = as_run(&base, &p.key, p.at(*u));
                    text.parse().unwrap_or(f64::NAN)
                })
                .collect()
        })
        .collect();
    let seeds: Vec<u64> = (0..opts.samples)
        .map(|s| derive_seed(opts.seed, s))
        .collect();
    let manifest = manifest_text(&opts.params, &values, &seeds);
    let path = opts.out.join("manifest.csv");
    match std::fs::read_to_string(&path) {
        Ok(existing) if existing != manifest => bail!(
            "{} was made with other --param/--samples/--seed values; use a new --out folder for a different sweep",
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
    let keys: Vec<String> = opts.params.iter().map(|p| p.key.clone()).collect();
    let name = base_name(&opts.base);
    let mine = shard_samples(opts.samples, opts.shard.0, opts.shard.1);
    let mut jobs = Vec::new();
    let mut outcomes = Vec::new();
    for &s in &mine {
        match sample_config(&base, &keys, &values[s], seeds[s], opts.duration) {
            Ok(config) => jobs.push((
                s,
                Job {
                    scenario: name.clone(),
                    label: format!("sample-{s:05}"),
                    config,
                    dir: opts.out.join("runs").join(format!("sample-{s:05}")),
                },
            )),
            Err(e) => outcomes.push((s, JobStatus::Failed(e))),
        }
    }
    let list: Vec<Job> = jobs.iter().map(|(_, j)| j.clone()).collect();
    for (k, o) in execute(&list, opts.jobs, opts.progress, opts.stop.clone())
        .into_iter()
        .enumerate()
    {
        outcomes.push((jobs[k].0, o));
    }
    outcomes.sort_by_key(|o| o.0);
    let summary = opts.out.join(format!(
        "summary-shard-{}-of-{}.csv",
        opts.shard.0, opts.shard.1
    ));
    write_shard_summary(&summary, &opts.out, &name, &keys, &values, &mine)?;
    Ok(SweepReport {
        shard_samples: mine.len(),
        outcomes,
        summary,
    })
}

/// The records of the complete samples among `samples`, with their parameter columns.
fn sample_records(
    dir: &Path,
    name: &str,
    keys: &[String],
    values: &[Vec<f64>],
    samples: &[usize],
) -> (Vec<RunRecord>, Vec<(String, Vec<f64>)>) {
    let mut records = Vec::new();
    let mut extra: Vec<(String, Vec<f64>)> = keys.iter().map(|k| (k.clone(), Vec::new())).collect();
    for &s in samples {
        let run = dir.join("runs").join(format!("sample-{s:05}"));
        if !is_complete(&run) {
            continue;
        }
        if let Ok(rec) = read_run(&run, name, &format!("sample-{s:05}"), 0.0) {
            records.push(rec);
            for (k, col) in extra.iter_mut().enumerate() {
                col.1.push(values[s][k]);
            }
        }
    }
    (records, extra)
}

fn write_shard_summary(
    path: &Path,
    dir: &Path,
    name: &str,
    keys: &[String],
    values: &[Vec<f64>],
    samples: &[usize],
) -> Result<()> {
    let (records, extra) = sample_records(dir, name, keys, values, samples);
    write_summary_csv(path, &records, &extra)
}

/// Joins the shard summaries found in `dirs` into `out/summary.csv` (rows ordered by sample)
/// and re-draws the sweep plots. Fails if the manifests differ or a sample is missing.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<(PathBuf, usize)> {
    let first = dirs
        .first()
        .ok_or_else(|| anyhow!("merge needs at least one folder"))?;
    let manifest = std::fs::read_to_string(first.join("manifest.csv")).with_context(|| {
        format!(
            "`{}` has no manifest.csv; give the --out folder(s) of a sweep",
            first.display()
        )
    })?;
    let mut rows: BTreeMap<usize, String> = BTreeMap::new();
    let mut header: Option<String> = None;
    for dir in dirs {
        let m = std::fs::read_to_string(dir.join("manifest.csv"))
            .with_context(|| format!("`{}` has no manifest.csv", dir.display()))?;
        if m != manifest {
            bail!(
                "`{}` belongs to a different sweep (its manifest.csv differs)",
                dir.display()
            );
        }
        let mut shards: Vec<PathBuf> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("summary-shard-"))
            })
            .collect();
        shards.sort();
        for shard in shards {
            let text = std::fs::read_to_string(&shard)?;
            let mut lines = text.lines();
            let h = lines.next().unwrap_or_default().to_string();
            if header.get_or_insert_with(|| h.clone()) != &h {
                bail!(
                    "{} has different columns from the other shards",
                    shard.display()
                );
            }
            for line in lines.filter(|l| !l.is_empty()) {
                let sample: usize = line
                    .split(',')
                    .nth(1)
                    .and_then(|label| label.strip_prefix("sample-"))
                    .and_then(|k| k.parse().ok())
                    .ok_or_else(|| anyhow!("bad row in {}", shard.display()))?;
                rows.insert(sample, line.to_string());
            }
        }
    }
    let total = manifest.lines().count().saturating_sub(1);
    let missing: Vec<usize> = (0..total).filter(|s| !rows.contains_key(s)).collect();
    if !missing.is_empty() {
        let list: Vec<String> = missing.iter().take(10).map(|s| s.to_string()).collect();
        bail!(
            "{} of {total} samples have no completed run yet (e.g. {}); run the missing shards, then merge again",
            missing.len(),
            list.join(", ")
        );
    }
    std::fs::create_dir_all(out)?;
    let mut text = header.unwrap_or_default();
    text.push('\n');
    for line in rows.values() {
        text.push_str(line);
        text.push('\n');
    }
    let path = out.join("summary.csv");
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    if out.join("manifest.csv").is_file() || out == first.as_path() {
        let _ = redraw(first);
    }
    Ok((path, total))
}

/// Re-draws a sweep's plots (each measure against each parameter) from its run folders.
pub fn redraw(dir: &Path) -> Result<Vec<PathBuf>> {
    let (keys, rows) = read_manifest(dir)?;
    let values: Vec<Vec<f64>> = rows.iter().map(|r| r.1.clone()).collect();
    let all: Vec<usize> = (0..rows.len()).collect();
    let (records, extra) = sample_records(dir, "sweep", &keys, &values, &all);
    if records.is_empty() {
        bail!(
            "`{}` holds no completed sweep samples to plot",
            dir.display()
        );
    }
    let mut written = plot_sweep(
        &dir.join("plots"),
        &extra,
        &records,
        &["peak_fraction", "attack_rate", "eradication_time_s", "r0"],
    )?;
    written.extend(analyse(dir, &dir.join("plots"), &extra, &records)?);
    Ok(written)
}

/// With two or more parameters: `sensitivity.csv` in `out` and, in `plots`, a tornado plot
/// per output and the PRCC heatmap (docs in `sensitivity`).
pub fn analyse(
    out: &Path,
    plots: &Path,
    params: &[(String, Vec<f64>)],
    records: &[RunRecord],
) -> Result<Vec<PathBuf>> {
    if params.len() < 2 {
        return Ok(Vec::new());
    }
    let t = sensitivity::table(params, records);
    let path = out.join("sensitivity.csv");
    sensitivity::write_csv(&path, &t)?;
    let mut written = vec![path];
    std::fs::create_dir_all(plots)?;
    for (output, rows) in &t {
        let bars: Vec<(String, f64, Option<f64>)> = rows
            .iter()
            .filter_map(|(p, c, _)| c.map(|c| (p.clone(), c.r, c.p)))
            .collect();
        let path = plots.join(format!("tornado_{output}.png"));
        tornado(&path, output, &bars)?;
        written.push(path);
    }
    let path = plots.join("prcc_heatmap.png");
    prcc_heatmap(&path, &t)?;
    written.push(path);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_parse_and_map() {
        let p = parse_param("epidemic.p_infect_normal=0.1..0.9").unwrap();
        assert_eq!(
            (p.key.as_str(), p.lo, p.hi, p.log),
            ("epidemic.p_infect_normal", 0.1, 0.9, false)
        );
        assert!((p.at(0.5) - 0.5).abs() < 1e-12);
        let q = parse_param("swarms.normal.noise=1..100:log").unwrap();
        assert!((q.at(0.5) - 10.0).abs() < 1e-9);
        for bad in ["x", "k=1", "k=2..1", "k=0..5:log", "=1..2", "k=a..b"] {
            assert!(parse_param(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn latin_hypercube_fills_every_stratum_once() {
        for (n, d) in [(1, 1), (10, 3), (97, 2)] {
            let pts = latin_hypercube(n, d, 5);
            assert_eq!(pts.len(), n);
            for dim in 0..d {
                let mut strata: Vec<usize> = pts
                    .iter()
                    .map(|p| (p[dim] * n as f64).floor() as usize)
                    .collect();
                assert!(pts.iter().all(|p| (0.0..1.0).contains(&p[dim])));
                strata.sort_unstable();
                assert_eq!(strata, (0..n).collect::<Vec<_>>(), "n={n} dim={dim}");
            }
        }
        assert_eq!(latin_hypercube(10, 2, 5), latin_hypercube(10, 2, 5));
        assert_ne!(latin_hypercube(10, 2, 5), latin_hypercube(10, 2, 6));
    }

    #[test]
    fn shards_partition_the_samples_exactly() {
        for (n, k) in [(10, 3), (7, 7), (5, 8), (100, 1)] {
            let mut all: Vec<usize> = (0..k).flat_map(|i| shard_samples(n, i, k)).collect();
            all.sort_unstable();
            assert_eq!(all, (0..n).collect::<Vec<_>>());
        }
        assert_eq!(parse_shard("2/8"), Ok((2, 8)));
        assert!(parse_shard("8/8").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("x").is_err());
    }

    #[test]
    fn integer_keys_are_rounded() {
        let base = SimConfig::default();
        let c = sample_config(&base, &["swarms.normal.count".into()], &[123.6], 9, None).unwrap();
        assert_eq!(c.swarms.normal.count, 124);
        assert_eq!(c.seed, 9);
        let c = sample_config(&base, &["epidemic.p_cure".into()], &[0.25], 1, Some(10.0)).unwrap();
        assert_eq!((c.epidemic.p_cure, c.duration), (0.25, 10.0));
        assert!(
            sample_config(
                &base,
                &["swarms.normal.min_speed".into()],
                &[900.0],
                1,
                None
            )
            .is_err()
        );
    }
}
