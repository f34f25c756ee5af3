//! Unit tests of the interventions' types, parser, validation and paths.

use super::*;

fn load(text: &str) -> Result<SimConfig, String> {
    SimConfig::from_toml_str(text, "s.toml", &[]).map_err(|e| e.to_string())
}

#[test]
fn conditions_parse_with_or_without_spaces_and_say_what_is_wrong() {
    let c = Condition::parse("infected_frac > 0.10").unwrap();
    assert_eq!(
        (c.measure, c.op, c.value),
        ("infected_frac", Op::Above, 0.1)
    );
    let c = Condition::parse("r_t<=1").unwrap();
    assert_eq!((c.measure, c.op, c.value), ("r_t", Op::AtMost, 1.0));
    assert!(c.holds(1.0) && !c.holds(1.01));
    assert_eq!(
        Condition::parse("infected_fract > 0.1").unwrap_err(),
        "unknown measure `infected_fract`; did you mean `infected_frac`?"
    );
    assert!(
        Condition::parse("infected == 3")
            .unwrap_err()
            .contains("`==` is not a comparison")
    );
    assert!(
        Condition::parse("infected > lots")
            .unwrap_err()
            .contains("`lots` is not a number")
    );
    assert!(
        Condition::parse("infected")
            .unwrap_err()
            .contains("has no comparison")
    );
    assert_eq!(
        Condition::parse("dead >= 3").unwrap().to_string(),
        "dead >= 3"
    );
}

#[test]
fn a_scenario_with_interventions_round_trips_through_toml() {
    let text = r#"
[[interventions]]
name = "lockdown"
when = "infected_frac > 0.10"
for = 2.0
duration = 60.0
set = { "swarms.normal.max_speed" = 60.0, "swarms.normal.cohesion_weight" = 0.2 }

[[interventions]]
name = "jab"
at = 5
vaccinate = { swarm = "normal", fraction = 0.5, efficacy = 0.9 }
"#;
    let c = load(text).unwrap();
    assert_eq!(c.interventions.len(), 2);
    assert_eq!(c.interventions[0].hold, 2.0);
    assert_eq!(c.interventions[1].at, Some(5.0));
    let back = load(&c.to_toml()).unwrap();
    assert_eq!(back, c);
}

#[test]
fn bad_interventions_are_one_line_naming_which_and_what_is_allowed() {
    for (body, expect) in [
        (
            "name = \"x\"\nset = { \"swarms.normal.max_speed\" = 60.0 }",
            "has no trigger",
        ),
        (
            "name = \"x\"\nwhen = \"infectd > 3\"\nimport = { count = 1 }",
            "did you mean `infected`",
        ),
        (
            "name = \"x\"\nwhen = \"infected ~ 3\"\nimport = { count = 1 }",
            "is not a comparison",
        ),
        (
            "name = \"x\"\nat = 1\nset = { \"swarms.normal.count\" = 60 }",
            "cannot change during a run",
        ),
        (
            "name = \"x\"\nat = 1\nset = { \"swarms.normal.max_sped\" = 60 }",
            "did you mean `max_speed`",
        ),
        (
            "name = \"x\"\nat = 1\nset = { \"swarms.normal.max_speed\" = -5 }",
            "out of range",
        ),
        (
            "name = \"x\"\nat = 1\nvaccinate = { fraction = 1.5 }",
            "allowed: 0 to 1",
        ),
        (
            "name = \"x\"\nat = 1\nvaccinate = { efficacy = 0.5 }",
            "needs one of `fraction`",
        ),
        (
            "name = \"x\"\nat = 1\nisolate = { detect_per_s = 2 }",
            "allowed: 0 to 1",
        ),
        ("name = \"x\"\nat = 1", "does nothing"),
        ("name = \"x\"\nat = 1\nimport = { count = 0 }", "at least 1"),
        (
            "name = \"x\"\nat = 1\nimport = { count = 1, swarm = \"nurse\" }",
            "unknown value",
        ),
        (
            "name = \"x\"\nat = 1\nimport = { count = 1 }\nlast = 3",
            "unknown key `last`",
        ),
    ] {
        let err = load(&format!("[[interventions]]\n{body}\n")).unwrap_err();
        assert!(err.contains("interventions[0] \"x\""), "{err}");
        assert!(err.contains(expect), "{body}: {err}");
        assert!(!err.contains('\n'), "{err}");
    }
}

#[test]
fn numbers_of_an_intervention_are_reached_by_name_or_index() {
    let text = "[[interventions]]\nname = \"lockdown\"\nwhen = \"infected_frac > 0.1\"\n\
                set = { \"swarms.normal.max_speed\" = 60.0 }\n";
    let sets = [
        "interventions.lockdown.when_value=0.2".to_string(),
        "interventions.0.set.swarms.normal.max_speed=90".to_string(),
    ];
    let c = SimConfig::from_toml_str(text, "s", &sets).unwrap();
    assert_eq!(c.interventions[0].when.as_ref().unwrap().value, 0.2);
    assert_eq!(
        c.get("interventions.lockdown.set.swarms.normal.max_speed"),
        Ok(Value::Int(90))
    );
    let err = SimConfig::from_toml_str(text, "s", &["interventions.lockdwn.at=3".into()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("no intervention `lockdwn`"), "{err}");
    let err = SimConfig::from_toml_str(text, "s", &["interventions.lockdown.at=3".into()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("has no `at`"), "{err}");
    let err = SimConfig::from_toml_str(text, "s", &["interventions.lockdown.when_value=x".into()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not a number"), "{err}");
}
