//! Build script: links the Linux executables position-dependent (`-no-pie`). As a
//! position-independent executable, the binary carries about 283 000 relocations that the
//! loader applies at every start, writing to some 800 pages: `--version` took 7.4 ms rather
//! than 3.1 (BENCHMARKS.md, tenth stop), and sweeps and experiments start thousands of runs.
//! Only the executable's own load address becomes fixed (shared libraries, stack and heap are
//! still placed at random); the code is the same.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
