//! Carrying out what the user asked for ([`Action`]s from the keyboard and the panel): pause and
//! resume, single steps, reset with the same or a new seed, speed ×0.25…×8, help, panels,
//! screenshot, metrics export, scenario load/save, fitting the world, following and clearing
//! the selection. Pause pauses `Time<Virtual>`; speed is its relative speed; a single step runs
//! the fixed schedule once. `perform_actions` runs in `ViewSystems::Control`.

use std::path::{Path, PathBuf};

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, save_to_disk};

use crate::sim::agent::{AgentId, ResetRequest};
use crate::sim::config::SimConfig;
use crate::sim::interventions::InterventionLog;
use crate::sim::metrics::{MetricsLog, Sample};
use crate::sim::neighbours::Snapshot;
use crate::sim::rng::mix64;
use crate::sim::schedule::StepMode;
use crate::sim::schedule::ViewSystems;
use crate::sim::transmission::TransmissionLog;
use crate::view::camera::CameraView;
use crate::view::input::Action;
use crate::view::link::CurrentScenario;
use crate::view::select::Selected;
use crate::view::timeline::Timeline;
use crate::view::transmissions::entity_of;

/// Speed multipliers offered, slowest first.
pub const SPEEDS: [f32; 6] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0];
/// How long a status message stays, s.
const MESSAGE_SECONDS: f64 = 8.0;

/// UI state of the run controls.
#[derive(Resource, Debug)]
pub struct RunControl {
    /// Speed multiplier of simulated time.
    pub speed: f32,
    /// Steps to run while paused.
    pub steps_requested: u32,
    /// Whether the help overlay is open.
    pub show_help: bool,
    /// Whether the side panels are open.
    pub panels: bool,
    /// Last status line and when it was set (real seconds).
    pub message: Option<(String, f64)>,
    /// Screenshots taken this session.
    shots: u32,
}

impl Default for RunControl {
    fn default() -> Self {
        Self {
            speed: 1.0,
            steps_requested: 0,
            show_help: false,
            panels: true,
            message: None,
            shots: 0,
        }
    }
}

impl RunControl {
    /// The status line, if still fresh at real time `now`.
    pub fn status(&self, now: f64) -> Option<&str> {
        self.message
            .as_ref()
            .filter(|(_, at)| now - at < MESSAGE_SECONDS)
            .map(|(m, _)| m.as_str())
    }
}

/// The next speed in [`SPEEDS`] above (`up`) or below the current one.
pub fn next_speed(current: f32, up: bool) -> f32 {
    if up {
        SPEEDS
            .iter()
            .copied()
            .find(|&s| s > current + 1e-6)
            .unwrap_or(SPEEDS[SPEEDS.len() - 1])
    } else {
        SPEEDS
            .iter()
            .rev()
            .copied()
            .find(|&s| s < current - 1e-6)
            .unwrap_or(SPEEDS[0])
    }
}

/// Writes samples as `metrics.csv` does.
pub fn write_samples_csv(path: &Path, samples: &[Sample]) -> std::io::Result<()> {
    write_text(path, &samples_csv(samples))
}

/// The samples as a `metrics.csv` text.
pub fn samples_csv(samples: &[Sample]) -> String {
    let mut text = Sample::csv_header();
    text.push('\n');
    for s in samples {
        text.push_str(&s.csv_row());
        text.push('\n');
    }
    text
}

/// Writes a text file; in a browser, downloads it under the file's name instead.
fn write_text(path: &Path, text: &str) -> std::io::Result<()> {
    #[cfg(target_arch = "wasm32")]
    {
        let name = path
            .file_name()
            .map_or("download".into(), |n| n.to_string_lossy());
        crate::view::web::download(&name, text).map_err(std::io::Error::other)
    }
    #[cfg(not(target_arch = "wasm32"))]
    std::fs::write(path, text)
}

/// A scenario file (in a browser: a built-in scenario, by the same relative name).
fn load_scenario(path: &Path) -> Result<SimConfig, crate::sim::config::ConfigError> {
    #[cfg(target_arch = "wasm32")]
    return crate::sim::config::shipped::load_shipped(&scenario_name(path), &[]);
    #[cfg(not(target_arch = "wasm32"))]
    SimConfig::load(Some(path), &[])
}

/// The name a link uses for a scenario file: relative to the shipped folder without `.toml`
/// (`matrix/B2_D2`), else its stem.
pub fn scenario_name(path: &Path) -> String {
    let root = crate::sim::config::scenarios_dir();
    let rel = path.strip_prefix(&root).unwrap_or(path).with_extension("");
    if path.starts_with(&root) || path.is_relative() {
        rel.to_string_lossy().replace('\\', "/")
    } else {
        path.file_stem()
            .map_or("default".into(), |s| s.to_string_lossy().into_owned())
    }
}

/// Seconds since 1970 (the browser's clock in a browser).
fn unix_seconds() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::Date::now() / 1000.0
    }
    #[cfg(not(target_arch = "wasm32"))]
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Saves the config so that `pandemic-boids run --scenario PATH` reproduces it.
pub fn save_config(path: &Path, config: &SimConfig) -> std::io::Result<()> {
    let header = "# Saved from the pandemic-boids panel; run it with\n# pandemic-boids run --scenario <this file> --out <folder>\n\n";
    write_text(path, &format!("{header}{}", config.to_toml()))
}

fn fresh_seed() -> u64 {
    let nanos = (unix_seconds() * 1e9) as u64;
    // Seeds must fit a TOML integer.
    mix64(nanos) >> 1
}

pub(crate) fn stamp() -> u64 {
    unix_seconds() as u64
}

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<RunControl>()
        .add_systems(Update, perform_actions.in_set(ViewSystems::Control))
        .add_systems(
            RunFixedMainLoop,
            run_requested_steps.in_set(RunFixedMainLoopSystem::BeforeFixedMainLoop),
        );
}

fn perform_actions(
    mut actions: EventReader<Action>,
    mut control: ResMut<RunControl>,
    mut virtual_time: ResMut<Time<Virtual>>,
    real: Res<Time<Real>>,
    mut config: ResMut<SimConfig>,
    mut reset: ResMut<ResetRequest>,
    (log, interventions): (Res<MetricsLog>, Res<InterventionLog>),
    mut view: ResMut<CameraView>,
    mut selected: ResMut<Selected>,
    spread: (Res<TransmissionLog>, Res<Snapshot>, Query<&AgentId>),
    mut current: ResMut<CurrentScenario>,
    mut timeline: ResMut<Timeline>,
    mut commands: Commands,
) {
    let now = real.elapsed_secs_f64();
    for action in actions.read() {
        let message = match action {
            Action::TogglePause => {
                if virtual_time.is_paused() {
                    virtual_time.unpause();
                    None
                } else {
                    virtual_time.pause();
                    Some("paused (Space resumes, S steps)".to_string())
                }
            }
            Action::Step => {
                virtual_time.pause();
                control.steps_requested += 1;
                None
            }
            Action::Reset { new_seed } => {
                reset.pending = true;
                reset.seed = new_seed.then(fresh_seed);
                // While paused, show the new start at once (one observing step).
                if virtual_time.is_paused() {
                    control.steps_requested += 1;
                }
                Some(match reset.seed {
                    Some(s) => format!("reset with new seed {s}"),
                    None => format!("reset with seed {}", config.seed),
                })
            }
            Action::Faster | Action::Slower | Action::SetSpeed(_) => {
                control.speed = match action {
                    Action::Faster => next_speed(control.speed, true),
                    Action::Slower => next_speed(control.speed, false),
                    Action::SetSpeed(s) => s.clamp(SPEEDS[0], SPEEDS[SPEEDS.len() - 1]),
                    _ => unreachable!(),
                };
                virtual_time.set_relative_speed(control.speed);
                Some(format!("speed ×{}", control.speed))
            }
            Action::Screenshot => {
                control.shots += 1;
                let path =
                    PathBuf::from(format!("pandemic-boids-{}-{}.png", stamp(), control.shots));
                let shown = std::path::absolute(&path).unwrap_or(path.clone());
                commands
                    .spawn(Screenshot::primary_window())
                    .observe(save_to_disk(path));
                Some(format!("screenshot saved to {}", shown.display()))
            }
            Action::ExportCsv => {
                let path = PathBuf::from(format!(
                    "pandemic-boids-metrics-seed{}-{}.csv",
                    config.seed,
                    stamp()
                ));
                let shown = std::path::absolute(&path).unwrap_or(path.clone());
                Some(match write_samples_csv(&path, &log.samples) {
                    Ok(()) => format!("{} rows exported to {}", log.samples.len(), shown.display()),
                    Err(e) => format!("export failed: {}: {e}", shown.display()),
                })
            }
            Action::ToggleHelp => {
                control.show_help = !control.show_help;
                None
            }
            Action::TogglePanels => {
                control.panels = !control.panels;
                None
            }
            Action::FitWorld => {
                view.refit = true;
                None
            }
            Action::ToggleFollow => {
                view.follow = !view.follow;
                None
            }
            Action::ClearSelection => {
                selected.0 = None;
                None
            }
            Action::SelectSpreader => {
                let (log, snapshot, ids) = &spread;
                let current = selected.0.and_then(|e| ids.get(e).ok()).map(|id| id.0);
                match log.next_spreader(current) {
                    Some(id) => {
                        selected.0 = entity_of(snapshot, id);
                        let infected = log.open_of(id).map_or(0, |r| log.records[r].secondary);
                        Some(format!("selected #{id}: it has infected {infected} so far"))
                    }
                    None => Some("nobody is infected".to_string()),
                }
            }
            Action::TimeTravel(request) => {
                timeline.requests.push(request.clone());
                None
            }
            Action::LoadScenario(path) => Some(match load_scenario(path) {
                Ok(new) => {
                    *config = new;
                    current.0 = scenario_name(path);
                    reset.pending = true;
                    reset.seed = None;
                    if virtual_time.is_paused() {
                        control.steps_requested += 1;
                    }
                    format!("loaded {}", path.display())
                }
                Err(e) => e.to_string(),
            }),
            // Saved as configured: without the live changes of active interventions.
            Action::SaveConfig(path) => Some(
                match save_config(
                    path,
                    &crate::sim::interventions::as_configured(&config, &interventions),
                ) {
                    Ok(()) => format!(
                        "saved {}",
                        std::path::absolute(path).unwrap_or(path.clone()).display()
                    ),
                    Err(e) => format!("cannot save {}: {e}", path.display()),
                },
            ),
        };
        if let Some(m) = message {
            info!("{m}");
            control.message = Some((m, now));
        }
    }
}

/// Runs the steps asked for while paused: the fixed schedule once per step, with `Time` set to
/// the fixed clock exactly as Bevy's own fixed loop does.
fn run_requested_steps(world: &mut World) {
    let pending = std::mem::take(&mut world.resource_mut::<RunControl>().steps_requested);
    if pending == 0 {
        return;
    }
    let observe_only = world.resource::<ResetRequest>().pending;
    for _ in 0..pending {
        if observe_only {
            *world.resource_mut::<StepMode>() = StepMode::Observe;
        }
        crate::view::timeline::run_one_step(world);
        *world.resource_mut::<StepMode>() = StepMode::Full;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_step_through_the_list_and_stop_at_the_ends() {
        assert_eq!(next_speed(1.0, true), 2.0);
        assert_eq!(next_speed(8.0, true), 8.0);
        assert_eq!(next_speed(1.0, false), 0.5);
        assert_eq!(next_speed(0.25, false), 0.25);
        assert_eq!(next_speed(3.0, false), 2.0);
    }
}
