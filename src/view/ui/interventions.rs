//! Panel section: interventions (docs/model.md §11). The scenario's own, each with its trigger,
//! its state (armed / active / ended), the boids it has affected and a switch; and "apply now"
//! for a lockdown, a vaccination round, test-and-isolate and an importation, with their numbers
//! editable. An applied one joins the run's interventions (so a saved scenario or a link
//! reproduces it) and starts at the next step. Sends `InterventionRequest`s.

use std::collections::BTreeMap;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_egui::egui;

use crate::sim::clock::SimClock;
use crate::sim::config::interventions::{Import, Isolate, Vaccinate};
use crate::sim::config::{Intervention, SimConfig};
use crate::sim::interventions::{InterventionLog, Phase};
use crate::view::params::InterventionRequest;

/// The numbers of the "apply now" forms.
pub(super) struct Form {
    lockdown_speed: f64,
    lockdown_separation: f64,
    lockdown_for: f64,
    vaccinate_fraction: f64,
    vaccinate_efficacy: f64,
    isolate_detect: f64,
    isolate_delay: f64,
    isolate_for: f64,
    import_count: u32,
}

impl Default for Form {
    fn default() -> Self {
        Self {
            lockdown_speed: 90.0,
            lockdown_separation: 45.0,
            lockdown_for: 30.0,
            vaccinate_fraction: 0.3,
            vaccinate_efficacy: 0.9,
            isolate_detect: 0.5,
            isolate_delay: 1.0,
            isolate_for: 60.0,
            import_count: 5,
        }
    }
}

/// What the section reads and sends.
#[derive(SystemParam)]
pub(super) struct Interventions<'w, 's> {
    config: Res<'w, SimConfig>,
    log: Res<'w, InterventionLog>,
    clock: Res<'w, SimClock>,
    requests: EventWriter<'w, InterventionRequest>,
    form: Local<'s, Form>,
}

/// Its trigger and end in words: "when infected_frac > 0.1 for 2 s · lasts 60 s".
pub fn describe(iv: &Intervention) -> String {
    let start = match (&iv.at, &iv.when) {
        (Some(at), _) => format!("at {at} s"),
        (None, Some(c)) if iv.hold > 0.0 => format!("when {c} for {} s", iv.hold),
        (None, Some(c)) => format!("when {c}"),
        _ => "never".into(),
    };
    let end = match (&iv.duration, &iv.until) {
        (Some(d), _) => format!("lasts {d} s"),
        (None, Some(c)) => format!("until {c}"),
        _ => "to the end".into(),
    };
    let mut acts: Vec<String> = iv.set.keys().map(|k| format!("set {k}")).collect();
    if iv.vaccinate.is_some() {
        acts.push("vaccinate".into());
    }
    if iv.isolate.is_some() {
        acts.push("isolate".into());
    }
    if iv.import.is_some() {
        acts.push("import".into());
    }
    format!("{start} · {end} · {}", acts.join(", "))
}

/// Draws the section.
pub(super) fn show(ui: &mut egui::Ui, p: &mut Interventions) {
    // Whole milliseconds, not after the clock: it starts at the next step.
    let now = (p.clock.time * 1000.0).floor() / 1000.0;
    if p.config.interventions.is_empty() {
        ui.label(egui::RichText::new("This scenario has none; apply one below.").weak());
    }
    for (i, iv) in p.config.interventions.iter().enumerate() {
        let status = p.log.status.get(i).cloned().unwrap_or_default();
        ui.horizontal(|ui| {
            let mut on = iv.enabled;
            if ui.checkbox(&mut on, iv.display_name(i)).changed() {
                p.requests
                    .write(InterventionRequest::Switch { index: i, on });
            }
            let colour = match status.phase {
                Phase::Active => egui::Color32::from_rgb(190, 140, 255),
                Phase::Armed => egui::Color32::GRAY,
                Phase::Ended => egui::Color32::DARK_GRAY,
            };
            ui.colored_label(colour, status.phase.label());
            ui.label(format!("{} boids", status.total_affected));
        })
        .response
        .on_hover_text(describe(iv));
        ui.label(egui::RichText::new(describe(iv)).small().weak());
    }
    ui.separator();
    ui.label(egui::RichText::new("Apply now (starts at the next step):").strong());
    let f = &mut *p.form;
    let at = Some(now);
    let stamp = |what: &str| format!("{what} at {now:.1} s");
    ui.horizontal(|ui| {
        let go = ui.button("Lockdown").clicked();
        ui.add(
            egui::DragValue::new(&mut f.lockdown_speed)
                .range(1.0..=1000.0)
                .suffix(" px/s"),
        )
        .on_hover_text("Normal boids' max speed during the lockdown");
        ui.add(
            egui::DragValue::new(&mut f.lockdown_separation)
                .range(1.0..=200.0)
                .suffix(" px"),
        )
        .on_hover_text("Normal boids' separation radius during the lockdown");
        ui.add(
            egui::DragValue::new(&mut f.lockdown_for)
                .range(0.1..=3600.0)
                .suffix(" s"),
        )
        .on_hover_text("how long it lasts");
        if go {
            let mut set = BTreeMap::new();
            set.insert(
                "swarms.normal.max_speed".into(),
                toml::Value::Float(f.lockdown_speed),
            );
            set.insert(
                "swarms.normal.separation_radius".into(),
                toml::Value::Float(f.lockdown_separation),
            );
            p.requests
                .write(InterventionRequest::Add(Box::new(Intervention {
                    name: stamp("lockdown"),
                    at,
                    duration: Some(f.lockdown_for),
                    set,
                    ..Default::default()
                })));
        }
    });
    ui.horizontal(|ui| {
        let go = ui.button("Vaccinate").clicked();
        ui.add(egui::Slider::new(&mut f.vaccinate_fraction, 0.0..=1.0).text("of S"));
        ui.add(
            egui::DragValue::new(&mut f.vaccinate_efficacy)
                .range(0.0..=1.0)
                .speed(0.01),
        )
        .on_hover_text("efficacy: the immunity given, 0..1");
        if go {
            p.requests
                .write(InterventionRequest::Add(Box::new(Intervention {
                    name: stamp("vaccination"),
                    at,
                    vaccinate: Some(Vaccinate {
                        swarm: None,
                        fraction: Some(f.vaccinate_fraction),
                        rate_per_s: None,
                        efficacy: f.vaccinate_efficacy,
                    }),
                    ..Default::default()
                })));
        }
    });
    ui.horizontal(|ui| {
        let go = ui.button("Isolate").clicked();
        ui.add(
            egui::DragValue::new(&mut f.isolate_detect)
                .range(0.0..=1.0)
                .speed(0.01),
        )
        .on_hover_text("probability per second that an infected boid is detected");
        ui.add(
            egui::DragValue::new(&mut f.isolate_delay)
                .range(0.0..=60.0)
                .suffix(" s"),
        )
        .on_hover_text("seconds of infection before it can be detected");
        ui.add(
            egui::DragValue::new(&mut f.isolate_for)
                .range(0.1..=3600.0)
                .suffix(" s"),
        )
        .on_hover_text("how long testing goes on");
        if go {
            p.requests
                .write(InterventionRequest::Add(Box::new(Intervention {
                    name: stamp("isolation"),
                    at,
                    duration: Some(f.isolate_for),
                    isolate: Some(Isolate {
                        detect_per_s: f.isolate_detect,
                        delay: f.isolate_delay,
                    }),
                    ..Default::default()
                })));
        }
    });
    ui.horizontal(|ui| {
        let go = ui.button("Import cases").clicked();
        ui.add(egui::DragValue::new(&mut f.import_count).range(1..=10_000));
        if go {
            p.requests
                .write(InterventionRequest::Add(Box::new(Intervention {
                    name: stamp("import"),
                    at,
                    import: Some(Import {
                        count: f.import_count,
                        swarm: None,
                    }),
                    ..Default::default()
                })));
        }
    });
}
