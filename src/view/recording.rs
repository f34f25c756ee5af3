//! The app's "record GIF" toggle: while it is on, every `1/15` simulated second the state of
//! the step is drawn exactly as `run --video` draws it (same scene, same overlays as the view
//! shows: contact radii, recent transmissions) into `pandemic-boids-<time>.gif` in the working
//! folder. Frames follow the simulation clock, not the screen, so a slow machine records the
//! same movie as a fast one. The capture runs in the fixed step between `Sample` and `Sense`.

use std::path::PathBuf;

use bevy::prelude::*;

#[cfg(not(target_arch = "wasm32"))]
use crate::sim::schedule::stepping;
#[cfg(not(target_arch = "wasm32"))]
use crate::sim::schedule::{SimSystems, ViewSystems};
#[cfg(not(target_arch = "wasm32"))]
use crate::sim::{clock::SimClock, config::SimConfig};
#[cfg(not(target_arch = "wasm32"))]
use crate::view::{
    control::RunControl, control::stamp, overlays::Overlays, transmissions::TransmissionLines,
    video::Recorder, video::VideoOptions,
};

/// Frames per simulated second of a recording.
pub const RECORD_FPS: f64 = 15.0;
/// Width of a recording, px (the height follows the world's aspect).
pub const RECORD_WIDTH: u32 = 640;

/// What the panel asks for and shows.
#[derive(Resource, Default, Debug, Clone)]
pub struct RecordRequest {
    /// Recording wanted.
    pub on: bool,
    /// Frames of the current (or last) recording.
    pub frames: usize,
    /// Its file.
    pub path: Option<PathBuf>,
    /// Where recordings go (`None`: the working folder).
    pub folder: Option<PathBuf>,
}

#[cfg(not(target_arch = "wasm32"))]
/// The recording in progress (not `Send`: it owns the GIF encoder).
#[derive(Default)]
struct Recording(Option<Recorder>);

/// Recording needs files: a browser build has the request (the panel hides the toggle) only.
pub(super) fn plugin(app: &mut App) {
    app.init_resource::<RecordRequest>();
    #[cfg(not(target_arch = "wasm32"))]
    app.insert_non_send_resource(Recording::default())
        .add_systems(Update, start_or_stop.in_set(ViewSystems::Control))
        .add_systems(
            FixedUpdate,
            capture
                .after(SimSystems::Sample)
                .before(SimSystems::Sense)
                .run_if(stepping),
        );
}

#[cfg(not(target_arch = "wasm32"))]
/// The options of a recording starting at `from` with the view's overlays.
fn options(
    config: &SimConfig,
    from: f64,
    radii: bool,
    transmissions: bool,
    gif: PathBuf,
) -> VideoOptions {
    let size = config.space().size();
    let height = ((RECORD_WIDTH as f32 * size.y / size.x.max(1.0)).round() as u32).clamp(16, 4096);
    VideoOptions {
        gif: Some(gif),
        frames: None,
        fps: RECORD_FPS,
        from,
        to: f64::INFINITY,
        size: (RECORD_WIDTH, height & !1),
        radii,
        transmissions,
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn start_or_stop(world: &mut World) {
    let wanted = world.resource::<RecordRequest>().on;
    let active = world.non_send_resource::<Recording>().0.is_some();
    let message = if wanted && !active {
        let name = format!("pandemic-boids-{}.gif", stamp());
        let path = match &world.resource::<RecordRequest>().folder {
            Some(dir) => dir.join(name),
            None => PathBuf::from(name),
        };
        let shown = std::path::absolute(&path).unwrap_or(path.clone());
        let opts = options(
            world.resource::<SimConfig>(),
            world.resource::<SimClock>().time,
            world.resource::<Overlays>().radii,
            world.resource::<TransmissionLines>().recent,
            path,
        );
        let dt = world.resource::<SimConfig>().dt;
        match Recorder::new(opts, dt) {
            Ok(r) => {
                world.non_send_resource_mut::<Recording>().0 = Some(r);
                let mut request = world.resource_mut::<RecordRequest>();
                request.frames = 0;
                request.path = Some(shown.clone());
                format!("recording to {}", shown.display())
            }
            Err(e) => {
                world.resource_mut::<RecordRequest>().on = false;
                format!("cannot record: {e:#}")
            }
        }
    } else if !wanted && active {
        let recorder = world.non_send_resource_mut::<Recording>().0.take();
        format!(
            "saved {}",
            recorder.map(Recorder::finish).unwrap_or_default()
        )
    } else {
        return;
    };
    info!("{message}");
    let now = world.resource::<Time<Real>>().elapsed_secs_f64();
    world.resource_mut::<RunControl>().message = Some((message, now));
}

/// Draws the step's state if a frame is due.
#[cfg(not(target_arch = "wasm32"))]
fn capture(world: &mut World) {
    let Some(mut recording) = world.remove_non_send_resource::<Recording>() else {
        return;
    };
    if let Some(recorder) = &mut recording.0 {
        let time = world.resource::<SimClock>().time;
        match recorder.observe(world, time) {
            Ok(()) => world.resource_mut::<RecordRequest>().frames = recorder.frames(),
            Err(e) => {
                error!("recording stopped: {e:#}");
                recording.0 = None;
                world.resource_mut::<RecordRequest>().on = false;
            }
        }
    }
    world.insert_non_send_resource(recording);
}
