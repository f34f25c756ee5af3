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
use crate::sim::reproduction::{ln_gamma, quantile};

/// The outputs analysed, when the runs define them.
pub const OUTPUTS: [&str; 6] = [
    "peak_fraction",
    "peak_time_s",
    "attack_rate",
    "eradication_time_s",
    "final_dead",
    "r0",
];

/// Ranks 1..=n of `xs`, ties sharing the mean of their ranks.
pub fn ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut out = vec![0.0; xs.len()];
    let mut k = 0;
    while k < order.len() {
        let mut end = k + 1;
        while end < order.len() && xs[order[end]] == xs[order[k]] {
            end += 1;
        }
        // Ranks k+1 ..= end share their mean.
        let rank = (k + 1 + end) as f64 / 2.0;
        for &i in &order[k..end] {
            out[i] = rank;
        }
        k = end;
    }
    out
}

/// Pearson correlation (`None` if either side is constant or there are fewer than 3 values).
pub fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len();
    if n < 3 || b.len() != n {
        return None;
    }
    let (ma, mb) = (
        a.iter().sum::<f64>() / n as f64,
        b.iter().sum::<f64>() / n as f64,
    );
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma).powi(2);
        sbb += (y - mb).powi(2);
    }
    let scale = (saa * sbb).sqrt();
    (scale > 1e-12 * (saa + sbb).max(1e-300)).then(|| (sab / scale).clamp(-1.0, 1.0))
}

/// Residuals of `y` after least squares on `xs` (each a column) and an intercept.
pub fn residuals(y: &[f64], xs: &[&[f64]]) -> Vec<f64> {
    let n = y.len();
    let k = xs.len() + 1;
    let col = |c: usize, i: usize| if c == 0 { 1.0 } else { xs[c - 1][i] };
    // Normal equations A·β = b, A = XᵀX.
    let mut a = vec![vec![0.0; k + 1]; k];
    for (r, row) in a.iter_mut().enumerate() {
        for (c, cell) in row.iter_mut().enumerate() {
            *cell = if c < k {
                (0..n).map(|i| col(r, i) * col(c, i)).sum()
            } else {
                (0..n).map(|i| col(r, i) * y[i]).sum()
            };
        }
    }
    let beta = solve(a);
    (0..n)
        .map(|i| y[i] - (0..k).map(|c| beta[c] * col(c, i)).sum::<f64>())
        .collect()
}

/// Solves an augmented system by Gaussian elimination with partial pivoting; a singular
/// direction (a column that repeats another) gets coefficient 0.
fn solve(mut a: Vec<Vec<f64>>) -> Vec<f64> {
    let k = a.len();
    let scale = a
        .iter()
        .flat_map(|r| r[..k].iter())
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let mut pivot_of = vec![None; k];
    let mut row = 0;
    for c in 0..k {
        let Some(p) = (row..k).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs())) else {
            break;
        };
        if a[p][c].abs() <= 1e-10 * scale {
            continue;
        }
        a.swap(row, p);
        let pivot = a[row].clone();
        for (i, line) in a.iter_mut().enumerate() {
            if i != row {
                let f = line[c] / pivot[c];
                for (x, p) in line[c..].iter_mut().zip(&pivot[c..]) {
                    *x -= f * p;
                }
            }
        }
        pivot_of[c] = Some(row);
        row += 1;
    }
    (0..k)
        .map(|c| pivot_of[c].map_or(0.0, |r| a[r][k] / a[r][c]))
        .collect()
}

/// The regularised incomplete beta function `I_x(a, b)` (continued fraction, modified Lentz).
pub fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The fraction converges fast for x < (a + 1)/(a + b + 2); use the symmetry otherwise.
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(1.0 - x, b, a);
    }
    let tiny = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..500 {
        let m = m as f64;
        let m2 = 2.0 * m;
        for aa in [
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ] {
            d = 1.0 + aa * d;
            if d.abs() < tiny {
                d = tiny;
            }
            c = 1.0 + aa / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    front * h / a
}

/// Two-sided p-value of Student's t statistic `t` with `df` degrees of freedom.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    incomplete_beta(df / (df + t * t), df / 2.0, 0.5)
}

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

/// Equal-count bins of `pts` by x (about `bins` of them, at least 3 points each): each bin's
/// median x, and the 25th, 50th and 75th percentiles of its y.
pub fn binned_trend(pts: &[(f64, f64)], bins: usize) -> Vec<(f64, f64, f64, f64)> {
    let mut sorted = pts.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let bins = bins.min(sorted.len() / 3).max(1);
    if sorted.len() < 3 {
        return Vec::new();
    }
    let q = quantile;
    (0..bins)
        .map(|b| {
            let chunk = &sorted[b * sorted.len() / bins..(b + 1) * sorted.len() / bins];
            let mut xs: Vec<f64> = chunk.iter().map(|p| p.0).collect();
            let mut ys: Vec<f64> = chunk.iter().map(|p| p.1).collect();
            xs.sort_by(f64::total_cmp);
            ys.sort_by(f64::total_cmp);
            (q(&xs, 0.5), q(&ys, 0.25), q(&ys, 0.5), q(&ys, 0.75))
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

/// Writes the table as `sensitivity.csv`: output, parameter, n, prcc, p_value, spearman.
pub fn write_csv(path: &Path, t: &Table) -> Result<()> {
    let mut text = String::from("output,parameter,n,prcc,p_value,spearman\n");
    let cell = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.6}"));
    for (output, rows) in t {
        for (param, c, spearman) in rows {
            text.push_str(&format!(
                "{output},{param},{},{},{},{}\n",
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

    #[test]
    fn ranks_share_ties() {
        assert_eq!(ranks(&[3.0, 1.0, 2.0, 2.0]), [4.0, 1.0, 2.5, 2.5]);
    }

    #[test]
    fn t_p_values_match_tables() {
        // t = 2.228 with 10 df is the two-sided 5 % point; 2.0 with 1 df gives p = 0.2952.
        assert!((t_two_sided_p(2.228, 10.0) - 0.05).abs() < 2e-4);
        assert!((t_two_sided_p(2.0, 1.0) - 0.295_167).abs() < 1e-5);
        assert!((t_two_sided_p(0.0, 5.0) - 1.0).abs() < 1e-12);
        // I_x(1, 1) = x; I_x(a, 1) = x^a.
        assert!((incomplete_beta(0.3, 1.0, 1.0) - 0.3).abs() < 1e-12);
        assert!((incomplete_beta(0.6, 3.0, 1.0) - 0.216).abs() < 1e-12);
    }

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

    #[test]
    fn trend_bins_hold_equal_counts() {
        let pts: Vec<(f64, f64)> = (0..30).map(|i| (i as f64, (i % 10) as f64)).collect();
        let t = binned_trend(&pts, 3);
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].0, 4.5);
        assert_eq!((t[0].1, t[0].2, t[0].3), (2.25, 4.5, 6.75));
    }
}
