//! pandemic-boids: a 2D pandemic simulation of boid swarms on the Bevy ECS.
//!
//! The crate root only assembles: [`SimPlugin`] (in `sim`) holds everything that simulates (it
//! runs under `MinimalPlugins`), [`ViewPlugin`] (in `view`) everything that draws,
//! [`PanelsPlugin`] the part of the view that needs no renderer, and [`app`] puts them together
//! into the interactive app. The phases of a step and their order live in [`sim::schedule`].
//! [`cli`] is the whole command-line tool as a function (`cli::main_with` adds your systems).

// Bevy systems take many parameters and nested query types by design.
#![allow(clippy::type_complexity, clippy::too_many_arguments)]
// Tests build configs by changing a few fields of the defaults.
#![cfg_attr(test, allow(clippy::field_reassign_with_default))]

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(not(target_arch = "wasm32"))]
pub mod fonts;
#[cfg(not(target_arch = "wasm32"))]
pub mod png;
pub mod run;
pub mod sim;
pub mod view;

use bevy::prelude::*;
use bevy::window::WindowResolution;

pub use sim::SimPlugin;
pub use sim::schedule::{
    IntegrateSystems, PopulationSystems, SimSystems, SteerSystems, ViewSystems,
};
pub use view::{PanelsPlugin, ViewPlugin};

use crate::sim::config::SimConfig;
use crate::sim::parallel::task_pools;

/// Opens the interactive window on `config`, which started from shipped scenario `scenario`
/// (what "copy link" names), and runs until it is closed.
pub fn run_app(config: SimConfig, scenario: &str) {
    app(config, scenario).run();
}

/// The interactive app, not yet running. In a browser the window is the page's
/// `<canvas id="bevy">`, sized to its parent.
pub fn app(config: SimConfig, scenario: &str) -> App {
    let window = Window {
        title: "pandemic-boids".into(),
        resolution: WindowResolution::new(1600.0, 900.0),
        #[cfg(target_arch = "wasm32")]
        canvas: Some("#bevy".into()),
        #[cfg(target_arch = "wasm32")]
        fit_canvas_to_parent: true,
        ..default()
    };
    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(task_pools(None)).set(WindowPlugin {
        primary_window: Some(window),
        ..default()
    }))
    .add_plugins((SimPlugin { config }, ViewPlugin))
    .insert_resource(view::link::CurrentScenario(scenario.to_string()));
    app
}
