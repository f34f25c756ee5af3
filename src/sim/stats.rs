//! The statistics the project needs that no library gives it, as pure functions: a sample's
//! mean, standard deviation and 95 % intervals ([`Estimate`] across runs with Student's t,
//! [`Spread`] within a run with its quantiles), linear-interpolation quantiles and binned
//! quantile trends, ranks, Pearson correlation, and the least-squares residuals of partial rank
//! correlation. Distributions (Gamma, Student's t, the incomplete Beta) come from `statrs`.
//! No systems live here.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Gamma, StudentsT};

/// The `p` quantile of ascending, non-empty `sorted`, interpolating linearly between ranks.
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    let pos = p * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Mean and sample standard deviation (n − 1; `None` for one value) of a non-empty sample.
fn mean_sd(xs: &[f64]) -> (f64, Option<f64>) {
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n as f64;
    let sd = (n > 1)
        .then(|| (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt());
    (mean, sd)
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (NaN for none).
pub fn t_975(df: usize) -> f64 {
    t_975_real(df as f64)
}

/// The 0.975 quantile of Student's t with `df` (not necessarily whole, as in Welch's
/// interval) degrees of freedom (NaN for none).
pub fn t_975_real(df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |t| t.inverse_cdf(0.975))
}

/// Two-sided p-value of Student's t statistic `t` with `df` degrees of freedom:
/// `I_{df/(df+t²)}(df/2, 1/2)`.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    statrs::function::beta::beta_reg(df / 2.0, 0.5, df / (df + t * t))
}

/// The `q` quantile of a Gamma distribution of shape `shape` and scale 1.
pub fn gamma_quantile(q: f64, shape: f64) -> f64 {
    Gamma::new(shape, 1.0).map_or(f64::NAN, |g| g.inverse_cdf(q))
}

/// Mean, sample standard deviation and the 95 % confidence interval of the mean (Student's t),
/// of a sample of runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Values used.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); NaN for one value.
    pub sd: f64,
    /// Lower end of the 95 % CI of the mean; NaN for one value.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
}

/// The [`Estimate`] of the finite values of `xs` (`None` when there are none).
pub fn estimate(xs: impl IntoIterator<Item = f64>) -> Option<Estimate> {
    let v: Vec<f64> = xs.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    let n = v.len();
    let (mean, sd) = mean_sd(&v);
    let Some(sd) = sd else {
        return Some(Estimate {
            n,
            mean,
            sd: f64::NAN,
            ci_low: f64::NAN,
            ci_high: f64::NAN,
        });
    };
    let half = t_975(n - 1) * sd / (n as f64).sqrt();
    Some(Estimate {
        n,
        mean,
        sd,
        ci_low: mean - half,
        ci_high: mean + half,
    })
}

/// A sample within one run described: mean, spread and quantiles.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// Size.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// Standard deviation (n − 1; 0 for one value).
    pub sd: f64,
    /// 95 % confidence interval of the mean (normal approximation, clipped at 0: every
    /// quantity described this way is non-negative).
    pub ci95: [f64; 2],
    /// 5th percentile.
    pub p05: f64,
    /// Median.
    pub median: f64,
    /// 95th percentile.
    pub p95: f64,
}

/// The [`Spread`] of `xs` (`None` when empty).
pub fn spread(mut xs: Vec<f64>) -> Option<Spread> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    let (mean, sd) = mean_sd(&xs);
    let sd = sd.unwrap_or(0.0);
    let half = 1.96 * sd / (n as f64).sqrt();
    let q = |p: f64| quantile(&xs, p);
    Some(Spread {
        n,
        mean,
        sd,
        ci95: [(mean - half).max(0.0), mean + half],
        p05: q(0.05),
        median: q(0.5),
        p95: q(0.95),
    })
}

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

/// Equal-count bins of `pts` by x (about `bins` of them, at least 3 points each): each bin's
/// median x, and the 25th, 50th and 75th percentiles of its y.
pub fn binned_trend(pts: &[(f64, f64)], bins: usize) -> Vec<(f64, f64, f64, f64)> {
    let mut sorted = pts.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let bins = bins.min(sorted.len() / 3).max(1);
    if sorted.len() < 3 {
        return Vec::new();
    }
    (0..bins)
        .map(|b| {
            let chunk = &sorted[b * sorted.len() / bins..(b + 1) * sorted.len() / bins];
            let mut xs: Vec<f64> = chunk.iter().map(|p| p.0).collect();
            let mut ys: Vec<f64> = chunk.iter().map(|p| p.1).collect();
            xs.sort_by(f64::total_cmp);
            ys.sort_by(f64::total_cmp);
            let q = quantile;
            (q(&xs, 0.5), q(&ys, 0.25), q(&ys, 0.5), q(&ys, 0.75))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_of_known_numbers() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7, sd 2.13809.
        let e = estimate([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(e.n, 8);
        assert!((e.mean - 5.0).abs() < 1e-12);
        assert!((e.sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        // CI half-width: t(7) = 2.3646 × 2.13809 / √8 = 1.78753 (tables: t(7) = 2.365).
        let half = t_975(7) * (32.0f64 / 7.0).sqrt() / 8f64.sqrt();
        assert!((e.ci_high - 5.0 - half).abs() < 1e-9 && (5.0 - e.ci_low - half).abs() < 1e-9);
        assert!((half - 1.78753).abs() < 1e-4, "{half}");
    }

    #[test]
    fn estimate_edge_cases() {
        assert_eq!(estimate(std::iter::empty()), None);
        assert_eq!(estimate([f64::NAN]), None);
        let one = estimate([3.0, f64::NAN]).unwrap();
        assert_eq!((one.n, one.mean), (1, 3.0));
        assert!(one.sd.is_nan());
        let same = estimate([1.5, 1.5, 1.5]).unwrap();
        assert_eq!((same.sd, same.ci_low, same.ci_high), (0.0, 1.5, 1.5));
    }

    #[test]
    fn distributions_match_the_tables() {
        // Student's t, two-sided 95 %: 12.706 (1 df), 2.228 (10), 2.042 (30), 2.0211 (40),
        // 1.9799 (120).
        for (df, t) in [
            (1, 12.706),
            (10, 2.228),
            (30, 2.042),
            (40, 2.0211),
            (120, 1.9799),
        ] {
            assert!((t_975(df) - t).abs() < 1e-3, "df {df}: {}", t_975(df));
        }
        assert!(t_975(0).is_nan());
        // t = 2.228 with 10 df is the two-sided 5 % point; 2.0 with 1 df gives p = 0.2952.
        assert!((t_two_sided_p(2.228, 10.0) - 0.05).abs() < 2e-4);
        assert!((t_two_sided_p(2.0, 1.0) - 0.295_167).abs() < 1e-5);
        assert!((t_two_sided_p(0.0, 5.0) - 1.0).abs() < 1e-12);
        // Gamma: shape 1 is the exponential, its q quantile −ln(1 − q); χ²(10) = Gamma(5,
        // scale 2): 2.5 % and 97.5 % points 3.2470 and 20.4832.
        assert!((gamma_quantile(0.975, 1.0) - 40f64.ln()).abs() < 1e-9);
        assert!((2.0 * gamma_quantile(0.025, 5.0) - 3.2470).abs() < 1e-3);
        assert!((2.0 * gamma_quantile(0.975, 5.0) - 20.4832).abs() < 1e-3);
    }

    #[test]
    fn ranks_share_ties() {
        assert_eq!(ranks(&[3.0, 1.0, 2.0, 2.0]), [4.0, 1.0, 2.5, 2.5]);
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
