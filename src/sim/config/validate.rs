//! Validation: every value of a config is checked against its key's description in
//! [`KEYS`](super::keys::KEYS) — its range, a sibling it may not exceed, the half-world limit
//! on radii — and the first problem is reported as one line naming the origin, the key and what
//! is allowed. Types and choices are checked earlier, by deserialisation. No systems live here.

use super::keys::{Bound, KEYS, Key, Kind};
use super::{ConfigError, SimConfig, table_get};

impl SimConfig {
    /// Checks every value against its allowed range (first problem found).
    pub fn validate(&self, origin: &str) -> Result<(), ConfigError> {
        let fail = |key: &str, message: String| ConfigError::Key {
            origin: origin.to_string(),
            key: key.to_string(),
            message,
        };
        // The seed is the one 64-bit unsigned value: beyond a TOML integer the config cannot
        // even be written as a table.
        if self.seed > i64::MAX as u64 {
            return Err(fail(
                "seed",
                format!(
                    "{} is out of range; allowed: 0 ..= {} (fits a TOML integer)",
                    self.seed,
                    i64::MAX
                ),
            ));
        }
        let table = self.to_table();
        for k in KEYS {
            for key in k.concrete() {
                if let Some(value) = table_get(&table, &key)
                    && let Some(message) = problem(k, &key, value, self)
                {
                    return Err(fail(&key, message));
                }
            }
        }
        Ok(())
    }
}

/// What is wrong with the `value` of the concrete `key` described by `k`, if anything.
fn problem(k: &Key, key: &str, value: &toml::Value, config: &SimConfig) -> Option<String> {
    let x = match k.kind {
        Kind::Float => value
            .as_float()
            .or_else(|| value.as_integer().map(|i| i as f64))?,
        Kind::Int => value.as_integer()? as f64,
        // Booleans and choices were checked when the file was read.
        Kind::Bool | Kind::Choice(_) => return None,
    };
    let upper = k.upper_bound(key, config);
    let allowed = || k.allowed(k.lower, upper);
    if k.infinite_ok {
        // A duration that may be `inf` (never) but must be positive and not NaN.
        return (x.is_nan() || x <= 0.0)
            .then(|| format!("{x} is out of range; allowed: {}", allowed()));
    }
    if !x.is_finite() {
        return Some(format!(
            "{x} is not a finite number; allowed: {}",
            allowed()
        ));
    }
    let above = match k.lower {
        Bound::Open(b) => x > b,
        Bound::Closed(b) => x >= b,
    };
    let below = match upper {
        Bound::Open(b) => x < b,
        Bound::Closed(b) => x <= b,
    };
    (!(above && below)).then(|| format!("{x} is out of range; allowed: {}", allowed()))
}

#[cfg(test)]
mod tests {
    use super::super::tests::key_error;
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
    fn edits_apply_one_key_and_are_validated() {
        let c = SimConfig::default();
        let e = c
            .with_edit(
                "swarms.doctor.max_speed",
                toml::Value::Float(200.0),
                "panel",
            )
            .unwrap();
        assert_eq!(e.swarms.doctor.max_speed, 200.0);
        assert_eq!(e.swarms.normal.max_speed, 180.0);
        let e = c
            .with_edit(
                "doctors.behavior",
                toml::Value::String("seek_centroid".into()),
                "panel",
            )
            .unwrap();
        assert_eq!(e.doctors.behavior, DoctorBehavior::SeekCentroid);
        let err = c
            .with_edit(
                "swarms.normal.min_speed",
                toml::Value::Float(500.0),
                "panel",
            )
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("panel: `swarms.normal.min_speed`"),
            "{err}"
        );
        assert!(
            c.with_edit("swarms.normal.nope", toml::Value::Float(1.0), "panel")
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
