//! The command line as a user meets it: a good run writes its folder; every mistake (unknown
//! flag, missing or broken scenario, bad key or value, bad --set, unwritable --out) is one line
//! on stderr that names the problem, with a non-zero exit.
#![allow(clippy::field_reassign_with_default)] // configs are built by changing a few defaults

mod common;

use std::fs;
use std::process::{Command, Output};

use common::{bin, scenarios};

fn pb(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exactly one line on stderr, containing every `needle`, and exit code `code`.
fn assert_one_line_error(o: &Output, code: i32, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "exit code; stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err:?}");
    for n in needles {
        assert!(err.contains(n), "{n:?} missing from {err:?}");
    }
}

#[test]
fn a_run_writes_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("nested").join("run");
    let scenario = scenarios().join("default.toml");
    let o = pb(&[
        "run",
        "--scenario",
        scenario.to_str().unwrap(),
        "--seed",
        "3",
        "--duration",
        "2",
        "--sample-every",
        "0.25",
        "--set",
        "swarms.normal.count=50",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = fs::read_to_string(out.join("metrics.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("time_s,alive,"));
    assert_eq!(lines.count(), 9, "rows at 0, 0.25, …, 2.0 s");
    let config = fs::read_to_string(out.join("config.toml")).unwrap();
    assert!(config.contains("seed = 3"), "{config}");
    assert!(config.contains("count = 50"));
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["completed"], true);
    assert_eq!(summary["seed"], 3);
    assert!(
        !out.join("agents.csv").exists(),
        "no agent output unless asked for"
    );
    // The structure measures are columns and run means.
    let header = csv.lines().next().unwrap();
    for m in ["largest_flock_frac", "nn_cv", "milling", "elongation"] {
        assert!(header.contains(&format!("normal_{m}")), "{m}");
        assert!(
            summary["swarms"]["normal"][format!("mean_{m}")].is_number(),
            "{m}"
        );
    }
}

#[test]
fn agents_every_writes_every_boid_at_each_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = pb(&[
        "run",
        "--duration",
        "2",
        "--agents-every",
        "0.5",
        "--set",
        "swarms.normal.count=30",
        "--set",
        "swarms.doctor.count=4",
        "--set",
        "antivax.p_antivax=0",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = fs::read_to_string(out.join("agents.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("time_s,id,swarm,x,y,vx,vy,state"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // 34 boids at 0, 0.5, 1, 1.5 and the final 2.0 s.
    assert_eq!(rows.len(), 34 * 5);
    let times: std::collections::BTreeSet<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(
        times.into_iter().collect::<Vec<_>>(),
        ["0.0000", "0.5000", "1.0000", "1.5000", "2.0000"]
    );
    for r in &rows {
        assert_eq!(r.len(), 8, "{r:?}");
        assert!(["normal", "doctor"].contains(&r[2]), "{r:?}");
        assert!(["S", "I", "R"].contains(&r[7]), "{r:?}");
        let x: f64 = r[3].parse().unwrap();
        assert!((0.0..1920.0).contains(&x));
    }
    // Rows of one sample are in id order; the same ids at every sample (nobody dies in 2 s).
    let ids: Vec<&str> = rows[..34].iter().map(|r| r[1]).collect();
    assert_eq!(ids, (0..34).map(|i| i.to_string()).collect::<Vec<_>>());
    // The key is part of the run's config, so the run reproduces with it.
    let config = fs::read_to_string(out.join("config.toml")).unwrap();
    assert!(config.contains("agents_every = 0.5"), "{config}");
    // A negative interval is refused like any bad value.
    let bad = pb(&[
        "run",
        "--agents-every",
        "-1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_one_line_error(&bad, 2, &["agents_every", "allowed"]);
}

#[test]
fn unknown_flag() {
    assert_one_line_error(
        &pb(&["run", "--frobnicate", "--out", "x"]),
        2,
        &["--frobnicate"],
    );
    assert_one_line_error(&pb(&["--nope"]), 2, &["--nope"]);
}

#[test]
fn missing_out_and_bad_numbers() {
    assert_one_line_error(&pb(&["run"]), 2, &["--out"]);
    assert_one_line_error(
        &pb(&["run", "--duration", "abc", "--out", "x"]),
        2,
        &["abc"],
    );
    assert_one_line_error(&pb(&["run", "--dt", "-1", "--out", "x"]), 2, &["dt"]);
    // A step too small to mean anything (it once panicked inside Bevy, or ran for hours).
    for tiny in ["dt=1e-300", "dt=1e-9", "dt=0"] {
        assert_one_line_error(
            &pb(&["run", "--set", tiny, "--out", "x"]),
            2,
            &["`dt`", "≥ 0.0001"],
        );
    }
    // A thread or job count out of range, negative or not a number: the option, the value,
    // what is wanted and an example.
    for bad in ["0", "-1", "abc", "1025", "2.5"] {
        assert_one_line_error(
            &pb(&["run", "--threads", bad, "--out", "x"]),
            2,
            &["--threads", &format!("`{bad}`"), "from 1 to 1024", "e.g. 2"],
        );
        assert_one_line_error(
            &pb(&[
                "experiment",
                "--scenarios",
                "x.toml",
                "--jobs",
                bad,
                "--out",
                "x",
            ]),
            2,
            &[
                "--jobs",
                &format!("`{bad}`"),
                "runs at a time from 1 to 1024",
            ],
        );
    }
}

#[test]
fn an_unwritable_video_is_one_sentence() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = pb(&[
        "run",
        "--duration",
        "1",
        "--video",
        "/proc/x.gif",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, 1, &["/proc/x.gif", "choose a file you can write"]);
    assert!(!stderr(&o).contains("IOError"), "{}", stderr(&o));
}

#[test]
fn missing_scenario_file() {
    let o = pb(&["run", "--scenario", "no/such/file.toml", "--out", "x"]);
    assert_one_line_error(&o, 2, &["no/such/file.toml", "assets/scenarios"]);
}

#[test]
fn broken_scenario_names_file_key_and_allowed_values() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("bad.toml");
    let out = tmp.path().join("out");
    for (text, needles) in [
        (
            "[swarms.normal]\ncont = 3\n",
            vec!["bad.toml", "swarms.normal.cont", "unknown key", "count"],
        ),
        (
            "[epidemic]\np_infect_normal = 2.0\n",
            vec!["bad.toml", "epidemic.p_infect_normal", "allowed"],
        ),
        (
            "[swarms.doctor]\nmin_speed = 500.0\n",
            vec!["swarms.doctor.min_speed", "max_speed"],
        ),
        ("dt = 0\n", vec!["`dt`", "allowed"]),
        (
            "steering_model = \"boids\"\n",
            vec!["steering_model", "shiffman"],
        ),
        ("seed = \"x\"\n", vec!["seed", "`x` is not a whole number"]),
        ("[world\n", vec!["bad.toml", "not valid TOML"]),
    ] {
        fs::write(&f, text).unwrap();
        let o = pb(&[
            "run",
            "--scenario",
            f.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_one_line_error(&o, 2, &needles);
        assert!(!out.exists(), "no output folder for a bad config");
    }
}

#[test]
fn bad_set() {
    assert_one_line_error(
        &pb(&["run", "--set", "swarms.normal.cuont=5", "--out", "x"]),
        2,
        &["--set", "swarms.normal.cuont"],
    );
    assert_one_line_error(
        &pb(&["run", "--set", "noequals", "--out", "x"]),
        2,
        &["--set", "KEY=VALUE"],
    );
    assert_one_line_error(
        &pb(&["run", "--set", "world.width=-5", "--out", "x"]),
        2,
        &["world.width"],
    );
}

#[test]
fn unwritable_out() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    fs::write(&file, "x").unwrap();
    let o = pb(&[
        "run",
        "--duration",
        "0.1",
        "--quiet",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, 1, &["a-file", "--out"]);
    let o = pb(&[
        "run",
        "--duration",
        "0.1",
        "--quiet",
        "--out",
        "/proc/no-such/dir",
    ]);
    assert_one_line_error(&o, 1, &["/proc/no-such/dir", "--out"]);
}

#[test]
fn help_and_version_exit_zero() {
    let o = pb(&["--help"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("run"));
    assert!(pb(&["--version"]).status.success());
}

#[test]
fn compare_runs_pairs_and_a_variant_equal_to_the_base_differs_by_exactly_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let base = common::scenarios().join("interventions/none.toml");
    let out = tmp.path().join("same");
    let o = Command::new(bin())
        .args([
            "compare",
            "--seeds",
            "3",
            "--duration",
            "8",
            "--quiet",
            "--base",
        ])
        .arg(&base)
        .arg("--variant")
        .arg(&base)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("comparison.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let mut rows = 0;
    for line in lines {
        let c: Vec<&str> = line.split(',').collect();
        for name in ["diff_mean", "diff_ci_low", "diff_ci_high"] {
            assert_eq!(c[col(name)].parse::<f64>().unwrap(), 0.0, "{line}");
        }
        rows += 1;
    }
    assert!(rows >= 3, "{csv}");
    for f in [
        "plots/comparison_infected.png",
        "plots/paired_differences.png",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    // Resumable: a second call runs nothing.
    let o = Command::new(bin())
        .args([
            "compare",
            "--seeds",
            "3",
            "--duration",
            "8",
            "--quiet",
            "--base",
        ])
        .arg(&base)
        .arg("--variant-set")
        .arg("epidemic.p_infect_normal=0.5")
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("6 skipped"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn compare_says_what_is_missing_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let base = common::scenarios().join("interventions/none.toml");
    for (extra, expect) in [
        (vec![], "nothing to compare"),
        (
            vec!["--variant-set", "swarms.normal.max_sped=3"],
            "--variant-set: `swarms.normal.max_sped`",
        ),
    ] {
        let o = Command::new(bin())
            .args(["compare", "--seeds", "2", "--base"])
            .arg(&base)
            .args(&extra)
            .arg("--out")
            .arg(tmp.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(expect), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn a_bad_intervention_is_one_line_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.toml");
    std::fs::write(
        &file,
        "[[interventions]]\nname = \"lockdown\"\nwhen = \"infected_fraction > 0.1\"\n\
         set = { \"swarms.normal.max_speed\" = 60.0 }\n",
    )
    .unwrap();
    let o = Command::new(bin())
        .args(["run", "--scenario"])
        .arg(&file)
        .arg("--out")
        .arg(tmp.path().join("o"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("interventions[0] \"lockdown\""), "{err}");
    assert!(err.contains("did you mean `infected_frac`"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn usage_mistakes_get_one_line_that_helps() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    // A misspelled flag: the similar one is suggested.
    let o = Command::new(bin())
        .args(["run", "--durations", "5", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("'--duration'"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // Options before the subcommand: the order that works is said.
    let o = Command::new(bin())
        .args(["--scenario", "predators", "run", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("options go after the subcommand"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // `run --help` names the files it writes.
    let o = Command::new(bin())
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    for f in [
        "metrics.csv",
        "transmissions.csv",
        "rt.csv",
        "summary.json",
        "interventions.csv",
    ] {
        assert!(help.contains(f), "run --help does not name {f}");
    }
}

#[test]
fn a_shipped_scenario_is_accepted_by_name_as_in_a_browser_link() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(bin())
        .args([
            "run",
            "--scenario",
            "matrix/B2_D2",
            "--duration",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = fs::read_to_string(tmp.path().join("config.toml")).unwrap();
    assert!(written.contains("seek_nearest"), "{written}");
    let o = Command::new(bin())
        .args(["run", "--scenario", "predatorz", "--out"])
        .arg(tmp.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("a shipped name such as `predators`"), "{err}");
}
