//! The `experiment` command: every scenario × seed, each written as its own run folder exactly
//! like `run`, up to `--jobs` at a time (the job runner of `jobs`); a failing run is reported
//! and the rest go on; completed runs are skipped when the command is repeated. Then
//! `summary.csv`, `aggregate.csv` and the plots.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, anyhow, bail};

use super::jobs::{Job, Runs, execute, seed_job};
use super::plots::{plot_experiment, plot_run};
use super::results::{
    RunRecord, Series, is_complete, read_run, write_aggregate_csv, write_summary_csv,
};
use crate::sim::config::SimConfig;

/// Expands glob patterns (and plain paths) into a sorted list of scenario files.
pub fn expand_scenarios(patterns: &[String]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in patterns {
        let matches: Vec<PathBuf> = glob::glob(p)
            .map_err(|e| anyhow!("--scenarios `{p}`: not a valid pattern ({e})"))?
            .filter_map(|m| m.ok())
            .filter(|m| m.is_file())
            .collect();
        if matches.is_empty() {
            bail!(
                "--scenarios `{p}` matches no file (quote the pattern, e.g. 'assets/scenarios/matrix/*.toml')"
            );
        }
        out.extend(matches);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Options of an experiment.
pub struct ExperimentOptions {
    /// Scenario files.
    pub scenarios: Vec<PathBuf>,
    /// Seeds per scenario.
    pub seeds: usize,
    /// Base seed the run seeds derive from.
    pub base_seed: u64,
    /// Runs at a time.
    pub jobs: usize,
    /// Overrides every scenario's duration.
    pub duration: Option<f64>,
    /// Flocking measures in the tables average the samples from this many simulated seconds
    /// on (0: the whole run), so a settled state can be told from the transient.
    pub measure_from: f64,
    /// `--set` overrides applied to every scenario.
    pub sets: Vec<String>,
    /// Output folder.
    pub out: PathBuf,
    /// Progress bar.
    pub progress: bool,
    /// Ctrl-C.
    pub stop: Option<Arc<AtomicBool>>,
}

/// What an experiment did.
#[derive(Debug, Default)]
pub struct Report {
    /// How its runs went.
    pub runs: Runs,
    /// Files written besides the run folders.
    pub written: Vec<PathBuf>,
}

/// Plans every scenario × seed.
pub fn plan(opts: &ExperimentOptions) -> Result<Vec<Job>> {
    let mut names = std::collections::BTreeSet::new();
    let mut jobs = Vec::new();
    for path in &opts.scenarios {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .ok_or_else(|| anyhow!("`{}` has no file name", path.display()))?;
        if !names.insert(name.clone()) {
            bail!("two scenarios are named `{name}`; give each scenario file a distinct name");
        }
        let base = SimConfig::load(Some(path), &opts.sets)?;
        for k in 0..opts.seeds {
            jobs.push(seed_job(
                &name,
                &base,
                opts.base_seed,
                k,
                opts.duration,
                &opts.out,
            )?);
        }
    }
    Ok(jobs)
}

/// Runs an experiment and writes its tables and plots.
pub fn run(opts: &ExperimentOptions) -> Result<Report> {
    let jobs = plan(opts)?;
    crate::run::output::create_folder(&opts.out)?;
    let outcomes = execute(&jobs, opts.jobs, opts.progress, opts.stop.clone());
    Ok(Report {
        runs: Runs::of(&jobs, &outcomes),
        written: write_tables_and_plots(&opts.out, &jobs, opts.measure_from)?,
    })
}

/// Reads every complete run among `jobs` (in order); flocking measures over the samples from
/// `measure_from` s on.
fn completed_records(jobs: &[Job], measure_from: f64) -> Vec<(RunRecord, Series)> {
    jobs.iter()
        .filter(|j| is_complete(&j.dir))
        .filter_map(|j| {
            let rec = read_run(&j.dir, &j.scenario, &j.label, measure_from).ok()?;
            let series = Series::read(&j.dir.join("metrics.csv")).ok()?;
            Some((rec, series))
        })
        .collect()
}

/// `summary.csv`, `aggregate.csv`, `plots/` (grid, overlay, heatmaps) and `plots/runs/`.
fn write_tables_and_plots(out: &Path, jobs: &[Job], measure_from: f64) -> Result<Vec<PathBuf>> {
    let done = completed_records(jobs, measure_from);
    let records: Vec<RunRecord> = done.iter().map(|(r, _)| r.clone()).collect();
    let mut written = vec![out.join("summary.csv"), out.join("aggregate.csv")];
    write_summary_csv(&written[0], &records, &[])?;
    write_aggregate_csv(&written[1], &records)?;
    written.extend(draw(out, done)?);
    Ok(written)
}

fn draw(out: &Path, done: Vec<(RunRecord, Series)>) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    if done.is_empty() {
        return Ok(written);
    }
    let runs_dir = out.join("plots").join("runs");
    std::fs::create_dir_all(&runs_dir)
        .with_context(|| format!("cannot create {}", runs_dir.display()))?;
    for (rec, series) in &done {
        let path = runs_dir.join(format!("{}_{}.png", rec.scenario, rec.label));
        plot_run(
            series,
            &format!("{} {} (seed {})", rec.scenario, rec.label, rec.seed),
            &path,
        )?;
        written.push(path);
    }
    let mut groups: Vec<(String, Vec<(RunRecord, Series)>)> = Vec::new();
    for (rec, series) in done {
        match groups.iter_mut().find(|(n, _)| *n == rec.scenario) {
            Some((_, v)) => v.push((rec, series)),
            None => groups.push((rec.scenario.clone(), vec![(rec, series)])),
        }
    }
    written.extend(plot_experiment(&out.join("plots"), &groups)?);
    Ok(written)
}

/// Re-draws the plots of an experiment folder (`runs/<scenario>/<run>/`) from its files.
pub fn redraw(dir: &Path) -> Result<Vec<PathBuf>> {
    let runs = dir.join("runs");
    let scenarios = std::fs::read_dir(&runs).with_context(|| {
        format!("`{}` holds no metrics.csv, manifest.csv or runs/ folder; give a run, experiment or sweep folder", dir.display())
    })?;
    let mut done = Vec::new();
    let mut scenario_dirs: Vec<PathBuf> = scenarios
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    scenario_dirs.sort();
    for sdir in scenario_dirs {
        let scenario = sdir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut run_dirs: Vec<PathBuf> = std::fs::read_dir(&sdir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| is_complete(p))
            .collect();
        run_dirs.sort_by_key(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            name.rsplit('-')
                .next()
                .and_then(|k| k.parse::<usize>().ok())
                .unwrap_or(usize::MAX)
        });
        for rdir in run_dirs {
            let label = rdir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let rec = read_run(&rdir, &scenario, &label, 0.0)?;
            let series = Series::read(&rdir.join("metrics.csv"))?;
            done.push((rec, series));
        }
    }
    if done.is_empty() {
        bail!("`{}` holds no completed runs to plot", dir.display());
    }
    draw(dir, done)
}
