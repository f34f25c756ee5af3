//! The PNG files the crate writes (plots, video frames): 8-bit RGB pixels, each row filtered
//! with whichever of Sub, Up, Average and Paeth leaves the smallest sum of the filtered bytes'
//! absolute values, read as signed (the later of them on a tie; None is never tried), then
//! deflated with `fdeflate` — or, when deflating would come out longer, kept unfiltered in
//! stored blocks — in one `IDAT` chunk (several past 2 GiB). These are the bytes plotters' own
//! file backend wrote (plotters-bitmap through `image` 0.24 and `png` 0.17, whose adaptive
//! filter chose rows this way; a test compares them), made faster: the four filters' sums come
//! from one pass over a row, at the vector path `sim::lanes` chose (the widest this CPU has
//! unless `PANDEMIC_BOIDS_SIMD` says otherwise), instead of four passes at the baseline's. The
//! Paeth predictor is worked out in bytes only, as FPNGE (Luca Versari's fast PNG encoder)
//! does. The pictures are drawn on [`Bitmap`] (`bitmap`), plotters' bitmap backend with its
//! vertical grid lines blended a row at a time. It sits beside the layers, like `fonts`: it
//! uses `sim::lanes`, and `run` and `view` use it.

use std::io::{Cursor, Write};
use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, IntoDrawingArea, RGBColor};

mod bitmap;

pub use bitmap::Bitmap;

/// Bytes per pixel: red, green and blue, 8 bits each.
const BPP: usize = 3;

/// The PNG signature.
const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// The longest chunk the `png` crate writes; longer data goes into several `IDAT` chunks.
const MAX_CHUNK: usize = (u32::MAX >> 1) as usize;

/// The PNG filter types, as the byte that starts a filtered row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Filter {
    None = 0,
    Sub = 1,
    Up = 2,
    Average = 3,
    Paeth = 4,
}

/// The candidates in the order they are tried: a later one wins a tie.
const CANDIDATES: [Filter; 4] = [Filter::Sub, Filter::Up, Filter::Average, Filter::Paeth];

/// Draws on a `size` canvas of `background` and writes it to `path` as a PNG. The canvas
/// starts as that colour, which is what filling it with plotters gives, without plotters'
/// pixel-by-pixel fill (a tenth of a plot's drawing time).
pub fn draw_png(
    path: &Path,
    size: (u32, u32),
    background: RGBColor,
    draw: impl FnOnce(&DrawingArea<Bitmap<'_>, Shift>) -> Result<()>,
) -> Result<()> {
    let RGBColor(r, g, b) = background;
    let mut canvas = Canvas::new(size.0 as usize * size.1 as usize, [r, g, b]);
    {
        let root = Bitmap::new(canvas.pixels(), size).into_drawing_area();
        draw(&root)?;
    }
    write_png(path, size, canvas.pixels())
}

/// The size of a huge page on x86-64 (and on ARM with 4 KiB pages): memory is given to a
/// program a page at a time, each on first use (a page fault), 4 KiB or, where asked for and
/// the system allows it, this much.
const HUGE_PAGE: usize = 2 << 20;

/// A canvas's pixels, every one set to one colour at the start. They sit in memory aligned to
/// [`HUGE_PAGE`], in whole huge pages, which on Linux are advised to be backed by huge pages
/// (`MADV_HUGEPAGE`; the system's transparent huge pages set to `madvise` or `always`): a
/// plot's 1.35–1.62 MB then take one page fault instead of 330–396, which took 0.6–0.7 ms on
/// the KVM machines of BENCHMARKS.md (nineteenth stop). Where the system gives no huge page,
/// the advice changes nothing.
struct Canvas {
    memory: std::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
    len: usize,
}

impl Canvas {
    /// `pixels` pixels of `colour`.
    fn new(pixels: usize, colour: [u8; BPP]) -> Canvas {
        let fits = "a canvas's size fits in memory";
        let len = pixels.checked_mul(BPP).expect(fits);
        let whole = len.checked_next_multiple_of(HUGE_PAGE).expect(fits);
        let layout =
            std::alloc::Layout::from_size_align(whole.max(HUGE_PAGE), HUGE_PAGE).expect(fits);
        assert!(len <= layout.size(), "{fits}");
        // SAFETY: the layout's size is not zero.
        let memory = unsafe { std::alloc::alloc(layout) };
        let Some(memory) = std::ptr::NonNull::new(memory) else {
            std::alloc::handle_alloc_error(layout)
        };
        #[cfg(target_os = "linux")]
        // SAFETY: the range is the allocation just made; the advice only says how to back it.
        unsafe {
            libc::madvise(memory.as_ptr().cast(), layout.size(), libc::MADV_HUGEPAGE);
        }
        // SAFETY: the first `len` bytes of the allocation, not yet initialised, written here
        // before anything reads them.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(memory.as_ptr().cast::<std::mem::MaybeUninit<u8>>(), len)
        };
        // One pixel, then doubling what is written, as `[u8]::repeat` does.
        let mut written = len.min(BPP);
        for (byte, &c) in bytes.iter_mut().zip(&colour) {
            byte.write(c);
        }
        while written < len {
            let more = written.min(len - written);
            bytes.copy_within(..more, written);
            written += more;
        }
        Canvas {
            memory,
            layout,
            len,
        }
    }

    /// The pixels, rows top to bottom.
    fn pixels(&mut self) -> &mut [u8] {
        // SAFETY: the first `len` bytes were initialised by `new`, and `self` is borrowed for
        // as long as the slice.
        unsafe { std::slice::from_raw_parts_mut(self.memory.as_ptr(), self.len) }
    }
}

impl Drop for Canvas {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, and freed once.
        unsafe { std::alloc::dealloc(self.memory.as_ptr(), self.layout) }
    }
}

/// Writes RGB `pixels` (rows top to bottom, `size.0` pixels each) to `path` as a PNG.
fn write_png(path: &Path, size: (u32, u32), pixels: &[u8]) -> Result<()> {
    let cannot = |e: std::io::Error| {
        anyhow!(
            "cannot write `{}`: {e} (check free space and permissions)",
            path.display()
        )
    };
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).map_err(cannot)?);
    write_to(&mut file, size, pixels).map_err(cannot)?;
    file.flush().map_err(cannot)
}

/// Writes the PNG file of RGB `pixels` to `out`: the signature, then the header, image data
/// and end chunks; an error for a picture with no pixels (a PNG has at least one each way).
fn write_to(
    out: &mut impl Write,
    (width, height): (u32, u32),
    pixels: &[u8],
) -> std::io::Result<()> {
    if width == 0 || height == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("a {width} × {height} picture: a PNG has at least one pixel each way"),
        ));
    }
    let row = BPP * width as usize;
    assert_eq!(
        pixels.len(),
        row * height as usize,
        "pixels of another size"
    );
    let mut header = [0u8; 13];
    header[..4].copy_from_slice(&width.to_be_bytes());
    header[4..8].copy_from_slice(&height.to_be_bytes());
    // 8 bits a sample, colour type 2 (RGB), deflate, adaptive filtering, no interlace.
    header[8..].copy_from_slice(&[8, 2, 0, 0, 0]);
    out.write_all(&SIGNATURE)?;
    chunk(out, b"IHDR", &header)?;
    for part in zlib(pixels, row).chunks(MAX_CHUNK) {
        chunk(out, b"IDAT", part)?;
    }
    chunk(out, b"IEND", &[])
}

/// Writes one chunk: length, type, data and the CRC-32 of type and data.
fn chunk(out: &mut impl Write, kind: &[u8; 4], data: &[u8]) -> std::io::Result<()> {
    out.write_all(&(data.len() as u32).to_be_bytes())?;
    out.write_all(kind)?;
    out.write_all(data)?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    out.write_all(&crc.finalize().to_be_bytes())
}

/// The zlib stream of the filtered rows, a row (its filter byte, then its bytes) at a time;
/// or of the unfiltered rows in stored blocks, when deflating would come out longer.
fn zlib(pixels: &[u8], row: usize) -> Vec<u8> {
    let rows = pixels.len() / row;
    // Writing to a `Vec` cannot fail. A plot's deflated rows are about an eighth of its pixels.
    let buffer = Cursor::new(Vec::with_capacity(pixels.len() / 8));
    let mut deflate = fdeflate::Compressor::new(buffer).expect("in memory");
    crate::sim::lanes::vectorized!({
        each_filtered_row(pixels, row, |line| {
            deflate.write_data(line).expect("in memory")
        })
    });
    let deflated = deflate.finish().expect("in memory").into_inner();
    if deflated.len() <= fdeflate::StoredOnlyCompressor::<()>::compressed_size((row + 1) * rows) {
        return deflated;
    }
    let mut stored =
        fdeflate::StoredOnlyCompressor::new(Cursor::new(Vec::new())).expect("in memory");
    for line in pixels.chunks(row) {
        stored.write_data(&[Filter::None as u8]).expect("in memory");
        stored.write_data(line).expect("in memory");
    }
    stored.finish().expect("in memory").into_inner()
}

/// Calls `f` with every row of `pixels` (`row` bytes each) filtered, after its filter's byte,
/// in order. Plain byte arithmetic that LLVM vectorizes at the width it is compiled for.
#[inline(always)]
fn each_filtered_row(pixels: &[u8], row: usize, mut f: impl FnMut(&[u8])) {
    let zeros = vec![0u8; row];
    let mut line = vec![0u8; row + 1];
    let mut prev: &[u8] = &zeros;
    for cur in pixels.chunks(row) {
        if cur == prev {
            // The row above again (a quarter to a third of a plot's rows): Paeth then
            // predicts every byte, as the byte above, so its sum is 0, the least, and as the
            // last candidate it wins every tie. The four sums need not be worked out.
            line[0] = Filter::Paeth as u8;
            line[1..].fill(0);
        } else {
            let filter = choose(prev, cur);
            line[0] = filter as u8;
            apply(filter, prev, cur, &mut line[1..]);
        }
        f(&line);
        prev = cur;
    }
}

/// The filter for row `cur` under row `prev`: the smallest sum of the filtered bytes' absolute
/// values (each byte read as a signed one), the later candidate on a tie.
#[inline(always)]
fn choose(prev: &[u8], cur: &[u8]) -> Filter {
    let sums = sums(prev, cur);
    let mut best = (u64::MAX, Filter::None);
    for (filter, sum) in CANDIDATES.into_iter().zip(sums) {
        if sum <= best.0 {
            best = (sum, filter);
        }
    }
    best.1
}

/// A filtered byte's cost: its absolute value as a signed byte.
#[inline(always)]
fn cost(x: u8) -> u8 {
    (x as i8).unsigned_abs()
}

/// The Paeth predictor of a byte from the one to its left (`a`), above (`b`) and above left
/// (`c`): whichever is nearest to `p = a + b − c`, `a` then `b` on a tie. In bytes only, so
/// that a vector holds 32 of them: `|p − a| = |b − c|` and `|p − b| = |a − c|`; when `c` lies
/// between `a` and `b`, `p − c` is the difference of `a − c` and `c − b`, so
/// `|p − c| = ||b − c| − |a − c||`; otherwise `a − c` and `b − c` have one sign and
/// `|p − c|` is at least either, so `c` is never the nearest and 255 stands in for it.
#[inline(always)]
fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let pa = b.max(c) - b.min(c);
    let pb = a.max(c) - a.min(c);
    let pc = if (a <= c) == (c <= b) {
        pa.max(pb) - pa.min(pb)
    } else {
        u8::MAX
    };
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

/// The Average predictor: the mean of left and above, rounded down.
#[inline(always)]
fn average(a: u8, b: u8) -> u8 {
    ((u16::from(a) + u16::from(b)) / 2) as u8
}

/// Bytes a pass takes at a time, each into its own `u16` lane of a sum.
const BLOCK: usize = 32;

/// Blocks after which the lanes are added into the sums: 256 costs of at most 128 make at most
/// 32 768, which fits a `u16` (up to 511 would).
const FLUSH: usize = 256;

/// [`CANDIDATES`]' costs of byte `x` from its neighbours (as in [`predict`]).
#[inline(always)]
fn costs(x: u8, a: u8, b: u8, c: u8) -> [u8; 4] {
    CANDIDATES.map(|f| cost(x.wrapping_sub(predict(f, a, b, c))))
}

/// The sums of [`CANDIDATES`]' costs over row `cur` under `prev`, in one pass. Left of the
/// first pixel, `a` and `c` are 0.
#[inline(always)]
fn sums(prev: &[u8], cur: &[u8]) -> [u64; 4] {
    let n = cur.len().min(BPP);
    let mut total = [0u64; 4];
    for i in 0..n {
        for (t, c) in total.iter_mut().zip(costs(cur[i], 0, prev[i], 0)) {
            *t += u64::from(c);
        }
    }
    if cur.len() <= BPP {
        return total;
    }
    let m = cur.len() - BPP;
    let (x, a) = (&cur[BPP..], &cur[..m]);
    let (b, c) = (&prev[BPP..BPP + m], &prev[..m]);
    let (xs, x_rest) = x.as_chunks::<BLOCK>();
    let (as_, a_rest) = a.as_chunks::<BLOCK>();
    let (bs, b_rest) = b.as_chunks::<BLOCK>();
    let (cs, c_rest) = c.as_chunks::<BLOCK>();
    // Each candidate's costs in 32 lanes, added across the lanes only at a flush.
    let mut lanes = [[0u16; BLOCK]; 4];
    let flush = |lanes: &mut [[u16; BLOCK]; 4], total: &mut [u64; 4]| {
        for (t, l) in total.iter_mut().zip(lanes.iter_mut()) {
            *t += l.iter().map(|&v| u64::from(v)).sum::<u64>();
            *l = [0; BLOCK];
        }
    };
    for (k, (((x, a), b), c)) in xs.iter().zip(as_).zip(bs).zip(cs).enumerate() {
        for i in 0..BLOCK {
            for (lane, c) in lanes.iter_mut().zip(costs(x[i], a[i], b[i], c[i])) {
                lane[i] += u16::from(c);
            }
        }
        if k % FLUSH == FLUSH - 1 {
            flush(&mut lanes, &mut total);
        }
    }
    flush(&mut lanes, &mut total);
    for i in 0..x_rest.len() {
        let (x, a, b, c) = (x_rest[i], a_rest[i], b_rest[i], c_rest[i]);
        for (t, c) in total.iter_mut().zip(costs(x, a, b, c)) {
            *t += u64::from(c);
        }
    }
    total
}

/// What `filter` predicts a byte to be from the one to its left (`a`), above (`b`) and above
/// left (`c`).
#[inline(always)]
fn predict(filter: Filter, a: u8, b: u8, c: u8) -> u8 {
    match filter {
        Filter::None => 0,
        Filter::Sub => a,
        Filter::Up => b,
        Filter::Average => average(a, b),
        Filter::Paeth => paeth(a, b, c),
    }
}

/// Row `cur` under `prev` filtered with `filter` into `out`: each byte less its prediction.
#[inline(always)]
fn apply(filter: Filter, prev: &[u8], cur: &[u8], out: &mut [u8]) {
    let n = cur.len().min(BPP);
    for i in 0..n {
        out[i] = cur[i].wrapping_sub(predict(filter, 0, prev[i], 0));
    }
    if cur.len() <= BPP {
        return;
    }
    let m = cur.len() - BPP;
    let (x, a) = (&cur[BPP..], &cur[..m]);
    let (b, c) = (&prev[BPP..BPP + m], &prev[..m]);
    let out = &mut out[BPP..BPP + m];
    // One loop per filter, so that each is a plain loop to vectorize.
    macro_rules! each {
        ($f:expr) => {
            for (((o, &x), (&a, &b)), &c) in out.iter_mut().zip(x).zip(a.iter().zip(b)).zip(c) {
                *o = x.wrapping_sub(predict($f, a, b, c));
            }
        };
    }
    match filter {
        Filter::None => out.copy_from_slice(x),
        Filter::Sub => each!(Filter::Sub),
        Filter::Up => each!(Filter::Up),
        Filter::Average => each!(Filter::Average),
        Filter::Paeth => each!(Filter::Paeth),
    }
}

#[cfg(test)]
mod tests;
