//! The simulation's schedule has no unresolved conflicts: built under `MinimalPlugins` with
//! Bevy's ambiguity detection set to fail, every pair of systems that touch the same data is
//! ordered. (Two unordered writers of one component or resource would make a step's result
//! depend on which runs first.)

use bevy::ecs::schedule::{LogLevel, ScheduleBuildSettings, ScheduleLabel};
use bevy::prelude::*;
use pandemic_boids::SimPlugin;
use pandemic_boids::sim::config::SimConfig;

/// Builds `label` of an app holding every simulation system with ambiguity detection on, and
/// returns the build error (the list of conflicts), if any.
fn conflicts(label: impl ScheduleLabel + Clone) -> Option<String> {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins).add_plugins(SimPlugin {
        config: SimConfig::default(),
    });
    app.edit_schedule(label.clone(), |schedule| {
        schedule.set_build_settings(ScheduleBuildSettings {
            ambiguity_detection: LogLevel::Error,
            ..default()
        });
    });
    app.finish();
    app.cleanup();
    app.world_mut()
        .schedule_scope(label, |world, schedule| schedule.initialize(world))
        .err()
        .map(|e| e.to_string())
}

#[test]
fn a_simulation_step_has_no_ambiguous_systems() {
    if let Some(e) = conflicts(FixedUpdate) {
        panic!("FixedUpdate has unordered conflicting systems:\n{e}");
    }
}

#[test]
fn the_frame_schedules_the_simulation_uses_have_no_ambiguous_systems() {
    for (name, found) in [("First", conflicts(First)), ("Update", conflicts(Update))] {
        assert!(found.is_none(), "{name}:\n{}", found.unwrap());
    }
}
