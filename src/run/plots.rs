//! PNG plots with plotters (text drawn with egui's bundled Ubuntu font through ab_glyph, so no
//! system font library is needed): a run's S/I/R curves; for an experiment, the grid of
//! infected-fraction curves (mean ± 95 % CI over seeds) per scenario, all means overlaid, and
//! heatmaps of peak infected and eradication time over the (B, D) matrix; for a sweep, each
//! measure against each parameter. Sizes are fixed constants so tests can check them.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;

use super::results::{RunRecord, Series};
use crate::fonts::ensure_font;
use crate::sim::stats::binned_trend;
use crate::sim::stats::estimate;

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
const TREND_BINS: usize = 8;
/// Size of one sweep scatter plot, px.
pub const SCATTER_PLOT: (u32, u32) = (700, 500);

/// Series colours, distinguishable on white.
const PALETTE: [RGBColor; 9] = [
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
fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    font_px: u32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", font_px))
        .draw()
        .map_err(err)
}

fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("plotting failed: {e}")
}

fn max_time(series: &[&Series]) -> f64 {
    series
        .iter()
        .flat_map(|s| s.column("time_s"))
        .map(|(t, _)| t)
        .fold(1e-9, f64::max)
}

/// A run's S, I, R and dead counts over time.
pub fn plot_run(series: &Series, title: &str, path: &Path) -> Result<()> {
    ensure_font();
    let root = BitMapBackend::new(path, RUN_PLOT).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let lines = [
        ("susceptible", RGBColor(44, 160, 44)),
        ("infected", RGBColor(214, 39, 40)),
        ("recovered", RGBColor(127, 127, 127)),
        ("dead", RGBColor(20, 20, 20)),
    ];
    let y_max = lines
        .iter()
        .flat_map(|(c, _)| series.column(c))
        .map(|(_, v)| v)
        .fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..max_time(&[series]), 0.0..y_max * 1.05)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("boids")
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    for (name, colour) in lines {
        chart
            .draw_series(LineSeries::new(series.column(name), colour.stroke_width(2)))
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }
    draw_legend(&mut chart, 15)?;
    root.present().map_err(err)
}

/// A run's reproduction numbers from its `rt.csv`: Cori R_t with its 95 % credible band and
/// the case reproduction number R_c above, the threshold R = 1 dashed; incidence per bin
/// (contact and imported) below.
pub fn plot_rt(rt: &Series, title: &str, path: &Path) -> Result<()> {
    ensure_font();
    let root = BitMapBackend::new(path, RT_PLOT).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (top, bottom) = root.split_vertically(RT_PLOT.1 * 62 / 100);
    let t_max = max_time(&[rt]);
    let mean = rt.column("rt_mean");
    let (lo, hi) = (rt.column("rt_lo95"), rt.column("rt_hi95"));
    let rc = rt.column("rc");
    // Early windows with few cases have wide intervals: the axis follows the estimates.
    let y_max = mean
        .iter()
        .chain(&rc)
        .map(|(_, v)| 1.3 * v)
        .fold(2.0, f64::max)
        .min(hi.iter().map(|(_, v)| *v).fold(2.0, f64::max));
    let clip = |v: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
        v.into_iter().map(|(t, y)| (t, y.min(y_max))).collect()
    };
    let mut chart = ChartBuilder::on(&top)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..t_max, 0.0..y_max * 1.02)
        .map_err(err)?;
    chart
        .configure_mesh()
        .y_desc("reproduction number")
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    let blue = RGBColor(31, 119, 180);
    let orange = RGBColor(255, 127, 14);
    let band: Vec<(f64, f64)> = clip(lo)
        .into_iter()
        .chain(clip(hi).into_iter().rev())
        .collect();
    if !band.is_empty() {
        chart
            .draw_series(std::iter::once(Polygon::new(band, blue.mix(0.2).filled())))
            .map_err(err)?
            .label("R_t 95 % credible interval")
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 20, y + 5)], blue.mix(0.2).filled())
            });
    }
    chart
        .draw_series(LineSeries::new(clip(mean), blue.stroke_width(2)))
        .map_err(err)?
        .label("R_t (Cori, posterior mean)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], blue.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(clip(rc.clone()), orange.stroke_width(2)))
        .map_err(err)?
        .label("R_c (case reproduction, ended windows)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], orange.stroke_width(2)));
    chart
        .draw_series(DashedLineSeries::new(
            [(0.0, 1.0), (t_max, 1.0)],
            6,
            4,
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
    draw_legend(&mut chart, 14)?;
    let total = rt.column("infections");
    let contact: std::collections::HashMap<u64, f64> = rt
        .column("contact_infections")
        .into_iter()
        .map(|(t, v)| (t.to_bits(), v))
        .collect();
    let n_max = total.iter().map(|(_, v)| *v).fold(1.0, f64::max);
    // Bars span their bin: from the previous bin end to their own.
    let width = total.first().map_or(1.0, |(t, _)| *t);
    let mut chart = ChartBuilder::on(&bottom)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..t_max, 0.0..n_max * 1.05)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("infections / bin")
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    let red = RGBColor(214, 39, 40);
    let grey = RGBColor(160, 160, 160);
    chart
        .draw_series(
            total
                .iter()
                .map(|&(t, n)| Rectangle::new([(t - width, 0.0), (t, n)], grey.filled())),
        )
        .map_err(err)?
        .label("imported (initial, spontaneous, born)")
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], grey.filled()));
    chart
        .draw_series(total.iter().map(|&(t, _)| {
            let c = contact.get(&t.to_bits()).copied().unwrap_or(0.0);
            Rectangle::new([(t - width, 0.0), (t, c)], red.filled())
        }))
        .map_err(err)?
        .label("by contact")
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], red.filled()));
    draw_legend(&mut chart, 14)?;
    root.present().map_err(err)
}

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
        let root = BitMapBackend::new(
            &path,
            (GRID_PANEL.0 * cols as u32, GRID_PANEL.1 * rows as u32 + 50),
        )
        .into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (title, body) = root.split_vertically(50);
        title
            .titled(
                "Infected fraction over time: mean ± 95 % CI over seeds",
                ("sans-serif", 26),
            )
            .map_err(err)?;
        let panels = body.split_evenly((rows, cols));
        for ((name, band), (r, c)) in bands.iter().zip(&cells) {
            let area = &panels[r * cols + c];
            let colour = PALETTE[(r * cols + c) % PALETTE.len()];
            let mut chart = fraction_chart(area, name, (20, 13), (t_max, y_max))?;
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
        root.present().map_err(err)?;
    }
    written.push(path);

    // All means overlaid.
    let path = dir.join("infected_overlay.png");
    {
        let root = BitMapBackend::new(&path, OVERLAY_PLOT).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let title = "Mean infected fraction, every scenario";
        let mut chart = fraction_chart(&root, title, (24, 15), (t_max, y_max))?;
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
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
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
    area: &'a DrawingArea<BitMapBackend<'b>, plotters::coord::Shift>,
    caption: &str,
    fonts: (u32, u32),
    (t_max, y_max): (f64, f64),
) -> Result<
    ChartContext<
        'a,
        BitMapBackend<'b>,
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
fn scale_colour(x: f64) -> RGBColor {
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
    let root = BitMapBackend::new(path, HEATMAP_PLOT).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
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
    root.present().map_err(err)
}

/// Size of a tornado plot, px.
pub const TORNADO_PLOT: (u32, u32) = (760, 460);

/// Blue (−1) → white (0) → red (+1).
fn diverging(x: f64) -> RGBColor {
    let x = x.clamp(-1.0, 1.0);
    let (end, f) = if x < 0.0 {
        ((33.0, 102.0, 172.0), -x)
    } else {
        ((178.0, 24.0, 43.0), x)
    };
    let mix = |a: f64| (255.0 + (a - 255.0) * f) as u8;
    RGBColor(mix(end.0), mix(end.1), mix(end.2))
}

/// The label of segment `v` of a discrete axis from `names`.
fn segment_name(names: &[String], v: &plotters::coord::ranged1d::SegmentValue<usize>) -> String {
    use plotters::coord::ranged1d::SegmentValue;
    match v {
        SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
            names.get(*i).cloned().unwrap_or_default()
        }
        SegmentValue::Last => String::new(),
    }
}

/// A tornado plot of one output's PRCCs (`(parameter, prcc, p-value)`): one bar per
/// parameter, largest |PRCC| at the top, red positive, blue negative, pale when p ≥ 0.05.
pub fn tornado(path: &Path, output: &str, bars: &[(String, f64, Option<f64>)]) -> Result<()> {
    use plotters::coord::ranged1d::SegmentValue;
    ensure_font();
    let mut sorted = bars.to_vec();
    // Bottom to top: smallest |PRCC| first.
    sorted.sort_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
    let names: Vec<String> = sorted.iter().map(|b| b.0.clone()).collect();
    let k = sorted.len().max(1);
    let root = BitMapBackend::new(path, TORNADO_PLOT).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("PRCC with {output}"), ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(230)
        .build_cartesian_2d(-1.0..1.0, (0..k - 1).into_segmented())
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(k)
        .y_label_formatter(&|v| segment_name(&names, v))
        .x_desc("partial rank correlation (pale: p ≥ 0.05)")
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    for (i, (_, r, p)) in sorted.iter().enumerate() {
        let significant = p.is_some_and(|p| p < 0.05);
        let colour = diverging(if significant {
            r.signum()
        } else {
            0.35 * r.signum()
        });
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [
                    (0.0, SegmentValue::Exact(i)),
                    (*r, SegmentValue::Exact(i + 1)),
                ],
                colour.filled(),
            )))
            .map_err(err)?;
        let label = match p {
            Some(p) => format!("{r:+.2} (p = {p:.2e})"),
            None => format!("{r:+.2}"),
        };
        // Long bars carry their label inside, in white; short ones just beyond their end.
        let inside = r.abs() > 0.55;
        let x = r - r.signum() * if inside { 0.02 } else { -0.02 };
        let anchor = if (*r >= 0.0) != inside {
            plotters::style::text_anchor::HPos::Left
        } else {
            plotters::style::text_anchor::HPos::Right
        };
        let style = ("sans-serif", 13)
            .into_font()
            .color(if inside { &WHITE } else { &BLACK })
            .pos(plotters::style::text_anchor::Pos::new(
                anchor,
                plotters::style::text_anchor::VPos::Center,
            ));
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x, SegmentValue::CenterOf(i))) + Text::new(label, (0, 0), style),
            ))
            .map_err(err)?;
    }
    chart
        .draw_series(LineSeries::new(
            [(0.0, SegmentValue::Exact(0)), (0.0, SegmentValue::Exact(k))],
            BLACK,
        ))
        .map_err(err)?;
    root.present().map_err(err)
}

/// The PRCC of every parameter (rows) against every output (columns), coloured blue (−1)
/// to red (+1), each cell labelled with its value (`*`: p < 0.05).
pub fn prcc_heatmap(path: &Path, table: &super::sensitivity::Table) -> Result<()> {
    use plotters::coord::ranged1d::SegmentValue;
    ensure_font();
    let outputs: Vec<String> = table.iter().map(|t| t.0.clone()).collect();
    let params: Vec<String> = table
        .first()
        .map(|t| t.1.iter().map(|r| r.0.clone()).collect())
        .unwrap_or_default();
    let (cols, rows) = (outputs.len().max(1), params.len().max(1));
    let size = (
        (260 + 130 * cols as u32).max(600),
        (140 + 60 * rows as u32).max(320),
    );
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("PRCC: parameters × outputs", ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(230)
        .build_cartesian_2d(
            (0..cols - 1).into_segmented(),
            (0..rows - 1).into_segmented(),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(cols)
        .y_labels(rows)
        .x_label_formatter(&|v| segment_name(&outputs, v))
        .y_label_formatter(&|v| segment_name(&params, v))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(err)?;
    let centred = plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Center,
        plotters::style::text_anchor::VPos::Center,
    );
    for (c, (_, cells)) in table.iter().enumerate() {
        for (r, (_, prcc, _)) in cells.iter().enumerate() {
            let value = prcc.map(|p| p.r);
            let colour = value.map_or(RGBColor(220, 220, 220), diverging);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [
                        (SegmentValue::Exact(c), SegmentValue::Exact(r)),
                        (SegmentValue::Exact(c + 1), SegmentValue::Exact(r + 1)),
                    ],
                    colour.filled(),
                )))
                .map_err(err)?;
            let star = prcc.and_then(|p| p.p).is_some_and(|p| p < 0.05);
            let text = value.map_or("–".to_string(), |v| {
                format!("{v:+.2}{}", if star { "*" } else { "" })
            });
            let ink = if value.is_some_and(|v| v.abs() > 0.6) {
                WHITE
            } else {
                BLACK
            };
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((SegmentValue::CenterOf(c), SegmentValue::CenterOf(r)))
                        + Text::new(
                            text,
                            (0, 0),
                            ("sans-serif", 16).into_font().color(&ink).pos(centred),
                        ),
                ))
                .map_err(err)?;
        }
    }
    root.present().map_err(err)
}

/// A sweep's plots: each measure against each parameter, one PNG per (measure, parameter).
pub fn plot_sweep(
    dir: &Path,
    params: &[(String, Vec<f64>)],
    records: &[RunRecord],
    measures: &[&str],
) -> Result<Vec<std::path::PathBuf>> {
    ensure_font();
    std::fs::create_dir_all(dir).map_err(err)?;
    let mut written = Vec::new();
    for (param, xs) in params {
        for measure in measures {
            let pts: Vec<(f64, f64)> = xs
                .iter()
                .zip(records)
                .filter_map(|(x, r)| r.get(measure).map(|y| (*x, y)))
                .collect();
            if pts.is_empty() {
                continue;
            }
            let (x0, x1) = pts
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                    (a.min(p.0), b.max(p.0))
                });
            let (y0, y1) = pts
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                    (a.min(p.1), b.max(p.1))
                });
            let path = dir.join(format!("{measure}_vs_{}.png", param.replace('.', "_")));
            scatter(&path, param, measure, &pts, (x0, x1), (y0, y1))?;
            written.push(path);
        }
    }
    Ok(written)
}

fn scatter(
    path: &Path,
    param: &str,
    measure: &str,
    pts: &[(f64, f64)],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Result<()> {
    let pad = |a: f64, b: f64| {
        if b > a {
            (b - a) * 0.05
        } else {
            a.abs().max(1.0) * 0.05
        }
    };
    {
        let root = BitMapBackend::new(path, SCATTER_PLOT).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{measure} vs {param}"), ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(
                (x0 - pad(x0, x1))..(x1 + pad(x0, x1)),
                (y0 - pad(y0, y1))..(y1 + pad(y0, y1)),
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(param)
            .y_desc(measure)
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(
                pts.iter()
                    .map(|p| Circle::new(*p, 4, PALETTE[0].mix(0.6).filled())),
            )
            .map_err(err)?;
        // The binned median and interquartile band: the trend the cloud hides.
        let trend = binned_trend(pts, TREND_BINS);
        if trend.len() >= 2 {
            let band: Vec<(f64, f64)> = trend
                .iter()
                .map(|t| (t.0, t.1))
                .chain(trend.iter().rev().map(|t| (t.0, t.3)))
                .collect();
            let orange = PALETTE[1];
            chart
                .draw_series(std::iter::once(Polygon::new(
                    band,
                    orange.mix(0.25).filled(),
                )))
                .map_err(err)?
                .label("interquartile range (binned)")
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 20, y + 5)], orange.mix(0.25).filled())
                });
            chart
                .draw_series(LineSeries::new(
                    trend.iter().map(|t| (t.0, t.2)),
                    orange.stroke_width(3),
                ))
                .map_err(err)?
                .label("median (binned)")
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], orange.stroke_width(3))
                });
            draw_legend(&mut chart, 13)?;
        }
        root.present().map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_names_map_to_cells() {
        assert_eq!(matrix_cell("B1_D1"), Some((0, 0)));
        assert_eq!(matrix_cell("B3_D2"), Some((2, 1)));
        assert_eq!(matrix_cell("default"), None);
        assert_eq!(matrix_cell("B0_D1"), None);
    }

    #[test]
    fn colour_scale_ends() {
        assert_eq!(scale_colour(0.0), RGBColor(68, 1, 84));
        assert_eq!(scale_colour(1.0), RGBColor(253, 231, 37));
    }
}
