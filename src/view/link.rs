//! Shareable runs: a page address's query —
//! `?scenario=predators&seed=7&set=swarms.normal.count=500` (`set` repeatable) — and back. Pure
//! functions, so the desktop tests check what the browser build parses and writes.

use crate::sim::config::shipped::{changed_sets, load_shipped};
use crate::sim::config::{Intervention, SimConfig};

/// The shipped scenario the running config started from (`default`, `matrix/B2_D2`): what a
/// "copy link" names.
#[derive(bevy::prelude::Resource, Clone, Debug, PartialEq)]
pub struct CurrentScenario(pub String);

impl Default for CurrentScenario {
    fn default() -> Self {
        Self("default".into())
    }
}

/// What a link names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Link {
    /// Shipped scenario name (`default` when absent).
    pub scenario: String,
    /// Seed, if given.
    pub seed: Option<u64>,
    /// `key=value` overrides, in order.
    pub sets: Vec<String>,
    /// The run's `[[interventions]]` as TOML, when they differ from the scenario's.
    pub interventions: Option<String>,
    /// Put the metrics into the page once the run reaches this many simulated seconds (for
    /// checking a browser run against the command line).
    pub export: Option<f64>,
    /// Open the run at this simulated time (replayed from the start, then paused).
    pub t: Option<f64>,
}

/// Decodes `%XX` escapes and `+` (a space).
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while k < bytes.len() {
        match bytes[k] {
            b'+' => out.push(b' '),
            b'%' if k + 2 < bytes.len() => match u8::from_str_radix(&s[k + 1..k + 3], 16) {
                Ok(b) => {
                    out.push(b);
                    k += 2;
                }
                Err(_) => out.push(b'%'),
            },
            b => out.push(b),
        }
        k += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escapes what a query value cannot hold as is (keeps `.`, `=`, `-`, `_` readable).
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'_' | b'=' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Parses a query (with or without the leading `?`); unknown parameters are an error that
/// names them.
pub fn parse_query(query: &str) -> Result<Link, String> {
    let mut link = Link {
        scenario: "default".into(),
        ..Link::default()
    };
    for pair in query
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = decode(value);
        match key {
            "scenario" => link.scenario = value.trim_end_matches(".toml").to_string(),
            "seed" => {
                link.seed = Some(
                    value
                        .parse()
                        .map_err(|_| format!("seed `{value}` is not a whole number ≥ 0"))?,
                )
            }
            "set" => link.sets.push(value),
            "interventions" => link.interventions = Some(value),
            "export" => {
                link.export = Some(value.parse().map_err(|_| {
                    format!("export `{value}` is not a number of simulated seconds")
                })?)
            }
            "t" => {
                let t: f64 = value
                    .parse()
                    .map_err(|_| format!("t `{value}` is not a number of simulated seconds"))?;
                if !(t >= 0.0 && t.is_finite()) {
                    return Err(format!("t `{value}` must be 0 or more simulated seconds"));
                }
                link.t = Some(t);
            }
            other => {
                return Err(format!(
                    "unknown link parameter `{other}`; use scenario, seed, set, interventions \
                     and t"
                ));
            }
        }
    }
    Ok(link)
}

/// The query of `link`: `?scenario=…&seed=…&set=…`.
pub fn link_query(link: &Link) -> String {
    let mut parts = vec![format!("scenario={}", encode(&link.scenario))];
    if let Some(seed) = link.seed {
        parts.push(format!("seed={seed}"));
    }
    parts.extend(link.sets.iter().map(|s| format!("set={}", encode(s))));
    if let Some(text) = &link.interventions {
        parts.push(format!("interventions={}", encode(text)));
    }
    if let Some(t) = link.t {
        parts.push(format!("t={t}"));
    }
    format!("?{}", parts.join("&"))
}

/// The config a link names (the scenario, its overrides, the seed).
pub fn resolve(link: &Link) -> Result<SimConfig, String> {
    let mut config = load_shipped(&link.scenario, &link.sets).map_err(|e| e.to_string())?;
    if let Some(seed) = link.seed {
        config.seed = seed;
    }
    if let Some(text) = &link.interventions {
        config.interventions = interventions_from_toml(text)?;
        config.validate("link").map_err(|e| e.to_string())?;
    }
    Ok(config)
}

/// The `[[interventions]]` entries as TOML text.
fn interventions_toml(list: &[Intervention]) -> String {
    #[derive(serde::Serialize)]
    struct Only<'a> {
        interventions: &'a [Intervention],
    }
    toml::to_string(&Only {
        interventions: list,
    })
    .unwrap_or_default()
}

/// The `[[interventions]]` entries of TOML text.
fn interventions_from_toml(text: &str) -> Result<Vec<Intervention>, String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Only {
        #[serde(default)]
        interventions: Vec<Intervention>,
    }
    toml::from_str::<Only>(text)
        .map(|o| o.interventions)
        .map_err(|e| {
            format!(
                "link: interventions: {}",
                e.to_string().lines().last().unwrap_or("not valid TOML")
            )
        })
}

/// The link that reproduces `config`, which started from shipped scenario `scenario`.
pub fn link_for(scenario: &str, config: &SimConfig) -> Link {
    let base = load_shipped(scenario, &[]).ok();
    let sets = base
        .as_ref()
        .map(|base| changed_sets(base, config))
        .unwrap_or_default();
    let interventions = (base.is_none_or(|b| b.interventions != config.interventions)
        && !config.interventions.is_empty())
    .then(|| interventions_toml(&config.interventions));
    Link {
        scenario: scenario.to_string(),
        seed: Some(config.seed),
        sets,
        interventions,
        export: None,
        t: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_round_trips_to_the_same_config() {
        let link = parse_query("?scenario=predators&seed=7&set=swarms.normal.count=500").unwrap();
        assert_eq!(link.scenario, "predators");
        assert_eq!(link.seed, Some(7));
        assert_eq!(link.sets, ["swarms.normal.count=500"]);
        let config = resolve(&link).unwrap();
        assert_eq!((config.seed, config.swarms.normal.count), (7, 500));
        let again = link_for("predators", &config);
        assert_eq!(again, link);
        assert_eq!(parse_query(&link_query(&again)).unwrap(), link);
        // A moment of the run.
        let at = Link {
            t: Some(12.5),
            ..link.clone()
        };
        assert!(link_query(&at).ends_with("&t=12.5"));
        assert_eq!(parse_query(&link_query(&at)).unwrap(), at);
        assert!(parse_query("t=-1").unwrap_err().contains("0 or more"));
        assert!(parse_query("t=soon").unwrap_err().contains("not a number"));
        // Sub-folder scenarios, escapes and strings.
        let mut c = resolve(&parse_query("scenario=matrix/B2_D2").unwrap()).unwrap();
        c.doctors.behavior = crate::sim::config::DoctorBehavior::SeekCentroid;
        let q = link_query(&link_for("matrix/B2_D2", &c));
        assert!(q.contains("set=doctors.behavior=seek_centroid"), "{q}");
        assert_eq!(resolve(&parse_query(&q).unwrap()).unwrap(), c);
        // Links written by earlier versions quoted names; they still open.
        let old = "scenario=matrix/B2_D2&set=doctors.behavior=%22seek_centroid%22";
        assert_eq!(
            resolve(&parse_query(old).unwrap())
                .unwrap()
                .doctors
                .behavior,
            c.doctors.behavior
        );
    }

    #[test]
    fn a_link_carries_the_runs_interventions() {
        let mut c = resolve(&parse_query("scenario=sir&seed=3").unwrap()).unwrap();
        c.interventions = crate::sim::config::SimConfig::from_toml_str(
            "[[interventions]]\nname = \"lockdown\"\nwhen = \"infected_frac > 0.1\"\n\
             set = { \"swarms.normal.max_speed\" = 60.0 }\n",
            "x",
            &[],
        )
        .unwrap()
        .interventions;
        let q = link_query(&link_for("sir", &c));
        assert!(q.contains("interventions="), "{q}");
        assert_eq!(resolve(&parse_query(&q).unwrap()).unwrap(), c);
        // A shipped scenario's own interventions need no parameter.
        let shipped = resolve(&parse_query("scenario=interventions/lockdown").unwrap()).unwrap();
        assert!(
            !link_query(&link_for("interventions/lockdown", &shipped)).contains("interventions=")
        );
        let bad = "scenario=sir&interventions=%5B%5Binterventions%5D%5D%0Aat%3D1";
        assert!(
            resolve(&parse_query(bad).unwrap())
                .unwrap_err()
                .contains("does nothing")
        );
    }

    #[test]
    fn bad_links_say_what_is_wrong() {
        assert!(parse_query("?seed=x").unwrap_err().contains("seed"));
        assert!(parse_query("?colour=red").unwrap_err().contains("colour"));
        assert!(
            resolve(&parse_query("?scenario=nope").unwrap())
                .unwrap_err()
                .contains("nope")
        );
        assert!(
            resolve(&parse_query("?set=swarms.normal.cuont=5").unwrap())
                .unwrap_err()
                .contains("cuont")
        );
        assert_eq!(parse_query("").unwrap().scenario, "default");
        assert_eq!(parse_query("?export=10").unwrap().export, Some(10.0));
        assert!(parse_query("?export=soon").unwrap_err().contains("export"));
    }
}
