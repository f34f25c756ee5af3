//! `run --video` / `--frames` as a user meets them: the right number of frames at the right
//! size, the same bytes for the same seed, the same simulation with or without a video, and
//! bad options as one line naming the fix.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use common::{bin, scenarios};

/// A 3 s run of the default scenario (seed 9) into `out`, with `extra` arguments.
fn run(out: &Path, extra: &[&str]) -> Output {
    Command::new(bin())
        .args(["run", "--quiet", "--scenario"])
        .arg(scenarios().join("default.toml"))
        .args(["--seed", "9", "--duration", "3", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn png_size(path: &Path) -> (u32, u32) {
    let b = fs::read(path).unwrap();
    assert_eq!(&b[1..4], b"PNG", "{} is not a PNG", path.display());
    let be = |o: usize| u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    (be(16), be(20))
}

/// Logical screen size and number of frames (image descriptors after a graphic control
/// extension) of a GIF.
fn gif_info(path: &Path) -> ((u16, u16), usize) {
    let b = fs::read(path).unwrap();
    assert_eq!(&b[..6], b"GIF89a", "{} is not a GIF89a", path.display());
    let le = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
    let frames = b.windows(3).filter(|w| w == &[0x21, 0xF9, 0x04]).count();
    ((le(6), le(8)), frames)
}

fn video_args<'a>(gif: &'a str, frames: &'a str) -> Vec<&'a str> {
    vec![
        "--video",
        gif,
        "--frames",
        frames,
        "--video-fps",
        "10",
        "--video-from",
        "1",
        "--video-size",
        "160x90",
        "--video-overlays",
        "radii,transmissions",
    ]
}

#[test]
fn frames_sizes_identity_and_the_same_run() {
    let tmp = tempfile::tempdir().unwrap();
    let runs: Vec<_> = ["a", "b"]
        .iter()
        .map(|name| {
            let out = tmp.path().join(name);
            let gif = tmp.path().join(format!("{name}.gif"));
            let frames = tmp.path().join(format!("{name}-frames"));
            let o = run(
                &out,
                &video_args(gif.to_str().unwrap(), frames.to_str().unwrap()),
            );
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert!(String::from_utf8_lossy(&o.stderr).contains("video: 21 frames"));
            (out, gif, frames)
        })
        .collect();
    let (out, gif, frames) = &runs[0];
    // 1 s to 3 s at 10 frames per simulated second, both ends included.
    let mut pngs: Vec<_> = fs::read_dir(frames)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pngs.sort();
    assert_eq!(pngs.len(), 21);
    assert!(pngs[0].ends_with("frame-00000.png") && pngs[20].ends_with("frame-00020.png"));
    for p in &pngs {
        assert_eq!(png_size(p), (160, 90));
    }
    assert_eq!(gif_info(gif), ((160, 90), 21));
    // The same seed draws the same frames, byte for byte.
    assert_eq!(fs::read(gif).unwrap(), fs::read(&runs[1].1).unwrap());
    for p in &pngs {
        let twin = runs[1].2.join(p.file_name().unwrap());
        assert_eq!(fs::read(p).unwrap(), fs::read(twin).unwrap());
    }
    // Frames change as the boids move.
    assert_ne!(fs::read(&pngs[0]).unwrap(), fs::read(&pngs[20]).unwrap());
    // Recording does not touch the simulation.
    let plain = tmp.path().join("plain");
    let o = run(&plain, &[]);
    assert!(o.status.success());
    for file in ["metrics.csv", "transmissions.csv", "rt.csv"] {
        assert_eq!(
            fs::read(out.join(file)).unwrap(),
            fs::read(plain.join(file)).unwrap(),
            "{file} differs with a video"
        );
    }
}

#[test]
fn bad_video_options_are_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    for (args, needle) in [
        (vec!["--video", "a.webp"], ".gif"),
        (vec!["--frames", "f", "--video-fps", "0"], "--video-fps"),
        (
            vec!["--frames", "f", "--video-from", "2", "--video-to", "1"],
            "--video-from",
        ),
        (vec!["--frames", "f", "--video-size", "640"], "WIDTHxHEIGHT"),
        (vec!["--video", "/proc/none/a.gif"], "/proc/none/a.gif"),
    ] {
        let o = run(&out, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
