//! From the runs of `docs/reproduce.sh` to `docs/reproduced/`: per-run tables copied as the
//! commands wrote them (`summary.csv`, `comparison.csv`, `sensitivity.csv`, `rt.csv`), a few
//! counts read out of run folders, and `numbers.csv` for single values.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::{Csv, STORY_COUNTS};

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn at(v: &Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for p in path {
        cur = &cur[p];
    }
    cur.as_f64()
        .unwrap_or_else(|| panic!("no number at {}", path.join(".")))
}

/// Copies `from/<experiment>/<file>` to `to/<name>`, prefixing the scenario column with
/// `prefix` (two experiments can hold scenarios of the same file name).
fn copy_table(from: &Path, experiment: &str, file: &str, prefix: &str) -> Csv {
    let mut t = Csv::read(&from.join(experiment).join(file));
    if t.header.iter().any(|h| h == "completed") {
        for r in 0..t.rows.len() {
            assert_eq!(
                t.text(r, "completed"),
                "true",
                "{experiment}: a run did not complete"
            );
        }
    }
    if !prefix.is_empty() {
        let k = t.col("scenario");
        for r in &mut t.rows {
            r[k] = format!("{prefix}{}", r[k]);
        }
    }
    t
}

/// Joins tables of the same header.
fn join(tables: Vec<Csv>) -> Csv {
    let mut out = Csv::default();
    for t in tables {
        if out.header.is_empty() {
            out.header = t.header.clone();
        }
        assert_eq!(out.header, t.header, "tables of different columns");
        out.rows.extend(t.rows);
    }
    out
}

/// The counts of the default scenario's first minute, one row per run.
fn story(from: &Path) -> Csv {
    let summary = Csv::read(&from.join("story/summary.csv"));
    let mut out = Csv {
        header: ["run", "seed"]
            .into_iter()
            .chain(STORY_COUNTS)
            .map(String::from)
            .collect(),
        rows: Vec::new(),
    };
    for r in 0..summary.rows.len() {
        let run = summary.text(r, "run");
        let dir = from.join("story/runs/default").join(run);
        let s = json(&dir.join("summary.json"));
        let t = Csv::read(&dir.join("transmissions.csv"));
        let count = |f: &dyn Fn(usize) -> bool| (0..t.rows.len()).filter(|&k| f(k)).count();
        let by_contact =
            count(&|k| t.text(k, "infectee_swarm") == "antivax" && t.text(k, "cause") == "contact");
        let by_antivax = count(&|k| t.text(k, "infector_swarm") == "antivax");
        let e = |k: &str| at(&s, &["epidemic", k]).to_string();
        out.rows.push(vec![
            run.to_string(),
            summary.text(r, "seed").to_string(),
            e("contact_infections"),
            by_contact.to_string(),
            by_antivax.to_string(),
            e("cures"),
            e("recoveries"),
            e("deaths"),
        ]);
    }
    out
}

/// Writes every file of `docs/reproduced/` from the runs in `from`.
pub fn distil(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let write = |name: &str, t: &Csv| std::fs::write(to.join(name), t.to_text()).unwrap();
    let mut numbers: BTreeMap<String, f64> = BTreeMap::new();

    write("story.csv", &story(from));

    let agents = std::fs::read_to_string(from.join("agents/agents.csv")).unwrap();
    let mut lines = agents.lines().skip(1);
    let first = lines.next().expect("agents.csv has rows");
    let t0 = first.split(',').next().unwrap();
    let at_start = 1 + lines
        .clone()
        .take_while(|l| l.starts_with(&format!("{t0},")))
        .count();
    numbers.insert("agents_rows".into(), (1 + lines.count()) as f64);
    numbers.insert("agents_at_start".into(), at_start as f64);
    numbers.insert("agents_bytes".into(), agents.len() as f64);

    let gif = std::fs::metadata(from.join("vid/run.gif")).unwrap().len();
    numbers.insert("gif_bytes".into(), gif as f64);

    let sirs = json(&from.join("sirs/summary.json"));
    numbers.insert(
        "sirs_infections".into(),
        at(&sirs, &["transmission", "infections"]),
    );
    let bytes = std::fs::metadata(from.join("sirs/transmissions.csv"))
        .unwrap()
        .len();
    numbers.insert("sirs_transmissions_bytes".into(), bytes as f64);
    write("rt_sirs.csv", &Csv::read(&from.join("sirs/rt.csv")));

    let r0 = copy_table(from, "r0", "summary.csv", "");
    for scenario in ["sir", "default"] {
        // The well-mixed R0 depends on the Normal count, which can vary with the seed: the
        // mean over the runs.
        let runs = r0.rows_where("scenario", scenario);
        let sum: f64 = runs
            .iter()
            .map(|&r| {
                let dir = format!("r0/runs/{scenario}/{}", r0.text(r, "run"));
                at(
                    &json(&from.join(dir).join("summary.json")),
                    &["transmission", "r0_well_mixed_normal"],
                )
            })
            .sum();
        numbers.insert(format!("well_mixed_{scenario}"), sum / runs.len() as f64);
    }
    write("r0_summary.csv", &r0);

    // "well-mixed R0: measured 2.370 ± 0.080 (n = 368), mean field 2.510, ratio 0.945"
    let line = std::fs::read_to_string(from.join("well_mixed.txt")).unwrap();
    let after = line.split("measured").nth(1).unwrap_or("");
    let nums: Vec<f64> = after
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.trim_matches('.').parse().ok())
        .collect();
    assert_eq!(nums.len(), 5, "unexpected well-mixed line: {line}");
    for (name, v) in ["measured", "se", "cases", "mean_field", "ratio"]
        .iter()
        .zip(nums)
    {
        numbers.insert(format!("well_mixed_test_{name}"), v);
    }

    let presets = join(vec![
        copy_table(from, "presets", "summary.csv", "regimes/"),
        copy_table(from, "presets-report", "summary.csv", "regimes/report/"),
        copy_table(from, "presets-matrix", "summary.csv", "matrix/"),
        copy_table(from, "presets-other", "summary.csv", ""),
    ]);
    write("presets_summary.csv", &presets);
    let calibration: Vec<Csv> = std::fs::read_dir(from)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.starts_with("calib-").then_some(name)
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|name| {
            let prefix = format!("{}:", name.trim_start_matches("calib-"));
            copy_table(from, &name, "summary.csv", &prefix)
        })
        .collect();
    write("calibration_summary.csv", &join(calibration));

    for v in ["lockdown", "vaccination", "test_and_isolate"] {
        let dir = format!("compare-{v}");
        write(
            &format!("compare_{v}.csv"),
            &copy_table(from, &dir, "comparison.csv", ""),
        );
    }
    let copies = [
        ("matrix_summary.csv", "matrix", "summary.csv"),
        ("matrix_check_summary.csv", "matrix-check", "summary.csv"),
        ("sensitivity.csv", "sweep", "sensitivity.csv"),
        (
            "sensitivity_replicates.csv",
            "sweep-replicates",
            "sensitivity.csv",
        ),
    ];
    for (name, experiment, file) in copies {
        write(name, &copy_table(from, experiment, file, ""));
    }

    let mut bench = Csv {
        header: ["workload", "boids", "backend", "neighbours", "candidates"]
            .map(String::from)
            .to_vec(),
        rows: Vec::new(),
    };
    for workload in ["pandemic", "flocking"] {
        let v = json(&from.join(format!("bench-{workload}.json")));
        for r in v["results"].as_array().expect("bench results") {
            bench.rows.push(vec![
                workload.to_string(),
                r["boids"].to_string(),
                r["backend"].as_str().unwrap_or("?").to_string(),
                format!("{:.1}", at(r, &["neighbours_per_boid"])),
                format!("{:.1}", at(r, &["candidates_per_boid"])),
            ]);
        }
    }
    write("bench.csv", &bench);

    let mut text = String::from("name,value\n");
    for (k, v) in numbers {
        text += &format!("{k},{v}\n");
    }
    std::fs::write(to.join("numbers.csv"), text).unwrap();
}
