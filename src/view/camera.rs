//! The world camera: fits the world into the area the panels leave free (and keeps fitting it
//! when the window is resized), pans with a mouse drag (left, middle or right button), zooms
//! around the cursor with the wheel, follows the selected boid on request, and re-fits when
//! asked. Also works out where the cursor is in world space (`ViewSystems::Pointer`); the rest
//! runs in `ViewSystems::Camera`.

use bevy::input::mouse::{MouseScrollUnit, MouseWheel};
use bevy::prelude::*;
use bevy::render::camera::{ScalingMode, Viewport};
use bevy::render::view::RenderLayers;
use bevy::window::PrimaryWindow;
use bevy_egui::input::EguiWantsInput;
use bevy_egui::{EguiGlobalSettings, PrimaryEguiContext};

use crate::sim::agent::Position;
use crate::sim::config::SimConfig;
use crate::sim::schedule::ViewSystems;
use crate::view::input::{CursorWorld, DragState};
use crate::view::select::Selected;

/// Zoom limits (projection scale; 1 = whole world fits).
pub const ZOOM_RANGE: (f32, f32) = (0.02, 5.0);
/// Render layer of the UI camera; nothing in the world is on it.
const UI_LAYER: usize = 1;

/// Marks the main world camera.
#[derive(Component)]
pub struct WorldCamera;

/// Camera options set from the panel.
#[derive(Resource, Debug, Clone, Copy, Default)]
pub struct CameraView {
    /// Keep the selected boid centred.
    pub follow: bool,
    /// The window area not covered by panels, logical px (set by the UI each frame).
    pub free_rect: Option<Rect>,
    /// Re-fit the whole world on the next frame.
    pub refit: bool,
}

/// An orthographic projection that shows the whole world in the camera's viewport.
pub fn fit_projection(world: Vec2) -> Projection {
    Projection::Orthographic(OrthographicProjection {
        scaling_mode: ScalingMode::AutoMin {
            min_width: world.x,
            min_height: world.y,
        },
        ..OrthographicProjection::default_2d()
    })
}

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<CameraView>()
        .add_systems(Startup, spawn_camera)
        .add_systems(Update, track_cursor.in_set(ViewSystems::Pointer))
        .add_systems(
            Update,
            (pan_by_drag, wheel_to_zoom, fit_or_follow, apply_viewport)
                .chain()
                .in_set(ViewSystems::Camera),
        );
}

fn spawn_camera(
    mut commands: Commands,
    config: Res<SimConfig>,
    mut egui: ResMut<EguiGlobalSettings>,
) {
    let size = config.space().size();
    commands.spawn((
        Name::new("World camera"),
        WorldCamera,
        Camera2d,
        fit_projection(size),
        Transform::from_translation((size * 0.5).extend(0.0)),
    ));
    // The panels get a camera of their own that covers the whole window and sees no world
    // entities (render layer 1), so the world camera's viewport can shrink to the free area.
    egui.auto_create_primary_context = false;
    commands.spawn((
        Name::new("UI camera"),
        Camera2d,
        Camera {
            order: 1,
            clear_color: ClearColorConfig::None,
            ..default()
        },
        RenderLayers::layer(UI_LAYER),
        PrimaryEguiContext,
    ));
}

fn track_cursor(
    windows: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Camera, &GlobalTransform), With<WorldCamera>>,
    view: Res<CameraView>,
    mut cursor: ResMut<CursorWorld>,
) {
    cursor.0 = None;
    let (Ok(window), Ok((camera, transform))) = (windows.single(), cameras.single()) else {
        return;
    };
    let Some(screen) = window.cursor_position() else {
        return;
    };
    if view.free_rect.is_some_and(|r| !r.contains(screen)) {
        return;
    }
    let (Ok(a), Ok(b)) = (
        camera.viewport_to_world_2d(transform, screen),
        camera.viewport_to_world_2d(transform, screen + Vec2::X),
    ) else {
        return;
    };
    cursor.0 = Some((a, a.distance(b)));
}

/// Moves the camera with the cursor while the mouse is dragged over the world.
fn pan_by_drag(
    drag: Res<DragState>,
    mut cameras: Query<(&Camera, &GlobalTransform, &mut Transform), With<WorldCamera>>,
    mut view: ResMut<CameraView>,
) {
    let Some((from, to)) = drag.moved else {
        return;
    };
    let Ok((camera, global, mut transform)) = cameras.single_mut() else {
        return;
    };
    if let (Ok(a), Ok(b)) = (
        camera.viewport_to_world_2d(global, from),
        camera.viewport_to_world_2d(global, to),
    ) {
        transform.translation += (a - b).extend(0.0);
        view.follow = false;
    }
}

fn wheel_to_zoom(
    mut wheel: EventReader<MouseWheel>,
    wants: Option<Res<EguiWantsInput>>,
    cursor: Res<CursorWorld>,
    mut cameras: Query<(&mut Projection, &mut Transform), With<WorldCamera>>,
) {
    let over_ui = cursor.0.is_none() || wants.is_some_and(|w| w.wants_pointer_input());
    let lines: f32 = wheel
        .read()
        .map(|e| match e.unit {
            MouseScrollUnit::Line => e.y,
            MouseScrollUnit::Pixel => e.y / 40.0,
        })
        .sum();
    if lines == 0.0 || over_ui {
        return;
    }
    let Ok((mut projection, mut transform)) = cameras.single_mut() else {
        return;
    };
    let Projection::Orthographic(ortho) = &mut *projection else {
        return;
    };
    let old = ortho.scale;
    let new = (old * 0.85f32.powf(lines)).clamp(ZOOM_RANGE.0, ZOOM_RANGE.1);
    ortho.scale = new;
    // Keep the world point under the cursor where it is.
    if let Some((at, _)) = cursor.0 {
        let cam = transform.translation.truncate();
        transform.translation = (at + (cam - at) * (new / old)).extend(transform.translation.z);
    }
}

fn fit_or_follow(
    config: Res<SimConfig>,
    selected: Res<Selected>,
    boids: Query<&Position>,
    mut view: ResMut<CameraView>,
    mut cameras: Query<(&mut Projection, &mut Transform), With<WorldCamera>>,
) {
    let Ok((mut projection, mut transform)) = cameras.single_mut() else {
        return;
    };
    let size = config.space().size();
    if let Projection::Orthographic(ortho) = &mut *projection {
        if config.is_changed() {
            ortho.scaling_mode = ScalingMode::AutoMin {
                min_width: size.x,
                min_height: size.y,
            };
        }
        if view.refit {
            ortho.scale = 1.0;
        }
    }
    if view.refit {
        view.refit = false;
        view.follow = false;
        transform.translation = (size * 0.5).extend(transform.translation.z);
    }
    if view.follow
        && let Some(p) = selected.0.and_then(|e| boids.get(e).ok())
    {
        transform.translation = p.0.extend(transform.translation.z);
    }
}

/// Restricts the camera to the area the panels leave free, so "fit" means fit in view.
fn apply_viewport(
    view: Res<CameraView>,
    windows: Query<&Window, With<PrimaryWindow>>,
    mut cameras: Query<&mut Camera, With<WorldCamera>>,
) {
    let (Ok(window), Ok(mut camera)) = (windows.single(), cameras.single_mut()) else {
        return;
    };
    let scale = window.scale_factor();
    let full = UVec2::new(window.physical_width(), window.physical_height());
    let viewport = view.free_rect.and_then(|r| {
        let min = (r.min * scale).max(Vec2::ZERO).as_uvec2().min(full);
        let max = (r.max * scale).as_uvec2().min(full);
        let size = max.saturating_sub(min);
        (size.x >= 16 && size.y >= 16).then_some(Viewport {
            physical_position: min,
            physical_size: size,
            ..default()
        })
    });
    let key = |v: &Option<Viewport>| v.as_ref().map(|v| (v.physical_position, v.physical_size));
    if key(&camera.viewport) != key(&viewport) {
        camera.viewport = viewport;
    }
}
