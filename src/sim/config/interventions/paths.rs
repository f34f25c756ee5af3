//! The dotted paths `interventions.<name or index>.<field>` to an intervention's numbers, as
//! `--set`, sweeps and links use them. No systems live here.

use super::{Intervention, to_toml_value, toml_value};
use crate::sim::config::keys::nearest;
use crate::sim::config::value::Value;
use crate::sim::names::one_of;

/// The numbers of an intervention that `--set`, sweeps and links can reach as
/// `interventions.<name or index>.<field>`.
pub const FIELDS: [&str; 13] = [
    "enabled",
    "once",
    "at",
    "for",
    "duration",
    "when_value",
    "until_value",
    "vaccinate.fraction",
    "vaccinate.rate_per_s",
    "vaccinate.efficacy",
    "isolate.detect_per_s",
    "isolate.delay",
    "import.count",
];

/// Whether the intervention path `interventions.<which>.<field>` holds a whole number.
pub fn is_whole(path: &str) -> bool {
    path.starts_with("interventions.") && path.ends_with(".import.count")
}

/// Splits `interventions.<which>.<field>` into the intervention's position and the field.
fn locate<'a>(list: &[Intervention], path: &'a str) -> Result<(usize, &'a str), String> {
    let rest = path
        .strip_prefix("interventions.")
        .ok_or_else(|| format!("`{path}` is not an intervention's path"))?;
    let (which, field) = rest.split_once('.').ok_or_else(|| {
        format!(
            "name a field too: `interventions.<name or index>.<field>`, fields: {}",
            one_of(&FIELDS)
        )
    })?;
    let at = list
        .iter()
        .position(|iv| iv.name == which)
        .or_else(|| which.parse::<usize>().ok().filter(|&i| i < list.len()))
        .ok_or_else(|| {
            let names: Vec<String> = list
                .iter()
                .enumerate()
                .map(|(i, iv)| iv.display_name(i))
                .collect();
            if names.is_empty() {
                "the scenario has no interventions".to_string()
            } else {
                format!(
                    "no intervention `{which}`; the scenario has {} (or an index from 0)",
                    one_of(&names.iter().map(String::as_str).collect::<Vec<_>>())
                )
            }
        })?;
    Ok((at, field))
}

/// A mutable reference to a numeric field of an intervention (`None`: not one of
/// [`FIELDS`], or its action is absent).
fn field_mut<'a>(iv: &'a mut Intervention, field: &str) -> Result<&'a mut f64, String> {
    let absent = |what: &str| format!("it has no `{what}`; add one to the scenario first");
    match field {
        "at" => iv.at.as_mut().ok_or_else(|| absent("at")),
        "for" => Ok(&mut iv.hold),
        "duration" => iv.duration.as_mut().ok_or_else(|| absent("duration")),
        "when_value" => iv
            .when
            .as_mut()
            .map(|c| &mut c.value)
            .ok_or_else(|| absent("when")),
        "until_value" => iv
            .until
            .as_mut()
            .map(|c| &mut c.value)
            .ok_or_else(|| absent("until")),
        "vaccinate.fraction" => iv
            .vaccinate
            .as_mut()
            .and_then(|v| v.fraction.as_mut())
            .ok_or_else(|| absent("vaccinate.fraction")),
        "vaccinate.rate_per_s" => iv
            .vaccinate
            .as_mut()
            .and_then(|v| v.rate_per_s.as_mut())
            .ok_or_else(|| absent("vaccinate.rate_per_s")),
        "vaccinate.efficacy" => iv
            .vaccinate
            .as_mut()
            .map(|v| &mut v.efficacy)
            .ok_or_else(|| absent("vaccinate")),
        "isolate.detect_per_s" => iv
            .isolate
            .as_mut()
            .map(|v| &mut v.detect_per_s)
            .ok_or_else(|| absent("isolate")),
        "isolate.delay" => iv
            .isolate
            .as_mut()
            .map(|v| &mut v.delay)
            .ok_or_else(|| absent("isolate")),
        other => Err(match nearest(other, FIELDS) {
            Some(n) => format!("unknown field `{other}`; did you mean `{n}`?"),
            None => format!("unknown field `{other}`; use {}", one_of(&FIELDS)),
        }),
    }
}

/// The value at `interventions.<which>.<field>`.
pub fn get(list: &[Intervention], path: &str) -> Result<Value, String> {
    let (at, field) = locate(list, path)?;
    let mut iv = list[at].clone();
    match field {
        "enabled" => return Ok(Value::Bool(iv.enabled)),
        "once" => return Ok(Value::Bool(iv.once)),
        _ => {}
    }
    if field == "import.count" {
        return iv
            .import
            .map(|i| Value::Int(i.count as i64))
            .ok_or_else(|| "it has no `import`; add one to the scenario first".into());
    }
    if let Some(key) = field.strip_prefix("set.") {
        return iv
            .set
            .get(key)
            .map(toml_value)
            .ok_or_else(|| format!("it sets no `{key}`"));
    }
    field_mut(&mut iv, field).map(|x| Value::Float(*x))
}

/// Sets `interventions.<which>.<field>` (checked by `validate` afterwards).
pub fn set(list: &mut [Intervention], path: &str, value: &Value) -> Result<(), String> {
    let (at, field) = locate(list, path)?;
    let iv = &mut list[at];
    if let "enabled" | "once" = field {
        let Value::Bool(b) = value else {
            return Err(format!("{} is not `true` or `false`", value.describe()));
        };
        *(if field == "once" {
            &mut iv.once
        } else {
            &mut iv.enabled
        }) = *b;
        return Ok(());
    }
    if let Some(key) = field.strip_prefix("set.") {
        iv.set.insert(key.to_string(), to_toml_value(value));
        return Ok(());
    }
    let x = value
        .as_f64()
        .ok_or_else(|| format!("{} is not a number", value.describe()))?;
    if field == "import.count" {
        let import = iv
            .import
            .as_mut()
            .ok_or("it has no `import`; add one to the scenario first")?;
        if x.fract() != 0.0 || !(0.0..=u32::MAX as f64).contains(&x) {
            return Err(format!("{} is not a whole number", value.describe()));
        }
        import.count = x as u32;
        return Ok(());
    }
    *field_mut(iv, field)? = x;
    Ok(())
}
