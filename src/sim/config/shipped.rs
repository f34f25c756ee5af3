//! The shipped scenarios built into the binary (`assets/scenarios`, sub-folders included), so
//! a build without the asset folder — the browser build — offers every preset; and the keys in
//! which one config differs from another, as `--set` overrides (what a shareable link carries).

use super::SimConfig;

/// Every shipped scenario: its name (`predators`, `matrix/B2_D2`) and its text.
pub const SHIPPED: [(&str, &str); 33] = [
    (
        "adams",
        include_str!("../../../assets/scenarios/adams.toml"),
    ),
    ("city", include_str!("../../../assets/scenarios/city.toml")),
    (
        "crowd",
        include_str!("../../../assets/scenarios/crowd.toml"),
    ),
    (
        "default",
        include_str!("../../../assets/scenarios/default.toml"),
    ),
    (
        "hybrid",
        include_str!("../../../assets/scenarios/hybrid.toml"),
    ),
    (
        "predators",
        include_str!("../../../assets/scenarios/predators.toml"),
    ),
    (
        "pygame",
        include_str!("../../../assets/scenarios/pygame.toml"),
    ),
    ("sir", include_str!("../../../assets/scenarios/sir.toml")),
    ("sird", include_str!("../../../assets/scenarios/sird.toml")),
    ("sirs", include_str!("../../../assets/scenarios/sirs.toml")),
    (
        "matrix/B1_D1",
        include_str!("../../../assets/scenarios/matrix/B1_D1.toml"),
    ),
    (
        "matrix/B1_D2",
        include_str!("../../../assets/scenarios/matrix/B1_D2.toml"),
    ),
    (
        "matrix/B1_D3",
        include_str!("../../../assets/scenarios/matrix/B1_D3.toml"),
    ),
    (
        "matrix/B2_D1",
        include_str!("../../../assets/scenarios/matrix/B2_D1.toml"),
    ),
    (
        "matrix/B2_D2",
        include_str!("../../../assets/scenarios/matrix/B2_D2.toml"),
    ),
    (
        "matrix/B2_D3",
        include_str!("../../../assets/scenarios/matrix/B2_D3.toml"),
    ),
    (
        "matrix/B3_D1",
        include_str!("../../../assets/scenarios/matrix/B3_D1.toml"),
    ),
    (
        "matrix/B3_D2",
        include_str!("../../../assets/scenarios/matrix/B3_D2.toml"),
    ),
    (
        "matrix/B3_D3",
        include_str!("../../../assets/scenarios/matrix/B3_D3.toml"),
    ),
    (
        "regimes/A_cohesive",
        include_str!("../../../assets/scenarios/regimes/A_cohesive.toml"),
    ),
    (
        "regimes/B_transient",
        include_str!("../../../assets/scenarios/regimes/B_transient.toml"),
    ),
    (
        "regimes/C_lattice",
        include_str!("../../../assets/scenarios/regimes/C_lattice.toml"),
    ),
    (
        "regimes/D_disorder",
        include_str!("../../../assets/scenarios/regimes/D_disorder.toml"),
    ),
    (
        "regimes/E_tight",
        include_str!("../../../assets/scenarios/regimes/E_tight.toml"),
    ),
    (
        "interventions/none",
        include_str!("../../../assets/scenarios/interventions/none.toml"),
    ),
    (
        "interventions/lockdown",
        include_str!("../../../assets/scenarios/interventions/lockdown.toml"),
    ),
    (
        "interventions/vaccination",
        include_str!("../../../assets/scenarios/interventions/vaccination.toml"),
    ),
    (
        "interventions/test_and_isolate",
        include_str!("../../../assets/scenarios/interventions/test_and_isolate.toml"),
    ),
    (
        "regimes/report/A_cohesive",
        include_str!("../../../assets/scenarios/regimes/report/A_cohesive.toml"),
    ),
    (
        "regimes/report/B_transient",
        include_str!("../../../assets/scenarios/regimes/report/B_transient.toml"),
    ),
    (
        "regimes/report/C_lattice",
        include_str!("../../../assets/scenarios/regimes/report/C_lattice.toml"),
    ),
    (
        "regimes/report/D_disorder",
        include_str!("../../../assets/scenarios/regimes/report/D_disorder.toml"),
    ),
    (
        "regimes/report/E_tight",
        include_str!("../../../assets/scenarios/regimes/report/E_tight.toml"),
    ),
];

/// A shipped scenario's text by name.
pub fn shipped(name: &str) -> Option<&'static str> {
    SHIPPED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// A shipped scenario by name, with `sets` applied (the same rules as `--set`).
pub fn load_shipped(name: &str, sets: &[String]) -> Result<SimConfig, super::ConfigError> {
    let text = shipped(name).ok_or_else(|| super::ConfigError::Read {
        path: format!("{name}.toml"),
        reason: format!(
            "no shipped scenario `{name}`; one of {}",
            SHIPPED.map(|s| s.0).join(", ")
        ),
    })?;
    SimConfig::from_toml_str(text, &format!("{name}.toml"), sets)
}

/// The dotted keys whose values differ between `base` and `now`, as `key=value` overrides
/// that turn `base` into `now` (sorted; the seed travels on its own).
pub fn changed_sets(base: &SimConfig, now: &SimConfig) -> Vec<String> {
    let mut sets: Vec<String> = super::keys::all()
        .iter()
        .filter(|k| k.key != "seed")
        .filter_map(|k| {
            let after = now.get(&k.key).ok()?;
            (base.get(&k.key).ok()? != after).then(|| format!("{}={after}", k.key))
        })
        .collect();
    sets.sort();
    sets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_under_assets_scenarios_is_built_in_and_loads() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios");
        fn toml_under(d: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(d).unwrap() {
                let p = entry.unwrap().path();
                if p.is_dir() {
                    toml_under(&p, out);
                } else if p.extension().is_some_and(|x| x == "toml") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        toml_under(&dir, &mut files);
        let mut on_disk: Vec<String> = files
            .iter()
            .map(|f| {
                let rel = f.strip_prefix(&dir).unwrap().with_extension("");
                rel.to_string_lossy().into_owned()
            })
            .collect();
        on_disk.sort();
        let mut built_in: Vec<String> = SHIPPED.iter().map(|s| s.0.to_string()).collect();
        built_in.sort();
        assert_eq!(built_in, on_disk, "add the new scenario to SHIPPED");
        for (name, _) in SHIPPED {
            load_shipped(name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(
            load_shipped("nope", &[])
                .unwrap_err()
                .to_string()
                .contains("predators")
        );
    }

    #[test]
    fn changed_sets_turn_one_config_into_the_other() {
        let base = load_shipped("predators", &[]).unwrap();
        let mut now = base.clone();
        now.swarms.normal.count = 500;
        now.epidemic.p_infect_normal = 0.25;
        now.seed = 99;
        let sets = changed_sets(&base, &now);
        assert_eq!(
            sets,
            ["epidemic.p_infect_normal=0.25", "swarms.normal.count=500"]
        );
        let mut back = load_shipped("predators", &sets).unwrap();
        back.seed = 99;
        assert_eq!(back, now);
        assert!(changed_sets(&base, &base).is_empty());
    }
}
