//! One binary, every vector width: the same fixed-seed runs forced onto each path this CPU can
//! run (`PANDEMIC_BOIDS_SIMD`: baseline SSE2, AVX2, AVX-512) write byte-identical files, `bench`
//! says which path it used, and a path the CPU lacks (or a misspelt one) stops the program with
//! one line before anything runs.

mod common;

use std::fs;
use std::path::Path as FsPath;
use std::process::{Command, Output};

use common::{bin, scenarios};
use pandemic_boids::sim::lanes::{ENV, PATHS, Path};

fn pb(path: &str, args: &[&str]) -> Output {
    Command::new(bin())
        .env(ENV, path)
        .args(args)
        .output()
        .unwrap()
}

/// Runs `scenario` for `seconds` on `path` into `out` (agents.csv too) and returns its files.
fn files(path: Path, scenario: &str, seconds: &str, out: &FsPath) -> Vec<(String, Vec<u8>)> {
    let scenario = scenarios().join(scenario);
    let o = pb(
        path.name(),
        &[
            "run",
            "--quiet",
            "--scenario",
            scenario.to_str().unwrap(),
            "--duration",
            seconds,
            "--agents-every",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    [
        "metrics.csv",
        "transmissions.csv",
        "agents.csv",
        "summary.json",
    ]
    .iter()
    .map(|f| (f.to_string(), fs::read(out.join(f)).unwrap()))
    .collect()
}

#[test]
fn every_vector_path_writes_the_same_files() {
    let paths: Vec<Path> = PATHS.into_iter().filter(|p| p.supported()).collect();
    for p in PATHS.into_iter().filter(|p| !p.supported()) {
        eprintln!("this CPU cannot run the {} path: not compared", p.name());
    }
    let tmp = tempfile::tempdir().unwrap();
    // The grid (flocking lanes, Antivax, predators, point queries) and the KD-tree (groups'
    // candidates), each with the epidemic's contact and cure scans.
    for (scenario, seconds) in [("crowd.toml", "1"), ("sir.toml", "6")] {
        let runs: Vec<_> = paths
            .iter()
            .map(|&p| {
                let out = tmp.path().join(format!("{scenario}-{}", p.name()));
                (p, files(p, scenario, seconds, &out))
            })
            .collect();
        let (first, want) = &runs[0];
        for (p, got) in &runs[1..] {
            for ((name, a), (_, b)) in want.iter().zip(got) {
                assert!(
                    a == b,
                    "{scenario}: {name} differs between {} and {}",
                    first.name(),
                    p.name()
                );
            }
        }
    }
}

#[test]
fn bench_names_the_machine_and_the_path_it_used() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("bench.json");
    for p in PATHS.into_iter().filter(|p| p.supported()) {
        let o = pb(
            p.name(),
            &[
                "bench",
                "--sizes",
                "300",
                "--backends",
                "grid",
                "--steps",
                "2",
                "--warmup",
                "1",
                "--json",
                json.to_str().unwrap(),
            ],
        );
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let machine = text.lines().next().unwrap();
        assert!(machine.starts_with("machine: "), "{machine}");
        assert!(
            machine.contains(&format!("vector path {}", p.name())),
            "{machine}"
        );
        assert!(machine.contains("widest"), "{machine}");
        assert!(
            machine.contains("forced by PANDEMIC_BOIDS_SIMD"),
            "{machine}"
        );
        // The JSON records the same machine beside the settings and results.
        let doc: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
        let path = doc["machine"]["vector_path"].as_str().unwrap();
        assert!(path.starts_with(p.name()), "{path}");
        assert_eq!(doc["machine"]["vector_path_forced"], true);
        assert_eq!(doc["settings"]["steps"], 2);
        assert_eq!(doc["results"][0]["boids"], 300);
    }
}

#[test]
fn a_path_the_cpu_lacks_or_a_misspelt_one_is_one_line() {
    for (value, needle) in [
        ("sse9", "is not a vector path"),
        ("avx512", "cannot run that path"),
    ] {
        if value == "avx512" && Path::Avx512.supported() {
            continue;
        }
        let o = pb(
            value,
            &["run", "--duration", "1", "--out", "/nonexistent/x"],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle) && err.contains(ENV), "{err}");
    }
}

#[test]
fn bench_into_a_closed_pipe_still_writes_its_json() {
    // `bench … | head`: the reader goes away before the report is printed.
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("bench.json");
    let mut child = Command::new(bin())
        .args([
            "bench",
            "--sizes",
            "300",
            "--backends",
            "grid",
            "--steps",
            "2",
        ])
        .args(["--warmup", "1", "--json", json.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Closing the read end at once: the process is still starting, so every line it prints
    // meets a closed pipe.
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["results"][0]["boids"], 300);
}
