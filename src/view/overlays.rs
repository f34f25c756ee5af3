//! Gizmo overlays: the world border, the selected boid (highlight, separation and alignment
//! radii, field-of-view cone, lines to its current neighbours), and, when toggled in the panel,
//! every boid's contact radius, FOV cone and velocity vector, and the spatial index (KD-tree
//! splits or grid cells). Runs in `Update`.

use std::f32::consts::FRAC_PI_2;

use bevy::prelude::*;

use crate::sim::schedule::ViewSystems;

use crate::sim::agent::{AgentId, Boid, Health, Position, Velocity};
use crate::sim::config::{IndexKind, SimConfig};
use crate::sim::flocking::FULL_FOV;
use crate::sim::neighbours::{NeighbourIndex, Neighbours, kd_splits};
use crate::sim::predators::Predator;
use crate::sim::swarm::Swarm;
use crate::view::render::PREDATOR_COLOUR;
use crate::view::select::Selected;

/// Seconds of motion a velocity vector shows.
const VELOCITY_SECONDS: f32 = 0.25;
/// KD-tree levels drawn (deeper levels are too dense to read).
const KD_DEPTH: usize = 9;

/// Which overlays are on.
#[derive(Resource, Debug, Clone, Copy, Default)]
pub struct Overlays {
    /// Every boid's contact radius (debuffed when infected).
    pub radii: bool,
    /// Every boid's field-of-view cone (when the FOV is not all round).
    pub fov: bool,
    /// Every boid's velocity vector.
    pub velocity: bool,
    /// The neighbour index: KD-tree splits or grid cells.
    pub index: bool,
}

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Overlays>().add_systems(
        Update,
        (
            draw_border,
            draw_selection,
            draw_toggled,
            draw_index,
            draw_hunts,
        )
            .in_set(ViewSystems::Draw),
    );
}

fn draw_border(config: Res<SimConfig>, mut gizmos: Gizmos) {
    let size = config.space().size();
    gizmos.rect_2d(
        Isometry2d::from_translation(size * 0.5),
        size,
        Color::srgba(1.0, 1.0, 1.0, 0.25),
    );
}

/// A cone of half-angle `fov` around `heading`, `radius` long.
fn cone(gizmos: &mut Gizmos, at: Vec2, heading: Vec2, fov: f32, radius: f32, color: Color) {
    if fov >= FULL_FOV || heading.length_squared() == 0.0 {
        return;
    }
    let angle = heading.to_angle();
    for side in [-fov, fov] {
        gizmos.line_2d(at, at + Vec2::from_angle(angle + side) * radius, color);
    }
    // Bevy arcs start at the rotated +Y axis and run counter-clockwise.
    gizmos.arc_2d(
        Isometry2d::new(at, Rot2::radians(angle - fov - FRAC_PI_2)),
        2.0 * fov,
        radius,
        color,
    );
}

fn draw_selection(
    selected: Res<Selected>,
    config: Res<SimConfig>,
    neighbours: Neighbours,
    boids: Query<(&Position, &Velocity, &Swarm), With<Boid>>,
    mut gizmos: Gizmos,
) {
    let Some(entity) = selected.0 else { return };
    let Ok((pos, vel, swarm)) = boids.get(entity) else {
        return;
    };
    let p = config.swarms.get(*swarm);
    let at = pos.0;
    gizmos.circle_2d(Isometry2d::from_translation(at), 9.0, Color::WHITE);
    gizmos.circle_2d(
        Isometry2d::from_translation(at),
        p.separation_radius,
        Color::srgba(1.0, 0.85, 0.2, 0.45),
    );
    // Light, so the flock inside stays visible at the default zoom.
    gizmos.circle_2d(
        Isometry2d::from_translation(at),
        p.alignment_radius,
        Color::srgba(0.3, 0.9, 1.0, 0.4),
    );
    if (p.cohesion_radius - p.alignment_radius).abs() > 0.5 {
        gizmos.circle_2d(
            Isometry2d::from_translation(at),
            p.cohesion_radius,
            Color::srgba(0.8, 0.5, 1.0, 0.4),
        );
    }
    cone(
        &mut gizmos,
        at,
        vel.0,
        p.fov,
        p.alignment_radius * 1.2,
        Color::srgba(0.9, 0.9, 0.9, 0.35),
    );
    gizmos.line_2d(at, at + vel.0 * VELOCITY_SECONDS, Color::WHITE);
    // Neighbours as the last step saw them; lines drawn to where they are now.
    let snapshot = &*neighbours.snapshot;
    let Some(i) = snapshot.slot_of(entity) else {
        return;
    };
    let space = config.space();
    neighbours
        .index()
        .for_each_within(snapshot.pos[i], p.query_radius(), |j, _| {
            if j == i {
                return;
            }
            let Ok((other, _, _)) = boids.get(snapshot.entity[j]) else {
                return;
            };
            let same = snapshot.swarm[j] == *swarm;
            let color = if same {
                Color::srgba(0.3, 0.9, 1.0, 0.45)
            } else {
                Color::srgba(1.0, 0.85, 0.2, 0.45)
            };
            gizmos.line_2d(at, at + space.displacement(at, other.0), color);
        });
}

fn draw_toggled(
    overlays: Res<Overlays>,
    config: Res<SimConfig>,
    boids: Query<(&Position, &Velocity, &Swarm, &Health), With<Boid>>,
    mut gizmos: Gizmos,
) {
    if !(overlays.radii || overlays.fov || overlays.velocity) {
        return;
    }
    for (pos, vel, swarm, health) in &boids {
        let at = pos.0;
        if overlays.radii {
            let infected = health.disease.is_infected();
            let r = config.epidemic.contact_radius(*swarm, infected);
            let color = if infected {
                Color::srgba(1.0, 0.2, 0.2, 0.45)
            } else {
                Color::srgba(0.7, 0.7, 0.7, 0.25)
            };
            gizmos
                .circle_2d(Isometry2d::from_translation(at), r, color)
                .resolution(24);
        }
        if overlays.fov {
            let p = config.swarms.get(*swarm);
            cone(
                &mut gizmos,
                at,
                vel.0,
                p.fov,
                p.alignment_radius,
                Color::srgba(0.9, 0.9, 0.9, 0.3),
            );
        }
        if overlays.velocity {
            gizmos.line_2d(
                at,
                at + vel.0 * VELOCITY_SECONDS,
                Color::srgba(1.0, 1.0, 1.0, 0.6),
            );
        }
    }
}

/// Each predator's line to its target, and its fear radius when radii are shown.
fn draw_hunts(
    overlays: Res<Overlays>,
    config: Res<SimConfig>,
    predators: Query<(&Predator, &Position)>,
    boids: Query<(&AgentId, &Position), With<Boid>>,
    mut gizmos: Gizmos,
) {
    if predators.is_empty() {
        return;
    }
    let space = config.space();
    for (predator, pos) in &predators {
        if overlays.radii {
            gizmos.circle_2d(
                Isometry2d::from_translation(pos.0),
                config.predators.fear_radius,
                PREDATOR_COLOUR.with_alpha(0.35),
            );
        }
        if let Some(target) = predator.target
            && let Some((_, t)) = boids.iter().find(|(id, _)| id.0 == target)
        {
            gizmos.line_2d(
                pos.0,
                pos.0 + space.displacement(pos.0, t.0),
                PREDATOR_COLOUR.with_alpha(0.6),
            );
        }
    }
}

fn draw_index(
    overlays: Res<Overlays>,
    config: Res<SimConfig>,
    neighbours: Neighbours,
    mut gizmos: Gizmos,
) {
    if !overlays.index {
        return;
    }
    let space = config.space();
    let color = Color::srgba(0.5, 0.6, 1.0, 0.35);
    match neighbours.kind() {
        IndexKind::Kdtree => {
            for (a, b) in kd_splits(neighbours.kdtree(), &space, KD_DEPTH) {
                gizmos.line_2d(a, b, color);
            }
        }
        IndexKind::Grid => {
            let (cols, rows) = neighbours.grid().dims();
            let cell = neighbours.grid().cell_size();
            for c in 1..cols {
                let x = c as f32 * cell.x;
                gizmos.line_2d(Vec2::new(x, 0.0), Vec2::new(x, space.height), color);
            }
            for r in 1..rows {
                let y = r as f32 * cell.y;
                gizmos.line_2d(Vec2::new(0.0, y), Vec2::new(space.width, y), color);
            }
        }
        IndexKind::Brute => {}
    }
}
