//! The `compare` command: a paired counterfactual (docs/model.md §11). Every seed runs under a
//! base scenario and under a variant (another file, or the base with `--variant-set` changes),
//! each written as its own run folder (`runs/base/seed-K`, `runs/variant/seed-K`), in parallel
//! and resumable like `experiment`. Both runs of a seed share the seed, and every per-boid draw
//! is hashed from `(seed, step, id, purpose)`, so they share their random numbers until their
//! behaviour diverges (common random numbers). `comparison.csv` gives, per measure, the mean
//! under each, the mean paired difference with its 95 % CI, the unpaired (Welch) CI from the
//! same runs, and the variance-reduction factor; `plots/` the infected curves of both and the
//! paired differences per seed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, bail};

use super::jobs::{Job, Runs, execute, seed_job};
use super::plots::plot_comparison;
use super::results::{RunRecord, Series, is_complete, read_run};
use crate::sim::config::{ConfigError, SimConfig};
use crate::sim::stats::{Estimate, estimate, t_975_real};

/// The measures compared, as named in `summary.csv`.
pub const COMPARED: [&str; 6] = [
    "attack_rate",
    "peak_fraction",
    "peak_time_s",
    "final_dead",
    "eradication_time_s",
    "r0",
];

/// The error of a comparison with no variant.
pub const NOTHING_TO_COMPARE: &str = "nothing to compare: give --variant FILE or --variant-set \
KEY=VALUE (repeatable), e.g. --variant assets/scenarios/interventions/lockdown.toml";

/// Options of a comparison.
pub struct CompareOptions {
    /// The base scenario.
    pub base: PathBuf,
    /// The variant scenario (default: the base).
    pub variant: Option<PathBuf>,
    /// Changes that make the variant (`KEY=VALUE`, after `variant`).
    pub variant_sets: Vec<String>,
    /// Seeds (pairs of runs).
    pub seeds: usize,
    /// Base seed the run seeds derive from.
    pub base_seed: u64,
    /// Runs at a time.
    pub jobs: usize,
    /// Overrides both scenarios' duration.
    pub duration: Option<f64>,
    /// `--set` overrides applied to both.
    pub sets: Vec<String>,
    /// Output folder.
    pub out: PathBuf,
    /// Progress bar.
    pub progress: bool,
    /// Ctrl-C.
    pub stop: Option<Arc<AtomicBool>>,
}

/// One row of `comparison.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The measure.
    pub measure: String,
    /// Pairs where both runs define it.
    pub pairs: usize,
    /// Under the base.
    pub base: Estimate,
    /// Under the variant.
    pub variant: Estimate,
    /// Variant − base, paired by seed: mean and its 95 % CI.
    pub paired: Estimate,
    /// The 95 % CI of the difference of means if the runs were independent (Welch).
    pub unpaired: (f64, f64),
    /// How many times smaller the paired difference's variance is than the unpaired one's:
    /// `(s_base² + s_variant²) / s_diff²` (∞ when every paired difference is the same).
    pub variance_reduction: f64,
}

/// Compares a measure over seeds: `base[k]` and `variant[k]` come from seed k (`None` where
/// a run leaves it undefined; such pairs are left out). `None` with fewer than two pairs.
pub fn compare(measure: &str, base: &[Option<f64>], variant: &[Option<f64>]) -> Option<Comparison> {
    let pairs: Vec<(f64, f64)> = base
        .iter()
        .zip(variant)
        .filter_map(|(b, v)| Some(((*b)?, (*v)?)))
        .filter(|(b, v)| b.is_finite() && v.is_finite())
        .collect();
    if pairs.len() < 2 {
        return None;
    }
    let b = estimate(pairs.iter().map(|p| p.0))?;
    let v = estimate(pairs.iter().map(|p| p.1))?;
    let paired = estimate(pairs.iter().map(|p| p.1 - p.0))?;
    let n = pairs.len() as f64;
    let (qb, qv) = (b.sd * b.sd / n, v.sd * v.sd / n);
    let se = (qb + qv).sqrt();
    // Welch–Satterthwaite degrees of freedom.
    let df = if qb + qv > 0.0 {
        (qb + qv).powi(2) / (qb * qb / (n - 1.0) + qv * qv / (n - 1.0))
    } else {
        n - 1.0
    };
    let half = t_975_real(df) * se;
    let diff = v.mean - b.mean;
    let vr = match (b.sd.powi(2) + v.sd.powi(2), paired.sd.powi(2)) {
        (num, den) if den > 0.0 => num / den,
        (num, _) if num > 0.0 => f64::INFINITY,
        _ => f64::NAN,
    };
    Some(Comparison {
        measure: measure.to_string(),
        pairs: pairs.len(),
        base: b,
        variant: v,
        paired,
        unpaired: (diff - half, diff + half),
        variance_reduction: vr,
    })
}

/// The header of `comparison.csv`.
pub const COMPARISON_HEADER: &str = "measure,pairs,base_mean,variant_mean,diff_mean,\
diff_ci_low,diff_ci_high,unpaired_ci_low,unpaired_ci_high,variance_reduction";

/// `comparison.csv`'s text.
pub fn comparison_csv(rows: &[Comparison]) -> String {
    let num = |x: f64| {
        if x.is_nan() {
            String::new()
        } else if x.is_infinite() {
            "inf".into()
        } else {
            format!("{x:.6}")
        }
    };
    let mut out = format!("{COMPARISON_HEADER}\n");
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            r.measure,
            r.pairs,
            num(r.base.mean),
            num(r.variant.mean),
            num(r.paired.mean),
            num(r.paired.ci_low),
            num(r.paired.ci_high),
            num(r.unpaired.0),
            num(r.unpaired.1),
            num(r.variance_reduction)
        );
    }
    out
}

/// What a comparison did.
#[derive(Debug, Default)]
pub struct CompareReport {
    /// How its runs went.
    pub runs: Runs,
    /// The rows of `comparison.csv`.
    pub rows: Vec<Comparison>,
    /// Files written besides the run folders.
    pub written: Vec<PathBuf>,
    /// How the variant differs from the base ([`differences`]).
    pub differences: String,
}

/// The base and variant configs.
fn configs(opts: &CompareOptions) -> Result<(SimConfig, SimConfig)> {
    if opts.variant.is_none() && opts.variant_sets.is_empty() {
        bail!(NOTHING_TO_COMPARE);
    }
    let base = SimConfig::load(Some(&opts.base), &opts.sets)?;
    let file = opts.variant.as_deref().unwrap_or(&opts.base);
    let mut variant = SimConfig::load(Some(file), &opts.sets)?;
    if !opts.variant_sets.is_empty() {
        let mut sets = opts.sets.clone();
        sets.extend(opts.variant_sets.iter().cloned());
        // Blame the variant's own changes on --variant-set (the shared ones passed above).
        variant = SimConfig::load(Some(file), &sets).map_err(|e| match e {
            ConfigError::Key {
                origin,
                key,
                message,
            } if origin == "--set" => ConfigError::Key {
                origin: "--variant-set".into(),
                key,
                message,
            },
            other => other,
        })?;
    }
    Ok((base, variant))
}

/// How the variant differs from the base, in words: the keys it changes (as `--set` would
/// write them) and whether its interventions differ — or that it is the base itself.
pub fn differences(base: &SimConfig, variant: &SimConfig) -> String {
    let mut parts = crate::sim::config::shipped::changed_sets(base, variant);
    if base.interventions != variant.interventions {
        let names: Vec<String> = variant
            .interventions
            .iter()
            .enumerate()
            .map(|(i, iv)| iv.display_name(i))
            .collect();
        parts.push(if names.is_empty() {
            "no interventions (the base has some)".into()
        } else {
            format!("interventions: {}", names.join(", "))
        });
    }
    for (name, section) in &variant.extensions {
        if base.extensions.get(name) != Some(section) {
            parts.push(format!("[extensions.{name}] {section}"));
        }
    }
    for name in base.extensions.keys() {
        if !variant.extensions.contains_key(name) {
            parts.push(format!("no [extensions.{name}]"));
        }
    }
    if parts.is_empty() {
        "nothing: the variant is the base, so every difference is 0".into()
    } else {
        parts.join("; ")
    }
}

/// How the variant of `opts` differs from its base ([`differences`]).
pub fn describe(opts: &CompareOptions) -> Result<String> {
    let (base, variant) = configs(opts)?;
    Ok(differences(&base, &variant))
}

/// Plans every seed under both.
pub fn plan(opts: &CompareOptions) -> Result<Vec<Job>> {
    let (base, variant) = configs(opts)?;
    plan_for(opts, &base, &variant)
}

/// Every seed under `base` and `variant`.
fn plan_for(opts: &CompareOptions, base: &SimConfig, variant: &SimConfig) -> Result<Vec<Job>> {
    let mut jobs = Vec::new();
    for k in 0..opts.seeds {
        for (name, config) in [("base", base), ("variant", variant)] {
            jobs.push(seed_job(
                name,
                config,
                opts.base_seed,
                k,
                opts.duration,
                &opts.out,
            )?);
        }
    }
    Ok(jobs)
}

/// Runs a comparison and writes `comparison.csv` and its plots.
pub fn run(opts: &CompareOptions) -> Result<CompareReport> {
    if opts.seeds < 2 {
        bail!("--seeds must be at least 2 (a confidence interval needs two pairs)");
    }
    let (base, variant) = configs(opts)?;
    let jobs = plan_for(opts, &base, &variant)?;
    crate::run::output::create_folder(&opts.out)?;
    let outcomes = execute(&jobs, opts.jobs, opts.progress, opts.stop.clone());
    let mut report = CompareReport {
        differences: differences(&base, &variant),
        ..Default::default()
    };
    report.runs = Runs::of(&jobs, &outcomes);
    let (rows, written) = write_results(&opts.out, &jobs)?;
    report.rows = rows;
    report.written = written;
    Ok(report)
}

/// One side's completed runs by seed (`None` where not complete).
type Side = Vec<Option<(RunRecord, Series)>>;

fn read_side(jobs: &[Job], side: &str) -> Side {
    jobs.iter()
        .filter(|j| j.scenario == side)
        .map(|j| {
            if !is_complete(&j.dir) {
                return None;
            }
            let rec = read_run(&j.dir, &j.scenario, &j.label, 0.0).ok()?;
            let series = Series::read(&j.dir.join("metrics.csv")).ok()?;
            Some((rec, series))
        })
        .collect()
}

/// `comparison.csv` and the plots from the completed pairs.
fn write_results(out: &Path, jobs: &[Job]) -> Result<(Vec<Comparison>, Vec<PathBuf>)> {
    let (base, variant) = (read_side(jobs, "base"), read_side(jobs, "variant"));
    // Only seeds where both runs completed.
    let both: Vec<usize> = (0..base.len())
        .filter(|&k| base[k].is_some() && variant.get(k).is_some_and(Option::is_some))
        .collect();
    let values = |side: &Side, m: &str| -> Vec<Option<f64>> {
        both.iter()
            .map(|&k| side[k].as_ref().and_then(|(r, _)| r.get(m)))
            .collect()
    };
    let rows: Vec<Comparison> = COMPARED
        .iter()
        .filter_map(|m| compare(m, &values(&base, m), &values(&variant, m)))
        .collect();
    let csv = out.join("comparison.csv");
    std::fs::write(&csv, comparison_csv(&rows))
        .with_context(|| format!("cannot write {}", csv.display()))?;
    let mut written = vec![csv];
    if both.len() >= 2 {
        let series = |side: &Side| -> Vec<Series> {
            both.iter()
                .filter_map(|&k| side[k].as_ref().map(|(_, s)| s.clone()))
                .collect()
        };
        let diffs: Vec<(String, Vec<Option<f64>>)> = COMPARED
            .iter()
            .map(|m| {
                let d = values(&base, m)
                    .into_iter()
                    .zip(values(&variant, m))
                    .map(|(b, v)| Some(v? - b?))
                    .collect();
                (m.to_string(), d)
            })
            .collect();
        let paired: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.measure.clone(),
                    r.paired.mean,
                    r.paired.ci_low,
                    r.paired.ci_high,
                )
            })
            .collect();
        written.extend(plot_comparison(
            &out.join("plots"),
            &series(&base),
            &series(&variant),
            &paired,
            &diffs,
        )?);
    }
    Ok((rows, written))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_runs_differ_by_exactly_zero() {
        let xs: Vec<Option<f64>> = [0.3, 0.5, 0.41, 0.7].into_iter().map(Some).collect();
        let c = compare("attack_rate", &xs, &xs).unwrap();
        assert_eq!(c.paired.mean, 0.0);
        assert_eq!((c.paired.ci_low, c.paired.ci_high), (0.0, 0.0));
        assert!(c.unpaired.0 < 0.0 && c.unpaired.1 > 0.0);
        assert!(c.variance_reduction.is_infinite());
    }

    #[test]
    fn paired_and_unpaired_intervals_match_hand_computed_values() {
        // base 1, 2, 3, 4; variant 2, 2.5, 4, 5.5: differences 1, 0.5, 1, 1.5.
        let b: Vec<Option<f64>> = [1.0, 2.0, 3.0, 4.0].into_iter().map(Some).collect();
        let v: Vec<Option<f64>> = [2.0, 2.5, 4.0, 5.5].into_iter().map(Some).collect();
        let c = compare("x", &b, &v).unwrap();
        assert_eq!(c.pairs, 4);
        assert!((c.paired.mean - 1.0).abs() < 1e-12);
        // sd of differences = sqrt(1/6); t(3) = 3.182446; half = 0.649614 (scipy).
        assert!((c.paired.ci_high - 1.649614).abs() < 1e-5, "{:?}", c.paired);
        // Welch: s_b² = 5/3, s_v² = 2.5 → se = 1.020621, df = 5.769231; half = 2.521785.
        let half = 0.5 * (c.unpaired.1 - c.unpaired.0);
        assert!((half - 2.521785).abs() < 1e-5, "{half}");
        // (5/3 + 2.5) / (1/6) = 25.
        assert!((c.variance_reduction - 25.0).abs() < 1e-9);
    }

    #[test]
    fn pairs_with_an_undefined_side_are_left_out() {
        let b = [Some(1.0), None, Some(3.0), Some(5.0)];
        let v = [Some(2.0), Some(9.0), None, Some(6.0)];
        let c = compare("x", &b, &v).unwrap();
        assert_eq!(c.pairs, 2);
        assert_eq!(c.paired.mean, 1.0);
        assert!(compare("x", &b[..2], &v[..2]).is_none());
    }
}
