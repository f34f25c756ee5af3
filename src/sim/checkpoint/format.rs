//! The checkpoint file format (docs/model.md §12): a 32-byte header — the magic `PBOIDCKP`, the
//! format version (u32), the body's length (u64) and CRC-32 (u32), the length of the crate
//! version that follows (u32) and 4 reserved bytes, all little-endian — then the version of
//! pandemic-boids that wrote it, then the [`Checkpoint`] as postcard. postcard was chosen for a
//! wire format that is documented and frozen at 1.0, compact (variable-length integers) and
//! fast; the header lets a wrong file be told apart from a damaged one before anything is
//! decoded. No systems live here.

use super::Checkpoint;

/// The first eight bytes of every checkpoint file.
pub const MAGIC: [u8; 8] = *b"PBOIDCKP";
/// The layout of the body; a file with another is refused. 2: a boid no longer carries the
/// last step's steering (a step works it out before using it).
pub const FORMAT_VERSION: u32 = 2;
/// The version of pandemic-boids writing (a checkpoint restores bit-exactly only into the
/// code that wrote it).
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");
const HEADER: usize = 32;

/// Why a checkpoint cannot be written, read or restored — one line saying what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckpointError {
    /// Not a checkpoint at all.
    #[error(
        "not a pandemic-boids checkpoint (it does not start with PBOIDCKP): give a .ckpt file written by `run --checkpoint-every` or the app"
    )]
    Foreign,
    /// Shorter than its header says.
    #[error(
        "the checkpoint is truncated ({have} of {want} bytes): the write was cut short; use an earlier checkpoint"
    )]
    Truncated {
        /// Bytes present.
        have: u64,
        /// Bytes the header announces.
        want: u64,
    },
    /// The body does not match its checksum.
    #[error("the checkpoint is corrupt (checksum mismatch): use an earlier checkpoint")]
    Corrupt,
    /// Written with another format or by another version.
    #[error(
        "the checkpoint was written by pandemic-boids {crate_version} (format {format}); this is {} (format {}): resume it with a build of that version and format, or run its scenario again to write a new one",
        CRATE_VERSION,
        FORMAT_VERSION
    )]
    Version {
        /// Its format version.
        format: u32,
        /// The crate version that wrote it.
        crate_version: String,
    },
    /// The body does not decode.
    #[error("the checkpoint is corrupt ({0}): use an earlier checkpoint")]
    Body(String),
    /// Its configuration is not valid here.
    #[error("the checkpoint's configuration is not valid: {0}")]
    Config(String),
    /// The file cannot be read or written (the message names it and the reason).
    #[error("{0}")]
    File(String),
    /// Nothing to save yet.
    #[error("the run has not started yet: step it once before saving a checkpoint")]
    NotStarted,
    /// An entity carries state checkpoints do not know.
    #[error(
        "cannot checkpoint: `{0}` is not saved by checkpoints (add it to sim::checkpoint, see docs/model.md §12)"
    )]
    Unsaved(String),
}

/// The checkpoint as the bytes of a file.
pub fn encode(checkpoint: &Checkpoint) -> Vec<u8> {
    let body = postcard::to_stdvec(checkpoint).expect("a checkpoint always serialises");
    let version = CRATE_VERSION.as_bytes();
    let mut out = Vec::with_capacity(HEADER + version.len() + body.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    out.extend_from_slice(&(version.len() as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(version);
    out.extend_from_slice(&body);
    out
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// Reads a checkpoint file's bytes, refusing a foreign, truncated, corrupt or other-version
/// file.
pub fn decode(bytes: &[u8]) -> Result<Checkpoint, CheckpointError> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(CheckpointError::Foreign);
    }
    if bytes.len() < HEADER {
        return Err(CheckpointError::Truncated {
            have: bytes.len() as u64,
            want: HEADER as u64,
        });
    }
    let format = u32_at(bytes, 8);
    let body_len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let crc = u32_at(bytes, 20);
    let version_len = u32_at(bytes, 24) as u64;
    let want = HEADER as u64 + version_len + body_len;
    if (bytes.len() as u64) < want {
        return Err(CheckpointError::Truncated {
            have: bytes.len() as u64,
            want,
        });
    }
    let version_end = HEADER + version_len as usize;
    let crate_version = String::from_utf8_lossy(&bytes[HEADER..version_end]).into_owned();
    if format != FORMAT_VERSION || crate_version != CRATE_VERSION {
        return Err(CheckpointError::Version {
            format,
            crate_version,
        });
    }
    let body = &bytes[version_end..version_end + body_len as usize];
    if crc32fast::hash(body) != crc || bytes.len() as u64 != want {
        return Err(CheckpointError::Corrupt);
    }
    postcard::from_bytes(body).map_err(|e| CheckpointError::Body(e.to_string()))
}
