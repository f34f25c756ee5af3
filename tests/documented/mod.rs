//! The documents' simulation-derived numbers as data: `docs/reproduced/` holds what
//! `docs/reproduce.sh` measured (distilled from its runs by [`distil`]), and every block of a
//! document between `<!-- reproduced:NAME -->` and `<!-- /reproduced -->` is rendered from it
//! ([`render::block`]). Blocks are whole paragraphs or tables (markers on their own lines), or
//! a span inside a line (markers mid-line; a marker must not start a line inside a paragraph,
//! where Markdown would end the paragraph).

pub mod distil;
pub mod matrix;
pub mod render;
pub mod research;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pandemic_boids::run::results::measure_range;
use pandemic_boids::sim::stats::{Estimate, estimate};

/// Where the committed data live.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/reproduced")
}

/// The counts of the default scenario's first minute (`story.csv`, after `run` and `seed`).
pub const STORY_COUNTS: [&str; 6] = [
    "contact_infections",
    "antivax_infected_by_contact",
    "infections_by_antivax",
    "cures",
    "recoveries",
    "deaths",
];

/// The documents whose blocks are rendered, relative to the repository.
pub const DOCUMENTS: [&str; 3] = ["README.md", "docs/model.md", "BENCHMARKS.md"];

/// A CSV table read whole (no quoted fields: every file here is numbers and plain names).
#[derive(Clone, Debug, Default)]
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Csv {
    pub fn parse(text: &str) -> Csv {
        let mut lines = text.lines().filter(|l| !l.is_empty());
        let split = |l: &str| l.split(',').map(str::to_string).collect::<Vec<_>>();
        let header = lines.next().map(split).unwrap_or_default();
        Csv {
            header,
            rows: lines.map(split).collect(),
        }
    }

    pub fn read(path: &Path) -> Csv {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        Csv::parse(&text)
    }

    pub fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column `{name}` in {:?}", self.header))
    }

    /// The text of a cell.
    pub fn text(&self, row: usize, name: &str) -> &str {
        &self.rows[row][self.col(name)]
    }

    /// A cell as a number (None: empty).
    pub fn num(&self, row: usize, name: &str) -> Option<f64> {
        let t = self.text(row, name);
        (!t.is_empty()).then(|| {
            t.parse()
                .unwrap_or_else(|_| panic!("`{t}` in column `{name}` is not a number"))
        })
    }

    /// The rows whose `key` column equals `value`.
    pub fn rows_where(&self, key: &str, value: &str) -> Vec<usize> {
        let k = self.col(key);
        (0..self.rows.len())
            .filter(|&r| self.rows[r][k] == value)
            .collect()
    }

    /// The first row whose `key` column equals `value`.
    pub fn row(&self, key: &str, value: &str) -> usize {
        *self
            .rows_where(key, value)
            .first()
            .unwrap_or_else(|| panic!("no row with {key} = {value}"))
    }

    /// A measure's values over some rows (undefined ones left out).
    pub fn values(&self, rows: &[usize], name: &str) -> Vec<f64> {
        rows.iter().filter_map(|&r| self.num(r, name)).collect()
    }

    /// Mean and 95 % CI of a measure over some rows, the interval cut to what the measure can
    /// be (as `aggregate.csv` does).
    pub fn estimate(&self, rows: &[usize], name: &str) -> Estimate {
        let e = estimate(self.values(rows, name))
            .unwrap_or_else(|| panic!("`{name}` is undefined in every run"));
        let (lo, hi) = measure_range(name);
        Estimate {
            ci_low: e.ci_low.max(lo),
            ci_high: e.ci_high.min(hi),
            ..e
        }
    }

    /// Mean and 95 % CI of a measure over some rows, the interval not cut (symmetric).
    pub fn spread(&self, rows: &[usize], name: &str) -> Estimate {
        estimate(self.values(rows, name))
            .unwrap_or_else(|| panic!("`{name}` is undefined in every run"))
    }

    pub fn to_text(&self) -> String {
        let mut out = self.header.join(",") + "\n";
        for r in &self.rows {
            out += &(r.join(",") + "\n");
        }
        out
    }
}

/// The committed data: CSV files by name, and `numbers.csv` (`name,value`).
pub struct Data {
    dir: PathBuf,
    numbers: BTreeMap<String, f64>,
}

impl Data {
    pub fn open(dir: &Path) -> Data {
        let numbers = Csv::read(&dir.join("numbers.csv"));
        let numbers = (0..numbers.rows.len())
            .map(|r| {
                let v = numbers.num(r, "value").expect("a value");
                (numbers.text(r, "name").to_string(), v)
            })
            .collect();
        Data {
            dir: dir.to_path_buf(),
            numbers,
        }
    }

    pub fn csv(&self, name: &str) -> Csv {
        Csv::read(&self.dir.join(format!("{name}.csv")))
    }

    pub fn number(&self, name: &str) -> f64 {
        *self
            .numbers
            .get(name)
            .unwrap_or_else(|| panic!("numbers.csv has no `{name}`"))
    }
}

/// One marked block of a document.
#[derive(Debug, PartialEq)]
pub struct Block {
    pub name: String,
    /// Byte range of the text between the markers.
    pub range: std::ops::Range<usize>,
}

const OPEN: &str = "<!-- reproduced:";
const CLOSE: &str = "<!-- /reproduced -->";

/// The marked blocks of a document, in order; an unclosed or nested marker is an error.
pub fn blocks(doc: &str) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(k) = doc[at..].find(OPEN) {
        let start = at + k;
        let name_end = doc[start..]
            .find(" -->")
            .map(|e| start + e)
            .ok_or_else(|| format!("unclosed marker at byte {start}"))?;
        let name = doc[start + OPEN.len()..name_end].trim().to_string();
        let body = name_end + " -->".len();
        let end = doc[body..]
            .find(CLOSE)
            .map(|e| body + e)
            .ok_or_else(|| format!("block `{name}` has no {CLOSE}"))?;
        let starts_line = start == 0 || doc.as_bytes()[start - 1] == b'\n';
        if starts_line && !doc[body..].starts_with('\n') {
            return Err(format!(
                "block `{name}` starts a line but not its own: inside a paragraph Markdown \
                 would end the paragraph there (put a word before it, or the block on lines \
                 of its own)"
            ));
        }
        if doc[body..end].contains(OPEN) {
            return Err(format!("block `{name}` contains another block"));
        }
        out.push(Block {
            name,
            range: body..end,
        });
        at = end + CLOSE.len();
    }
    Ok(out)
}

/// The document with every block replaced by `render(name)`, and the names whose text differs.
pub fn rerender(
    doc: &str,
    mut render: impl FnMut(&str) -> String,
) -> Result<(String, Vec<String>), String> {
    let mut out = String::with_capacity(doc.len());
    let mut stale = Vec::new();
    let mut at = 0;
    for b in blocks(doc)? {
        out.push_str(&doc[at..b.range.start]);
        let body = &doc[b.range.clone()];
        // A block on lines of its own is rendered on lines of its own, its prose wrapped.
        let want = if body.starts_with('\n') {
            format!("\n{}\n", wrap(render(&b.name).trim_matches('\n'), 100))
        } else {
            render(&b.name)
        };
        if body != want {
            stale.push(b.name.clone());
        }
        out.push_str(&want);
        at = b.range.end;
    }
    out.push_str(&doc[at..]);
    Ok((out, stale))
}

/// Prose wrapped at `width` characters (lines of a table and blank lines kept as they are; a
/// list item's continuation lines indented by two spaces).
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = Vec::new();
    for line in text.split('\n') {
        if line.starts_with('|') || line.chars().count() <= width {
            out.push(line.to_string());
            continue;
        }
        let indent = if line.starts_with("- ") { "  " } else { "" };
        let mut cur = String::new();
        for word in line.split(' ') {
            let too_long = cur.chars().count() + 1 + word.chars().count() > width;
            if !cur.is_empty() && too_long && !starts_a_block(word) {
                out.push(std::mem::take(&mut cur));
                cur.push_str(indent);
            } else if !cur.is_empty() && cur != indent {
                cur.push(' ');
            }
            cur.push_str(word);
        }
        out.push(cur);
    }
    out.join("\n")
}

/// Whether a word at the start of a line would make Markdown start a list, heading or quote.
fn starts_a_block(word: &str) -> bool {
    let digits = word.trim_end_matches(['.', ')']);
    matches!(word, "-" | "+" | "*" | ">")
        || word.chars().all(|c| c == '#')
        || (digits.len() < word.len() && digits.chars().all(|c| c.is_ascii_digit()))
}

/// `x` with `digits` decimals, a minus sign for negatives, and no "-0".
pub fn fixed(x: f64, digits: usize) -> String {
    let s = format!("{x:.digits$}");
    let s = if s
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        s.trim_start_matches('-').to_string()
    } else {
        s
    };
    s.replace('-', "−")
}

/// `x` with `digits` decimals and a sign (`+0.76`, `−0.05`).
pub fn signed(x: f64, digits: usize) -> String {
    let s = fixed(x, digits);
    if s.starts_with('−') {
        s
    } else {
        format!("+{s}")
    }
}

/// An estimate as `mean [lo, hi]`.
pub fn bracket(e: &Estimate, digits: usize) -> String {
    format!(
        "{} [{}, {}]",
        fixed(e.mean, digits),
        fixed(e.ci_low, digits),
        fixed(e.ci_high, digits)
    )
}

/// An estimate as `mean ± half-width of its 95 % CI` (give it an uncut estimate:
/// [`Csv::spread`]).
pub fn plus_minus(e: &Estimate, digits: usize) -> String {
    let half = (e.ci_high - e.ci_low) / 2.0;
    // A half-width that rounds to nothing gets up to two more decimals (0.009 ± 0.003, not
    // 0.01 ± 0.00).
    let mut digits = digits;
    let zero = |s: String| s.chars().all(|c| c == '0' || c == '.');
    while half > 0.0 && zero(fixed(half, digits)) && digits < 6 {
        digits += 1;
    }
    format!("{} ± {}", fixed(e.mean, digits), fixed(half, digits))
}

/// The smallest and largest of some values.
pub fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// `lo–hi` of some values at `digits` decimals, or one number when both ends print the same.
pub fn span(v: &[f64], digits: usize) -> String {
    let (lo, hi) = min_max(v);
    let (lo, hi) = (fixed(lo, digits), fixed(hi, digits));
    if lo == hi { lo } else { format!("{lo}–{hi}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_found_and_replaced() {
        let doc = "a <!-- reproduced:x -->1<!-- /reproduced --> b\n\
                   <!-- reproduced:y -->\n| t |\n<!-- /reproduced -->\n";
        let names: Vec<_> = blocks(doc).unwrap().into_iter().map(|b| b.name).collect();
        assert_eq!(names, ["x", "y"]);
        let (out, stale) = rerender(doc, |n| {
            if n == "x" {
                "2".into()
            } else {
                "\n| t |\n".into()
            }
        })
        .unwrap();
        assert_eq!(stale, ["x"]);
        assert!(out.starts_with("a <!-- reproduced:x -->2<!-- /reproduced --> b"));
        assert!(blocks("<!-- reproduced:x -->1").is_err());
        assert!(blocks("a\n<!-- reproduced:x -->1<!-- /reproduced -->").is_err());
    }

    #[test]
    fn prose_is_wrapped_and_tables_are_not() {
        let text = "- one two three four\n| a | b | c | d | e |";
        assert_eq!(
            wrap(text, 10),
            "- one two\n  three\n  four\n| a | b | c | d | e |"
        );
    }

    #[test]
    fn numbers_are_printed_as_the_documents_print_them() {
        assert_eq!(fixed(-0.0001, 2), "0.00");
        assert_eq!(fixed(-0.24, 2), "−0.24");
        assert_eq!(signed(0.76, 2), "+0.76");
        assert_eq!(signed(-0.05, 2), "−0.05");
    }
}
