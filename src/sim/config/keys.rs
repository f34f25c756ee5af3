//! One description per config key: its unit, what values are allowed, how the panel's widget
//! shows it, whether it only takes effect on reset, and a one-line doc. Validation
//! (`validate.rs`), the app's parameter widgets and the generated configuration reference
//! (`docs/configuration.md`) all read [`KEYS`]; nothing else describes a key. A key of every
//! swarm is written once as `swarms.*.<name>`. No systems live here.

use std::fmt::Write as _;

use super::{CatchMode, DoctorBehavior, IndexKind, SimConfig, SteeringModel};
use crate::sim::space::Boundary;
use crate::sim::swarm::Swarm;

/// What kind of value a key holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A number (TOML float; integers are accepted).
    Float,
    /// A whole number.
    Int,
    /// `true` or `false`.
    Bool,
    /// One of these strings.
    Choice(&'static [&'static str]),
}

/// One end of an allowed range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// The value must be beyond it.
    Open(f64),
    /// The value may equal it.
    Closed(f64),
}

/// The upper end of an allowed range, which may depend on the rest of the config.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Upper {
    /// A fixed bound.
    Fixed(Bound),
    /// At most the value of a sibling key (e.g. `min_speed` ≤ `max_speed`).
    Sibling(&'static str),
    /// A radius: below half the smaller world side on a torus (minimum images are unique only
    /// there, docs/model.md §2); checked only while its module is on (see [`Key::active`]).
    HalfWorld,
}

/// The description of one config key.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    /// Dotted key as in a scenario file; `swarms.*.name` stands for each swarm's.
    pub key: &'static str,
    /// Unit, or how the value is meant ("per s", "at spawn", "×"); empty for none.
    pub unit: &'static str,
    /// Label in the panel (empty: the key's last segment with spaces).
    pub label: &'static str,
    /// What the key does, in one line.
    pub doc: &'static str,
    /// Kind of value.
    pub kind: Kind,
    /// Lower end of the allowed values (numbers only).
    pub lower: Bound,
    /// Upper end of the allowed values (numbers only).
    pub upper: Upper,
    /// The value may also be `inf` ("never", "permanent").
    pub infinite_ok: bool,
    /// Slider range in the panel (numbers only); widened to hold the current value.
    pub slider: (f64, f64),
    /// The slider is logarithmic.
    pub log: bool,
    /// Takes effect only when the run is reset (counts, seed, spawn-time chances).
    pub on_reset: bool,
    /// For an [`Upper::HalfWorld`] radius: whether its module is on in a config (a radius of a
    /// module that is off is not checked against the world's size).
    pub active: Option<fn(&SimConfig) -> bool>,
}

impl Key {
    /// The label shown for this key.
    pub fn label(&self) -> String {
        if self.label.is_empty() {
            let leaf = self.key.rsplit('.').next().unwrap_or(self.key);
            leaf.replace('_', " ")
        } else {
            self.label.to_string()
        }
    }

    /// Whether this entry describes the concrete dotted `key` (`swarms.*.x` matches every
    /// swarm's `x`).
    pub fn matches(&self, key: &str) -> bool {
        match self.key.strip_prefix("swarms.*.") {
            Some(leaf) => Swarm::ALL
                .iter()
                .any(|s| key.strip_prefix("swarms.") == Some(&format!("{}.{leaf}", s.key()))),
            None => self.key == key,
        }
    }

    /// The concrete dotted keys this entry describes.
    pub fn concrete(&self) -> Vec<String> {
        match self.key.strip_prefix("swarms.*.") {
            Some(leaf) => Swarm::ALL
                .iter()
                .map(|s| format!("swarms.{}.{leaf}", s.key()))
                .collect(),
            None => vec![self.key.to_string()],
        }
    }

    /// Whether the half-world rule applies to this key in `config`.
    pub fn half_world_applies(&self, config: &SimConfig) -> bool {
        self.upper == Upper::HalfWorld
            && config.world.boundary == Boundary::Wrap
            && self.active.is_none_or(|on| on(config))
    }

    /// The upper bound of the concrete `key` (this entry's) in `config`.
    pub fn upper_bound(&self, key: &str, config: &SimConfig) -> Bound {
        match self.upper {
            Upper::Fixed(b) => b,
            Upper::Sibling(other) => {
                let sibling = match key.rsplit_once('.') {
                    Some((parent, _)) => format!("{parent}.{other}"),
                    None => other.to_string(),
                };
                let value = super::table_get(&config.to_table(), &sibling)
                    .and_then(toml::Value::as_float)
                    .unwrap_or(f64::INFINITY);
                Bound::Closed(value)
            }
            Upper::HalfWorld if self.half_world_applies(config) => {
                Bound::Open(0.5 * config.world.width.min(config.world.height) as f64)
            }
            Upper::HalfWorld => Bound::Closed(MAX_RADIUS),
        }
    }

    /// What the allowed values are, in words (for errors and the reference).
    pub fn allowed(&self, lower: Bound, upper: Bound) -> String {
        if self.infinite_ok {
            return format!("a time > 0 {}, or inf for never", self.unit);
        }
        let lo = match lower {
            Bound::Open(b) => format!("> {}", number(b)),
            Bound::Closed(b) => format!("≥ {}", number(b)),
        };
        let hi = match upper {
            Bound::Open(b) => format!("< {}", number(b)),
            Bound::Closed(b) => format!("≤ {}", number(b)),
        };
        let rule = match self.upper {
            Upper::Sibling(other) => format!(" (at most {other})"),
            Upper::HalfWorld => " (below half the smaller world side on a torus)".to_string(),
            Upper::Fixed(_) => String::new(),
        };
        if self.unit.is_empty() && rule.is_empty() {
            format!("{lo} and {hi}")
        } else {
            format!("{lo} and {hi}, {}{rule}", self.unit)
        }
    }
}

/// A bound as people write it: `180`, `0.5`, and `1e9` rather than `1000000000`.
fn number(b: f64) -> String {
    if b.abs() >= 1e6 && b.is_finite() {
        format!("{b:e}")
    } else {
        format!("{b}")
    }
}

/// The largest radius accepted where the half-world rule does not apply, px.
const MAX_RADIUS: f64 = 1e8;

/// Defaults for building the table.
const BASE: Key = Key {
    key: "",
    unit: "",
    label: "",
    doc: "",
    kind: Kind::Float,
    lower: Bound::Closed(0.0),
    upper: Upper::Fixed(Bound::Closed(1e9)),
    infinite_ok: false,
    slider: (0.0, 1000.0),
    log: false,
    on_reset: false,
    active: None,
};

const fn probability(key: &'static str, unit: &'static str, doc: &'static str) -> Key {
    Key {
        key,
        unit,
        doc,
        upper: Upper::Fixed(Bound::Closed(1.0)),
        slider: (0.0, 1.0),
        ..BASE
    }
}

const fn factor(key: &'static str, doc: &'static str) -> Key {
    Key {
        key,
        unit: "×",
        doc,
        upper: Upper::Fixed(Bound::Closed(1.0)),
        slider: (0.0, 1.0),
        ..BASE
    }
}

const fn radius(key: &'static str, doc: &'static str) -> Key {
    Key {
        key,
        unit: "px",
        doc,
        upper: Upper::HalfWorld,
        slider: (0.0, 400.0),
        ..BASE
    }
}

const fn weight(key: &'static str, doc: &'static str, max: f64) -> Key {
    Key {
        key,
        doc,
        upper: Upper::Fixed(Bound::Closed(max)),
        slider: (0.0, 10.0),
        ..BASE
    }
}

const fn time(key: &'static str, doc: &'static str, slider: (f64, f64)) -> Key {
    Key {
        key,
        unit: "s",
        doc,
        slider,
        ..BASE
    }
}

const fn never_time(key: &'static str, doc: &'static str) -> Key {
    Key {
        key,
        unit: "s",
        doc,
        lower: Bound::Open(0.0),
        upper: Upper::Fixed(Bound::Closed(f64::INFINITY)),
        infinite_ok: true,
        slider: (0.1, 120.0),
        log: true,
        ..BASE
    }
}

const fn count(key: &'static str, unit: &'static str, doc: &'static str, max: f64) -> Key {
    Key {
        key,
        unit,
        doc,
        kind: Kind::Int,
        upper: Upper::Fixed(Bound::Closed(max)),
        slider: (0.0, 5000.0),
        ..BASE
    }
}

const fn litter(key: &'static str, doc: &'static str) -> Key {
    Key {
        key,
        unit: "boids",
        doc,
        upper: Upper::Fixed(Bound::Closed(100.0)),
        slider: (0.0, 10.0),
        ..BASE
    }
}

const fn choice(
    key: &'static str,
    label: &'static str,
    names: &'static [&'static str],
    doc: &'static str,
) -> Key {
    Key {
        key,
        label,
        doc,
        kind: Kind::Choice(names),
        ..BASE
    }
}

const fn flag(key: &'static str, doc: &'static str) -> Key {
    Key {
        key,
        doc,
        kind: Kind::Bool,
        ..BASE
    }
}

/// Most boids a swarm may start with, and the population cap's largest value.
const MAX_BOIDS: f64 = 20_000_000.0;

/// Every config key, in scenario-file order.
pub const KEYS: &[Key] = &[
    // Run.
    Key {
        kind: Kind::Int,
        upper: Upper::Fixed(Bound::Closed(i64::MAX as f64)),
        slider: (0.0, 1e6),
        on_reset: true,
        ..count(
            "seed",
            "",
            "Seed of every random draw: the same config, seed and dt give the same run.",
            0.0,
        )
    },
    Key {
        label: "step dt",
        lower: Bound::Open(0.0),
        upper: Upper::Fixed(Bound::Closed(1.0)),
        slider: (0.002, 0.1),
        log: true,
        ..time(
            "dt",
            "Simulation step; every rate is per second, so results do not depend on it.",
            (0.0, 0.0),
        )
    },
    Key {
        label: "duration (headless)",
        slider: (1.0, 3600.0),
        log: true,
        ..time(
            "duration",
            "Simulated length of a headless run.",
            (0.0, 0.0),
        )
    },
    Key {
        label: "sample every",
        lower: Bound::Open(0.0),
        slider: (0.05, 10.0),
        log: true,
        ..time(
            "sample_every",
            "Simulated seconds between metrics.csv rows (at most one row per step).",
            (0.0, 0.0),
        )
    },
    Key {
        label: "agents.csv every (headless)",
        ..time(
            "agents_every",
            "Simulated seconds between agents.csv snapshots of every boid (0 = none).",
            (0.0, 60.0),
        )
    },
    Key {
        label: "R_t window",
        lower: Bound::Open(0.0),
        slider: (0.5, 60.0),
        log: true,
        ..time(
            "rt_window",
            "Window of the reproduction numbers R_t and R_c (rt.csv, plots); incidence is counted in fifths of it.",
            (0.0, 0.0),
        )
    },
    choice(
        "steering_model",
        "steering model",
        SteeringModel::NAMES,
        "Flocking model: Shiffman's Model B (baseline), or hybrid, adams, pygame for comparison.",
    ),
    choice(
        "neighbour_index",
        "neighbour index",
        IndexKind::NAMES,
        "Neighbour search: bevy_spatial's KD-tree, a uniform grid (large runs) or brute force.",
    ),
    // World.
    Key {
        unit: "px",
        lower: Bound::Closed(1.0),
        upper: Upper::Fixed(Bound::Closed(1e8)),
        slider: (200.0, 20000.0),
        log: true,
        ..time("world.width", "Width of the world.", (0.0, 0.0))
    },
    Key {
        unit: "px",
        lower: Bound::Closed(1.0),
        upper: Upper::Fixed(Bound::Closed(1e8)),
        slider: (200.0, 20000.0),
        log: true,
        ..time("world.height", "Height of the world.", (0.0, 0.0))
    },
    choice(
        "world.boundary",
        "boundary",
        Boundary::NAMES,
        "wrap: a torus (distances take the short way round); bounce: walls reflect boids.",
    ),
    // Flocking, per swarm.
    Key {
        on_reset: true,
        ..count(
            "swarms.*.count",
            "boids",
            "Boids of this swarm spawned at the start (Normals may turn Antivax).",
            MAX_BOIDS,
        )
    },
    Key {
        unit: "px/s",
        lower: Bound::Open(0.0),
        upper: Upper::Fixed(Bound::Closed(1e6)),
        ..BASE.with(
            "swarms.*.max_speed",
            "v_max: top speed; also the speed steers aim for.",
        )
    },
    Key {
        unit: "px/s²",
        upper: Upper::Fixed(Bound::Closed(1e8)),
        slider: (0.0, 2000.0),
        ..BASE.with(
            "swarms.*.max_force",
            "F_max: each steering rule is truncated to it (the total under the hybrid model).",
        )
    },
    Key {
        unit: "px/s",
        upper: Upper::Sibling("max_speed"),
        ..BASE.with(
            "swarms.*.min_speed",
            "v_min: a slower boid is sped up to it along its heading.",
        )
    },
    radius(
        "swarms.*.separation_radius",
        "r_sep: neighbours of every swarm closer than this push apart.",
    ),
    radius(
        "swarms.*.alignment_radius",
        "r_ali: same-swarm neighbours closer than this are matched in heading; flocks link at it.",
    ),
    radius(
        "swarms.*.cohesion_radius",
        "r_coh: same-swarm neighbours closer than this pull toward their centre.",
    ),
    weight(
        "swarms.*.separation_weight",
        "w_sep: weight of separation (px³/s² under the pygame model).",
        1e9,
    ),
    weight(
        "swarms.*.alignment_weight",
        "w_ali: weight of alignment.",
        1e6,
    ),
    weight(
        "swarms.*.cohesion_weight",
        "w_coh: weight of cohesion.",
        1e6,
    ),
    Key {
        unit: "rad",
        label: "field of view (half-angle)",
        upper: Upper::Fixed(Bound::Closed(std::f64::consts::PI + 1e-3)),
        slider: (0.1, std::f64::consts::PI + 1e-5),
        ..BASE.with(
            "swarms.*.fov",
            "Half-angle a boid sees for the flocking rules (π = all round).",
        )
    },
    Key {
        unit: "px/s²",
        upper: Upper::Fixed(Bound::Closed(1e8)),
        slider: (0.0, 1000.0),
        ..BASE.with(
            "swarms.*.noise",
            "Random acceleration; its kick over a step is noise·√dt (frame-rate independent).",
        )
    },
    // Epidemic.
    Key {
        on_reset: true,
        ..probability(
            "epidemic.p_initial_infect_normal",
            "at spawn",
            "Chance a Normal/Antivax boid starts infected.",
        )
    },
    Key {
        on_reset: true,
        ..probability(
            "epidemic.p_initial_infect_doctor",
            "at spawn",
            "Chance a Doctor starts infected.",
        )
    },
    probability(
        "epidemic.p_infect_normal",
        "per s",
        "Infection chance per second of contact with an infected Normal/Antivax boid.",
    ),
    probability(
        "epidemic.p_infect_doctor",
        "per s",
        "Infection chance per second of contact with an infected Doctor.",
    ),
    probability(
        "epidemic.p_spontaneous_infect",
        "per s",
        "Infection chance per second of every susceptible boid, without contact.",
    ),
    probability(
        "epidemic.p_cure",
        "per s",
        "Cure chance per second of each doctor–infected pair within the doctor's radius.",
    ),
    Key {
        label: "p_death",
        ..probability(
            "epidemic.p_death",
            "at t_death",
            "Chance an infected boid dies when t_death has passed (else it recovers).",
        )
    },
    never_time(
        "epidemic.t_death",
        "Seconds from infection to death or recovery (inf: only doctors end an infection).",
    ),
    never_time(
        "epidemic.t_immunity",
        "Seconds for immunity to wane to zero (inf: permanent, SIR; finite: SIRS).",
    ),
    Key {
        label: "immunity after recovery",
        ..probability(
            "epidemic.cure_immunity_level",
            "",
            "Immunity right after recovery; infection chances are multiplied by 1 − immunity.",
        )
    },
    radius(
        "epidemic.r_interact_normal",
        "Contact radius of a Normal/Antivax boid (also its breeding range).",
    ),
    radius(
        "epidemic.r_interact_doctor",
        "Contact radius of a Doctor, which is also its cure radius.",
    ),
    factor(
        "epidemic.infected_radius_factor_normal",
        "Contact radius multiplier of an infected Normal/Antivax boid.",
    ),
    factor(
        "epidemic.infected_radius_factor_doctor",
        "Contact and cure radius multiplier of an infected Doctor.",
    ),
    factor(
        "epidemic.infected_cure_factor",
        "Cure chance multiplier when the doctor is infected.",
    ),
    flag(
        "epidemic.cross_swarm_infection",
        "Whether infection crosses swarms (cures always do).",
    ),
    // Doctors.
    choice(
        "doctors.behavior",
        "doctor behaviour",
        DoctorBehavior::NAMES,
        "passive: only flock; seek_nearest: to the nearest infected; seek_centroid: to their centre.",
    ),
    Key {
        active: Some(|c| c.doctors.behavior == DoctorBehavior::SeekNearest),
        ..radius(
            "doctors.seek_radius",
            "How far seek_nearest looks for an infected boid.",
        )
    },
    weight(
        "doctors.seek_weight",
        "Multiplier of the seek steer (at most seek_weight · F_max).",
        1e6,
    ),
    // Antivax.
    Key {
        on_reset: true,
        ..probability(
            "antivax.p_antivax",
            "at spawn",
            "Chance a Normal boid is spawned as Antivax.",
        )
    },
    Key {
        active: Some(|c| c.antivax.p_antivax > 0.0 || c.swarms.antivax.count > 0),
        ..radius(
            "antivax.repulsion_radius",
            "Antivax boids flee doctors closer than this.",
        )
    },
    weight(
        "antivax.repulsion_weight",
        "Multiplier of the Antivax flight steer.",
        1e6,
    ),
    // Population.
    flag(
        "population.enabled",
        "Turns births, aging and promotion to Doctor on.",
    ),
    probability(
        "population.p_offspring_normal",
        "per s",
        "Breeding chance per second of a Normal/Antivax opposite-sex pair in contact.",
    ),
    probability(
        "population.p_offspring_doctor",
        "per s",
        "Breeding chance per second of a Doctor opposite-sex pair in contact.",
    ),
    factor(
        "population.infected_offspring_factor",
        "Breeding chance multiplier when the initiating parent is infected.",
    ),
    litter(
        "population.litter_mean_normal",
        "Mean litter size of Normal/Antivax parents.",
    ),
    litter(
        "population.litter_sd_normal",
        "Standard deviation of the Normal/Antivax litter size.",
    ),
    litter(
        "population.litter_mean_doctor",
        "Mean litter size of Doctor parents.",
    ),
    litter(
        "population.litter_sd_doctor",
        "Standard deviation of the Doctor litter size.",
    ),
    time(
        "population.cooldown",
        "Seconds both parents wait before they can breed again.",
        (0.0, 60.0),
    ),
    time(
        "population.t_adult",
        "Age from which a boid may breed, and a Normal may become a Doctor.",
        (0.0, 60.0),
    ),
    probability(
        "population.p_become_doctor",
        "per s",
        "Chance per second an adult Normal becomes a Doctor.",
    ),
    count(
        "population.max_population",
        "boids",
        "No births while this many boids are alive.",
        MAX_BOIDS,
    ),
    // Predators.
    Key {
        on_reset: true,
        slider: (0.0, 50.0),
        ..count(
            "predators.count",
            "predators",
            "Predators spawned at the start (0 = none).",
            100_000.0,
        )
    },
    Key {
        unit: "px/s",
        lower: Bound::Open(0.0),
        upper: Upper::Fixed(Bound::Closed(1e6)),
        ..BASE.with(
            "predators.speed",
            "Top speed of a predator (it has no minimum).",
        )
    },
    Key {
        unit: "px/s²",
        upper: Upper::Fixed(Bound::Closed(1e8)),
        slider: (0.0, 2000.0),
        ..BASE.with("predators.max_force", "Steering limit of a predator.")
    },
    Key {
        active: Some(predators_on),
        ..radius(
            "predators.catch_radius",
            "A boid closer than this to a predator is caught.",
        )
    },
    Key {
        active: Some(predators_on),
        ..radius(
            "predators.detection_range",
            "Predators only see boids closer than this.",
        )
    },
    Key {
        active: Some(predators_on),
        ..radius(
            "predators.isolation_radius",
            "Neighbours within this radius make a candidate less isolated (a worse target).",
        )
    },
    Key {
        active: Some(predators_on),
        ..radius(
            "predators.fear_radius",
            "Boids closer than this to a predator flee and flock less.",
        )
    },
    choice(
        "predators.catch",
        "on catch",
        CatchMode::NAMES,
        "remove: a caught boid is gone; respawn: it reappears at a random edge heading inward.",
    ),
];

fn predators_on(c: &SimConfig) -> bool {
    c.predators.count > 0
}

impl Key {
    /// `self` with its key and doc set (for table entries that set other fields too).
    const fn with(self, key: &'static str, doc: &'static str) -> Key {
        Key { key, doc, ..self }
    }
}

/// The description of a concrete dotted key, if it is one.
pub fn key(key: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.matches(key))
}

/// The configuration reference (docs/configuration.md), generated from [`KEYS`] and the
/// defaults.
pub fn reference_markdown() -> String {
    let defaults = SimConfig::default().to_table();
    let mut out = String::from(
        "# Configuration reference\n\n\
         Generated from the key table in `src/sim/config/keys.rs` (the same table validates\n\
         scenario files and builds the app's parameter widgets); a test fails when this file is\n\
         stale — regenerate it with `UPDATE_DOCS=1 cargo test --test docs`.\n\n\
         A scenario file sets any of these keys; every key it leaves out keeps its default.\n\
         `--set KEY=VALUE` sets one on the command line. Keys under `swarms.*` exist for each\n\
         swarm: `swarms.normal`, `swarms.doctor`, `swarms.antivax` (the defaults of all three\n\
         are the same except `count`). What the keys mean: [model.md](model.md).\n",
    );
    let mut section: Option<&str> = None;
    for k in KEYS {
        let this = match k.key.rsplit_once('.') {
            Some((parent, _)) => parent,
            None => "",
        };
        if section != Some(this) {
            section = Some(this);
            let title = if this.is_empty() {
                "Run (top level)".to_string()
            } else {
                format!("`[{this}]`")
            };
            let _ = write!(
                out,
                "\n## {title}\n\n| key | default | allowed | on reset | what it does |\n|---|---|---|---|---|\n"
            );
        }
        let example = k.concrete()[0].clone();
        let default = super::table_get(&defaults, &example)
            .map(describe_default)
            .unwrap_or_default();
        let default = if k.key == "swarms.*.count" {
            format!(
                "{} (normal), {} (doctor), {} (antivax)",
                SimConfig::default().swarms.normal.count,
                SimConfig::default().swarms.doctor.count,
                SimConfig::default().swarms.antivax.count
            )
        } else {
            default
        };
        let allowed = match k.kind {
            Kind::Bool => "`true`, `false`".to_string(),
            Kind::Choice(names) => names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
            Kind::Float | Kind::Int => {
                let upper = match k.upper {
                    Upper::Fixed(b) => b,
                    Upper::Sibling(_) => Bound::Closed(f64::INFINITY),
                    Upper::HalfWorld => Bound::Open(f64::INFINITY),
                };
                let text = k.allowed(k.lower, upper);
                let text = text
                    .replace("≤ inf", "≤ its sibling")
                    .replace("< inf", "< half the world");
                match k.upper {
                    Upper::Sibling(other) => text
                        .replace("and ≤ its sibling", &format!("and ≤ `{other}`"))
                        .replace(&format!(" (at most {other})"), ""),
                    Upper::HalfWorld => {
                        let when = if k.active.is_some() {
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
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            k.key,
            default,
            allowed,
            if k.on_reset { "yes" } else { "" },
            k.doc
        );
    }
    out
}

fn describe_default(v: &toml::Value) -> String {
    match v {
        toml::Value::Float(x) if x.is_infinite() => "`inf`".to_string(),
        toml::Value::String(s) => format!("`{s}`"),
        other => format!("`{other}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every scalar key of the config, dotted.
    fn all_keys(table: &toml::Table, prefix: &str, out: &mut Vec<String>) {
        for (k, v) in table {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v.as_table() {
                Some(t) => all_keys(t, &key, out),
                None => out.push(key),
            }
        }
    }

    #[test]
    fn every_config_key_has_exactly_one_description_and_no_description_is_spare() {
        let mut keys = Vec::new();
        all_keys(&SimConfig::default().to_table(), "", &mut keys);
        assert!(keys.len() > 60, "{} keys", keys.len());
        for k in &keys {
            let n = KEYS.iter().filter(|d| d.matches(k)).count();
            assert_eq!(n, 1, "{k} is described {n} times");
        }
        for d in KEYS {
            for k in d.concrete() {
                assert!(keys.contains(&k), "{} describes no key ({k})", d.key);
            }
        }
    }

    #[test]
    fn descriptions_fit_their_defaults() {
        let config = SimConfig::default();
        let table = config.to_table();
        for d in KEYS {
            assert!(!d.doc.is_empty(), "{} has no doc", d.key);
            for k in d.concrete() {
                let v = crate::sim::config::table_get(&table, &k).unwrap();
                match (d.kind, v) {
                    (Kind::Float, toml::Value::Float(x)) => {
                        let (lo, hi) = d.slider;
                        assert!(lo <= hi, "{k}");
                        assert!(
                            x.is_infinite() && d.infinite_ok || (lo..=hi).contains(x),
                            "{k} = {x} outside its slider {lo}..{hi}"
                        );
                    }
                    (Kind::Int, toml::Value::Integer(_))
                    | (Kind::Bool, toml::Value::Boolean(_)) => {}
                    (Kind::Choice(names), toml::Value::String(s)) => {
                        assert!(names.contains(&s.as_str()), "{k} = {s} not in {names:?}")
                    }
                    (kind, v) => panic!("{k}: described as {kind:?}, holds {v}"),
                }
            }
        }
    }

    #[test]
    fn swarm_wildcards_match_each_swarm_only() {
        let d = key("swarms.doctor.max_speed").unwrap();
        assert_eq!(d.key, "swarms.*.max_speed");
        assert!(d.matches("swarms.antivax.max_speed"));
        assert!(!d.matches("swarms.robots.max_speed"));
        assert!(key("swarms.normal.cuont").is_none());
        assert_eq!(key("epidemic.p_cure").unwrap().unit, "per s");
    }

    #[test]
    fn dynamic_bounds_follow_the_config() {
        let mut c = SimConfig::default();
        let min_speed = key("swarms.normal.min_speed").unwrap();
        assert_eq!(
            min_speed.upper_bound("swarms.normal.min_speed", &c),
            Bound::Closed(180.0)
        );
        c.swarms.doctor.max_speed = 90.0;
        assert_eq!(
            min_speed.upper_bound("swarms.doctor.min_speed", &c),
            Bound::Closed(90.0)
        );
        let seek = key("doctors.seek_radius").unwrap();
        // Passive doctors: the seek radius is not held to the world.
        assert_eq!(
            seek.upper_bound("doctors.seek_radius", &c),
            Bound::Closed(MAX_RADIUS)
        );
        c.doctors.behavior = DoctorBehavior::SeekNearest;
        assert_eq!(
            seek.upper_bound("doctors.seek_radius", &c),
            Bound::Open(540.0)
        );
        c.world.boundary = Boundary::Bounce;
        assert_eq!(
            seek.upper_bound("doctors.seek_radius", &c),
            Bound::Closed(MAX_RADIUS)
        );
    }
}
