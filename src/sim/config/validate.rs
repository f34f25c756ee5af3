//! Validation: every key's value is checked against what its field's [`Spec`](super::Spec)
//! allows — its range, a sibling it may not exceed, the half-world limit on radii — and the
//! first problem is reported as one line naming the origin, the key and what is allowed. Types
//! and choices are checked earlier, when a value is read or set. No systems live here.

use super::keys::{self, Key, Kind};
use super::spec::Bound;
use super::{ConfigError, SimConfig};

impl SimConfig {
    /// Checks every value against its allowed range (first problem found).
    pub fn validate(&self, origin: &str) -> Result<(), ConfigError> {
        match self.first_problem(None) {
            Some((key, message)) => Err(ConfigError::Key {
                origin: origin.to_string(),
                key,
                message,
            }),
            None => self.validate_lists(origin),
        }
    }

    /// Checks what is not a key: the interventions and the extensions' sections.
    fn validate_lists(&self, origin: &str) -> Result<(), ConfigError> {
        super::interventions::validate(self, origin)?;
        self.validate_extensions(origin)
    }

    /// Checks every `[extensions.<name>]` section with its extension's check.
    fn validate_extensions(&self, origin: &str) -> Result<(), ConfigError> {
        for (name, value) in &self.extensions {
            let fail = |message: String| ConfigError::Key {
                origin: origin.to_string(),
                key: format!("extensions.{name}"),
                message,
            };
            let Some(check) = crate::sim::extensions::check_of(name) else {
                let known = crate::sim::extensions::section_names();
                return Err(fail(if known.is_empty() {
                    "no extension of this program has such a section (extensions come from your \
                     own binary: README, \"Add your own system\")"
                        .into()
                } else {
                    format!(
                        "no extension of this program has such a section; it has {}",
                        known.join(", ")
                    )
                }));
            };
            check(value).map_err(|m| fail(super::load::user_words(&m)))?;
        }
        Ok(())
    }

    /// Validates a config in which `edited` was just changed: a problem is always reported on
    /// the edited key — its own range first, then any other key it pushes out of range (e.g. a
    /// `max_speed` below `min_speed`), said as such.
    pub fn validate_edit(&self, edited: &str, origin: &str) -> Result<(), ConfigError> {
        let fail = |message: String| ConfigError::Key {
            origin: origin.to_string(),
            key: edited.to_string(),
            message,
        };
        if let Some(k) = keys::find(edited)
            && let Some(message) = problem(k, self)
        {
            return Err(fail(message));
        }
        match self.first_problem(Some(edited)) {
            Some((other, message)) => {
                let value = self.get(edited).map(|v| v.to_string()).unwrap_or_default();
                Err(fail(format!(
                    "{value} is not allowed while `{other}` is {}: `{other}` {message}",
                    self.get(&other).map(|v| v.to_string()).unwrap_or_default(),
                )))
            }
            None => self.validate_lists(origin),
        }
    }

    /// The first key (other than `skip`) whose value is not allowed, and why.
    fn first_problem(&self, skip: Option<&str>) -> Option<(String, String)> {
        // The seed is the one 64-bit unsigned value: beyond a TOML integer the config cannot
        // even be written to a file.
        if self.seed > i64::MAX as u64 {
            return Some((
                "seed".into(),
                format!(
                    "{} is out of range; allowed: 0 ..= {} (fits a TOML integer)",
                    self.seed,
                    i64::MAX
                ),
            ));
        }
        keys::all()
            .iter()
            .filter(|k| Some(k.key.as_str()) != skip)
            .find_map(|k| problem(k, self).map(|m| (k.key.clone(), m)))
    }
}

/// What is wrong with key `k`'s value in `config`, if anything.
fn problem(k: &Key, config: &SimConfig) -> Option<String> {
    if matches!(k.kind, Kind::Bool | Kind::Choice(_)) {
        // Flags and choices were checked when they were read or set.
        return None;
    }
    let value = k.value(config)?;
    let x = value.as_f64()?;
    // The value's text and the allowed range in words are worked out only for a value that is
    // not allowed: most keys pass, and this runs over every key at every load.
    let shown = || value.to_string();
    let upper = || k.upper_bound(config);
    let allowed = || k.allowed(k.spec.lower, upper());
    if k.spec.infinite_ok {
        // A duration that may be `inf` (never) but must be positive and not NaN.
        return (x.is_nan() || x <= 0.0)
            .then(|| format!("{} is out of range; allowed: {}", shown(), allowed()));
    }
    if !x.is_finite() {
        return Some(format!(
            "{} is not a finite number; allowed: {}",
            shown(),
            allowed()
        ));
    }
    let above = match k.spec.lower {
        Bound::Open(b) => x > b,
        Bound::Closed(b) => x >= b,
    };
    let below = || match upper() {
        Bound::Open(b) => x < b,
        Bound::Closed(b) => x <= b,
    };
    (!(above && below())).then(|| format!("{} is out of range; allowed: {}", shown(), allowed()))
}

#[cfg(test)]
mod tests {
    use super::super::load::tests::key_error;
    use super::super::*;

    #[test]
    fn out_of_range_values_are_rejected() {
        for (text, expect_key) in [
            (
                "[swarms.normal]\nseparation_radius = -1.0\n",
                "swarms.normal.separation_radius",
            ),
            (
                "[swarms.doctor]\nmin_speed = 300.0\n",
                "swarms.doctor.min_speed",
            ),
            (
                "[epidemic]\np_infect_normal = 1.5\n",
                "epidemic.p_infect_normal",
            ),
            ("dt = 0.0\n", "dt"),
            ("dt = -0.01\n", "dt"),
            ("dt = nan\n", "dt"),
            ("[world]\nwidth = inf\n", "world.width"),
            ("[epidemic]\nt_death = 0.0\n", "epidemic.t_death"),
            (
                "[swarms.normal]\nalignment_radius = 600.0\n",
                "swarms.normal.alignment_radius",
            ),
        ] {
            let (_, key, message) = key_error(text, &[]);
            assert_eq!(key, expect_key, "{text}");
            assert!(message.contains("allowed"), "{message}");
        }
    }

    #[test]
    fn edits_apply_one_key_and_are_validated_on_that_key() {
        let c = SimConfig::default();
        let e = c
            .with_edit("swarms.doctor.max_speed", Value::Float(200.0), "panel")
            .unwrap();
        assert_eq!(e.swarms.doctor.max_speed, 200.0);
        assert_eq!(e.swarms.normal.max_speed, 180.0);
        let e = c
            .with_edit(
                "doctors.behavior",
                Value::Name("seek_centroid".into()),
                "panel",
            )
            .unwrap();
        assert_eq!(e.doctors.behavior, DoctorBehavior::SeekCentroid);
        let err = c
            .with_edit("swarms.normal.min_speed", Value::Float(300.0), "panel")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "panel: `swarms.normal.min_speed`: 300 is out of range; allowed: ≥ 0 and ≤ 180, \
             px/s (at most max_speed)"
        );
        // Lowering max_speed below min_speed is blamed on the edit, not on min_speed.
        let err = c
            .with_edit("swarms.normal.max_speed", Value::Float(50.0), "panel")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "panel: `swarms.normal.max_speed`: 50 is not allowed while \
                 `swarms.normal.min_speed` is 54"
            ),
            "{err}"
        );
        assert!(
            c.with_edit("swarms.normal.nope", Value::Float(1.0), "panel")
                .is_err()
        );
    }

    #[test]
    fn radii_of_modules_that_are_off_are_not_checked() {
        // A 500 px world: the default 300 px seek radius is too long, but doctors are passive.
        let small = "[world]\nwidth = 500.0\nheight = 500.0\n[antivax]\np_antivax = 0.0\n";
        SimConfig::from_toml_str(small, "x", &[]).unwrap();
        let (_, key, _) = key_error(
            &format!("{small}[doctors]\nbehavior = \"seek_nearest\"\n"),
            &[],
        );
        assert_eq!(key, "doctors.seek_radius");
        let (_, key, _) = key_error(&format!("{small}[predators]\ncount = 1\n"), &[]);
        assert_eq!(key, "predators.detection_range");
    }

    #[test]
    fn infinite_times_mean_never() {
        let c = SimConfig::from_toml_str("[epidemic]\nt_death = inf\n", "x", &[]).unwrap();
        assert!(c.epidemic.t_death.is_infinite());
    }
}
