//! PNG plots with plotters (text drawn with egui's bundled Ubuntu font through ab_glyph, so no
//! system font library is needed), one file per kind of output folder: `run` (a run's S/I/R
//! curves and reproduction numbers), `experiment` (the grid of infected-fraction curves, all
//! means overlaid, the (B, D) heatmaps) and `sweep` (each output against each parameter, the
//! tornado and PRCC plots). Sizes are fixed constants so tests can check them; the shared
//! drawing pieces live here.

mod compare;
mod experiment;
mod run;
mod sweep;
#[cfg(test)]
mod tests;

pub use compare::{COMPARE_PLOT, DIFF_PANEL, PairedDifference, plot_comparison};
pub use experiment::{fraction_band, matrix_cell, plot_experiment};
pub use run::{plot_rt, plot_run, plot_run_folder};
pub use sweep::{TORNADO_PLOT, plot_sweep, prcc_heatmap, tornado};

use anyhow::{Result, anyhow};
use plotters::prelude::*;

use super::results::{Series, Span};

/// Chart coordinates of every time plot.
pub(super) type TimeAxes =
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>;

/// Shades of the interventions' spans, one per name in order of first appearance.
const SPAN_SHADES: [RGBColor; 4] = [
    RGBColor(148, 103, 189),
    RGBColor(255, 187, 60),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
];

/// Shades each intervention's span (start to end) behind a time plot, `alpha` strong, with a
/// legend entry per name when `legend`; a span that starts and ends at once (a one-off
/// vaccination round or importation) is a vertical line.
pub(super) fn draw_spans<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, TimeAxes>,
    spans: &[Span],
    y_max: f64,
    alpha: f64,
    legend: bool,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let mut names: Vec<&str> = Vec::new();
    for s in spans {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    for (k, name) in names.iter().enumerate() {
        let shade = SPAN_SHADES[k % SPAN_SHADES.len()];
        let mine: Vec<&Span> = spans.iter().filter(|s| s.name == *name).collect();
        let drawn = chart
            .draw_series(mine.iter().map(|s| {
                let (from, to) = if s.to > s.from {
                    (s.from, s.to)
                } else {
                    // A one-off: a thin bar.
                    (s.from, s.from + 0.003 * chart_width(spans))
                };
                Rectangle::new([(from, 0.0), (to, y_max)], shade.mix(alpha).filled())
            }))
            .map_err(err)?;
        if legend {
            drawn
                .label(format!("intervention: {name}"))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 20, y + 5)], shade.mix(0.35).filled())
                });
        }
    }
    Ok(())
}

/// A width to draw one-off spans with: a share of the latest span end.
fn chart_width(spans: &[Span]) -> f64 {
    spans.iter().map(|s| s.to).fold(1.0, f64::max)
}

/// Size of a run's S/I/R plot, px.
pub const RUN_PLOT: (u32, u32) = (900, 500);
/// Size of one panel of the infected-fraction grid, px.
pub const GRID_PANEL: (u32, u32) = (520, 380);
/// Size of the overlay plot, px.
pub const OVERLAY_PLOT: (u32, u32) = (1200, 700);
/// Size of a heatmap, px.
pub const HEATMAP_PLOT: (u32, u32) = (760, 640);
/// Size of a run's reproduction-number plot, px.
pub const RT_PLOT: (u32, u32) = (900, 600);
/// Bins of a scatter plot's trend line (equal counts).
pub(super) const TREND_BINS: usize = 8;
/// Size of one sweep scatter plot, px.
pub const SCATTER_PLOT: (u32, u32) = (700, 500);

/// Series colours, distinguishable on white.
pub(super) const PALETTE: [RGBColor; 9] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(23, 190, 207),
];

/// Draws a chart's legend: labels of `font_px` in a white box with a black border.
pub(super) fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    font_px: u32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    // At the top right, in the headroom the time plots leave above their curves.
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", font_px))
        .draw()
        .map_err(err)
}

pub(super) fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("plotting failed: {e}")
}

pub(super) fn max_time(series: &[&Series]) -> f64 {
    series
        .iter()
        .flat_map(|s| s.column("time_s"))
        .map(|(t, _)| t)
        .fold(1e-9, f64::max)
}
