//! Selecting a boid: a click (a press and release without dragging) picks the nearest boid
//! within a few screen pixels of the cursor, torus-aware; a click on empty space clears the
//! selection (so does Escape, through `Action::ClearSelection`). The selected entity lives in
//! [`Selected`]. Runs in `ViewSystems::Select`.

use bevy::prelude::*;
use bevy_egui::input::EguiWantsInput;

use crate::sim::agent::{Boid, Position};
use crate::sim::config::SimConfig;
use crate::sim::schedule::ViewSystems;
use crate::sim::space::Space;
use crate::view::input::{CursorWorld, DragState};

/// How far from the cursor a click still selects a boid, in screen pixels.
pub const PICK_RADIUS_PX: f32 = 8.0;

/// The selected boid, if any.
#[derive(Resource, Default, Debug, Clone, Copy, PartialEq)]
pub struct Selected(pub Option<Entity>);

/// The candidate nearest to `cursor` (minimum-image distance) if it is within `radius`; ties go
/// to the first candidate.
pub fn pick_nearest(
    candidates: impl IntoIterator<Item = (Entity, Vec2)>,
    cursor: Vec2,
    radius: f32,
    space: &Space,
) -> Option<Entity> {
    let mut best: Option<(f32, Entity)> = None;
    for (entity, p) in candidates {
        let d2 = space.displacement(cursor, p).length_squared();
        if d2 <= radius * radius && best.is_none_or(|(b, _)| d2 < b) {
            best = Some((d2, entity));
        }
    }
    best.map(|(_, e)| e)
}

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Selected>().add_systems(
        Update,
        (click_to_select, forget_despawned).in_set(ViewSystems::Select),
    );
}

fn click_to_select(
    buttons: Res<ButtonInput<MouseButton>>,
    wants: Option<Res<EguiWantsInput>>,
    cursor: Res<CursorWorld>,
    drag: Res<DragState>,
    config: Res<SimConfig>,
    boids: Query<(Entity, &Position), With<Boid>>,
    mut selected: ResMut<Selected>,
) {
    if !buttons.just_released(MouseButton::Left) || drag.dragged {
        return;
    }
    if wants.is_some_and(|w| w.wants_pointer_input()) {
        return;
    }
    // `None` when the cursor is over a panel.
    let Some((at, world_per_px)) = cursor.0 else {
        return;
    };
    let space = config.space();
    // The cursor may be off the world when zoomed out; wrap it in before measuring.
    let at = space.confine(at, Vec2::ZERO).0;
    selected.0 = pick_nearest(
        boids.iter().map(|(e, p)| (e, p.0)),
        at,
        PICK_RADIUS_PX * world_per_px,
        &space,
    );
}

fn forget_despawned(mut selected: ResMut<Selected>, boids: Query<(), With<Boid>>) {
    if let Some(e) = selected.0
        && boids.get(e).is_err()
    {
        selected.0 = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_nearest_within_the_radius_across_the_seam() {
        let space = Space::torus(1000.0, 500.0);
        let (a, b, c) = (
            Entity::from_raw(1),
            Entity::from_raw(2),
            Entity::from_raw(3),
        );
        let boids = [
            (a, Vec2::new(995.0, 250.0)),
            (b, Vec2::new(12.0, 250.0)),
            (c, Vec2::new(500.0, 250.0)),
        ];
        // Cursor at x = 2: a is 7 px away across the seam, b 10 px away.
        assert_eq!(
            pick_nearest(boids, Vec2::new(2.0, 250.0), 8.0, &space),
            Some(a)
        );
        assert_eq!(
            pick_nearest(boids, Vec2::new(2.0, 250.0), 6.0, &space),
            None
        );
        assert_eq!(
            pick_nearest(boids, Vec2::new(11.0, 251.0), 8.0, &space),
            Some(b)
        );
        assert_eq!(
            pick_nearest(boids, Vec2::new(500.0, 250.0), 8.0, &space),
            Some(c)
        );
        assert_eq!(pick_nearest([], Vec2::ZERO, 8.0, &space), None);
    }
}
