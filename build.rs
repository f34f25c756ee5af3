//! Build script: links this package's Linux executables (`pandemic-boids` and the examples)
//! position-dependent, with `-no-pie`. As a position-independent executable the binary carries
//! about 283 000 relocations that the loader applies at every start, writing to some 800
//! pages: `--version` took more than twice as long (BENCHMARKS.md's tenth stop, AVX2 machine),
//! which counts where runs start one process each (a shell loop, a SLURM array). The cost: the
//! executable's own code is no longer placed at a random address (shared libraries, stack and
//! heap still are), which hardening checkers flag. Set `PANDEMIC_BOIDS_PIE=1` when building to
//! keep a position-independent executable. A program of your own that calls
//! `pandemic_boids::cli::main_with` is linked by your crate: a build script of its own that
//! prints the line below gives it the faster start. GCC and Clang, the linker drivers Rust uses
//! on Linux by default, both understand the flag.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PANDEMIC_BOIDS_PIE");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let keep_pie = std::env::var("PANDEMIC_BOIDS_PIE").is_ok_and(|v| !v.is_empty() && v != "0");
    if linux && !keep_pie {
        println!("cargo:rustc-link-arg-bins=-no-pie");
        println!("cargo:rustc-link-arg-examples=-no-pie");
    }
}
