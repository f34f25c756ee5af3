//! Tests of the key list walked from the config's type, and of reading and writing keys by
//! dotted path.

use super::*;
use crate::sim::config::DoctorBehavior;

/// Every scalar key of the config's TOML form, dotted.
fn toml_keys(table: &toml::Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in table {
        let key = join(prefix, k);
        match v.as_table() {
            Some(t) => toml_keys(t, &key, out),
            None => out.push(key),
        }
    }
}

#[test]
fn every_field_of_the_file_is_one_key_with_a_doc_and_nothing_else_is() {
    let table = toml::Table::try_from(SimConfig::default()).unwrap();
    let mut file_keys = Vec::new();
    toml_keys(&table, "", &mut file_keys);
    let keys: Vec<&str> = all().iter().map(|k| k.key.as_str()).collect();
    assert!(keys.len() > 60, "{} keys", keys.len());
    assert_eq!(keys, file_keys, "same keys, in file order");
    for k in all() {
        assert!(!k.doc.is_empty(), "{} has no /// doc", k.key);
    }
    assert_eq!(
        find("swarms.doctor.max_speed").unwrap().pattern,
        "swarms.*.max_speed"
    );
    assert_eq!(find("epidemic.p_cure").unwrap().pattern, "epidemic.p_cure");
    assert_eq!(find("epidemic.p_cure").unwrap().spec.unit, "per s");
    assert!(find("swarms.normal.cuont").is_none());
}

#[test]
fn every_default_sits_inside_its_slider_and_its_kind() {
    let config = SimConfig::default();
    for k in all() {
        let v = get(&config, &k.key).unwrap();
        match (k.kind, &v) {
            (Kind::Float, Value::Float(_) | Value::Float32(_)) => {
                let x = v.as_f64().unwrap();
                let (lo, hi) = k.spec.slider;
                assert!(lo <= hi, "{}", k.key);
                assert!(
                    x.is_infinite() && k.spec.infinite_ok || (lo..=hi).contains(&x),
                    "{} = {x} outside its slider {lo}..{hi}",
                    k.key
                );
            }
            (Kind::Int, Value::Int(_)) | (Kind::Bool, Value::Bool(_)) => {}
            (Kind::Choice(names), Value::Name(s)) => assert!(names.contains(&s.as_str())),
            (kind, v) => panic!("{}: described as {kind:?}, holds {v:?}", k.key),
        }
    }
}

#[test]
fn keys_are_read_and_written_by_path() {
    let mut c = SimConfig::default();
    set(&mut c, "swarms.doctor.max_speed", &Value::Float(200.0)).unwrap();
    assert_eq!(c.swarms.doctor.max_speed, 200.0);
    assert_eq!(
        get(&c, "swarms.doctor.max_speed"),
        Ok(Value::Float32(200.0))
    );
    set(
        &mut c,
        "doctors.behavior",
        &Value::Name("seek_centroid".into()),
    )
    .unwrap();
    assert_eq!(c.doctors.behavior, DoctorBehavior::SeekCentroid);
    assert_eq!(
        get(&c, "doctors.behavior"),
        Ok(Value::Name("seek_centroid".into()))
    );
    set(&mut c, "swarms.normal.count", &Value::Int(500)).unwrap();
    set(&mut c, "swarms.antivax.count", &Value::Float(30.0)).unwrap();
    assert_eq!((c.swarms.normal.count, c.swarms.antivax.count), (500, 30));
    set(&mut c, "epidemic.cross_swarm_infection", &Value::Bool(true)).unwrap();
    assert!(c.epidemic.cross_swarm_infection);
    set(&mut c, "seed", &Value::Int(7)).unwrap();
    assert_eq!(c.seed, 7);
}

/// The value at dotted `key` of a TOML table.
fn toml_at<'a>(table: &'a toml::Table, key: &str) -> &'a toml::Value {
    let (section, leaf) = key.rsplit_once('.').unwrap_or(("", key));
    let mut t = table;
    for part in section.split('.').filter(|p| !p.is_empty()) {
        t = t[part].as_table().unwrap();
    }
    &t[leaf]
}

#[test]
fn every_key_reads_and_writes_its_own_field() {
    // Each key set to a value of its own, then read back three ways: by the key, by its place
    // the walk kept, and from the file form (serde's output, not reflection), so a key that
    // reached another field would show (a number or flag key surely: a choice key gets the
    // last of its names, which may be its default).
    let mut c = SimConfig::default();
    let mut wanted = Vec::new();
    for (i, k) in all().iter().enumerate() {
        let v = match k.kind {
            Kind::Float => Value::Float(1000.0 + i as f64),
            Kind::Int => Value::Int(1000 + i as i64),
            Kind::Bool => Value::Bool(get(&c, &k.key) != Ok(Value::Bool(true))),
            Kind::Choice(names) => Value::Name(names[names.len() - 1].into()),
        };
        set(&mut c, &k.key, &v).unwrap();
        wanted.push(v);
    }
    let file = toml::Table::try_from(&c).unwrap();
    for (k, v) in all().iter().zip(&wanted) {
        let read = get(&c, &k.key).unwrap();
        assert_eq!(k.value(&c).as_ref(), Some(&read), "{}", k.key);
        let in_file = toml_at(&file, &k.key);
        match v {
            Value::Name(name) => assert_eq!(in_file.as_str(), Some(name.as_str()), "{}", k.key),
            Value::Bool(b) => assert_eq!(in_file.as_bool(), Some(*b), "{}", k.key),
            _ => {
                let x = in_file
                    .as_float()
                    .or(in_file.as_integer().map(|i| i as f64));
                assert_eq!(x, v.as_f64(), "{}", k.key);
                assert_eq!(read.as_f64(), v.as_f64(), "{}", k.key);
            }
        }
    }
}

#[test]
fn wrong_values_are_named_in_a_users_words() {
    let mut c = SimConfig::default();
    let e = set(&mut c, "swarms.normal.count", &Value::Name("abc".into())).unwrap_err();
    assert!(e.contains("`abc` is not a whole number"), "{e}");
    let e = set(&mut c, "swarms.normal.count", &Value::Float(2.5)).unwrap_err();
    assert!(e.contains("not a whole number"), "{e}");
    let e = set(&mut c, "swarms.normal.max_speed", &Value::Bool(true)).unwrap_err();
    assert!(e.contains("not a number"), "{e}");
    let e = set(&mut c, "doctors.behavior", &Value::Name("seek".into())).unwrap_err();
    assert!(
        e.contains("`passive`, `seek_nearest` or `seek_centroid`"),
        "{e}"
    );
    let e = set(&mut c, "swarms.normal.cuont", &Value::Int(3)).unwrap_err();
    assert_eq!(e, "unknown key `cuont`; did you mean `count`?");
    let e = set(&mut c, "epidemic.t_deth", &Value::Int(3)).unwrap_err();
    assert_eq!(e, "unknown key `t_deth`; did you mean `t_death`?");
    let e = set(&mut c, "swarms.normal", &Value::Int(3)).unwrap_err();
    assert!(e.contains("is a section"), "{e}");
    assert_eq!(c, SimConfig::default(), "a refused edit changes nothing");
}

#[test]
fn nearest_word_is_only_offered_when_close() {
    assert_eq!(
        nearest("t_deth", ["t_death", "t_immunity"]),
        Some("t_death")
    );
    assert_eq!(nearest("spede", ["speed", "count"]), Some("speed"));
    assert_eq!(nearest("zzzzzz", ["speed", "count"]), None);
    assert_eq!(distance("ab", "ba"), 1);
}

#[test]
fn dynamic_bounds_follow_the_config() {
    let mut c = SimConfig::default();
    let min_speed = find("swarms.normal.min_speed").unwrap();
    assert_eq!(min_speed.upper_bound(&c), Bound::Closed(180.0));
    c.swarms.doctor.max_speed = 90.0;
    let doctor_min = find("swarms.doctor.min_speed").unwrap();
    assert_eq!(doctor_min.upper_bound(&c), Bound::Closed(90.0));
    let seek = find("doctors.seek_radius").unwrap();
    // Passive doctors: the seek radius is not held to the world.
    assert_eq!(seek.upper_bound(&c), Bound::Closed(MAX_RADIUS));
    c.doctors.behavior = DoctorBehavior::SeekNearest;
    assert_eq!(seek.upper_bound(&c), Bound::Open(540.0));
    c.world.boundary = Boundary::Bounce;
    assert_eq!(seek.upper_bound(&c), Bound::Closed(MAX_RADIUS));
}

/// serde's name of a value (what a scenario file says).
fn serde_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

fn names_agree<T>(all: &[T])
where
    T: Typed
        + bevy::reflect::FromReflect
        + bevy::reflect::Enum
        + serde::Serialize
        + PartialEq
        + std::fmt::Debug,
{
    use crate::sim::names::{name_of, names, parse};
    assert_eq!(names::<T>().len(), all.len());
    for v in all {
        let name = name_of(v);
        assert_eq!(name, serde_name(v), "serde and reflect agree");
        assert_eq!(parse::<T>(name).as_ref(), Some(v));
    }
}

#[test]
fn every_enum_of_the_config_is_named_as_serde_names_it() {
    use crate::sim::config::{CatchMode, IndexKind, SteeringModel};
    use crate::sim::swarm::Swarm;
    names_agree(&[
        SteeringModel::Shiffman,
        SteeringModel::Hybrid,
        SteeringModel::Adams,
        SteeringModel::Pygame,
        SteeringModel::Report,
    ]);
    names_agree(&[IndexKind::Kdtree, IndexKind::Grid, IndexKind::Brute]);
    names_agree(&[
        DoctorBehavior::Passive,
        DoctorBehavior::SeekNearest,
        DoctorBehavior::SeekCentroid,
    ]);
    names_agree(&[CatchMode::Remove, CatchMode::Respawn]);
    names_agree(&[Boundary::Wrap, Boundary::Bounce]);
    names_agree(&Swarm::ALL);
}
