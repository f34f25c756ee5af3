//! Research workflows end to end on tiny scenarios: an experiment's seeds differ and every run
//! reproduces alone from its recorded config; re-running skips finished runs; a failing run is
//! reported while the rest finish; tables and plots are written at their documented sizes; a
//! sharded sweep covers each range Latin-hypercube style and merges back exactly.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::bin;
use pandemic_boids::run::plots::{
    GRID_PANEL, HEATMAP_PLOT, OVERLAY_PLOT, RUN_PLOT, SCATTER_PLOT, TORNADO_PLOT,
};

fn pb(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

/// A small, fast scenario; `extra` is appended TOML.
fn scenario(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        "duration = 3.0\nsample_every = 0.5\nworld.width = 800.0\nworld.height = 700.0\n\
         swarms.normal.count = 40\nswarms.doctor.count = 4\nepidemic.p_initial_infect_normal = 0.2\n{extra}"
    );
    fs::write(&path, text).unwrap();
    path
}

/// Width and height from a PNG header.
fn png_size(path: &Path) -> (u32, u32) {
    let b = fs::read(path).unwrap();
    assert_eq!(&b[1..4], b"PNG", "{} is not a PNG", path.display());
    let be = |o: usize| u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    (be(16), be(20))
}

#[test]
fn experiment_runs_reproduce_skip_and_plot() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A 2 × 2 "matrix" so the grid and the heatmaps are drawn.
    for (b, d) in [("B1", "D1"), ("B1", "D2"), ("B2", "D1"), ("B2", "D2")] {
        let behaviour = if d == "D1" { "passive" } else { "seek_nearest" };
        let align = if b == "B1" { "5.0" } else { "1.0" };
        let extra = format!(
            "doctors.behavior = \"{behaviour}\"\nswarms.normal.alignment_weight = {align}\n"
        );
        scenario(dir, &format!("{b}_{d}"), &extra);
    }
    let out = dir.join("exp");
    let pattern = format!("{}/B*_D*.toml", dir.display());
    let o = pb(&[
        "experiment",
        "--scenarios",
        &pattern,
        "--seeds",
        "3",
        "--jobs",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("12 runs done"));

    // Seeds differ across runs; each run reproduces alone from its config.toml.
    let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
    let rows: Vec<&str> = summary.lines().skip(1).collect();
    assert_eq!(rows.len(), 12);
    let mut seeds: Vec<&str> = rows.iter().map(|r| r.split(',').nth(2).unwrap()).collect();
    seeds.sort_unstable();
    seeds.dedup();
    assert_eq!(seeds.len(), 3, "3 distinct seeds shared by the 4 scenarios");
    let run = out.join("runs").join("B1_D2").join("seed-1");
    let again = dir.join("again");
    let o = pb(&[
        "run",
        "--quiet",
        "--scenario",
        run.join("config.toml").to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert_eq!(
        fs::read(run.join("metrics.csv")).unwrap(),
        fs::read(again.join("metrics.csv")).unwrap()
    );

    // Aggregate: one row per scenario.
    let aggregate = fs::read_to_string(out.join("aggregate.csv")).unwrap();
    assert_eq!(aggregate.lines().count(), 5);
    assert!(aggregate.lines().nth(1).unwrap().starts_with("B1_D1,3,"));

    // Plots at their documented sizes.
    let plots = out.join("plots");
    assert_eq!(
        png_size(&plots.join("infected_grid.png")),
        (GRID_PANEL.0 * 2, GRID_PANEL.1 * 2 + 50)
    );
    assert_eq!(png_size(&plots.join("infected_overlay.png")), OVERLAY_PLOT);
    assert_eq!(
        png_size(&plots.join("heatmap_peak_infected.png")),
        HEATMAP_PLOT
    );
    assert_eq!(
        png_size(&plots.join("heatmap_eradication_time.png")),
        HEATMAP_PLOT
    );
    assert_eq!(
        png_size(&plots.join("runs").join("B2_D1_seed-2.png")),
        RUN_PLOT
    );
    assert_eq!(png_size(&run.join("sir.png")), RUN_PLOT);
    assert!(fs::metadata(plots.join("infected_grid.png")).unwrap().len() > 10_000);

    // Re-running skips what is complete; `plot` re-draws from the files.
    let o = pb(&[
        "experiment",
        "--scenarios",
        &pattern,
        "--seeds",
        "3",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("0 runs done, 12 skipped"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    fs::remove_file(plots.join("infected_overlay.png")).unwrap();
    assert!(pb(&["plot", out.to_str().unwrap()]).status.success());
    assert_eq!(png_size(&plots.join("infected_overlay.png")), OVERLAY_PLOT);
}

#[test]
fn a_failing_run_is_reported_and_the_rest_finish() {
    let tmp = tempfile::tempdir().unwrap();
    let s = scenario(tmp.path(), "small", "");
    let out = tmp.path().join("exp");
    // Block one run's folder with a file.
    fs::create_dir_all(out.join("runs").join("small")).unwrap();
    fs::write(
        out.join("runs").join("small").join("seed-1"),
        "not a folder",
    )
    .unwrap();
    let o = pb(&[
        "experiment",
        "--scenarios",
        s.to_str().unwrap(),
        "--seeds",
        "3",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("2 runs done") && err.contains("1 failed"),
        "{err}"
    );
    assert!(err.contains("seed-1"), "{err}");
    assert_eq!(
        fs::read_to_string(out.join("summary.csv"))
            .unwrap()
            .lines()
            .count(),
        3
    );
}

#[test]
fn bad_experiment_input_is_one_line() {
    let o = pb(&[
        "experiment",
        "--scenarios",
        "no/such/*.toml",
        "--seeds",
        "2",
        "--out",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("matches no file"), "{err}");
    let o = pb(&[
        "sweep",
        "--base",
        "x.toml",
        "--param",
        "nonsense",
        "--samples",
        "3",
        "--out",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("KEY=LO..HI"));
    let o = pb(&[
        "sweep",
        "--base",
        "x.toml",
        "--param",
        "a=1..2",
        "--samples",
        "3",
        "--shard",
        "3/3",
        "--out",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--shard"));
}

#[test]
fn sharded_sweep_covers_ranges_and_merges_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let base = scenario(tmp.path(), "base", "");
    let out = tmp.path().join("sweep");
    let n = 8;
    for shard in ["0/3", "1/3", "2/3"] {
        let o = pb(&[
            "sweep",
            "--base",
            base.to_str().unwrap(),
            "--param",
            "epidemic.p_infect_normal=0.1..0.9",
            "--param",
            "swarms.normal.count=20..60",
            "--samples",
            &n.to_string(),
            "--shard",
            shard,
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        if shard == "0/3" {
            // Before the other shards ran, merge reports what is missing.
            let o = pb(&["merge", out.to_str().unwrap()]);
            assert!(!o.status.success());
            assert!(String::from_utf8_lossy(&o.stderr).contains("have not completed yet"));
        }
    }
    // The manifest is a Latin hypercube over each range.
    let manifest = fs::read_to_string(out.join("manifest.csv")).unwrap();
    let rows: Vec<Vec<f64>> = manifest
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), n);
    let mut strata: Vec<usize> = rows
        .iter()
        .map(|r| ((r[3] - 0.1) / 0.8 * n as f64).floor() as usize)
        .collect();
    strata.sort_unstable();
    assert_eq!(strata, (0..n).collect::<Vec<_>>());
    // Shards partition the samples: every sample ran exactly once.
    let mut ran: Vec<usize> = Vec::new();
    for shard in 0..3 {
        let text = fs::read_to_string(out.join(format!("summary-shard-{shard}-of-3.csv"))).unwrap();
        ran.extend(
            text.lines()
                .skip(1)
                .map(|l| l.split(',').nth(1).unwrap()[7..].parse::<usize>().unwrap()),
        );
    }
    ran.sort_unstable();
    assert_eq!(ran, (0..n).collect::<Vec<_>>());
    let o = pb(&["merge", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let merged = fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(merged.lines().count(), n + 1);
    // Integer keys: the manifest (and so the summaries and the rank correlations) holds the
    // whole numbers the runs used, not the unrounded draws.
    for (s, row) in rows.iter().enumerate() {
        assert_eq!(row[2], 1.0, "one replicate");
        let count = row[4];
        assert_eq!(
            count.fract(),
            0.0,
            "sample {s}: count {count} as sampled, not as run"
        );
        let cfg = fs::read_to_string(
            out.join("runs")
                .join(format!("sample-{s:05}"))
                .join("config.toml"),
        )
        .unwrap();
        assert!(cfg.contains(&format!("count = {count}")), "{cfg}");
    }
    assert!(
        out.join("plots")
            .join("peak_fraction_vs_epidemic_p_infect_normal.png")
            .is_file()
    );
    // Two parameters: the sensitivity table, a tornado per output and the heatmap.
    let table = fs::read_to_string(out.join("sensitivity.csv")).unwrap();
    let mut lines = table.lines();
    assert_eq!(
        lines.next(),
        Some("output,parameter,n,replicates,prcc,p_value,spearman")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(
        rows.iter()
            .any(|r| r[0] == "peak_fraction" && r[1] == "epidemic.p_infect_normal")
    );
    for r in &rows {
        // Runs where an output is undefined (no initial case: no R0) are left out of it.
        let used: usize = r[2].parse().unwrap();
        assert!(used <= n && (r[0] != "peak_fraction" || used == n), "{r:?}");
        let prcc: f64 = r[4].parse().unwrap();
        assert!((-1.0..=1.0).contains(&prcc), "{r:?}");
    }
    assert!(
        out.join("plots")
            .join("tornado_peak_fraction.png")
            .is_file()
    );
    assert_eq!(
        png_size(&out.join("plots").join("tornado_peak_fraction.png")),
        TORNADO_PLOT
    );
    assert!(out.join("plots").join("prcc_heatmap.png").is_file());
}

#[test]
fn a_one_parameter_sweep_gets_trend_plots_only() {
    let tmp = tempfile::tempdir().unwrap();
    let base = scenario(tmp.path(), "base", "");
    let out = tmp.path().join("sweep");
    let o = pb(&[
        "sweep",
        "--base",
        base.to_str().unwrap(),
        "--param",
        "epidemic.p_infect_normal=0.1..0.9",
        "--samples",
        "6",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = pb(&["merge", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plot = out
        .join("plots")
        .join("peak_fraction_vs_epidemic_p_infect_normal.png");
    assert_eq!(png_size(&plot), SCATTER_PLOT);
    // With one parameter its PRCC would be its Spearman correlation: no table, no tornado.
    assert!(!out.join("sensitivity.csv").exists());
    assert!(!out.join("plots").join("prcc_heatmap.png").exists());
}

#[test]
fn replicates_run_several_seeds_per_sample_and_the_analysis_uses_their_means() {
    let tmp = tempfile::tempdir().unwrap();
    let base = scenario(tmp.path(), "base", "");
    let out = tmp.path().join("sweep");
    let o = pb(&[
        "sweep",
        "--base",
        base.to_str().unwrap(),
        "--param",
        "epidemic.p_infect_normal=0.1..0.9",
        "--param",
        "swarms.normal.max_speed=60..180",
        "--samples",
        "4",
        "--replicates",
        "3",
        "--duration",
        "1",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let manifest = fs::read_to_string(out.join("manifest.csv")).unwrap();
    assert!(
        manifest.starts_with("sample,seed,replicates,"),
        "{manifest}"
    );
    assert!(
        manifest
            .lines()
            .skip(1)
            .all(|l| l.split(',').nth(2) == Some("3"))
    );
    // Every sample ran three seeds, each in its own folder with its own seed.
    let mut seeds = std::collections::BTreeSet::new();
    for s in 0..4 {
        for r in 0..3 {
            let dir = out.join("runs").join(format!("sample-{s:05}-rep-{r}"));
            let cfg = fs::read_to_string(dir.join("config.toml")).unwrap();
            seeds.insert(
                cfg.lines()
                    .find(|l| l.starts_with("seed"))
                    .unwrap()
                    .to_string(),
            );
        }
    }
    assert_eq!(seeds.len(), 12);
    let o = pb(&["merge", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 13, "one row per run");
    // The rank correlations are over the 4 samples (their means), and say so.
    let table = fs::read_to_string(out.join("sensitivity.csv")).unwrap();
    let header: Vec<&str> = table.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for line in table.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells[col("replicates")], "3", "{line}");
        assert!(cells[col("n")].parse::<usize>().unwrap() <= 4, "{line}");
    }
}
