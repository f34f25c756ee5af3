//! Transmission overlays from the run's transmission record: the selected boid's chain — the
//! line back to whoever infected it and on up its ancestry (warm colour, fading with each
//! generation), and lines out to every boid it infected (cool colour) — and, when toggled in
//! the panel, every transmission of the last few seconds as a line from infector to infectee
//! where it happened, fading with age. Lines take the short way across the torus seam. Runs in
//! `ViewSystems::Draw`.

use bevy::prelude::*;

use crate::sim::agent::{AgentId, Boid, Position};
use crate::sim::clock::SimClock;
use crate::sim::config::SimConfig;
use crate::sim::neighbours::Snapshot;
use crate::sim::schedule::ViewSystems;
use crate::sim::space::Space;
use crate::sim::transmission::TransmissionLog;
use crate::view::select::Selected;

/// Colour of the lines towards infectors.
pub const INFECTOR_COLOUR: Color = Color::srgb(1.0, 0.55, 0.1);
/// Colour of the lines towards infectees.
pub const INFECTEE_COLOUR: Color = Color::srgb(0.35, 0.85, 1.0);
/// Colour of the recent-transmission lines (alpha fades with age).
pub const RECENT_COLOUR: Color = Color::srgb(1.0, 0.95, 0.35);
/// Ancestors drawn above the selected boid.
const MAX_ANCESTORS: usize = 64;

/// The "recent transmissions" overlay.
#[derive(Resource, Debug, Clone, Copy)]
pub struct TransmissionLines {
    /// Draw the recent transmissions.
    pub recent: bool,
    /// How far back, simulated seconds.
    pub seconds: f32,
}

impl Default for TransmissionLines {
    fn default() -> Self {
        Self {
            recent: false,
            seconds: 10.0,
        }
    }
}

pub(super) fn plugin(app: &mut App) {
    app.add_systems(Update, (draw_chain, draw_recent).in_set(ViewSystems::Draw));
}

/// The entity of boid `id` if it is alive (as of the last step's snapshot).
pub fn entity_of(snapshot: &Snapshot, id: u64) -> Option<Entity> {
    snapshot.slot_of_id(id).map(|s| snapshot.entity[s])
}

/// A line from `a` towards `b` the short way round.
fn line(gizmos: &mut Gizmos, space: &Space, a: Vec2, b: Vec2, color: Color) {
    gizmos.line_2d(a, a + space.displacement(a, b), color);
}

fn draw_chain(
    selected: Res<Selected>,
    config: Res<SimConfig>,
    log: Res<TransmissionLog>,
    snapshot: Res<Snapshot>,
    boids: Query<(&AgentId, &Position), With<Boid>>,
    mut gizmos: Gizmos,
) {
    let Some(Ok((id, pos))) = selected.0.map(|e| boids.get(e)) else {
        return;
    };
    let Some(mut r) = log.latest_of(id.0) else {
        return;
    };
    let space = config.space();
    // Where boid `id` is now, or `fallback` if it is gone.
    let now = |id: u64, fallback: Vec2| {
        entity_of(&snapshot, id)
            .and_then(|e| boids.get(e).ok())
            .map_or(fallback, |(_, p)| p.0)
    };
    for child in log.infected_by(r) {
        let t = &log.records[child];
        line(
            &mut gizmos,
            &space,
            pos.0,
            now(t.infectee, t.pos),
            INFECTEE_COLOUR,
        );
    }
    let mut at = pos.0;
    for depth in 0..MAX_ANCESTORS {
        let Some(f) = log.records[r].infector else {
            break;
        };
        let parent = now(f.id(&log.records), f.pos);
        let fade = 1.0 / (1.0 + depth as f32 * 0.35);
        line(
            &mut gizmos,
            &space,
            at,
            parent,
            INFECTOR_COLOUR.with_alpha(fade),
        );
        gizmos.circle_2d(
            Isometry2d::from_translation(parent),
            6.0,
            INFECTOR_COLOUR.with_alpha(fade),
        );
        at = parent;
        r = f.infection as usize;
    }
}

fn draw_recent(
    lines: Res<TransmissionLines>,
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    log: Res<TransmissionLog>,
    mut gizmos: Gizmos,
) {
    if !lines.recent || lines.seconds <= 0.0 {
        return;
    }
    let space = config.space();
    let span = lines.seconds as f64;
    for (from, to, age) in log.recent(clock.time, span) {
        let alpha = (1.0 - age / span).clamp(0.05, 1.0) as f32;
        line(
            &mut gizmos,
            &space,
            from,
            to,
            RECENT_COLOUR.with_alpha(alpha),
        );
    }
}
