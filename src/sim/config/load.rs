//! Reading a configuration: a scenario file (TOML, laid over the defaults, so a file only
//! needs what it changes), then `--set KEY=VALUE` overrides (through the key paths of `keys`),
//! then validation — every problem reported as one line that names where, what, and the fix.
//! No systems live here.

use std::path::Path;

use super::SimConfig;
use super::keys::{self, Kind};
use super::value::Value;
use crate::sim::names::one_of;

/// A configuration problem, printed as one line that names where, what, and the fix.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    /// The scenario file could not be read.
    #[error(
        "cannot read scenario `{path}`: {reason} (give an existing TOML file, e.g. assets/scenarios/default.toml, or a shipped name such as `predators` or `matrix/B2_D2`)"
    )]
    Read {
        /// The path as given.
        path: String,
        /// The OS error.
        reason: String,
    },
    /// The file is not valid TOML.
    #[error("{origin}: not valid TOML: {message}")]
    Syntax {
        /// File name or `--set`.
        origin: String,
        /// The parser's message, on one line.
        message: String,
    },
    /// A `--set` argument is not `KEY=VALUE`.
    #[error(
        "--set `{arg}`: expected KEY=VALUE with a dotted key, e.g. --set swarms.normal.count=500"
    )]
    SetSyntax {
        /// The argument as given.
        arg: String,
    },
    /// An intervention is incomplete or has a value that is not allowed.
    #[error("{origin}: {which}: {message}")]
    Intervention {
        /// File name or `--set`.
        origin: String,
        /// `interventions[0] "lockdown"`.
        which: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// A key is unknown, has the wrong type, or an out-of-range value.
    #[error("{origin}: `{key}`: {message}")]
    Key {
        /// File name or `--set`.
        origin: String,
        /// Dotted key.
        key: String,
        /// What is wrong and what is allowed.
        message: String,
    },
}

/// A parser's message on one line.
pub(super) fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('|') && *l != "^" && !l.starts_with("in `"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What a key of this kind takes, in a user's words.
fn wanted(kind: Kind) -> String {
    match kind {
        Kind::Float => "a number".into(),
        Kind::Int => "a whole number (0, 1, 2, …)".into(),
        Kind::Bool => "`true` or `false`".into(),
        Kind::Choice(names) => one_of(names),
    }
}

/// Serde's description of a value it found (`string "abc"`, `integer `3``) in a user's words.
fn found(serde_found: &str) -> String {
    let inner = |s: &str| s.trim_matches(['`', '"']).to_string();
    if let Some(s) = serde_found.strip_prefix("string ") {
        format!("`{}`", inner(s))
    } else if let Some(s) = serde_found.strip_prefix("integer ") {
        format!("the whole number {}", inner(s))
    } else if let Some(s) = serde_found.strip_prefix("floating point ") {
        format!("the number {}", inner(s))
    } else if let Some(s) = serde_found.strip_prefix("boolean ") {
        format!("`{}`", inner(s))
    } else {
        serde_found.to_string()
    }
}

/// A serde message about a value in a user's words ("invalid type: string "abc", expected
/// f64" → "`abc` is not a number"); other messages unchanged.
pub(super) fn user_words(message: &str) -> String {
    let m = one_line(message);
    let Some(rest) = m.strip_prefix("invalid type: ") else {
        return m;
    };
    let (what, wanted) = rest
        .split_once(", expected ")
        .unwrap_or((rest, "another type"));
    let wanted = match wanted {
        "f64" | "f32" => "a number",
        "u32" | "u64" | "i64" | "usize" => "a whole number (0, 1, 2, …)",
        "a boolean" => "`true` or `false`",
        w => w,
    };
    format!("{} is not {wanted}", found(what))
}

/// Turns serde's message about `key` into one that says what is allowed.
fn describe_serde_error(key: &str, message: &str) -> String {
    let m = one_line(message);
    if m.starts_with("unknown field ") {
        return keys::unknown(key);
    }
    if let Some(rest) = m.strip_prefix("unknown variant ") {
        let value = rest.split(',').next().unwrap_or(rest).trim_matches('`');
        if let Some(Kind::Choice(names)) = keys::find(key).map(|k| k.kind) {
            return match keys::nearest(value, names.iter().copied()) {
                Some(n) => format!("unknown value `{value}`; did you mean `{n}`?"),
                None => format!("unknown value `{value}`; expected {}", one_of(names)),
            };
        }
        return format!("unknown value {rest}");
    }
    if let (Some(rest), Some(k)) = (m.strip_prefix("invalid type: "), keys::find(key)) {
        let what = rest.split(", expected").next().unwrap_or(rest);
        return format!("{} is not {}", found(what), wanted(k.kind));
    }
    m
}

/// The shipped-scenario name a path may stand for: `predators`, `matrix/B2_D2.toml`,
/// `assets/scenarios/sir.toml` → `predators`, `matrix/B2_D2`, `sir`.
fn shipped_name(p: &Path) -> String {
    let s = p.to_string_lossy().replace('\\', "/");
    let s = s.trim_end_matches(".toml");
    s.rsplit_once("scenarios/")
        .map_or(s, |(_, rest)| rest)
        .to_string()
}

/// A serde error inside `[[interventions]]` as one line naming the intervention (`None` for
/// errors elsewhere).
fn intervention_error(
    table: &toml::Value,
    path: &str,
    message: &str,
    origin: &str,
) -> Option<ConfigError> {
    if path == "interventions" {
        return Some(ConfigError::Key {
            origin: origin.to_string(),
            key: path.to_string(),
            message: "write each intervention as `[[interventions]]` (two brackets: an entry of a \
                      list), not `[interventions]`"
                .into(),
        });
    }
    let rest = path.strip_prefix("interventions[")?;
    let (index, field) = rest.split_once(']')?;
    let index: usize = index.parse().ok()?;
    let entry = table.get("interventions")?.get(index)?;
    let name = entry
        .get("name")
        .and_then(|n| n.as_str())
        .unwrap_or_default();
    let which = super::Intervention {
        name: name.to_string(),
        ..Default::default()
    }
    .label(index);
    let field = field.trim_start_matches('.');
    let m = one_line(message);
    let message = if let Some(rest) = m.strip_prefix("unknown field ") {
        let bad = rest.split(',').next().unwrap_or(rest).trim_matches('`');
        // serde lists the fields as "expected one of `a`, `b`" or "expected `a` or `b`".
        let known = rest
            .split_once("expected one of ")
            .or_else(|| rest.split_once("expected "))
            .map(|(_, list)| {
                list.replace(" or ", ",")
                    .split(',')
                    .map(|n| n.trim().trim_matches('`').to_string())
                    .filter(|n| !n.is_empty())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        match keys::nearest(bad, known.iter().map(String::as_str)) {
            Some(n) => format!("unknown key `{bad}`; did you mean `{n}`?"),
            None => format!(
                "unknown key `{bad}`; allowed: {}",
                one_of(&known.iter().map(String::as_str).collect::<Vec<_>>())
            ),
        }
    } else if let Some(rest) = m.strip_prefix("unknown variant ") {
        format!("`{field}`: unknown value {rest}")
    } else if m.starts_with("invalid type: ") {
        format!("`{field}`: {}", user_words(&m))
    } else if field.is_empty() {
        m
    } else {
        format!("`{field}`: {m}")
    };
    Some(ConfigError::Intervention {
        origin: origin.to_string(),
        which,
        message,
    })
}

/// Splits `KEY=VALUE`.
fn parse_set(arg: &str) -> Result<(String, Value), ConfigError> {
    let (key, raw) = arg
        .split_once('=')
        .ok_or_else(|| ConfigError::SetSyntax { arg: arg.into() })?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(|part| part.trim().is_empty()) {
        return Err(ConfigError::SetSyntax { arg: arg.into() });
    }
    Ok((key.to_string(), Value::parse(raw)))
}

/// Overlays `top` on `base`, table by table; keys only in `top` are kept (and later rejected
/// by `deny_unknown_fields` if they are not real keys).
fn merge_values(base: &mut toml::Value, top: toml::Value) {
    match (base, top) {
        (toml::Value::Table(b), toml::Value::Table(t)) => {
            for (k, v) in t {
                match b.get_mut(&k) {
                    Some(slot) => merge_values(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

impl SimConfig {
    /// Reads a scenario file (if any), applies `--set` overrides, and validates the result. A
    /// path that is not a file may name a shipped scenario (`predators`, `matrix/B2_D2`), as a
    /// browser link does.
    pub fn load(path: Option<&Path>, sets: &[String]) -> Result<Self, ConfigError> {
        let (origin, text) = match path {
            Some(p) if !p.exists() && super::shipped::shipped(&shipped_name(p)).is_some() => {
                let name = shipped_name(p);
                let text = super::shipped::shipped(&name).unwrap_or_default();
                (format!("{name}.toml"), text.to_string())
            }
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| {
                    let names = super::shipped::SHIPPED.map(|s| s.0);
                    let reason = match keys::nearest(&shipped_name(p), names) {
                        Some(n) if !p.exists() => format!("{e}; did you mean `{n}`?"),
                        _ => e.to_string(),
                    };
                    ConfigError::Read {
                        path: p.display().to_string(),
                        reason,
                    }
                })?;
                (p.display().to_string(), text)
            }
            None => ("built-in defaults".to_string(), String::new()),
        };
        Self::from_toml_str(&text, &origin, sets)
    }

    /// Parses TOML text (named `origin` in errors), applies overrides, validates.
    pub fn from_toml_str(text: &str, origin: &str, sets: &[String]) -> Result<Self, ConfigError> {
        let file: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Syntax {
                origin: origin.to_string(),
                message: one_line(&e.to_string()),
            })?;
        // Check the file on its own first so that its mistakes are blamed on it, not on --set.
        let mut config = Self::from_table(file, origin)?;
        if sets.is_empty() {
            return Ok(config);
        }
        for arg in sets {
            let (key, value) = parse_set(arg)?;
            keys::set(&mut config, &key, &value).map_err(|message| ConfigError::Key {
                origin: "--set".into(),
                key: key.clone(),
                message,
            })?;
        }
        config.validate("--set")?;
        Ok(config)
    }

    fn from_table(table: toml::Table, origin: &str) -> Result<Self, ConfigError> {
        let defaults = toml::Table::try_from(SimConfig::default()).expect("defaults serialise");
        let mut merged = toml::Value::Table(defaults);
        merge_values(&mut merged, toml::Value::Table(table));
        let config: SimConfig = serde_path_to_error::deserialize(merged.clone()).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.inner().to_string();
            intervention_error(&merged, &path, &inner, origin).unwrap_or(ConfigError::Key {
                origin: origin.to_string(),
                message: describe_serde_error(&path, &inner),
                key: path,
            })
        })?;
        config.validate(origin)?;
        Ok(config)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sim::config::{DoctorBehavior, SteeringModel};
    use crate::sim::space::Boundary;

    /// The (origin, key, message) of the key error a scenario text and `--set`s give.
    pub(crate) fn key_error(text: &str, sets: &[&str]) -> (String, String, String) {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        match SimConfig::from_toml_str(text, "test.toml", &sets) {
            Err(ConfigError::Key {
                origin,
                key,
                message,
            }) => (origin, key, message),
            other => panic!("expected a key error, got {other:?}"),
        }
    }

    #[test]
    fn empty_file_gives_spec_defaults() {
        let c = SimConfig::from_toml_str("", "x", &[]).unwrap();
        assert_eq!(c, SimConfig::default());
        assert_eq!(c.swarms.normal.count, 200);
        assert_eq!(c.swarms.doctor.count, 10);
        assert_eq!(c.swarms.normal.max_force, 180.0);
        assert_eq!(c.epidemic.t_immunity, f64::INFINITY);
    }

    #[test]
    fn partial_swarm_table_keeps_that_swarms_count() {
        let c = SimConfig::from_toml_str("[swarms.doctor]\nmax_speed = 200.0\n", "x", &[]).unwrap();
        assert_eq!(c.swarms.doctor.count, 10);
        assert_eq!(c.swarms.doctor.max_speed, 200.0);
        assert_eq!(c.swarms.normal.max_speed, 180.0);
    }

    #[test]
    fn integers_are_accepted_for_float_keys() {
        let c = SimConfig::from_toml_str("[world]\nwidth = 800\n", "x", &[]).unwrap();
        assert_eq!(c.world.width, 800.0);
    }

    #[test]
    fn round_trip_through_toml_is_exact() {
        let mut c = SimConfig::default();
        c.seed = 7;
        c.epidemic.t_immunity = 12.5;
        c.steering_model = SteeringModel::Adams;
        let back = SimConfig::from_toml_str(&c.to_toml(), "x", &[]).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn unknown_key_is_named_with_the_nearest_real_one() {
        let (origin, key, message) = key_error("[swarms.normal]\ncuont = 3\n", &[]);
        assert_eq!(origin, "test.toml");
        assert_eq!(key, "swarms.normal.cuont");
        assert_eq!(message, "unknown key `cuont`; did you mean `count`?");
        let (_, key, message) = key_error("[epidemic]\nt_deth = 3\n", &[]);
        assert_eq!(key, "epidemic.t_deth");
        assert_eq!(message, "unknown key `t_deth`; did you mean `t_death`?");
        // Nothing near: the section's keys are listed.
        let (_, _, message) = key_error("[doctors]\nzzzzzzzzz = 3\n", &[]);
        assert!(
            message.contains("`behavior`, `seek_radius` or `seek_weight`"),
            "{message}"
        );
    }

    #[test]
    fn unknown_section_is_named() {
        let (key, message) = {
            let (_, k, m) = key_error("[wrold]\nwidth = 3\n", &[]);
            (k, m)
        };
        assert_eq!(key, "wrold");
        assert!(message.contains("did you mean `world`"), "{message}");
    }

    #[test]
    fn wrong_type_is_named_in_a_users_words() {
        let (_, key, message) = key_error("[swarms.normal]\ncount = \"many\"\n", &[]);
        assert_eq!(key, "swarms.normal.count");
        assert_eq!(message, "`many` is not a whole number (0, 1, 2, …)");
        let (_, _, message) = key_error("", &["swarms.normal.count=abc"]);
        assert_eq!(message, "`abc` is not a whole number (0, 1, 2, …)");
        let (_, _, message) = key_error("[world]\nwidth = true\n", &[]);
        assert_eq!(message, "`true` is not a number");
    }

    #[test]
    fn unknown_enum_value_lists_choices_or_the_near_one() {
        let (_, key, message) = key_error("steering_model = \"reynolds\"\n", &[]);
        assert_eq!(key, "steering_model");
        assert!(
            message.contains("`shiffman`") && message.contains("`adams`"),
            "{message}"
        );
        let (_, _, message) = key_error("[doctors]\nbehavior = \"seek_neares\"\n", &[]);
        assert_eq!(
            message,
            "unknown value `seek_neares`; did you mean `seek_nearest`?"
        );
    }

    #[test]
    fn missing_file_error_names_path_and_fix() {
        let err = SimConfig::load(Some(Path::new("/nonexistent/x.toml")), &[]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("/nonexistent/x.toml") && text.contains("assets/scenarios"),
            "{text}"
        );
    }

    #[test]
    fn set_overrides_dotted_keys_with_typed_values() {
        let sets = [
            "swarms.normal.count=500".to_string(),
            "steering_model=hybrid".to_string(),
            "world.boundary=\"bounce\"".to_string(),
            "epidemic.cross_swarm_infection=true".to_string(),
            "doctors.behavior=seek_nearest".to_string(),
        ];
        let c = SimConfig::from_toml_str("", "x", &sets).unwrap();
        assert_eq!(c.swarms.normal.count, 500);
        assert_eq!(c.steering_model, SteeringModel::Hybrid);
        assert_eq!(c.world.boundary, Boundary::Bounce);
        assert!(c.epidemic.cross_swarm_infection);
        assert_eq!(c.doctors.behavior, DoctorBehavior::SeekNearest);
    }

    #[test]
    fn bad_set_is_blamed_on_set() {
        let (origin, key, _) = key_error("", &["swarms.normal.speed=3"]);
        assert_eq!(origin, "--set");
        assert_eq!(key, "swarms.normal.speed");
        let (origin, key, _) = key_error("", &["swarms.normal.count=-3"]);
        assert_eq!(
            (origin.as_str(), key.as_str()),
            ("--set", "swarms.normal.count")
        );
        assert!(matches!(
            SimConfig::from_toml_str("", "x", &["novalue".into()]),
            Err(ConfigError::SetSyntax { .. })
        ));
    }

    #[test]
    fn syntax_error_is_one_line() {
        let err = SimConfig::from_toml_str("seed = = 3", "bad.toml", &[]).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("bad.toml: not valid TOML"), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }
}
