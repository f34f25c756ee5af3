//! Drawing the boids: every boid is a small triangle pointing along its velocity, coloured by
//! swarm (Normal green, Doctor blue, Antivax orange) and tinted by health (infected red,
//! recovered grey). Visuals are attached by an observer when a boid appears, so spawning never
//! knows about rendering. Runs in `Update`.

use bevy::prelude::*;

use crate::sim::schedule::ViewSystems;

use crate::sim::agent::{Boid, Disease, Health, Position, Velocity};
use crate::sim::predators::Predator;
use crate::sim::swarm::Swarm;

/// Boid triangle length, px (world units).
pub const BOID_LENGTH: f32 = 14.0;
/// Boid triangle width, px.
pub const BOID_WIDTH: f32 = 8.0;
/// Predator triangle length, px.
pub const PREDATOR_LENGTH: f32 = 22.0;
/// Predator colour (magenta, unlike any swarm or tint).
pub const PREDATOR_COLOUR: Color = Color::srgb(0.95, 0.25, 0.95);
/// Background colour of the world.
pub const BACKGROUND: Color = Color::srgb(0.07, 0.08, 0.10);

/// Colour of a healthy boid of each swarm (Normal green, Doctor blue, Antivax orange).
pub fn swarm_colour(swarm: Swarm) -> Color {
    match swarm {
        Swarm::Normal => Color::srgb(0.30, 0.80, 0.35),
        Swarm::Doctor => Color::srgb(0.30, 0.55, 1.00),
        Swarm::Antivax => Color::srgb(1.00, 0.60, 0.15),
    }
}

/// Display state of a boid's health: healthy, infected (red), recovered (grey).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tint {
    /// Susceptible: the swarm colour.
    Healthy,
    /// Infected: red, with a hint of the swarm colour.
    Infected,
    /// Recovered: grey, with a hint of the swarm colour.
    Recovered,
}

impl Tint {
    /// The tint of a health state.
    pub fn of(health: &Health) -> Self {
        Self::of_disease(health.disease)
    }

    /// The tint of a disease state.
    pub fn of_disease(disease: Disease) -> Self {
        if disease.is_infected() {
            Tint::Infected
        } else if disease.is_recovered() {
            Tint::Recovered
        } else {
            Tint::Healthy
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The colour a boid is drawn in.
pub fn boid_colour(swarm: Swarm, tint: Tint) -> Color {
    let base = swarm_colour(swarm).to_srgba();
    let mix = |target: Srgba, keep: f32| {
        Color::srgb(
            target.red * (1.0 - keep) + base.red * keep,
            target.green * (1.0 - keep) + base.green * keep,
            target.blue * (1.0 - keep) + base.blue * keep,
        )
    };
    match tint {
        Tint::Healthy => base.into(),
        Tint::Infected => mix(Srgba::rgb(1.0, 0.12, 0.12), 0.15),
        Tint::Recovered => mix(Srgba::rgb(0.62, 0.62, 0.62), 0.25),
    }
}

/// The shared meshes and one material per (swarm, tint), plus the predators'.
#[derive(Resource)]
pub struct BoidVisuals {
    mesh: Handle<Mesh>,
    materials: [[Handle<ColorMaterial>; 3]; 3],
    predator_mesh: Handle<Mesh>,
    predator_material: Handle<ColorMaterial>,
}

impl BoidVisuals {
    /// The material for a swarm and tint.
    pub fn material(&self, swarm: Swarm, tint: Tint) -> Handle<ColorMaterial> {
        self.materials[swarm.index()][tint.index()].clone()
    }
}

pub(super) fn plugin(app: &mut App) {
    app.insert_resource(ClearColor(BACKGROUND))
        .add_systems(Startup, create_visuals)
        .add_observer(attach_visuals)
        .add_observer(attach_predator_visuals)
        .add_systems(
            Update,
            (sync_boids, sync_predators).in_set(ViewSystems::Draw),
        );
}

fn create_visuals(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    let mesh = meshes.add(Triangle2d::new(
        Vec2::new(BOID_LENGTH * 0.6, 0.0),
        Vec2::new(-BOID_LENGTH * 0.4, BOID_WIDTH * 0.5),
        Vec2::new(-BOID_LENGTH * 0.4, -BOID_WIDTH * 0.5),
    ));
    let predator_mesh = meshes.add(Triangle2d::new(
        Vec2::new(PREDATOR_LENGTH * 0.6, 0.0),
        Vec2::new(-PREDATOR_LENGTH * 0.4, PREDATOR_LENGTH * 0.35),
        Vec2::new(-PREDATOR_LENGTH * 0.4, -PREDATOR_LENGTH * 0.35),
    ));
    let predator_material = materials.add(ColorMaterial::from(PREDATOR_COLOUR));
    let tints = [Tint::Healthy, Tint::Infected, Tint::Recovered];
    let materials =
        Swarm::ALL.map(|s| tints.map(|t| materials.add(ColorMaterial::from(boid_colour(s, t)))));
    commands.insert_resource(BoidVisuals {
        mesh,
        materials,
        predator_mesh,
        predator_material,
    });
}

fn attach_predator_visuals(
    trigger: Trigger<OnAdd, Predator>,
    visuals: Option<Res<BoidVisuals>>,
    positions: Query<&Position>,
    mut commands: Commands,
) {
    let Some(visuals) = visuals else { return };
    let entity = trigger.target();
    let at = positions.get(entity).map_or(Vec2::ZERO, |p| p.0);
    commands.entity(entity).insert((
        Mesh2d(visuals.predator_mesh.clone()),
        MeshMaterial2d(visuals.predator_material.clone()),
        Transform::from_translation(at.extend(2.0)),
    ));
}

fn sync_predators(mut predators: Query<(&Position, &Velocity, &mut Transform), With<Predator>>) {
    for (pos, vel, mut transform) in &mut predators {
        transform.translation = pos.0.extend(2.0);
        if vel.0.length_squared() > 0.0 {
            transform.rotation = Quat::from_rotation_z(vel.0.to_angle());
        }
    }
}

fn attach_visuals(
    trigger: Trigger<OnAdd, Boid>,
    visuals: Option<Res<BoidVisuals>>,
    boids: Query<(&Swarm, &Health, &Position)>,
    mut commands: Commands,
) {
    let Some(visuals) = visuals else { return };
    let entity = trigger.target();
    let Ok((swarm, health, pos)) = boids.get(entity) else {
        return;
    };
    commands.entity(entity).insert((
        Mesh2d(visuals.mesh.clone()),
        MeshMaterial2d(visuals.material(*swarm, Tint::of(health))),
        Transform::from_translation(pos.0.extend(1.0)),
    ));
}

/// Moves each triangle to its boid and turns it along the velocity; swaps the material when the
/// swarm or health changes.
fn sync_boids(
    visuals: Res<BoidVisuals>,
    mut boids: Query<
        (
            &Position,
            &Velocity,
            &Swarm,
            &Health,
            &mut Transform,
            &mut MeshMaterial2d<ColorMaterial>,
        ),
        With<Boid>,
    >,
) {
    for (pos, vel, swarm, health, mut transform, mut material) in &mut boids {
        transform.translation = pos.0.extend(1.0);
        if vel.0.length_squared() > 0.0 {
            transform.rotation = Quat::from_rotation_z(vel.0.to_angle());
        }
        let wanted = visuals.material(*swarm, Tint::of(health));
        if material.0 != wanted {
            material.0 = wanted;
        }
    }
}
