//! Live parameter editing, without egui: the panel reads the config as a TOML table (so every
//! config key — including ones added later — gets a widget), describes each key with [`meta`]
//! (label, unit, range, choices), and sends [`ConfigEdited`] events; `apply_config_edits`
//! validates each edit exactly like a scenario file and writes `SimConfig`, which the
//! simulation reads on its next step. Runs in `Update`.

use bevy::prelude::*;

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

/// How a key is shown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Meta {
    /// Label in the panel (default: the key's last segment, underscores as spaces).
    pub label: Option<&'static str>,
    /// Unit shown after the value ("" for none).
    pub unit: &'static str,
    /// Slider range.
    pub range: (f64, f64),
    /// Logarithmic slider.
    pub log: bool,
    /// Allowed strings of an enum key (empty for numbers and booleans).
    pub choices: &'static [&'static str],
    /// Takes effect only when the run is reset (counts, seed, spawn-time chances).
    pub on_reset: bool,
    /// May be `inf` (never / permanent).
    pub infinite_ok: bool,
}

impl Default for Meta {
    fn default() -> Self {
        Self {
            label: None,
            unit: "",
            range: (0.0, 1000.0),
            log: false,
            choices: &[],
            on_reset: false,
            infinite_ok: false,
        }
    }
}

/// Display metadata of a dotted key. Known families of keys (radii, weights, probabilities,
/// speeds, times) get their ranges and units by name, so new keys of those kinds are shown
/// sensibly without touching this file.
pub fn meta(key: &str) -> Meta {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let m = Meta::default();
    match leaf {
        "seed" => Meta {
            label: Some("seed"),
            range: (0.0, 1e6),
            on_reset: true,
            ..m
        },
        "dt" => Meta {
            label: Some("step dt"),
            unit: "s",
            range: (0.002, 0.1),
            log: true,
            ..m
        },
        "duration" => Meta {
            label: Some("duration (headless)"),
            unit: "s",
            range: (1.0, 3600.0),
            log: true,
            ..m
        },
        "sample_every" => Meta {
            label: Some("sample every"),
            unit: "s",
            range: (0.05, 10.0),
            log: true,
            ..m
        },
        "agents_every" => Meta {
            label: Some("agents.csv every (headless)"),
            unit: "s",
            range: (0.0, 60.0),
            ..m
        },
        "steering_model" => Meta {
            label: Some("steering model"),
            choices: &["shiffman", "hybrid", "adams", "pygame"],
            ..m
        },
        "neighbour_index" => Meta {
            label: Some("neighbour index"),
            choices: &["kdtree", "grid", "brute"],
            ..m
        },
        "boundary" => Meta {
            label: Some("boundary"),
            choices: &["wrap", "bounce"],
            ..m
        },
        "behavior" => Meta {
            label: Some("doctor behaviour"),
            choices: &["passive", "seek_nearest", "seek_centroid"],
            ..m
        },
        "catch" => Meta {
            label: Some("on catch"),
            choices: &["remove", "respawn"],
            ..m
        },
        "width" | "height" => Meta {
            unit: "px",
            range: (200.0, 20000.0),
            log: true,
            ..m
        },
        "count" | "max_population" => Meta {
            range: (0.0, 5000.0),
            on_reset: leaf == "count",
            ..m
        },
        "fov" => Meta {
            label: Some("field of view (half-angle)"),
            unit: "rad",
            range: (0.1, std::f64::consts::PI + 1e-5),
            ..m
        },
        "noise" => Meta {
            label: Some("noise"),
            unit: "px/s²",
            range: (0.0, 500.0),
            ..m
        },
        "t_death" | "t_immunity" => Meta {
            unit: "s",
            range: (0.1, 120.0),
            log: true,
            infinite_ok: true,
            ..m
        },
        "p_initial_infect_normal" | "p_initial_infect_doctor" | "p_antivax" => Meta {
            unit: "at spawn",
            range: (0.0, 1.0),
            on_reset: true,
            ..m
        },
        "p_death" => Meta {
            label: Some("p_death"),
            unit: "at t_death",
            range: (0.0, 1.0),
            ..m
        },
        "cure_immunity_level" => Meta {
            label: Some("immunity after recovery"),
            range: (0.0, 1.0),
            ..m
        },
        l if l.starts_with("litter_") => Meta {
            unit: "boids",
            range: (0.0, 10.0),
            ..m
        },
        l if l.ends_with("_factor")
            || l.ends_with("_factor_normal")
            || l.ends_with("_factor_doctor") =>
        {
            Meta {
                unit: "×",
                range: (0.0, 1.0),
                ..m
            }
        }
        l if l.starts_with("p_") => Meta {
            unit: "per s",
            range: (0.0, 1.0),
            ..m
        },
        l if l.ends_with("_radius") || l.starts_with("r_") || l == "detection_range" => Meta {
            unit: "px",
            range: (0.0, 400.0),
            ..m
        },
        l if l.ends_with("_weight") => Meta {
            range: (0.0, 10.0),
            ..m
        },
        l if l.ends_with("speed") => Meta {
            unit: "px/s",
            range: (0.0, 1000.0),
            ..m
        },
        l if l.ends_with("force") => Meta {
            unit: "px/s²",
            range: (0.0, 2000.0),
            ..m
        },
        "cooldown" | "t_adult" => Meta {
            unit: "s",
            range: (0.0, 60.0),
            ..m
        },
        _ => Meta { ..m },
    }
}

/// The label shown for a key.
pub fn label(key: &str) -> String {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    meta(key)
        .label
        .map_or_else(|| leaf.replace('_', " "), String::from)
}

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
        .add_systems(Update, apply_config_edits);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_config_key_has_a_sensible_widget() {
        let table = SimConfig::default().to_table();
        let mut n = 0;
        for (_, path) in GROUPS {
            for (key, value) in keys_of(&table, path) {
                let m = meta(&key);
                assert!(!label(&key).is_empty(), "{key}");
                if let Some(s) = value.as_str() {
                    assert!(
                        m.choices.contains(&s),
                        "{key} = {s} not among {:?}",
                        m.choices
                    );
                } else if let Some(x) = value.as_float() {
                    assert!(
                        x.is_infinite() && m.infinite_ok || (m.range.0..=m.range.1).contains(&x),
                        "{key} = {x} outside its slider {:?}",
                        m.range
                    );
                }
                n += 1;
            }
        }
        assert!(n > 60, "{n} keys");
    }
}
