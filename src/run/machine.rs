//! What machine a measurement was taken on: the CPU's name, its cores, the vector extensions it
//! has and the vector path the simulation's scans used (`sim::lanes`). `bench` prints it first
//! and records it in its JSON, so no timing is ever separated from the machine that made it.
//! No systems live here.

use serde::Serialize;

use crate::sim::lanes::Path;
use crate::sim::parallel::cores;

/// The machine a run measures.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// The CPU's model name (from `/proc/cpuinfo` on Linux), or "unknown".
    pub cpu: String,
    /// Logical cores available to the process.
    pub cores: usize,
    /// The CPU's vector extensions that mark its level, narrowest first (x86-64: sse2, sse4.2,
    /// avx, fma, avx2, then the AVX-512 parts the avx512 path needs, avx512vl, avx512bw,
    /// avx512dq and avx512f; the SSE3/SSSE3/SSE4.1 between them are not listed).
    pub vector_extensions: Vec<&'static str>,
    /// The widest of them, e.g. "avx2".
    pub widest_vector_extension: &'static str,
    /// The path the scans ran at, e.g. "avx2 (AVX2 + FMA, 256-bit)".
    pub vector_path: String,
    /// Whether `PANDEMIC_BOIDS_SIMD` forced that path.
    pub vector_path_forced: bool,
}

impl Machine {
    /// This machine, now.
    pub fn this() -> Machine {
        let vector_extensions = vector_extensions();
        Machine {
            cpu: cpu_name().unwrap_or_else(|| "unknown".to_string()),
            cores: cores(),
            widest_vector_extension: vector_extensions.last().copied().unwrap_or("none"),
            vector_extensions,
            vector_path: Path::current().describe(),
            vector_path_forced: Path::forced(),
        }
    }

    /// One line: "AMD EPYC 7B13, 2 cores, vector extensions sse2 … avx2 (widest avx2);
    /// vector path avx2 (AVX2 + FMA, 256-bit)".
    pub fn line(&self) -> String {
        format!(
            "{}, {} cores, vector extensions {} (widest {}); vector path {}{}",
            self.cpu,
            self.cores,
            self.vector_extensions.join(" "),
            self.widest_vector_extension,
            self.vector_path,
            if self.vector_path_forced {
                ", forced by PANDEMIC_BOIDS_SIMD"
            } else {
                ""
            }
        )
    }
}

/// The CPU's model name as the operating system reports it.
fn cpu_name() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, name)| name.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|name| !name.is_empty())
}

/// The vector extensions this CPU has, narrowest first.
#[cfg(target_arch = "x86_64")]
fn vector_extensions() -> Vec<&'static str> {
    use std::arch::is_x86_feature_detected as has;
    let all = [
        ("sse2", has!("sse2")),
        ("sse4.2", has!("sse4.2")),
        ("avx", has!("avx")),
        ("fma", has!("fma")),
        ("avx2", has!("avx2")),
        ("avx512vl", has!("avx512vl")),
        ("avx512bw", has!("avx512bw")),
        ("avx512dq", has!("avx512dq")),
        ("avx512f", has!("avx512f")),
    ];
    all.into_iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| n)
        .collect()
}

/// The vector extensions this build uses (fixed when it was compiled on these targets).
#[cfg(not(target_arch = "x86_64"))]
fn vector_extensions() -> Vec<&'static str> {
    let mut v = Vec::new();
    if cfg!(target_arch = "aarch64") {
        v.push("neon");
    }
    if cfg!(target_feature = "simd128") {
        v.push("simd128");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_names_its_vector_path_and_extensions() {
        let m = Machine::this();
        assert!(m.cores >= 1);
        assert!(m.line().contains(&m.vector_path));
        if cfg!(target_arch = "x86_64") {
            // Every x86-64 CPU has SSE2; the widest is the last one listed.
            assert_eq!(m.vector_extensions[0], "sse2");
            assert_eq!(
                m.widest_vector_extension,
                *m.vector_extensions.last().unwrap()
            );
        }
    }
}
