//! A run's output folder (SPEC §9): `config.toml` (the exact resolved config), `metrics.csv`
//! (written row by row as the run goes, flushed each time, so a killed run keeps its rows) and
//! `summary.json` (written at the end, also after Ctrl-C).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::sim::config::SimConfig;
use crate::sim::metrics::Sample;

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
        let metrics_path = dir.join("metrics.csv");
        let file = File::create(&metrics_path).map_err(|e| file_error(&metrics_path, e))?;
        let mut metrics = BufWriter::new(file);
        writeln!(metrics, "{}", Sample::csv_header()).map_err(|e| file_error(&metrics_path, e))?;
        metrics.flush().map_err(|e| file_error(&metrics_path, e))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            metrics,
            rows_written: 0,
        })
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
