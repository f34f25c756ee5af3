//! A sweep's plots: each output against each parameter with its binned-median trend, a
//! tornado of PRCCs per output, and the PRCC heatmap.

use std::path::Path;

use anyhow::Result;
use plotters::prelude::*;

use super::*;
use crate::fonts::ensure_font;
use crate::run::results::RunRecord;
use crate::sim::stats::binned_trend;

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
    crate::png::draw_png(path, TORNADO_PLOT, WHITE, |root| {
        let mut chart = ChartBuilder::on(root)
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
                    EmptyElement::at((x, SegmentValue::CenterOf(i)))
                        + Text::new(label, (0, 0), style),
                ))
                .map_err(err)?;
        }
        chart
            .draw_series(LineSeries::new(
                [(0.0, SegmentValue::Exact(0)), (0.0, SegmentValue::Exact(k))],
                BLACK,
            ))
            .map_err(err)?;
        Ok(())
    })
}

/// The PRCC of every parameter (rows) against every output (columns), coloured blue (−1)
/// to red (+1), each cell labelled with its value (`*`: p < 0.05).
pub fn prcc_heatmap(path: &Path, table: &crate::run::sensitivity::Table) -> Result<()> {
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
    crate::png::draw_png(path, size, WHITE, |root| {
        let mut chart = ChartBuilder::on(root)
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
        Ok(())
    })
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
        crate::png::draw_png(path, SCATTER_PLOT, WHITE, |root| {
            let mut chart = ChartBuilder::on(root)
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
            Ok(())
        })
    }
}
