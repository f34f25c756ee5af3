//! The keyboard and mouse help window (H or ?).

use bevy::prelude::*;
use bevy_egui::{EguiContexts, egui};

use crate::view::control::RunControl;

/// Every shortcut and mouse gesture, as the help window lists them.
pub const SHORTCUTS: [(&str, &str); 17] = [
    ("Space", "pause / resume"),
    ("S", "one step (pauses)"),
    ("Shift+S", "one step back (timeline)"),
    ("Left / Right arrow", "one second back / forward (timeline)"),
    ("R / Shift+R", "reset with the same / a new seed"),
    ("+ / −", "speed ×0.25 … ×8"),
    ("click", "select the nearest boid"),
    ("Esc", "clear the selection"),
    (
        "I",
        "select the infected boid that has infected the most (again: the next)",
    ),
    ("drag", "pan"),
    ("wheel", "zoom at the cursor"),
    ("F", "follow the selected boid"),
    ("Home", "fit the world"),
    ("Tab", "show / hide the panels"),
    ("E", "export metrics CSV"),
    ("F12", "screenshot (PNG in the working folder)"),
    ("H or ?", "this help"),
];

/// Shows the help window while `RunControl::show_help` is set.
pub(super) fn help_window(mut contexts: EguiContexts, mut control: ResMut<RunControl>) -> Result {
    if !control.show_help {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?;
    let mut open = true;
    egui::Window::new("Keyboard and mouse")
        .open(&mut open)
        .collapsible(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::vec2(0.0, 0.0))
        .show(ctx, |ui| {
            egui::Grid::new("keys").striped(true).show(ui, |ui| {
                for (k, what) in SHORTCUTS {
                    ui.strong(k);
                    ui.label(what);
                    ui.end_row();
                }
            });
        });
    if !open {
        control.show_help = false;
    }
    Ok(())
}
