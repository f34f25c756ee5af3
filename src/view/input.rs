//! What the user asks for, before anything acts on it: [`Action`]s (from the keyboard here and
//! from the panel's buttons), where the cursor is in the world ([`CursorWorld`], written by the
//! camera, which knows the projection), and mouse drags ([`DragState`]: a press that moves is a
//! drag, not a click). Every other part of the view reads these; this module reads none of
//! them.
//!
//! Shortcuts work whenever no text field is being edited. egui says it "wants the keyboard"
//! whenever any widget has keyboard focus, and Tab (or a click) gives a button that focus, after
//! which every shortcut would be swallowed; so [`release_widget_focus`] hands focus back at the
//! end of every egui pass unless a text field holds it. Runs in `ViewSystems::Input`.

use std::path::PathBuf;

use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_egui::input::EguiWantsInput;
use bevy_egui::{EguiContexts, egui};

use crate::sim::schedule::ViewSystems;

/// A press that moves further than this many screen pixels is a drag, not a click.
pub const DRAG_THRESHOLD_PX: f32 = 4.0;

/// Something the user asked for, by key or by button.
#[derive(Event, Clone, Debug, PartialEq)]
pub enum Action {
    /// Pause or resume.
    TogglePause,
    /// Advance one simulation step (pauses first).
    Step,
    /// Restart the run; `new_seed` draws a fresh seed.
    Reset {
        /// Draw a new seed instead of reusing the current one.
        new_seed: bool,
    },
    /// Next speed up.
    Faster,
    /// Next speed down.
    Slower,
    /// Set the speed multiplier.
    SetSpeed(f32),
    /// Save a PNG of the window.
    Screenshot,
    /// Write the run's metrics so far to a CSV file.
    ExportCsv,
    /// Show or hide the keyboard help.
    ToggleHelp,
    /// Show or hide the side panels.
    TogglePanels,
    /// Fit the whole world in view.
    FitWorld,
    /// Follow the selected boid, or stop following.
    ToggleFollow,
    /// Clear the selection.
    ClearSelection,
    /// Select the infected boid that has infected the most (again: the next one).
    SelectSpreader,
    /// Load a scenario file and restart.
    LoadScenario(PathBuf),
    /// Save the current config to a TOML file.
    SaveConfig(PathBuf),
    /// Go back or forward in time, or save or open a checkpoint.
    TimeTravel(TimeRequest),
}

/// A request for the timeline.
#[derive(Clone, Debug, PartialEq)]
pub enum TimeRequest {
    /// Go to this step (within the marks and the furthest step reached).
    ToStep(u64),
    /// Go this many simulated seconds back (negative) or forward.
    By(f64),
    /// One step back.
    StepBack,
    /// Write a checkpoint file of the current moment.
    Save(PathBuf),
    /// Open a checkpoint file (one the app or a headless run wrote).
    Open(PathBuf),
}

/// Cursor position in world space and world units per screen pixel; `None` when the cursor is
/// off the window or over a panel (outside the world's viewport).
#[derive(Resource, Default, Debug, Clone, Copy)]
pub struct CursorWorld(pub Option<(Vec2, f32)>);

/// Mouse-drag bookkeeping: the camera pans by it, selection ignores drags.
#[derive(Resource, Default, Debug, Clone, Copy)]
pub struct DragState {
    /// Where the current press started, screen px (`None` if it started over a panel).
    pub pressed_at: Option<Vec2>,
    /// The current (or just finished) press moved beyond [`DRAG_THRESHOLD_PX`].
    pub dragged: bool,
    /// While dragging: this frame's cursor movement, from and to, screen px.
    pub moved: Option<(Vec2, Vec2)>,
    last: Option<Vec2>,
}

/// The shortcut of a key, if it has one (`shift`: a Shift key is held).
pub fn shortcut(key: KeyCode, shift: bool) -> Option<Action> {
    Some(match key {
        KeyCode::Space => Action::TogglePause,
        KeyCode::KeyS if shift => Action::TimeTravel(TimeRequest::StepBack),
        KeyCode::KeyS => Action::Step,
        KeyCode::ArrowLeft => Action::TimeTravel(TimeRequest::By(-1.0)),
        KeyCode::ArrowRight => Action::TimeTravel(TimeRequest::By(1.0)),
        KeyCode::KeyR => Action::Reset { new_seed: shift },
        KeyCode::Equal | KeyCode::NumpadAdd | KeyCode::BracketRight => Action::Faster,
        KeyCode::Minus | KeyCode::NumpadSubtract | KeyCode::BracketLeft => Action::Slower,
        KeyCode::KeyH | KeyCode::Slash | KeyCode::F1 => Action::ToggleHelp,
        KeyCode::Tab => Action::TogglePanels,
        KeyCode::F12 => Action::Screenshot,
        KeyCode::KeyE => Action::ExportCsv,
        KeyCode::Home => Action::FitWorld,
        KeyCode::KeyF => Action::ToggleFollow,
        KeyCode::Escape => Action::ClearSelection,
        KeyCode::KeyI => Action::SelectSpreader,
        _ => return None,
    })
}

pub(super) fn plugin(app: &mut App) {
    app.add_event::<Action>()
        .init_resource::<CursorWorld>()
        .init_resource::<DragState>()
        .add_systems(
            Update,
            (read_keyboard, track_drag).in_set(ViewSystems::Input),
        );
}

/// Turns the frame's key presses into actions, unless a text field is being edited.
fn read_keyboard(
    keys: Res<ButtonInput<KeyCode>>,
    wants: Option<Res<EguiWantsInput>>,
    mut actions: EventWriter<Action>,
) {
    if wants.is_some_and(|w| w.wants_keyboard_input()) {
        return;
    }
    let shift = keys.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight]);
    for key in keys.get_just_pressed() {
        if let Some(action) = shortcut(*key, shift) {
            actions.write(action);
        }
    }
}

/// Follows presses of any mouse button: a press over the world that moves beyond the threshold
/// becomes a drag.
fn track_drag(
    buttons: Res<ButtonInput<MouseButton>>,
    cursor: Res<CursorWorld>,
    wants: Option<Res<EguiWantsInput>>,
    windows: Query<&Window, With<PrimaryWindow>>,
    mut drag: ResMut<DragState>,
) {
    let any = [MouseButton::Left, MouseButton::Middle, MouseButton::Right];
    let screen = windows.single().ok().and_then(|w| w.cursor_position());
    drag.moved = None;
    if buttons.any_just_pressed(any) {
        let over_ui = cursor.0.is_none() || wants.as_ref().is_some_and(|w| w.wants_pointer_input());
        *drag = DragState {
            pressed_at: if over_ui { None } else { screen },
            dragged: false,
            moved: None,
            last: screen,
        };
    }
    if !buttons.any_pressed(any) {
        drag.pressed_at = None;
        return;
    }
    let (Some(start), Some(now)) = (drag.pressed_at, screen) else {
        return;
    };
    if now.distance(start) > DRAG_THRESHOLD_PX {
        drag.dragged = true;
    }
    if drag.dragged {
        drag.moved = drag.last.map(|last| (last, now));
    }
    drag.last = Some(now);
}

/// Whether egui's keyboard focus is on a text field (typing there must not trigger shortcuts).
pub fn text_field_focused(ctx: &egui::Context) -> bool {
    ctx.memory(|m| m.focused())
        .is_some_and(|id| egui::text_edit::TextEditState::load(ctx, id).is_some())
}

/// Ends every egui pass: keyboard focus stays only on a text field being edited. A button that
/// Tab or a click focused gives it back, so the shortcuts keep working (and Space does not
/// also press that button).
pub fn release_widget_focus(mut contexts: EguiContexts) -> Result {
    let ctx = contexts.ctx_mut()?;
    if let Some(id) = ctx.memory(|m| m.focused())
        && !text_field_focused(ctx)
    {
        ctx.memory_mut(|m| m.surrender_focus(id));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_shortcut_has_an_action() {
        for (key, action) in [
            (KeyCode::Space, Action::TogglePause),
            (KeyCode::KeyS, Action::Step),
            (KeyCode::Tab, Action::TogglePanels),
            (KeyCode::KeyH, Action::ToggleHelp),
            (KeyCode::F12, Action::Screenshot),
            (KeyCode::Home, Action::FitWorld),
            (KeyCode::KeyF, Action::ToggleFollow),
            (KeyCode::Escape, Action::ClearSelection),
            (KeyCode::KeyI, Action::SelectSpreader),
        ] {
            assert_eq!(shortcut(key, false), Some(action), "{key:?}");
        }
        assert_eq!(
            shortcut(KeyCode::KeyR, true),
            Some(Action::Reset { new_seed: true })
        );
        assert_eq!(shortcut(KeyCode::KeyQ, false), None);
    }
}
