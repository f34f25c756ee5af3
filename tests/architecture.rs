//! The module graph points down: reading `src/`, every module's imports of other modules form
//! no circle, nothing under `sim` uses `run` or `view`, and nothing under `run` uses `view`.
//!
//! A module here is a concern: a file directly under `src/sim`, `src/run` or `src/view`, or a
//! folder there (its files count as one module, e.g. `sim::neighbours`, `view::ui`), plus the
//! three layer roots (`sim/mod.rs`, …), and the crate root `lib.rs` (module `crate`), which
//! assembles the layers: nothing may import it (the phase sets live in `sim::schedule`, at the
//! bottom). A parent composing its children (`agent::plugin` in `sim/mod.rs`) is not an
//! import.
//! `cargo test --test architecture -- --nocapture` prints the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LAYERS: [&str; 3] = ["sim", "run", "view"];

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The concern module a file belongs to (`sim::neighbours` for `sim/neighbours/grid.rs`,
/// `crate` for `lib.rs`), or `None` for `main.rs` and the binary's files.
fn module_of(rel: &Path) -> Option<String> {
    let parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    match parts.as_slice() {
        [layer, rest @ ..] if LAYERS.contains(&layer.as_str()) => match rest {
            [m] if m == "mod" => Some(layer.clone()),
            [m, ..] => Some(format!("{layer}::{m}")),
            [] => None,
        },
        [root] if root == "lib" => Some("crate".to_string()),
        _ => None,
    }
}

/// Identifiers following `prefix` in `text` (`crate::sim::` → `agent`, `config`, …), also inside
/// braces (`crate::sim::{agent::Boid, config}`).
fn names_after(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        rest = &rest[i + prefix.len()..];
        if let Some(inner) = rest.strip_prefix('{') {
            let end = inner.find('}').unwrap_or(inner.len());
            for item in inner[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push(name);
            }
        } else {
            out.push(
                rest.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect(),
            );
        }
    }
    out
}

/// The modules each module imports.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut modules: BTreeSet<String> = BTreeSet::new();
    let mut files = Vec::new();
    for path in rust_files(&src) {
        let rel = path.strip_prefix(&src).unwrap().to_path_buf();
        if let Some(m) = module_of(&rel) {
            modules.insert(m.clone());
            files.push((m, rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for (m, rel, text) in files {
        let layer = m.split("::").next().unwrap().to_string();
        let mut targets = Vec::new();
        // The crate root names its layers' modules without `crate::`.
        let prefix = |l: &str| {
            if m == "crate" {
                format!("{l}::")
            } else {
                format!("crate::{l}::")
            }
        };
        for l in LAYERS {
            for name in names_after(&text, &prefix(l)) {
                let module = format!("{l}::{name}");
                if modules.contains(&module) {
                    targets.push(module);
                } else if name.starts_with(char::is_uppercase) {
                    // A type of the layer root (e.g. `crate::run::Simulation`).
                    targets.push(l.to_string());
                }
            }
        }
        // An item of the crate root (`crate::SimPlugin`, `crate::{SimSystems, …}`).
        if names_after(&text, "crate::")
            .iter()
            .any(|n| n.starts_with(char::is_uppercase))
        {
            targets.push("crate".to_string());
        }
        // `super::x` in a file directly under a layer may name a sibling module (inside a
        // file's `mod tests`, `super::` is the file itself and names no module).
        let top_level_file = rel.components().count() == 2;
        if top_level_file && m != layer && m != "crate" {
            for name in names_after(&text, "super::") {
                let module = format!("{layer}::{name}");
                if modules.contains(&module) {
                    targets.push(module);
                } else if name.starts_with(char::is_uppercase) && !text.contains("mod tests") {
                    targets.push(layer.clone());
                }
            }
        }
        for t in targets {
            if t != m {
                edges.get_mut(&m).unwrap().insert(t);
            }
        }
    }
    edges
}

/// A circle through the graph, if there is one.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let start = path.iter().position(|p| p == m).unwrap();
                let mut cycle = path[start..].to_vec();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for next in &edges[m] {
            if let Some(c) = visit(next, edges, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in edges.keys() {
        if let Some(c) = visit(m, edges, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn imports_point_down_with_no_circle() {
    let edges = graph();
    for (m, to) in &edges {
        println!(
            "{m} -> {}",
            to.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    assert!(edges.len() > 30, "{} modules found", edges.len());
    assert!(
        !edges["crate"].is_empty(),
        "the crate root assembles the layers"
    );
    for (m, to) in &edges {
        assert!(
            !to.contains("crate"),
            "{m} imports the crate root, which only assembles: name `sim::schedule` (phases) \
             or the module that owns the item instead"
        );
    }
    if let Some(cycle) = find_cycle(&edges) {
        panic!("import circle: {}", cycle.join(" -> "));
    }
    for (m, to) in &edges {
        for t in to {
            let (from_layer, to_layer) = (m.split("::").next(), t.split("::").next());
            let allowed = match from_layer {
                Some("sim") => to_layer == Some("sim"),
                Some("run") => to_layer != Some("view"),
                _ => true,
            };
            assert!(allowed, "{m} imports {t}: a lower layer uses a higher one");
        }
    }
}

#[test]
fn the_checker_sees_a_circle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.insert("a".into(), ["b".to_string()].into());
    edges.insert("b".into(), ["c".to_string()].into());
    edges.insert("c".into(), ["a".to_string()].into());
    assert_eq!(find_cycle(&edges).unwrap(), ["a", "b", "c", "a"]);
    edges.insert("c".into(), BTreeSet::new());
    assert_eq!(find_cycle(&edges), None);
    assert_eq!(
        names_after(
            "use crate::sim::{agent::Boid, config}; crate::sim::math::unit",
            "crate::sim::"
        ),
        ["agent", "config", "math"]
    );
}

/// Every file of `src/` and `tests/` with its text.
fn sources() -> Vec<(PathBuf, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    ["src", "tests", "examples"]
        .iter()
        .flat_map(|d| rust_files(&root.join(d)))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

#[test]
fn files_hold_one_concern_and_comments_fit_the_page() {
    for (path, text) in sources() {
        let lines = text.lines().count();
        assert!(
            lines <= 600,
            "{} has {lines} lines: split it by concern (tests into a `tests.rs` beside it)",
            path.display()
        );
        for (k, line) in text.lines().enumerate() {
            let comment = line.trim_start().starts_with("//");
            let columns = line.chars().count();
            assert!(
                !comment || columns <= 100,
                "{}:{}: a comment line of {columns} columns (at most 100)",
                path.display(),
                k + 1
            );
        }
    }
}
