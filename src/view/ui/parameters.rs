//! Panel section: a widget for every config key, grouped like the scenario file. Each widget
//! is built from the key's own field (its `Spec`: label, unit, slider range and scale, whether
//! it applies on reset; its type: number, whole number, flag or choice; its doc comment as the
//! hover text), so a new key gets a sensible widget without touching the view. A typed value
//! is not clamped to the slider: an edit is sent as `ConfigEdited` and validated like a
//! scenario file, and a refused one shows its reason.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_egui::egui;

use crate::sim::config::keys::{self, Key, Kind};
use crate::sim::config::spec::Bound;
use crate::sim::config::{SimConfig, Value};
use crate::view::params::{ConfigEdited, EditError, GROUPS};

/// What the parameter widgets read and send.
#[derive(SystemParam)]
pub(super) struct Parameters<'w> {
    config: Res<'w, SimConfig>,
    error: Res<'w, EditError>,
    edits: EventWriter<'w, ConfigEdited>,
}

/// Draws every group of parameters.
pub(super) fn show(ui: &mut egui::Ui, p: &mut Parameters) {
    if let Some(e) = &p.error.0 {
        ui.colored_label(egui::Color32::from_rgb(255, 110, 110), e);
    }
    for (title, path) in GROUPS {
        egui::CollapsingHeader::new(*title)
            .id_salt(path)
            .show(ui, |ui| {
                for k in keys::all().iter().filter(|k| k.section == *path) {
                    let Ok(value) = p.config.get(&k.key) else {
                        continue;
                    };
                    if let Some(v) = widget(ui, k, &value, &p.config) {
                        p.edits.write(ConfigEdited {
                            key: k.key.clone(),
                            value: v,
                        });
                    }
                }
            });
    }
}

/// The slider range of a numeric key in `config`: its description's range, below its upper
/// bound in this config (e.g. `min_speed` below `max_speed`, a radius below half the world),
/// and wide enough to hold the current value.
pub fn slider_range(k: &Key, value: f64, config: &SimConfig) -> (f64, f64) {
    let (mut lo, mut hi) = k.spec.slider;
    hi = match k.upper_bound(config) {
        Bound::Closed(b) => hi.min(b),
        Bound::Open(b) => hi.min(b - (b.abs() * 1e-6).max(1e-6)),
    };
    if value.is_finite() {
        lo = lo.min(value);
        hi = hi.max(value);
    }
    (lo, hi.max(lo))
}

/// The widget of one key; returns the new value when the user changed it.
fn widget(ui: &mut egui::Ui, k: &Key, value: &Value, config: &SimConfig) -> Option<Value> {
    let text = k.label();
    let spec = &k.spec;
    let mut out = None;
    ui.horizontal(|ui| {
        match (k.kind, value) {
            (Kind::Bool, Value::Bool(b)) => {
                let mut v = *b;
                if ui.checkbox(&mut v, &text).changed() {
                    out = Some(Value::Bool(v));
                }
            }
            (Kind::Choice(names), Value::Name(s)) => {
                ui.label(&text);
                let mut v = s.clone();
                egui::ComboBox::from_id_salt(&k.key)
                    .selected_text(&v)
                    .show_ui(ui, |ui| {
                        for c in names {
                            ui.selectable_value(&mut v, c.to_string(), *c);
                        }
                    });
                if v != *s {
                    out = Some(Value::Name(v));
                }
            }
            (Kind::Int, Value::Int(i)) => {
                let mut v = *i;
                let (lo, hi) = slider_range(k, v as f64, config);
                let slider = egui::Slider::new(&mut v, lo as i64..=hi as i64)
                    .text(&text)
                    .clamping(egui::SliderClamping::Never);
                if ui.add(slider).changed() {
                    out = Some(Value::Int(v));
                }
            }
            (Kind::Float, _) => {
                let mut v = value.as_f64().unwrap_or(f64::NAN);
                let mut never = v.is_infinite();
                if spec.infinite_ok && ui.checkbox(&mut never, "never").changed() {
                    out = Some(Value::Float(if never {
                        f64::INFINITY
                    } else {
                        spec.slider.1.min(60.0)
                    }));
                }
                if !never {
                    let (lo, hi) = slider_range(k, v, config);
                    let mut slider = egui::Slider::new(&mut v, lo..=hi)
                        .text(&text)
                        .logarithmic(spec.log)
                        .clamping(egui::SliderClamping::Never);
                    if !spec.unit.is_empty() {
                        slider = slider.suffix(format!(" {}", spec.unit));
                    }
                    if ui.add(slider).changed() {
                        out = Some(Value::Float(v));
                    }
                }
            }
            (_, other) => {
                ui.label(format!("{text}: {other}"));
            }
        }
        if spec.is_on_reset() {
            ui.label(egui::RichText::new("(on reset)").small().weak());
        }
    })
    .response
    .on_hover_text(&k.doc);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliders_respect_the_configs_own_limits_and_hold_the_value() {
        let mut c = SimConfig::default();
        c.swarms.normal.max_speed = 120.0;
        let min_speed = keys::find("swarms.normal.min_speed").unwrap();
        assert_eq!(slider_range(min_speed, 54.0, &c), (0.0, 120.0));
        // A radius slider stops below half the smaller side of a torus.
        c.world.height = 500.0;
        let r = keys::find("swarms.normal.alignment_radius").unwrap();
        let (_, hi) = slider_range(r, 50.0, &c);
        assert!(hi < 250.0 && hi > 249.9, "{hi}");
        // A preset's value outside the usual range widens the slider instead of being clamped.
        let w = keys::find("swarms.normal.separation_weight").unwrap();
        assert_eq!(slider_range(w, 60_000.0, &c), (0.0, 60_000.0));
    }
}
