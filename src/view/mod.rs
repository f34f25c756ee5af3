//! Everything that draws and takes input: the window, the camera, boid visuals. The simulation
//! never depends on anything here.

pub mod render;

use bevy::prelude::*;
use bevy::window::WindowResolution;

use crate::run::task_pools;
use crate::sim::config::SimConfig;
use crate::{SimPlugin, ViewPlugin};

pub(super) fn plugin(app: &mut App) {
    app.add_plugins(render::plugin);
}

/// Opens the interactive window on `config` and runs until it is closed.
pub fn run_app(config: SimConfig) {
    App::new()
        .add_plugins(
            DefaultPlugins
                .set(task_pools(None))
                .set(WindowPlugin {
                    primary_window: Some(Window {
                        title: "pandemic-boids".into(),
                        resolution: WindowResolution::new(1600.0, 900.0),
                        ..default()
                    }),
                    ..default()
                }),
        )
        .add_plugins((SimPlugin { config }, ViewPlugin))
        .run();
}
