//! The simulation clock: step count and simulated time, advanced by the step's `Time::delta` in
//! `SimSystems::Advance`, and the rule for timed events.

use bevy::ecs::event::EventUpdates;
use bevy::prelude::*;

use crate::sim::agent::RunStarted;
use crate::sim::config::SimConfig;
use crate::sim::schedule::SimSystems;

/// Step counter and simulated time. During a step `time` is the time at the step's start.
#[derive(
    Resource, Reflect, Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize,
)]
#[reflect(Resource)]
pub struct SimClock {
    /// Steps completed since the run started.
    pub step: u64,
    /// Simulated seconds since the run started.
    pub time: f64,
}

/// Whether a timed event due at `due` (s) fires in the step that ends at `step_end` (docs/model.md
/// §5.2): events fire at the first step end at or after their due time, with a tolerance of half a
/// step, so the realised period is the same at any dt — rounding of dt (it is stored in whole
/// nanoseconds) never adds a whole step. An infinite due time never fires.
#[inline]
pub fn is_due(due: f64, step_end: f64, dt: f64) -> bool {
    step_end >= due - 0.5 * dt
}

pub(super) fn plugin(app: &mut App) {
    app.register_type::<SimClock>()
        .init_resource::<SimClock>()
        .add_observer(|_: Trigger<RunStarted>, mut clock: ResMut<SimClock>| {
            *clock = SimClock::default();
        })
        .add_systems(FixedUpdate, advance_clock.in_set(SimSystems::Advance))
        // After the event buffers' swap (an exclusive system, so the two must be ordered).
        .add_systems(First, follow_config_dt.after(EventUpdates));
}

/// Keeps the fixed timestep equal to the config's `dt` when it is edited live. In `First`, which
/// every frame of the window and every headless step runs before the fixed step (a headless
/// step runs no other schedule of Bevy's frame, see `run::Simulation::step`).
fn follow_config_dt(config: Res<SimConfig>, mut fixed: ResMut<Time<Fixed>>) {
    if config.is_changed() && (fixed.timestep().as_secs_f64() - config.dt).abs() > 1e-12 {
        fixed.set_timestep_seconds(config.dt);
    }
}

/// Runs one fixed step of the fixed clock's timestep: the fixed clock moves on by it, `Time` is
/// the fixed clock's while `run` runs the step's schedules and the virtual clock's again after,
/// as in Bevy's own fixed loop. The window's step buttons and timeline and the headless driver
/// step through it.
pub fn run_fixed_step(world: &mut World, run: impl FnOnce(&mut World)) {
    let mut fixed = world.resource_mut::<Time<Fixed>>();
    let step = fixed.timestep();
    fixed.advance_by(step);
    let generic = fixed.as_generic();
    *world.resource_mut::<Time>() = generic;
    run(world);
    let generic = world.resource::<Time<Virtual>>().as_generic();
    *world.resource_mut::<Time>() = generic;
}

fn advance_clock(time: Res<Time>, mut clock: ResMut<SimClock>) {
    clock.step += 1;
    clock.time += time.delta_secs_f64();
}
