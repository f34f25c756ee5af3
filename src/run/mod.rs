//! Running the simulation without a window: the [`Simulation`] driver (a headless Bevy app
//! stepped one fixed step at a time), the `run` command's output folder, and the CLI types.
//! Nothing here draws. A browser build has the driver only (it checks a link's run).

#[cfg(not(target_arch = "wasm32"))]
pub mod bench;
#[cfg(not(target_arch = "wasm32"))]
pub mod checkpoints;
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(not(target_arch = "wasm32"))]
pub mod compare;
#[cfg(not(target_arch = "wasm32"))]
pub mod experiment;
#[cfg(not(target_arch = "wasm32"))]
pub mod headless;
#[cfg(not(target_arch = "wasm32"))]
pub mod jobs;
#[cfg(not(target_arch = "wasm32"))]
pub mod machine;
#[cfg(not(target_arch = "wasm32"))]
pub mod output;
#[cfg(not(target_arch = "wasm32"))]
pub mod plots;
#[cfg(not(target_arch = "wasm32"))]
pub mod replot;
#[cfg(not(target_arch = "wasm32"))]
pub mod results;
#[cfg(not(target_arch = "wasm32"))]
pub mod sensitivity;
#[cfg(not(target_arch = "wasm32"))]
pub mod sweep;

use std::time::Duration;

use bevy::app::{ScheduleRunnerPlugin, TaskPoolPlugin};
use bevy::ecs::schedule::ExecutorKind;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;

use crate::sim::SimPlugin;
use crate::sim::checkpoint::{self, Checkpoint, CheckpointError};
use crate::sim::clock::SimClock;
use crate::sim::config::SimConfig;
use crate::sim::metrics::{MetricsLog, Sample};
use crate::sim::parallel::init_headless_task_pools;
use crate::sim::schedule::StepMode;

/// A headless simulation: `MinimalPlugins` + [`SimPlugin`], with time advanced by exactly one
/// fixed step of `dt` per update.
pub struct Simulation {
    app: App,
    dt: Duration,
}

impl Simulation {
    /// A simulation of `config` on `threads` threads in all (default: every core; the
    /// process-wide pools are created by the first simulation or app of the process).
    pub fn new(config: SimConfig, threads: Option<usize>) -> Self {
        Self::with(config, threads, |_| {})
    }

    /// Like [`Simulation::new`], with `extend` adding your own plugins and systems before the
    /// app is finished (plugins cannot be added later).
    pub fn with(config: SimConfig, threads: Option<usize>, extend: impl FnOnce(&mut App)) -> Self {
        let dt = Duration::from_secs_f64(config.dt);
        init_headless_task_pools(threads);
        let mut app = App::new();
        app.add_plugins(
            MinimalPlugins
                .build()
                .disable::<TaskPoolPlugin>()
                .disable::<ScheduleRunnerPlugin>(),
        )
        .add_plugins(SimPlugin { config })
        .insert_resource(TimeUpdateStrategy::ManualDuration(dt));
        extend(&mut app);
        app.finish();
        app.cleanup();
        // Phases are chained, so little runs side by side; the single-threaded executor avoids
        // dispatching every system to the pool (which dominates small runs). Work inside the
        // systems still spreads over the compute pool.
        for (_, schedule) in app.world_mut().resource_mut::<Schedules>().iter_mut() {
            schedule.set_executor_kind(ExecutorKind::SingleThreaded);
        }
        let mut virtual_time = app.world_mut().resource_mut::<Time<Virtual>>();
        virtual_time.set_max_delta(dt.max(Duration::from_millis(250)));
        Self { app, dt }
    }

    /// A simulation that continues from `checkpoint` with `config` (the checkpoint's own, or
    /// a branch's changed copy): its next step is the step the checkpoint's run took next.
    pub fn resumed(checkpoint: &Checkpoint, config: SimConfig, threads: Option<usize>) -> Self {
        let mut sim = Self::new(config.clone(), threads);
        checkpoint::restore(sim.app.world_mut(), checkpoint, config);
        sim
    }

    /// The whole state at the current step boundary.
    pub fn checkpoint(&mut self) -> Result<Checkpoint, CheckpointError> {
        checkpoint::capture(self.app.world_mut())
    }

    /// Runs exactly one simulation step (the first also starts the run).
    pub fn step(&mut self) {
        let before = self.app.world().resource::<Time<Fixed>>().elapsed();
        // Time's very first update has zero delta; at most one extra update is needed.
        for _ in 0..3 {
            self.app.update();
            if self.app.world().resource::<Time<Fixed>>().elapsed() > before {
                return;
            }
        }
        panic!("fixed step did not run: timestep {:?}", self.dt);
    }

    /// Steps until the clock reaches `until` seconds (to within half a step).
    pub fn run_until(&mut self, until: f64) {
        while !self.reached(until) {
            self.step();
        }
    }

    /// Whether the clock has reached `until` seconds (to within half a step).
    pub fn reached(&self, until: f64) -> bool {
        self.clock().time >= until - 0.5 * self.dt.as_secs_f64()
    }

    /// Takes a last sample of the current state without moving (end of a run).
    pub fn observe(&mut self) {
        *self.app.world_mut().resource_mut::<StepMode>() = StepMode::Observe;
        self.step();
        *self.app.world_mut().resource_mut::<StepMode>() = StepMode::Full;
    }

    /// The simulation clock.
    pub fn clock(&self) -> SimClock {
        *self.app.world().resource::<SimClock>()
    }

    /// Every sample recorded so far.
    pub fn samples(&self) -> &[Sample] {
        &self.app.world().resource::<MetricsLog>().samples
    }

    /// The live configuration.
    pub fn config(&self) -> &SimConfig {
        self.app.world().resource::<SimConfig>()
    }

    /// The ECS world, to read components and resources.
    pub fn world(&self) -> &World {
        self.app.world()
    }

    /// The ECS world, mutably (tests set up exact situations through it).
    pub fn world_mut(&mut self) -> &mut World {
        self.app.world_mut()
    }

    /// The app, to add systems or plugins before stepping.
    pub fn app_mut(&mut self) -> &mut App {
        &mut self.app
    }
}
