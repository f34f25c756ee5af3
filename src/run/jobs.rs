//! Running many headless runs: a job is one run folder to produce; `execute` works through a
//! list of jobs a few at a time, skips folders that already hold that exact completed run, and
//! turns an error or a panic into a failed outcome for that job alone. `experiment` and `sweep`
//! plan jobs; this module runs them.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressStyle};

use super::headless::{RunOptions, run as run_one};
use super::results::is_complete;
use crate::sim::config::SimConfig;
use crate::sim::parallel::SideBySide;
use crate::sim::rng::mix64;

/// One run to do.
#[derive(Clone, Debug)]
pub struct Job {
    /// Scenario name.
    pub scenario: String,
    /// Run label within the scenario (its folder name).
    pub label: String,
    /// Resolved config (seed included).
    pub config: SimConfig,
    /// Output folder.
    pub dir: PathBuf,
}

/// How a job went.
#[derive(Clone, Debug, PartialEq)]
pub enum JobStatus {
    /// Ran to completion now.
    Ran,
    /// Already complete with this exact config: skipped.
    Skipped,
    /// Stopped early (Ctrl-C); its files are complete but partial.
    Stopped,
    /// Failed, with the reason.
    Failed(String),
}

/// The `k`-th seed derived from a base seed: well mixed, distinct for distinct `k`, and small
/// enough for a TOML integer.
pub fn derive_seed(base: u64, k: usize) -> u64 {
    mix64(base ^ mix64(k as u64 + 1)) >> 1
}

/// Job `seed-K` of a scenario: `config` with the `k`-th seed derived from `base_seed` and,
/// if given, `duration`, in `<out>/runs/<scenario>/seed-K`.
pub fn seed_job(
    scenario: &str,
    config: &SimConfig,
    base_seed: u64,
    k: usize,
    duration: Option<f64>,
    out: &std::path::Path,
) -> Result<Job, crate::sim::config::ConfigError> {
    let mut config = config.clone();
    config.seed = derive_seed(base_seed, k);
    if let Some(d) = duration {
        config.duration = d;
    }
    config.validate("--duration")?;
    Ok(Job {
        scenario: scenario.to_string(),
        label: format!("seed-{k}"),
        config,
        dir: out.join("runs").join(scenario).join(format!("seed-{k}")),
    })
}

/// Whether a job's folder already holds a complete run of exactly this config.
fn already_done(job: &Job) -> bool {
    is_complete(&job.dir)
        && std::fs::read_to_string(job.dir.join("config.toml"))
            .is_ok_and(|t| t == job.config.to_toml())
}

/// Runs jobs `jobs` at a time (side by side, see [`SideBySide`]); a panic or error fails only
/// its own job.
pub fn execute(
    list: &[Job],
    jobs: usize,
    progress: bool,
    stop: Option<Arc<AtomicBool>>,
) -> Vec<JobStatus> {
    let bar = if progress {
        let bar = ProgressBar::new(list.len() as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:40} {pos}/{len} runs  {msg}  [{elapsed_precise} < {eta_precise}]",
            )
            .expect("valid template"),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let next = AtomicUsize::new(0);
    let outcomes: Mutex<Vec<Option<JobStatus>>> = Mutex::new(vec![None; list.len()]);
    let stopped = || stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
    let at_once = jobs.clamp(1, list.len().max(1));
    let _side_by_side = (at_once > 1).then(SideBySide::begin);
    std::thread::scope(|scope| {
        for _ in 0..at_once {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = list.get(k) else { break };
                    let outcome = if stopped() {
                        JobStatus::Stopped
                    } else if already_done(job) {
                        JobStatus::Skipped
                    } else {
                        let opts = RunOptions {
                            stop: stop.clone(),
                            ..RunOptions::new(job.config.clone(), job.dir.clone())
                        };
                        match catch_unwind(AssertUnwindSafe(|| run_one(opts))) {
                            Ok(Ok(r)) if r.completed => JobStatus::Ran,
                            Ok(Ok(_)) => JobStatus::Stopped,
                            Ok(Err(e)) => JobStatus::Failed(e.to_string()),
                            Err(panic) => JobStatus::Failed(format!(
                                "the run panicked: {}",
                                panic
                                    .downcast_ref::<String>()
                                    .map(String::as_str)
                                    .or_else(|| panic.downcast_ref::<&str>().copied())
                                    .unwrap_or("unknown reason")
                            )),
                        }
                    };
                    if let JobStatus::Failed(e) = &outcome {
                        bar.suspend(|| eprintln!("run {} failed: {e}", job.dir.display()));
                    }
                    bar.inc(1);
                    bar.set_message(format!("{} {}", job.scenario, job.label));
                    outcomes.lock().expect("no poisoned lock")[k] = Some(outcome);
                }
            });
        }
    });
    bar.finish_and_clear();
    outcomes
        .into_inner()
        .expect("no poisoned lock")
        .into_iter()
        .map(|o| o.unwrap_or(JobStatus::Stopped))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_seeds_differ_and_fit_toml() {
        let seeds: Vec<u64> = (0..10_000).map(|k| derive_seed(42, k)).collect();
        let mut sorted = seeds.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), seeds.len());
        assert!(seeds.iter().all(|&s| s <= i64::MAX as u64));
        assert_ne!(derive_seed(1, 0), derive_seed(2, 0));
    }
}

/// How a batch of jobs went, counted.
#[derive(Debug, Default, Clone)]
pub struct Runs {
    /// Runs done now.
    pub ran: usize,
    /// Runs skipped (already complete).
    pub skipped: usize,
    /// Runs stopped early.
    pub stopped: usize,
    /// Failed runs: folder and reason.
    pub failed: Vec<(PathBuf, String)>,
}

impl Runs {
    /// Counts each job's status.
    pub fn of(jobs: &[Job], statuses: &[JobStatus]) -> Self {
        let mut runs = Runs::default();
        for (job, status) in jobs.iter().zip(statuses) {
            match status {
                JobStatus::Ran => runs.ran += 1,
                JobStatus::Skipped => runs.skipped += 1,
                JobStatus::Stopped => runs.stopped += 1,
                JobStatus::Failed(e) => runs.failed.push((job.dir.clone(), e.clone())),
            }
        }
        runs
    }

    /// The line a command prints when it is done, and one line per failed run.
    pub fn summary(&self, out: &std::path::Path) -> String {
        let mut text = format!(
            "{} runs done, {} skipped (already complete), {} stopped, {} failed; wrote {}",
            self.ran,
            self.skipped,
            self.stopped,
            self.failed.len(),
            out.display()
        );
        for (dir, why) in &self.failed {
            text.push_str(&format!("\nfailed: {}: {why}", dir.display()));
        }
        text
    }
}
