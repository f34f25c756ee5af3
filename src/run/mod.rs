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

use bevy::app::{FixedMain, FixedMainScheduleOrder, MainScheduleOrder};
use bevy::app::{ScheduleRunnerPlugin, TaskPoolPlugin};
use bevy::ecs::schedule::{ExecutorKind, InternedScheduleLabel, ScheduleLabel};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;

use crate::sim::SimPlugin;
use crate::sim::checkpoint::{self, Checkpoint, CheckpointError};
use crate::sim::clock::{SimClock, run_fixed_step};
use crate::sim::config::SimConfig;
use crate::sim::metrics::{MetricsLog, Sample};
use crate::sim::parallel::init_headless_task_pools;
use crate::sim::schedule::StepMode;

/// A headless simulation: `MinimalPlugins` + [`SimPlugin`], with time advanced by exactly one
/// fixed step of `dt` per step (see [`Simulation::step`] for which schedules a step runs).
pub struct Simulation {
    app: App,
    dt: Duration,
    /// How many systems each schedule a direct step leaves out has, as the simulation's own
    /// plugins add them ([`left_out`]).
    own: Vec<(InternedScheduleLabel, usize)>,
    /// Whether the run's first step (through `App::update`, which also runs the startup
    /// schedules) is done.
    started: bool,
    /// How the next steps run; `None` until worked out at the next step (after the app or world
    /// was lent out, which may add systems).
    driver: Option<Driver>,
}

/// How a step runs once the run has started.
#[derive(Clone, Debug, PartialEq)]
enum Driver {
    /// Bevy's whole `App::update`: systems were added to a schedule a direct step leaves out.
    Update,
    /// `First`, then these schedules of the fixed step (those with systems), in order.
    Direct(Vec<InternedScheduleLabel>),
}

impl Driver {
    /// The driver `cached` holds, worked out for `world` first if it holds none.
    fn worked_out<'a>(
        cached: &'a mut Option<Driver>,
        world: &World,
        own: &[(InternedScheduleLabel, usize)],
    ) -> &'a Driver {
        cached.get_or_insert_with(|| Driver::of(world, own))
    }

    /// The driver for `world`, whose left-out schedules had `own` systems at the start.
    fn of(world: &World, own: &[(InternedScheduleLabel, usize)]) -> Driver {
        if left_out(world) != own {
            return Driver::Update;
        }
        let schedules = world.resource::<Schedules>();
        let fixed = world.resource::<FixedMainScheduleOrder>().labels.iter();
        Driver::Direct(
            fixed
                .copied()
                .filter(|&label| schedules.get(label).is_some_and(|s| systems_in(s) > 0))
                .collect(),
        )
    }
}

/// The schedules `App::update` runs that a direct step leaves out (all of Bevy's frame but
/// `First`, and the fixed loop's own `FixedMain`, whose schedules it runs itself), each with
/// how many systems it has ([`systems_in`]).
fn left_out(world: &World) -> Vec<(InternedScheduleLabel, usize)> {
    let schedules = world.resource::<Schedules>();
    let main = world.resource::<MainScheduleOrder>().labels.iter().copied();
    main.filter(|&label| label != First.intern())
        .chain([FixedMain.intern()])
        .map(|label| (label, schedules.get(label).map_or(0, systems_in)))
        .collect()
}

/// The systems of a schedule: once it has run, those it was built with and those added since
/// (which `Schedule::systems_len` leaves out until its next run builds them in).
fn systems_in(schedule: &Schedule) -> usize {
    let added = schedule.graph().systems().count();
    match schedule.systems() {
        Ok(built) => built.count() + added,
        Err(_) => added,
    }
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
        let own = left_out(app.world());
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
        Self {
            app,
            dt,
            own,
            started: false,
            driver: None,
        }
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

    /// Runs exactly one simulation step (the first also starts the run). The first goes
    /// through Bevy's `App::update` (startup schedules, the clocks' first tick); the others run
    /// only what a headless step needs: `First` (the clocks, event buffers, the config's `dt`),
    /// the fixed step's schedules that have systems (`FixedUpdate` and the rest of
    /// `FixedMain`'s order) and `World::clear_trackers`, which is what `App::update` ends with.
    /// Bevy's other schedules of a frame (`PreUpdate`, `Update`, `PostUpdate`, `Last`, …) hold
    /// nothing of the simulation's and are left out (their bookkeeping was about a microsecond
    /// a step, a twenty-fifth of a 130-boid step; `FrameCount`, counted in `Last`, then stays
    /// put). A system added to one of them (through [`Simulation::with`],
    /// [`Simulation::app_mut`] or [`Simulation::world_mut`]) puts every later step back through
    /// `App::update`, so it runs once a step as before. A direct step moves the fixed clock on by
    /// exactly one timestep, also when the config's `dt` was changed during the run.
    pub fn step(&mut self) {
        if self.started
            && let Driver::Direct(fixed) =
                Driver::worked_out(&mut self.driver, self.app.world(), &self.own)
        {
            let world = self.app.world_mut();
            world.run_schedule(First);
            run_fixed_step(world, |world| {
                for &label in fixed.iter() {
                    world.run_schedule(label);
                }
            });
            world.clear_trackers();
            return;
        }
        let before = self.app.world().resource::<Time<Fixed>>().elapsed();
        // Time's very first update has zero delta; at most one extra update is needed.
        for _ in 0..3 {
            self.app.update();
            if self.app.world().resource::<Time<Fixed>>().elapsed() > before {
                self.started = true;
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
        self.driver = None;
        self.app.world_mut()
    }

    /// The app, to add systems or plugins before stepping.
    pub fn app_mut(&mut self) -> &mut App {
        self.driver = None;
        &mut self.app
    }

    /// Whether the steps after the first run only the schedules a headless step needs, rather
    /// than Bevy's whole `App::update` (see [`Simulation::step`]). Worked out again after each
    /// use of [`Simulation::app_mut`] or [`Simulation::world_mut`] (a few map lookups).
    pub fn steps_directly(&mut self) -> bool {
        *Driver::worked_out(&mut self.driver, self.app.world(), &self.own) != Driver::Update
    }
}
