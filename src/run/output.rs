//! A run's output folder (docs/model.md §9): `config.toml` (the exact resolved config), `metrics.csv`
//! (written row by row as the run goes, flushed each time, so a killed run keeps its rows),
//! `agents.csv` when `agents_every` is set (every boid at each agent sample, streamed the same
//! way) and `summary.json` (written at the end, also after Ctrl-C).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::sim::config::SimConfig;
use crate::sim::metrics::Sample;
use crate::sim::neighbours::Snapshot;

/// Header of `agents.csv`: one row per boid per agent sample.
pub const AGENTS_HEADER: &str = "time_s,id,swarm,x,y,vx,vy,state";

/// An output problem, as one line naming the path and the fix.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The folder cannot be created or written.
    #[error(
        "cannot write to output folder `{path}`: {reason} (choose a folder you can write to with --out)"
    )]
    Folder {
        /// The folder.
        path: String,
        /// The OS error.
        reason: String,
    },
    /// A file inside it cannot be written.
    #[error("cannot write `{path}`: {reason} (check free space and permissions)")]
    File {
        /// The file.
        path: String,
        /// The OS error.
        reason: String,
    },
}

fn file_error(path: &Path, e: impl ToString) -> OutputError {
    OutputError::File {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Writes one run's folder.
pub struct RunFolder {
    dir: PathBuf,
    metrics: BufWriter<File>,
    rows_written: usize,
    agents: Option<BufWriter<File>>,
}

/// Creates a CSV file with its header line, flushed.
fn csv_file(path: &Path, header: &str) -> Result<BufWriter<File>, OutputError> {
    let file = File::create(path).map_err(|e| file_error(path, e))?;
    let mut out = BufWriter::new(file);
    writeln!(out, "{header}").map_err(|e| file_error(path, e))?;
    out.flush().map_err(|e| file_error(path, e))?;
    Ok(out)
}

/// One boid's row of `agents.csv` (state `S`, `I` or `R`).
pub fn agent_row(out: &mut String, time_s: f64, snapshot: &Snapshot, slot: usize) {
    use std::fmt::Write as _;
    let (p, v, d) = (
        snapshot.pos[slot],
        snapshot.vel[slot],
        snapshot.disease[slot],
    );
    let state = if d.is_infected() {
        'I'
    } else if d.is_recovered() {
        'R'
    } else {
        'S'
    };
    let _ = writeln!(
        out,
        "{time_s:.4},{},{},{:.3},{:.3},{:.3},{:.3},{state}",
        snapshot.id[slot],
        snapshot.swarm[slot].key(),
        p.x,
        p.y,
        v.x,
        v.y
    );
}

impl RunFolder {
    /// Creates the folder (and parents), writes `config.toml` and the CSV header.
    pub fn create(dir: &Path, config: &SimConfig) -> Result<Self, OutputError> {
        let folder_error = |e: std::io::Error| OutputError::Folder {
            path: dir.display().to_string(),
            reason: e.to_string(),
        };
        if dir.exists() && !dir.is_dir() {
            return Err(OutputError::Folder {
                path: dir.display().to_string(),
                reason: "it is a file, not a folder".into(),
            });
        }
        fs::create_dir_all(dir).map_err(folder_error)?;
        let config_path = dir.join("config.toml");
        fs::write(&config_path, config.to_toml()).map_err(|e| match e.kind() {
            std::io::ErrorKind::PermissionDenied => folder_error(e),
            _ => file_error(&config_path, e),
        })?;
        let metrics = csv_file(&dir.join("metrics.csv"), &Sample::csv_header())?;
        let agents = (config.agents_every > 0.0)
            .then(|| csv_file(&dir.join("agents.csv"), AGENTS_HEADER))
            .transpose()?;
        Ok(Self {
            dir: dir.to_path_buf(),
            metrics,
            rows_written: 0,
            agents,
        })
    }

    /// Appends every boid of `snapshot` (the state at `time_s`) to `agents.csv`, in id order,
    /// and flushes. Does nothing when the run writes no agent output.
    pub fn write_agents(&mut self, time_s: f64, snapshot: &Snapshot) -> Result<(), OutputError> {
        let Some(out) = &mut self.agents else {
            return Ok(());
        };
        let path = self.dir.join("agents.csv");
        let mut text = String::with_capacity(64 * snapshot.len());
        for slot in 0..snapshot.len() {
            agent_row(&mut text, time_s, snapshot, slot);
        }
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| file_error(&path, e))
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends the samples not written yet and flushes.
    pub fn write_new_rows(&mut self, samples: &[Sample]) -> Result<(), OutputError> {
        if samples.len() <= self.rows_written {
            return Ok(());
        }
        let path = self.dir.join("metrics.csv");
        for s in &samples[self.rows_written..] {
            writeln!(self.metrics, "{}", s.csv_row()).map_err(|e| file_error(&path, e))?;
        }
        self.rows_written = samples.len();
        self.metrics.flush().map_err(|e| file_error(&path, e))
    }

    /// Writes `summary.json`.
    pub fn write_summary(&self, summary: &serde_json::Value) -> Result<(), OutputError> {
        let path = self.dir.join("summary.json");
        let text = serde_json::to_string_pretty(summary).map_err(|e| file_error(&path, e))?;
        fs::write(&path, text + "\n").map_err(|e| file_error(&path, e))
    }
}
