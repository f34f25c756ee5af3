//! Reproduction numbers from the transmission record (docs/model.md §8), as pure functions:
//!
//! - **R0** from the first generation: the mean number of boids each initially infected boid
//!   infected, over those whose infection has ended (their count is final).
//! - **Serial interval** (here equal to the generation time: the model has no symptom onset):
//!   infectee's infection time − infector's infection time, over every contact infection.
//! - **Case reproduction number** R_c(t): mean secondary infections of the infections that
//!   began in the window `[t − W, t)`, reported only when every one of them has ended.
//! - **Instantaneous reproduction number** R_t (Cori et al. 2013, as published): incidence `I_n`
//!   counted per step (bins of `Δ` = the step, the finest the model has: a boid infected in a
//!   step starts spreading in the next, so no serial interval is shorter than one bin and the
//!   discretised serial-interval distribution has `w_0 = 0` exactly); `w_k` (k ≥ 1) the measured
//!   share of infector → infectee pairs `k` bins apart; `Λ_n = Σ_{k≥1} I_{n−k} w_k` over every
//!   infection; over the window `(t − W, t]`, the Gamma prior of shape 1 and scale 5 (mean 5, sd
//!   5) gives the posterior Gamma(1 + Σ I_local, scale 1 / (1/5 + Σ Λ)). Local incidence counts
//!   contact infections; initial, spontaneous and born-infected cases are imported: they
//!   infect (they are in `Λ`) but are not caused by the boids already infected. An estimate is
//!   reported only where the data dominate the prior: the posterior's coefficient of variation
//!   `1/√shape` below 0.3, as Cori et al. recommend (at least 11 local infections in the
//!   window). Rows come every `W / 5` seconds.

use serde::Serialize;

use crate::sim::epidemic::Cause;
use crate::sim::stats::{Spread, gamma_quantile, spread};
use crate::sim::transmission::Transmission;

/// Rows of `rt.csv` per R_t window (a row every `W / 5` seconds).
pub const ROWS_PER_WINDOW: usize = 5;
/// R_t is reported only where its posterior's coefficient of variation is below this (Cori et
/// al. 2013): there the data, not the prior, set the estimate.
pub const MAX_CV: f64 = 0.3;
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
        .filter_map(|t| {
            t.infector
                .map(|f| t.time_s - records[f.infection as usize].time_s)
        })
        .collect()
}

/// The incidence bin of an infection at time `t` for bins of `width` (a step): infections
/// happen at step ends, `t ≈ n·width`, so rounding finds `n` whatever the rounding of `t`.
fn bin_of(t: f64, width: f64) -> i64 {
    (t / width).round() as i64
}

/// The discretised serial-interval distribution over bins of `width`: `w[k]` (k ≥ 1) is the
/// share of infector → infectee pairs `k` bins apart among those at least one bin apart
/// (`w[0] = 0`, Cori et al.'s convention), and the share of all pairs that fell within one bin
/// (their mass below one bin; 0 when bins are the step).
pub fn interval_weights(records: &[Transmission], width: f64) -> (Vec<f64>, f64) {
    let mut w: Vec<f64> = vec![0.0];
    let (mut apart, mut same) = (0usize, 0usize);
    for t in records {
        if let Some(f) = t.infector {
            let k = bin_of(t.time_s, width) - bin_of(records[f.infection as usize].time_s, width);
            if k < 1 {
                same += 1;
                continue;
            }
            let k = k as usize;
            if w.len() <= k {
                w.resize(k + 1, 0.0);
            }
            w[k] += 1.0;
            apart += 1;
        }
    }
    w.iter_mut().for_each(|x| *x /= apart.max(1) as f64);
    (w, same as f64 / (apart + same).max(1) as f64)
}

/// The Gamma posterior of R_t over a window with `local` contact infections and total
/// infectiousness `lambda`: its mean, 2.5 % and 97.5 % quantiles, and its coefficient of
/// variation.
pub fn cori_posterior(local: u64, lambda: f64) -> ([f64; 3], f64) {
    let shape = PRIOR_SHAPE + local as f64;
    let scale = 1.0 / (1.0 / PRIOR_SCALE + lambda);
    (
        [
            shape * scale,
            gamma_quantile(0.025, shape) * scale,
            gamma_quantile(0.975, shape) * scale,
        ],
        1.0 / shape.sqrt(),
    )
}

/// One row of `rt.csv`: the estimates over the window `(from_s, time_s]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RtRow {
    /// End of the window, s.
    pub time_s: f64,
    /// Start of the window, s.
    pub from_s: f64,
    /// Infections since the previous row (`W / 5` seconds).
    pub infections: u32,
    /// Of those, by contact.
    pub contact_infections: u32,
    /// Cori R_t: posterior mean and 95 % credible interval (`None` without infectiousness in
    /// the window).
    pub rt: Option<[f64; 3]>,
    /// The posterior's coefficient of variation (`None` with `rt`).
    pub rt_cv: Option<f64>,
    /// R_c over the window (`None` unless every infection that began in it has ended).
    pub rc: Option<f64>,
    /// Infections that began in the window.
    pub window_infections: u32,
}

impl RtRow {
    /// R_t where the data dominate the prior (coefficient of variation below [`MAX_CV`]).
    pub fn reported(&self) -> Option<[f64; 3]> {
        self.rt.filter(|_| self.rt_cv.is_some_and(|cv| cv < MAX_CV))
    }
}

/// R_t and R_c every `window / 5` seconds up to `until`, from incidence in bins of `bin`
/// seconds (the run's step).
pub fn reproduction_series(
    records: &[Transmission],
    window: f64,
    bin: f64,
    until: f64,
) -> Vec<RtRow> {
    let every = window / ROWS_PER_WINDOW as f64;
    if every <= 0.0 || !every.is_finite() || bin <= 0.0 || !bin.is_finite() {
        return Vec::new();
    }
    let (w, _) = interval_weights(records, bin);
    // C[k] = Σ_{1 ≤ i ≤ k} w_i: a window's Σ Λ is, per infection, a difference of two.
    let mut cum = vec![0.0; w.len()];
    for k in 1..w.len() {
        cum[k] = cum[k - 1] + w[k];
    }
    let c = |k: i64| -> f64 {
        if k < 1 {
            0.0
        } else {
            cum[(k as usize).min(cum.len() - 1)]
        }
    };
    let bins: Vec<i64> = records.iter().map(|t| bin_of(t.time_s, bin)).collect();
    let span = (window / bin).round() as i64;
    let rows = (until / every + 1e-9).floor() as usize;
    let mut first_of_row = 0usize;
    (1..=rows)
        .map(|r| {
            let end = bin_of(r as f64 * every, bin);
            let start = end - span + 1;
            // The first row also counts the infections at t = 0 (the initial cases, bin 0).
            let row_start = if r == 1 {
                i64::MIN
            } else {
                bin_of((r - 1) as f64 * every, bin) + 1
            };
            // Records are in time order: those of the window, and those that infect into it.
            let in_window = |n: i64| n >= start && n <= end;
            let (mut local, mut total, mut open, mut secondary) = (0u64, 0u32, 0u32, 0u64);
            let (mut row_total, mut row_local) = (0u32, 0u32);
            let mut lambda = 0.0;
            while first_of_row < records.len() && bins[first_of_row] < start - w.len() as i64 {
                first_of_row += 1;
            }
            for (t, &n) in records[first_of_row..].iter().zip(&bins[first_of_row..]) {
                if n > end {
                    break;
                }
                // Its infectiousness over the window's bins: Σ_{n'=start}^{end} w_{n'−n}.
                lambda += c(end - n) - c(start - 1 - n);
                if in_window(n) {
                    let contact = (t.cause == Cause::Contact) as u32;
                    total += 1;
                    local += contact as u64;
                    open += t.end.is_none() as u32;
                    secondary += t.secondary as u64;
                    if n >= row_start {
                        row_total += 1;
                        row_local += contact;
                    }
                }
            }
            let posterior = (lambda > 0.0).then(|| cori_posterior(local, lambda));
            RtRow {
                time_s: r as f64 * every,
                from_s: (r as f64 * every - window).max(0.0),
                infections: row_total,
                contact_infections: row_local,
                rt: posterior.map(|p| p.0),
                rt_cv: posterior.map(|p| p.1),
                rc: (total > 0 && open == 0).then(|| secondary as f64 / total as f64),
                window_infections: total,
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
        // Bins of 0.5 s, W = 2.5 s (rows every 0.5 s, windows of 5 bins). Incidence 2, 4, 8 in
        // bins 0, 3, 5; 4 pairs 3 bins apart and 8 pairs 2 bins apart: w = [0, 0, 2/3, 1/3].
        let log = chain(None);
        let (w, below) = interval_weights(&log.records, 0.5);
        assert_eq!(below, 0.0);
        assert_eq!(w.len(), 4);
        assert!(w[0] == 0.0 && w[1] == 0.0);
        assert!((w[2] - 2.0 / 3.0).abs() < 1e-12 && (w[3] - 1.0 / 3.0).abs() < 1e-12);
        let rows = reproduction_series(&log.records, 2.5, 0.5, 4.0);
        assert_eq!(rows.len(), 8);
        assert_eq!(rows[0].rt, None, "no infectiousness before bin 2");
        // Row at 1.5 s, bins −1..=3: Λ_2 + Λ_3 = 2·2/3 + 2·1/3 = 2, 4 local infections: shape
        // 5, rate 1/5 + 2 → mean 5/2.2; CV 1/√5 = 0.45, so not reported.
        let [mean, lo, hi] = rows[2].rt.unwrap();
        assert!((mean - 5.0 / 2.2).abs() < 1e-12);
        assert!((lo - gamma_quantile(0.025, 5.0) / 2.2).abs() < 1e-12 && lo < mean && mean < hi);
        assert!((rows[2].rt_cv.unwrap() - 1.0 / 5f64.sqrt()).abs() < 1e-12);
        assert_eq!(rows[2].reported(), None, "the prior still weighs");
        // Row at 2.5 s, bins 1..=5: Σ Λ = 4/3 + 2/3 + 8/3, 12 local: shape 13 (CV 0.28).
        let want = 13.0 / (0.2 + 14.0 / 3.0);
        assert!((rows[4].reported().unwrap()[0] - want).abs() < 1e-12);
        // R_c: the row at 1.5 s holds 6 infections with 12 secondaries; the one at 2.5 s
        // (bins 1..=5) 12 infections with 8.
        assert_eq!(rows[2].rc, Some(2.0));
        assert_eq!(rows[4].window_infections, 12);
        assert_eq!(rows[4].rc, Some(8.0 / 12.0));
        assert_eq!((rows[2].infections, rows[2].contact_infections), (4, 4));
        // One infection of the window still going on: no R_c for any window holding it.
        let rows = reproduction_series(&chain(Some(14)).records, 2.5, 0.5, 4.0);
        assert_eq!((rows[2].rc, rows[4].rc), (Some(2.0), None));
    }

    #[test]
    fn infectiousness_has_no_same_bin_term() {
        // A (initial, t = 0) infects B at 0.2 s — the same 0.5 s bin — and C at 1.0 s; B
        // infects D at 1.0 s. Pairs at least a bin apart: A→C and B→D, both 2 bins: w_2 = 1
        // (A→B is mass below one bin: 1/3 of the pairs). Incidence: bin 0 holds A and B, bin 2
        // C and D. Λ_2 = I_0·w_2 = 2, Λ_0 = Λ_1 = 0 (Cori's Λ_t = Σ_{s≥1} I_{t−s} w_s). Over
        // bins 0..=2, 3 local infections: mean (1 + 3)/(1/5 + 2) = 1.818. Keeping the same-bin
        // term (w_0 = 1/3, w_2 = 2/3: Λ_0 = 2/3, Λ_2 = 2/3 + 4/3) would give 4/(0.2 + 8/3).
        let mut log = TransmissionLog::default();
        let n = Swarm::Normal;
        log.begin(0.0, None, 1, n, Vec2::ZERO, Cause::Initial);
        log.begin(
            0.2,
            Some((1, n, Vec2::ZERO)),
            2,
            n,
            Vec2::ZERO,
            Cause::Contact,
        );
        log.begin(
            1.0,
            Some((1, n, Vec2::ZERO)),
            3,
            n,
            Vec2::ZERO,
            Cause::Contact,
        );
        log.begin(
            1.0,
            Some((2, n, Vec2::ZERO)),
            4,
            n,
            Vec2::ZERO,
            Cause::Contact,
        );
        let (w, below) = interval_weights(&log.records, 0.5);
        assert_eq!(w, [0.0, 0.0, 1.0]);
        assert!((below - 1.0 / 3.0).abs() < 1e-12);
        // W = 1.5 s: rows every 0.3 s; the row at 1.2 s covers bins 0..=2 (times up to 1.2).
        let rows = reproduction_series(&log.records, 1.5, 0.5, 1.2);
        let last = rows.last().unwrap();
        assert!((last.time_s - 1.2).abs() < 1e-12);
        let mean = last.rt.unwrap()[0];
        assert!((mean - 4.0 / 2.2).abs() < 1e-12, "{mean}");
        assert!((mean - 4.0 / (0.2 + 8.0 / 3.0)).abs() > 0.3);
    }
}
