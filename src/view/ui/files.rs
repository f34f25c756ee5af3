//! Panel section: scenario and files — load any shipped scenario (sub-folders included), save
//! the current config as a scenario file, export the metrics so far.

use std::path::{Path, PathBuf};

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_egui::egui;

use crate::sim::config::scenarios_dir;
use crate::view::input::Action;

/// Panel state of the files section.
#[derive(Resource, Debug)]
pub struct FilesState {
    /// Where "Save config" writes.
    pub save_path: String,
    /// Scenario files found under `assets/scenarios`.
    pub scenarios: Vec<PathBuf>,
    /// The one chosen in the combo box.
    pub chosen: usize,
}

impl Default for FilesState {
    fn default() -> Self {
        Self {
            save_path: "my-scenario.toml".into(),
            scenarios: scenario_files(&scenarios_dir()),
            chosen: 0,
        }
    }
}

/// The `.toml` files in a folder and its sub-folders (matrix/, regimes/), sorted.
pub fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            out.extend(scenario_files(&path));
        } else if path.extension().is_some_and(|x| x == "toml") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// What the files section edits.
#[derive(SystemParam)]
pub(super) struct Files<'w> {
    state: ResMut<'w, FilesState>,
}

/// Draws the files section.
pub(super) fn show(ui: &mut egui::Ui, f: &mut Files, actions: &mut EventWriter<Action>) {
    let state = &mut *f.state;
    if !state.scenarios.is_empty() {
        ui.horizontal(|ui| {
            // Shown relative to assets/scenarios (e.g. matrix/B2_D2.toml).
            let root = scenarios_dir();
            let name = |p: &PathBuf| {
                p.strip_prefix(&root)
                    .unwrap_or(p)
                    .to_string_lossy()
                    .into_owned()
            };
            state.chosen = state.chosen.min(state.scenarios.len() - 1);
            egui::ComboBox::from_id_salt("scenario")
                .selected_text(name(&state.scenarios[state.chosen]))
                .show_ui(ui, |ui| {
                    for (k, p) in state.scenarios.iter().enumerate() {
                        ui.selectable_value(&mut state.chosen, k, name(p));
                    }
                });
            if ui
                .button("Load")
                .on_hover_text("replaces every parameter and restarts")
                .clicked()
            {
                actions.write(Action::LoadScenario(state.scenarios[state.chosen].clone()));
            }
        });
    }
    ui.horizontal(|ui| {
        ui.add(egui::TextEdit::singleline(&mut state.save_path).desired_width(170.0));
        if ui
            .button("Save config")
            .on_hover_text("pandemic-boids run --scenario <file> accepts it")
            .clicked()
        {
            actions.write(Action::SaveConfig(PathBuf::from(&state.save_path)));
        }
    });
    if ui.button("Export metrics CSV (E)").clicked() {
        actions.write(Action::ExportCsv);
    }
}
