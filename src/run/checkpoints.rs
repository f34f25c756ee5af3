//! Checkpoint files of headless runs (docs/model.md §12): `run --checkpoint-every S` writes
//! `<out>/checkpoints/t-<time>.ckpt` (keeping the newest K with `--keep-checkpoints`),
//! `--checkpoint-on-exit` one more when the run is stopped; `run --resume` reads one (or the
//! newest of a folder). Every file is written to a temporary name and renamed, so a checkpoint
//! on disk is always whole.

use std::fs;
use std::path::{Path, PathBuf};

use crate::sim::checkpoint::{Checkpoint, decode, encode};
use crate::sim::metrics::next_sample_time;

/// When a headless run writes checkpoints.
#[derive(Clone, Debug, Default)]
pub struct CheckpointOptions {
    /// Every this many simulated seconds.
    pub every: Option<f64>,
    /// Keep only the newest this many (default: all).
    pub keep: Option<usize>,
    /// Write one when the run is stopped (Ctrl-C, SIGTERM).
    pub on_exit: bool,
}

/// A checkpoint that cannot be read: the file and what is wrong, on one line.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct ReadError {
    /// The file (or folder) as given.
    pub path: String,
    /// What is wrong and what to do.
    pub reason: String,
}

/// The checkpoint file name for simulated time `t`: `t-000012.500.ckpt` (names sort by time).
pub fn file_name(t: f64) -> String {
    format!("t-{:010.3}.ckpt", t.max(0.0))
}

/// The checkpoints in `dir`, oldest first.
pub fn list(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                    name.is_some_and(|n| n.starts_with("t-") && n.ends_with(".ckpt"))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// Reads a checkpoint file; given a folder (a run's `checkpoints/`, or the run folder itself),
/// the newest checkpoint in it.
pub fn read(path: &Path) -> Result<(PathBuf, Checkpoint), ReadError> {
    let error = |reason: String| ReadError {
        path: path.display().to_string(),
        reason,
    };
    let file = if path.is_dir() {
        let inner = path.join("checkpoints");
        let newest = list(path).pop().or_else(|| list(&inner).pop());
        newest.ok_or_else(|| {
            error("no checkpoint (t-*.ckpt) in this folder: run with --checkpoint-every S".into())
        })?
    } else {
        path.to_path_buf()
    };
    let bytes = fs::read(&file).map_err(|e| ReadError {
        path: file.display().to_string(),
        reason: format!("{e} (give a .ckpt file or a folder holding some)"),
    })?;
    let checkpoint = decode(&bytes).map_err(|e| ReadError {
        path: file.display().to_string(),
        reason: e.to_string(),
    })?;
    Ok((file, checkpoint))
}

/// Writes `checkpoint` as `dir/<file_name>` (whole or not at all), then removes the oldest
/// beyond `keep`. Returns the file.
pub fn write(
    dir: &Path,
    checkpoint: &Checkpoint,
    keep: Option<usize>,
) -> Result<PathBuf, std::io::Error> {
    fs::create_dir_all(dir)?;
    let path = dir.join(file_name(checkpoint.time()));
    let partial = dir.join(format!(".{}.partial", file_name(checkpoint.time())));
    fs::write(&partial, encode(checkpoint))?;
    fs::rename(&partial, &path)?;
    if let Some(keep) = keep {
        let all = list(dir);
        for old in &all[..all.len().saturating_sub(keep)] {
            fs::remove_file(old)?;
        }
    }
    Ok(path)
}

/// When the next periodic checkpoint is due (the metrics' rule: within half a step).
#[derive(Clone, Copy, Debug)]
pub struct CheckpointSchedule {
    every: f64,
    half_step: f64,
    next_due: f64,
}

impl CheckpointSchedule {
    /// Every `every` s of a run with step `dt`, the first `every` after `now`.
    pub fn new(every: Option<f64>, dt: f64, now: f64) -> Self {
        let every = every.unwrap_or(0.0);
        let half_step = 0.5 * dt;
        let next_due = if every > 0.0 {
            next_sample_time(now, half_step, every)
        } else {
            f64::INFINITY
        };
        Self {
            every,
            half_step,
            next_due,
        }
    }

    /// Whether one is due at `time`; if so the next is scheduled.
    pub fn take(&mut self, time: f64) -> bool {
        if self.every <= 0.0 || time < self.next_due - self.half_step {
            return false;
        }
        self.next_due = next_sample_time(time, self.half_step, self.every);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_time_and_the_schedule_keeps_the_period() {
        assert_eq!(file_name(12.5), "t-000012.500.ckpt");
        assert!(file_name(9.0) < file_name(10.0));
        let dt = 1.0 / 60.0;
        let mut s = CheckpointSchedule::new(Some(5.0), dt, 0.0);
        let due: Vec<u64> = (1..=1200).filter(|&k| s.take(k as f64 * dt)).collect();
        assert_eq!(due, [300, 600, 900, 1200]);
        let mut none = CheckpointSchedule::new(None, dt, 0.0);
        assert!(!(1..1000).any(|k| none.take(k as f64 * dt)));
    }
}
