//! A run's plots: S, I, R and dead over time (`sir.png`), and the reproduction numbers with
//! incidence (`rt.png`), drawn from a run folder's files at once.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use plotters::prelude::*;

use super::*;
use crate::fonts::ensure_font;
use crate::run::results::Series;
use crate::sim::parallel::for_each_part;

/// The y axis reaches this far above the highest curve, so the legend (top right) sits above
/// the curves rather than on them.
const HEADROOM: f64 = 1.45;

/// Draws a run folder's `sir.png` from its `metrics.csv` under `titles.0`, and its `rt.png`
/// from its `rt.csv` (when it has one) under `titles.1`; each picture's path with how its
/// drawing went. With `parallel` the two are drawn at the same time, as the two parts of one
/// parallel loop: on the run's own workers (Bevy's compute pool outside a run), the calling
/// thread taking a part too. The two pictures are the largest part of a small run's fixed
/// cost, about 3.1 ms of a 1 000-boid run on 2 cores (BENCHMARKS.md, twenty-fifth stop). A
/// thread made for the second picture could start while the run's worker still spun after the
/// last parallel loop; the system then put it on the calling thread's core while the other
/// core idled, and the plots took 4.3–7.9 ms instead of 4.0–4.3 (nineteenth stop). `rt.png`
/// is the first part, which on the run's own workers the calling thread claims immediately:
/// it takes longer than `sir.png` (about 3 ms against 2.5 at 1 000 boids), and the worker,
/// usually asleep by the end of a run, starts late. With `sir.png` first, the calling thread
/// finished it and then waited 0.3–1.6 ms for the worker's `rt.png` (twenty-fifth stop).
pub fn plot_run_folder(
    dir: &Path,
    titles: (&str, &str),
    parallel: bool,
) -> Vec<(PathBuf, Result<()>)> {
    let sir = dir.join("sir.png");
    let draw_sir =
        || Series::read(&dir.join("metrics.csv")).and_then(|s| plot_run(&s, titles.0, &sir));
    let has_rt = dir.join("rt.csv").is_file();
    let rt = dir.join("rt.png");
    let draw_rt = || Series::read(&dir.join("rt.csv")).and_then(|s| plot_rt(&s, titles.1, &rt));
    let (sir_drawn, rt_drawn) = if parallel && has_rt {
        let mut drawn: [Option<Result<()>>; 2] = [None, None];
        // `rt.png` first: the calling thread draws the longer picture (see above).
        let [sir_drawn, rt_drawn] = &mut drawn;
        for_each_part(vec![(1, rt_drawn), (0, sir_drawn)], |(k, slot)| {
            let picture = if k == 0 { &sir } else { &rt };
            let result = catch_unwind(AssertUnwindSafe(|| {
                if k == 0 { draw_sir() } else { draw_rt() }
            }))
            .unwrap_or_else(|_| Err(anyhow!("drawing {} panicked", picture.display())));
            *slot = Some(result);
        });
        let [sir_drawn, rt_drawn] = drawn.map(|d| d.expect("every part runs"));
        (sir_drawn, Some(rt_drawn))
    } else {
        (draw_sir(), has_rt.then(draw_rt))
    };
    let mut drawn = vec![(sir, sir_drawn)];
    drawn.extend(rt_drawn.map(|d| (rt, d)));
    drawn
}

/// A tick label of an axis of counts: the count at a whole number, nothing between (with at
/// most one infection a bin the axis reaches 1.45, headroom included, with a tick every 0.2,
/// which read "0 0 0 1 1 1 1" from the bottom).
pub(super) fn count_label(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

/// A run's S, I, R and dead counts over time.
pub fn plot_run(series: &Series, title: &str, path: &Path) -> Result<()> {
    ensure_font();
    crate::png::draw_png(path, RUN_PLOT, WHITE, |root| {
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
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(0.0..max_time(&[series]), 0.0..y_max * HEADROOM)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("boids")
            .y_label_formatter(&count_label)
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        draw_spans(&mut chart, &series.spans, y_max * HEADROOM, 0.25, true)?;
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
        Ok(())
    })
}

/// A run's reproduction numbers from its `rt.csv`: Cori R_t with its 95 % credible band and
/// the case reproduction number R_c above, the threshold R = 1 dashed; incidence per bin
/// (contact and imported) below.
pub fn plot_rt(rt: &Series, title: &str, path: &Path) -> Result<()> {
    ensure_font();
    crate::png::draw_png(path, RT_PLOT, WHITE, |root| {
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
            .build_cartesian_2d(0.0..t_max, 0.0..y_max * HEADROOM)
            .map_err(err)?;
        chart
            .configure_mesh()
            .y_desc("reproduction number")
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        draw_spans(&mut chart, &rt.spans, y_max * HEADROOM, 0.25, true)?;
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
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], blue.stroke_width(2))
            });
        chart
            .draw_series(LineSeries::new(clip(rc.clone()), orange.stroke_width(2)))
            .map_err(err)?
            .label("R_c (case reproduction, ended windows)")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], orange.stroke_width(2))
            });
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
            .build_cartesian_2d(0.0..t_max, 0.0..n_max * HEADROOM)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc(format!("new infections (per {width} s)"))
            .y_label_formatter(&count_label)
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        draw_spans(&mut chart, &rt.spans, n_max * HEADROOM, 0.25, false)?;
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
        Ok(())
    })
}
