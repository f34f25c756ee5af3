//! Time travel in the app (docs/model.md §12): in-memory checkpoints ("marks") of the running
//! simulation, one per simulated second and one at every parameter edit, within a memory
//! budget (older marks are thinned first); going to any earlier step (the timeline slider,
//! ←/→, Shift+S) restores the nearest mark at or before it and replays forward to exactly that
//! step; an edit made in the past is a branch — the marks after it are dropped and the plots
//! keep the abandoned future as a faint line. Saving and opening checkpoint files go through
//! here too, because restoring needs the whole world.
//!
//! `keep_timeline` runs at the start of each frame, before its time update (`First`),
//! `note_config` after the frame's fixed steps; a user's edit is a change of `SimConfig` between
//! the two.

use std::path::PathBuf;

use bevy::ecs::component::Tick;
use bevy::prelude::*;

use crate::sim::agent::{AgentId, ResetRequest};
use crate::sim::checkpoint::{self, Checkpoint, CheckpointError};
use crate::sim::clock::{SimClock, run_fixed_step};
use crate::sim::config::SimConfig;
use crate::sim::metrics::{MetricsLog, Sample};
use crate::sim::schedule::StepMode;
use crate::view::input::TimeRequest;
use crate::view::select::Selected;

/// Simulated seconds between marks.
pub const MARK_EVERY_S: f64 = 1.0;
/// Memory the marks may take, bytes.
pub const BUDGET_BYTES: usize = 512_000_000;

/// One in-memory checkpoint.
struct Mark {
    step: u64,
    bytes: Vec<u8>,
}

/// The app's timeline.
#[derive(Resource)]
pub struct Timeline {
    marks: Vec<Mark>,
    /// The furthest step and time reached on this branch.
    furthest: (u64, f64),
    /// The samples as they were at the furthest step (kept while in the past).
    future: Vec<Sample>,
    /// The abandoned future of the last branch, drawn faintly in the plots.
    pub ghost: Vec<Sample>,
    /// What the user asked for this frame.
    pub requests: Vec<TimeRequest>,
    /// `SimConfig`'s change tick after the last step or restore.
    config_tick: Option<Tick>,
    /// Memory the marks may take, bytes.
    pub budget: usize,
    /// The last thing that went wrong or was done (shown in the panel).
    pub message: Option<String>,
    /// Marks are off (a component no checkpoint saves was found).
    disabled: bool,
    /// Replay from the start to this simulated time, then pause (a link's `t=`).
    pub start_at: Option<f64>,
}

impl Default for Timeline {
    fn default() -> Self {
        Self {
            marks: Vec::new(),
            furthest: (0, 0.0),
            future: Vec::new(),
            ghost: Vec::new(),
            requests: Vec::new(),
            config_tick: None,
            budget: BUDGET_BYTES,
            message: None,
            disabled: false,
            start_at: None,
        }
    }
}

impl Timeline {
    /// The steps the timeline can go to: from the first mark to the furthest step reached.
    pub fn range(&self) -> Option<(u64, u64)> {
        let first = self.marks.first()?.step;
        Some((first, self.furthest.0.max(first)))
    }

    /// Marks held and the bytes they take.
    pub fn memory(&self) -> (usize, usize) {
        (
            self.marks.len(),
            self.marks.iter().map(|m| m.bytes.len()).sum(),
        )
    }

    /// The furthest simulated time reached on this branch, s.
    pub fn furthest_time(&self) -> f64 {
        self.furthest.1
    }

    fn clear(&mut self) {
        self.marks.clear();
        self.furthest = (0, 0.0);
        self.future.clear();
        self.ghost.clear();
    }

    /// Keeps `bytes` as the mark of `step` (replacing one at the same step), then thins the
    /// older half (every other mark, the first kept) until the marks fit the budget.
    fn keep(&mut self, step: u64, bytes: Vec<u8>) {
        self.marks.retain(|m| m.step != step);
        let at = self.marks.partition_point(|m| m.step < step);
        self.marks.insert(at, Mark { step, bytes });
        while self.memory().1 > self.budget && self.marks.len() > 2 {
            let half = self.marks.len() / 2;
            let mut k = 0;
            self.marks.retain(|_| {
                k += 1;
                k > half || k % 2 == 1
            });
        }
    }
}

/// The steps [`MARK_EVERY_S`] takes at step `dt`.
fn mark_every(dt: f64) -> u64 {
    (MARK_EVERY_S / dt).round().max(1.0) as u64
}

pub(super) fn plugin(app: &mut App) {
    // Before the frame's time update: a jump pauses, so the frame adds no step after it.
    app.init_resource::<Timeline>()
        .add_systems(First, keep_timeline.before(bevy::time::TimeSystem))
        .add_systems(
            RunFixedMainLoop,
            note_config.in_set(RunFixedMainLoopSystem::AfterFixedMainLoop),
        );
}

/// Runs one fixed step, with `Time` set to the fixed clock as Bevy's own fixed loop does.
pub fn run_one_step(world: &mut World) {
    run_fixed_step(world, |world| world.run_schedule(bevy::app::FixedMain));
}

fn note_config(world: &mut World) {
    let tick = world.resource_ref::<SimConfig>().last_changed();
    world.resource_mut::<Timeline>().config_tick = Some(tick);
}

/// Puts `checkpoint` into the world, keeping the selected boid selected.
fn restore(world: &mut World, checkpoint: &Checkpoint) -> Result<(), CheckpointError> {
    let config = checkpoint.config()?;
    let selected = world
        .resource::<Selected>()
        .0
        .and_then(|e| world.get::<AgentId>(e).copied());
    checkpoint::restore(world, checkpoint, config);
    let entity = selected.and_then(|id| {
        let mut q = world.query::<(Entity, &AgentId)>();
        q.iter(world).find(|(_, a)| **a == id).map(|(e, _)| e)
    });
    world.resource_mut::<Selected>().0 = entity;
    Ok(())
}

/// Goes to step `target`: from the current state when it lies between the mark before the
/// target and the target, else from that mark; then replays forward. Pauses.
fn go_to(world: &mut World, target: u64) -> Result<(), CheckpointError> {
    world.resource_mut::<Time<Virtual>>().pause();
    let now = *world.resource::<SimClock>();
    let timeline = world.resource::<Timeline>();
    let Some((first, last)) = timeline.range() else {
        return Ok(());
    };
    let target = target.clamp(first, last.max(now.step));
    let mark = timeline.marks.iter().rposition(|m| m.step <= target);
    let from_mark = mark.filter(|&k| !(timeline.marks[k].step <= now.step && now.step <= target));
    if now.step >= timeline.furthest.0 {
        let samples = world.resource::<MetricsLog>().samples.clone();
        let mut timeline = world.resource_mut::<Timeline>();
        timeline.furthest = (now.step, now.time);
        timeline.future = samples;
    }
    if let Some(k) = from_mark {
        let checkpoint = checkpoint::decode(&world.resource::<Timeline>().marks[k].bytes)?;
        restore(world, &checkpoint)?;
    }
    while world.resource::<SimClock>().step < target {
        *world.resource_mut::<StepMode>() = StepMode::Full;
        run_one_step(world);
    }
    note_config(world);
    Ok(())
}

/// Carries out the frame's requests, notices edits (a branch when made in the past) and keeps
/// a mark every [`MARK_EVERY_S`].
fn keep_timeline(world: &mut World) {
    if world.resource::<ResetRequest>().pending {
        world.resource_mut::<Timeline>().clear();
        return;
    }
    let requests = std::mem::take(&mut world.resource_mut::<Timeline>().requests);
    for request in requests {
        let clock = *world.resource::<SimClock>();
        let per_s = 1.0 / world.resource::<SimConfig>().dt;
        let outcome = match &request {
            TimeRequest::ToStep(step) => go_to(world, *step).map(|()| None),
            TimeRequest::By(s) => {
                let target = (clock.step as f64 + s * per_s).round().max(0.0) as u64;
                go_to(world, target).map(|()| None)
            }
            TimeRequest::StepBack => go_to(world, clock.step.saturating_sub(1)).map(|()| None),
            TimeRequest::Save(path) => save(world, path).map(Some),
            TimeRequest::Open(path) => open(world, path).map(Some),
        };
        let mut timeline = world.resource_mut::<Timeline>();
        match outcome {
            Ok(message) => timeline.message = message,
            Err(e) => timeline.message = Some(e.to_string()),
        }
    }
    mark(world);
    // A link's `t=`: replay from the start to that moment (keeping marks), then pause.
    let start_at = world.resource::<Timeline>().start_at;
    if let Some(t) = start_at.filter(|_| world.resource::<SimClock>().step > 0) {
        let half_step = 0.5 * world.resource::<SimConfig>().dt;
        while world.resource::<SimClock>().time < t - half_step {
            run_one_step(world);
            note_config(world);
            mark(world);
        }
        world.resource_mut::<Time<Virtual>>().pause();
        world.resource_mut::<Timeline>().start_at = None;
    }
}

/// Notices an edit since the last step (a branch when made in the past) and keeps a mark when
/// one is due: every [`MARK_EVERY_S`] and at every edit.
fn mark(world: &mut World) {
    let clock = *world.resource::<SimClock>();
    if clock.step == 0 || world.resource::<Timeline>().disabled {
        return;
    }
    let tick = world.resource_ref::<SimConfig>().last_changed();
    let every = mark_every(world.resource::<SimConfig>().dt);
    let timeline = world.resource::<Timeline>();
    let edited = timeline.config_tick.is_some_and(|t| t != tick);
    let last_mark = timeline.marks.last().map_or(0, |m| m.step);
    let due = timeline.marks.is_empty() || clock.step >= last_mark + every;
    if !edited && !due {
        return;
    }
    if edited && clock.step < timeline.furthest.0 {
        // A branch: the old future becomes the ghost, its marks go.
        let mut timeline = world.resource_mut::<Timeline>();
        timeline.ghost = std::mem::take(&mut timeline.future);
        timeline.marks.retain(|m| m.step <= clock.step);
        timeline.furthest = (clock.step, clock.time);
        timeline.message = Some(format!("branched at t = {:.2} s", clock.time));
    }
    match checkpoint::capture(world) {
        Ok(c) => {
            let bytes = checkpoint::encode(&c);
            let mut timeline = world.resource_mut::<Timeline>();
            timeline.keep(clock.step, bytes);
            if clock.step >= timeline.furthest.0 {
                timeline.furthest = (clock.step, clock.time);
            }
        }
        Err(e) => {
            let mut timeline = world.resource_mut::<Timeline>();
            timeline.disabled = true;
            timeline.message = Some(format!("timeline off: {e}"));
        }
    }
    note_config(world);
}

/// Writes the current moment as a checkpoint file.
fn save(world: &mut World, path: &PathBuf) -> Result<String, CheckpointError> {
    let checkpoint = checkpoint::capture(world)?;
    let bytes = checkpoint::encode(&checkpoint);
    write_bytes(path, &bytes)
        .map_err(|e| CheckpointError::File(format!("cannot write {}: {e}", path.display())))?;
    Ok(format!(
        "checkpoint at t = {:.2} s saved to {} ({} kB)",
        checkpoint.time(),
        std::path::absolute(path).unwrap_or(path.clone()).display(),
        bytes.len() / 1000
    ))
}

/// Opens a checkpoint file: its moment becomes the start of a new timeline. Pauses.
fn open(world: &mut World, path: &PathBuf) -> Result<String, CheckpointError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CheckpointError::File(format!("cannot read {}: {e}", path.display())))?;
    let checkpoint = checkpoint::decode(&bytes)?;
    restore(world, &checkpoint)?;
    world.resource_mut::<Time<Virtual>>().pause();
    world.resource_mut::<Timeline>().clear();
    note_config(world);
    Ok(format!(
        "opened {} at t = {:.2} s",
        path.display(),
        checkpoint.time()
    ))
}

/// Writes a file; in a browser, downloads it under the file's name instead.
fn write_bytes(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    #[cfg(target_arch = "wasm32")]
    {
        let name = path
            .file_name()
            .map_or("checkpoint.ckpt".into(), |n| n.to_string_lossy());
        crate::view::web::download_bytes(&name, bytes).map_err(std::io::Error::other)
    }
    #[cfg(not(target_arch = "wasm32"))]
    std::fs::write(path, bytes)
}
