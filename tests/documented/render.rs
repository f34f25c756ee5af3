//! Renders each marked block of the documents from `docs/reproduced/`: the text a block must
//! hold, numbers included. A renderer also checks the claims its words make (an estimate
//! "hovers around 1", a preset "piles up"), and fails naming the claim when the data no longer
//! back it, so a document cannot keep a sentence its numbers contradict.

use super::{Data, STORY_COUNTS, bracket, fixed, min_max, research, signed, span};

/// The text of block `name`.
pub fn block(name: &str, d: &Data) -> String {
    match name {
        "story" => story(d),
        "agents-size" => agents_size(d),
        "sirs-size" => sirs_size(d),
        "gif-size" => format!("{} kB", (d.number("gif_bytes") / 1e3).round()),
        "sirs-rt" => sirs_rt(d),
        "r0-table" => r0_table(d),
        "well-mixed" => well_mixed(d),
        "interventions" => interventions(d),
        "sweep" => sweep(d),
        "sweep-replicates" => sweep_replicates(d),
        "bench-counts" => bench_counts(d),
        "bench-neighbours" => bench_neighbours(d),
        _ => research::block(name, d).unwrap_or_else(|| panic!("no renderer for block `{name}`")),
    }
}

/// Every block name a renderer exists for (each must appear in some document).
pub const NAMES: [&str; 20] = [
    "story",
    "gif-size",
    "agents-size",
    "sirs-size",
    "sirs-rt",
    "r0-table",
    "well-mixed",
    "interventions",
    "sweep",
    "sweep-replicates",
    "bench-counts",
    "bench-neighbours",
    "presets-table",
    "report-findings",
    "calibration",
    "calibration-history",
    "hybrid-pile",
    "matrix-tables",
    "matrix-answer",
    "matrix-history",
];

/// `n` with a space between thousands (`5 823`).
pub fn thousands(n: f64) -> String {
    let s = format!("{}", n.round() as i64);
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k > 0 && (s.len() - k) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `lo–hi` of a column over every row.
fn range(t: &super::Csv, name: &str) -> String {
    span(&t.values(&(0..t.rows.len()).collect::<Vec<_>>(), name), 0)
}

fn story(d: &Data) -> String {
    let t = d.csv("story");
    let cols = STORY_COUNTS;
    let missing = |r: usize| -> Vec<&str> {
        cols.iter()
            .zip(STORY_WORDS)
            .filter(|(c, _)| t.num(r, c).unwrap_or(0.0) <= 0.0)
            .map(|(_, w)| w)
            .collect()
    };
    let n = t.rows.len();
    let every = (0..n).filter(|&r| missing(r).is_empty()).count();
    let lacking: Vec<String> = (0..n)
        .filter(|&r| !missing(r).is_empty())
        .map(|r| missing(r).join(" and "))
        .collect();
    assert!(
        every * 10 >= n * 8,
        "the story: every mechanism shows in only {every} of {n} runs (the README says most)"
    );
    let on = if every == n {
        format!("on all {n} runs")
    } else {
        let who = if lacking.len() == 1 {
            "the other"
        } else {
            "the others"
        };
        format!(
            "on {every} of the {n} runs ({who} had no {})",
            lacking.join("; no ")
        )
    };
    format!(
        "Measured over {n} seeds of 60 s (`experiment --scenarios assets/scenarios/default.toml \
         --seeds {n} --duration 60`), all of these happen together {on} — contact infections \
         {}, Antivax boids infected by contact {} and infections caused by Antivax boids {}, \
         cures {}, recoveries {}, deaths {} (`tests/presets.rs` checks it on 10 other seeds).",
        range(&t, cols[0]),
        range(&t, cols[1]),
        range(&t, cols[2]),
        range(&t, cols[3]),
        range(&t, cols[4]),
        range(&t, cols[5]),
    )
}

/// The story's counts as the sentence names them.
const STORY_WORDS: [&str; 6] = [
    "contact infections",
    "Antivax boid infected by contact",
    "infections caused by Antivax boids",
    "cures",
    "recoveries",
    "deaths",
];

fn agents_size(d: &Data) -> String {
    format!(
        "writes {} rows, {:.1} MB ({} boids at the start, fewer as the sick die)",
        thousands(d.number("agents_rows")),
        d.number("agents_bytes") / 1e6,
        d.number("agents_at_start"),
    )
}

fn sirs_size(d: &Data) -> String {
    format!(
        "the `sirs.toml` run below: {} infections, {} kB",
        thousands(d.number("sirs_infections")),
        (d.number("sirs_transmissions_bytes") / 1e3).round(),
    )
}

fn sirs_rt(d: &Data) -> String {
    let t = d.csv("rt_sirs");
    let rows = 0..t.rows.len();
    let at = |s: f64| {
        let r = rows
            .clone()
            .find(|&r| (t.num(r, "time_s").unwrap() - s).abs() < 1e-6)
            .unwrap_or_else(|| panic!("rt.csv has no row at {s} s"));
        (
            t.num(r, "rt_mean").expect("R_t reported"),
            t.num(r, "rt_lo95").unwrap(),
            t.num(r, "rt_hi95").unwrap(),
        )
    };
    let late: Vec<usize> = rows
        .clone()
        .filter(|&r| t.num(r, "time_s").unwrap() >= 50.0)
        .collect();
    let rt_late = t.values(&late, "rt_mean");
    let rc_late = t.values(&late, "rc");
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (m_rt, m_rc) = (mean(&rt_late), mean(&rc_late));
    assert!(
        (0.9..=1.1).contains(&m_rt) && (0.9..=1.1).contains(&m_rc),
        "sirs.toml: R_t {m_rt} / R_c {m_rc} after 50 s do not hover around 1"
    );
    let first = rows
        .clone()
        .find(|&r| t.num(r, "rt_mean").is_some())
        .map(|r| t.num(r, "time_s").unwrap())
        .unwrap();
    let (r2, lo2, hi2) = at(2.0);
    assert!(
        r2 > 1.0,
        "sirs.toml: R_t at 2 s is {r2}, the README says the epidemic grows"
    );
    format!(
        "`sirs.toml` (`run --scenario assets/scenarios/sirs.toml --seed 1 --out out/sirs`, 300 s; \
         waning immunity keeps the disease endemic; {} infections) — R_t is {} [{}, {}] at 2 s, \
         {} at 5 s, {} at 10 s, then hovers around 1 (mean {} over the {} rows from 50 s on; \
         R_c {} over the {} complete windows from 50 s on), as an endemic disease must; no row before {} s has \
         enough data to report one:",
        thousands(d.number("sirs_infections")),
        fixed(r2, 2),
        fixed(lo2, 2),
        fixed(hi2, 2),
        fixed(at(5.0).0, 2),
        fixed(at(10.0).0, 2),
        fixed(m_rt, 2),
        rt_late.len(),
        fixed(m_rc, 2),
        rc_late.len(),
        first,
    )
}

fn r0_table(d: &Data) -> String {
    let t = d.csv("r0_summary");
    let mut out = String::new();
    let runs = t.rows_where("scenario", "sir").len();
    out += &format!(
        "\nOver {runs} seeds (`experiment --scenarios assets/scenarios/sir.toml --scenarios \
         assets/scenarios/default.toml --seeds {runs} --out out/r0`: `aggregate.csv`, and the \
         mean of `r0_well_mixed_normal` over the runs' `summary.json`: it varies from run to run \
         where the Normal count does), measured R0 against the well-mixed value:\n\n\
         | scenario | R0 measured (mean, 95 % CI) | well-mixed R0 (mean) | serial interval (s) |\n\
         |---|---|---|---|\n"
    );
    let mut ratio = 0.0;
    for s in ["sir", "default"] {
        let rows = t.rows_where("scenario", s);
        let r0 = t.estimate(&rows, "r0");
        let well = d.number(&format!("well_mixed_{s}"));
        if s == "sir" {
            ratio = r0.mean / well;
        }
        out += &format!(
            "| `{s}.toml` | {} | {} | {} |\n",
            bracket(&r0, 2),
            fixed(well, 2),
            bracket(&t.estimate(&rows, "serial_interval_s"), 2)
        );
    }
    assert!(
        ratio > 1.3,
        "flocking no longer raises R0 in sir.toml (measured / well-mixed = {ratio})"
    );
    out += &format!(
        "\nFlocking multiplies R0 by {} in `sir.toml`: a boid in a flock keeps its neighbours for \
         seconds instead of meeting strangers at random.",
        fixed(ratio, 1)
    );
    out + "\n"
}

fn well_mixed(d: &Data) -> String {
    let n = |k: &str| d.number(&format!("well_mixed_test_{k}"));
    format!(
        "over 12 seeds the measured R0 is {} ± {} (one standard error; {} initial cases) against the mean-field {} \
         (ratio {};",
        fixed(n("measured"), 2),
        fixed(n("se"), 2),
        n("cases"),
        fixed(n("mean_field"), 2),
        fixed(n("ratio"), 2),
    )
}

/// One comparison row: (mean paired difference, CI, unpaired CI, variance reduction).
struct Compared {
    diff: f64,
    lo: f64,
    hi: f64,
    unpaired: (f64, f64),
    reduction: f64,
    base: f64,
}

fn compared(t: &super::Csv, measure: &str) -> Compared {
    let r = t.row("measure", measure);
    let n = |c: &str| t.num(r, c).unwrap_or(f64::NAN);
    Compared {
        diff: n("diff_mean"),
        lo: n("diff_ci_low"),
        hi: n("diff_ci_high"),
        unpaired: (n("unpaired_ci_low"), n("unpaired_ci_high")),
        reduction: n("variance_reduction"),
        base: n("base_mean"),
    }
}

fn interventions(d: &Data) -> String {
    let presets = [
        ("lockdown", "distancing for 30 s once 10 % are infected"),
        (
            "vaccination",
            "10 %/s of the susceptible from t = 2 s, 90 % efficacy",
        ),
        ("test_and_isolate", "detection 0.5/s after 1 s of infection"),
    ];
    let mut out = String::from(
        "\n| variant | infections averted per 100 boids [95 % CI] | deaths averted | R0 change | \
         variance reduction: attack rate / peak / R0 |\n|---|---|---|---|---|\n",
    );
    let mut r0_gain = Vec::new();
    let mut r0_width = Vec::new();
    let mut attack_gain = Vec::new();
    let mut attack_width = Vec::new();
    let mut base = None;
    let mut lockdown_unpaired_has_zero = false;
    let mut lockdown_paired_has_zero = true;
    let mut pairs = 0.0;
    for (name, what) in presets {
        let t = d.csv(&format!("compare_{name}"));
        pairs = t.num(t.row("measure", "attack_rate"), "pairs").unwrap();
        let attack = compared(&t, "attack_rate");
        let peak = compared(&t, "peak_fraction");
        let deaths = compared(&t, "final_dead");
        let r0 = compared(&t, "r0");
        // Averted = base − variant = −difference; per 100 boids from the attack rate.
        let averted = |x: f64| fixed(-100.0 * x, 1);
        let neg = |x: f64| fixed(-x, 1);
        out += &format!(
            "| `{name}.toml`: {what} | **{} [{}, {}]** | {} [{}, {}] | {} [{}, {}] | {} / {} / {} |\n",
            averted(attack.diff),
            averted(attack.hi),
            averted(attack.lo),
            neg(deaths.diff),
            neg(deaths.hi),
            neg(deaths.lo),
            fixed(r0.diff, 2),
            fixed(r0.lo, 2),
            fixed(r0.hi, 2),
            fixed(attack.reduction, 1),
            fixed(peak.reduction, 1),
            fixed(r0.reduction, 1),
        );
        assert!(
            attack.hi < 0.0,
            "{name}: averts no infections (attack-rate CI reaches 0)"
        );
        r0_gain.push(r0.reduction);
        r0_width.push((r0.unpaired.1 - r0.unpaired.0) / (r0.hi - r0.lo));
        attack_gain.push(attack.reduction);
        attack_width.push(1.0 - (attack.hi - attack.lo) / (attack.unpaired.1 - attack.unpaired.0));
        if name == "lockdown" {
            lockdown_unpaired_has_zero = r0.unpaired.0 <= 0.0 && r0.unpaired.1 >= 0.0;
            lockdown_paired_has_zero = r0.lo <= 0.0 && r0.hi >= 0.0;
            let t_peak = compared(&t, "peak_time_s").base;
            base = Some((attack.base, peak.base, t_peak, deaths.base));
        }
    }
    let least_r0_gain = min_max(&r0_gain).0;
    assert!(
        least_r0_gain > 1.5 && least_r0_gain > min_max(&attack_gain).1,
        "pairing no longer helps R0 most (R0 {r0_gain:?}, attack rate {attack_gain:?})"
    );
    let (attack, peak, t_peak, deaths) = base.unwrap();
    out += &format!(
        "\n(Base: attack rate {} %, peak {} % at {} s, {} deaths; {pairs} pairs each.) Pairing \
         helps most where the outcome is decided early, before the paired runs drift apart: R0 \
         (the first cohort's secondary infections) is {} times less variable as a paired \
         difference, its interval {} times narrower; the attack rate, decided over the whole \
         epidemic after the flocks have diverged, gains {} (an interval {} % narrower).",
        fixed(100.0 * attack, 1),
        fixed(100.0 * peak, 1),
        fixed(t_peak, 1),
        fixed(deaths, 1),
        span(&r0_gain, 0),
        span(&r0_width, 0),
        span(&attack_gain, 1),
        span(
            &attack_width.iter().map(|x| 100.0 * x).collect::<Vec<_>>(),
            0
        ),
    );
    if lockdown_unpaired_has_zero && !lockdown_paired_has_zero {
        out += " The lockdown's unpaired R0 interval includes 0; the paired one does not.";
    }
    out + "\n"
}

/// `output,parameter → (prcc, p)` of a sensitivity table.
fn prcc(t: &super::Csv, output: &str, param: &str) -> (f64, f64) {
    let r = (0..t.rows.len())
        .find(|&r| t.text(r, "output") == output && t.text(r, "parameter") == param)
        .unwrap_or_else(|| panic!("sensitivity.csv has no {output} × {param}"));
    (t.num(r, "prcc").unwrap(), t.num(r, "p_value").unwrap())
}

const P_INFECT: &str = "epidemic.p_infect_normal";
const T_DEATH: &str = "epidemic.t_death";
const COUNT: &str = "swarms.normal.count";
const SPEED: &str = "swarms.normal.max_speed";

fn sweep(d: &Data) -> String {
    let t = d.csv("sensitivity");
    let r0 = |p: &str| prcc(&t, "r0", p);
    let (speed, p_speed) = r0(SPEED);
    assert!(
        r0(P_INFECT).0 > r0(COUNT).0.max(r0(T_DEATH).0) && p_speed > 0.05,
        "sweep: the infection probability no longer leads, or speed matters"
    );
    let (peak, _) = prcc(&t, "peak_time_s", T_DEATH);
    let (erad, _) = prcc(&t, "eradication_time_s", T_DEATH);
    format!(
        "R0 rises with the infection probability (PRCC {}), the number of boids ({}, denser \
         flocks) and the infectious period ({}); speed does not matter ({}, p = {}). The \
         infectious period sets *when* things happen (peak time {}, eradication time {}) more \
         than how many are infected.",
        signed(r0(P_INFECT).0, 2),
        signed(r0(COUNT).0, 2),
        signed(r0(T_DEATH).0, 2),
        signed(speed, 2),
        fixed(p_speed, 2),
        signed(peak, 2),
        signed(erad, 2),
    )
}

fn sweep_replicates(d: &Data) -> String {
    let one = d.csv("sensitivity");
    let four = d.csv("sensitivity_replicates");
    // (single-run PRCC, with replicates, its p-value with replicates)
    let pair = |out: &str, p: &str| {
        let (a, _) = prcc(&one, out, p);
        let (b, pb) = prcc(&four, out, p);
        (a, b, pb)
    };
    let show = |(a, b, _): (f64, f64, f64)| format!("{} → {}", signed(a, 2), signed(b, 2));
    let strong = [P_INFECT, T_DEATH, COUNT].map(|p| pair("r0", p));
    let speed = pair("r0", SPEED);
    let erad = pair("eradication_time_s", SPEED);
    assert!(
        strong.iter().all(|&(a, b, _)| b > a) && speed.2 > 0.05,
        "sweep with replicates: the strong parameters no longer sharpen, or speed matters for R0"
    );
    assert!(
        erad.1 < 0.0 && erad.2 > 0.05,
        "sweep with replicates: speed's effect on eradication time is no longer negative and \
         not yet significant"
    );
    format!(
        "The same sweep with `--replicates 4` (192 runs) shows what averaging does: the strong \
         parameters' PRCC with R0 sharpen (infection probability {}, infectious period {}, \
         boids {}), while the weak one, speed, stays indistinguishable from zero for R0 ({}, \
         p = {}) and the attack rate ({}) — its single-run PRCCs were noise. For timing a weak \
         effect starts to show that one run per point hid: faster boids end the epidemic sooner \
         (eradication time {}, p = {}; peak time {}) — not yet significant at 48 points.",
        show(strong[0]),
        show(strong[1]),
        show(strong[2]),
        show(speed),
        fixed(speed.2, 2),
        show(pair("attack_rate", SPEED)),
        show(erad),
        fixed(erad.2, 2),
        show(pair("peak_time_s", SPEED)),
    )
}

fn bench_counts(d: &Data) -> String {
    let t = d.csv("bench");
    let mut out = String::from(
        "\n| workload | boids | backend | neighbours per boid | candidates per boid |\n\
         |---|---:|---|---:|---:|\n",
    );
    for r in 0..t.rows.len() {
        out += &format!(
            "| {} | {} | {} | {} | {} |\n",
            t.text(r, "workload"),
            thousands(t.num(r, "boids").unwrap()),
            t.text(r, "backend"),
            t.text(r, "neighbours"),
            t.text(r, "candidates"),
        );
    }
    out
}

fn bench_neighbours(d: &Data) -> String {
    let t = d.csv("bench");
    let mut sizes = Vec::new();
    let mut v = Vec::new();
    for r in t.rows_where("workload", "flocking") {
        if !sizes.contains(&t.text(r, "boids")) {
            sizes.push(t.text(r, "boids"));
            v.push(t.text(r, "neighbours").to_string());
        }
    }
    format!(
        "{} at {} boids",
        v.join(", "),
        sizes
            .iter()
            .map(|n| thousands(n.parse().unwrap()))
            .collect::<Vec<_>>()
            .join(" / ")
    )
}
