//! pandemic-boids: a 2D pandemic simulation of boid swarms on the Bevy ECS.
//!
//! [`SimPlugin`] holds everything that simulates (it runs under `MinimalPlugins`); [`ViewPlugin`]
//! holds everything that draws. This file is the one place where the phases of a simulation
//! step are ordered.

// Bevy systems take many parameters and nested query types by design.
#![allow(clippy::type_complexity, clippy::too_many_arguments)]
// Tests build configs by changing a few fields of the defaults.
#![cfg_attr(test, allow(clippy::field_reassign_with_default))]

pub mod run;
pub mod sim;
pub mod view;

use bevy::prelude::*;

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
            .add_plugins(sim::plugin);
    }
}

/// Everything that draws and takes input: sprites, camera, egui panels.
pub struct ViewPlugin;

impl Plugin for ViewPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(view::plugin);
    }
}
