//! The schedule: every system set of the program and the one place they are ordered. A
//! simulation step runs in `FixedUpdate` through the phases of [`SimSystems`], in this order:
//!
//! 1. [`SimSystems::Spawn`] — start a run when one is requested (despawn, reseed, spawn).
//! 2. [`SimSystems::Intervene`] — interventions start, act and end at the step boundary.
//! 3. [`SimSystems::Index`] — copy the ECS into the step's snapshot; rebuild the neighbour
//!    index from it.
//! 4. [`SimSystems::Sample`] — sample metrics and the epidemic's peak of the state at the
//!    start of the step, when a sample is due.
//! 5. [`SimSystems::Sense`] — perception steering depends on (predator fear, and each
//!    boid's flight from it).
//! 6. [`SimSystems::Steer`] — steering accelerations added up in `Steering`, in the order of
//!    [`SteerSystems`]: flocking, doctors' seek, Antivax repulsion, flight from predators (and,
//!    after flocking, the epidemic's decisions handed to an idle worker).
//! 7. [`SimSystems::Integrate`] — boids move, then predators ([`IntegrateSystems`]).
//! 8. [`SimSystems::Epidemic`] — infection, cure, death, recovery and waning immunity,
//!    decided on the state at the start of the step.
//! 9. [`SimSystems::Population`] — predator catches, then aging, births and promotion
//!    ([`PopulationSystems`]: a boid caught in a step does not breed in it).
//! 10. [`SimSystems::Log`] — the step's events into the run's logs (who infected whom).
//! 11. [`SimSystems::Advance`] — the clock moves on by dt.
//!
//! Phases 2 and 5–11 run only when the step moves the world (not on a run's final observation, see
//! `StepMode`). The view's frame runs in `Update` through [`ViewSystems`]. New phases are added
//! here and nowhere else; a system joins one with `.in_set(SimSystems::…)`. No systems live
//! here.

use bevy::prelude::*;

/// Whether the next steps move the world or only observe it.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepMode {
    /// The normal step: every phase runs.
    #[default]
    Full,
    /// Index and sample a final observation of the current state, without moving (the end of
    /// a run).
    Observe,
}

/// Run condition: the step moves the world.
pub fn stepping(mode: Res<StepMode>) -> bool {
    *mode == StepMode::Full
}

/// Phases of one simulation step (in `FixedUpdate`), in order.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SimSystems {
    /// 1. Start a run when one is requested: despawn, reseed, spawn the initial population.
    Spawn,
    /// 2. Interventions start, act and end (docs/model.md §11), before the step's snapshot.
    Intervene,
    /// 3. Copy the ECS into the step's snapshot and rebuild the neighbour index from it.
    Index,
    /// 4. Sample metrics of the state at the start of the step, when a sample is due.
    Sample,
    /// 5. Perception that steering depends on (predator fear and its weight gain).
    Sense,
    /// 6. Steering accelerations added up in `Steering` (flocking, seek, repulsion, flight).
    Steer,
    /// 7. Integrate velocity and position with the step's dt; apply the boundary.
    Integrate,
    /// 8. Infection, cure, death and immunity, decided on the state at the start of the step.
    Epidemic,
    /// 9. Predator catches, then aging, births and promotion to doctor.
    Population,
    /// 10. The step's events into the run's logs, so every log agrees with the world at the
    ///     end of the step.
    Log,
    /// 11. Advance the simulation clock by dt.
    Advance,
}

/// The steering contributions of [`SimSystems::Steer`], in order: flocking starts each boid's
/// sum in `Steering` and the others add their parts to it, so the order fixes how a boid's
/// acceleration is rounded. A new force joins after `Flee` (or in a new variant here).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SteerSystems {
    /// Separation, alignment, cohesion and noise (they start the sums).
    Flocking,
    /// Work handed to an idle worker thread while the calling thread steers and moves the
    /// boids (the epidemic's decisions, which read only the state at the start of the step):
    /// started once flocking, which needs every thread, is done. It adds no steering.
    Aside,
    /// Doctors seeking the infected.
    Seek,
    /// Antivax boids fleeing doctors.
    Repulsion,
    /// Boids fleeing predators (their fear is sensed in [`SimSystems::Sense`]).
    Flee,
}

/// The two parts of [`SimSystems::Integrate`], in order: boids move, then predators (both
/// write `Position` and `Velocity`, of different entities).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntegrateSystems {
    /// Boids move.
    Boids,
    /// Predators move.
    Predators,
}

/// The two parts of [`SimSystems::Population`], in order: predator catches, then aging,
/// births and promotions — so a boid caught in a step does not breed in it (both count into
/// the run's `Tally`).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PopulationSystems {
    /// Predators catch boids.
    Catches,
    /// Aging, births, promotion to doctor.
    Life,
}

/// What the view does each frame (in `Update`), in order. The egui panels draw afterwards, in
/// bevy_egui's own pass.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViewSystems {
    /// Where the cursor is in the world.
    Pointer,
    /// Keys and mouse drags become actions and drag state.
    Input,
    /// Actions are carried out (run controls, files, camera and selection requests).
    Control,
    /// The camera pans, zooms, fits and follows.
    Camera,
    /// Clicks select a boid.
    Select,
    /// Boids, predators and overlays are drawn.
    Draw,
}

/// The phases that run only when the step moves the world.
const MOVING_PHASES: [SimSystems; 8] = [
    SimSystems::Intervene,
    SimSystems::Sense,
    SimSystems::Steer,
    SimSystems::Integrate,
    SimSystems::Epidemic,
    SimSystems::Population,
    SimSystems::Log,
    SimSystems::Advance,
];

/// Orders the simulation's phases and their parts in `FixedUpdate`.
pub fn order_simulation(app: &mut App) {
    app.init_resource::<StepMode>()
        .configure_sets(
            FixedUpdate,
            (
                SimSystems::Spawn,
                SimSystems::Intervene,
                SimSystems::Index,
                SimSystems::Sample,
                SimSystems::Sense,
                SimSystems::Steer,
                SimSystems::Integrate,
                SimSystems::Epidemic,
                SimSystems::Population,
                SimSystems::Log,
                SimSystems::Advance,
            )
                .chain(),
        )
        .configure_sets(
            FixedUpdate,
            (
                SteerSystems::Flocking,
                SteerSystems::Aside,
                SteerSystems::Seek,
                SteerSystems::Repulsion,
                SteerSystems::Flee,
            )
                .chain()
                .in_set(SimSystems::Steer),
        )
        .configure_sets(
            FixedUpdate,
            (IntegrateSystems::Boids, IntegrateSystems::Predators)
                .chain()
                .in_set(SimSystems::Integrate),
        )
        .configure_sets(
            FixedUpdate,
            (PopulationSystems::Catches, PopulationSystems::Life)
                .chain()
                .in_set(SimSystems::Population),
        );
    for phase in MOVING_PHASES {
        app.configure_sets(FixedUpdate, phase.run_if(stepping));
    }
}

/// Orders the view's frame in `Update`.
pub fn order_view(app: &mut App) {
    app.configure_sets(
        Update,
        (
            ViewSystems::Pointer,
            ViewSystems::Input,
            ViewSystems::Control,
            ViewSystems::Camera,
            ViewSystems::Select,
            ViewSystems::Draw,
        )
            .chain(),
    );
}
