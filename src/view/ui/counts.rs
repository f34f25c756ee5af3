//! Panel section: live counts per swarm — alive, S, I, R from the step's snapshot (the metrics
//! module's counting) and the run's dead, born and caught.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_egui::egui;

use super::color32;
use crate::sim::metrics::{Tally, count_by_swarm};
use crate::sim::neighbours::Snapshot;
use crate::sim::swarm::Swarm;
use crate::view::render::{Tint, boid_colour};

/// What the counts table reads.
#[derive(SystemParam)]
pub(super) struct Counts<'w> {
    snapshot: Res<'w, Snapshot>,
    tally: Res<'w, Tally>,
}

/// Draws the counts table: one row per swarm and a total.
pub(super) fn show(ui: &mut egui::Ui, c: &Counts) {
    let live = count_by_swarm(&c.snapshot);
    egui::Grid::new("counts")
        .striped(true)
        .num_columns(8)
        .show(ui, |ui| {
            for h in ["", "alive", "S", "I", "R", "dead", "born", "caught"] {
                ui.strong(h);
            }
            ui.end_row();
            let mut total = [0u64; 7];
            for swarm in Swarm::ALL {
                let k = swarm.index();
                let n = live[k];
                let row = [
                    n.alive,
                    n.susceptible,
                    n.infected,
                    n.recovered,
                    c.tally.dead[k],
                    c.tally.born[k],
                    c.tally.caught[k],
                ];
                ui.colored_label(color32(boid_colour(swarm, Tint::Healthy)), swarm.label());
                for (t, v) in total.iter_mut().zip(row) {
                    ui.label(v.to_string());
                    *t += v;
                }
                ui.end_row();
            }
            ui.strong("all");
            for v in total {
                ui.strong(v.to_string());
            }
            ui.end_row();
        });
}
