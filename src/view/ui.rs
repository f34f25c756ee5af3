//! The egui panels. Left: run controls, live counts, whole-run plots, every parameter (generated
//! from the config table, see `params`), scenario load/save, metrics export, overlays and a
//! legend. Right: the inspector of the selected boid (bevy-inspector-egui, editable through
//! `Reflect`) with its neighbour counts, and a world/entity browser. Plus the keyboard help.
//! The panels collapse (Tab) and the camera is fitted to the area they leave free. Runs in
//! `EguiPrimaryContextPass`.

use std::path::PathBuf;

use bevy::ecs::component::Mutable;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use bevy_egui::{EguiContext, EguiContexts, EguiPrimaryContextPass, PrimaryEguiContext, egui};
use bevy_inspector_egui::{bevy_inspector, reflect_inspector};
use egui_plot::{Legend, Line, Plot, PlotPoints};

use crate::run::cli::assets_dir;
use crate::sim::agent::{AgentId, Boid, Breeding, Health, Position, Steering, Swarm, Velocity};
use crate::sim::clock::SimClock;
use crate::sim::config::{SimConfig, table_get};
use crate::sim::metrics::{MetricsLog, Sample, Tally};
use crate::sim::neighbours::{NeighbourIndex, Snapshot, world_index};
use crate::view::camera::CameraView;
use crate::view::control::{Action, RunControl, SPEEDS};
use crate::view::overlays::Overlays;
use crate::view::params::{ConfigEdited, EditError, GROUPS, keys_of, label, meta};
use crate::view::render::{PREDATOR_COLOUR, Tint, boid_colour};
use crate::view::select::Selected;

/// Width the left panel starts at, logical px.
const LEFT_WIDTH: f32 = 340.0;
/// Width the right panel starts at, logical px.
const RIGHT_WIDTH: f32 = 310.0;
/// Height of each plot, logical px.
const PLOT_HEIGHT: f32 = 120.0;
/// Plots thin longer series to about this many points.
const PLOT_POINTS: usize = 1500;

/// Panel state that is not part of the simulation.
#[derive(Resource, Debug)]
pub struct PanelState {
    /// Where "Save config" writes.
    pub save_path: String,
    /// Scenario files found in `assets/scenarios`.
    pub scenarios: Vec<PathBuf>,
    /// The one chosen in the combo box.
    pub chosen: usize,
}

impl Default for PanelState {
    fn default() -> Self {
        Self {
            save_path: "my-scenario.toml".into(),
            scenarios: scenario_files(&assets_dir().join("scenarios")),
            chosen: 0,
        }
    }
}

/// The `.toml` files in a folder and its sub-folders (matrix/, regimes/), sorted.
fn scenario_files(dir: &std::path::Path) -> Vec<PathBuf> {
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

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<PanelState>().add_systems(
        EguiPrimaryContextPass,
        (control_panel, inspector_panel, help_window).chain(),
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

/// One plot series over the whole run, thinned to about `PLOT_POINTS` points.
fn series(samples: &[Sample], f: impl Fn(&Sample) -> Option<f64>) -> PlotPoints<'static> {
    let stride = samples.len().div_ceil(PLOT_POINTS).max(1);
    let pts: Vec<[f64; 2]> = samples
        .iter()
        .step_by(stride)
        .filter_map(|s| f(s).map(|y| [s.time_s, y]))
        .collect();
    PlotPoints::from(pts)
}

fn plot(ui: &mut egui::Ui, id: &str, y_label: &str, lines: Vec<Line<'static>>) {
    Plot::new(id)
        .height(PLOT_HEIGHT)
        .legend(Legend::default())
        .x_axis_label("time (s)")
        .y_axis_label(y_label)
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .show(ui, |p| {
            for line in lines {
                p.line(line);
            }
        });
}

/// One per-swarm measure of a sample (the swarm by index).
type Measure = fn(&Sample, usize) -> Option<f64>;

fn largest_flock(x: &Sample, k: usize) -> Option<f64> {
    x.swarms[k].largest_flock_frac
}

fn nn_cv(x: &Sample, k: usize) -> Option<f64> {
    x.swarms[k].nn_cv
}

fn milling(x: &Sample, k: usize) -> Option<f64> {
    x.swarms[k].milling
}

fn elongation(x: &Sample, k: usize) -> Option<f64> {
    x.swarms[k].elongation
}

/// Live counts per swarm from the step's snapshot.
fn counts(snapshot: &Snapshot) -> [[u64; 4]; 3] {
    let mut c = [[0u64; 4]; 3];
    for i in 0..snapshot.len() {
        let k = snapshot.swarm[i].index();
        let d = snapshot.disease[i];
        c[k][0] += 1;
        c[k][if d.is_infected() {
            2
        } else if d.is_recovered() {
            3
        } else {
            1
        }] += 1;
    }
    c
}

fn control_panel(
    mut contexts: EguiContexts,
    (control, mut overlays, mut view, mut panel): (
        Res<RunControl>,
        ResMut<Overlays>,
        ResMut<CameraView>,
        ResMut<PanelState>,
    ),
    (config, log, tally, clock, snapshot, edit_error): (
        Res<SimConfig>,
        Res<MetricsLog>,
        Res<Tally>,
        Res<SimClock>,
        Res<Snapshot>,
        Res<EditError>,
    ),
    (virtual_time, real): (Res<Time<Virtual>>, Res<Time<Real>>),
    mut actions: EventWriter<Action>,
    mut edits: EventWriter<ConfigEdited>,
    mut fps: Local<f32>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    let dt = real.delta_secs();
    if dt > 0.0 {
        *fps = if *fps == 0.0 {
            1.0 / dt
        } else {
            *fps * 0.95 + 0.05 / dt
        };
    }
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
                if let Some(m) = control.status(real.elapsed_secs_f64()) {
                    ui.label(egui::RichText::new(m).italics());
                }
                ui.separator();

                // Run controls.
                ui.horizontal_wrapped(|ui| {
                    let paused = virtual_time.is_paused();
                    if ui
                        .button(if paused { "▶ Resume" } else { "⏸ Pause" })
                        .on_hover_text("Space")
                        .clicked()
                    {
                        actions.write(Action::TogglePause);
                    }
                    if ui
                        .button("Step")
                        .on_hover_text("S: one step, pauses")
                        .clicked()
                    {
                        actions.write(Action::Step);
                    }
                    if ui.button("Reset").on_hover_text("R: same seed").clicked() {
                        actions.write(Action::Reset { new_seed: false });
                    }
                    if ui.button("New seed").on_hover_text("Shift+R").clicked() {
                        actions.write(Action::Reset { new_seed: true });
                    }
                });
                ui.horizontal_wrapped(|ui| {
                    ui.label("speed");
                    for s in SPEEDS {
                        if ui
                            .selectable_label((control.speed - s).abs() < 1e-6, format!("×{s}"))
                            .clicked()
                        {
                            actions.write(Action::SetSpeed(s));
                        }
                    }
                });
                ui.label(format!(
                    "t = {:.1} s · step {} · seed {} · {:.0} fps{}",
                    clock.time,
                    clock.step,
                    config.seed,
                    *fps,
                    if virtual_time.is_paused() {
                        " · paused"
                    } else {
                        ""
                    }
                ));

                // Live counts.
                ui.separator();
                let c = counts(&snapshot);
                egui::Grid::new("counts")
                    .striped(true)
                    .num_columns(8)
                    .show(ui, |ui| {
                        for h in ["", "alive", "S", "I", "R", "dead", "born", "caught"] {
                            ui.strong(h);
                        }
                        ui.end_row();
                        let mut total = [0u64; 7];
                        for swarm in Swarm::ALL {
                            let k = swarm.index();
                            let row = [
                                c[k][0],
                                c[k][1],
                                c[k][2],
                                c[k][3],
                                tally.dead[k],
                                tally.born[k],
                                tally.caught[k],
                            ];
                            ui.colored_label(
                                color32(boid_colour(swarm, Tint::Healthy)),
                                swarm.label(),
                            );
                            for (t, v) in total.iter_mut().zip(row) {
                                ui.label(v.to_string());
                                *t += v;
                            }
                            ui.end_row();
                        }
                        ui.strong("all");
                        for v in total {
                            ui.strong(v.to_string());
                        }
                        ui.end_row();
                    });

                // Plots over the whole run.
                egui::CollapsingHeader::new("Plots")
                    .default_open(true)
                    .show(ui, |ui| {
                        let s = &log.samples;
                        let red = color32(boid_colour(Swarm::Normal, Tint::Infected));
                        let grey = color32(boid_colour(Swarm::Normal, Tint::Recovered));
                        let green = color32(boid_colour(Swarm::Normal, Tint::Healthy));
                        plot(
                            ui,
                            "sir",
                            "boids",
                            vec![
                                Line::new("S", series(s, |x| Some(x.overall.susceptible as f64)))
                                    .color(green),
                                Line::new("I", series(s, |x| Some(x.overall.infected as f64)))
                                    .color(red),
                                Line::new("R", series(s, |x| Some(x.overall.recovered as f64)))
                                    .color(grey),
                                Line::new("dead", series(s, |x| Some(x.overall.dead as f64)))
                                    .color(egui::Color32::from_gray(90)),
                            ],
                        );
                        let per_swarm =
                            |f: fn(&Sample, usize) -> Option<f64>| -> Vec<Line<'static>> {
                                Swarm::ALL
                                    .iter()
                                    .filter(|sw| {
                                        s.last().is_some_and(|x| x.swarms[sw.index()].alive > 0)
                                    })
                                    .map(|&sw| {
                                        let k = sw.index();
                                        Line::new(sw.label(), series(s, move |x| f(x, k)))
                                            .color(color32(boid_colour(sw, Tint::Healthy)))
                                    })
                                    .collect()
                            };
                        plot(
                            ui,
                            "infected",
                            "infected",
                            per_swarm(|x, k| Some(x.swarms[k].infected as f64)),
                        );
                        plot(
                            ui,
                            "polarisation",
                            "polarisation",
                            per_swarm(|x, k| x.swarms[k].polarisation),
                        );
                        plot(
                            ui,
                            "cohesion",
                            "cohesion (px)",
                            per_swarm(|x, k| x.swarms[k].cohesion_px),
                        );
                        egui::CollapsingHeader::new("Flock structure")
                            .default_open(true)
                            .show(ui, |ui| {
                                ui.label(
                                    egui::RichText::new(
                                        "largest flock: share of the swarm in its biggest \
                                         flock · nn cv: spread of nearest-neighbour distances \
                                         (lattice ≈ 0, random ≈ 0.5) · milling: 1 = circling \
                                         a centre · elongation: 0 round, 1 a line",
                                    )
                                    .small()
                                    .weak(),
                                );
                                for (id, label, f) in [
                                    ("largest_flock", "largest flock", largest_flock as Measure),
                                    ("nn_cv", "nn cv", nn_cv),
                                    ("milling", "milling", milling),
                                    ("elongation", "elongation", elongation),
                                ] {
                                    plot(ui, id, label, per_swarm(f));
                                }
                            });
                    });

                // Every parameter, generated from the config table.
                egui::CollapsingHeader::new("Parameters")
                    .default_open(false)
                    .show(ui, |ui| {
                        if let Some(e) = &edit_error.0 {
                            ui.colored_label(egui::Color32::from_rgb(255, 110, 110), e);
                        }
                        let table = config.to_table();
                        let half = 0.5 * config.world.width.min(config.world.height) as f64;
                        for (title, path) in GROUPS {
                            egui::CollapsingHeader::new(*title)
                                .id_salt(path)
                                .show(ui, |ui| {
                                    for (key, value) in keys_of(&table, path) {
                                        let limit = key.ends_with("min_speed").then(|| {
                                            table_get(
                                                &table,
                                                &key.replace("min_speed", "max_speed"),
                                            )
                                            .and_then(toml::Value::as_float)
                                            .unwrap_or(1000.0)
                                        });
                                        if let Some(v) = param_widget(ui, &key, value, limit, half)
                                        {
                                            edits.write(ConfigEdited { key, value: v });
                                        }
                                    }
                                });
                        }
                    });

                // Scenarios and files.
                egui::CollapsingHeader::new("Scenario & files")
                    .default_open(false)
                    .show(ui, |ui| {
                        if !panel.scenarios.is_empty() {
                            ui.horizontal(|ui| {
                                // Shown relative to assets/scenarios (e.g. matrix/B2_D2.toml).
                                let root = assets_dir().join("scenarios");
                                let name = |p: &PathBuf| {
                                    p.strip_prefix(&root)
                                        .unwrap_or(p)
                                        .to_string_lossy()
                                        .into_owned()
                                };
                                let current = name(
                                    &panel.scenarios[panel.chosen.min(panel.scenarios.len() - 1)],
                                );
                                egui::ComboBox::from_id_salt("scenario")
                                    .selected_text(current)
                                    .show_ui(ui, |ui| {
                                        for (k, p) in panel.scenarios.clone().iter().enumerate() {
                                            ui.selectable_value(&mut panel.chosen, k, name(p));
                                        }
                                    });
                                if ui
                                    .button("Load")
                                    .on_hover_text("replaces every parameter and restarts")
                                    .clicked()
                                {
                                    actions.write(Action::LoadScenario(
                                        panel.scenarios[panel.chosen].clone(),
                                    ));
                                }
                            });
                        }
                        ui.horizontal(|ui| {
                            ui.add(
                                egui::TextEdit::singleline(&mut panel.save_path)
                                    .desired_width(170.0),
                            );
                            if ui
                                .button("Save config")
                                .on_hover_text("pandemic-boids run --scenario <file> accepts it")
                                .clicked()
                            {
                                actions.write(Action::SaveConfig(PathBuf::from(&panel.save_path)));
                            }
                        });
                        if ui.button("Export metrics CSV (E)").clicked() {
                            actions.write(Action::ExportCsv);
                        }
                    });

                // View.
                egui::CollapsingHeader::new("View")
                    .default_open(true)
                    .show(ui, |ui| {
                        ui.horizontal_wrapped(|ui| {
                            ui.checkbox(&mut overlays.radii, "contact radii");
                            ui.checkbox(&mut overlays.fov, "FOV cones");
                            ui.checkbox(&mut overlays.velocity, "velocities");
                            ui.checkbox(&mut overlays.index, "spatial index");
                        });
                        ui.horizontal_wrapped(|ui| {
                            ui.checkbox(&mut view.follow, "follow selected (F)");
                            if ui.button("Fit world (Home)").clicked() {
                                view.refit = true;
                            }
                            if ui.button("Screenshot (F12)").clicked() {
                                actions.write(Action::Screenshot);
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
                            if config.predators.count > 0 {
                                swatch(ui, PREDATOR_COLOUR, "predator");
                            }
                        });
                    });
            });
        });
    Ok(())
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

/// The widget of one config key; returns the new value when the user changed it.
fn param_widget(
    ui: &mut egui::Ui,
    key: &str,
    value: &toml::Value,
    limit: Option<f64>,
    half_world: f64,
) -> Option<toml::Value> {
    let m = meta(key);
    let text = label(key);
    let mut out = None;
    ui.horizontal(|ui| {
        match value {
            toml::Value::Boolean(b) => {
                let mut v = *b;
                if ui.checkbox(&mut v, &text).changed() {
                    out = Some(toml::Value::Boolean(v));
                }
            }
            toml::Value::String(s) => {
                ui.label(&text);
                let mut v = s.clone();
                egui::ComboBox::from_id_salt(key)
                    .selected_text(&v)
                    .show_ui(ui, |ui| {
                        for c in m.choices {
                            ui.selectable_value(&mut v, c.to_string(), *c);
                        }
                    });
                if v != *s {
                    out = Some(toml::Value::String(v));
                }
            }
            toml::Value::Integer(i) => {
                let mut v = *i;
                let hi = (m.range.1 as i64).max(v);
                if ui
                    .add(egui::Slider::new(&mut v, m.range.0 as i64..=hi).text(&text))
                    .changed()
                {
                    out = Some(toml::Value::Integer(v));
                }
            }
            toml::Value::Float(x) => {
                let mut v = *x;
                let mut never = v.is_infinite();
                if m.infinite_ok && ui.checkbox(&mut never, "never").changed() {
                    out = Some(toml::Value::Float(if never {
                        f64::INFINITY
                    } else {
                        m.range.1.min(60.0)
                    }));
                }
                if !never {
                    let mut hi = m.range.1;
                    if let Some(l) = limit {
                        hi = hi.min(l);
                    }
                    if m.unit == "px"
                        && (key.contains("radius") || key.contains(".r_") || key.ends_with("range"))
                    {
                        hi = hi.min(half_world - 1.0);
                    }
                    let lo = m.range.0.min(hi);
                    let mut slider = egui::Slider::new(&mut v, lo..=hi.max(lo))
                        .text(&text)
                        .logarithmic(m.log);
                    if !m.unit.is_empty() {
                        slider = slider.suffix(format!(" {}", m.unit));
                    }
                    if ui.add(slider).changed() {
                        out = Some(toml::Value::Float(v));
                    }
                }
            }
            other => {
                ui.label(format!("{text}: {other}"));
            }
        }
        if m.on_reset {
            ui.label(egui::RichText::new("(on reset)").small().weak());
        }
    });
    out
}

/// The right panel: inspector of the selected boid and the world browser (needs `&mut World`).
fn inspector_panel(world: &mut World) {
    let Ok(ctx) = world
        .query_filtered::<&mut EguiContext, With<PrimaryEguiContext>>()
        .single_mut(world)
        .map(|mut c| c.get_mut().clone())
    else {
        return;
    };
    if world.resource::<RunControl>().panels {
        let selected = world
            .resource::<Selected>()
            .0
            .filter(|e| world.get::<Boid>(*e).is_some());
        egui::SidePanel::right("inspector")
            .resizable(true)
            .default_width(RIGHT_WIDTH)
            .show(&ctx, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    ui.heading("Inspector");
                    match selected {
                        Some(entity) => {
                            let name = world
                                .get::<Name>(entity)
                                .map(|n| n.as_str().to_string())
                                .unwrap_or_default();
                            ui.strong(name);
                            if let Some(text) = neighbour_summary(world, entity) {
                                ui.label(text);
                            }
                            let mut view = *world.resource::<CameraView>();
                            if ui.checkbox(&mut view.follow, "follow (F)").changed() {
                                *world.resource_mut::<CameraView>() = view;
                            }
                            let registry = world.resource::<AppTypeRegistry>().0.clone();
                            let registry = registry.read();
                            component_ui::<AgentId>(world, entity, ui, &registry, "AgentId");
                            component_ui::<Swarm>(world, entity, ui, &registry, "Swarm");
                            component_ui::<Position>(world, entity, ui, &registry, "Position (px)");
                            component_ui::<Velocity>(
                                world,
                                entity,
                                ui,
                                &registry,
                                "Velocity (px/s)",
                            );
                            component_ui::<Health>(world, entity, ui, &registry, "Health");
                            component_ui::<Steering>(
                                world,
                                entity,
                                ui,
                                &registry,
                                "Steering (px/s²)",
                            );
                            component_ui::<Breeding>(world, entity, ui, &registry, "Breeding");
                            drop(registry);
                            egui::CollapsingHeader::new("All components")
                                .default_open(false)
                                .show(ui, |ui| {
                                    bevy_inspector::ui_for_entity(world, entity, ui);
                                });
                        }
                        None => {
                            ui.label("Click a boid to select and inspect it (Esc clears).");
                        }
                    }
                    ui.separator();
                    egui::CollapsingHeader::new("World: entities & resources")
                        .default_open(false)
                        .show(ui, |ui| {
                            bevy_inspector::ui_for_world(world, ui);
                        });
                });
            });
    }
    // Fit the camera to what the panels leave free.
    let free = ctx.available_rect();
    world.resource_mut::<CameraView>().free_rect =
        Some(Rect::new(free.min.x, free.min.y, free.max.x, free.max.y));
}

/// An editable view of one of the entity's components (through `Reflect`).
fn component_ui<T: Component<Mutability = Mutable> + Reflect>(
    world: &mut World,
    entity: Entity,
    ui: &mut egui::Ui,
    registry: &TypeRegistry,
    title: &str,
) {
    let Some(mut component) = world.get_mut::<T>(entity) else {
        return;
    };
    egui::CollapsingHeader::new(title)
        .default_open(true)
        .show(ui, |ui| {
            // Only an actual edit marks the component changed.
            if reflect_inspector::ui_for_value(component.bypass_change_detection(), ui, registry) {
                component.set_changed();
            }
        });
}

/// "n within r_sep (any swarm), n within r_ali (own swarm)" from the last step's index.
fn neighbour_summary(world: &World, entity: Entity) -> Option<String> {
    let snapshot = world.resource::<Snapshot>();
    let i = snapshot.slot_of(entity)?;
    let config = world.resource::<SimConfig>();
    let index = world_index(world);
    let p = config.swarms.get(snapshot.swarm[i]);
    let (mut sep, mut ali, mut coh) = (0, 0, 0);
    index.for_each_within(snapshot.pos[i], p.query_radius(), |j, off| {
        if j == i {
            return;
        }
        let d = off.length();
        let same = snapshot.swarm[j] == snapshot.swarm[i];
        sep += (d < p.separation_radius) as u32;
        ali += (same && d < p.alignment_radius) as u32;
        coh += (same && d < p.cohesion_radius) as u32;
    });
    Some(format!(
        "neighbours: {sep} within r_sep (any swarm), {ali} within r_ali, {coh} within r_coh (own swarm)"
    ))
}

fn help_window(mut contexts: EguiContexts, mut control: ResMut<RunControl>) -> Result {
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
                for (k, what) in [
                    ("Space", "pause / resume"),
                    ("S", "one step (pauses)"),
                    ("R / Shift+R", "reset with the same / a new seed"),
                    ("+ / −", "speed ×0.25 … ×8"),
                    ("click", "select the nearest boid"),
                    ("Esc", "clear the selection"),
                    ("drag", "pan"),
                    ("wheel", "zoom at the cursor"),
                    ("F", "follow the selected boid"),
                    ("Home", "fit the world"),
                    ("Tab", "show / hide the panels"),
                    ("E", "export metrics CSV"),
                    ("F12", "screenshot (PNG in the working folder)"),
                    ("H or ?", "this help"),
                ] {
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
