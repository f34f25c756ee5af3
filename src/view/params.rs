//! Live parameter editing, without egui: the panel lists the config's keys (walked from its
//! type, so every key — including ones added later — gets a widget, described by its field)
//! and sends [`ConfigEdited`] events; `apply_config_edits` validates each edit exactly like a
//! scenario file and writes `SimConfig`, which the simulation reads on its next step. Runs in
//! `ViewSystems::Control`.

use bevy::prelude::*;

use crate::sim::schedule::ViewSystems;

use crate::sim::config::{Intervention, SimConfig, Value};

/// The user changed one config key (dotted, as in a scenario file).
#[derive(Event, Clone, Debug, PartialEq)]
pub struct ConfigEdited {
    /// Dotted key, e.g. `swarms.normal.max_speed`.
    pub key: String,
    /// New value.
    pub value: Value,
}

/// The user switched an intervention on or off, or applied one now (docs/model.md §11).
#[derive(Event, Clone, Debug, PartialEq)]
pub enum InterventionRequest {
    /// Switch the scenario's intervention `index` on or off (off ends it if active).
    Switch {
        /// Position in `SimConfig::interventions`.
        index: usize,
        /// On.
        on: bool,
    },
    /// Add this intervention to the run (its trigger is "now").
    Add(Box<Intervention>),
}

/// The last rejected edit, shown in the panel.
#[derive(Resource, Default, Debug, Clone)]
pub struct EditError(pub Option<String>);

/// Groups of the panel: a title and the table path whose keys it shows.
pub const GROUPS: &[(&str, &str)] = &[
    ("Run", ""),
    ("World", "world"),
    ("Flocking: Normal", "swarms.normal"),
    ("Flocking: Doctor", "swarms.doctor"),
    ("Flocking: Antivax", "swarms.antivax"),
    ("Epidemic", "epidemic"),
    ("Doctors", "doctors"),
    ("Antivax", "antivax"),
    ("Population", "population"),
    ("Predators", "predators"),
];

pub(super) fn plugin(app: &mut App) {
    app.add_event::<ConfigEdited>()
        .add_event::<InterventionRequest>()
        .init_resource::<EditError>()
        .add_systems(
            Update,
            (apply_config_edits, apply_intervention_requests).in_set(ViewSystems::Control),
        );
}

/// Applies the frame's edits to `SimConfig`; a rejected edit leaves the config as it was and
/// its reason in `EditError`.
pub fn apply_config_edits(
    mut edits: EventReader<ConfigEdited>,
    mut config: ResMut<SimConfig>,
    mut error: ResMut<EditError>,
) {
    for edit in edits.read() {
        match config.with_edit(&edit.key, edit.value.clone(), "panel") {
            Ok(new) => {
                if *config != new {
                    *config = new;
                }
                error.0 = None;
            }
            Err(e) => error.0 = Some(e.to_string()),
        }
    }
}

/// Applies the frame's intervention switches and additions to `SimConfig` (validated like a
/// scenario file; a refused one leaves its reason in `EditError`). The simulation acts on them
/// at its next step boundary, and a link or a saved scenario carries them.
pub fn apply_intervention_requests(
    mut requests: EventReader<InterventionRequest>,
    mut config: ResMut<SimConfig>,
    mut error: ResMut<EditError>,
) {
    for request in requests.read() {
        let mut next = config.clone();
        match request {
            InterventionRequest::Switch { index, on } => {
                if let Some(iv) = next.interventions.get_mut(*index) {
                    iv.enabled = *on;
                }
            }
            InterventionRequest::Add(iv) => next.interventions.push((**iv).clone()),
        }
        match next.validate("panel") {
            Ok(()) => {
                *config = next;
                error.0 = None;
            }
            Err(e) => error.0 = Some(e.to_string()),
        }
    }
}
