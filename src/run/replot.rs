//! The `plot DIR` command: re-draws the plots of a run (`sir.png`, `rt.png`), experiment or sweep
//! folder from the files it holds, whichever kind of folder it is.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::plots::{plot_rt, plot_run};
use super::results::Series;
use super::{experiment, sweep};

/// Re-draws every plot of `dir`: a run folder (`metrics.csv`), a sweep folder
/// (`manifest.csv`) or an experiment folder (`runs/`).
pub fn redraw(dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.join("metrics.csv").is_file() {
        let series = Series::read(&dir.join("metrics.csv"))?;
        let path = dir.join("sir.png");
        let title = dir
            .file_name()
            .map_or("run".into(), |n| n.to_string_lossy().into_owned());
        plot_run(&series, &title, &path)?;
        let mut drawn = vec![path];
        if dir.join("rt.csv").is_file() {
            let rt = Series::read(&dir.join("rt.csv"))?;
            let path = dir.join("rt.png");
            plot_rt(&rt, &format!("reproduction numbers: {title}"), &path)?;
            drawn.push(path);
        }
        return Ok(drawn);
    }
    if dir.join("manifest.csv").is_file() {
        return sweep::redraw(dir);
    }
    experiment::redraw(dir)
}
