//! Statistics for aggregating runs: mean, sample standard deviation and the 95 % confidence
//! interval of the mean (Student's t). Pure functions with hand-checked tests.

/// Two-sided 95 % quantiles of Student's t for 1..=30 degrees of freedom.
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The 0.975 quantile of Student's t with `df` degrees of freedom (table up to 30, then a
/// Cornish–Fisher expansion around the normal quantile, within 0.001 of the exact value).
pub fn t_975(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T_975[df - 1],
        _ => {
            let z: f64 = 1.959_964;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// Mean, sample standard deviation and 95 % confidence interval of a sample.
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

/// Estimates from the finite values of `xs` (None when there are none).
pub fn estimate(xs: impl IntoIterator<Item = f64>) -> Option<Estimate> {
    let v: Vec<f64> = xs.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some(Estimate {
            n,
            mean,
            sd: f64::NAN,
            ci_low: f64::NAN,
            ci_high: f64::NAN,
        });
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let sd = var.sqrt();
    let half = t_975(n - 1) * sd / (n as f64).sqrt();
    Some(Estimate {
        n,
        mean,
        sd,
        ci_low: mean - half,
        ci_high: mean + half,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_numbers() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7, sd 2.13809.
        let e = estimate([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(e.n, 8);
        assert!((e.mean - 5.0).abs() < 1e-12);
        assert!((e.sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        // CI half-width: t(7) = 2.365 × 2.13809 / √8 = 1.78776.
        let half = 2.365 * (32.0f64 / 7.0).sqrt() / 8f64.sqrt();
        assert!((e.ci_high - 5.0 - half).abs() < 1e-9 && (5.0 - e.ci_low - half).abs() < 1e-9);
        assert!((half - 1.78776).abs() < 1e-4);
    }

    #[test]
    fn edge_cases() {
        assert_eq!(estimate(std::iter::empty()), None);
        assert_eq!(estimate([f64::NAN]), None);
        let one = estimate([3.0, f64::NAN]).unwrap();
        assert_eq!((one.n, one.mean), (1, 3.0));
        assert!(one.sd.is_nan());
        let same = estimate([1.5, 1.5, 1.5]).unwrap();
        assert_eq!((same.sd, same.ci_low, same.ci_high), (0.0, 1.5, 1.5));
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(t_975(1), 12.706);
        assert_eq!(t_975(30), 2.042);
        // Exact values: t(40) = 2.0211, t(120) = 1.9799.
        assert!((t_975(40) - 2.0211).abs() < 1e-3);
        assert!((t_975(120) - 1.9799).abs() < 1e-3);
        assert!(t_975(0).is_nan());
    }
}
