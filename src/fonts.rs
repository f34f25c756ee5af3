//! The font of every PNG and GIF the crate draws (plots, video frames): egui's bundled Ubuntu
//! Light (Ubuntu Font Licence) registered with plotters as `sans-serif`, so no system font
//! library is needed. A leaf below every layer: `run` and `view` both draw with it.

use std::sync::Once;

use plotters::style::FontStyle;

/// Registers the font once per process.
pub fn ensure_font() {
    static FONT: Once = Once::new();
    FONT.call_once(|| {
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            epaint_default_fonts::UBUNTU_LIGHT,
        );
    });
}
