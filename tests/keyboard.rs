//! Keyboard shortcuts always work while no text field is being edited, the panel's
//! selection and recording controls do what they say, and the timeline goes back to any earlier
//! step exactly and branches from it. The panels run headless
//! (bevy_egui with a primary context and no window), key presses go in as the window system
//! would send them — to Bevy's input and to egui alike — and the panels' state is read back.
//!
//! The bug this guards: Tab hid the panels, egui's own Tab handling then gave keyboard focus to
//! the "panels (Tab)" button, egui reported that it wanted the keyboard, and from then on Tab,
//! H, Space and F12 did nothing.

use bevy::input::keyboard::{Key, KeyboardInput};
use bevy::input::{ButtonState, InputPlugin};
use bevy::prelude::*;
use bevy_egui::input::write_egui_wants_input_system;
use bevy_egui::{EguiContext, EguiPrimaryContextPass, EguiUserTextures, PrimaryEguiContext, egui};
use pandemic_boids::sim::checkpoint::{Checkpoint, capture};
use pandemic_boids::sim::clock::SimClock;
use pandemic_boids::sim::config::SimConfig;
use pandemic_boids::view::control::RunControl;
use pandemic_boids::view::input::{Action, TimeRequest};
use pandemic_boids::view::timeline::Timeline;
use pandemic_boids::{PanelsPlugin, SimPlugin};

/// Key events egui receives in the next pass.
#[derive(Resource, Default)]
struct EguiKeys(Vec<egui::Event>);

/// What bevy_egui does each frame, minus the window: one egui pass over the primary context
/// with the frame's key events, running the app's panel systems.
fn egui_pass(world: &mut World) {
    let mut q = world.query_filtered::<&mut EguiContext, With<PrimaryEguiContext>>();
    let ctx = q.single_mut(world).unwrap().get_mut().clone();
    let events = std::mem::take(&mut world.resource_mut::<EguiKeys>().0);
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1600.0, 900.0));
    ctx.begin_pass(egui::RawInput {
        screen_rect: Some(screen),
        events,
        ..default()
    });
    world.run_schedule(EguiPrimaryContextPass);
    let _ = ctx.end_pass();
}

/// The app's panels and controls, headless, with an egui context of their own.
fn panels() -> App {
    panels_with(SimConfig::default())
}

/// [`panels`] for `config`, with exactly one simulation step per frame.
fn panels_with(config: SimConfig) -> App {
    let dt = std::time::Duration::from_secs_f64(config.dt);
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, InputPlugin))
        .insert_resource(bevy::time::TimeUpdateStrategy::ManualDuration(dt))
        .add_plugins(SimPlugin { config })
        .add_plugins(PanelsPlugin)
        .init_resource::<EguiUserTextures>()
        .init_resource::<bevy_egui::input::EguiWantsInput>()
        .init_resource::<EguiKeys>()
        .add_systems(
            PostUpdate,
            (egui_pass, write_egui_wants_input_system).chain(),
        );
    app.world_mut().spawn(PrimaryEguiContext);
    app.finish();
    app.cleanup();
    app.update();
    app
}

/// Presses and releases a key over two frames, as a window would report it: to Bevy's input
/// and to egui.
fn tap(app: &mut App, code: KeyCode, logical: Key, egui_key: egui::Key) {
    for state in [ButtonState::Pressed, ButtonState::Released] {
        app.world_mut().send_event(KeyboardInput {
            key_code: code,
            logical_key: logical.clone(),
            state,
            text: None,
            repeat: false,
            window: Entity::PLACEHOLDER,
        });
        app.world_mut()
            .resource_mut::<EguiKeys>()
            .0
            .push(egui::Event::Key {
                key: egui_key,
                physical_key: None,
                pressed: state == ButtonState::Pressed,
                repeat: false,
                modifiers: egui::Modifiers::NONE,
            });
        app.update();
    }
}

fn tab(app: &mut App) {
    tap(app, KeyCode::Tab, Key::Tab, egui::Key::Tab);
}

fn h(app: &mut App) {
    tap(app, KeyCode::KeyH, Key::Character("h".into()), egui::Key::H);
}

fn panels_shown(app: &App) -> bool {
    app.world().resource::<RunControl>().panels
}

fn egui_focus(app: &mut App) -> Option<egui::Id> {
    let world = app.world_mut();
    let mut q = world.query_filtered::<&mut EguiContext, With<PrimaryEguiContext>>();
    let mut ctx = q.single_mut(world).unwrap();
    ctx.get_mut().memory(|m| m.focused())
}

#[test]
fn tab_twice_hides_and_restores_the_panels() {
    let mut app = panels();
    assert!(panels_shown(&app));
    tab(&mut app);
    assert!(!panels_shown(&app), "Tab hides the panels");
    assert_eq!(egui_focus(&mut app), None, "no button keeps the keyboard");
    tab(&mut app);
    assert!(panels_shown(&app), "a second Tab brings them back");
    // And every other shortcut still works after the round trip.
    h(&mut app);
    assert!(
        app.world().resource::<RunControl>().show_help,
        "H opens the help"
    );
    tab(&mut app);
    h(&mut app);
    assert!(
        !app.world().resource::<RunControl>().show_help,
        "H works with the panels hidden"
    );
}

/// A text field drawn every pass, holding keyboard focus from its first frame (as after a
/// click into it).
fn text_field(mut contexts: bevy_egui::EguiContexts, mut text: Local<String>) -> Result {
    let ctx = contexts.ctx_mut()?;
    let id = egui::Id::new("a text field");
    egui::Area::new("typing".into()).show(ctx, |ui| {
        ui.add(egui::TextEdit::singleline(&mut *text).id(id));
    });
    if ctx.memory(|m| m.focused()).is_none() {
        ctx.memory_mut(|m| m.request_focus(id));
    }
    Ok(())
}

#[test]
fn shortcuts_pause_while_a_text_field_is_edited() {
    let mut app = panels();
    app.add_systems(
        EguiPrimaryContextPass,
        text_field.before(pandemic_boids::view::input::release_widget_focus),
    );
    app.update();
    app.update();
    h(&mut app);
    assert!(
        !app.world().resource::<RunControl>().show_help,
        "typing an h into a text field is not a shortcut"
    );
    tab(&mut app);
    assert!(panels_shown(&app), "nor is a Tab");
}

#[test]
fn i_selects_the_infected_boid_that_has_infected_the_most() {
    use pandemic_boids::sim::agent::AgentId;
    use pandemic_boids::sim::transmission::TransmissionLog;
    use pandemic_boids::view::select::Selected;
    let mut app = panels();
    // Real time drives the fixed steps: wait for the first one to record the initial cases.
    for _ in 0..200 {
        if app.world().resource::<TransmissionLog>().ongoing().count() > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        app.update();
    }
    let want = app
        .world()
        .resource::<TransmissionLog>()
        .next_spreader(None)
        .expect("the default scenario starts with infected boids");
    tap(
        &mut app,
        KeyCode::KeyI,
        Key::Character("i".into()),
        egui::Key::I,
    );
    let selected = app
        .world()
        .resource::<Selected>()
        .0
        .expect("I selects a boid");
    let id = app.world().get::<AgentId>(selected).unwrap().0;
    let log = app.world().resource::<TransmissionLog>();
    let r = log.open_of(id).expect("the selected boid is infected");
    let best = log.ongoing().map(|k| log.records[k].secondary).max();
    assert_eq!(
        Some(log.records[r].secondary),
        best,
        "selected {id}, ranked first {want}"
    );
}

#[test]
fn the_record_toggle_writes_a_gif_of_the_steps_it_saw() {
    use pandemic_boids::sim::clock::SimClock;
    use pandemic_boids::view::recording::{RECORD_FPS, RecordRequest};
    let tmp = tempfile::tempdir().unwrap();
    let mut app = panels();
    {
        let mut r = app.world_mut().resource_mut::<RecordRequest>();
        r.folder = Some(tmp.path().to_path_buf());
        r.on = true;
    }
    app.update();
    let from = app.world().resource::<SimClock>().time;
    // Real time drives the fixed steps: run about half a simulated second.
    while app.world().resource::<SimClock>().time < from + 0.5 {
        std::thread::sleep(std::time::Duration::from_millis(5));
        app.update();
    }
    app.world_mut().resource_mut::<RecordRequest>().on = false;
    app.update();
    let until = app.world().resource::<SimClock>().time;
    let r = app.world().resource::<RecordRequest>().clone();
    let path = r.path.expect("a recording was started");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..6], b"GIF89a");
    // One frame per 1/15 s of the simulated time it was on (± the steps at either end).
    let want = (until - from) * RECORD_FPS;
    assert!(
        (r.frames as f64 - want).abs() <= 2.0,
        "{} frames over {:.3} s",
        r.frames,
        until - from
    );
    let frames = bytes
        .windows(3)
        .filter(|w| w == &[0x21, 0xF9, 0x04])
        .count();
    assert_eq!(frames, r.frames);
}

fn step_of(app: &App) -> u64 {
    app.world().resource::<SimClock>().step
}

/// Frames until the clock shows `step` (one step per frame while running).
fn run_to(app: &mut App, step: u64) {
    while step_of(app) < step {
        app.update();
    }
    assert_eq!(step_of(app), step);
}

fn state(app: &mut App) -> Checkpoint {
    capture(app.world_mut()).unwrap()
}

/// Asks for `request` and lets the app carry it out (the next frame's start).
fn travel(app: &mut App, request: TimeRequest) {
    app.world_mut().send_event(Action::TimeTravel(request));
    app.update();
    app.update();
}

fn small() -> SimConfig {
    let mut c = SimConfig::default();
    c.swarms.normal.count = 120;
    c.swarms.doctor.count = 10;
    c.antivax.p_antivax = 0.2;
    c.epidemic.p_initial_infect_normal = 0.1;
    c
}

#[test]
fn the_timeline_goes_back_to_any_step_exactly_and_plays_on_the_same() {
    let mut app = panels_with(small());
    run_to(&mut app, 150);
    let at_150 = state(&mut app);
    run_to(&mut app, 250);
    let at_250 = state(&mut app);
    // Back to step 150 (a mark at a whole second before it, then a replay): the same state.
    travel(&mut app, TimeRequest::ToStep(150));
    assert_eq!(step_of(&app), 150);
    assert!(
        state(&mut app) == at_150,
        "the state at step 150 differs after going back"
    );
    assert!(app.world().resource::<Time<Virtual>>().is_paused());
    // One step back, one second back and forward by the keys' requests.
    travel(&mut app, TimeRequest::StepBack);
    assert_eq!(step_of(&app), 149);
    travel(&mut app, TimeRequest::By(1.0));
    assert_eq!(step_of(&app), 209);
    tap(
        &mut app,
        KeyCode::ArrowLeft,
        Key::ArrowLeft,
        egui::Key::ArrowLeft,
    );
    assert_eq!(step_of(&app), 149, "← goes one second back");
    // Playing on reaches the same step 250 as the first time.
    app.world_mut().resource_mut::<Time<Virtual>>().unpause();
    run_to(&mut app, 250);
    assert!(
        state(&mut app) == at_250,
        "replaying forward gave another step 250"
    );
    assert!(app.world().resource::<Timeline>().ghost.is_empty());
}

#[test]
fn an_edit_in_the_past_branches_and_keeps_the_old_future_as_a_ghost() {
    let mut app = panels_with(small());
    run_to(&mut app, 240);
    let old = state(&mut app).metrics.samples;
    travel(&mut app, TimeRequest::ToStep(100));
    app.world_mut()
        .resource_mut::<SimConfig>()
        .swarms
        .normal
        .noise = 250.0;
    app.update();
    app.update();
    let timeline = app.world().resource::<Timeline>();
    assert!(
        timeline.ghost.len() >= old.len() && timeline.ghost[..old.len()] == old[..],
        "the abandoned future is kept whole"
    );
    assert_eq!(
        timeline.range().unwrap().1,
        100,
        "the old future's marks are gone"
    );
    // The branch plays on with the change.
    app.world_mut().resource_mut::<Time<Virtual>>().unpause();
    run_to(&mut app, 240);
    let new = state(&mut app).metrics.samples;
    assert!(new[..4] == old[..4], "samples before the branch differ");
    assert!(new[..old.len()] != old[..], "the branch changed nothing");
}

#[test]
fn a_links_t_opens_the_run_at_that_moment_paused() {
    let mut app = panels_with(small());
    app.world_mut().resource_mut::<Timeline>().start_at = Some(2.0);
    for _ in 0..4 {
        app.update();
    }
    assert_eq!(step_of(&app), 120, "replayed to 2 s");
    assert!(app.world().resource::<Time<Virtual>>().is_paused());
    let (marks, _) = app.world().resource::<Timeline>().memory();
    assert!(marks >= 2, "the replay keeps marks to go back to");
    // The same moment as a run that played there.
    let mut played = panels_with(small());
    run_to(&mut played, 120);
    assert!(state(&mut app) == state(&mut played));
}
