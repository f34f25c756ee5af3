//! Everything that draws and takes input: the window, camera, boid visuals, overlays, selection,
//! transmission chains, run controls and the egui panels. The simulation never depends on anything here.

pub mod camera;
pub mod control;
pub mod input;
pub mod link;
pub mod overlays;
pub mod params;
pub mod record;
pub mod render;
pub mod select;
pub mod timing;
pub mod transmissions;
pub mod ui;
#[cfg(not(target_arch = "wasm32"))]
pub mod video;
#[cfg(target_arch = "wasm32")]
pub mod web;

use bevy::prelude::*;
use bevy::window::WindowResolution;
use bevy_egui::EguiPlugin;
use bevy_inspector_egui::DefaultInspectorConfigPlugin;

use crate::sim::config::SimConfig;
use crate::sim::parallel::task_pools;
use crate::{SimPlugin, ViewPlugin};

/// Everything that draws: egui, the camera, boid visuals, overlays, plus [`panels`].
pub(super) fn plugin(app: &mut App) {
    app.add_plugins((EguiPlugin::default(), DefaultInspectorConfigPlugin))
        .add_plugins((
            camera::plugin,
            render::plugin,
            overlays::plugin,
            transmissions::plugin,
            panels,
        ));
}

/// Input, run controls, selection, parameter edits and the egui panels — what needs no
/// renderer, so it also runs headless (given an egui context; tests drive the panels so).
pub(super) fn panels(app: &mut App) {
    app.init_resource::<overlays::Overlays>()
        .init_resource::<link::CurrentScenario>()
        .init_resource::<transmissions::TransmissionLines>()
        .init_resource::<camera::CameraView>()
        .add_plugins((
            input::plugin,
            select::plugin,
            control::plugin,
            params::plugin,
            record::plugin,
            timing::plugin,
            ui::plugin,
        ));
}

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
    .insert_resource(link::CurrentScenario(scenario.to_string()));
    app
}
