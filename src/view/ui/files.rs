//! Panel section: scenario and files — load any shipped scenario (sub-folders included), save
//! the current config as a scenario file, export the metrics so far (in a browser these two
//! download the file), save or open a checkpoint (not in a browser yet), and, in a browser,
//! copy the link that reproduces the run.

use std::path::{Path, PathBuf};

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_egui::egui;

use crate::sim::config::{SimConfig, scenarios_dir};
use crate::sim::interventions::{InterventionLog, as_configured};
use crate::view::input::Action;
use crate::view::input::TimeRequest;
use crate::view::link::{CurrentScenario, link_for, link_query};

/// Panel state of the files section.
#[derive(Resource, Debug)]
pub struct FilesState {
    /// Where "Save config" writes.
    pub save_path: String,
    /// Where "Save checkpoint" writes and "Open checkpoint" reads.
    pub checkpoint_path: String,
    /// Scenario files found under `assets/scenarios`.
    pub scenarios: Vec<PathBuf>,
    /// The one chosen in the combo box.
    pub chosen: usize,
    /// The running scenario the choice was last set to (the combo box shows the running
    /// scenario until the user picks another).
    pub shown_for: String,
}

impl Default for FilesState {
    fn default() -> Self {
        Self {
            save_path: "my-scenario.toml".into(),
            checkpoint_path: "my-run.ckpt".into(),
            scenarios: shipped_files(),
            chosen: 0,
            shown_for: String::new(),
        }
    }
}

/// The scenarios the panel offers: the files of `assets/scenarios`; in a browser, the built-in
/// copies by the same relative names.
fn shipped_files() -> Vec<PathBuf> {
    if cfg!(target_arch = "wasm32") {
        crate::sim::config::shipped::SHIPPED
            .iter()
            .map(|(name, _)| PathBuf::from(format!("{name}.toml")))
            .collect()
    } else {
        scenario_files(&scenarios_dir())
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
    config: Res<'w, SimConfig>,
    current: Res<'w, CurrentScenario>,
    interventions: Res<'w, InterventionLog>,
    clock: Res<'w, crate::sim::clock::SimClock>,
}

/// Draws the files section.
pub(super) fn show(ui: &mut egui::Ui, f: &mut Files, actions: &mut EventWriter<Action>) {
    let state = &mut *f.state;
    if !state.scenarios.is_empty() {
        ui.horizontal(|ui| {
            // Shown relative to assets/scenarios (e.g. matrix/B2_D2.toml).
            let root = scenarios_dir();
            let name = |p: &PathBuf| {
                let n = p
                    .strip_prefix(&root)
                    .unwrap_or(p)
                    .to_string_lossy()
                    .into_owned();
                // The 1.4-million-boid city is meant for headless runs.
                if n.trim_end_matches(".toml") == "city" {
                    format!("{n} (1.4 M boids: headless-sized)")
                } else {
                    n
                }
            };
            if state.shown_for != f.current.0 {
                state.shown_for = f.current.0.clone();
                if let Some(k) = state.scenarios.iter().position(|p| {
                    crate::view::control::scenario_name(p) == f.current.0
                        || p.with_extension("").ends_with(&f.current.0)
                }) {
                    state.chosen = k;
                }
            }
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
    ui.horizontal(|ui| {
        ui.add(egui::TextEdit::singleline(&mut state.checkpoint_path).desired_width(120.0));
        let path = PathBuf::from(&state.checkpoint_path);
        if ui
            .button("Save checkpoint")
            .on_hover_text(
                "this moment, exactly: pandemic-boids run --resume <file> --out DIR continues it",
            )
            .clicked()
        {
            actions.write(Action::TimeTravel(TimeRequest::Save(path.clone())));
        }
        // A browser cannot read a path from the page (yet): saving downloads the file.
        if !cfg!(target_arch = "wasm32")
            && ui
                .button("Open")
                .on_hover_text("a checkpoint saved here or by run --checkpoint-every")
                .clicked()
        {
            actions.write(Action::TimeTravel(TimeRequest::Open(path)));
        }
    });
    if ui.button("Export metrics CSV (E)").clicked() {
        actions.write(Action::ExportCsv);
    }
    let query = link_query(&link_for(
        &f.current.0,
        &as_configured(&f.config, &f.interventions),
    ));
    if cfg!(target_arch = "wasm32") {
        ui.horizontal(|ui| {
            if ui
                .button("Copy link")
                .on_hover_text(
                    "the address of this page with the scenario, seed and changed parameters",
                )
                .clicked()
            {
                ui.ctx().copy_text(format!("{}{query}", page_address()));
            }
            if ui
                .button("… at this moment")
                .on_hover_text("the same link with t=: it opens the run replayed to now")
                .clicked()
            {
                let at = format!("{query}&t={}", f.clock.time);
                ui.ctx().copy_text(format!("{}{at}", page_address()));
            }
            ui.label(egui::RichText::new(&f.current.0).weak());
        });
    }
}

/// The page's address without its query (empty outside a browser).
fn page_address() -> String {
    #[cfg(target_arch = "wasm32")]
    return crate::view::web::page_address();
    #[cfg(not(target_arch = "wasm32"))]
    String::new()
}
