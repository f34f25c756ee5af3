//! Live parameter editing, without egui: the panel reads the config as a TOML table (so every
//! config key — including ones added later — gets a widget, described by the config's key
//! table) and sends [`ConfigEdited`] events; `apply_config_edits` validates each edit exactly
//! like a scenario file and writes `SimConfig`, which the simulation reads on its next step.
//! Runs in `ViewSystems::Control`.

use bevy::prelude::*;

use crate::ViewSystems;

use crate::sim::config::SimConfig;

/// The user changed one config key (dotted, as in a scenario file).
#[derive(Event, Clone, Debug, PartialEq)]
pub struct ConfigEdited {
    /// Dotted key, e.g. `swarms.normal.max_speed`.
    pub key: String,
    /// New value.
    pub value: toml::Value,
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

/// The scalar keys directly under `path` in the config table, in file order.
pub fn keys_of<'a>(table: &'a toml::Table, path: &str) -> Vec<(String, &'a toml::Value)> {
    let mut node = table;
    if !path.is_empty() {
        for part in path.split('.') {
            match node.get(part).and_then(|v| v.as_table()) {
                Some(t) => node = t,
                None => return Vec::new(),
            }
        }
    }
    node.iter()
        .filter(|(_, v)| !v.is_table())
        .map(|(k, v)| {
            let key = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            (key, v)
        })
        .collect()
}

pub(super) fn plugin(app: &mut App) {
    app.add_event::<ConfigEdited>()
        .init_resource::<EditError>()
        .add_systems(Update, apply_config_edits.in_set(ViewSystems::Control));
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
