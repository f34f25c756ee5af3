//! The encoder against plotters' own file backend (the bytes it wrote through the `image` and
//! `png` crates), and its vector paths against the plain code.

use super::*;
use plotters::prelude::*;
use plotters_backend::BackendCoord;
use rand::{Rng, SeedableRng};

/// The PNG file of RGB `pixels`, in memory.
fn encode(size: (u32, u32), pixels: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut file = Vec::new();
    write_to(&mut file, size, pixels)?;
    Ok(file)
}

/// The PNG spec's Paeth predictor, as written there.
fn spec_paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i32::from(a) + i32::from(b) - i32::from(c);
    let (pa, pb, pc) = (
        (p - i32::from(a)).abs(),
        (p - i32::from(b)).abs(),
        (p - i32::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

#[test]
fn paeth_is_the_specs_predictor_for_every_byte_triple() {
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            for c in 0..=255u8 {
                assert_eq!(paeth(a, b, c), spec_paeth(a, b, c), "{a} {b} {c}");
            }
        }
    }
}

/// Test images: random noise (deflate loses to stored blocks), smooth gradients, flat areas
/// (Up and Paeth tie; Sub and Paeth in the first row), sparse dots, a chart with lines and
/// text, at sizes down to one pixel; and two rows of 16 440 bytes in which Sub costs 128 a
/// byte, the most, so its lanes pass what a `u16` holds unless they are flushed on the way.
fn images() -> Vec<((u32, u32), Vec<u8>)> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    let mut out = Vec::new();
    for size in [(1, 1), (1, 4), (2, 3), (5, 4), (11, 7), (64, 48)] {
        let n = 3 * (size.0 * size.1) as usize;
        out.push((size, (0..n).map(|_| rng.random::<u8>()).collect()));
        out.push((size, vec![255; n]));
        out.push((size, vec![0; n]));
        let gradient = (0..n)
            .map(|i| ((i / 3) as u32 * 7 + (i % 3) as u32 * 50) as u8)
            .collect();
        out.push((size, gradient));
        // Mostly flat with a few random pixels.
        let mut sparse = vec![240u8; n];
        for _ in 0..(n / 20).max(1) {
            let k = rng.random_range(0..n);
            sparse[k] = rng.random();
        }
        out.push((size, sparse));
    }
    // Bytes 100 and 228 in turn, one more in the second row: Sub costs 128 a byte, the most,
    // so its lanes pass 65 535 after 512 blocks (a row here has 513 and some), and Average
    // (first row) and Paeth (second) win; unflushed, Sub's and Paeth's wrapped sums would be
    // the smallest and win instead. The filtered rows deflate to less than stored blocks.
    let wide = (5480u32, 2u32);
    let row = 3 * wide.0 as usize;
    let alternating = (0..row * wide.1 as usize)
        .map(|i| if i % 2 == 0 { 100 } else { 228 } + (i / row) as u8)
        .collect();
    out.push((wide, alternating));
    crate::fonts::ensure_font();
    let size = (320, 200);
    let mut chart = vec![0u8; 3 * 320 * 200];
    {
        let root = BitMapBackend::with_buffer(&mut chart, size).into_drawing_area();
        root.fill(&WHITE).unwrap();
        draw_chart(&root, RED.stroke_width(2));
    }
    out.push((size, chart));
    out
}

/// A small chart, its curve drawn in `style`: captions, a mesh and a line.
fn draw_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    style: ShapeStyle,
) {
    let mut c = ChartBuilder::on(root)
        .caption("a chart", ("sans-serif", 18))
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(40)
        .build_cartesian_2d(0.0..10.0, 0.0..1.0)
        .unwrap();
    c.configure_mesh().draw().unwrap();
    c.draw_series(LineSeries::new(
        (0..100).map(|i| (i as f64 / 10.0, (i as f64 / 7.0).sin().abs())),
        style,
    ))
    .unwrap();
}

#[test]
fn files_have_the_bytes_plotters_file_backend_wrote() {
    let dir = tempfile::tempdir().unwrap();
    for (k, (size, pixels)) in images().into_iter().enumerate() {
        let path = dir.path().join(format!("{k}.png"));
        {
            let mut backend = BitMapBackend::new(&path, size);
            for (i, px) in pixels.chunks(3).enumerate() {
                let (x, y) = (i as u32 % size.0, i as u32 / size.0);
                let colour = RGBColor(px[0], px[1], px[2]).to_backend_color();
                backend.draw_pixel((x as i32, y as i32), colour).unwrap();
            }
            backend.present().unwrap();
        }
        let theirs = std::fs::read(&path).unwrap();
        assert_eq!(
            encode(size, &pixels).unwrap(),
            theirs,
            "image {k}, {size:?}"
        );
    }
}

/// Every row of `pixels` filtered, each after its filter's byte.
#[inline(always)]
fn filter_rows(pixels: &[u8], row: usize) -> Vec<u8> {
    let mut out = Vec::new();
    each_filtered_row(pixels, row, |line| out.extend_from_slice(line));
    out
}

#[test]
fn every_vector_path_filters_alike() {
    for (size, pixels) in images() {
        let row = 3 * size.0 as usize;
        let plain = filter_rows(&pixels, row);
        #[cfg(target_arch = "x86_64")]
        {
            use crate::sim::lanes::Path;
            if Path::Avx2.supported() {
                // SAFETY: this CPU has AVX2.
                let wide = unsafe { crate::sim::lanes::avx2(|| filter_rows(&pixels, row)) };
                assert_eq!(wide, plain, "{size:?}");
            }
            if Path::Avx512.supported() {
                // SAFETY: this CPU has AVX-512.
                let wide = unsafe { crate::sim::lanes::avx512(|| filter_rows(&pixels, row)) };
                assert_eq!(wide, plain, "{size:?}");
            }
        }
        assert_eq!(plain.len(), pixels.len() + size.1 as usize);
    }
}

#[test]
fn a_row_that_repeats_the_one_above_is_filtered_as_the_four_sums_choose() {
    // What `each_filtered_row` writes for such a row without working out the sums: Paeth,
    // then zeros. Random rows, flat ones and the row of zeros above the first.
    let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
    let mut rows: Vec<Vec<u8>> = (0..50)
        .map(|k| (0..3 * (k + 1)).map(|_| rng.random::<u8>()).collect())
        .collect();
    rows.extend([vec![0; 30], vec![255; 30], vec![7; 3]]);
    for row in rows {
        assert_eq!(choose(&row, &row), Filter::Paeth, "{row:?}");
        let mut out = vec![1u8; row.len()];
        apply(Filter::Paeth, &row, &row, &mut out);
        assert!(out.iter().all(|&b| b == 0), "{row:?}");
        let mut filtered = Vec::new();
        each_filtered_row(&[row.clone(), row.clone()].concat(), row.len(), |line| {
            filtered.push(line.to_vec())
        });
        assert_eq!(filtered[1][0], Filter::Paeth as u8);
        assert!(filtered[1][1..].iter().all(|&b| b == 0));
    }
}

#[test]
fn a_picture_without_pixels_is_an_error() {
    assert!(encode((0, 5), &[]).is_err());
    assert!(encode((5, 0), &[]).is_err());
}

#[test]
fn a_file_that_cannot_be_written_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("a.png");
    let e = write_png(&path, (1, 1), &[0, 0, 0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing/a.png"), "{e}");
}

#[test]
fn a_canvas_starts_as_its_colour_to_the_last_byte() {
    // Sizes of no pixel, one, and of rows that end mid-way through a 3-byte pixel's copy; the
    // bytes past the pixels (the allocation is whole huge pages) are never handed out.
    for pixels in [0, 1, 2, 5, 900 * 500, (2 << 20) / 3 + 1] {
        let mut canvas = super::Canvas::new(pixels, [250, 7, 128]);
        let bytes = canvas.pixels();
        assert_eq!(bytes.len(), 3 * pixels);
        assert!(
            bytes.chunks(3).all(|p| p == [250, 7, 128]),
            "{pixels} pixels"
        );
    }
}

#[test]
fn a_drawing_on_a_canvas_of_a_colour_is_the_drawing_on_a_canvas_filled_with_it() {
    // `draw_png` starts from the colour where the plots used to fill a black canvas with it
    // through plotters; the files must not change.
    crate::fonts::ensure_font();
    let size = (300, 170);
    // A translucent curve, so that what it is drawn over shows.
    let style = BLUE.mix(0.6).stroke_width(2);
    let dir = tempfile::tempdir().unwrap();
    for colour in [WHITE, RGBColor(16, 18, 24)] {
        let path = dir.path().join("drawn.png");
        draw_png(&path, size, colour, |root| {
            draw_chart(root, style);
            Ok(())
        })
        .unwrap();
        let mut filled = vec![0u8; 3 * 300 * 170];
        {
            let root = BitMapBackend::with_buffer(&mut filled, size).into_drawing_area();
            root.fill(&colour).unwrap();
            draw_chart(&root, style);
        }
        assert_eq!(
            std::fs::read(&path).unwrap(),
            encode(size, &filled).unwrap()
        );
    }
}

/// One drawing call of [`random_calls`].
#[derive(Clone, Debug)]
enum Call {
    Line(BackendCoord, BackendCoord, ShapeStyle),
    Pixel(BackendCoord, RGBAColor),
    Rect(BackendCoord, BackendCoord, ShapeStyle),
    Path(Vec<BackendCoord>, ShapeStyle),
    Circle(BackendCoord, u32, ShapeStyle),
    Polygon(Vec<BackendCoord>, ShapeStyle),
    Text(BackendCoord, RGBAColor),
    /// A 2 × 2 bitmap of these bytes.
    Blit(BackendCoord, [u8; 12]),
    Prepare,
    Present,
}

/// `n` random drawing calls on a `size` picture: mostly lines along an axis, translucent, one
/// pixel wide, some reaching past the edges or drawn bottom to top; alphas at plotters' edges
/// (0, between 255/256 and 1, 1); between them every other kind of call, each of which must
/// first blend in the lines held back. On the test's small pictures (1 to 13 columns) the
/// lines meet.
fn random_calls(rng: &mut impl Rng, size: (u32, u32), n: usize) -> Vec<Call> {
    let (w, h) = (size.0 as i32, size.1 as i32);
    let alphas = [0.0, 0.03, 0.1, 0.2, 0.5, 0.9, 0.997, 1.0];
    let coord =
        |rng: &mut dyn rand::RngCore| (rng.random_range(-2..w + 2), rng.random_range(-2..h + 2));
    (0..n)
        .map(|_| {
            let colour = RGBColor(rng.random(), rng.random(), rng.random());
            let alpha = alphas[rng.random_range(0..alphas.len())];
            let width = if rng.random_bool(0.9) { 1 } else { 2 };
            let style = colour.mix(alpha).stroke_width(width);
            let (a, b) = (coord(rng), coord(rng));
            match rng.random_range(0..64) {
                0..=47 => Call::Line(a, (a.0, b.1), style),
                48..=50 => Call::Line(a, (b.0, a.1), style),
                51 => Call::Line(a, b, style),
                52 => Call::Pixel(a, colour.mix(alpha)),
                53 => Call::Rect(a, b, style.filled()),
                54 => Call::Rect(a, b, style),
                55 => Call::Path(vec![a, (a.0, b.1), b], style),
                56 => Call::Circle(a, rng.random_range(0..4), style),
                57 => Call::Circle(a, rng.random_range(0..4), style.filled()),
                58 => Call::Polygon(vec![a, b, (a.0, b.1)], style),
                59 => Call::Text(a, colour.mix(alpha)),
                // On the picture: plotters' bitmap backend cannot blit from off its edges.
                60 => Call::Blit((a.0.clamp(0, w - 1), a.1.clamp(0, h - 1)), rng.random()),
                61 => Call::Prepare,
                _ => Call::Present,
            }
        })
        .collect()
}

/// Makes `call` on `backend`.
fn make<DB: DrawingBackend>(backend: &mut DB, call: &Call) {
    match call {
        Call::Line(from, to, style) => backend.draw_line(*from, *to, style),
        Call::Pixel(at, colour) => backend.draw_pixel(*at, colour.to_backend_color()),
        Call::Rect(a, b, style) => backend.draw_rect(*a, *b, style, style.filled),
        Call::Path(points, style) => backend.draw_path(points.iter().copied(), style),
        Call::Circle(at, r, style) => backend.draw_circle(*at, *r, style, style.filled),
        Call::Polygon(points, style) => backend.fill_polygon(points.iter().copied(), style),
        Call::Text(at, colour) => {
            let font = ("sans-serif", 9).into_font().color(colour);
            backend.draw_text("Rt", &font, *at)
        }
        Call::Blit(at, bytes) => backend.blit_bitmap(*at, (2, 2), bytes),
        Call::Prepare => backend.ensure_prepared(),
        Call::Present => backend.present(),
    }
    .unwrap();
}

#[test]
fn the_held_lines_leave_the_pixels_plotters_bitmap_draws() {
    crate::fonts::ensure_font();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
    let mut held_most = 0;
    for round in 0..300 {
        let size = (rng.random_range(1..14), rng.random_range(1..40));
        let n = rng.random_range(1..60);
        let calls = random_calls(&mut rng, size, n);
        // Random bytes, or pixels of three colours (black among them), which lines cross
        // again and again.
        let palette = [[0, 0, 0], [255, 255, 255], [200, 10, 90]];
        let start: Vec<u8> = if round % 2 == 0 {
            (0..3 * size.0 * size.1).map(|_| rng.random()).collect()
        } else {
            (0..size.0 * size.1)
                .flat_map(|_| palette[rng.random_range(0..palette.len())])
                .collect()
        };
        let mut theirs = start.clone();
        {
            let mut backend = BitMapBackend::with_buffer(&mut theirs, size);
            for call in &calls {
                make(&mut backend, call);
            }
        }
        let mut ours = start;
        {
            let mut backend = Bitmap::new(&mut ours, size);
            for call in &calls {
                make(&mut backend, call);
                held_most = held_most.max(backend.held());
            }
        }
        assert_eq!(ours, theirs, "round {round}, {size:?}, {calls:?}");
    }
    // The lines were held, several at once, rather than drawn as they came.
    assert!(held_most >= 10, "at most {held_most} lines held");
}
