//! The whole command-line tool — every subcommand and the window — as a library function, so a
//! user's own binary is the tool plus their systems: [`main_with`] registers their plugin (and
//! their config sections, `sim::extensions`) for every simulation and the app this process
//! builds, then parses the command line and opens the window or runs headless, exactly as
//! `pandemic-boids` does ([`main`]). Every error is printed as one line; usage and config errors
//! exit with 2, others with 1.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;
use clap::error::ErrorKind;

use crate::run::bench::{BenchOptions, write_json};
use crate::run::checkpoints::{self, CheckpointOptions};
use crate::run::cli::{
    BenchArgs, Cli, Command, CompareArgs, ExperimentArgs, MergeArgs, PlotArgs, RunArgs, SweepArgs,
    VideoOverlay,
};
use crate::run::compare::CompareOptions;
use crate::run::experiment::{ExperimentOptions, expand_scenarios};
use crate::run::headless::{self, Resume, RunOptions, StepObserver};
use crate::run::jobs::JobStatus;
use crate::run::sweep::SweepOptions;
use crate::sim::checkpoint::Parent;
use crate::sim::config::{ConfigError, SimConfig, default_scenario};
use crate::view;
use crate::view::video::{Recorder, VideoOptions};

/// Exit code for bad usage or configuration.
const USAGE: u8 = 2;
/// Exit code after Ctrl-C (128 + SIGINT), files complete.
const INTERRUPTED: u8 = 130;

/// The `pandemic-boids` program.
pub fn main() -> ExitCode {
    run_cli()
}

/// The `pandemic-boids` program plus `extend` (e.g. `|app| { app.add_plugins(my_rule); }`),
/// applied to every simulation — `run`, `experiment`, `sweep`, `compare`, `bench` — and to the
/// window. A config section of the extension is declared with
/// [`sim::extensions::add_section`](crate::sim::extensions::add_section) before calling this.
pub fn main_with(extend: impl Fn(&mut bevy::prelude::App) + Send + Sync + 'static) -> ExitCode {
    crate::sim::extensions::add_plugin(extend);
    run_cli()
}

fn run_cli() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            eprintln!("{}", one_line_usage_error(&e.render().to_string()));
            return ExitCode::from(USAGE);
        }
    };
    // A forced vector path this CPU lacks (or a misspelt one) stops here, not mid-run.
    if let Err(e) = crate::sim::lanes::Path::from_env() {
        return fail(USAGE, e);
    }
    match cli.command {
        None => match cli.scenario.resolve(default_scenario()) {
            Ok(config) => {
                let name = cli
                    .scenario
                    .scenario
                    .as_deref()
                    .map_or("default".into(), view::control::scenario_name);
                crate::run_app(config, &name);
                ExitCode::SUCCESS
            }
            Err(e) => fail(USAGE, e),
        },
        Some(Command::Run(args)) => run(args),
        Some(Command::Bench(args)) => bench(args),
        Some(Command::Experiment(args)) => experiment(args),
        Some(Command::Compare(args)) => compare(args),
        Some(Command::Sweep(args)) => sweep(args),
        Some(Command::Merge(args)) => merge(args),
        Some(Command::Plot(args)) => plot(args),
    }
}

/// clap's error as one line: its first paragraph (what is wrong; it may wrap onto indented
/// lines), its tip if it has one ("a similar argument exists: '--duration'"), and for options
/// given before the subcommand, the order that works.
fn one_line_usage_error(text: &str) -> String {
    let first: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    let mut line = first.join(" ");
    if let Some(tip) = text.lines().map(str::trim).find(|l| l.starts_with("tip:")) {
        line = format!("{line}; {tip}");
    }
    if line.contains("'--resume") && line.contains("cannot be used with") {
        line = format!("{line}; a checkpoint holds its scenario and seed (see run --help)");
    }
    if line.contains("subcommand") && line.contains("cannot be used with") {
        line = format!(
            "{line}; options go after the subcommand, e.g. pandemic-boids run --scenario FILE \
             --out DIR"
        );
    }
    let program = std::env::args()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "pandemic-boids".into());
    format!("{line} (see {program} --help)")
}

/// The exit code of a batch command: 130 after Ctrl-C, 1 when a run failed.
fn runs_exit(runs: &crate::run::jobs::Runs) -> ExitCode {
    if runs.stopped > 0 {
        ExitCode::from(INTERRUPTED)
    } else if runs.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Exit code for a batch command's error: 2 for configuration problems, 1 otherwise.
fn batch_error(e: anyhow::Error) -> ExitCode {
    let code = if e.downcast_ref::<ConfigError>().is_some() {
        USAGE
    } else {
        1
    };
    fail(code, e)
}

fn experiment(args: ExperimentArgs) -> ExitCode {
    let scenarios = match expand_scenarios(&args.scenarios) {
        Ok(s) => s,
        Err(e) => return fail(USAGE, e),
    };
    let b = &args.batch;
    let opts = ExperimentOptions {
        scenarios,
        seeds: args.seeds as usize,
        base_seed: args.base_seed,
        jobs: b.jobs(),
        duration: b.duration,
        measure_from: args.measure_from,
        sets: b.set.clone(),
        out: b.out.clone(),
        progress: !b.quiet,
        stop: Some(stop_flag()),
    };
    let report = match crate::run::experiment::run(&opts) {
        Ok(r) => r,
        Err(e) => return batch_error(e),
    };
    eprintln!("{}", report.runs.summary(&b.out));
    runs_exit(&report.runs)
}

fn compare(args: CompareArgs) -> ExitCode {
    if args.variant.is_none() && args.variant_set.is_empty() {
        return fail(
            USAGE,
            anyhow::anyhow!(crate::run::compare::NOTHING_TO_COMPARE),
        );
    }
    let b = &args.batch;
    let opts = CompareOptions {
        base: args.base.clone(),
        variant: args.variant.clone(),
        variant_sets: args.variant_set.clone(),
        seeds: args.seeds as usize,
        base_seed: args.base_seed,
        jobs: b.jobs(),
        duration: b.duration,
        sets: b.set.clone(),
        out: b.out.clone(),
        progress: !b.quiet,
        stop: Some(stop_flag()),
    };
    match crate::run::compare::describe(&opts) {
        Ok(d) => eprintln!("the variant differs from the base in: {d}"),
        Err(e) => return batch_error(e),
    }
    let report = match crate::run::compare::run(&opts) {
        Ok(r) => r,
        Err(e) => return batch_error(e),
    };
    eprintln!("{}", report.runs.summary(&b.out));
    println!(
        "{:<20} {:>6} {:>10} {:>10} {:>26} {:>26} {:>9}",
        "measure",
        "pairs",
        "base",
        "variant",
        "variant − base [95 % CI]",
        "unpaired 95 % CI",
        "var. red."
    );
    for r in &report.rows {
        println!(
            "{:<20} {:>6} {:>10.4} {:>10.4} {:>26} {:>26} {:>9.1}",
            r.measure,
            r.pairs,
            r.base.mean,
            r.variant.mean,
            format!(
                "{:.4} [{:.4}, {:.4}]",
                r.paired.mean, r.paired.ci_low, r.paired.ci_high
            ),
            format!("[{:.4}, {:.4}]", r.unpaired.0, r.unpaired.1),
            r.variance_reduction
        );
    }
    runs_exit(&report.runs)
}

fn sweep(args: SweepArgs) -> ExitCode {
    let b = &args.batch;
    let opts = SweepOptions {
        base: args.base.clone(),
        sets: b.set.clone(),
        params: args.param.clone(),
        samples: args.samples,
        replicates: args.replicates as usize,
        seed: args.seed,
        shard: args.shard,
        jobs: b.jobs(),
        duration: b.duration,
        out: b.out.clone(),
        progress: !b.quiet,
        stop: Some(stop_flag()),
    };
    let report = match crate::run::sweep::run(&opts) {
        Ok(r) => r,
        Err(e) => return batch_error(e),
    };
    let failed: Vec<_> = report
        .outcomes
        .iter()
        .filter_map(|(s, o)| match o {
            JobStatus::Failed(why) => Some((s, why)),
            _ => None,
        })
        .collect();
    eprintln!(
        "shard {}/{}: {} samples, {} failed; wrote {}",
        args.shard.0,
        args.shard.1,
        report.shard_samples,
        failed.len(),
        report.summary.display()
    );
    for (s, why) in &failed {
        eprintln!("failed: sample {s}: {why}");
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn merge(args: MergeArgs) -> ExitCode {
    let out = args.out.clone().unwrap_or_else(|| args.dirs[0].clone());
    match crate::run::sweep::merge(&args.dirs, &out) {
        Ok((path, n)) => {
            eprintln!("merged {n} runs into {}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => fail(1, e),
    }
}

fn plot(args: PlotArgs) -> ExitCode {
    match crate::run::replot::redraw(&args.dir) {
        Ok(files) => {
            eprintln!("wrote {} plots under {}", files.len(), args.dir.display());
            ExitCode::SUCCESS
        }
        Err(e) => fail(1, e),
    }
}

fn bench(args: BenchArgs) -> ExitCode {
    if cfg!(debug_assertions) {
        eprintln!("note: this is a debug build; benchmark with cargo run --release -- bench");
    }
    if args.sizes.contains(&0) {
        return fail(
            USAGE,
            "--sizes: every size must be at least 1 (e.g. --sizes 1000,10000)",
        );
    }
    let opts = BenchOptions {
        sizes: args.sizes.clone(),
        backends: args.backends.clone(),
        steps: args.steps.max(1),
        warmup: args.warmup,
        threads: args.threads.map(usize::from),
        brute_max: args.brute_max,
        workload: args.workload,
    };
    let results = crate::run::bench::run(&opts);
    if let Some(path) = &args.json {
        if let Err(e) = write_json(path, &opts, &results) {
            return fail(
                1,
                format!(
                    "cannot write `{}`: {e} (choose a writable path for --json)",
                    path.display()
                ),
            );
        }
        eprintln!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}

fn fail(code: u8, e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e:#}");
    ExitCode::from(code)
}

/// The video recorder `run --video`/`--frames` asks for, as a step observer (an exit code and
/// the error otherwise).
fn video(
    args: &RunArgs,
    config: &SimConfig,
) -> Result<Option<Box<dyn StepObserver>>, (u8, anyhow::Error)> {
    if args.video.is_none() && args.frames.is_none() {
        return Ok(None);
    }
    let opts = VideoOptions {
        gif: args.video.clone(),
        frames: args.frames.clone(),
        fps: args.video_fps,
        from: args.video_from,
        to: args.video_to.unwrap_or(config.duration),
        size: args.video_size,
        radii: args.video_overlays.contains(&VideoOverlay::Radii),
        transmissions: args.video_overlays.contains(&VideoOverlay::Transmissions),
    };
    opts.validate().map_err(|e| (USAGE, e))?;
    let recorder = Recorder::new(opts, config.dt).map_err(|e| (1, e))?;
    Ok(Some(Box::new(Video(recorder))))
}

/// A video recorder watching a headless run.
struct Video(Recorder);

impl StepObserver for Video {
    fn observe(&mut self, world: &bevy::ecs::world::World, time: f64) -> anyhow::Result<()> {
        self.0.observe(world, time)
    }

    fn finish(self: Box<Self>) -> String {
        self.0.finish()
    }
}

/// Installs the Ctrl-C handler: the first press asks the run to stop cleanly.
fn stop_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    // If a handler cannot be installed the run still works; it just cannot stop cleanly.
    let _ = ctrlc::set_handler(move || f.store(true, Ordering::SeqCst));
    flag
}

/// The checkpoint `--resume` names and the run's configuration (an exit code and the error
/// otherwise).
fn resume(args: &RunArgs) -> Result<(SimConfig, Option<Resume>), (u8, anyhow::Error)> {
    let Some(path) = &args.resume else {
        return args
            .resolve()
            .map(|c| (c, None))
            .map_err(|e| (USAGE, e.into()));
    };
    let (file, checkpoint) = checkpoints::read(path).map_err(|e| (USAGE, e.into()))?;
    let (config, changed) = args
        .resolve_resumed(&checkpoint.config)
        .map_err(|e| (USAGE, e.into()))?;
    let branch = (!changed.is_empty()).then(|| Parent {
        file: file.display().to_string(),
        time_s: checkpoint.time(),
        changed,
    });
    let at_end = checkpoint.time() >= config.duration - 0.5 * config.dt;
    if at_end && branch.is_some() {
        let e = anyhow::anyhow!(
            "{}: the checkpoint is at the run's end (t = {} s): a branch there changes nothing; \
             give an earlier checkpoint (…/checkpoints/t-*.ckpt) or a longer --duration",
            file.display(),
            headless::tidy_time(checkpoint.time(), config.dt)
        );
        return Err((USAGE, e));
    }
    if at_end {
        eprintln!(
            "note: the checkpoint is at the run's end; the files are rewritten, nothing runs"
        );
    }
    let kind = if branch.is_some() { "branch" } else { "resume" };
    eprintln!(
        "{kind} from {} at t = {} s",
        file.display(),
        headless::tidy_time(checkpoint.time(), config.dt)
    );
    Ok((config, Some(Resume { checkpoint, branch })))
}

fn run(args: RunArgs) -> ExitCode {
    if args
        .checkpoint_every
        .is_some_and(|s| !(s > 0.0 && s.is_finite()))
    {
        let e = anyhow::anyhow!(
            "--checkpoint-every must be a positive number of simulated seconds, e.g. 30"
        );
        return fail(USAGE, e);
    }
    let (config, resume) = match resume(&args) {
        Ok(r) => r,
        Err((code, e)) => return fail(code, e),
    };
    let observer = match video(&args, &config) {
        Ok(v) => v,
        Err((code, e)) => return fail(code, e),
    };
    let stop = stop_flag();
    let opts = RunOptions {
        threads: args.threads.map(usize::from),
        progress: !args.quiet,
        stop: Some(stop),
        observer,
        checkpoints: CheckpointOptions {
            every: args.checkpoint_every,
            keep: args.keep_checkpoints.map(|k| k as usize),
            on_exit: args.checkpoint_on_exit,
        },
        resume,
        ..RunOptions::new(config, args.out.clone())
    };
    match headless::run(opts) {
        Ok(report) => {
            let status = if report.completed {
                "done"
            } else {
                "interrupted"
            };
            eprintln!(
                "{status}: {:.1} simulated s in {} steps, {:.2} s wall ({:.0} steps/s); wrote {}",
                report.simulated_s,
                report.steps,
                report.wall_s,
                (report.steps - report.resumed_at_step) as f64 / report.wall_s.max(1e-9),
                report.out.display()
            );
            if let Some(video) = &report.observed {
                eprintln!("video: {video}");
            }
            if report.completed {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(INTERRUPTED)
            }
        }
        Err(e) => fail(1, e),
    }
}
