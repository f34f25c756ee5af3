//! The configuration reference (docs/configuration.md), written from the key list that
//! `keys` walks out of the config's type: each key's doc comment, default, allowed values and
//! whether it applies on reset. A test keeps the file current. No systems live here.

use std::fmt::Write as _;

use super::SimConfig;
use super::keys::{self, Kind};
use super::spec::{Bound, Upper};

/// The configuration reference (docs/configuration.md).
pub fn reference_markdown() -> String {
    let defaults = SimConfig::default();
    let mut out = String::from(
        "# Configuration reference\n\n\
         Generated from the config's own fields (`src/sim/config/`: each key's `///` comment\n\
         and its `#[reflect(@Spec…)]` attribute, which also validate scenario files and build\n\
         the app's parameter widgets); a test fails when this file is stale — regenerate it\n\
         with `UPDATE_DOCS=1 cargo test --test docs`.\n\n\
         A scenario file sets any of these keys; every key it leaves out keeps its default.\n\
         `--set KEY=VALUE` sets one on the command line. Keys under `swarms.*` exist for each\n\
         swarm: `swarms.normal`, `swarms.doctor`, `swarms.antivax` (the defaults of all three\n\
         are the same except `count`). What the keys mean: [model.md](model.md).\n",
    );
    let mut section: Option<String> = None;
    let mut seen: Vec<&str> = Vec::new();
    for k in keys::all() {
        // A key repeated per swarm is listed once, as its pattern.
        if seen.contains(&k.pattern.as_str()) {
            continue;
        }
        seen.push(&k.pattern);
        let this = k.pattern.rsplit_once('.').map_or("", |(parent, _)| parent);
        if section.as_deref() != Some(this) {
            section = Some(this.to_string());
            let title = if this.is_empty() {
                "Run (top level)".to_string()
            } else {
                format!("`[{this}]`")
            };
            let _ = write!(
                out,
                "\n## {title}\n\n| key | default | allowed | on reset | what it does |\n\
                 |---|---|---|---|---|\n"
            );
        }
        let default = if k.pattern != k.key && k.name == "count" {
            let counts: Vec<String> = keys::all()
                .iter()
                .filter(|o| o.pattern == k.pattern)
                .map(|o| {
                    let swarm = o.section.rsplit('.').next().unwrap_or_default();
                    let v = defaults
                        .get(&o.key)
                        .map(|v| v.to_string())
                        .unwrap_or_default();
                    format!("{v} ({swarm})")
                })
                .collect();
            counts.join(", ")
        } else {
            defaults
                .get(&k.key)
                .map(|v| format!("`{v}`"))
                .unwrap_or_default()
        };
        let allowed = match k.kind {
            Kind::Bool => "`true`, `false`".to_string(),
            Kind::Choice(names) => names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
            Kind::Float | Kind::Int => allowed_in_words(k),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            k.pattern,
            default,
            allowed,
            if k.spec.is_on_reset() { "yes" } else { "" },
            k.doc
        );
    }
    out
}

/// A numeric key's allowed values for the reference, with rules that depend on the config
/// said in words.
fn allowed_in_words(k: &keys::Key) -> String {
    let upper = match k.spec.upper {
        Upper::Fixed(b) => b,
        Upper::Sibling(_) => Bound::Closed(f64::INFINITY),
        Upper::HalfWorld => Bound::Open(f64::INFINITY),
    };
    let text = k
        .allowed(k.spec.lower, upper)
        .replace("≤ inf", "≤ its sibling")
        .replace("< inf", "< half the world");
    match k.spec.upper {
        Upper::Sibling(other) => text
            .replace("and ≤ its sibling", &format!("and ≤ `{other}`"))
            .replace(&format!(" (at most {other})"), ""),
        Upper::HalfWorld => {
            let when = if k.spec.active.is_some() {
                " while its module is on"
            } else {
                ""
            };
            text.replace(
                "and < half the world",
                &format!("and below half the smaller world side on a torus{when}"),
            )
            .replace(" (below half the smaller world side on a torus)", "")
        }
        Upper::Fixed(_) => text,
    }
}
