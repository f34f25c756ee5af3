//! Panel section: run controls — pause/resume, one step, reset with the same or a new seed,
//! the speed multiplier, a status line (time, step, seed, frame rate) and where the frame's time
//! goes (simulation against drawing).

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_egui::egui;

use crate::sim::clock::SimClock;
use crate::sim::config::SimConfig;
use crate::view::control::{RunControl, SPEEDS};
use crate::view::input::Action;
use crate::view::input::TimeRequest;
use crate::view::timeline::Timeline;
use crate::view::timing::FrameTiming;

/// What the run controls read.
#[derive(SystemParam)]
pub(super) struct Controls<'w, 's> {
    control: Res<'w, RunControl>,
    config: Res<'w, SimConfig>,
    clock: Res<'w, SimClock>,
    virtual_time: Res<'w, Time<Virtual>>,
    real: Res<'w, Time<Real>>,
    timing: Res<'w, FrameTiming>,
    timeline: Res<'w, Timeline>,
    /// Smoothed frames per second.
    fps: Local<'s, f32>,
}

impl Controls<'_, '_> {
    /// Updates the smoothed frame rate (once per frame).
    pub(super) fn tick(&mut self) {
        let dt = self.real.delta_secs();
        if dt > 0.0 {
            *self.fps = if *self.fps == 0.0 {
                1.0 / dt
            } else {
                *self.fps * 0.95 + 0.05 / dt
            };
        }
    }

    /// The heading's status line (messages such as "screenshot saved to …").
    pub(super) fn status(&self) -> Option<&str> {
        self.control.status(self.real.elapsed_secs_f64())
    }
}

/// Draws the run controls.
pub(super) fn show(ui: &mut egui::Ui, c: &Controls, actions: &mut EventWriter<Action>) {
    let paused = c.virtual_time.is_paused();
    ui.horizontal_wrapped(|ui| {
        if ui
            .button(if paused { "▶ Resume" } else { "⏸ Pause" })
            .on_hover_text("Space")
            .clicked()
        {
            actions.write(Action::TogglePause);
        }
        if ui
            .button("Step")
            .on_hover_text("S: one step, pauses")
            .clicked()
        {
            actions.write(Action::Step);
        }
        if ui.button("Reset").on_hover_text("R: same seed").clicked() {
            actions.write(Action::Reset { new_seed: false });
        }
        if ui.button("New seed").on_hover_text("Shift+R").clicked() {
            actions.write(Action::Reset { new_seed: true });
        }
    });
    ui.horizontal_wrapped(|ui| {
        ui.label("speed");
        for s in SPEEDS {
            if ui
                .selectable_label((c.control.speed - s).abs() < 1e-6, format!("×{s}"))
                .clicked()
            {
                actions.write(Action::SetSpeed(s));
            }
        }
    });
    ui.label(format!(
        "t = {:.1} s · step {} · seed {} · {:.0} fps{}",
        c.clock.time,
        c.clock.step,
        c.config.seed,
        *c.fps,
        if paused { " · paused" } else { "" }
    ));
    timeline(ui, c, actions);
    let report = c.timing.report;
    if report.fps > 0.0 {
        ui.label(egui::RichText::new(report.line()).small())
            .on_hover_text(
                "Wall time of the simulation steps against the whole frame, over the last second",
            );
    }
}

/// The timeline: a slider from the first in-memory checkpoint to the furthest moment reached,
/// what the checkpoints take, and the last time-travel message.
fn timeline(ui: &mut egui::Ui, c: &Controls, actions: &mut EventWriter<Action>) {
    let Some((first, last)) = c.timeline.range() else {
        return;
    };
    let last = last.max(c.clock.step);
    let dt = c.config.dt;
    let mut step = c.clock.step.clamp(first, last);
    ui.spacing_mut().slider_width = 230.0;
    let slider = egui::Slider::new(&mut step, first..=last)
        .custom_formatter(move |v, _| format!("{:.2} s", v * dt))
        .text("timeline");
    let response = ui.add(slider).on_hover_text(
        "Drag to go back to any moment (Left/Right arrow: one second, Shift+S: one step back), \
         then play on; change a parameter there to branch (the plots keep the old future \
         faintly)",
    );
    if response.changed() {
        actions.write(Action::TimeTravel(TimeRequest::ToStep(step)));
    }
    let (marks, bytes) = c.timeline.memory();
    let mut line = format!(
        "{marks} checkpoints in memory: {:.1} of {:.0} MB",
        bytes as f64 / 1e6,
        c.timeline.budget as f64 / 1e6
    );
    if let Some(m) = &c.timeline.message {
        line = format!("{line} · {m}");
    }
    ui.label(egui::RichText::new(line).small());
}
