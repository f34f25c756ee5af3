//! A sweep's design: the swept keys and their ranges ([`Param`]), the Latin hypercube over
//! them, how shards split the samples, and `manifest.csv` — written once, read back by every
//! shard, `merge` and `plot`. No systems live here.

use std::path::Path;

use anyhow::{Context, Result, bail};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::sim::rng::mix64;

/// One swept key and its range.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Dotted config key.
    pub key: String,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Sample uniformly in log space.
    pub log: bool,
}

/// Parses `KEY=LO..HI` or `KEY=LO..HI:log`.
pub fn parse_param(s: &str) -> Result<Param, String> {
    let bad = || {
        format!(
            "--param `{s}`: expected KEY=LO..HI or KEY=LO..HI:log, e.g. epidemic.p_infect_normal=0.1..0.9"
        )
    };
    let (key, range) = s.split_once('=').ok_or_else(bad)?;
    let (range, log) = match range.strip_suffix(":log") {
        Some(r) => (r, true),
        None => (range, false),
    };
    let (lo, hi) = range.split_once("..").ok_or_else(bad)?;
    let lo: f64 = lo.trim().parse().map_err(|_| bad())?;
    let hi: f64 = hi.trim().parse().map_err(|_| bad())?;
    if key.trim().is_empty() || !lo.is_finite() || !hi.is_finite() || lo > hi {
        return Err(format!("--param `{s}`: need a key and finite LO ≤ HI"));
    }
    if log && lo <= 0.0 {
        return Err(format!("--param `{s}`: a :log range needs LO > 0"));
    }
    Ok(Param {
        key: key.trim().to_string(),
        lo,
        hi,
        log,
    })
}

impl Param {
    /// Maps a unit value in [0, 1) into the range.
    pub fn at(&self, u: f64) -> f64 {
        if self.log {
            (self.lo.ln() + u * (self.hi.ln() - self.lo.ln())).exp()
        } else {
            self.lo + u * (self.hi - self.lo)
        }
    }
}

/// A Latin hypercube: `samples` points in [0, 1)^`dims`; along every dimension each of the
/// `samples` equal strata holds exactly one point.
pub fn latin_hypercube(samples: usize, dims: usize, seed: u64) -> Vec<Vec<f64>> {
    let columns: Vec<Vec<f64>> = (0..dims)
        .map(|d| {
            let mut rng = Pcg64::seed_from_u64(mix64(seed ^ mix64(d as u64 + 0x5eed)));
            let mut strata: Vec<usize> = (0..samples).collect();
            strata.shuffle(&mut rng);
            strata
                .into_iter()
                .map(|stratum| (stratum as f64 + rng.random::<f64>()) / samples as f64)
                .collect()
        })
        .collect();
    (0..samples)
        .map(|s| columns.iter().map(|c| c[s]).collect())
        .collect()
}

/// The samples a shard `index/count` runs.
pub fn shard_samples(samples: usize, index: usize, count: usize) -> Vec<usize> {
    (0..samples).filter(|s| s % count == index).collect()
}

/// Parses `I/K` (0 ≤ I < K).
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || {
        format!(
            "--shard `{s}`: expected I/K with 0 ≤ I < K, e.g. --shard 0/8 (Slurm: $SLURM_ARRAY_TASK_ID/8)"
        )
    };
    let (i, k) = s.split_once('/').ok_or_else(bad)?;
    let (i, k): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        k.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || i >= k {
        return Err(bad());
    }
    Ok((i, k))
}

/// A sweep's `manifest.csv`: the swept keys, how many runs (seeds) each sample has, and per
/// sample its first run's seed and the values its runs use.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// Swept keys, in column order.
    pub keys: Vec<String>,
    /// Runs per sample, each with its own seed (`--replicates`).
    pub replicates: usize,
    /// Per sample: the first replicate's seed, and the values.
    pub rows: Vec<(u64, Vec<f64>)>,
}

impl Manifest {
    /// The file's text: `sample,seed,replicates,<keys…>`, one row per sample.
    pub fn text(&self) -> String {
        let mut out = String::from("sample,seed,replicates");
        for k in &self.keys {
            out.push(',');
            out.push_str(k);
        }
        out.push('\n');
        for (s, (seed, row)) in self.rows.iter().enumerate() {
            out.push_str(&format!("{s},{seed},{}", self.replicates));
            for v in row {
                out.push_str(&format!(",{v}"));
            }
            out.push('\n');
        }
        out
    }

    /// Reads `manifest.csv` in `dir`.
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join("manifest.csv");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut lines = text.lines();
        let header: Vec<String> = lines
            .next()
            .unwrap_or_default()
            .split(',')
            .map(String::from)
            .collect();
        if header.len() < 3 || header[..3] != ["sample", "seed", "replicates"] {
            bail!("{} is not a sweep manifest", path.display());
        }
        let mut replicates = 1;
        let mut rows = Vec::new();
        for line in lines.filter(|l| !l.is_empty()) {
            let cells: Vec<&str> = line.split(',').collect();
            let bad = || anyhow::anyhow!("bad row in {}", path.display());
            let seed = cells.get(1).and_then(|c| c.parse().ok()).ok_or_else(bad)?;
            replicates = cells.get(2).and_then(|c| c.parse().ok()).ok_or_else(bad)?;
            let values = cells[3..]
                .iter()
                .map(|c| c.parse().unwrap_or(f64::NAN))
                .collect();
            rows.push((seed, values));
        }
        Ok(Self {
            keys: header[3..].to_vec(),
            replicates,
            rows,
        })
    }
}
