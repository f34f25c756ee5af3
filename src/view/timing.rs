//! Where a frame's time goes: wall time of the simulation steps (the whole `FixedMain` schedule,
//! from `FixedFirst` to `FixedLast`) against the whole frame, reported once a second in the run
//! controls and, at `debug` level, in the log (`RUST_LOG=pandemic_boids=debug`). This is how the
//! window's budget is measured: with 20 000 boids the simulation must leave room for drawing
//! inside a 60 Hz frame.

use std::time::Duration;

use bevy::platform::time::Instant;

use bevy::prelude::*;

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<FrameTiming>()
        .add_systems(FixedFirst, start_step)
        .add_systems(FixedLast, end_step)
        .add_systems(First, end_frame);
}

/// One second's averages of simulation and frame time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TimingReport {
    /// Frames drawn per second.
    pub fps: f32,
    /// Simulation steps run per second (wall clock).
    pub steps_per_s: f32,
    /// Wall time of one simulation step, ms (mean).
    pub ms_per_step: f32,
    /// Wall time of one frame, ms (mean).
    pub ms_per_frame: f32,
    /// Share of the frame time spent in simulation steps, 0–1.
    pub sim_share: f32,
}

impl TimingReport {
    /// Averages over a window of `frames` frames that took `frame_time` in all, during which
    /// `steps` steps took `sim_time`.
    pub fn from_window(frames: u32, frame_time: Duration, steps: u32, sim_time: Duration) -> Self {
        let secs = frame_time.as_secs_f32();
        if frames == 0 || secs <= 0.0 {
            return Self::default();
        }
        let sim = sim_time.as_secs_f32();
        Self {
            fps: frames as f32 / secs,
            steps_per_s: steps as f32 / secs,
            ms_per_step: if steps > 0 {
                1e3 * sim / steps as f32
            } else {
                0.0
            },
            ms_per_frame: 1e3 * secs / frames as f32,
            sim_share: (sim / secs).min(1.0),
        }
    }

    /// The line shown under the run controls.
    pub fn line(&self) -> String {
        format!(
            "simulation {:.2} ms/step · {:.0} steps/s · {:.0} % of {:.1} ms frames",
            self.ms_per_step,
            self.steps_per_s,
            100.0 * self.sim_share,
            self.ms_per_frame
        )
    }
}

/// The running window and the last report.
#[derive(Resource, Debug)]
pub struct FrameTiming {
    step_started: Option<Instant>,
    window_started: Instant,
    frame_started: Instant,
    frames: u32,
    frame_time: Duration,
    steps: u32,
    sim_time: Duration,
    /// The last full second's averages.
    pub report: TimingReport,
}

impl Default for FrameTiming {
    fn default() -> Self {
        let now = Instant::now();
        Self {
            step_started: None,
            window_started: now,
            frame_started: now,
            frames: 0,
            frame_time: Duration::ZERO,
            steps: 0,
            sim_time: Duration::ZERO,
            report: TimingReport::default(),
        }
    }
}

fn start_step(mut timing: ResMut<FrameTiming>) {
    timing.step_started = Some(Instant::now());
}

fn end_step(mut timing: ResMut<FrameTiming>) {
    if let Some(started) = timing.step_started.take() {
        timing.sim_time += started.elapsed();
        timing.steps += 1;
    }
}

/// Closes the previous frame; once a second publishes the window's averages.
fn end_frame(mut timing: ResMut<FrameTiming>) {
    let now = Instant::now();
    let frame = now - timing.frame_started;
    timing.frame_started = now;
    timing.frames += 1;
    timing.frame_time += frame;
    if now - timing.window_started < Duration::from_secs(1) {
        return;
    }
    timing.report = TimingReport::from_window(
        timing.frames,
        timing.frame_time,
        timing.steps,
        timing.sim_time,
    );
    debug!("{}", timing.report.line());
    timing.window_started = now;
    timing.frames = 0;
    timing.frame_time = Duration::ZERO;
    timing.steps = 0;
    timing.sim_time = Duration::ZERO;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_averages_steps_and_frames() {
        // 60 frames in 1 s, 120 steps taking 300 ms in all.
        let r =
            TimingReport::from_window(60, Duration::from_secs(1), 120, Duration::from_millis(300));
        assert!((r.fps - 60.0).abs() < 1e-3);
        assert!((r.steps_per_s - 120.0).abs() < 1e-3);
        assert!((r.ms_per_step - 2.5).abs() < 1e-4);
        assert!((r.ms_per_frame - 1000.0 / 60.0).abs() < 1e-3);
        assert!((r.sim_share - 0.3).abs() < 1e-6);
        assert_eq!(
            r.line(),
            "simulation 2.50 ms/step · 120 steps/s · 30 % of 16.7 ms frames"
        );
    }

    #[test]
    fn an_empty_or_paused_window_reports_no_steps() {
        assert_eq!(
            TimingReport::from_window(0, Duration::ZERO, 0, Duration::ZERO),
            TimingReport::default()
        );
        let paused = TimingReport::from_window(30, Duration::from_millis(500), 0, Duration::ZERO);
        assert_eq!(paused.ms_per_step, 0.0);
        assert_eq!(paused.sim_share, 0.0);
    }
}
