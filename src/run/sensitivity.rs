//! Which swept parameter matters: partial rank correlation coefficients (PRCC, the standard
//! companion of Latin-hypercube sampling; Marino et al. 2008) of every parameter against every
//! output, with two-sided p-values, and binned-median trends for the scatter plots. Pure
//! functions with tests on synthetic data, and the writer of `sensitivity.csv`.
//!
//! PRCC of parameter `x_j` and output `y`: rank-transform every column (ties share their mean
//! rank); regress the ranks of `x_j` and of `y` on the ranks of the other parameters (least
//! squares with an intercept); the PRCC is the Pearson correlation of the two residuals — the
//! monotone association of `x_j` and `y` with the other parameters' effects removed. Its
//! p-value uses `t = r·sqrt((n − 2 − p)/(1 − r²))` with `n − 2 − p` degrees of freedom, `p`
//! the number of other parameters. Samples where an output is undefined (e.g. a run never
//! eradicated the disease) are left out of that output's coefficients.

use std::path::Path;

use anyhow::{Context, Result};

use super::results::RunRecord;
use crate::sim::stats::{pearson, ranks, residuals, t_two_sided_p};

/// The outputs analysed, when the runs define them.
pub const OUTPUTS: [&str; 6] = [
    "peak_fraction",
    "peak_time_s",
    "attack_rate",
    "eradication_time_s",
    "final_dead",
    "r0",
];

/// One partial rank correlation coefficient.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prcc {
    /// The coefficient, −1..1.
    pub r: f64,
    /// Two-sided p-value (`None` without enough samples).
    pub p: Option<f64>,
    /// Samples used.
    pub n: usize,
}

/// The PRCC of each of `params` (columns) against `output`, over the samples where `output` is
/// defined.
pub fn prcc(params: &[Vec<f64>], output: &[Option<f64>]) -> Vec<Option<Prcc>> {
    let keep: Vec<usize> = (0..output.len())
        .filter(|&i| output[i].is_some_and(f64::is_finite))
        .collect();
    let y = ranks(&keep.iter().map(|&i| output[i].unwrap()).collect::<Vec<_>>());
    let xs: Vec<Vec<f64>> = params
        .iter()
        .map(|col| ranks(&keep.iter().map(|&i| col[i]).collect::<Vec<_>>()))
        .collect();
    let n = keep.len();
    (0..xs.len())
        .map(|j| {
            let others: Vec<&[f64]> = (0..xs.len())
                .filter(|&k| k != j)
                .map(|k| xs[k].as_slice())
                .collect();
            let r = pearson(&residuals(&xs[j], &others), &residuals(&y, &others))?;
            let df = n as f64 - 2.0 - others.len() as f64;
            let p = (df >= 1.0).then(|| {
                let t = r * (df / (1.0 - r * r).max(1e-300)).sqrt();
                t_two_sided_p(t, df)
            });
            Some(Prcc { r, p, n })
        })
        .collect()
}

/// The PRCC table: for each output the runs define, each parameter's coefficient.
pub type Table = Vec<(String, Vec<(String, Option<Prcc>, Option<f64>)>)>;

/// PRCC (and, for comparison, the plain Spearman correlation) of every parameter against every
/// output the records define.
pub fn table(params: &[(String, Vec<f64>)], records: &[RunRecord]) -> Table {
    let cols: Vec<Vec<f64>> = params.iter().map(|p| p.1.clone()).collect();
    OUTPUTS
        .iter()
        .filter_map(|&out| {
            let y: Vec<Option<f64>> = records.iter().map(|r| r.get(out)).collect();
            let defined: Vec<f64> = y.iter().flatten().copied().collect();
            // Too few values, or the same in every run (e.g. no deaths in an SIR model).
            if defined.len() < 3 || defined.iter().all(|v| *v == defined[0]) {
                return None;
            }
            let coefficients = prcc(&cols, &y);
            let rows = params
                .iter()
                .zip(coefficients)
                .map(|((name, col), c)| {
                    let (a, b): (Vec<f64>, Vec<f64>) = col
                        .iter()
                        .zip(&y)
                        .filter_map(|(x, y)| y.map(|y| (*x, y)))
                        .unzip();
                    (name.clone(), c, pearson(&ranks(&a), &ranks(&b)))
                })
                .collect();
            Some((out.to_string(), rows))
        })
        .collect()
}

/// Writes the table as `sensitivity.csv`: output, parameter, n (samples), replicates (runs
/// averaged per sample), prcc, p_value, spearman.
pub fn write_csv(path: &Path, t: &Table, replicates: usize) -> Result<()> {
    let mut text = String::from("output,parameter,n,replicates,prcc,p_value,spearman\n");
    let cell = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.6}"));
    for (output, rows) in t {
        for (param, c, spearman) in rows {
            text.push_str(&format!(
                "{output},{param},{},{replicates},{},{},{}\n",
                c.map_or(0, |c| c.n),
                cell(c.map(|c| c.r)),
                c.and_then(|c| c.p)
                    .map_or(String::new(), |p| format!("{p:.3e}")),
                cell(*spearman)
            ));
        }
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    /// 200 samples of three independent uniform parameters (as a Latin hypercube gives), and
    /// one correlated with the first.
    fn inputs(seed: u64) -> (Vec<Vec<f64>>, Vec<f64>) {
        let mut rng = Pcg64::seed_from_u64(seed);
        let n = 200;
        let mut cols: Vec<Vec<f64>> = (0..3)
            .map(|_| (0..n).map(|_| rng.random::<f64>()).collect())
            .collect();
        let confounded: Vec<f64> = cols[0]
            .iter()
            .map(|x| x + 0.15 * rng.random::<f64>())
            .collect();
        cols.push(confounded);
        let noise = (0..n).map(|_| rng.random::<f64>() - 0.5).collect();
        (cols, noise)
    }

    #[test]
    fn prcc_finds_a_monotone_relation_and_a_null() {
        let (cols, noise) = inputs(1);
        // y rises steeply and non-linearly with x0, a little with x1, not at all with x2.
        let y: Vec<Option<f64>> = (0..200)
            .map(|i| Some((6.0 * cols[0][i]).exp() + 40.0 * cols[1][i] + 10.0 * noise[i]))
            .collect();
        let c = prcc(&cols[..3], &y);
        let (x0, x1, x2) = (c[0].unwrap(), c[1].unwrap(), c[2].unwrap());
        assert!(x0.r > 0.9 && x0.p.unwrap() < 1e-10, "{x0:?}");
        assert!(x1.r > 0.3 && x1.p.unwrap() < 1e-3, "{x1:?}");
        assert!(x2.r.abs() < 0.15 && x2.p.unwrap() > 0.05, "{x2:?}");
        assert_eq!(x0.n, 200);
        // Undefined outputs are left out.
        let mut holes = y.clone();
        holes[3] = None;
        assert_eq!(prcc(&cols[..3], &holes)[0].unwrap().n, 199);
    }

    #[test]
    fn prcc_is_not_fooled_by_a_confounded_pair() {
        // y depends on x0 only; x3 follows x0. Plain rank correlation sees x3 as important,
        // PRCC with both in the model gives x3 nothing.
        let (cols, noise) = inputs(2);
        let y: Vec<Option<f64>> = (0..200)
            .map(|i| Some(cols[0][i] + 0.05 * noise[i]))
            .collect();
        let plain: Vec<f64> = y.iter().map(|v| v.unwrap()).collect();
        let spearman = pearson(&ranks(&cols[3]), &ranks(&plain)).unwrap();
        assert!(spearman > 0.9, "plain correlation is misled: {spearman}");
        let c = prcc(&[cols[0].clone(), cols[3].clone()], &y);
        assert!(c[0].unwrap().r > 0.9);
        let x3 = c[1].unwrap();
        assert!(x3.r.abs() < 0.2 && x3.p.unwrap() > 0.01, "{x3:?}");
    }
}
