//! The `pandemic-boids` binary on a desktop: parse the command line, then open the window or run
//! headless. Every error is printed as one line; usage and config errors exit with 2, others
//! with 1.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;
use clap::error::ErrorKind;

use pandemic_boids::run::bench::{BenchOptions, write_json};
use pandemic_boids::run::cli::{
    BenchArgs, Cli, Command, ExperimentArgs, MergeArgs, PlotArgs, RunArgs, SweepArgs, VideoOverlay,
};
use pandemic_boids::run::experiment::{ExperimentOptions, expand_scenarios};
use pandemic_boids::run::headless::{self, RunOptions, StepObserver};
use pandemic_boids::run::jobs::JobStatus;
use pandemic_boids::run::sweep::SweepOptions;
use pandemic_boids::sim::config::{ConfigError, SimConfig, default_scenario};
use pandemic_boids::view;
use pandemic_boids::view::video::{Recorder, VideoOptions};

/// Exit code for bad usage or configuration.
const USAGE: u8 = 2;
/// Exit code after Ctrl-C (128 + SIGINT), files complete.
const INTERRUPTED: u8 = 130;

pub fn main() -> ExitCode {
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
            // clap's first paragraph says what is wrong (it may wrap onto indented lines).
            let text = e.render().to_string();
            let first: Vec<&str> = text
                .lines()
                .map(str::trim)
                .skip_while(|l| l.is_empty())
                .take_while(|l| !l.is_empty())
                .collect();
            eprintln!("{} (see pandemic-boids --help)", first.join(" "));
            return ExitCode::from(USAGE);
        }
    };
    match cli.command {
        None => match cli.scenario.resolve(default_scenario()) {
            Ok(config) => {
                let name = cli
                    .scenario
                    .scenario
                    .as_deref()
                    .map_or("default".into(), view::control::scenario_name);
                pandemic_boids::run_app(config, &name);
                ExitCode::SUCCESS
            }
            Err(e) => fail(USAGE, e),
        },
        Some(Command::Run(args)) => run(args),
        Some(Command::Bench(args)) => bench(args),
        Some(Command::Experiment(args)) => experiment(args),
        Some(Command::Sweep(args)) => sweep(args),
        Some(Command::Merge(args)) => merge(args),
        Some(Command::Plot(args)) => plot(args),
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
    let report = match pandemic_boids::run::experiment::run(&opts) {
        Ok(r) => r,
        Err(e) => return batch_error(e),
    };
    eprintln!(
        "{} runs done, {} skipped (already complete), {} stopped, {} failed; wrote {}",
        report.ran,
        report.skipped,
        report.stopped,
        report.failed.len(),
        b.out.display()
    );
    for (dir, why) in &report.failed {
        eprintln!("failed: {}: {why}", dir.display());
    }
    if report.stopped > 0 {
        ExitCode::from(INTERRUPTED)
    } else if report.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn sweep(args: SweepArgs) -> ExitCode {
    let b = &args.batch;
    let opts = SweepOptions {
        base: args.base.clone(),
        sets: b.set.clone(),
        params: args.param.clone(),
        samples: args.samples,
        seed: args.seed,
        shard: args.shard,
        jobs: b.jobs(),
        duration: b.duration,
        out: b.out.clone(),
        progress: !b.quiet,
        stop: Some(stop_flag()),
    };
    let report = match pandemic_boids::run::sweep::run(&opts) {
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
    match pandemic_boids::run::sweep::merge(&args.dirs, &out) {
        Ok((path, n)) => {
            eprintln!("merged {n} samples into {}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => fail(1, e),
    }
}

fn plot(args: PlotArgs) -> ExitCode {
    match pandemic_boids::run::replot::redraw(&args.dir) {
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
    let results = pandemic_boids::run::bench::run(&opts);
    if let Some(path) = &args.json {
        if let Err(e) = write_json(path, &results) {
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

fn run(args: RunArgs) -> ExitCode {
    let config = match args.resolve() {
        Ok(c) => c,
        Err(e) => return fail(USAGE, e),
    };
    let observer = match video(&args, &config) {
        Ok(v) => v,
        Err((code, e)) => return fail(code, e),
    };
    let stop = stop_flag();
    let opts = RunOptions {
        config,
        out: args.out.clone(),
        threads: args.threads.map(usize::from),
        progress: !args.quiet,
        stop: Some(stop),
        observer,
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
                report.steps as f64 / report.wall_s.max(1e-9),
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
