//! The `plot DIR` command: re-draws the plots of a run (`sir.png`, `rt.png`), experiment or sweep
//! folder from the files it holds, whichever kind of folder it is.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::plots::plot_run_folder;
use super::{experiment, sweep};
use crate::sim::parallel::cores;

/// Re-draws every plot of `dir`: a run folder (`metrics.csv`), a sweep folder
/// (`manifest.csv`) or an experiment folder (`runs/`).
pub fn redraw(dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.join("metrics.csv").is_file() {
        let title = dir
            .file_name()
            .map_or("run".into(), |n| n.to_string_lossy().into_owned());
        let rt_title = format!("reproduction numbers: {title}");
        let parallel = cores() > 1;
        return plot_run_folder(dir, (&title, &rt_title), parallel)
            .into_iter()
            .map(|(path, drawn)| drawn.map(|()| path))
            .collect();
    }
    if dir.join("manifest.csv").is_file() {
        return sweep::redraw(dir);
    }
    experiment::redraw(dir)
}
