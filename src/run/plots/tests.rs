//! Tests of the plots: sizes, the pieces that compute what they draw, and a run folder's two
//! plots drawn in parallel (the same pictures as one after the other, and a failure reported
//! under its own picture's name).

use super::experiment::scale_colour;
use super::*;

#[test]
fn matrix_names_map_to_cells() {
    assert_eq!(matrix_cell("B1_D1"), Some((0, 0)));
    assert_eq!(matrix_cell("B3_D2"), Some((2, 1)));
    assert_eq!(matrix_cell("default"), None);
    assert_eq!(matrix_cell("B0_D1"), None);
}

#[test]
fn colour_scale_ends() {
    assert_eq!(scale_colour(0.0), RGBColor(68, 1, 84));
    assert_eq!(scale_colour(1.0), RGBColor(253, 231, 37));
}

/// A run folder with a few rows of `metrics.csv` and, when `rt`, of `rt.csv`.
fn run_folder(rt: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("metrics.csv"),
        "time_s,susceptible,infected,recovered,dead\n0,10,1,0,0\n0.5,8,3,0,0\n1,5,5,1,0\n",
    )
    .unwrap();
    if rt {
        std::fs::write(
            dir.path().join("rt.csv"),
            "time_s,rt_mean,rt_lo95,rt_hi95,rc,infections,contact_infections\n\
             0.5,1.5,0.8,2.5,1.2,2,1\n1,1.1,0.6,1.9,1,3,2\n",
        )
        .unwrap();
    }
    dir
}

#[test]
fn a_run_folders_plots_drawn_at_once_are_those_drawn_one_after_the_other() {
    let (at_once, in_turn) = (run_folder(true), run_folder(true));
    let titles = ("S / I / R", "reproduction numbers");
    for (dir, parallel) in [(&at_once, true), (&in_turn, false)] {
        let drawn = plot_run_folder(dir.path(), titles, parallel);
        let names: Vec<_> = drawn.iter().map(|(p, _)| p.file_name().unwrap()).collect();
        assert_eq!(names, ["sir.png", "rt.png"]);
        assert!(drawn.iter().all(|(_, d)| d.is_ok()), "{drawn:?}");
    }
    for name in ["sir.png", "rt.png"] {
        let a = std::fs::read(at_once.path().join(name)).unwrap();
        assert!(a.len() > 1000, "{name} is {} B", a.len());
        assert_eq!(
            a,
            std::fs::read(in_turn.path().join(name)).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn a_picture_that_cannot_be_drawn_reports_its_own_error_in_parallel_or_in_turn() {
    for parallel in [true, false] {
        let dir = run_folder(true);
        // An empty rt.csv has no header, so reading it fails.
        std::fs::write(dir.path().join("rt.csv"), "").unwrap();
        let drawn = plot_run_folder(dir.path(), ("S / I / R", "R"), parallel);
        assert!(drawn[0].0.ends_with("sir.png") && drawn[1].0.ends_with("rt.png"));
        assert!(drawn[0].1.is_ok(), "{drawn:?}");
        assert!(drawn[1].1.is_err(), "{drawn:?}");
        assert!(dir.path().join("sir.png").is_file());
    }
}

#[test]
fn a_run_folder_without_rt_csv_gets_only_its_sir_plot() {
    let dir = run_folder(false);
    let drawn = plot_run_folder(dir.path(), ("S / I / R", "R"), true);
    assert_eq!(drawn.len(), 1);
    assert!(drawn[0].1.is_ok() && drawn[0].0.ends_with("sir.png"));
    assert!(!dir.path().join("rt.png").exists());
}

#[test]
fn an_axis_of_counts_labels_whole_numbers_only() {
    use super::run::count_label;
    let labels: Vec<String> = [0.0, 0.2, 0.30000000000000004, 1.0, 1.4, 20.0, 1e6]
        .iter()
        .map(count_label)
        .collect();
    assert_eq!(labels, ["0", "", "", "1", "", "20", "1000000"]);
}
