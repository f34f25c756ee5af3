//! pandemic-boids: a 2D pandemic simulation of boid swarms on the Bevy ECS.
//!
//! [`SimPlugin`] holds everything that simulates (it runs under `MinimalPlugins`); [`ViewPlugin`]
//! holds everything that draws. This file is the one place where the phases of a simulation
//! step are ordered.

// Bevy systems take many parameters and nested query types by design.
#![allow(clippy::type_complexity, clippy::too_many_arguments)]
// Tests build configs by changing a few fields of the defaults.
#![cfg_attr(test, allow(clippy::field_reassign_with_default))]

#[cfg(not(target_arch = "wasm32"))]
pub mod fonts;
pub mod run;
pub mod sim;
pub mod view;

use bevy::prelude::*;

use crate::sim::clock::stepping;
use crate::sim::config::SimConfig;

/// Phases of one simulation step (in `FixedUpdate`), in order. New phases are added here and
/// nowhere else; a new system joins one of them with `.in_set(SimSystems::…)`.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SimSystems {
    /// Start a run when one is requested: despawn, reseed, spawn the initial population.
    Spawn,
    /// Copy the ECS into the step's snapshot and rebuild the neighbour index from it.
    Index,
    /// Sample metrics of the state at the start of the step, when a sample is due.
    Record,
    /// Perception that steering depends on (predator fear, doctor targets).
    Sense,
    /// Steering accelerations into each boid's `Steering` (flocking, seek, flee, noise).
    Steer,
    /// Integrate velocity and position with the step's dt; apply the boundary.
    Integrate,
    /// Infection, cure, death and immunity, decided on the state at the start of the step.
    Epidemic,
    /// Births, aging, promotion to doctor, predator catches.
    Population,
    /// Advance the simulation clock by dt.
    Advance,
}

/// The steering contributions of [`SimSystems::Steer`], in order. Each writes its own field of
/// `Steering`; the order makes a step's schedule the same on every run.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SteerSystems {
    /// Separation, alignment, cohesion and noise (`Steering::flocking`, `::noise`).
    Flocking,
    /// Doctors seeking the infected (`Steering::seek`).
    Seek,
    /// Antivax boids fleeing doctors (`Steering::repulsion`).
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

/// The two parts of [`SimSystems::Population`], in order: aging, births and promotions, then
/// predator catches (both count into the run's `Tally`).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PopulationSystems {
    /// Aging, births, promotion to doctor.
    Life,
    /// Predators catch boids.
    Catches,
}

/// The phases of a step after this one run only when the step moves the world (not on the
/// final observation of a run, see `StepMode`).
const MOVING_PHASES: [SimSystems; 6] = [
    SimSystems::Sense,
    SimSystems::Steer,
    SimSystems::Integrate,
    SimSystems::Epidemic,
    SimSystems::Population,
    SimSystems::Advance,
];

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

/// Everything that simulates. Needs `Time` (e.g. from `MinimalPlugins` or `DefaultPlugins`).
pub struct SimPlugin {
    /// The run's configuration (becomes the `SimConfig` resource).
    pub config: SimConfig,
}

impl Plugin for SimPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(self.config.clone())
            .register_type::<SimConfig>()
            .insert_resource(Time::<Fixed>::from_seconds(self.config.dt))
            .configure_sets(
                FixedUpdate,
                (
                    SimSystems::Spawn,
                    SimSystems::Index,
                    SimSystems::Record,
                    SimSystems::Sense,
                    SimSystems::Steer,
                    SimSystems::Integrate,
                    SimSystems::Epidemic,
                    SimSystems::Population,
                    SimSystems::Advance,
                )
                    .chain(),
            )
            .configure_sets(
                FixedUpdate,
                (
                    SteerSystems::Flocking,
                    SteerSystems::Seek,
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
                (PopulationSystems::Life, PopulationSystems::Catches)
                    .chain()
                    .in_set(SimSystems::Population),
            )
            .add_plugins(sim::plugin);
        for phase in MOVING_PHASES {
            app.configure_sets(FixedUpdate, phase.run_if(stepping));
        }
    }
}

/// Everything that draws and takes input: sprites, camera, egui panels.
pub struct ViewPlugin;

impl Plugin for ViewPlugin {
    fn build(&self, app: &mut App) {
        order_view_systems(app);
        app.add_plugins(view::plugin);
    }
}

/// The panels, run controls, input and selection without anything that draws the world: what
/// [`ViewPlugin`] adds besides rendering. Runs headless once `bevy_egui`'s `EguiPlugin` and a
/// primary egui context exist — how the tests press keys and check the panels.
pub struct PanelsPlugin;

impl Plugin for PanelsPlugin {
    fn build(&self, app: &mut App) {
        order_view_systems(app);
        app.add_plugins(view::panels);
    }
}

fn order_view_systems(app: &mut App) {
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
