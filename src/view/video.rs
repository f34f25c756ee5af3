//! Frame-exact video of a run, drawn in software from the simulation's state (no window, no
//! GPU): the world as the app shows it — boids as triangles along their velocity in their
//! swarm and health colours, predators in magenta — optionally every boid's contact radius and
//! the transmissions of the last seconds, with a caption of time and S/I/R/dead counts.
//!
//! A frame is due every `1/fps` simulated seconds from `from` to `to` (on the metrics' clock: a
//! frame is due when the state's time is within half a step of it), so a video does not depend
//! on how fast the run went. Frames go to an animated GIF (pure-Rust encoder) and/or numbered
//! PNGs. Drawing only reads the world: the run is the same with or without it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use bevy::color::Color;
use bevy::ecs::world::World;
use bevy::math::Vec2;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::Color as _;

use crate::sim::agent::Position;
use crate::sim::config::SimConfig;
use crate::sim::metrics::{Tally, next_sample_time};
use crate::sim::neighbours::Snapshot;
use crate::sim::predators::{Predator, PredatorIndex};
use crate::sim::transmission::TransmissionLog;
use crate::view::render::{
    BACKGROUND, BOID_LENGTH, BOID_WIDTH, PREDATOR_COLOUR, PREDATOR_LENGTH, Tint, boid_colour,
};
use crate::view::transmissions::RECENT_COLOUR;

/// Seconds of transmissions the transmission overlay shows.
pub const TRANSMISSION_SECONDS: f64 = 3.0;
/// Smallest boid drawn, frame px (small frames of big worlds stay readable).
const MIN_BOID_PX: f64 = 6.0;

/// What to record and how.
#[derive(Clone, Debug, PartialEq)]
pub struct VideoOptions {
    /// Animated GIF to write.
    pub gif: Option<PathBuf>,
    /// Folder for numbered PNG frames.
    pub frames: Option<PathBuf>,
    /// Frames per simulated second.
    pub fps: f64,
    /// First frame's simulated time, s.
    pub from: f64,
    /// Last frame's simulated time (at most), s.
    pub to: f64,
    /// Frame size, px.
    pub size: (u32, u32),
    /// Draw every boid's contact radius.
    pub radii: bool,
    /// Draw the transmissions of the last [`TRANSMISSION_SECONDS`].
    pub transmissions: bool,
}

impl VideoOptions {
    /// Checks the options, each problem as one line naming the fix.
    pub fn validate(&self) -> Result<()> {
        if let Some(gif) = &self.gif {
            let ext = gif.extension().map(|e| e.to_string_lossy().to_lowercase());
            if ext.as_deref() != Some("gif") {
                bail!(
                    "--video `{}`: only animated GIF is written; give a file name ending in .gif",
                    gif.display()
                );
            }
        }
        if !(self.fps > 0.0 && self.fps <= 100.0) {
            bail!(
                "--video-fps {}: must be above 0 and at most 100 frames per simulated second",
                self.fps
            );
        }
        if !(self.from >= 0.0 && self.to > self.from) {
            bail!(
                "--video-from {} --video-to {}: need 0 ≤ from < to (simulated seconds)",
                self.from,
                self.to
            );
        }
        let (w, h) = self.size;
        if !(16..=4096).contains(&w) || !(16..=4096).contains(&h) {
            bail!("--video-size {w}x{h}: each side must be 16 to 4096 px");
        }
        Ok(())
    }
}

/// When frames are due: every `1/fps` s from `from` to `to`, on the simulation clock.
#[derive(Clone, Copy, Debug)]
pub struct FrameClock {
    every: f64,
    half_step: f64,
    next_due: f64,
    to: f64,
}

impl FrameClock {
    /// The frames of `opts` for steps of `dt` seconds.
    pub fn new(opts: &VideoOptions, dt: f64) -> Self {
        Self {
            every: 1.0 / opts.fps,
            half_step: 0.5 * dt,
            next_due: opts.from,
            to: opts.to,
        }
    }

    /// Whether the state at `time` is a frame; if so it counts as taken.
    pub fn take(&mut self, time: f64) -> bool {
        if time < self.next_due - self.half_step || time > self.to + self.half_step {
            return false;
        }
        self.next_due = next_sample_time(time, self.half_step, self.every);
        true
    }
}

/// What one frame shows.
#[derive(Clone, Debug, Default)]
pub struct Scene {
    /// World size, px.
    pub world: Vec2,
    /// Boids: position, velocity, colour (RGB), contact radius.
    pub boids: Vec<(Vec2, Vec2, [u8; 3], f32)>,
    /// Predators: position, velocity.
    pub predators: Vec<(Vec2, Vec2)>,
    /// Each predator's line to the boid it chases: from, to (the short way).
    pub chases: Vec<(Vec2, Vec2)>,
    /// Transmission lines: from, to (the short way), opacity.
    pub lines: Vec<(Vec2, Vec2, f64)>,
    /// Caption.
    pub caption: String,
}

fn rgb(c: Color) -> [u8; 3] {
    let s = c.to_srgba();
    [
        (s.red * 255.0).round() as u8,
        (s.green * 255.0).round() as u8,
        (s.blue * 255.0).round() as u8,
    ]
}

impl Scene {
    /// The state of the step's snapshot, which is the state at `time`.
    pub fn capture(world: &World, time: f64, transmissions: bool) -> Self {
        let config = world.resource::<SimConfig>();
        let s = world.resource::<Snapshot>();
        let e = &config.epidemic;
        let boids = (0..s.len())
            .map(|i| {
                let d = s.disease.get(i);
                let tint = Tint::of_disease(d);
                let radius = e.contact_radius(s.swarm[i], d.is_infected());
                (
                    s.pos[i],
                    s.vel[i],
                    rgb(boid_colour(s.swarm[i], tint)),
                    radius,
                )
            })
            .collect();
        let predators = world
            .get_resource::<PredatorIndex>()
            .map_or(Vec::new(), |p| {
                (0..p.snapshot.len())
                    .map(|k| (p.snapshot.pos[k], p.snapshot.vel[k]))
                    .collect()
            });
        // Like the app: each predator's line to its target.
        let mut chases = Vec::new();
        if let Some(mut q) = world.try_query::<(&Position, &Predator)>() {
            for (p, predator) in q.iter(world) {
                if let Some(t) = predator.target.and_then(|id| s.slot_of_id(id)) {
                    chases.push((p.0, p.0 + s.space.displacement(p.0, s.pos[t])));
                }
            }
        }
        let mut lines = Vec::new();
        if transmissions {
            let log = world.resource::<TransmissionLog>();
            for (from, at, age) in log.recent(time, TRANSMISSION_SECONDS) {
                if age >= 0.0 {
                    let to = from + s.space.displacement(from, at);
                    lines.push((from, to, 1.0 - age / TRANSMISSION_SECONDS));
                }
            }
        }
        let (mut sus, mut inf, mut rec) = (0, 0, 0);
        for d in s.disease.iter() {
            match Tint::of_disease(d) {
                Tint::Infected => inf += 1,
                Tint::Recovered => rec += 1,
                Tint::Healthy => sus += 1,
            }
        }
        let tally = world.resource::<Tally>();
        let dead: u64 = tally.dead.iter().sum();
        let caught: u64 = tally.caught.iter().sum();
        let mut caption = format!("t = {time:.2} s   S {sus}   I {inf}   R {rec}   dead {dead}");
        if !predators.is_empty() {
            caption.push_str(&format!("   caught {caught}"));
        }
        Self {
            world: s.space.size(),
            boids,
            predators,
            chases,
            lines,
            caption,
        }
    }
}

/// A triangle of `length` × `width` at `at`, pointing along `heading`.
fn triangle(at: (f64, f64), heading: Vec2, length: f64, width: f64) -> Vec<(i32, i32)> {
    let h = if heading.length_squared() > 0.0 {
        heading.normalize()
    } else {
        Vec2::X
    };
    let (hx, hy) = (h.x as f64, h.y as f64);
    let point = |along: f64, side: f64| {
        // Frame y grows downwards: the world's y is flipped.
        (
            (at.0 + hx * along - hy * side).round() as i32,
            (at.1 - (hy * along + hx * side)).round() as i32,
        )
    };
    vec![
        point(0.6 * length, 0.0),
        point(-0.4 * length, 0.5 * width),
        point(-0.4 * length, -0.5 * width),
    ]
}

/// The frames' background: the window's.
fn background() -> RGBColor {
    let [r, g, b] = rgb(BACKGROUND);
    RGBColor(r, g, b)
}

/// Draws `scene` filling `area` (the world letterboxed to keep its aspect) over the
/// [`background`] the caller gave `area`.
pub fn draw_scene<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    scene: &Scene,
    radii: bool,
) -> Result<()> {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("drawing a frame: {e}");
    let (w, h) = area.dim_in_pixel();
    let (ww, wh) = (scene.world.x.max(1.0) as f64, scene.world.y.max(1.0) as f64);
    let scale = (w as f64 / ww).min(h as f64 / wh);
    let (ox, oy) = ((w as f64 - ww * scale) / 2.0, (h as f64 - wh * scale) / 2.0);
    let to_px = |p: Vec2| (ox + p.x as f64 * scale, oy + (wh - p.y as f64) * scale);
    let at = |p: Vec2| {
        let (x, y) = to_px(p);
        (x.round() as i32, y.round() as i32)
    };
    area.draw(&Rectangle::new(
        [
            at(Vec2::new(0.0, scene.world.y)),
            at(Vec2::new(scene.world.x, 0.0)),
        ],
        RGBColor(255, 255, 255).mix(0.25),
    ))
    .map_err(fail)?;
    if radii {
        for &(p, _, c, r) in &scene.boids {
            area.draw(&Circle::new(
                at(p),
                (r as f64 * scale).round() as i32,
                RGBColor(c[0], c[1], c[2]).mix(0.35),
            ))
            .map_err(fail)?;
        }
    }
    let line = rgb(RECENT_COLOUR);
    for &(a, b, alpha) in &scene.lines {
        area.draw(&PathElement::new(
            vec![at(a), at(b)],
            RGBColor(line[0], line[1], line[2])
                .mix(alpha.clamp(0.1, 1.0))
                .stroke_width(2),
        ))
        .map_err(fail)?;
    }
    let boid_len = (BOID_LENGTH as f64 * scale).max(MIN_BOID_PX);
    let boid_width = boid_len * (BOID_WIDTH / BOID_LENGTH) as f64;
    for &(p, v, c, _) in &scene.boids {
        area.draw(&Polygon::new(
            triangle(to_px(p), v, boid_len, boid_width),
            RGBColor(c[0], c[1], c[2]).filled(),
        ))
        .map_err(fail)?;
    }
    let pc = rgb(PREDATOR_COLOUR);
    for &(a, b) in &scene.chases {
        area.draw(&PathElement::new(
            vec![at(a), at(b)],
            RGBColor(pc[0], pc[1], pc[2]).mix(0.5).stroke_width(1),
        ))
        .map_err(fail)?;
    }
    let pred_len = (PREDATOR_LENGTH as f64 * scale).max(1.6 * MIN_BOID_PX);
    for &(p, v) in &scene.predators {
        area.draw(&Polygon::new(
            triangle(to_px(p), v, pred_len, pred_len * 0.7),
            RGBColor(pc[0], pc[1], pc[2]).filled(),
        ))
        .map_err(fail)?;
    }
    let font = ((h as f64 / 28.0).clamp(10.0, 28.0)) as u32;
    // A dark band behind the caption, so boids passing under it do not hide the counts.
    let width = (scene.caption.chars().count() as f64 * font as f64 * 0.56) as i32 + 16;
    area.draw(&Rectangle::new(
        [(0, 0), (width, font as i32 + 12)],
        RGBColor(0, 0, 0).mix(0.65).filled(),
    ))
    .map_err(fail)?;
    area.draw(&Text::new(
        scene.caption.clone(),
        (8, 6),
        ("sans-serif", font).into_font().color(&WHITE),
    ))
    .map_err(fail)?;
    Ok(())
}

/// Writes the frames of a run as they come due.
pub struct Recorder {
    opts: VideoOptions,
    clock: FrameClock,
    gif: Option<DrawingArea<BitMapBackend<'static>, Shift>>,
    frames: usize,
}

impl Recorder {
    /// Starts a recording of steps of `dt` seconds: creates the GIF and the frames folder.
    pub fn new(opts: VideoOptions, dt: f64) -> Result<Self> {
        opts.validate()?;
        crate::fonts::ensure_font();
        if let Some(dir) = &opts.frames {
            std::fs::create_dir_all(dir).with_context(|| {
                format!(
                    "cannot create the frames folder `{}` (choose a folder you can write to with --frames)",
                    dir.display()
                )
            })?;
        }
        let gif = match &opts.gif {
            Some(path) => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).with_context(|| {
                        format!(
                            "cannot create the folder of --video `{}` (choose a file you can write)",
                            path.display()
                        )
                    })?;
                }
                // Create the file first, so a failure is the OS's own words (plotters reports
                // an I/O error as a debug structure).
                let cannot = |reason: String| {
                    anyhow::anyhow!(
                        "cannot write --video `{}`: {reason} (choose a file you can write)",
                        path.display()
                    )
                };
                std::fs::File::create(path).map_err(|e| cannot(e.to_string()))?;
                let delay_ms = (1000.0 / opts.fps).round() as u32;
                let backend = BitMapBackend::gif(path, opts.size, delay_ms)
                    .map_err(|e| cannot(e.to_string()))?;
                Some(backend.into_drawing_area())
            }
            None => None,
        };
        Ok(Self {
            clock: FrameClock::new(&opts, dt),
            opts,
            gif,
            frames: 0,
        })
    }

    /// Records the world's snapshot, the state at `time`, if a frame is due then.
    pub fn observe(&mut self, world: &World, time: f64) -> Result<()> {
        if !self.clock.take(time) {
            return Ok(());
        }
        let scene = Scene::capture(world, time, self.opts.transmissions);
        if let Some(area) = &self.gif {
            area.fill(&background())
                .map_err(|e| anyhow::anyhow!("drawing a frame: {e}"))?;
            draw_scene(area, &scene, self.opts.radii)?;
            area.present()
                .map_err(|e| anyhow::anyhow!("writing a GIF frame: {e}"))?;
        }
        if let Some(dir) = &self.opts.frames {
            let path = frame_path(dir, self.frames);
            // The file's error names the frame.
            crate::png::draw_png(&path, self.opts.size, background(), |area| {
                draw_scene(area, &scene, self.opts.radii)
            })?;
        }
        self.frames += 1;
        Ok(())
    }

    /// Frames written so far.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Ends the recording (the GIF is complete once this returns); a line saying what it wrote.
    pub fn finish(self) -> String {
        let n = self.frames;
        drop(self.gif);
        let mut parts = Vec::new();
        if let Some(gif) = &self.opts.gif {
            parts.push(format!("{}", gif.display()));
        }
        if let Some(dir) = &self.opts.frames {
            parts.push(format!("{}/frame-*.png", dir.display()));
        }
        format!(
            "{n} frames at {} fps to {}",
            self.opts.fps,
            parts.join(" and ")
        )
    }
}

/// The path of frame `k` in `dir`: `frame-00000.png`, …
pub fn frame_path(dir: &Path, k: usize) -> PathBuf {
    dir.join(format!("frame-{k:05}.png"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> VideoOptions {
        VideoOptions {
            gif: Some("a.gif".into()),
            frames: None,
            fps: 10.0,
            from: 1.0,
            to: 2.0,
            size: (320, 180),
            radii: false,
            transmissions: false,
        }
    }

    #[test]
    fn frames_fall_every_tenth_of_a_second_from_one_to_two() {
        let dt = 1.0 / 60.0;
        let mut clock = FrameClock::new(&opts(), dt);
        let taken: Vec<u64> = (0..200u64).filter(|&k| clock.take(k as f64 * dt)).collect();
        // Steps 60, 66, …, 120: eleven frames, 0.1 s apart.
        assert_eq!(taken, (0..=10).map(|j| 60 + 6 * j).collect::<Vec<_>>());
    }

    #[test]
    fn bad_options_name_the_fix() {
        let mut o = opts();
        o.gif = Some("a.webp".into());
        assert!(o.validate().unwrap_err().to_string().contains(".gif"));
        let mut o = opts();
        o.to = 0.5;
        assert!(o.validate().is_err());
        let mut o = opts();
        o.size = (8, 8);
        assert!(o.validate().is_err());
    }

    #[test]
    fn triangles_point_along_the_velocity_with_y_up() {
        let t = triangle((100.0, 100.0), Vec2::Y, 10.0, 6.0);
        // Tip 6 px up the frame (y decreases), base 4 px below.
        assert_eq!(t[0], (100, 94));
        assert_eq!(t[1].1, 104);
    }
}
