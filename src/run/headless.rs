//! The `run` command: step a [`Simulation`] as fast as possible to `duration`, writing
//! `metrics.csv` (and `agents.csv` when `agents_every` is set) and `transmissions.csv` as the
//! run goes, then a final observation, `rt.csv` and `summary.json`, then the plots `sir.png` and
//! `rt.png`. A progress bar shows on a terminal; a stop flag (Ctrl-C) ends
//! the run early with every file complete.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};

use super::Simulation;
use super::checkpoints::{self, CheckpointOptions, CheckpointSchedule};
pub use super::output::tidy_time;
use super::output::{OutputError, RunFolder};
use super::plots::plot_run_folder;
use crate::sim::checkpoint::{Checkpoint, Parent, RunState};
use crate::sim::config::SimConfig;
use crate::sim::epidemic::{EpidemicStats, swarms_at_risk};
use crate::sim::interventions::{EventKind, InterventionLog, as_configured};
use crate::sim::metrics::{MetricsLog, SWARM_MEASURES, Sample, Tally, next_sample_time};
use crate::sim::neighbours::Snapshot;
use crate::sim::parallel::workers;
use crate::sim::reproduction::{
    MAX_CV, ROWS_PER_WINDOW, first_generation_r0, interval_weights, reproduction_series,
    serial_intervals, well_mixed_r0,
};
use crate::sim::stats::spread;
use crate::sim::swarm::Swarm;
use crate::sim::transmission::TransmissionLog;

/// Something that watches a run step by step (e.g. a video recorder): it sees the world after
/// each step, whose snapshot is the state at `time`, and the final state.
pub trait StepObserver {
    /// Looks at the world; its snapshot is the state at `time`.
    fn observe(&mut self, world: &bevy::ecs::world::World, time: f64) -> anyhow::Result<()>;
    /// The run is over: finish, and say what was written.
    fn finish(self: Box<Self>) -> String;
}

/// What a headless run needs.
pub struct RunOptions {
    /// The resolved configuration (`duration` says how long).
    pub config: SimConfig,
    /// Output folder.
    pub out: PathBuf,
    /// Threads in all, the main one included (default: every core).
    pub threads: Option<usize>,
    /// Show a progress bar (only drawn on a terminal).
    pub progress: bool,
    /// Set to stop early (Ctrl-C).
    pub stop: Option<Arc<AtomicBool>>,
    /// Watches every step (a video); never changes the run.
    pub observer: Option<Box<dyn StepObserver>>,
    /// When to write checkpoints.
    pub checkpoints: CheckpointOptions,
    /// Continue from a checkpoint instead of starting (`config` is its configuration, changed
    /// on a branch).
    pub resume: Option<Resume>,
}

impl RunOptions {
    /// A run of `config` into `out`: every core, no progress bar, no stop flag, no observer,
    /// no checkpoints, from the start.
    pub fn new(config: SimConfig, out: PathBuf) -> Self {
        Self {
            config,
            out,
            threads: None,
            progress: false,
            stop: None,
            observer: None,
            checkpoints: CheckpointOptions::default(),
            resume: None,
        }
    }
}

/// Where a resumed run starts.
pub struct Resume {
    /// The checkpoint.
    pub checkpoint: Checkpoint,
    /// Set when the run is a branch (its configuration differs from the checkpoint's).
    pub branch: Option<Parent>,
}

/// How a headless run went.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// Reached `duration` (false if stopped early).
    pub completed: bool,
    /// Steps taken.
    pub steps: u64,
    /// Simulated seconds.
    pub simulated_s: f64,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// The output folder.
    pub out: PathBuf,
    /// What the observer wrote, if there was one.
    pub observed: Option<String>,
    /// The last checkpoint written, if any.
    pub checkpoint: Option<PathBuf>,
    /// Steps already taken by the run a resumed run continues (0 otherwise).
    pub resumed_at_step: u64,
}

/// Runs to `config.duration` (or until stopped) and writes the output folder.
pub fn run(mut opts: RunOptions) -> Result<RunReport, OutputError> {
    let started = Instant::now();
    let resume = opts.resume.take();
    // A branch keeps its parent; so does a run resumed from a branch's checkpoint.
    let parent = resume
        .as_ref()
        .and_then(|r| r.branch.clone().or_else(|| r.checkpoint.parent.clone()));
    // config.toml holds the configuration as configured (an active intervention's `set` undone),
    // as the uninterrupted run wrote it.
    let configured = match &resume {
        Some(r) => as_configured(&opts.config, &r.checkpoint.interventions),
        None => opts.config.clone(),
    };
    let mut folder = RunFolder::create(&opts.out, &configured)?;
    if let Some(p) = &parent {
        folder.note_parent(p, opts.config.dt)?;
    }
    let duration = opts.config.duration;
    let total_steps = (duration / opts.config.dt).round().max(1.0) as u64;
    let (mut sim, mut agents) = match &resume {
        None => (
            Simulation::new(opts.config.clone(), opts.threads),
            AgentSchedule::new(&opts.config),
        ),
        Some(r) => {
            let sim = Simulation::resumed(&r.checkpoint, opts.config.clone(), opts.threads);
            let state = r.checkpoint.run.clone().unwrap_or_default();
            // Everything the parent had written, rebuilt from the logs (agents.csv as written).
            folder.write_new_rows(sim.samples())?;
            folder.write_transmissions(sim.world().resource::<TransmissionLog>(), false)?;
            folder.write_interventions(sim.world().resource::<InterventionLog>())?;
            folder.append_agents(&state.agents_rows)?;
            (sim, AgentSchedule::resumed(&opts.config, &state))
        }
    };
    let mut schedule =
        CheckpointSchedule::new(opts.checkpoints.every, opts.config.dt, sim.clock().time);
    let mut last_checkpoint = None;
    let bar = if opts.progress {
        let bar = ProgressBar::new(total_steps);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:40} {pos}/{len} steps  {msg}  [{elapsed_precise} < {eta_precise}]",
            )
            .expect("valid template"),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let stopped = || {
        opts.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    };
    let mut completed = true;
    let resumed_at_step = sim.clock().step;
    bar.set_position(resumed_at_step);
    while !sim.reached(duration) {
        if stopped() {
            completed = false;
            if opts.checkpoints.on_exit {
                let written = save(&mut sim, &folder, &agents, &parent, &opts.checkpoints)?;
                eprintln!("checkpoint written: {}", written.display());
                last_checkpoint = Some(written);
            }
            break;
        }
        // The step's snapshot is the state at the step's start, the time the clock shows now.
        let start = sim.clock().time;
        sim.step();
        folder.write_new_rows(sim.samples())?;
        folder.write_transmissions(sim.world().resource::<TransmissionLog>(), false)?;
        folder.write_interventions(sim.world().resource::<InterventionLog>())?;
        if agents.take(start) {
            folder.write_agents(start, sim.world().resource::<Snapshot>())?;
        }
        if let Some(o) = &mut opts.observer {
            o.observe(sim.world(), start)
                .map_err(OutputError::Observer)?;
        }
        if schedule.take(sim.clock().time) {
            last_checkpoint = Some(save(
                &mut sim,
                &folder,
                &agents,
                &parent,
                &opts.checkpoints,
            )?);
        }
        let step = sim.clock().step;
        if step.is_multiple_of(64) {
            bar.set_position(step);
            bar.set_message(format!("t = {:.1} s", sim.clock().time));
        }
    }
    sim.observe();
    folder.write_new_rows(sim.samples())?;
    let log = sim.world().resource::<TransmissionLog>();
    folder.write_transmissions(log, true)?;
    folder.write_rt(&reproduction_series(
        &log.records,
        opts.config.rt_window,
        opts.config.dt,
        sim.clock().time,
    ))?;
    let end = sim.clock().time;
    if agents.take_final(end) {
        folder.write_agents(end, sim.world().resource::<Snapshot>())?;
    }
    let observed = match opts.observer.take() {
        Some(mut o) => {
            o.observe(sim.world(), end).map_err(OutputError::Observer)?;
            Some(o.finish())
        }
        None => None,
    };
    bar.finish_and_clear();
    let report = RunReport {
        completed,
        steps: sim.clock().step,
        simulated_s: sim.clock().time,
        wall_s: started.elapsed().as_secs_f64(),
        out: folder.dir().to_path_buf(),
        observed,
        checkpoint: last_checkpoint,
        resumed_at_step,
    };
    let mut summary = summary(&sim, completed);
    if let Some(p) = &parent {
        summary["parent"] = json!({
            "checkpoint": p.file,
            "time_s": tidy_time(p.time_s, opts.config.dt),
            "changed": p.changed,
        });
    }
    folder.write_summary(&summary)?;
    // The plots are views of files already written: a failure is reported, never fatal. They
    // are drawn at once unless the run was asked for one thread.
    let seed = opts.config.seed;
    let sir = format!("S / I / R (seed {seed})");
    let rt = format!("reproduction numbers (seed {seed})");
    for (_, drawn) in plot_run_folder(folder.dir(), (&sir, &rt), workers() > 1) {
        if let Err(e) = drawn {
            eprintln!("warning: {e}");
        }
    }
    Ok(report)
}

/// Writes a checkpoint of the run as it stands into `<out>/checkpoints/`.
fn save(
    sim: &mut Simulation,
    folder: &RunFolder,
    agents: &AgentSchedule,
    parent: &Option<Parent>,
    options: &CheckpointOptions,
) -> Result<PathBuf, OutputError> {
    let mut checkpoint = sim
        .checkpoint()
        .map_err(|e| OutputError::Checkpoint(e.to_string()))?;
    checkpoint.run = Some(RunState {
        agents_rows: folder.agents_rows()?,
        agents_next_due: agents.next_due,
        agents_last: agents.last,
    });
    checkpoint.parent = parent.clone();
    let dir = folder.dir().join("checkpoints");
    checkpoints::write(&dir, &checkpoint, options.keep).map_err(|e| OutputError::File {
        path: dir.display().to_string(),
        reason: e.to_string(),
    })
}

/// When `agents.csv` gets its next snapshot: every `agents_every` simulated seconds on the
/// same clock as the metrics (a sample is due within half a step of its time), plus the final
/// state.
#[derive(Clone, Copy, Debug)]
struct AgentSchedule {
    every: f64,
    half_step: f64,
    next_due: f64,
    last: Option<f64>,
}

impl AgentSchedule {
    fn new(config: &SimConfig) -> Self {
        Self {
            every: config.agents_every,
            half_step: 0.5 * config.dt,
            next_due: 0.0,
            last: None,
        }
    }

    /// The schedule a checkpoint saved.
    fn resumed(config: &SimConfig, state: &RunState) -> Self {
        Self {
            next_due: state.agents_next_due,
            last: state.agents_last,
            ..Self::new(config)
        }
    }

    /// Whether the state at `time` is due; if so it counts as written.
    fn take(&mut self, time: f64) -> bool {
        if self.every <= 0.0 || time < self.next_due - self.half_step {
            return false;
        }
        self.next_due = next_sample_time(time, self.half_step, self.every);
        self.last = Some(time);
        true
    }

    /// Whether the final state at `time` still needs writing.
    fn take_final(&mut self, time: f64) -> bool {
        let written = self.last.is_some_and(|t| (t - time).abs() < 1e-9);
        self.every > 0.0 && !written
    }
}

fn opt(v: Option<f64>) -> Value {
    v.map_or(Value::Null, |x| json!(x))
}

fn mean_of(samples: &[Sample], f: impl Fn(&Sample) -> Option<f64>) -> Option<f64> {
    let vals: Vec<f64> = samples.iter().filter_map(f).collect();
    (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
}

/// The `summary.json` of a finished (or stopped) run.
pub fn summary(sim: &Simulation, completed: bool) -> Value {
    let config = sim.config();
    let log = sim.world().resource::<MetricsLog>();
    let tally = sim.world().resource::<Tally>();
    let samples = &log.samples;
    let last = samples.last().cloned().unwrap_or_default();
    let mut swarms = serde_json::Map::new();
    for swarm in Swarm::ALL {
        let k = swarm.index();
        let mut entry = serde_json::Map::new();
        entry.insert("spawned".into(), tally.spawned[k].into());
        let finals: serde_json::Map<String, Value> = SWARM_MEASURES
            .iter()
            .filter(|m| m.in_final)
            .map(|m| (m.name.to_string(), (m.read)(&last.swarms[k]).json()))
            .collect();
        entry.insert("final".into(), Value::Object(finals));
        for m in &SWARM_MEASURES {
            if let Some(key) = m.run_mean {
                let mean = mean_of(samples, |s| (m.read)(&s.swarms[k]).value());
                entry.insert(key.into(), opt(mean));
            }
        }
        swarms.insert(swarm.key().into(), Value::Object(entry));
    }
    let o = &last.overall;
    let stats = sim.world().resource::<EpidemicStats>();
    // Boids that ever lived, all of them and those of the swarms that could be infected.
    let lived = |k: usize| tally.spawned[k] + tally.born[k];
    let population: u64 = (0..3).map(lived).sum();
    let risk = swarms_at_risk(config);
    let at_risk: u64 = (0..3).filter(|&k| risk[k]).map(lived).sum();
    let share = |n: u64| {
        if n > 0 {
            json!(stats.ever_infected as f64 / n as f64)
        } else {
            Value::Null
        }
    };
    let epidemic = json!({
        "peak_infected": {
            "count": stats.peak_infected,
            "fraction": stats.peak_fraction,
            "time_s": tidy_time(stats.peak_time_s, config.dt),
        },
        "attack_rate": share(at_risk),
        "attack_rate_all_boids": share(population),
        "at_risk": at_risk,
        "ever_infected": stats.ever_infected,
        "eradication_time_s": opt(stats.eradication_time_s.map(|t| tidy_time(t, config.dt))),
        "final": {
            "susceptible": o.susceptible,
            "infected": o.infected,
            "recovered": o.recovered,
            "dead": o.dead,
        },
        "first_cohort": stats.first_cohort,
        "contact_infections": stats.contact_infections,
        "spontaneous_infections": stats.spontaneous_infections,
        "imported_infections": stats.imported_infections,
        "cures": stats.cures,
        "deaths": stats.deaths,
        "recoveries": stats.recoveries,
        "promotions": tally.promoted,
    });
    let log = sim.world().resource::<TransmissionLog>();
    let r0 = first_generation_r0(&log.records);
    let si = spread(serial_intervals(&log.records));
    let e = &config.epidemic;
    let transmission = json!({
        "infections": log.records.len(),
        "max_generation": log.records.iter().map(|t| t.generation).max(),
        "r0_first_generation": r0,
        "r0_well_mixed_normal": well_mixed_r0(
            e.p_infect_normal,
            e.contact_radius(Swarm::Normal, true) as f64,
            config.world.width as f64 * config.world.height as f64,
            tally.spawned[Swarm::Normal.index()] as f64,
            e.t_death,
        ),
        "serial_interval_s": si,
        "generation_time_s": si,
        "rt_window_s": config.rt_window,
        "rt_row_every_s": config.rt_window / ROWS_PER_WINDOW as f64,
        "rt_incidence_bin_s": config.dt,
        "rt_max_cv": MAX_CV,
        "serial_interval_mass_below_bin": interval_weights(&log.records, config.dt).1,
    });
    let ilog = sim.world().resource::<InterventionLog>();
    let interventions: Vec<Value> = config
        .interventions
        .iter()
        .enumerate()
        .map(|(i, iv)| {
            let times = |kind: EventKind| -> Vec<f64> {
                ilog.events
                    .iter()
                    .filter(|e| e.index == i && e.event == kind)
                    .map(|e| tidy_time(e.time_s, config.dt))
                    .collect()
            };
            let status = ilog.status.get(i).cloned().unwrap_or_default();
            json!({
                "name": iv.display_name(i),
                "starts_s": times(EventKind::Start),
                "ends_s": times(EventKind::End),
                "state_at_end": status.phase,
                "boids_affected": status.total_affected,
            })
        })
        .collect();
    json!({
        "seed": config.seed,
        "dt_s": config.dt,
        "duration_s": config.duration,
        "simulated_s": tidy_time(sim.clock().time, config.dt),
        "steps": sim.clock().step,
        "completed": completed,
        "samples": samples.len(),
        "steering_model": config.steering_model,
        "neighbour_index": config.neighbour_index,
        "final": {
            "alive": o.alive,
            "susceptible": o.susceptible,
            "infected": o.infected,
            "recovered": o.recovered,
            "dead": o.dead,
            "born": o.born,
            "caught": o.caught,
        },
        "epidemic": epidemic,
        "transmission": transmission,
        "interventions": interventions,
        "swarms": swarms,
    })
}

#[cfg(test)]
mod tests {
    use super::tidy_time;

    #[test]
    fn times_are_written_as_the_step_boundaries_they_are() {
        let dt = 1.0 / 60.0;
        assert_eq!(tidy_time(60.000001200003936, dt), 60.0);
        assert_eq!(tidy_time(25.050000500999897, dt), 25.05);
        assert_eq!(tidy_time(0.0, dt), 0.0);
        assert_eq!(tidy_time(2.5000000001, 0.5), 2.5);
    }
}
