//! The backend the crate's pictures are drawn on: plotters' bitmap backend over a canvas's
//! pixels, except that translucent lines along an axis that cover one column of pixels (in a
//! chart, the vertical grid lines) are held back, then blended a row at a time. plotters blends
//! such a line one pixel per row, down the whole picture, recomputing the blend at every pixel;
//! the grids of a run's two pictures took 1.1–1.25 ms of CPU time (BENCHMARKS.md,
//! twenty-seventh stop). Here the held lines' pixels of a row are blended together, and each
//! line remembers the colour of the last pixel it was blended over and the result: a grid line
//! crosses the background, one colour, nearly all the way. The pixels come out the same: a held
//! line gets the arithmetic plotters gives it, the held lines of a pixel are blended in the
//! order they were drawn, and anything else drawn blends every held line in first. A line
//! that would blend nothing (an alpha of 0, or wholly off the picture) is dropped.

use std::ops::Range;

use plotters::prelude::{BitMapBackend, DrawingBackend};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use plotters_bitmap::BitMapBackendError;

use super::BPP;

/// A held line: one column of pixels, a range of rows, a colour and its weight.
#[derive(Debug)]
struct Held {
    /// The pixel column.
    x: usize,
    /// The rows, top to bottom.
    rows: Range<usize>,
    /// Red, green and blue.
    rgb: [u8; BPP],
    /// The colour's weight in 256ths, as plotters rounds an alpha: `⌊256 α⌋`.
    weight: u64,
}

/// Plotters' bitmap backend on `pixels`, holding back translucent lines one column wide
/// until something else is drawn, the picture is presented or the backend is dropped.
pub struct Bitmap<'a> {
    pixels: &'a mut [u8],
    size: (u32, u32),
    held: Vec<Held>,
}

impl<'a> Bitmap<'a> {
    /// A backend drawing on `pixels`: RGB, rows top to bottom, `size.0` pixels a row.
    pub fn new(pixels: &'a mut [u8], size: (u32, u32)) -> Bitmap<'a> {
        assert!(
            pixels.len() >= BPP * size.0 as usize * size.1 as usize,
            "pixels for the picture's size"
        );
        Bitmap {
            pixels,
            size,
            held: Vec::new(),
        }
    }

    /// Lines held now.
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        self.held.len()
    }

    /// Plotters' own backend on the pixels, after the held lines are blended in.
    fn plotters(&mut self) -> BitMapBackend<'_> {
        self.blend_held();
        BitMapBackend::with_buffer(self.pixels, self.size)
    }

    /// The line from `from` to `to` as plotters' bitmap backend draws it (see
    /// `BitMapBackend::draw_line`): a line along an axis, one pixel wide and translucent,
    /// blended over the rectangle from `from` to `to` + (1, 1) with the corners put in
    /// order and cut to the picture. `None` when it is not such a line or covers more than
    /// one column; `Some(None)` when it blends nothing.
    fn hold(
        &self,
        from: BackendCoord,
        to: BackendCoord,
        style: &impl BackendStyle,
    ) -> Option<Option<Held>> {
        let colour = style.color();
        let along_an_axis = from.0 == to.0 || from.1 == to.1;
        // Plotters fills rather than blends from an alpha of 1.
        if !along_an_axis || style.stroke_width() != 1 || colour.alpha >= 1.0 {
            return None;
        }
        let (w, h) = (self.size.0 as i32, self.size.1 as i32);
        let corner = (to.0 + 1, to.1 + 1);
        let (x0, x1) = (from.0.min(corner.0).max(0), from.0.max(corner.0).min(w));
        let (y0, y1) = (from.1.min(corner.1).max(0), from.1.max(corner.1).min(h));
        let alpha = colour.alpha.clamp(0.0, 1.0);
        if x0 >= x1 || y0 >= y1 || alpha == 0.0 {
            return Some(None);
        }
        if x1 - x0 != 1 {
            return None;
        }
        Some(Some(Held {
            x: x0 as usize,
            rows: y0 as usize..y1 as usize,
            rgb: [colour.rgb.0, colour.rgb.1, colour.rgb.2],
            weight: (256.0 * alpha).floor() as u64,
        }))
    }

    /// Blends the held lines in, a row at a time: in each row, the lines that cross it in the
    /// order they were drawn.
    fn blend_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let mut held = std::mem::take(&mut self.held);
        // Lines by first row (a stable sort: drawn order within one).
        let mut by_top: Vec<usize> = (0..held.len()).collect();
        by_top.sort_by_key(|&i| held[i].rows.start);
        let mut next = by_top.iter().peekable();
        // The lines crossing the current row, in drawn order; the first row past one of them.
        let mut crossing: Vec<Crossing> = Vec::new();
        let mut first_end = usize::MAX;
        let row_bytes = BPP * self.size.0 as usize;
        let mut y = held[by_top[0]].rows.start;
        loop {
            while let Some(&&i) = next.peek() {
                if held[i].rows.start > y {
                    break;
                }
                let at = crossing.partition_point(|c| c.order < i);
                crossing.insert(at, Crossing::new(i, &held[i]));
                first_end = first_end.min(held[i].rows.end);
                next.next();
            }
            if y >= first_end {
                crossing.retain(|c| c.end > y);
                first_end = crossing.iter().map(|c| c.end).min().unwrap_or(usize::MAX);
            }
            if crossing.is_empty() {
                match next.peek() {
                    Some(&&i) => y = held[i].rows.start,
                    None => break,
                }
                continue;
            }
            let row = &mut self.pixels[y * row_bytes..(y + 1) * row_bytes];
            for c in &mut crossing {
                let pixel: &mut [u8; BPP] = (&mut row[c.at..c.at + BPP]).try_into().unwrap();
                c.blend(pixel);
            }
            y += 1;
        }
        held.clear();
        self.held = held;
    }
}

/// A held line while its rows are blended, with the colour of the last pixel it was blended
/// over: a line usually crosses pixels of one colour (the background, drawn before it).
struct Crossing {
    /// Where it was in the drawing order.
    order: usize,
    /// Its pixel's first byte in a row.
    at: usize,
    /// The first row past it.
    end: usize,
    rgb: [u8; BPP],
    weight: u64,
    /// The last pixel it was blended over, and what that became.
    was: [u8; BPP],
    became: [u8; BPP],
}

impl Crossing {
    /// Line `order` of the drawing, `line`.
    fn new(order: usize, line: &Held) -> Crossing {
        let mut c = Crossing {
            order,
            at: line.x * BPP,
            end: line.rows.end,
            rgb: line.rgb,
            weight: line.weight,
            was: [0; BPP],
            became: [0; BPP],
        };
        c.became = c.over([0; BPP]);
        c
    }

    /// The line blended over `pixel`.
    #[inline(always)]
    fn over(&self, pixel: [u8; BPP]) -> [u8; BPP] {
        std::array::from_fn(|k| blend(pixel[k], self.rgb[k], self.weight))
    }

    /// Blends the line over `pixel`.
    #[inline(always)]
    fn blend(&mut self, pixel: &mut [u8; BPP]) {
        if *pixel != self.was {
            self.was = *pixel;
            self.became = self.over(*pixel);
        }
        *pixel = self.became;
    }
}

/// `old` moved towards `new` by `weight` 256ths of the way, rounded towards `old`, as
/// plotters' bitmap blends a byte.
#[inline(always)]
fn blend(old: u8, new: u8, weight: u64) -> u8 {
    let part = |d: u8| (u64::from(d) * weight / 256) as u8;
    if new > old {
        old + part(new - old)
    } else {
        old - part(old - new)
    }
}

impl Drop for Bitmap<'_> {
    fn drop(&mut self) {
        self.blend_held();
    }
}

/// Every call that draws goes to plotters' backend, after the held lines are blended in, except
/// a line that [`Bitmap::hold`] takes. Text is measured as plotters' backend measures it (the
/// trait's own way, which draws nothing).
impl DrawingBackend for Bitmap<'_> {
    type ErrorType = BitMapBackendError;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.plotters().ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.plotters().present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.plotters().draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        match self.hold(from, to, style) {
            Some(held) => {
                self.held.extend(held);
                Ok(())
            }
            None => self.plotters().draw_line(from, to, style),
        }
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.plotters()
            .draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.plotters().draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.plotters().draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.plotters().fill_polygon(vert, style)
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.plotters().draw_text(text, style, pos)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.plotters().blit_bitmap(pos, size, src)
    }
}
