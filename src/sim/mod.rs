//! Everything that simulates: one module per concern, each with its own plugin. Nothing here
//! uses rendering, windows, assets or egui; the whole simulation runs under `MinimalPlugins`.

pub mod agent;
pub mod antivax;
pub mod checkpoint;
pub mod clock;
pub mod config;
pub mod doctors;
pub mod epidemic;
pub mod extensions;
pub mod flocking;
pub mod interventions;
pub mod lanes;
pub mod math;
pub mod metrics;
pub mod movement;
pub mod names;
pub mod neighbours;
pub mod parallel;
pub mod population;
pub mod predators;
pub mod reproduction;
pub mod rng;
pub mod schedule;
pub mod space;
pub mod stats;
pub mod steering;
pub mod swarm;
pub mod transmission;
pub mod trig;

use bevy::prelude::*;

use crate::sim::config::SimConfig;

/// Everything that simulates. Needs `Time` (e.g. from `MinimalPlugins` or `DefaultPlugins`).
pub struct SimPlugin {
    /// The run's configuration (becomes the `SimConfig` resource).
    pub config: SimConfig,
}

impl Plugin for SimPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(self.config.clone())
            .register_type::<SimConfig>()
            .insert_resource(Time::<Fixed>::from_seconds(self.config.dt));
        schedule::order_simulation(app);
        app.add_plugins(plugin);
        extensions::apply(app);
    }
}

fn plugin(app: &mut App) {
    app.add_plugins((
        agent::plugin,
        clock::plugin,
        neighbours::plugin,
        metrics::plugin,
        flocking::plugin,
        doctors::plugin,
        antivax::plugin,
        steering::plugin,
        movement::plugin,
        epidemic::plugin,
        population::plugin,
        predators::plugin,
        transmission::plugin,
        interventions::plugin,
    ));
}
