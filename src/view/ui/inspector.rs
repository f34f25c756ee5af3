//! The right panel: the inspector of the selected boid (bevy-inspector-egui, editable through
//! `Reflect`; an edit takes effect on the next step) with its neighbour counts and its place in the
//! transmission record (who infected it and whom it infected, as links that select those boids; its
//! generation; how the infection ended), and a browser of every entity and resource. Needs `&mut
//! World`, so it is an exclusive system. Boids get their names (swarm and id) here, in the
//! window only.

use bevy::ecs::component::Mutable;
use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use bevy_egui::{EguiContext, PrimaryEguiContext, egui};
use bevy_inspector_egui::{bevy_inspector, reflect_inspector};

use super::RIGHT_WIDTH;
use crate::sim::agent::{AgentId, Boid, Breeding, Health, Position, Velocity};
use crate::sim::config::SimConfig;
use crate::sim::epidemic::Cause;
use crate::sim::neighbours::{NeighbourIndex, Snapshot, world_index};
use crate::sim::steering::Steering;
use crate::sim::swarm::Swarm;
use crate::sim::transmission::{Outcome, TransmissionLog};
use crate::view::camera::CameraView;
use crate::view::control::RunControl;
use crate::view::select::Selected;
use crate::view::transmissions::entity_of;

/// Names each boid after its swarm and id ("Normal #12") for the inspector's heading and the
/// entity browser, when it appears or changes swarm. Only the window names boids: a headless run
/// keeps no string per boid (a city has 1.4 million).
pub(super) fn name_boids(
    mut commands: Commands,
    boids: Query<(Entity, &Swarm, &AgentId), (With<Boid>, Changed<Swarm>)>,
) {
    for (entity, swarm, id) in &boids {
        commands
            .entity(entity)
            .insert(Name::new(format!("{} #{}", swarm.label(), id.0)));
    }
}

/// The right panel: inspector of the selected boid and the world browser (needs `&mut World`).
pub(super) fn inspector_panel(world: &mut World) {
    let Ok(ctx) = world
        .query_filtered::<&mut EguiContext, With<PrimaryEguiContext>>()
        .single_mut(world)
        .map(|mut c| c.get_mut().clone())
    else {
        return;
    };
    if !world.resource::<RunControl>().panels {
        return;
    }
    let selected = world
        .resource::<Selected>()
        .0
        .filter(|e| world.get::<Boid>(*e).is_some());
    let mut pick = None;
    egui::SidePanel::right("inspector")
        .resizable(true)
        .default_width(RIGHT_WIDTH)
        .show(&ctx, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                ui.heading("Inspector");
                match selected {
                    Some(entity) => {
                        let name = world
                            .get::<Name>(entity)
                            .map(|n| n.as_str().to_string())
                            .unwrap_or_default();
                        ui.strong(name);
                        if let Some(text) = neighbour_summary(world, entity) {
                            ui.label(text);
                        }
                        pick = transmission_ui(world, entity, ui);
                        let mut view = *world.resource::<CameraView>();
                        if ui.checkbox(&mut view.follow, "follow (F)").changed() {
                            *world.resource_mut::<CameraView>() = view;
                        }
                        let registry = world.resource::<AppTypeRegistry>().0.clone();
                        let registry = registry.read();
                        component_ui::<AgentId>(world, entity, ui, &registry, "AgentId");
                        component_ui::<Swarm>(world, entity, ui, &registry, "Swarm");
                        component_ui::<Position>(world, entity, ui, &registry, "Position (px)");
                        component_ui::<Velocity>(world, entity, ui, &registry, "Velocity (px/s)");
                        component_ui::<Health>(world, entity, ui, &registry, "Health");
                        steering_ui(world, entity, ui);
                        component_ui::<Breeding>(world, entity, ui, &registry, "Breeding");
                        drop(registry);
                        egui::CollapsingHeader::new("All components")
                            .default_open(false)
                            .show(ui, |ui| {
                                bevy_inspector::ui_for_entity(world, entity, ui);
                            });
                    }
                    None => {
                        ui.label("Click a boid to select and inspect it (Esc clears).");
                    }
                }
                ui.separator();
                egui::CollapsingHeader::new("World: entities & resources")
                    .default_open(false)
                    .show(ui, |ui| {
                        bevy_inspector::ui_for_world(world, ui);
                    });
            });
        });
    if let Some(entity) = pick {
        world.resource_mut::<Selected>().0 = Some(entity);
    }
}

/// A boid id as a link that selects it (plain text if it is gone).
fn boid_link(ui: &mut egui::Ui, world: &World, id: u64, pick: &mut Option<Entity>) {
    match entity_of(world.resource::<Snapshot>(), id) {
        Some(e) => {
            if ui.link(format!("#{id}")).on_hover_text("select").clicked() {
                *pick = Some(e);
            }
        }
        None => {
            ui.weak(format!("#{id} (gone)"));
        }
    }
}

/// The selected boid's latest infection in the transmission record; returns the boid whose
/// link was clicked.
fn transmission_ui(world: &World, entity: Entity, ui: &mut egui::Ui) -> Option<Entity> {
    let id = world.get::<AgentId>(entity)?.0;
    let log = world.resource::<TransmissionLog>();
    let mut pick = None;
    egui::CollapsingHeader::new("Transmission")
        .default_open(true)
        .show(ui, |ui| {
            let Some(r) = log.latest_of(id) else {
                ui.label("never infected");
                return;
            };
            let t = &log.records[r];
            ui.label(format!(
                "infection #{r} at {:.2} s · generation {}",
                t.time_s, t.generation
            ));
            ui.horizontal_wrapped(|ui| {
                ui.label("infected by:");
                let none = match (log.infector_id(t), t.cause) {
                    (Some(id), _) => {
                        boid_link(ui, world, id, &mut pick);
                        return;
                    }
                    (None, Cause::Initial) => "nobody (infected at the start)",
                    (None, Cause::Born) => "nobody (born infected)",
                    (None, Cause::Imported) => "nobody (imported by an intervention)",
                    (None, _) => "nobody (spontaneous)",
                };
                ui.label(none);
            });
            let children: Vec<u64> = log
                .infected_by(r)
                .map(|c| log.records[c].infectee)
                .collect();
            ui.horizontal_wrapped(|ui| {
                ui.label(format!("infected {}:", children.len()));
                for child in children {
                    boid_link(ui, world, child, &mut pick);
                }
            });
            let Some((time, outcome)) = t.end else {
                ui.label("still infected");
                return;
            };
            ui.horizontal_wrapped(|ui| {
                ui.label(format!("{} at {time:.2} s", outcome.key()));
                match outcome {
                    Outcome::Cured(doctor) => {
                        ui.label("by doctor");
                        boid_link(ui, world, doctor, &mut pick);
                    }
                    Outcome::Caught(predator) => {
                        ui.label(format!("by predator #{predator}"));
                    }
                    Outcome::Recovered | Outcome::Died => {}
                }
            });
        });
    pick
}

/// An editable view of one of the entity's components (through `Reflect`).
fn component_ui<T: Component<Mutability = Mutable> + Reflect>(
    world: &mut World,
    entity: Entity,
    ui: &mut egui::Ui,
    registry: &TypeRegistry,
    title: &str,
) {
    let Some(mut component) = world.get_mut::<T>(entity) else {
        return;
    };
    egui::CollapsingHeader::new(title)
        .default_open(true)
        .show(ui, |ui| {
            // Only an actual edit marks the component changed.
            if reflect_inspector::ui_for_value(component.bypass_change_detection(), ui, registry) {
                component.set_changed();
            }
        });
}

/// The boid's steering in the last step, part by part, and the total it moved by (read only:
/// each step works it out anew).
fn steering_ui(world: &World, entity: Entity, ui: &mut egui::Ui) {
    let steering = world.resource::<Steering>();
    let slot = world.resource::<Snapshot>().slot_of(entity);
    let parts = slot.and_then(|i| Some((*steering.parts(i)?, steering.total(i))));
    egui::CollapsingHeader::new("Steering (px/s²)")
        .default_open(true)
        .show(ui, |ui| {
            let Some((p, total)) = parts else {
                ui.weak("none yet: worked out at the next step");
                return;
            };
            egui::Grid::new("steering").show(ui, |ui| {
                for (name, v) in [
                    ("flocking", p.flocking),
                    ("noise", p.noise),
                    ("seek", p.seek),
                    ("repulsion", p.repulsion),
                    ("flee", p.flee),
                    ("other", p.other),
                    ("total", total),
                ] {
                    ui.label(name);
                    ui.monospace(format!("{:>9.1} {:>9.1}", v.x, v.y));
                    ui.end_row();
                }
            });
        });
}

/// "n within r_sep (any swarm), n within r_ali (own swarm)" from the last step's index.
fn neighbour_summary(world: &World, entity: Entity) -> Option<String> {
    let snapshot = world.resource::<Snapshot>();
    let i = snapshot.slot_of(entity)?;
    let config = world.resource::<SimConfig>();
    let index = world_index(world);
    let p = config.swarms.get(snapshot.swarm[i]);
    let (mut sep, mut ali, mut coh) = (0, 0, 0);
    index.for_each_within(snapshot.pos[i], p.query_radius(), |j, off| {
        if j == i {
            return;
        }
        let d = off.length();
        let same = snapshot.swarm[j] == snapshot.swarm[i];
        sep += (d < p.separation_radius) as u32;
        ali += (same && d < p.alignment_radius) as u32;
        coh += (same && d < p.cohesion_radius) as u32;
    });
    Some(format!(
        "neighbours: {sep} within r_sep (any swarm), {ali} within r_ali, {coh} within r_coh (own swarm)"
    ))
}
