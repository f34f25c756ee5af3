//! Joining a sweep: `merge` puts the shards' summaries together and checks that no run is
//! missing; `redraw` and `analyse` draw the plots and write `sensitivity.csv` from the
//! samples' runs — with several replicates per sample, from each sample's mean over its
//! replicates, so run-to-run noise does not mix into the rank correlations.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};

use super::design::Manifest;
use super::{run_label, sample_points};
use crate::run::plots::{plot_sweep, prcc_heatmap, tornado};
use crate::run::results::RunRecord;
use crate::run::sensitivity;

/// Joins the shard summaries found in `dirs` into `out/summary.csv` (rows ordered by sample)
/// and re-draws the sweep plots. Fails if the manifests differ or a sample is missing.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<(PathBuf, usize)> {
    let first = dirs
        .first()
        .ok_or_else(|| anyhow!("merge needs at least one folder"))?;
    let manifest = std::fs::read_to_string(first.join("manifest.csv")).with_context(|| {
        format!(
            "`{}` has no manifest.csv; give the --out folder(s) of a sweep",
            first.display()
        )
    })?;
    let mut rows: BTreeMap<String, String> = BTreeMap::new();
    let mut header: Option<String> = None;
    for dir in dirs {
        let m = std::fs::read_to_string(dir.join("manifest.csv"))
            .with_context(|| format!("`{}` has no manifest.csv", dir.display()))?;
        if m != manifest {
            bail!(
                "`{}` belongs to a different sweep (its manifest.csv differs)",
                dir.display()
            );
        }
        let mut shards: Vec<PathBuf> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("summary-shard-"))
            })
            .collect();
        shards.sort();
        for shard in shards {
            let text = std::fs::read_to_string(&shard)?;
            let mut lines = text.lines();
            let h = lines.next().unwrap_or_default().to_string();
            if header.get_or_insert_with(|| h.clone()) != &h {
                bail!(
                    "{} has different columns from the other shards",
                    shard.display()
                );
            }
            for line in lines.filter(|l| !l.is_empty()) {
                let label = line
                    .split(',')
                    .nth(1)
                    .filter(|label| label.starts_with("sample-"))
                    .ok_or_else(|| anyhow!("bad row in {}", shard.display()))?;
                rows.insert(label.to_string(), line.to_string());
            }
        }
    }
    let design = Manifest::read(first)?;
    let labels: Vec<String> = (0..design.rows.len())
        .flat_map(|s| (0..design.replicates).map(move |r| run_label(s, r, design.replicates)))
        .collect();
    let total = labels.len();
    let missing: Vec<&String> = labels.iter().filter(|l| !rows.contains_key(*l)).collect();
    if !missing.is_empty() {
        let list: Vec<&str> = missing.iter().take(10).map(|s| s.as_str()).collect();
        bail!(
            "{} of {total} runs have not completed yet (e.g. {}); run the missing shards, then merge again",
            missing.len(),
            list.join(", ")
        );
    }
    std::fs::create_dir_all(out)?;
    let mut text = header.unwrap_or_default();
    text.push('\n');
    for line in rows.values() {
        text.push_str(line);
        text.push('\n');
    }
    let path = out.join("summary.csv");
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    if out.join("manifest.csv").is_file() || out == first.as_path() {
        let _ = redraw(first);
    }
    Ok((path, total))
}

/// Re-draws a sweep's plots (each measure against each parameter, from each sample's mean
/// over its replicates) and its sensitivity analysis from its run folders.
pub fn redraw(dir: &Path) -> Result<Vec<PathBuf>> {
    let design = Manifest::read(dir)?;
    let all: Vec<usize> = (0..design.rows.len()).collect();
    let (records, extra) = sample_points(dir, "sweep", &design, &all);
    if records.is_empty() {
        bail!(
            "`{}` holds no completed sweep samples to plot",
            dir.display()
        );
    }
    let mut written = plot_sweep(
        &dir.join("plots"),
        &extra,
        &records,
        &["peak_fraction", "attack_rate", "eradication_time_s", "r0"],
    )?;
    written.extend(analyse(
        dir,
        &dir.join("plots"),
        &extra,
        &records,
        design.replicates,
    )?);
    Ok(written)
}

/// With two or more parameters: `sensitivity.csv` in `out` and, in `plots`, a tornado plot
/// per output and the PRCC heatmap (docs in `sensitivity`). `records` are one per sample
/// (each the mean of its `replicates` runs).
pub fn analyse(
    out: &Path,
    plots: &Path,
    params: &[(String, Vec<f64>)],
    records: &[RunRecord],
    replicates: usize,
) -> Result<Vec<PathBuf>> {
    if params.len() < 2 {
        return Ok(Vec::new());
    }
    let t = sensitivity::table(params, records);
    let path = out.join("sensitivity.csv");
    sensitivity::write_csv(&path, &t, replicates)?;
    let mut written = vec![path];
    std::fs::create_dir_all(plots)?;
    for (output, rows) in &t {
        let bars: Vec<(String, f64, Option<f64>)> = rows
            .iter()
            .filter_map(|(p, c, _)| c.map(|c| (p.clone(), c.r, c.p)))
            .collect();
        let path = plots.join(format!("tornado_{output}.png"));
        tornado(&path, output, &bars)?;
        written.push(path);
    }
    let path = plots.join("prcc_heatmap.png");
    prcc_heatmap(&path, &t)?;
    written.push(path);
    Ok(written)
}
