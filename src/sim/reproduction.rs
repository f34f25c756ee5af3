//! Reproduction numbers from the transmission record (docs/model.md §8), as pure functions:
//!
//! - **R0** from the first generation: the mean number of boids each initially infected boid
//!   infected, over those whose infection has ended (their count is final).
//! - **Serial interval** (here equal to the generation time: the model has no symptom onset):
//!   infectee's infection time − infector's infection time, over every contact infection.
//! - **Case reproduction number** R_c(t): mean secondary infections of the infections that
//!   began in the window `[t − W, t)`, reported only when every one of them has ended.
//! - **Instantaneous reproduction number** R_t (Cori et al. 2013): incidence counted in bins of `Δ
//!   = W / 5`; `Λ_t = Σ_{k≥0} I_{t−k} w_k` with `w_k` the measured share of infector→infectee pairs
//!   `k` bins apart; over the window of the 5 bins ending at `t`, the Gamma(1, 5) prior (mean 5, sd
//!   5) gives the posterior Gamma(1 + Σ I_local, 1 / (1/5 + Σ Λ)), whose mean and 2.5 / 97.5 %
//!   quantiles are reported for windows with `Σ Λ ≥ 1`. Local incidence counts contact infections;
//!   initial, spontaneous and born-infected cases are imported: they infect (they are in `Λ`) but
//!   are not caused by the boids already infected.

use serde::Serialize;

use crate::sim::epidemic::Cause;
use crate::sim::stats::{Spread, gamma_quantile, spread};
use crate::sim::transmission::Transmission;

/// Bins per R_t window.
pub const BINS_PER_WINDOW: usize = 5;
/// R_t is reported only for windows holding at least this much infectiousness `Σ Λ` (one
/// expected infection at R = 1); below it the prior, not the data, sets the estimate.
pub const MIN_INFECTIOUSNESS: f64 = 1.0;
/// Shape of the Gamma prior of R_t (Cori et al.'s default: mean 5, sd 5).
pub const PRIOR_SHAPE: f64 = 1.0;
/// Scale of the Gamma prior of R_t.
pub const PRIOR_SCALE: f64 = 5.0;

/// R0 from the first generation: secondary infections of each ended initial infection.
pub fn first_generation_r0(records: &[Transmission]) -> Option<Spread> {
    spread(
        records
            .iter()
            .filter(|t| t.cause == Cause::Initial && t.end.is_some())
            .map(|t| t.secondary as f64)
            .collect(),
    )
}

/// Every contact infection's serial interval (= generation time), s.
pub fn serial_intervals(records: &[Transmission]) -> Vec<f64> {
    records
        .iter()
        .filter_map(|t| t.infector.map(|f| t.time_s - records[f.infection].time_s))
        .collect()
}

/// The bin of time `t` for bins of `width` (times on a bin edge belong to the later bin, up to
/// rounding well below a step).
fn bin_of(t: f64, width: f64) -> usize {
    (t / width + 1e-9).floor().max(0.0) as usize
}

/// `w_k`: the share of infector → infectee pairs whose infections are `k` bins of `width` apart.
pub fn interval_weights(records: &[Transmission], width: f64) -> Vec<f64> {
    let mut w: Vec<f64> = Vec::new();
    let mut n = 0usize;
    for t in records {
        if let Some(f) = t.infector {
            let k =
                bin_of(t.time_s, width).saturating_sub(bin_of(records[f.infection].time_s, width));
            if w.len() <= k {
                w.resize(k + 1, 0.0);
            }
            w[k] += 1.0;
            n += 1;
        }
    }
    w.iter_mut().for_each(|x| *x /= n.max(1) as f64);
    w
}

/// One row of `rt.csv`: the estimates over the window `[from_s, time_s)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RtRow {
    /// End of the window (and of the bin), s.
    pub time_s: f64,
    /// Start of the window, s.
    pub from_s: f64,
    /// Infections that began in the bin ending here.
    pub infections: u32,
    /// Of those, by contact.
    pub contact_infections: u32,
    /// Cori R_t: posterior mean and 95 % credible interval (`None` before any infectiousness).
    pub rt: Option<[f64; 3]>,
    /// R_c over the window (`None` unless every infection that began in it has ended).
    pub rc: Option<f64>,
    /// Infections that began in the window.
    pub window_infections: u32,
}

/// R_t and R_c every bin of `window / 5` seconds up to `until` (whole bins only).
pub fn reproduction_series(records: &[Transmission], window: f64, until: f64) -> Vec<RtRow> {
    let width = window / BINS_PER_WINDOW as f64;
    if width <= 0.0 || !width.is_finite() {
        return Vec::new();
    }
    let bins = (until / width + 1e-9).floor() as usize;
    let mut total = vec![0u32; bins];
    let mut local = vec![0u32; bins];
    // Per bin: infections that began in it, their secondaries, and how many are still open.
    let mut secondary = vec![0u64; bins];
    let mut open = vec![0u32; bins];
    for t in records {
        let b = bin_of(t.time_s, width);
        if b >= bins {
            continue;
        }
        total[b] += 1;
        local[b] += (t.cause == Cause::Contact) as u32;
        secondary[b] += t.secondary as u64;
        open[b] += t.end.is_none() as u32;
    }
    let w = interval_weights(records, width);
    let lambda: Vec<f64> = (0..bins)
        .map(|b| {
            (0..w.len().min(b + 1))
                .map(|k| total[b - k] as f64 * w[k])
                .sum()
        })
        .collect();
    (0..bins)
        .map(|b| {
            let first = (b + 1).saturating_sub(BINS_PER_WINDOW);
            let sum = |v: &[u32]| v[first..=b].iter().map(|&x| x as u64).sum::<u64>();
            let (n_local, n_total, n_open) = (sum(&local), sum(&total), sum(&open));
            let lam: f64 = lambda[first..=b].iter().sum();
            let rt = (lam >= MIN_INFECTIOUSNESS).then(|| {
                let shape = PRIOR_SHAPE + n_local as f64;
                let scale = 1.0 / (1.0 / PRIOR_SCALE + lam);
                [
                    shape * scale,
                    gamma_quantile(0.025, shape) * scale,
                    gamma_quantile(0.975, shape) * scale,
                ]
            });
            let n_secondary: u64 = secondary[first..=b].iter().sum();
            let rc = (n_total > 0 && n_open == 0).then(|| n_secondary as f64 / n_total as f64);
            RtRow {
                time_s: (b + 1) as f64 * width,
                from_s: first as f64 * width,
                infections: total[b],
                contact_infections: local[b],
                rt,
                rc,
                window_infections: n_total as u32,
            }
        })
        .collect()
}

/// The mean-field R0 of a well-mixed population: an infector with per-second infection
/// probability `p` (hazard `λ = −ln(1 − p)`) and contact radius `r`, among `n` boids spread
/// uniformly over area `area`, meets on average `n·π r²/area` of them at any moment and stays
/// infectious `t` seconds: `R0 = λ · (π r² / area) · n · t` (`None` when `p ≥ 1`).
pub fn well_mixed_r0(p: f64, r: f64, area: f64, n: f64, t: f64) -> Option<f64> {
    (p < 1.0 && area > 0.0 && t.is_finite())
        .then(|| -(1.0 - p).ln() * std::f64::consts::PI * r * r / area * n * t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::swarm::Swarm;
    use crate::sim::transmission::{Outcome, TransmissionLog};
    use bevy::math::Vec2;

    /// Two initial cases at 0 s; each infects two at 1.5 s; each of those infects two at
    /// 2.5 s. Every infection has ended unless `open` names a boid still infected.
    fn chain(open: Option<u64>) -> TransmissionLog {
        let mut log = TransmissionLog::default();
        let n = Swarm::Normal;
        let mut id = 0;
        let mut next = |log: &mut TransmissionLog, t: f64, by: Option<u64>| {
            id += 1;
            let cause = if by.is_some() {
                Cause::Contact
            } else {
                Cause::Initial
            };
            log.begin(t, by.map(|b| (b, n, Vec2::ZERO)), id, n, Vec2::ZERO, cause);
            id
        };
        let roots = [next(&mut log, 0.0, None), next(&mut log, 0.0, None)];
        let mut second = Vec::new();
        for r in roots {
            second.push(next(&mut log, 1.5, Some(r)));
            second.push(next(&mut log, 1.5, Some(r)));
        }
        for s in second {
            next(&mut log, 2.5, Some(s));
            next(&mut log, 2.5, Some(s));
        }
        for b in 1..=14 {
            if Some(b) != open {
                log.end(b, 4.0, Outcome::Recovered);
            }
        }
        log
    }

    #[test]
    fn r0_and_serial_interval_of_a_constructed_chain() {
        let log = chain(None);
        let r0 = first_generation_r0(&log.records).unwrap();
        assert_eq!((r0.n, r0.mean, r0.sd), (2, 2.0, 0.0));
        // 4 pairs 1.5 s apart and 8 pairs 1.0 s apart.
        let si = spread(serial_intervals(&log.records)).unwrap();
        assert_eq!(si.n, 12);
        assert!((si.mean - 14.0 / 12.0).abs() < 1e-12);
        assert_eq!((si.median, si.p95), (1.0, 1.5));
        // An initial infection still going on is left out of R0.
        let r0 = first_generation_r0(&chain(Some(1)).records).unwrap();
        assert_eq!(r0.n, 1);
    }

    #[test]
    fn cori_and_case_reproduction_of_a_constructed_chain() {
        // W = 5 s: bins of 1 s. Incidence 2, 4, 8 in bins 0, 1, 2; every pair is one bin
        // apart, so w = [0, 1] and Λ = [0, 2, 4].
        let log = chain(None);
        assert_eq!(interval_weights(&log.records, 1.0), [0.0, 1.0]);
        let rows = reproduction_series(&log.records, 5.0, 4.0);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].rt, None, "no infectiousness before the first bin");
        // Bin 1: shape 1 + 4, rate 1/5 + 2 → mean 5 / 2.2.
        let [mean, lo, hi] = rows[1].rt.unwrap();
        assert!((mean - 5.0 / 2.2).abs() < 1e-12);
        assert!((lo - gamma_quantile(0.025, 5.0) / 2.2).abs() < 1e-12 && lo < mean && mean < hi);
        // Bin 2: window holds bins 0..=2: shape 1 + 12, rate 1/5 + 6.
        assert!((rows[2].rt.unwrap()[0] - 13.0 / 6.2).abs() < 1e-12);
        // R_c over [0, 3): 14 infections, 12 secondary infections.
        assert_eq!(rows[2].window_infections, 14);
        assert_eq!(rows[2].rc, Some(12.0 / 14.0));
        assert_eq!(rows[1].rc, Some(2.0), "[0, 2): 6 infections, 12 secondary");
        assert_eq!((rows[2].infections, rows[2].contact_infections), (8, 8));
        // One infection of the window still going on: no R_c for any window holding it.
        let rows = reproduction_series(&chain(Some(14)).records, 5.0, 4.0);
        assert_eq!((rows[1].rc, rows[2].rc), (Some(2.0), None));
    }
}
