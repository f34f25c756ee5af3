//! The preset blocks: the signature table and what it says about the report's model and each
//! calibration (with the counterfactual runs that back each sentence).

use super::{Csv, Data, fixed, min_max, plus_minus};

pub fn block(name: &str, d: &Data) -> Option<String> {
    Some(match name {
        "presets-table" => presets_table(d),
        "report-findings" => report_findings(d),
        "calibration" => calibration(d),
        "calibration-history" => calibration_history(d),
        "hybrid-pile" => hybrid_pile(d),
        "matrix-tables" => super::matrix::tables(d),
        "matrix-answer" => super::matrix::answer(d),
        "matrix-history" => super::matrix::history(d),
        _ => return None,
    })
}

/// The signature columns: measure, decimals, header.
const COLUMNS: [(&str, usize, &str); 8] = [
    ("mean_polarisation_normal", 3, "polarisation"),
    ("sd_polarisation_normal", 3, "polarisation sd over time"),
    (
        "mean_nearest_neighbour_px_normal",
        1,
        "nearest neighbour px",
    ),
    ("mean_nn_cv_normal", 3, "nn_cv"),
    ("mean_largest_flock_frac_normal", 2, "largest flock"),
    ("mean_flocks_normal", 2, "flocks"),
    ("mean_milling_normal", 3, "milling"),
    ("mean_elongation_normal", 2, "elongation"),
];

/// A row of the table: label, scenarios (prefixes of the `scenario` column), promise, model,
/// the defining measures (bold).
struct Row {
    label: &'static str,
    scenarios: &'static [&'static str],
    promises: &'static str,
    model: &'static str,
    bold: &'static [usize],
}

const ROWS: [Row; 19] = [
    row(
        "`regimes/A_cohesive`",
        &["regimes/A_cohesive"],
        "one coherent travelling flock",
        "pygame",
        &[0, 4],
    ),
    row(
        "`regimes/B_transient`",
        &["regimes/B_transient"],
        "vortex-like mixing, groups rejoining",
        "pygame",
        &[0, 6],
    ),
    row(
        "`regimes/C_lattice`",
        &["regimes/C_lattice"],
        "spaced lattice (spacing ≈ r_sep = 25)",
        "Model B",
        &[2, 3],
    ),
    row(
        "`regimes/D_disorder`",
        &["regimes/D_disorder"],
        "no coherent structure",
        "Model B + noise",
        &[0, 3, 4],
    ),
    row(
        "`regimes/E_tight`",
        &["regimes/E_tight"],
        "the most compact flock, boids apart",
        "pygame",
        &[2],
    ),
    row(
        "`regimes/report/A_cohesive`",
        &["regimes/report/A_cohesive"],
        "(its model, as published)",
        "report",
        &[2],
    ),
    row(
        "`regimes/report/B_transient`",
        &["regimes/report/B_transient"],
        "(its model, as published)",
        "report",
        &[2, 6],
    ),
    row(
        "`regimes/report/C_lattice`",
        &["regimes/report/C_lattice"],
        "(its model, as published)",
        "report",
        &[2, 3],
    ),
    row(
        "`regimes/report/D_disorder`",
        &["regimes/report/D_disorder"],
        "(its model, as published)",
        "report",
        &[0],
    ),
    row(
        "`regimes/report/E_tight`",
        &["regimes/report/E_tight"],
        "(its model, as published)",
        "report",
        &[2],
    ),
    row("`matrix/B1_*`", &["matrix/B1_"], "a line", "Model B", &[7]),
    row(
        "`matrix/B2_*`",
        &["matrix/B2_"],
        "a round oval",
        "Model B",
        &[0, 7],
    ),
    row(
        "`matrix/B3_*`",
        &["matrix/B3_"],
        "chaotic",
        "Model B + noise",
        &[0, 1, 5],
    ),
    row(
        "`default`",
        &["default"],
        "flocks, no pile-up",
        "Model B",
        &[],
    ),
    row(
        "`sir`, `sirs`, `sird`",
        &["sir", "sirs", "sird"],
        "flocks, no pile-up",
        "Model B",
        &[],
    ),
    row(
        "`predators`",
        &["predators"],
        "flocks, no pile-up",
        "Model B",
        &[],
    ),
    row(
        "`pygame`",
        &["pygame"],
        "its model, as it is",
        "pygame",
        &[],
    ),
    row("`adams`", &["adams"], "its model, as it is", "adams", &[]),
    row(
        "`hybrid`",
        &["hybrid"],
        "its model, as it is: it piles up",
        "hybrid",
        &[2],
    ),
];

const fn row(
    label: &'static str,
    scenarios: &'static [&'static str],
    promises: &'static str,
    model: &'static str,
    bold: &'static [usize],
) -> Row {
    Row {
        label,
        scenarios,
        promises,
        model,
        bold,
    }
}

/// The rows of a table whose scenario is one of `names`, or starts with a name ending in `_`.
fn select(t: &Csv, names: &[&str]) -> Vec<usize> {
    let k = t.col("scenario");
    (0..t.rows.len())
        .filter(|&r| {
            let s = &t.rows[r][k];
            names
                .iter()
                .any(|n| s == n || (n.ends_with('_') && s.starts_with(n)))
        })
        .collect()
}

/// The mean of a measure over the runs of some scenarios.
pub fn mean(t: &Csv, names: &[&str], measure: &str) -> f64 {
    let rows = select(t, names);
    assert!(!rows.is_empty(), "no runs of {names:?}");
    t.spread(&rows, measure).mean
}

fn presets_table(d: &Data) -> String {
    let t = d.csv("presets_summary");
    let seeds = select(&t, &["regimes/A_cohesive"]).len();
    let mut out = format!(
        "\nSignatures of the Normal swarm — mean ± 95 % confidence half-width over {seeds} \
         seeds ({} runs where a row joins three files), each the mean over t = 60–100 s; the \
         defining measures in bold. Reproduce with `cargo run --release -- experiment --scenarios \
         'assets/scenarios/regimes/*.toml' --seeds {seeds} --duration 100 --measure-from 60 \
         --out out/presets`, and the same for `'assets/scenarios/regimes/report/*.toml'`, \
         `'assets/scenarios/matrix/*.toml'` and the other files of the table (`docs/reproduce.sh` \
         runs them all): `aggregate.csv` holds these columns.\n\n| preset | promises | model |",
        3 * seeds
    );
    for (_, _, h) in COLUMNS {
        out += &format!(" {h} |");
    }
    out += "\n|---|---|---|";
    out += &"---|".repeat(COLUMNS.len());
    out += "\n";
    for r in &ROWS {
        let rows = select(&t, r.scenarios);
        assert!(!rows.is_empty(), "no runs of {}", r.label);
        out += &format!("| {} | {} | {} |", r.label, r.promises, r.model);
        for (k, (measure, digits, _)) in COLUMNS.iter().enumerate() {
            let e = t.spread(&rows, measure);
            let digits = if k == 2 && e.mean < 1.0 { 2 } else { *digits };
            let cell = plus_minus(&e, digits);
            if r.bold.contains(&k) {
                out += &format!(" **{cell}** |");
            } else {
                out += &format!(" {cell} |");
            }
        }
        out += "\n";
    }
    out
}

fn report_findings(d: &Data) -> String {
    let t = d.csv("presets_summary");
    let m = |s: &str, k: &str| mean(&t, &[s], k);
    let nn = "mean_nearest_neighbour_px_normal";
    let (c_nn, c_cv) = (
        m("regimes/report/C_lattice", nn),
        m("regimes/report/C_lattice", "mean_nn_cv_normal"),
    );
    let c_flocks = m("regimes/report/C_lattice", "mean_flocks_normal");
    let piles: Vec<f64> = ["A_cohesive", "B_transient", "E_tight"]
        .iter()
        .map(|s| m(&format!("regimes/report/{s}"), nn))
        .collect();
    let d_pol = m("regimes/report/D_disorder", "mean_polarisation_normal");
    assert!(
        (c_nn - 50.0).abs() < 2.0 && c_cv < 0.05,
        "report C: no longer a lattice at R (nn {c_nn}, nn_cv {c_cv})"
    );
    assert!(
        piles.iter().all(|&x| x < 0.5),
        "report A/B/E: no longer piled up ({piles:?})"
    );
    assert!(
        d_pol > 0.8,
        "report D: no longer ordered (polarisation {d_pol})"
    );
    let (lo, hi) = min_max(&piles);
    format!(
        "shows one of the five behaviours it reports. **C** forms a lattice, of an extreme kind: every boid ends \
         about one perception radius from its nearest neighbour ({} px, nn_cv {}) and the swarm \
         translates in parallel — so spread out that hardly any boid sees another ({} \"flocks\" \
         among 300 boids). **A, B and E collapse onto points** (nearest neighbour {}–{} px):",
        fixed(c_nn, 1),
        fixed(c_cv, 3),
        fixed(c_flocks, 0),
        fixed(lo, 2),
        fixed(hi, 2),
    ) + &format!(
        " the report's separation is the mean of unit vectors away, which shrinks to nothing \
         for a boid surrounded evenly and is no stronger for a near neighbour than a far one, \
         so with cohesion at least as strong nothing holds boids apart. **D orders** \
         (polarisation {}) instead of staying disordered.",
        fixed(d_pol, 2)
    )
}

/// A measure of one counterfactual run set of `calibration_summary.csv` (`name:scenario`).
pub fn counterfactual(t: &Csv, name: &str, measure: &str) -> f64 {
    let k = t.col("scenario");
    let rows: Vec<usize> = (0..t.rows.len())
        .filter(|&r| t.rows[r][k].starts_with(&format!("{name}:")))
        .collect();
    assert!(
        !rows.is_empty(),
        "calibration_summary.csv has no runs of {name}"
    );
    t.spread(&rows, measure).mean
}

fn calibration(d: &Data) -> String {
    let t = d.csv("presets_summary");
    let c = d.csv("calibration_summary");
    let m = |s: &str, k: &str| mean(&t, &[s], k);
    let cf = |n: &str, k: &str| counterfactual(&c, n, k);
    let pol = "mean_polarisation_normal";
    let nn = "mean_nearest_neighbour_px_normal";
    let a_model_b = cf("A-model-b", nn);
    let e_model_b = cf("E-model-b", nn);
    let a_flock = m("regimes/A_cohesive", "mean_largest_flock_frac_normal");
    let a_flock_50 = cf("A-cohesion-50", "mean_largest_flock_frac_normal");
    let b_mill = m("regimes/B_transient", "mean_milling_normal");
    let b_mill_default = cf("B-default-radii", "mean_milling_normal");
    let c_nn = m("regimes/C_lattice", nn);
    let c_cv = m("regimes/C_lattice", "mean_nn_cv_normal");
    let d_pol_quiet = cf("D-no-noise", pol);
    let d_pol = m("regimes/D_disorder", pol);
    let d_cv = m("regimes/D_disorder", "mean_nn_cv_normal");
    let b3_80 = cf("B3-noise-80", pol);
    let checks = [
        (
            a_model_b < 1.0 && e_model_b < 1.0,
            "Model B piles A and E up",
        ),
        (a_flock >= 0.8, "A is one coherent flock"),
        (
            b_mill > 0.8 && b_mill_default < 0.2,
            "B mills only with its radii",
        ),
        (
            (c_nn - 25.0).abs() < 2.0 && c_cv < 0.1,
            "C is a lattice at r_sep",
        ),
        (d_pol_quiet > 0.5 && d_pol < 0.2, "D needs its noise"),
        (b3_80 > 0.9, "B3 with noise 80 is ordered"),
    ];
    for (ok, claim) in checks {
        assert!(ok, "calibration: \"{claim}\" no longer holds");
    }
    format!(
        "- **A cohesive**, **E tight**: the `pygame` model (inverse-square separation) with the \
         report's weights; its separation weight is the report's × 40 000 px³/s² (one \
         conversion for A, B, E). Under Model B the report's weights pile the boids up (nearest \
         neighbour {} px for A's, {} px for E's, in the report's set-up). A also keeps \
         `cohesion_radius` 100 px from an earlier calibration, where it made the flocks merge \
         sooner; measured now it makes no clear difference (largest flock {} of the swarm, {} \
         with the default 50 px).\n\
         - **B transient**: `pygame` as for A, plus a short alignment range (25 px), a long \
         cohesion range (150 px) and a blind angle behind (`fov` 2.0 rad): the conditions under \
         which boids mill around their common centre while stray groups fly in and join \
         (milling {}; with the default radii and full view, milling {}).\n\
         - **C lattice**: holds as published under Model B (spacing {} px for r_sep = 25, nn_cv \
         {}); only the shared world changed.\n\
         - **D disorder**: Model B with `noise` 300 px·s^-3/2: without noise its equal weak weights \
         still order the swarm (polarisation {}); with it, polarisation {} and a spacing as \
         random as scattered points (nn_cv {} against 0.52).\n\
         - **B3 chaotic**: `noise` 600 px·s^-3/2 instead of 80. The source's 80 was a per-frame \
         force; as a per-second noise it leaves B3 as ordered as B2 (polarisation {}). B1 and \
         B2 hold as published.\n\
         - The model-comparison presets show their models as they are; `hybrid` piles up by \
         design (its raw separation vanishes at contact) and its file says so.\n",
        fixed(a_model_b, 2),
        fixed(e_model_b, 2),
        fixed(a_flock, 2),
        fixed(a_flock_50, 2),
        fixed(b_mill, 2),
        fixed(b_mill_default, 2),
        fixed(c_nn, 1),
        fixed(c_cv, 2),
        fixed(d_pol_quiet, 2),
        fixed(d_pol, 2),
        fixed(d_cv, 2),
        fixed(b3_80, 3),
    )
}

fn calibration_history(d: &Data) -> String {
    let c = d.csv("calibration_summary");
    let b3_80 = counterfactual(&c, "B3-noise-80", "mean_polarisation_normal");
    let t = d.csv("presets_summary");
    let b2 = mean(&t, &["matrix/B2_"], "mean_polarisation_normal");
    assert!(
        (b3_80 - b2).abs() < 0.05,
        "B3 with noise 80 no longer flies like B2"
    );
    format!(
        "with the report's weights Model B piles two of them (A and E) onto points and leaves \"disorder\" \
         ordered, and the matrix's \"chaotic\" B3 flew like B2 (polarisation {} against {})",
        fixed(b3_80, 3),
        fixed(b2, 3)
    )
}

fn hybrid_pile(d: &Data) -> String {
    let t = d.csv("presets_summary");
    let nn = mean(&t, &["hybrid"], "mean_nearest_neighbour_px_normal");
    let cv = mean(&t, &["hybrid"], "mean_nn_cv_normal");
    assert!(
        cv > 1.0,
        "hybrid no longer piles up (nn_cv {cv}, nearest neighbour {nn} px)"
    );
    format!(
        "measured over 5 seeds at t = 60–100 s: nn_cv {} — far above 1, boids piled on \
         others — and a mean nearest neighbour of {} px",
        fixed(cv, 1),
        fixed(nn, 1)
    )
}
