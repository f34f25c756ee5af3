//! A comparison's plots: the infected fraction under the base and the variant (mean ± 95 % CI
//! over seeds, the variant's interventions shaded), and each measure's paired difference per
//! seed with its mean and 95 % CI.

use std::path::{Path, PathBuf};

use anyhow::Result;
use plotters::prelude::*;

use super::experiment::fraction_band;
use super::*;
use crate::fonts::ensure_font;
use crate::run::results::{Series, Span};

/// Size of the comparison's curves, px.
pub const COMPARE_PLOT: (u32, u32) = (1000, 560);
/// Size of one panel of the paired differences, px.
pub const DIFF_PANEL: (u32, u32) = (420, 300);

/// A measure's paired difference: its name, mean and 95 % CI.
pub type PairedDifference = (String, f64, f64, f64);

/// Writes `plots/comparison_infected.png` and `plots/paired_differences.png`: `rows` has each
/// measure's mean paired difference and CI, `diffs` each seed's difference.
pub fn plot_comparison(
    dir: &Path,
    base: &[Series],
    variant: &[Series],
    rows: &[PairedDifference],
    diffs: &[(String, Vec<Option<f64>>)],
) -> Result<Vec<PathBuf>> {
    ensure_font();
    std::fs::create_dir_all(dir).map_err(err)?;
    let curves = dir.join("comparison_infected.png");
    draw_curves(&curves, base, variant)?;
    let panels = dir.join("paired_differences.png");
    draw_differences(&panels, rows, diffs)?;
    Ok(vec![curves, panels])
}

fn draw_curves(path: &Path, base: &[Series], variant: &[Series]) -> Result<()> {
    crate::png::draw_png(path, COMPARE_PLOT, WHITE, |root| {
        let b = fraction_band(&base.iter().collect::<Vec<_>>());
        let v = fraction_band(&variant.iter().collect::<Vec<_>>());
        let t_max = b.iter().chain(&v).map(|p| p.0).fold(1e-9, f64::max);
        let y_max = b
            .iter()
            .chain(&v)
            .map(|p| p.3)
            .fold(0.05, f64::max)
            .min(1.0)
            * 1.08;
        let title = format!(
            "Infected fraction: base vs variant, mean ± 95 % CI over {} paired seeds",
            base.len().min(variant.len())
        );
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..t_max, 0.0..y_max)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("infected fraction")
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        let spans: Vec<Span> = variant.iter().flat_map(|s| s.spans.clone()).collect();
        let alpha = (0.3 / variant.len().max(1) as f64).max(0.03);
        draw_spans(&mut chart, &spans, y_max, alpha, false)?;
        for (band, colour, name) in [
            (&b, RGBColor(31, 119, 180), "base"),
            (&v, RGBColor(214, 39, 40), "variant"),
        ] {
            let mut poly: Vec<(f64, f64)> = band.iter().map(|p| (p.0, p.3)).collect();
            poly.extend(band.iter().rev().map(|p| (p.0, p.2)));
            chart
                .draw_series(std::iter::once(Polygon::new(
                    poly,
                    colour.mix(0.2).filled(),
                )))
                .map_err(err)?;
            chart
                .draw_series(LineSeries::new(
                    band.iter().map(|p| (p.0, p.1)),
                    colour.stroke_width(2),
                ))
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
        }
        if !spans.is_empty() {
            let shade = RGBColor(148, 103, 189);
            chart
                .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
                .map_err(err)?
                .label("variant's interventions (darker: in more seeds)")
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 20, y + 5)], shade.mix(0.35).filled())
                });
        }
        draw_legend(&mut chart, 15)?;
        Ok(())
    })
}

fn draw_differences(
    path: &Path,
    rows: &[PairedDifference],
    diffs: &[(String, Vec<Option<f64>>)],
) -> Result<()> {
    let cols = 3usize;
    let rows_n = diffs.len().div_ceil(cols).max(1);
    crate::png::draw_png(
        path,
        (
            DIFF_PANEL.0 * cols as u32,
            DIFF_PANEL.1 * rows_n as u32 + 50,
        ),
        WHITE,
        |root| {
            let (title, body) = root.split_vertically(50);
            title
                .titled(
                    "Variant − base, paired by seed (dots), mean and 95 % CI (band)",
                    ("sans-serif", 24),
                )
                .map_err(err)?;
            let panels = body.split_evenly((rows_n, cols));
            for ((measure, d), area) in diffs.iter().zip(&panels) {
                let points: Vec<(f64, f64)> = d
                    .iter()
                    .enumerate()
                    .filter_map(|(k, x)| x.map(|x| (k as f64, x)))
                    .collect();
                let row = rows
                    .iter()
                    .find(|r| &r.0 == measure)
                    .map(|r| (r.1, r.2, r.3));
                let lo = points
                    .iter()
                    .map(|p| p.1)
                    .chain(row.map(|r| r.1).filter(|x| x.is_finite()))
                    .fold(0.0, f64::min);
                let hi = points
                    .iter()
                    .map(|p| p.1)
                    .chain(row.map(|r| r.2).filter(|x| x.is_finite()))
                    .fold(0.0, f64::max);
                let pad = ((hi - lo) * 0.1).max(1e-6);
                let n = d.len().max(1) as f64;
                let mut chart = ChartBuilder::on(area)
                    .caption(measure, ("sans-serif", 18))
                    .margin(10)
                    .x_label_area_size(30)
                    .y_label_area_size(55)
                    .build_cartesian_2d(-0.5..n - 0.5, (lo - pad)..(hi + pad))
                    .map_err(err)?;
                chart
                    .configure_mesh()
                    .x_desc("seed")
                    .x_label_formatter(&|x| {
                        if (x - x.round()).abs() < 1e-6 && *x >= 0.0 {
                            format!("{}", x.round() as i64)
                        } else {
                            String::new()
                        }
                    })
                    .label_style(("sans-serif", 12))
                    .draw()
                    .map_err(err)?;
                let blue = RGBColor(31, 119, 180);
                if let Some((mean, low, high)) = row.filter(|r| r.1.is_finite()) {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(-0.5, low), (n - 0.5, high)],
                            blue.mix(0.2).filled(),
                        )))
                        .map_err(err)?;
                    chart
                        .draw_series(LineSeries::new(
                            [(-0.5, mean), (n - 0.5, mean)],
                            blue.stroke_width(2),
                        ))
                        .map_err(err)?;
                }
                chart
                    .draw_series(DashedLineSeries::new(
                        [(-0.5, 0.0), (n - 0.5, 0.0)],
                        6,
                        4,
                        BLACK.stroke_width(1),
                    ))
                    .map_err(err)?;
                chart
                    .draw_series(
                        points
                            .iter()
                            .map(|&p| Circle::new(p, 4, RGBColor(214, 39, 40).filled())),
                    )
                    .map_err(err)?;
            }
            Ok(())
        },
    )
}
