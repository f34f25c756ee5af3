//! `[[interventions]]` of a scenario (docs/model.md §11): what-if measures with a trigger (`at`
//! a time, or `when` a condition on the run's overall measures holds, optionally `for` a
//! while), an end (`duration`, `until` a condition, else the run's end) and actions (`set`
//! live keys, `vaccinate`, `isolate`, `import`). Here: their types as a scenario file writes
//! them, the conditions' parser, their validation (one line naming the intervention) and the
//! dotted paths `interventions.<name or index>.<field>` that `--set`, sweeps and links use.
//! What they do at run time lives in `sim::interventions`. No systems live here.

mod paths;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use paths::{FIELDS, get, is_whole, set};

use super::keys::{self, nearest};
use super::spec::Applies;
use super::value::Value;
use super::{ConfigError, SimConfig};
use crate::sim::names::one_of;
use crate::sim::swarm::Swarm;

/// The measures a condition can test, read from the last sample of everyone together:
/// fractions are of the boids alive, `r_t` is the latest reported Cori R_t (a condition on it
/// is false while none is reported).
pub const MEASURES: [&str; 9] = [
    "infected_frac",
    "infected",
    "susceptible_frac",
    "susceptible",
    "recovered_frac",
    "recovered",
    "dead",
    "alive",
    "r_t",
];

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Below,
    /// `<=`
    AtMost,
    /// `>`
    Above,
    /// `>=`
    AtLeast,
}

impl Op {
    /// As written.
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Below => "<",
            Op::AtMost => "<=",
            Op::Above => ">",
            Op::AtLeast => ">=",
        }
    }
}

/// `<measure> <op> <value>`, e.g. `infected_frac > 0.10`.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// One of [`MEASURES`].
    pub measure: &'static str,
    /// The comparison.
    pub op: Op,
    /// The threshold.
    pub value: f64,
}

impl Condition {
    /// Whether some fraction in 0..1 satisfies it.
    pub fn can_hold(&self) -> bool {
        self.holds(0.0) || self.holds(1.0) || (0.0..=1.0).contains(&self.value)
    }

    /// Whether `x` (the measure's value) satisfies the condition.
    pub fn holds(&self, x: f64) -> bool {
        match self.op {
            Op::Below => x < self.value,
            Op::AtMost => x <= self.value,
            Op::Above => x > self.value,
            Op::AtLeast => x >= self.value,
        }
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.measure, self.op.symbol(), self.value)
    }
}

impl Serialize for Condition {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Condition {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Condition::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl Condition {
    /// Parses `infected_frac > 0.1` (spaces optional).
    pub fn parse(text: &str) -> Result<Self, String> {
        let form = "write it as `<measure> <op> <value>`, e.g. `infected_frac > 0.1`";
        let ops = one_of(&["<", "<=", ">", ">="]);
        let Some(at) = text.find(['<', '>', '=', '!']) else {
            let words: Vec<&str> = text.split_whitespace().collect();
            return Err(match words.as_slice() {
                [_, op, _] => format!("`{op}` is not a comparison; use {ops}"),
                _ => format!("`{text}` has no comparison; {form}"),
            });
        };
        let (left, rest) = text.split_at(at);
        let (op, right) = [
            ("<=", Op::AtMost),
            (">=", Op::AtLeast),
            ("<", Op::Below),
            (">", Op::Above),
        ]
        .into_iter()
        .find_map(|(s, op)| rest.strip_prefix(s).map(|r| (op, r)))
        .ok_or_else(|| {
            let bad = rest.chars().take(2).collect::<String>();
            format!("`{}` is not a comparison; use {ops}", bad.trim())
        })?;
        let name = left.trim();
        let measure =
            MEASURES
                .iter()
                .find(|m| **m == name)
                .copied()
                .ok_or_else(|| match nearest(name, MEASURES) {
                    Some(n) => format!("unknown measure `{name}`; did you mean `{n}`?"),
                    None => format!("unknown measure `{name}`; use {}", one_of(&MEASURES)),
                })?;
        let value: f64 = right
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| format!("`{}` is not a number; {form}", right.trim()))?;
        Ok(Condition { measure, op, value })
    }
}

/// Vaccination: susceptible boids gain immunity `efficacy` (they count as recovered, and that
/// immunity wanes like a recovered boid's); either a `fraction` of them at the start, or each
/// with `rate_per_s` (probability per second) while it is active.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vaccinate {
    /// Only this swarm (every swarm when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm: Option<Swarm>,
    /// Share of the susceptible boids vaccinated at the start, 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    /// Probability per second that each susceptible boid is vaccinated, while active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    /// Immunity given, 0..1 (1: never infected while it lasts).
    #[serde(default = "one")]
    pub efficacy: f64,
}

/// Test and isolate: while active, an infected boid is detected with probability
/// `detect_per_s` per second once it has been infected `delay` seconds; a detected boid stays
/// where it is, infects no one and attracts no one (not flocked with, not sought by doctors)
/// until its infection ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Isolate {
    /// Probability per second of detection, 0..1 (1: at the first step after `delay`).
    pub detect_per_s: f64,
    /// Seconds of infection before a boid can be detected.
    #[serde(default)]
    pub delay: f64,
}

/// Importation: `count` susceptible boids become infected at the start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Import {
    /// How many.
    pub count: u32,
    /// Only this swarm (every swarm when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm: Option<Swarm>,
}

/// One `[[interventions]]` entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intervention {
    /// Its name in files, plots and the app.
    #[serde(default)]
    pub name: String,
    /// Starts at this simulated time, s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<f64>,
    /// Starts when this condition holds (checked at every sample).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Condition>,
    /// The condition must hold this long before it starts, s.
    #[serde(rename = "for", default, skip_serializing_if = "is_zero")]
    pub hold: f64,
    /// Ends this long after it started, s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// Ends when this condition holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Condition>,
    /// Starts at most once (`false`: re-arms when it ends).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub once: bool,
    /// Off when `false` (the app's switch): it never starts.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub enabled: bool,
    /// Live config keys set while active (dotted, as `--set`); restored when it ends.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, toml::Value>,
    /// Vaccination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vaccinate: Option<Vaccinate>,
    /// Test and isolate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolate: Option<Isolate>,
    /// Importation of cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import: Option<Import>,
}

impl Default for Intervention {
    fn default() -> Self {
        Self {
            name: String::new(),
            at: None,
            when: None,
            hold: 0.0,
            duration: None,
            until: None,
            once: true,
            enabled: true,
            set: BTreeMap::new(),
            vaccinate: None,
            isolate: None,
            import: None,
        }
    }
}

fn one() -> f64 {
    1.0
}
fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// A `set` entry's TOML value as a key's value.
pub fn toml_value(v: &toml::Value) -> Value {
    match v {
        toml::Value::Float(x) => Value::Float(*x),
        toml::Value::Integer(i) => Value::Int(*i),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::String(s) => Value::Name(s.clone()),
        other => Value::Name(other.to_string()),
    }
}

/// A key's value as a `set` entry's TOML value.
pub fn to_toml_value(v: &Value) -> toml::Value {
    match v {
        Value::Float(x) => toml::Value::Float(*x),
        Value::Float32(x) => {
            toml::Value::Float(Value::Float32(*x).to_string().parse().unwrap_or(*x as f64))
        }
        Value::Int(i) => toml::Value::Integer(*i),
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Name(s) => toml::Value::String(s.clone()),
    }
}

impl Intervention {
    /// How it is named in messages: `interventions[0] "lockdown"`.
    pub fn label(&self, index: usize) -> String {
        if self.name.is_empty() {
            format!("interventions[{index}]")
        } else {
            format!("interventions[{index}] \"{}\"", self.name)
        }
    }

    /// Its name, or `#<index>` when it has none.
    pub fn display_name(&self, index: usize) -> String {
        if self.name.is_empty() {
            format!("#{index}")
        } else {
            self.name.clone()
        }
    }

    /// What is wrong with it under `config`, if anything (one sentence that says what is
    /// allowed).
    pub fn problem(&self, config: &SimConfig) -> Option<String> {
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        let time = |x: f64| x.is_finite() && x >= 0.0;
        let mut triggers = 0;
        if let Some(at) = self.at {
            triggers += 1;
            if !time(at) {
                return Some(format!("`at = {at}` must be a time ≥ 0 s"));
            }
        }
        if self.when.is_some() {
            triggers += 1;
        }
        match triggers {
            0 => {
                return Some(
                    "has no trigger; add `at = 30.0` (seconds) or `when = \"infected_frac > 0.1\"`"
                        .into(),
                );
            }
            2 => return Some("has both `at` and `when`; keep one of them".into()),
            _ => {}
        }
        if !time(self.hold) {
            return Some(format!("`for = {}` must be a time ≥ 0 s", self.hold));
        }
        if self.hold > 0.0 && self.when.is_none() {
            return Some("`for` needs a `when` condition to hold".into());
        }
        if !self.once && self.when.is_none() {
            return Some("`once = false` needs a `when` trigger (an `at` time comes once)".into());
        }
        for cond in [&self.when, &self.until].into_iter().flatten() {
            if cond.measure.ends_with("_frac") && !cond.can_hold() {
                return Some(format!(
                    "`{cond}` can never hold: a fraction is between 0 and 1"
                ));
            }
        }
        if let Some(d) = self.duration
            && !(d.is_finite() && d > 0.0)
        {
            return Some(format!("`duration = {d}` must be a time > 0 s"));
        }
        if self.duration.is_some() && self.until.is_some() {
            return Some("has both `duration` and `until`; keep one of them".into());
        }
        if self.set.is_empty()
            && self.vaccinate.is_none()
            && self.isolate.is_none()
            && self.import.is_none()
        {
            return Some(
                "does nothing; add `set = { … }`, `vaccinate = { … }`, `isolate = { … }` or \
                 `import = { … }`"
                    .into(),
            );
        }
        if let Some(m) = self.set_problem(config) {
            return Some(m);
        }
        if let Some(v) = &self.vaccinate {
            match (v.fraction, v.rate_per_s) {
                (Some(_), Some(_)) => {
                    return Some(
                        "vaccinate has both `fraction` and `rate_per_s`; keep one (a fraction \
                         at the start, or a rate while active)"
                            .into(),
                    );
                }
                (None, None) => {
                    return Some(
                        "vaccinate needs one of `fraction` (at the start) or `rate_per_s` \
                         (while active)"
                            .into(),
                    );
                }
                (Some(f), None) if !unit(f) => {
                    return Some(format!(
                        "vaccinate fraction {f} is out of range; allowed: 0 to 1"
                    ));
                }
                (None, Some(r)) if !unit(r) => {
                    return Some(format!(
                        "vaccinate rate_per_s {r} is out of range; allowed: 0 to 1 \
                         (a probability per second)"
                    ));
                }
                _ => {}
            }
            if !unit(v.efficacy) {
                return Some(format!(
                    "vaccinate efficacy {} is out of range; allowed: 0 to 1",
                    v.efficacy
                ));
            }
        }
        if let Some(i) = &self.isolate {
            if !unit(i.detect_per_s) {
                return Some(format!(
                    "isolate detect_per_s {} is out of range; allowed: 0 to 1 (a probability \
                     per second)",
                    i.detect_per_s
                ));
            }
            if !time(i.delay) {
                return Some(format!("isolate delay {} must be a time ≥ 0 s", i.delay));
            }
        }
        if let Some(i) = &self.import
            && i.count == 0
        {
            return Some("import count must be at least 1".into());
        }
        None
    }
}

impl Intervention {
    /// `config` with this intervention's `set` applied, every key together (so a lockdown may
    /// lower `min_speed` and `max_speed` at once), validated on the keys alone.
    pub fn applied_to(&self, config: &SimConfig) -> Result<SimConfig, String> {
        let mut next = SimConfig {
            interventions: Vec::new(),
            ..config.clone()
        };
        for (key, v) in &self.set {
            let Some(k) = keys::find(key) else {
                return Err(format!("set `{key}`: {}", keys::unknown(key)));
            };
            if k.spec.applies != Applies::Live {
                return Err(format!(
                    "set `{key}`: cannot change during a run (it applies {}); set a key that \
                     applies live",
                    if k.spec.applies == Applies::OnReset {
                        "when the run is reset"
                    } else {
                        "to headless runs as a whole"
                    }
                ));
            }
            keys::set(&mut next, key, &toml_value(v)).map_err(|m| format!("set `{key}`: {m}"))?;
        }
        if let Err(e) = next.validate("set") {
            return Err(match e {
                ConfigError::Key { key, message, .. } => {
                    let value = next.get(&key).map(|v| v.to_string()).unwrap_or_default();
                    if self.set.contains_key(&key) {
                        format!("set `{key}`: {message}")
                    } else {
                        format!(
                            "its `set` would leave `{key}` at {value}, which is then not allowed: \
                             {message}"
                        )
                    }
                }
                other => other.to_string(),
            });
        }
        next.interventions = config.interventions.clone();
        Ok(next)
    }

    /// What is wrong with its `set`, if anything.
    fn set_problem(&self, config: &SimConfig) -> Option<String> {
        self.applied_to(config).err()
    }
}

/// Checks every intervention of `config` (the first problem, as an error naming it).
pub fn validate(config: &SimConfig, origin: &str) -> Result<(), ConfigError> {
    for (i, iv) in config.interventions.iter().enumerate() {
        if !iv.name.is_empty() && config.interventions[..i].iter().any(|o| o.name == iv.name) {
            return Err(ConfigError::Intervention {
                origin: origin.to_string(),
                which: iv.label(i),
                message: "another intervention has this name; give each its own (paths like \
                          `interventions.<name>.at` need it)"
                    .into(),
            });
        }
        if let Some(message) = iv.problem(config) {
            return Err(ConfigError::Intervention {
                origin: origin.to_string(),
                which: iv.label(i),
                message,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
