//! Tests of the plots: sizes, and the pieces that compute what they draw.

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
