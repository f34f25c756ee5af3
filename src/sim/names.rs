//! Enum names as they are written in scenario files, CSV columns and on the command line
//! (`seek_nearest`, `kdtree`), derived once from each enum's reflected variant names — the same
//! snake_case rule serde's `rename_all = "snake_case"` applies, so a file, `--set`, the panel
//! and every parser agree by construction (a test checks serde against them). No systems live
//! here.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use bevy::reflect::{DynamicEnum, DynamicVariant, Enum, FromReflect, TypeInfo, Typed};

/// `SeekNearest` → `seek_nearest`: an underscore before every capital but the first, all lower
/// case (serde's `snake_case`).
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (k, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if k > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

type Cache = RwLock<HashMap<TypeId, &'static [&'static str]>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The names of an enum's variants, in declaration order (empty for a type that is not an
/// enum).
pub fn names_of(info: &'static TypeInfo) -> &'static [&'static str] {
    let id = info.type_id();
    if let Some(names) = cache().read().expect("names cache").get(&id) {
        return names;
    }
    let names: Vec<&'static str> = match info {
        TypeInfo::Enum(e) => e
            .variant_names()
            .iter()
            .map(|v| &*Box::leak(snake_case(v).into_boxed_str()))
            .collect(),
        _ => Vec::new(),
    };
    let names: &'static [&'static str] = Box::leak(names.into_boxed_slice());
    cache().write().expect("names cache").insert(id, names);
    names
}

/// The names of `T`'s variants, in declaration order.
pub fn names<T: Typed>() -> &'static [&'static str] {
    names_of(T::type_info())
}

/// The name of one value of an enum.
pub fn name_of<T: Enum + Typed>(value: &T) -> &'static str {
    names::<T>()[value.variant_index()]
}

/// The unit variant of `T` named `name`, if there is one.
pub fn parse<T: Typed + FromReflect>(name: &str) -> Option<T> {
    let TypeInfo::Enum(info) = T::type_info() else {
        return None;
    };
    let k = names::<T>().iter().position(|n| *n == name.trim())?;
    let dynamic = DynamicEnum::new(info.variant_at(k)?.name(), DynamicVariant::Unit);
    T::from_reflect(&dynamic)
}

/// `a`, `b` or `c`: the names for a message.
pub fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("`{one}`"),
        [rest @ .., last] => format!(
            "{} or `{last}`",
            rest.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::reflect::Reflect;

    #[derive(Reflect, Debug, PartialEq, serde::Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Plain,
        SeekNearest,
        AbC,
    }

    #[test]
    fn names_are_serdes_snake_case_and_parse_back() {
        assert_eq!(names::<Kind>(), ["plain", "seek_nearest", "ab_c"]);
        for v in [Kind::Plain, Kind::SeekNearest, Kind::AbC] {
            let serde = serde_json::to_value(&v).unwrap();
            assert_eq!(serde.as_str(), Some(name_of(&v)));
            assert_eq!(parse::<Kind>(name_of(&v)), Some(v));
        }
        assert_eq!(parse::<Kind>("nope"), None);
        assert_eq!(one_of(&["a", "b", "c"]), "`a`, `b` or `c`");
        assert_eq!(one_of(&["a"]), "`a`");
    }
}
