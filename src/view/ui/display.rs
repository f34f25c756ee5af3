//! Panel section: what the world view shows — overlays (contact radii, FOV cones, velocities,
//! the spatial index, recent transmissions), following the selection, fitting the world, a
//! screenshot, the help, and the colour legend.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_egui::egui;

use super::color32;
use crate::sim::config::SimConfig;
use crate::sim::swarm::Swarm;
use crate::view::camera::CameraView;
use crate::view::input::Action;
use crate::view::overlays::Overlays;
use crate::view::recording::{RECORD_FPS, RecordRequest};
use crate::view::render::{PREDATOR_COLOUR, Tint, boid_colour};
use crate::view::transmissions::{
    INFECTEE_COLOUR, INFECTOR_COLOUR, RECENT_COLOUR, TransmissionLines,
};

/// What the display section edits.
#[derive(SystemParam)]
pub(super) struct Display<'w> {
    overlays: ResMut<'w, Overlays>,
    lines: ResMut<'w, TransmissionLines>,
    record: ResMut<'w, RecordRequest>,
    view: ResMut<'w, CameraView>,
    config: Res<'w, SimConfig>,
}

/// A legend entry: a small triangle in `color`, then `text`.
fn swatch(ui: &mut egui::Ui, color: Color, text: &str) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
    let c = rect.center();
    ui.painter().add(egui::Shape::convex_polygon(
        vec![
            c + egui::vec2(6.0, 0.0),
            c + egui::vec2(-5.0, 4.0),
            c + egui::vec2(-5.0, -4.0),
        ],
        color32(color),
        egui::Stroke::NONE,
    ));
    ui.label(text);
}

/// Draws the display section.
pub(super) fn show(ui: &mut egui::Ui, d: &mut Display, actions: &mut EventWriter<Action>) {
    ui.horizontal_wrapped(|ui| {
        ui.checkbox(&mut d.overlays.radii, "contact radii");
        ui.checkbox(&mut d.overlays.fov, "FOV cones");
        ui.checkbox(&mut d.overlays.velocity, "velocities");
        ui.checkbox(&mut d.overlays.index, "spatial index");
    });
    ui.horizontal_wrapped(|ui| {
        ui.checkbox(&mut d.lines.recent, "transmissions of the last");
        ui.add(
            egui::DragValue::new(&mut d.lines.seconds)
                .range(0.5..=600.0)
                .speed(0.5)
                .suffix(" s"),
        );
    });
    ui.horizontal_wrapped(|ui| {
        ui.checkbox(&mut d.view.follow, "follow selected (F)");
        if ui.button("Fit world (Home)").clicked() {
            actions.write(Action::FitWorld);
        }
        if ui.button("Screenshot (F12)").clicked() {
            actions.write(Action::Screenshot);
        }
        if cfg!(not(target_arch = "wasm32")) {
            ui.checkbox(&mut d.record.on, "record GIF")
                .on_hover_text(format!(
                    "{RECORD_FPS} frames per simulated second, drawn like `run --video` with the \
                 overlays on now; saved in the working folder when you untick it"
                ));
        }
        if d.record.on {
            ui.label(
                egui::RichText::new(format!("● {} frames", d.record.frames))
                    .color(egui::Color32::from_rgb(230, 60, 60)),
            );
        }
        if ui.button("Keys (H)").clicked() {
            actions.write(Action::ToggleHelp);
        }
    });
    ui.horizontal_wrapped(|ui| {
        for swarm in Swarm::ALL {
            swatch(ui, boid_colour(swarm, Tint::Healthy), swarm.label());
        }
        swatch(ui, boid_colour(Swarm::Normal, Tint::Infected), "infected");
        swatch(ui, boid_colour(Swarm::Normal, Tint::Recovered), "recovered");
        swatch(ui, INFECTOR_COLOUR, "chain: infector");
        swatch(ui, INFECTEE_COLOUR, "chain: infectees");
        swatch(ui, RECENT_COLOUR, "transmission");
        if d.config.predators.count > 0 {
            swatch(ui, PREDATOR_COLOUR, "predator");
        }
    });
}
