//! Everything that draws and takes input: the window, camera, boid visuals, overlays, selection,
//! transmission chains, run controls and the egui panels. The simulation never depends on anything
//! here.

pub mod camera;
pub mod control;
pub mod input;
pub mod link;
pub mod overlays;
pub mod params;
pub mod recording;
pub mod render;
pub mod select;
pub mod timeline;
pub mod timing;
pub mod transmissions;
pub mod ui;
#[cfg(not(target_arch = "wasm32"))]
pub mod video;
#[cfg(target_arch = "wasm32")]
pub mod web;

use bevy::prelude::*;
use bevy_egui::EguiPlugin;
use bevy_inspector_egui::DefaultInspectorConfigPlugin;

use crate::sim::schedule::order_view;
use crate::sim::steering::Steering;

/// Everything that draws and takes input: sprites, camera, egui panels.
pub struct ViewPlugin;

impl Plugin for ViewPlugin {
    fn build(&self, app: &mut App) {
        order_view(app);
        app.add_plugins(plugin);
    }
}

/// The panels, run controls, input and selection without anything that draws the world: what
/// [`ViewPlugin`] adds besides rendering. Runs headless once `bevy_egui`'s `EguiPlugin` and a
/// primary egui context exist — how the tests press keys and check the panels.
pub struct PanelsPlugin;

impl Plugin for PanelsPlugin {
    fn build(&self, app: &mut App) {
        order_view(app);
        app.add_plugins(panels);
    }
}

/// Everything that draws: egui, the camera, boid visuals, overlays, plus [`panels`].
fn plugin(app: &mut App) {
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
fn panels(app: &mut App) {
    // The inspector shows the selected boid's steering part by part.
    app.insert_resource(Steering::keeping_parts())
        .init_resource::<overlays::Overlays>()
        .init_resource::<link::CurrentScenario>()
        .init_resource::<transmissions::TransmissionLines>()
        .init_resource::<camera::CameraView>()
        .add_plugins((
            input::plugin,
            select::plugin,
            control::plugin,
            params::plugin,
            recording::plugin,
            timing::plugin,
            timeline::plugin,
            ui::plugin,
        ));
}
