//! An experiment's plots: the grid of infected-fraction curves (mean ± 95 % CI over seeds) per
//! scenario, all means overlaid, and heatmaps of peak infected and eradication time over the
//! (B, D) matrix.

use std::path::Path;

use anyhow::Result;
use plotters::prelude::*;

use super::*;
use crate::fonts::ensure_font;
use crate::png::Bitmap;
use crate::run::results::{RunRecord, Series, Span};
use crate::sim::stats::estimate;

/// Mean and 95 % CI of the infected fraction over a scenario's runs, per sample time.
pub fn fraction_band(runs: &[&Series]) -> Vec<(f64, f64, f64, f64)> {
    let cols: Vec<Vec<(f64, f64)>> = runs.iter().map(|s| s.column("pct_infected")).collect();
    let n = cols.iter().map(Vec::len).min().unwrap_or(0);
    (0..n)
        .filter_map(|k| {
            let t = cols[0][k].0;
            let e = estimate(cols.iter().map(|c| c[k].1 / 100.0))?;
            let (lo, hi) = if e.n > 1 {
                (e.ci_low.max(0.0), e.ci_high.min(1.0))
            } else {
                (e.mean, e.mean)
            };
            Some((t, e.mean, lo, hi))
        })
        .collect()
}

/// Scenario names of a B×D matrix (`B1_D2`) as (row, column), or None.
pub fn matrix_cell(name: &str) -> Option<(usize, usize)> {
    let b = name.strip_prefix('B')?;
    let (b, d) = b.split_once("_D")?;
    Some((
        b.parse::<usize>().ok()?.checked_sub(1)?,
        d.parse::<usize>().ok()?.checked_sub(1)?,
    ))
}

/// The experiment's plots: `infected_grid.png`, `infected_overlay.png`, and for a B×D matrix
/// `heatmap_peak_infected.png` and `heatmap_eradication_time.png`.
pub fn plot_experiment(
    dir: &Path,
    scenarios: &[(String, Vec<(RunRecord, Series)>)],
) -> Result<Vec<std::path::PathBuf>> {
    ensure_font();
    std::fs::create_dir_all(dir).map_err(err)?;
    let mut written = Vec::new();
    let bands: Vec<(String, Vec<(f64, f64, f64, f64)>)> = scenarios
        .iter()
        .map(|(name, runs)| {
            let series: Vec<&Series> = runs.iter().map(|(_, s)| s).collect();
            (name.clone(), fraction_band(&series))
        })
        .collect();
    let t_max = bands
        .iter()
        .flat_map(|(_, b)| b.iter().map(|p| p.0))
        .fold(1e-9, f64::max);
    let y_max = bands
        .iter()
        .flat_map(|(_, b)| b.iter().map(|p| p.3))
        .fold(0.05, f64::max)
        .min(1.0)
        * 1.08;

    // Grid of panels: B rows × D columns for a matrix, else near-square.
    let cells: Vec<(usize, usize)> = match bands
        .iter()
        .map(|(n, _)| matrix_cell(n))
        .collect::<Option<Vec<_>>>()
    {
        Some(c) => c,
        None => {
            let cols = (bands.len() as f64).sqrt().ceil().max(1.0) as usize;
            (0..bands.len()).map(|k| (k / cols, k % cols)).collect()
        }
    };
    let rows = cells.iter().map(|c| c.0 + 1).max().unwrap_or(1);
    let cols = cells.iter().map(|c| c.1 + 1).max().unwrap_or(1);
    let path = dir.join("infected_grid.png");
    {
        crate::png::draw_png(
            &path,
            (GRID_PANEL.0 * cols as u32, GRID_PANEL.1 * rows as u32 + 50),
            WHITE,
            |root| {
                let (title, body) = root.split_vertically(50);
                title
                    .titled(
                        "Infected fraction over time: mean ± 95 % CI over seeds",
                        ("sans-serif", 26),
                    )
                    .map_err(err)?;
                let panels = body.split_evenly((rows, cols));
                for (((name, band), (r, c)), (_, runs)) in bands.iter().zip(&cells).zip(scenarios) {
                    let area = &panels[r * cols + c];
                    let colour = PALETTE[(r * cols + c) % PALETTE.len()];
                    let mut chart = fraction_chart(area, name, (20, 13), (t_max, y_max))?;
                    // Each run's interventions, faint: where they overlap over seeds they darken.
                    let spans: Vec<Span> = runs.iter().flat_map(|(_, s)| s.spans.clone()).collect();
                    let alpha = 0.3 / runs.len().max(1) as f64;
                    draw_spans(&mut chart, &spans, y_max, alpha.max(0.03), false)?;
                    let mut poly: Vec<(f64, f64)> = band.iter().map(|p| (p.0, p.3)).collect();
                    poly.extend(band.iter().rev().map(|p| (p.0, p.2)));
                    chart
                        .draw_series(std::iter::once(Polygon::new(poly, colour.mix(0.25))))
                        .map_err(err)?;
                    chart
                        .draw_series(LineSeries::new(
                            band.iter().map(|p| (p.0, p.1)),
                            colour.stroke_width(2),
                        ))
                        .map_err(err)?;
                }
                Ok(())
            },
        )?;
    }
    written.push(path);

    // All means overlaid.
    let path = dir.join("infected_overlay.png");
    {
        crate::png::draw_png(&path, OVERLAY_PLOT, WHITE, |root| {
            let title = "Mean infected fraction, every scenario";
            let mut chart = fraction_chart(root, title, (24, 15), (t_max, y_max))?;
            for (k, (name, band)) in bands.iter().enumerate() {
                let colour = PALETTE[k % PALETTE.len()];
                chart
                    .draw_series(LineSeries::new(
                        band.iter().map(|p| (p.0, p.1)),
                        colour.stroke_width(2),
                    ))
                    .map_err(err)?
                    .label(name.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                    });
            }
            draw_legend(&mut chart, 15)?;
            Ok(())
        })?;
    }
    written.push(path);

    // Heatmaps over the (B, D) matrix.
    if bands.iter().all(|(n, _)| matrix_cell(n).is_some()) && !bands.is_empty() {
        let cell_of = |measure: &str| -> Vec<(usize, usize, Option<f64>, usize, usize)> {
            scenarios
                .iter()
                .map(|(name, runs)| {
                    let (r, c) = matrix_cell(name).expect("checked");
                    let vals: Vec<f64> = runs
                        .iter()
                        .filter_map(|(rec, _)| rec.get(measure))
                        .collect();
                    let mean = estimate(vals.iter().copied()).map(|e| e.mean);
                    (r, c, mean, vals.len(), runs.len())
                })
                .collect()
        };
        for (file, measure, title, unit) in [
            (
                "heatmap_peak_infected.png",
                "peak_fraction",
                "Peak infected fraction (mean over seeds)",
                "",
            ),
            (
                "heatmap_eradication_time.png",
                "eradication_time_s",
                "Eradication time (mean over eradicated runs)",
                " s",
            ),
        ] {
            let path = dir.join(file);
            heatmap(&path, title, unit, rows, cols, &cell_of(measure))?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Axes of an infected-fraction-over-time chart; `fonts` are the caption and label sizes.
fn fraction_chart<'a, 'b>(
    area: &'a DrawingArea<Bitmap<'b>, plotters::coord::Shift>,
    caption: &str,
    fonts: (u32, u32),
    (t_max, y_max): (f64, f64),
) -> Result<
    ChartContext<
        'a,
        Bitmap<'b>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", fonts.0))
        .margin(fonts.0 / 2)
        .x_label_area_size(fonts.1 * 3)
        .y_label_area_size(fonts.1 * 4)
        .build_cartesian_2d(0.0..t_max, 0.0..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("infected fraction")
        .label_style(("sans-serif", fonts.1))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// Linear blue → yellow colour scale (viridis-like), `x` in 0..1.
pub(super) fn scale_colour(x: f64) -> RGBColor {
    let stops = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let x = x.clamp(0.0, 1.0) * (stops.len() - 1) as f64;
    let i = (x.floor() as usize).min(stops.len() - 2);
    let f = x - i as f64;
    let (a, b) = (stops[i], stops[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f) as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn heatmap(
    path: &Path,
    title: &str,
    unit: &str,
    rows: usize,
    cols: usize,
    cells: &[(usize, usize, Option<f64>, usize, usize)],
) -> Result<()> {
    use plotters::coord::ranged1d::SegmentValue;
    crate::png::draw_png(path, HEATMAP_PLOT, WHITE, |root| {
        // The colour bar on the right says what the colours mean.
        let (main, bar) = root.split_horizontally(HEATMAP_PLOT.0 - 120);
        let mut chart = ChartBuilder::on(&main)
            .caption(title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(70)
            // A discrete range `0..n` has n + 1 segments (both ends included).
            .build_cartesian_2d(
                (0..cols - 1).into_segmented(),
                (0..rows - 1).into_segmented(),
            )
            .map_err(err)?;
        // Row 0 (B1) at the top: row r is drawn at y = rows − 1 − r.
        let centre = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => Some(*i),
            SegmentValue::Last => None,
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(cols)
            .y_labels(rows)
            .x_label_formatter(&|v| centre(v).map_or(String::new(), |i| format!("D{}", i + 1)))
            .y_label_formatter(&|v| centre(v).map_or(String::new(), |i| format!("B{}", rows - i)))
            .x_desc("doctor strategy (D1 passive, D2 seek nearest, D3 seek centroid)")
            .y_desc("flocking (B1 line, B2 oval, B3 chaotic)")
            .label_style(("sans-serif", 16))
            .draw()
            .map_err(err)?;
        let defined: Vec<f64> = cells.iter().filter_map(|c| c.2).collect();
        let (lo, hi) = defined
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let centred = plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Center,
        );
        for &(r, c, value, n, total) in cells {
            let y = rows - 1 - r;
            let level = value.map(|v| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 });
            let colour = level.map_or(RGBColor(220, 220, 220), scale_colour);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [
                        (SegmentValue::Exact(c), SegmentValue::Exact(y)),
                        (SegmentValue::Exact(c + 1), SegmentValue::Exact(y + 1)),
                    ],
                    colour.filled(),
                )))
                .map_err(err)?;
            let ink = if level.is_none_or(|l| l > 0.6) {
                BLACK
            } else {
                WHITE
            };
            let text = value.map_or("never".to_string(), |v| format!("{v:.2}{unit}"));
            let at = (SegmentValue::CenterOf(c), SegmentValue::CenterOf(y));
            chart
                .draw_series([
                    EmptyElement::at(at.clone())
                        + Text::new(
                            text,
                            (0, -12),
                            ("sans-serif", 26).into_font().color(&ink).pos(centred),
                        ),
                    EmptyElement::at(at)
                        + Text::new(
                            format!("n = {n} of {total}"),
                            (0, 18),
                            ("sans-serif", 15).into_font().color(&ink).pos(centred),
                        ),
                ])
                .map_err(err)?;
        }
        if lo.is_finite() && hi.is_finite() {
            colour_bar(&bar, lo, hi, unit)?;
        }
        Ok(())
    })
}

/// A vertical colour bar from `lo` (bottom) to `hi` (top) in the heatmap's scale.
fn colour_bar(
    area: &DrawingArea<Bitmap<'_>, plotters::coord::Shift>,
    lo: f64,
    hi: f64,
    unit: &str,
) -> Result<()> {
    let top = if hi > lo { hi } else { lo + 1.0 };
    let mut chart = ChartBuilder::on(area)
        .margin_top(60)
        .margin_bottom(66)
        .margin_right(8)
        .y_label_area_size(62)
        .build_cartesian_2d(0.0..1.0, lo..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(5)
        .y_label_formatter(&|v| format!("{v:.2}{unit}"))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(err)?;
    let steps = 100;
    chart
        .draw_series((0..steps).map(|k| {
            let (a, b) = (k as f64 / steps as f64, (k + 1) as f64 / steps as f64);
            let (y0, y1) = (lo + a * (top - lo), lo + b * (top - lo));
            Rectangle::new([(0.0, y0), (1.0, y1)], scale_colour(a).filled())
        }))
        .map_err(err)?;
    Ok(())
}
