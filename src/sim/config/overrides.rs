//! Dotted keys: reading and setting `a.b.c` in a config table, parsing `--set KEY=VALUE`,
//! overlaying a scenario on the defaults, and turning serde's and TOML's messages into one
//! line that says what is allowed. No systems live here.

use super::ConfigError;

/// Turns serde's messages into ones that also say what is allowed.
pub(super) fn describe_serde_error(message: &str) -> String {
    let m = one_line(message);
    if let Some(rest) = m.strip_prefix("unknown field ") {
        return format!("unknown key {rest}; remove it or fix its spelling");
    }
    if let Some(rest) = m.strip_prefix("unknown variant ") {
        return format!("unknown value {rest}");
    }
    m
}

pub(super) fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('|') && *l != "^" && !l.starts_with("in `"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The value at a dotted key of a config table.
pub fn table_get<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let mut parts = key.split('.').peekable();
    let mut node = table;
    while let Some(part) = parts.next() {
        let v = node.get(part)?;
        if parts.peek().is_none() {
            return Some(v);
        }
        node = v.as_table()?;
    }
    None
}

/// Splits `KEY=VALUE`; the value is TOML (`1.5`, `true`, `"x"`) or, failing that, a bare string.
pub(super) fn parse_set(arg: &str) -> Result<(String, toml::Value), ConfigError> {
    let (key, raw) = arg
        .split_once('=')
        .ok_or_else(|| ConfigError::SetSyntax { arg: arg.into() })?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(|part| part.trim().is_empty()) {
        return Err(ConfigError::SetSyntax { arg: arg.into() });
    }
    let raw = raw.trim();
    let value = format!("v = {raw}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    Ok((key.to_string(), value))
}

/// Sets `a.b.c = value` in a table, creating intermediate tables.
pub(super) fn insert_dotted(
    table: &mut toml::Table,
    key: &str,
    value: toml::Value,
) -> Result<(), String> {
    let mut parts: Vec<&str> = key.split('.').map(str::trim).collect();
    let last = parts.pop().expect("split yields one part");
    let mut cur = table;
    for part in parts {
        let entry = cur
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = entry
            .as_table_mut()
            .ok_or_else(|| format!("`{part}` is a value, not a section"))?;
    }
    cur.insert(last.to_string(), value);
    Ok(())
}

/// Overlays `top` on `base`, table by table; keys only in `top` are kept (and later rejected
/// by `deny_unknown_fields` if they are not real keys).
pub(super) fn merge_values(base: &mut toml::Value, top: toml::Value) {
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

#[cfg(test)]
mod tests {
    use super::super::tests::key_error;
    use super::super::*;

    #[test]
    fn set_overrides_dotted_keys_with_typed_values() {
        let sets = [
            "swarms.normal.count=500".to_string(),
            "steering_model=hybrid".to_string(),
            "world.boundary=\"bounce\"".to_string(),
            "epidemic.cross_swarm_infection=true".to_string(),
        ];
        let c = SimConfig::from_toml_str("", "x", &sets).unwrap();
        assert_eq!(c.swarms.normal.count, 500);
        assert_eq!(c.steering_model, SteeringModel::Hybrid);
        assert_eq!(c.world.boundary, Boundary::Bounce);
        assert!(c.epidemic.cross_swarm_infection);
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
