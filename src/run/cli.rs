//! Command-line types (clap) and how they resolve into a [`SimConfig`]. Errors are returned,
//! never printed here; `main` prints them as one line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::run::bench::Workload;
use crate::run::sweep::Param;
use crate::sim::config::{ConfigError, IndexKind, SimConfig};
use crate::sim::names;
use crate::sim::parallel::cores;

/// The environment variable every command reads, shown under `--help` and `bench --help`.
const ENVIRONMENT: &str = "Environment:\n  PANDEMIC_BOIDS_SIMD=baseline|avx2|avx512  force the neighbour scans' vector path \
     (unset or empty: the widest this CPU supports; sse2 = baseline); results are identical \
     on every path";

/// pandemic-boids: a pandemic spreading through flocking boid swarms.
///
/// Without a subcommand it opens the interactive window.
#[derive(Parser, Debug)]
#[command(
    name = "pandemic-boids",
    version,
    about,
    args_conflicts_with_subcommands = true,
    after_help = ENVIRONMENT
)]
pub struct Cli {
    /// What to do (default: open the window).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Scenario options for the window.
    #[command(flatten)]
    pub scenario: ScenarioArgs,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one scenario headless, as fast as possible, and write config.toml, metrics.csv,
    /// transmissions.csv, rt.csv, summary.json, sir.png and rt.png to --out (agents.csv with
    /// --agents-every, interventions.csv when the scenario has interventions, a GIF with
    /// --video).
    Run(RunArgs),
    /// Run every scenario × seed (in parallel), then write summary.csv, aggregate.csv and
    /// plots/ to --out. Re-running skips completed runs.
    Experiment(ExperimentArgs),
    /// Paired counterfactual: every seed under a base and a variant scenario (in parallel,
    /// resumable), then comparison.csv (paired differences with 95 % CIs) and plots/.
    Compare(CompareArgs),
    /// Latin-hypercube sweep over config keys; --shard I/K runs one slice (cluster arrays).
    Sweep(SweepArgs),
    /// Join the shard summaries of a sweep into one summary.csv.
    Merge(MergeArgs),
    /// Re-draw the plots of a run, experiment or sweep folder from its files.
    Plot(PlotArgs),
    /// Time simulation steps per phase for several sizes and neighbour-index backends (use a
    /// release build: cargo run --release -- bench).
    #[command(after_help = ENVIRONMENT)]
    Bench(BenchArgs),
}

/// Options every batch command (experiment, sweep) shares.
#[derive(Args, Debug, Clone)]
pub struct BatchArgs {
    /// Runs at a time (default: every core).
    #[arg(long, value_name = "J", allow_negative_numbers = true, value_parser = parse_jobs)]
    pub jobs: Option<u16>,
    /// Simulated seconds per run (overrides the scenarios' `duration`).
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub duration: Option<f64>,
    /// Override a config key in every run (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Output folder.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

impl BatchArgs {
    /// Runs at a time: `--jobs` or every core.
    pub fn jobs(&self) -> usize {
        self.jobs.map_or_else(cores, usize::from)
    }
}

/// `experiment`'s options.
#[derive(Args, Debug, Clone)]
pub struct ExperimentArgs {
    /// Scenario files or glob patterns (quote them), e.g. 'assets/scenarios/matrix/*.toml'.
    #[arg(long, value_name = "GLOB", num_args = 1.., required = true)]
    pub scenarios: Vec<String>,
    /// Seeds per scenario.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub seeds: u32,
    /// Base seed from which every run's seed is derived.
    #[arg(long = "seed", value_name = "N", default_value_t = 1)]
    pub base_seed: u64,
    /// Average the flocking measures in summary.csv and aggregate.csv over the samples from S
    /// simulated seconds on (default 0: the whole run).
    #[arg(long = "measure-from", value_name = "S", default_value_t = 0.0, value_parser = parse_seconds)]
    pub measure_from: f64,
    /// Jobs, duration, overrides, output.
    #[command(flatten)]
    pub batch: BatchArgs,
}

/// `compare`'s options.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// The base scenario file.
    #[arg(long, value_name = "FILE")]
    pub base: PathBuf,
    /// The variant scenario file (default: the base, changed by --variant-set).
    #[arg(long, value_name = "FILE")]
    pub variant: Option<PathBuf>,
    /// Change a key for the variant only, e.g. --variant-set epidemic.p_infect_normal=0.3
    /// (repeatable).
    #[arg(long = "variant-set", value_name = "KEY=VALUE")]
    pub variant_set: Vec<String>,
    /// Seeds: each runs under both (pairs of runs).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=100_000))]
    pub seeds: u32,
    /// Base seed from which every pair's seed is derived.
    #[arg(long = "seed", value_name = "N", default_value_t = 1)]
    pub base_seed: u64,
    /// Jobs, duration, overrides (both scenarios), output.
    #[command(flatten)]
    pub batch: BatchArgs,
}

/// `sweep`'s options.
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// Base scenario file.
    #[arg(long, value_name = "FILE")]
    pub base: PathBuf,
    /// A swept key and its range, KEY=LO..HI or KEY=LO..HI:log (repeatable).
    #[arg(long, value_name = "KEY=LO..HI[:log]", required = true, value_parser = parse_param_arg)]
    pub param: Vec<Param>,
    /// Number of samples (Latin hypercube).
    #[arg(long, value_name = "N")]
    pub samples: usize,
    /// Runs per sample, each with its own seed; the analysis uses each sample's mean, so
    /// run-to-run noise does not blur the rank correlations.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub replicates: u16,
    /// Seed of the design and of the runs.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Run only shard I of K (0 ≤ I < K), e.g. --shard $SLURM_ARRAY_TASK_ID/16.
    #[arg(long, value_name = "I/K", default_value = "0/1", value_parser = parse_shard_arg)]
    pub shard: (usize, usize),
    /// Jobs, duration, overrides, output (shared by all shards).
    #[command(flatten)]
    pub batch: BatchArgs,
}

/// `merge`'s options.
#[derive(Args, Debug, Clone)]
pub struct MergeArgs {
    /// Sweep output folders holding shard summaries (usually just one shared folder).
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where summary.csv goes (default: the first DIR).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `plot`'s options.
#[derive(Args, Debug, Clone)]
pub struct PlotArgs {
    /// A run, experiment or sweep output folder.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("`{s}` is not a time in seconds ≥ 0 (e.g. 60)")),
    }
}

/// Most threads, or runs at a time, the options take.
const MOST_AT_ONCE: u16 = 1024;

/// A count from 1 to [`MOST_AT_ONCE`], or a message that says what is wanted: `what` names it
/// (e.g. "a number of threads"), `example` is a value to suggest.
fn parse_count(s: &str, what: &str, example: u16) -> Result<u16, String> {
    match s.trim().parse::<u16>() {
        Ok(n) if (1..=MOST_AT_ONCE).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{s}` is not {what} from 1 to {MOST_AT_ONCE} (e.g. {example})"
        )),
    }
}

fn parse_threads(s: &str) -> Result<u16, String> {
    parse_count(s, "a number of threads", 2)
}

fn parse_jobs(s: &str) -> Result<u16, String> {
    parse_count(s, "a number of runs at a time", 2)
}

fn parse_param_arg(s: &str) -> Result<Param, String> {
    crate::run::sweep::parse_param(s)
}

fn parse_shard_arg(s: &str) -> Result<(usize, usize), String> {
    crate::run::sweep::parse_shard(s)
}

/// `bench`'s options.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Population sizes, comma-separated.
    #[arg(
        long,
        value_name = "N,N,...",
        value_delimiter = ',',
        default_value = "1000,10000,50000,100000"
    )]
    pub sizes: Vec<usize>,
    /// Backends to compare, comma-separated: kdtree, grid, brute.
    #[arg(long, value_name = "B,B,...", value_delimiter = ',', default_value = "kdtree,grid,brute", value_parser = parse_backend)]
    pub backends: Vec<IndexKind>,
    /// Timed steps per size and backend.
    #[arg(long, value_name = "N", default_value_t = 60)]
    pub steps: usize,
    /// Untimed steps before timing.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub warmup: usize,
    /// Threads that compute, the main one included, 1 to 1024 (default: every core this
    /// process may use; 1 = one thread).
    #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = parse_threads)]
    pub threads: Option<u16>,
    /// Brute force only up to this many boids (it is O(n²)).
    #[arg(long = "brute-max", value_name = "N", default_value_t = 20_000)]
    pub brute_max: usize,
    /// What to simulate: pandemic (every module: three swarms, predators, the epidemic) or
    /// flocking (one swarm, nothing else; the workload of general boids benchmarks).
    #[arg(long, value_name = "W", default_value = "pandemic", value_parser = parse_workload)]
    pub workload: Workload,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

fn parse_workload(s: &str) -> Result<Workload, String> {
    parse_name(s, "workload")
}

fn parse_backend(s: &str) -> Result<IndexKind, String> {
    parse_name(s, "backend")
}

/// One of an enum's names (`kdtree`, `grid`, `brute`), or what is allowed.
fn parse_name<T: bevy::reflect::Typed + bevy::reflect::FromReflect>(
    s: &str,
    what: &str,
) -> Result<T, String> {
    names::parse::<T>(s).ok_or_else(|| {
        format!(
            "unknown {what} `{}`; allowed: {}",
            s.trim(),
            names::one_of(names::names::<T>())
        )
    })
}

/// Which scenario, and changes to it.
#[derive(Args, Debug, Clone, Default)]
pub struct ScenarioArgs {
    /// Scenario TOML file, or a shipped scenario's name (`predators`, `matrix/B2_D2`) (default:
    /// assets/scenarios/default.toml for the window, the built-in defaults for `run`).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Seed of every random draw (overrides the scenario's).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Override one config key, e.g. --set swarms.normal.count=500 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// `run`'s options.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Scenario and overrides.
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Simulated seconds to run (overrides the scenario's `duration`).
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub duration: Option<f64>,
    /// Simulation step in seconds (overrides the scenario's `dt`).
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub dt: Option<f64>,
    /// Simulated seconds between CSV rows (overrides `sample_every`).
    #[arg(long = "sample-every", value_name = "S", allow_negative_numbers = true)]
    pub sample_every: Option<f64>,
    /// Simulated seconds between rows of every boid in agents.csv (overrides `agents_every`;
    /// 0 = none).
    #[arg(long = "agents-every", value_name = "S", allow_negative_numbers = true)]
    pub agents_every: Option<f64>,
    /// Output folder (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Continue the run a checkpoint was taken from, to its end (a .ckpt file, or a folder:
    /// its newest checkpoint). The checkpoint holds the scenario and seed (no --scenario or
    /// --seed); with --set, --duration, --dt, --sample-every or --agents-every it is a branch.
    /// Repeat the checkpoint options to keep writing checkpoints.
    #[arg(long, value_name = "FILE|DIR", conflicts_with_all = ["scenario", "seed"])]
    pub resume: Option<PathBuf>,
    /// Write a checkpoint every S simulated seconds into DIR/checkpoints/ (t-<time>.ckpt).
    #[arg(
        long = "checkpoint-every",
        value_name = "S",
        allow_negative_numbers = true
    )]
    pub checkpoint_every: Option<f64>,
    /// Keep only the newest K checkpoints (default: all).
    #[arg(long = "keep-checkpoints", value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub keep_checkpoints: Option<u32>,
    /// Write a checkpoint when the run is stopped (Ctrl-C, or SIGTERM from a scheduler); works
    /// with or without --checkpoint-every.
    #[arg(long = "checkpoint-on-exit")]
    pub checkpoint_on_exit: bool,
    /// Threads that compute, the main one included, 1 to 1024 (default: every core this
    /// process may use; 1 = one thread). Results do not depend on it; between the parallel
    /// parts of a step the others spin for up to 0.5 ms before they sleep.
    #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = parse_threads)]
    pub threads: Option<u16>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also write an animated GIF of the run, drawn from the simulation (frame-exact; needs no
    /// display or GPU).
    #[arg(long, value_name = "FILE.gif")]
    pub video: Option<PathBuf>,
    /// Also write every video frame as a numbered PNG (frame-00000.png, …) into DIR.
    #[arg(long, value_name = "DIR")]
    pub frames: Option<PathBuf>,
    /// Video frames per simulated second.
    #[arg(
        long = "video-fps",
        value_name = "F",
        default_value_t = 15.0,
        allow_negative_numbers = true
    )]
    pub video_fps: f64,
    /// Simulated time of the first video frame, s.
    #[arg(
        long = "video-from",
        value_name = "S",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    pub video_from: f64,
    /// Simulated time of the last video frame, s (default: the end of the run).
    #[arg(long = "video-to", value_name = "S", allow_negative_numbers = true)]
    pub video_to: Option<f64>,
    /// Video frame size in pixels.
    #[arg(long = "video-size", value_name = "WxH", default_value = "640x360", value_parser = parse_size)]
    pub video_size: (u32, u32),
    /// Video overlays, comma-separated.
    #[arg(long = "video-overlays", value_name = "LIST", value_delimiter = ',')]
    pub video_overlays: Vec<VideoOverlay>,
}

/// What a video can draw over the world.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum VideoOverlay {
    /// Every boid's contact radius (smaller while infected).
    Radii,
    /// The transmissions of the last 3 s, infector to infectee, fading.
    Transmissions,
}

/// Parses `WxH` (e.g. `640x360`).
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("`{s}` is not WIDTHxHEIGHT, e.g. 640x360");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let num = |v: &str| v.trim().parse::<u32>().map_err(|_| bad());
    Ok((num(w)?, num(h)?))
}

impl ScenarioArgs {
    /// Loads the scenario (or `default` when none is given), applies `--set`, then `--seed`.
    pub fn resolve(&self, default: Option<PathBuf>) -> Result<SimConfig, ConfigError> {
        let path = self.scenario.clone().or(default);
        let mut config = SimConfig::load(path.as_deref(), &self.set)?;
        if let Some(seed) = self.seed {
            config.seed = seed;
            config.validate("--seed")?;
        }
        Ok(config)
    }
}

impl RunArgs {
    /// The run's configuration: scenario, `--set`, `--seed`, then the timing flags.
    pub fn resolve(&self) -> Result<SimConfig, ConfigError> {
        let config = self.scenario.resolve(None)?;
        self.with_timing(config)
    }

    /// A resumed run's configuration: the checkpoint's (`text`, TOML), `--set`, then the timing
    /// flags; and what was changed (`KEY=VALUE`; empty unless the run is a branch).
    pub fn resolve_resumed(&self, text: &str) -> Result<(SimConfig, Vec<String>), ConfigError> {
        let config = SimConfig::from_toml_str(text, "checkpoint", &self.scenario.set)?;
        let config = self.with_timing(config)?;
        let mut changed = self.scenario.set.clone();
        let flags = [
            ("duration", self.duration),
            ("dt", self.dt),
            ("sample_every", self.sample_every),
            ("agents_every", self.agents_every),
        ];
        for (key, value) in flags {
            if let Some(v) = value {
                changed.push(format!("{key}={v}"));
            }
        }
        Ok((config, changed))
    }

    /// `config` with the timing flags applied.
    fn with_timing(&self, mut config: SimConfig) -> Result<SimConfig, ConfigError> {
        let mut flags = Vec::new();
        if let Some(d) = self.duration {
            config.duration = d;
            flags.push("--duration");
        }
        if let Some(dt) = self.dt {
            config.dt = dt;
            flags.push("--dt");
        }
        if let Some(s) = self.sample_every {
            config.sample_every = s;
            flags.push("--sample-every");
        }
        if let Some(s) = self.agents_every {
            config.agents_every = s;
            flags.push("--agents-every");
        }
        if !flags.is_empty() {
            config.validate(&flags.join("/"))?;
        }
        Ok(config)
    }
}
