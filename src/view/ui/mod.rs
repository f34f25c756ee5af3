//! The egui panels. Left: run controls, live counts, whole-run plots, interventions (the
//! scenario's, with switches, and "apply now"), every parameter (built
//! from the config's key table), scenario load/save and metrics export, and what the world view
//! shows — one function per section, each with the `SystemParam` it reads. Right: the
//! inspector of the selected boid and a world browser. Plus the keyboard help. The panels
//! collapse (Tab) and the camera is fitted to the area they leave free. Runs in bevy_egui's
//! `EguiPrimaryContextPass`, which ends by handing keyboard focus back unless a text field
//! holds it (so shortcuts keep working).

mod controls;
mod counts;
mod display;
mod files;
pub mod help;
mod inspector;
mod interventions;
pub mod parameters;
mod plots;

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

pub use files::{FilesState, scenario_files};

use crate::view::camera::CameraView;
use crate::view::control::RunControl;
use crate::view::input::{Action, release_widget_focus};

/// Width the left panel starts at, logical px.
const LEFT_WIDTH: f32 = 340.0;
/// Width the right panel starts at, logical px.
const RIGHT_WIDTH: f32 = 310.0;

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<FilesState>()
        .add_systems(Update, inspector::name_boids)
        .add_systems(
            EguiPrimaryContextPass,
            (
                left_panel,
                inspector::inspector_panel,
                help::help_window,
                record_free_area,
                release_widget_focus,
            )
                .chain(),
        );
}

/// egui colour of a bevy colour.
fn color32(c: Color) -> egui::Color32 {
    let s = c.to_srgba();
    egui::Color32::from_rgb(
        (s.red * 255.0) as u8,
        (s.green * 255.0) as u8,
        (s.blue * 255.0) as u8,
    )
}

/// The left panel, section by section (or, while the panels are hidden, the button that
/// brings them back).
fn left_panel(
    mut contexts: EguiContexts,
    control: Res<RunControl>,
    mut actions: EventWriter<Action>,
    mut run: controls::Controls,
    counts: counts::Counts,
    mut plots: plots::Plots,
    mut parameters: parameters::Parameters,
    mut interventions: interventions::Interventions,
    mut files: files::Files,
    mut display: display::Display,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    run.tick();
    if !control.panels {
        egui::Area::new("reopen".into())
            .fixed_pos(egui::pos2(8.0, 8.0))
            .show(ctx, |ui| {
                if ui.button("☰ panels (Tab)").clicked() {
                    actions.write(Action::TogglePanels);
                }
            });
        return Ok(());
    }
    egui::SidePanel::left("controls")
        .resizable(true)
        .default_width(LEFT_WIDTH)
        .show(ctx, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                ui.heading("pandemic-boids");
                if let Some(m) = run.status() {
                    ui.label(egui::RichText::new(m).italics());
                }
                ui.separator();
                controls::show(ui, &run, &mut actions);
                ui.separator();
                counts::show(ui, &counts);
                egui::CollapsingHeader::new("Plots")
                    .default_open(true)
                    .show(ui, |ui| plots::show(ui, &mut plots));
                egui::CollapsingHeader::new("Interventions (what if?)")
                    .default_open(false)
                    .show(ui, |ui| interventions::show(ui, &mut interventions));
                egui::CollapsingHeader::new("Parameters")
                    .default_open(false)
                    .show(ui, |ui| parameters::show(ui, &mut parameters));
                egui::CollapsingHeader::new("Scenario & files")
                    .default_open(false)
                    .show(ui, |ui| files::show(ui, &mut files, &mut actions));
                egui::CollapsingHeader::new("View")
                    .default_open(true)
                    .show(ui, |ui| display::show(ui, &mut display, &mut actions));
            });
        });
    Ok(())
}

/// Tells the camera which part of the window the panels leave free, so "fit" fits there.
fn record_free_area(mut contexts: EguiContexts, mut view: ResMut<CameraView>) -> Result {
    let free = contexts.ctx_mut()?.available_rect();
    view.free_rect = Some(Rect::new(free.min.x, free.min.y, free.max.x, free.max.y));
    Ok(())
}
