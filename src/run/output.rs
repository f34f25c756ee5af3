//! A run's output folder (docs/model.md §9): `config.toml` (the exact resolved config),
//! `metrics.csv` (written row by row as the run goes, flushed each time, so a killed run keeps its
//! rows), `agents.csv` when `agents_every` is set (every boid at each agent sample, streamed the
//! same way), `transmissions.csv` (each infection once it has ended, streamed; those still going on
//! at the end last), `rt.csv` (the reproduction numbers, at the end) and `summary.json` (written at
//! the end, also after Ctrl-C), and `interventions.csv` when the scenario has interventions
//! (every start and end, streamed).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::sim::checkpoint::Parent;
use crate::sim::config::SimConfig;
use crate::sim::interventions::InterventionLog;
use crate::sim::metrics::Sample;
use crate::sim::neighbours::Snapshot;
use crate::sim::reproduction::RtRow;
use crate::sim::transmission::TransmissionLog;

/// A simulated time as people write it: the step boundary it is (a whole number of `dt`), to
/// nanoseconds — `60` rather than the clock's `60.000001200003936` (the clock counts whole
/// nanoseconds per step).
pub fn tidy_time(t: f64, dt: f64) -> f64 {
    let on_step = if dt > 0.0 { (t / dt).round() * dt } else { t };
    (on_step * 1e9).round() / 1e9
}

/// `value` with every non-whole number at 7 significant digits, as people write them: the
/// last digits of a time summed from whole-nanosecond steps or of an `f32` measure widened to
/// `f64` (`427.08557556152346`) carry no information.
pub fn tidy_numbers(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or_default();
            if x == 0.0 || !x.is_finite() {
                return value.clone();
            }
            let digits = 6 - x.abs().log10().floor() as i32;
            let scale = 10f64.powi(digits.clamp(-300, 300));
            serde_json::json!((x * scale).round() / scale)
        }
        Value::Array(a) => Value::Array(a.iter().map(tidy_numbers).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), tidy_numbers(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Header of `agents.csv`: one row per boid per agent sample.
pub const AGENTS_HEADER: &str = "time_s,id,swarm,x,y,vx,vy,state";

/// Header of `transmissions.csv`: one row per infection.
pub const TRANSMISSIONS_HEADER: &str = "infection,time_s,infector,infector_swarm,\
infector_infection,infectee,infectee_swarm,x,y,generation,cause,ended_s,outcome,by,secondary";

/// Bytes of `transmissions.csv` rows gathered before they go to the file.
const ROWS_CHUNK: usize = 1 << 16;

/// Header of `rt.csv`: one row per incidence bin.
pub const RT_HEADER: &str = "time_s,window_from_s,infections,contact_infections,\
rt_mean,rt_lo95,rt_hi95,rt_cv,rc,window_infections";

/// Header of `interventions.csv`: one row per start or end of an intervention.
pub const INTERVENTIONS_HEADER: &str = "time_s,intervention,name,event,affected";

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
    /// A step observer (the video) failed; the message names the file and the fix.
    #[error("{0:#}")]
    Observer(anyhow::Error),
    /// A checkpoint cannot be taken (the message says why and what to do).
    #[error("{0}")]
    Checkpoint(String),
    /// A file inside it cannot be written.
    #[error("cannot write `{path}`: {reason} (check free space and permissions)")]
    File {
        /// The file.
        path: String,
        /// The OS error.
        reason: String,
    },
}

/// Creates an output folder (and its parents), or says which folder and what to do.
pub fn create_folder(dir: &Path) -> Result<(), OutputError> {
    fs::create_dir_all(dir).map_err(|e| OutputError::Folder {
        path: dir.display().to_string(),
        reason: e.to_string(),
    })
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
    transmissions: BufWriter<File>,
    /// Entries of [`TransmissionLog::ended`] written so far.
    ended_written: usize,
    /// `interventions.csv`, when the run has interventions.
    interventions: Option<BufWriter<File>>,
    /// Events of the intervention log written so far.
    events_written: usize,
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
        snapshot.disease.get(slot),
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

/// Infection `r`'s row of `transmissions.csv` (outcome `infected` when it has not ended).
pub fn transmission_row(out: &mut String, log: &TransmissionLog, r: usize) {
    use std::fmt::Write as _;
    let text = |v: Option<String>| v.unwrap_or_default();
    let t = &log.records[r];
    let infector = t.infector;
    let (ended, outcome, by) = match t.end {
        Some((time, o)) => (
            format!("{time:.4}"),
            o.key(),
            text(o.by().map(|b| b.to_string())),
        ),
        None => (String::new(), "infected", String::new()),
    };
    let _ = writeln!(
        out,
        "{r},{:.4},{},{},{},{},{},{:.3},{:.3},{},{},{ended},{outcome},{by},{}",
        t.time_s,
        text(log.infector_id(t).map(|id| id.to_string())),
        infector.map_or("", |f| f.swarm.key()),
        text(infector.map(|f| f.infection.to_string())),
        t.infectee,
        t.swarm.key(),
        t.pos.x,
        t.pos.y,
        t.generation,
        t.cause.key(),
        t.secondary,
    );
}

/// One row of `rt.csv` (empty cells where an estimate is undefined).
pub fn rt_row(out: &mut String, row: &RtRow) {
    use std::fmt::Write as _;
    let f = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.6}"));
    // R_t only where the data dominate the prior; its coefficient of variation always.
    let rt = |k: usize| f(row.reported().map(|r| r[k]));
    let _ = writeln!(
        out,
        "{:.4},{:.4},{},{},{},{},{},{},{},{}",
        row.time_s,
        row.from_s,
        row.infections,
        row.contact_infections,
        rt(0),
        rt(1),
        rt(2),
        f(row.rt_cv),
        f(row.rc),
        row.window_infections
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
        let transmissions = csv_file(&dir.join("transmissions.csv"), TRANSMISSIONS_HEADER)?;
        let events = dir.join("interventions.csv");
        let interventions = if config.interventions.is_empty() {
            // A file from an earlier run in this folder would be read as this run's.
            let _ = fs::remove_file(&events);
            None
        } else {
            Some(csv_file(&events, INTERVENTIONS_HEADER)?)
        };
        Ok(Self {
            dir: dir.to_path_buf(),
            metrics,
            rows_written: 0,
            agents,
            transmissions,
            ended_written: 0,
            interventions,
            events_written: 0,
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

    /// Records in `config.toml` (as a comment at its top) that this run is a branch of `parent`.
    pub fn note_parent(&self, parent: &Parent, dt: f64) -> Result<(), OutputError> {
        let path = self.dir.join("config.toml");
        let text = fs::read_to_string(&path).map_err(|e| file_error(&path, e))?;
        let changed = parent.changed.join(", ");
        let note = format!(
            "# A branch: resumed from checkpoint {} at t = {} s, changing {changed}.\n# Its rows \
             before that time are the parent run's; this is the configuration after the branch.\n\n",
            parent.file,
            tidy_time(parent.time_s, dt)
        );
        fs::write(&path, note + &text).map_err(|e| file_error(&path, e))
    }

    /// The rows of `agents.csv` written so far (after its header; empty without one).
    pub fn agents_rows(&self) -> Result<String, OutputError> {
        if self.agents.is_none() {
            return Ok(String::new());
        }
        let path = self.dir.join("agents.csv");
        let text = fs::read_to_string(&path).map_err(|e| file_error(&path, e))?;
        Ok(text
            .split_once('\n')
            .map_or(String::new(), |(_, rows)| rows.to_string()))
    }

    /// Appends rows written before (a resumed run's) to `agents.csv`, and flushes.
    pub fn append_agents(&mut self, rows: &str) -> Result<(), OutputError> {
        let Some(out) = &mut self.agents else {
            return Ok(());
        };
        let path = self.dir.join("agents.csv");
        out.write_all(rows.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| file_error(&path, e))
    }

    /// Appends the interventions' starts and ends since the last call to `interventions.csv`
    /// and flushes. Does nothing when the run has no interventions.
    pub fn write_interventions(&mut self, log: &InterventionLog) -> Result<(), OutputError> {
        let Some(out) = &mut self.interventions else {
            return Ok(());
        };
        if log.events.len() <= self.events_written {
            return Ok(());
        }
        let path = self.dir.join("interventions.csv");
        let mut text = String::new();
        for e in &log.events[self.events_written..] {
            use std::fmt::Write as _;
            // Names are the user's: keep the CSV one field each.
            let name = e.name.replace([',', '\n', '"'], " ");
            let _ = writeln!(
                text,
                "{:.4},{},{name},{},{}",
                e.time_s,
                e.index,
                e.event.key(),
                e.affected
            );
        }
        self.events_written = log.events.len();
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| file_error(&path, e))
    }

    /// Appends the infections that ended since the last call to `transmissions.csv`, in chunks
    /// of at least [`ROWS_CHUNK`] bytes, and flushes; with `finished`, also every infection still
    /// going on (outcome `infected`).
    pub fn write_transmissions(
        &mut self,
        log: &TransmissionLog,
        finished: bool,
    ) -> Result<(), OutputError> {
        let start = self.ended_written.min(log.ended.len());
        self.ended_written = log.ended.len();
        let ended = log.ended[start..].iter().map(|&r| r as usize);
        let ongoing = finished.then(|| log.ongoing()).into_iter().flatten();
        let failed = |e| file_error(&self.dir.join("transmissions.csv"), e);
        // The rows go out a chunk at a time: at the end of a city's run the infections still
        // going on were one string of tens of MB, the run's peak of memory (BENCHMARKS.md,
        // eighteenth stop).
        let (mut text, mut any) = (String::new(), false);
        for r in ended.chain(ongoing) {
            transmission_row(&mut text, log, r);
            if text.len() >= ROWS_CHUNK {
                self.transmissions
                    .write_all(text.as_bytes())
                    .map_err(failed)?;
                text.clear();
                any = true;
            }
        }
        if text.is_empty() && !any {
            return Ok(());
        }
        self.transmissions
            .write_all(text.as_bytes())
            .and_then(|()| self.transmissions.flush())
            .map_err(failed)
    }

    /// Writes `rt.csv`.
    pub fn write_rt(&self, rows: &[RtRow]) -> Result<(), OutputError> {
        let path = self.dir.join("rt.csv");
        let mut text = format!("{RT_HEADER}\n");
        for row in rows {
            rt_row(&mut text, row);
        }
        fs::write(&path, text).map_err(|e| file_error(&path, e))
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
        let text = serde_json::to_string_pretty(&tidy_numbers(summary))
            .map_err(|e| file_error(&path, e))?;
        fs::write(&path, text + "\n").map_err(|e| file_error(&path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::epidemic::Cause;
    use crate::sim::swarm::Swarm;
    use crate::sim::transmission::Outcome;
    use bevy::math::Vec2;

    #[test]
    fn transmissions_go_out_a_chunk_at_a_time_each_row_once_in_order() {
        // A chain of 3 000 infections (rows of about 60 B: several chunks), ended in two
        // batches, the rest still going on at the end.
        let mut log = TransmissionLog::default();
        let n = Swarm::Normal;
        for id in 0..3000u64 {
            let source = id
                .checked_sub(1)
                .map(|by| (by, n, Vec2::new(by as f32, 1.0)));
            let cause = if id == 0 {
                Cause::Initial
            } else {
                Cause::Contact
            };
            log.begin(
                id as f64 * 0.1,
                source,
                id,
                n,
                Vec2::new(1.0, id as f32),
                cause,
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let mut folder = RunFolder::create(dir.path(), &SimConfig::default()).unwrap();
        let mut want = format!("{TRANSMISSIONS_HEADER}\n");
        for batch in [0..1200u64, 1200..2100] {
            for id in batch {
                log.end(id, 400.0 + id as f64, Outcome::Cured(7));
            }
            folder.write_transmissions(&log, false).unwrap();
        }
        folder.write_transmissions(&log, true).unwrap();
        for r in (0..2100).chain(2100..3000) {
            transmission_row(&mut want, &log, r);
        }
        assert!(
            want.len() > 3 * ROWS_CHUNK,
            "too few rows for several chunks"
        );
        let got = fs::read_to_string(dir.path().join("transmissions.csv")).unwrap();
        assert_eq!(got.lines().count(), 3001);
        assert!(got == want, "the file differs from the rows in order");
        // The infector's id is its own infection's infectee.
        assert!(
            got.lines()
                .nth(2)
                .unwrap()
                .starts_with("1,0.1000,0,normal,0,1,")
        );
    }

    #[test]
    fn summary_numbers_keep_seven_significant_digits() {
        let v = serde_json::json!({"a": 427.08557556152346, "b": [1.9833333729999976, 0.14500000289999998], "n": 3});
        let t = tidy_numbers(&v);
        assert_eq!(t["a"], serde_json::json!(427.0856));
        assert_eq!(t["b"][0], serde_json::json!(1.983333));
        assert_eq!(t["b"][1], serde_json::json!(0.145));
        assert_eq!(t["n"], serde_json::json!(3));
    }
}
