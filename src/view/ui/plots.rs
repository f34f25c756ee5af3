//! Panel section: plots over the whole run — S/I/R/dead, the reproduction numbers (Cori R_t with
//! its 95 % credible interval and R_c, from the transmission record), infected per swarm,
//! polarisation and cohesion per swarm, and the flock structure per swarm (largest flock, nn_cv,
//! milling, elongation; docs/model.md §8). Interventions' spans shade the S/I/R and R plots.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_egui::egui;
use egui_plot::{Line, Plot, PlotPoints, Polygon};

use super::color32;
use crate::sim::clock::SimClock;
use crate::sim::config::SimConfig;
use crate::sim::interventions::InterventionLog;
use crate::sim::metrics::{MetricsLog, Sample};
use crate::sim::reproduction::{RtRow, reproduction_series};
use crate::sim::swarm::Swarm;
use crate::sim::transmission::TransmissionLog;
use crate::view::render::{Tint, boid_colour};
use crate::view::timeline::Timeline;

/// Height of each plot, logical px.
const PLOT_HEIGHT: f32 = 120.0;
/// Plots thin longer series to about this many points.
const PLOT_POINTS: usize = 1500;

/// What the plots read.
#[derive(SystemParam)]
pub(super) struct Plots<'w, 's> {
    log: Res<'w, MetricsLog>,
    transmissions: Res<'w, TransmissionLog>,
    config: Res<'w, SimConfig>,
    clock: Res<'w, SimClock>,
    interventions: Res<'w, InterventionLog>,
    timeline: Res<'w, Timeline>,
    rt: Local<'s, RtCache>,
}

/// The reproduction numbers, recomputed when the record, the window or the clock's whole bins
/// change.
#[derive(Default)]
pub(super) struct RtCache {
    key: (usize, usize, u64, u64),
    rows: Vec<RtRow>,
}

impl Plots<'_, '_> {
    /// The R_t / R_c rows of the run so far.
    fn rt_rows(&mut self) -> &[RtRow] {
        let window = self.config.rt_window;
        let bins = (self.clock.time / (window / 5.0)).floor() as u64;
        let log = &*self.transmissions;
        let key = (log.records.len(), log.ended.len(), window.to_bits(), bins);
        if self.rt.key != key {
            self.rt.rows =
                reproduction_series(&log.records, window, self.config.dt, self.clock.time);
            self.rt.key = key;
        }
        &self.rt.rows
    }
}

/// The R_t plot's lines: posterior mean, its 95 % band, R_c, and R = 1.
fn rt_lines(rows: &[RtRow]) -> (Keys, Vec<Line<'static>>) {
    let pick = |f: fn(&RtRow) -> Option<f64>| -> PlotPoints<'static> {
        PlotPoints::from(
            rows.iter()
                .filter_map(|r| f(r).map(|y| [r.time_s, y]))
                .collect::<Vec<_>>(),
        )
    };
    let blue = egui::Color32::from_rgb(90, 160, 255);
    let orange = egui::Color32::from_rgb(255, 160, 60);
    let grey = egui::Color32::from_gray(140);
    let t_end = rows.last().map_or(1.0, |r| r.time_s);
    let keys = vec![
        ("R_t".to_string(), blue),
        ("95 % CrI".to_string(), blue.gamma_multiply(0.45)),
        ("R_c".to_string(), orange),
        ("R = 1".to_string(), grey),
    ];
    let lines = vec![
        Line::new("R_t", pick(|r| r.reported().map(|x| x[0]))).color(blue),
        Line::new("95 % CrI", pick(|r| r.reported().map(|x| x[1])))
            .color(blue.gamma_multiply(0.45))
            .width(1.0),
        Line::new("95 % CrI", pick(|r| r.reported().map(|x| x[2])))
            .color(blue.gamma_multiply(0.45))
            .width(1.0),
        Line::new("R_c", pick(|r| r.rc)).color(orange),
        Line::new("R = 1", PlotPoints::from(vec![[0.0, 1.0], [t_end, 1.0]]))
            .color(grey)
            .width(1.0),
    ];
    (keys, lines)
}

/// One per-swarm measure of a sample (the swarm by index).
type Measure = fn(&Sample, usize) -> Option<f64>;

/// The per-swarm plots: id, y-axis label, measure.
const PER_SWARM: [(&str, &str, Measure); 7] = [
    ("infected", "infected", |x, k| {
        Some(x.swarms[k].infected as f64)
    }),
    ("polarisation", "polarisation", |x, k| {
        x.swarms[k].polarisation
    }),
    ("cohesion", "cohesion (px)", |x, k| x.swarms[k].cohesion_px),
    ("largest_flock", "largest flock", |x, k| {
        x.swarms[k].largest_flock_frac
    }),
    ("nn_cv", "nn cv", |x, k| x.swarms[k].nn_cv),
    ("milling", "milling", |x, k| x.swarms[k].milling),
    ("elongation", "elongation", |x, k| x.swarms[k].elongation),
];

/// How many of [`PER_SWARM`] are shown above the "Flock structure" header.
const BEFORE_STRUCTURE: usize = 3;

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

/// The shade of an intervention's span.
const SPAN_SHADE: egui::Color32 = egui::Color32::from_rgba_premultiplied(24, 16, 35, 40);

/// Shaded spans of the interventions, 0 to `top`.
fn span_shades(spans: &[(String, f64, f64)], top: f64) -> Vec<Polygon<'static>> {
    spans
        .iter()
        .map(|(name, from, to)| {
            let to = to.max(from + 0.05);
            Polygon::new(
                format!("⧗ {name}"),
                PlotPoints::from(vec![[*from, 0.0], [to, 0.0], [to, top], [*from, top]]),
            )
            .fill_color(SPAN_SHADE)
            .stroke(egui::Stroke::NONE)
        })
        .collect()
}

/// The y axis reaches a little above the highest value.
const HEADROOM: f64 = 1.05;

/// A plot's legend: each line's name in its colour.
type Keys = Vec<(String, egui::Color32)>;

/// The legend as one row above the plot, so it never covers a curve.
fn legend_row(ui: &mut egui::Ui, keys: &Keys) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 10.0;
        for (name, colour) in keys {
            ui.label(egui::RichText::new(format!("— {name}")).color(*colour));
        }
    });
}

fn plot(ui: &mut egui::Ui, id: &str, y_label: &str, top: f64, lines: (Keys, Vec<Line<'static>>)) {
    plot_with(ui, id, y_label, top, lines, Vec::new());
}

fn plot_with(
    ui: &mut egui::Ui,
    id: &str,
    y_label: &str,
    top: f64,
    (keys, lines): (Keys, Vec<Line<'static>>),
    shades: Vec<Polygon<'static>>,
) {
    legend_row(ui, &keys);
    Plot::new(id)
        .height(PLOT_HEIGHT)
        .x_axis_label("time (s)")
        .y_axis_label(y_label)
        // A flat series (no one infected yet) still gets numbers on its axis.
        .include_y(0.0)
        .include_y(top.max(1.0) * HEADROOM)
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .show(ui, |p| {
            for shade in shades {
                p.polygon(shade);
            }
            for line in lines {
                p.line(line);
            }
        });
}

/// The highest value of a per-swarm measure over the run.
fn top_of(samples: &[Sample], f: Measure) -> f64 {
    samples
        .iter()
        .flat_map(|x| (0..3).filter_map(move |k| f(x, k)))
        .fold(0.0, f64::max)
}

/// One line per swarm that has boids, in its colour.
fn per_swarm(samples: &[Sample], f: Measure) -> (Keys, Vec<Line<'static>>) {
    let swarms: Vec<Swarm> = Swarm::ALL
        .into_iter()
        .filter(|sw| {
            samples
                .last()
                .is_some_and(|x| x.swarms[sw.index()].alive > 0)
        })
        .collect();
    let colour = |sw: Swarm| color32(boid_colour(sw, Tint::Healthy));
    let keys = swarms
        .iter()
        .map(|&sw| (sw.label().to_string(), colour(sw)))
        .collect();
    let lines = swarms
        .iter()
        .map(|&sw| {
            let k = sw.index();
            Line::new(sw.label(), series(samples, move |x| f(x, k))).color(colour(sw))
        })
        .collect();
    (keys, lines)
}

/// Draws every plot.
pub(super) fn show(ui: &mut egui::Ui, p: &mut Plots) {
    let window = p.config.rt_window;
    let (rt_top, rt) = {
        let rows = p.rt_rows();
        let top = rows
            .iter()
            .filter_map(|r| r.reported().map(|x| x[0]))
            .fold(2.0, f64::max);
        (top, rt_lines(rows))
    };
    let s = &p.log.samples;
    let spans = p.interventions.spans(p.clock.time);
    let alive_top = s.iter().map(|x| x.overall.alive as f64).fold(1.0, f64::max);
    let colour = |tint| color32(boid_colour(Swarm::Normal, tint));
    let brown = egui::Color32::from_rgb(170, 120, 70);
    let mut keys: Keys = vec![
        ("S".into(), colour(Tint::Healthy)),
        ("I".into(), colour(Tint::Infected)),
        ("R".into(), colour(Tint::Recovered)),
        ("dead".into(), brown),
    ];
    if !spans.is_empty() {
        keys.push((
            "interventions (shaded)".into(),
            SPAN_SHADE.gamma_multiply(4.0),
        ));
    }
    // S, I, R and dead of `samples`, each in its colour (dead brown, told from recovered grey)
    // times `alpha`, named with `suffix`.
    let sird = |samples: &[Sample], suffix: &str, alpha: f32| -> Vec<Line<'static>> {
        let read: [(&str, egui::Color32, fn(&Sample) -> u64); 4] = [
            ("S", colour(Tint::Healthy), |x| x.overall.susceptible),
            ("I", colour(Tint::Infected), |x| x.overall.infected),
            ("R", colour(Tint::Recovered), |x| x.overall.recovered),
            ("dead", brown, |x| x.overall.dead),
        ];
        read.into_iter()
            .map(|(name, c, f)| {
                Line::new(
                    format!("{name}{suffix}"),
                    series(samples, move |x| Some(f(x) as f64)),
                )
                .color(c.gamma_multiply(alpha))
            })
            .collect()
    };
    // After a branch, the abandoned future stays as faint lines to compare with.
    let ghost = &p.timeline.ghost;
    let mut lines = Vec::new();
    if !ghost.is_empty() {
        keys.push(("abandoned future (faint)".into(), egui::Color32::GRAY));
        lines = sird(ghost, " before", 0.35);
    }
    lines.extend(sird(s, "", 1.0));
    plot_with(
        ui,
        "sir",
        "boids",
        alive_top,
        (keys, lines),
        span_shades(&spans, alive_top * HEADROOM),
    );
    ui.label(
        egui::RichText::new(format!(
            "R_t: new infections per unit of current infectiousness over the last {window} s \
             (Cori; band 95 %; shown once the data outweigh the prior) · R_c: mean boids \
             infected by those infected in that window, once all have ended"
        ))
        .weak(),
    );
    plot_with(
        ui,
        "rt",
        "R",
        rt_top,
        rt,
        span_shades(&spans, rt_top * HEADROOM),
    );
    for (id, label, f) in &PER_SWARM[..BEFORE_STRUCTURE] {
        plot(ui, id, label, top_of(s, *f), per_swarm(s, *f));
    }
    egui::CollapsingHeader::new("Flock structure")
        .default_open(true)
        .show(ui, |ui| {
            ui.label(
                egui::RichText::new(
                    "largest flock: share of the swarm in its biggest flock · nn cv: spread of \
                     nearest-neighbour distances (lattice ≈ 0, random ≈ 0.5) · milling: 1 = \
                     circling a centre · elongation: 0 round, 1 a line",
                )
                .weak(),
            );
            for (id, label, f) in &PER_SWARM[BEFORE_STRUCTURE..] {
                plot(ui, id, label, top_of(s, *f), per_swarm(s, *f));
            }
        });
}
