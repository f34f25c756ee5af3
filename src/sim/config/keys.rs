//! Every config key, found by walking [`SimConfig`]'s reflected type: each leaf field with a
//! [`Spec`] attribute is a key, named by its dotted path (`swarms.normal.max_speed`), described
//! by its `///` comment. Keys are read and written through `bevy_reflect`, at the place the walk
//! found (the field's index in each struct on the way down): `--set`, the panel, links, sweeps
//! and interventions go through [`get`] and [`set`] (by name), validation through
//! [`Key::value`], and all of them through the one description on the field. No systems live
//! here.

use std::any::TypeId;
use std::sync::OnceLock;

use bevy::reflect::{
    DynamicEnum, DynamicVariant, PartialReflect, ReflectMut, ReflectRef, TypeInfo, Typed,
};

use super::SimConfig;
use super::spec::{Bound, MAX_RADIUS, Spec, Upper};
use super::value::Value;
use crate::sim::names::{names_of, one_of};
use crate::sim::space::Boundary;

/// What kind of value a key holds (from the field's type).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A number (`f32`, `f64`); TOML integers are accepted.
    Float,
    /// A whole number (`u32`, `u64`).
    Int,
    /// `true` or `false`.
    Bool,
    /// One of these names (an enum).
    Choice(&'static [&'static str]),
}

/// One config key.
#[derive(Clone, Debug)]
pub struct Key {
    /// Dotted path as in a scenario file: `swarms.normal.max_speed`.
    pub key: String,
    /// The same with `*` for a section that repeats per swarm: `swarms.*.max_speed`.
    pub pattern: String,
    /// The section's path (`swarms.normal`; empty at the top).
    pub section: String,
    /// The field's name.
    pub name: &'static str,
    /// The field's `///` comment, on one line.
    pub doc: String,
    /// What it allows and how it is shown.
    pub spec: Spec,
    /// What kind of value it holds.
    pub kind: Kind,
    /// The field's place: its index in each struct on the way down from [`SimConfig`]
    /// (followed by [`Key::value`] and by [`set`], without parsing `key` or looking up a field
    /// by name).
    fields: Vec<usize>,
}

/// Every key of the config, in scenario-file order.
pub fn all() -> &'static [Key] {
    static KEYS: OnceLock<Vec<Key>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut out = Vec::new();
        walk(SimConfig::type_info(), "", "", &[], &mut out);
        out
    })
}

/// The key named `key`, if it is one.
pub fn find(key: &str) -> Option<&'static Key> {
    all().iter().find(|k| k.key == key)
}

/// Joins a path and a field name.
fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Collects the keys under a struct type: leaf fields with a `Spec`, and the fields of nested
/// structs. A struct whose fields all share one struct type (the swarms) repeats per field: its
/// keys get `*` in their pattern.
fn walk(info: &'static TypeInfo, path: &str, pattern: &str, fields: &[usize], out: &mut Vec<Key>) {
    let TypeInfo::Struct(s) = info else { return };
    let repeats = s.field_len() > 1
        && s.iter().all(|f| {
            f.type_id() == s.field_at(0).map_or(TypeId::of::<()>(), |f0| f0.type_id())
                && matches!(f.type_info(), Some(TypeInfo::Struct(_)))
        });
    for (index, field) in s.iter().enumerate() {
        let Some(field_info) = field.type_info() else {
            continue;
        };
        let key = join(path, field.name());
        let pat = join(pattern, if repeats { "*" } else { field.name() });
        let fields = [fields, &[index]].concat();
        if let Some(spec) = field.get_attribute::<Spec>() {
            out.push(Key {
                key,
                pattern: pat,
                section: path.to_string(),
                name: field.name(),
                doc: one_line(field.docs().unwrap_or_default()),
                spec: *spec,
                kind: kind_of(field_info),
                fields,
            });
        } else if matches!(field_info, TypeInfo::Struct(_)) {
            walk(field_info, &key, &pat, &fields, out);
        }
    }
}

/// A doc comment on one line.
fn one_line(doc: &str) -> String {
    doc.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn kind_of(info: &'static TypeInfo) -> Kind {
    let id = info.type_id();
    if id == TypeId::of::<bool>() {
        Kind::Bool
    } else if id == TypeId::of::<u32>() || id == TypeId::of::<u64>() {
        Kind::Int
    } else if matches!(info, TypeInfo::Enum(_)) {
        Kind::Choice(names_of(info))
    } else {
        Kind::Float
    }
}

/// The edit distance between two words (insertions, deletions, substitutions, swaps of
/// neighbours count one each).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = (a[i - 1] != b[j - 1]) as usize;
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// The candidate closest to `word` if it is close enough to be a slip of the keyboard (at most
/// a third of its letters wrong).
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (distance(word, c), c))
        .filter(|&(d, c)| d > 0 && d * 3 <= word.chars().count().max(c.chars().count()))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// The names directly under the section `section` (empty: the top): its keys and its
/// sub-sections, in file order.
fn names_under(section: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for k in all() {
        let name = if k.section == section {
            Some(k.name)
        } else {
            let rest = if section.is_empty() {
                Some(k.section.as_str())
            } else {
                k.section
                    .strip_prefix(section)
                    .and_then(|r| r.strip_prefix('.'))
            };
            rest.and_then(|r| r.split('.').next())
        };
        if let Some(n) = name
            && !out.contains(&n)
        {
            out.push(n);
        }
    }
    out
}

/// Why `key` is not a key, with the nearest real name under its section: "unknown key
/// `cuont`; did you mean `count`?" (the section's names are listed when nothing is near).
pub fn unknown(key: &str) -> String {
    if let Some(example) = all()
        .iter()
        .find(|k| k.section == key || k.section.starts_with(&format!("{key}.")))
    {
        return format!(
            "`{key}` is a section, not a key; set one of its keys, e.g. `{}`",
            example.key
        );
    }
    let (section, leaf) = key.rsplit_once('.').unwrap_or(("", key));
    let siblings = names_under(section);
    if siblings.is_empty() {
        // The section itself is wrong: name the nearest one above.
        return unknown(section);
    }
    let what = if section.is_empty() {
        "key or section"
    } else {
        "key"
    };
    match nearest(leaf, siblings.iter().copied()) {
        Some(n) => format!("unknown {what} `{leaf}`; did you mean `{n}`?"),
        None if section.is_empty() => {
            format!(
                "unknown {what} `{leaf}`; the top level has {}",
                one_of(&siblings)
            )
        }
        None => format!(
            "unknown {what} `{leaf}`; `{section}` has {}",
            one_of(&siblings)
        ),
    }
}

/// The value of the dotted `key` in `config`.
pub fn get(config: &SimConfig, key: &str) -> Result<Value, String> {
    if key.starts_with("interventions.") {
        return super::interventions::get(&config.interventions, key);
    }
    if let Some(path) = key.strip_prefix("extensions.") {
        let mut at = config
            .extensions
            .get(path.split('.').next().unwrap_or_default());
        for part in path.split('.').skip(1) {
            at = at.and_then(|v| v.get(part));
        }
        return at
            .map(super::interventions::toml_value)
            .ok_or_else(|| format!("the scenario sets no `{key}`"));
    }
    let k = find(key).ok_or_else(|| unknown(key))?;
    k.value(config)
        .ok_or_else(|| format!("`{key}` holds a value of another type"))
}

fn read(field: &dyn PartialReflect, kind: Kind) -> Option<Value> {
    if let Some(x) = field.try_downcast_ref::<f32>() {
        return Some(Value::Float32(*x));
    }
    if let Some(x) = field.try_downcast_ref::<f64>() {
        return Some(Value::Float(*x));
    }
    if let Some(x) = field.try_downcast_ref::<u32>() {
        return Some(Value::Int(*x as i64));
    }
    if let Some(x) = field.try_downcast_ref::<u64>() {
        return Some(Value::Int(i64::try_from(*x).unwrap_or(i64::MAX)));
    }
    if let Some(b) = field.try_downcast_ref::<bool>() {
        return Some(Value::Bool(*b));
    }
    match (field.reflect_ref(), kind) {
        (ReflectRef::Enum(e), Kind::Choice(names)) => {
            Some(Value::Name(names[e.variant_index()].to_string()))
        }
        _ => None,
    }
}

/// Sets the dotted `key` of `config` to `value` (not yet validated against its range; see
/// `SimConfig::validate`). The message says what the key takes, in a user's words.
pub fn set(config: &mut SimConfig, key: &str, value: &Value) -> Result<(), String> {
    if key.starts_with("interventions.") {
        return super::interventions::set(&mut config.interventions, key, value);
    }
    if let Some(path) = key.strip_prefix("extensions.") {
        // Into the extension's section, creating tables on the way; its check validates it.
        let parts: Vec<&str> = path.split('.').collect();
        let (last, tables) = parts.split_last().ok_or("name a section and a key")?;
        let mut table = &mut config.extensions;
        for part in tables {
            let entry = table
                .entry(part.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            table = entry
                .as_table_mut()
                .ok_or_else(|| format!("`{part}` is a value, not a section"))?;
        }
        table.insert(last.to_string(), super::interventions::to_toml_value(value));
        return Ok(());
    }
    let k = find(key).ok_or_else(|| unknown(key))?;
    let field = k
        .field_mut(config)
        .ok_or_else(|| format!("`{key}` is not a field of the config"))?;
    write(field, k, value)
}

fn write(field: &mut dyn PartialReflect, k: &Key, value: &Value) -> Result<(), String> {
    let wrong = |wanted: &str| format!("{} is not {wanted}", value.describe());
    match k.kind {
        Kind::Float => {
            let x = value.as_f64().ok_or_else(|| wrong("a number"))?;
            if let Some(f) = field.try_downcast_mut::<f32>() {
                *f = x as f32;
            } else if let Some(f) = field.try_downcast_mut::<f64>() {
                *f = x;
            }
        }
        Kind::Int => {
            let whole = "a whole number (0, 1, 2, …)";
            let x = value.as_f64().ok_or_else(|| wrong(whole))?;
            if x.fract() != 0.0 || x < 0.0 || !x.is_finite() {
                return Err(wrong(whole));
            }
            if let Some(f) = field.try_downcast_mut::<u32>() {
                *f = u32::try_from(x as u64).map_err(|_| wrong("a whole number below 2³²"))?;
            } else if let Some(f) = field.try_downcast_mut::<u64>() {
                *f = x as u64;
            }
        }
        Kind::Bool => {
            let Value::Bool(b) = value else {
                return Err(wrong("`true` or `false`"));
            };
            if let Some(f) = field.try_downcast_mut::<bool>() {
                *f = *b;
            }
        }
        Kind::Choice(names) => {
            let choices = one_of(names);
            let name = match value {
                Value::Name(n) => n.trim(),
                _ => return Err(wrong(&choices)),
            };
            let Some(at) = names.iter().position(|n| *n == name) else {
                return Err(format!("unknown value `{name}`; expected {choices}"));
            };
            let ReflectMut::Enum(e) = field.reflect_mut() else {
                return Err(format!("`{}` is not a choice", k.key));
            };
            let variant = e
                .get_represented_enum_info()
                .and_then(|info| info.variant_at(at))
                .map(|v| v.name())
                .ok_or_else(|| format!("unknown value `{name}`"))?;
            e.try_apply(&DynamicEnum::new(variant, DynamicVariant::Unit))
                .map_err(|err| err.to_string())?;
        }
    }
    Ok(())
}

impl Key {
    /// This key's value in `config` (`None` if the place is not a field, or the field holds a
    /// type no key has: neither happens with the keys [`all`] lists).
    pub fn value(&self, config: &SimConfig) -> Option<Value> {
        let mut field: &dyn PartialReflect = config.as_partial_reflect();
        for &i in &self.fields {
            let ReflectRef::Struct(s) = field.reflect_ref() else {
                return None;
            };
            field = s.field_at(i)?;
        }
        read(field, self.kind)
    }

    /// This key's field in `config`, to be written.
    fn field_mut<'a>(&self, config: &'a mut SimConfig) -> Option<&'a mut dyn PartialReflect> {
        let mut field: &mut dyn PartialReflect = config.as_partial_reflect_mut();
        for &i in &self.fields {
            let ReflectMut::Struct(s) = field.reflect_mut() else {
                return None;
            };
            field = s.field_at_mut(i)?;
        }
        Some(field)
    }

    /// The label shown for this key.
    pub fn label(&self) -> String {
        if self.spec.label.is_empty() {
            self.name.replace('_', " ")
        } else {
            self.spec.label.to_string()
        }
    }

    /// Whether the half-world rule applies to this key in `config`.
    pub fn half_world_applies(&self, config: &SimConfig) -> bool {
        self.spec.upper == Upper::HalfWorld
            && config.world.boundary == Boundary::Wrap
            && self.spec.active.is_none_or(|on| on(config))
    }

    /// The upper bound of this key in `config`.
    pub fn upper_bound(&self, config: &SimConfig) -> Bound {
        match self.spec.upper {
            Upper::Fixed(b) => b,
            Upper::Sibling(other) => {
                let sibling = join(&self.section, other);
                Bound::Closed(
                    get(config, &sibling)
                        .ok()
                        .and_then(|v| v.as_f64())
                        .unwrap_or(f64::INFINITY),
                )
            }
            Upper::HalfWorld if self.half_world_applies(config) => {
                Bound::Open(0.5 * config.world.width.min(config.world.height) as f64)
            }
            Upper::HalfWorld => Bound::Closed(MAX_RADIUS),
        }
    }

    /// What the allowed values are, in words (for errors and the reference).
    pub fn allowed(&self, lower: Bound, upper: Bound) -> String {
        let unit = self.spec.unit;
        if self.spec.infinite_ok {
            return format!("a time > 0 {unit}, or inf for never");
        }
        let lo = match lower {
            Bound::Open(b) => format!("> {}", number(b)),
            Bound::Closed(b) => format!("≥ {}", number(b)),
        };
        let hi = match upper {
            Bound::Open(b) => format!("< {}", number(b)),
            Bound::Closed(b) => format!("≤ {}", number(b)),
        };
        let rule = match self.spec.upper {
            Upper::Sibling(other) => format!(" (at most {other})"),
            Upper::HalfWorld => " (below half the smaller world side on a torus)".to_string(),
            Upper::Fixed(_) => String::new(),
        };
        if unit.is_empty() && rule.is_empty() {
            format!("{lo} and {hi}")
        } else {
            format!("{lo} and {hi}, {unit}{rule}")
        }
    }
}

/// A bound as people write it: `180`, `0.5`, and `1e9` rather than `1000000000`.
pub fn number(b: f64) -> String {
    if b.abs() >= 1e6 && b.is_finite() {
        format!("{b:e}")
    } else {
        format!("{b}")
    }
}

#[cfg(test)]
mod tests;
