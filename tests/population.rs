//! Births through the whole app (docs/model.md §6): only the living breed — no parent of a
//! birth died of the disease or was caught by a predator in the step of the birth — and
//! nobody breeds before `t_adult`.
#![allow(clippy::field_reassign_with_default)] // configs are built by changing a few defaults

use std::collections::{HashMap, HashSet};

use bevy::prelude::*;
use pandemic_boids::SimSystems;
use pandemic_boids::run::Simulation;
use pandemic_boids::sim::clock::SimClock;
use pandemic_boids::sim::config::{CatchMode, SimConfig};
use pandemic_boids::sim::epidemic::Died;
use pandemic_boids::sim::population::Born;
use pandemic_boids::sim::predators::Caught;

/// Per step: the births (their parents) and the boids that died or were caught.
#[derive(Resource, Default)]
struct Seen {
    births: Vec<(u64, (u64, u64), f64)>,
    gone: HashMap<u64, HashSet<u64>>,
    /// Catches seen.
    caught: usize,
}

fn watch(
    clock: Res<SimClock>,
    mut seen: ResMut<Seen>,
    mut born: EventReader<Born>,
    mut died: EventReader<Died>,
    mut caught: EventReader<Caught>,
) {
    let step = clock.step;
    for b in born.read() {
        seen.births
            .push((step, (b.parents.0.0, b.parents.1.0), b.time));
    }
    let caught: Vec<u64> = caught.read().map(|c| c.prey).collect();
    seen.caught += caught.len();
    let gone: Vec<u64> = died.read().map(|d| d.id.0).chain(caught).collect();
    seen.gone.entry(step).or_default().extend(gone);
}

/// A crowded world with births, deaths and predators that catch (and respawn their prey).
fn busy(seed: u64) -> SimConfig {
    let mut c = SimConfig::default();
    c.seed = seed;
    c.world.width = 800.0;
    c.world.height = 800.0;
    c.swarms.normal.count = 300;
    c.swarms.doctor.count = 0;
    c.antivax.p_antivax = 0.0;
    c.epidemic.p_initial_infect_normal = 0.3;
    c.epidemic.p_death = 0.8;
    c.epidemic.t_death = 3.0;
    c.population.enabled = true;
    c.population.p_offspring_normal = 0.9;
    c.population.cooldown = 1.0;
    c.population.t_adult = 2.0;
    c.population.max_population = 2000;
    c.predators.count = 8;
    c.predators.max_force = 2000.0;
    c.predators.catch_radius = 20.0;
    c.predators.catch = CatchMode::Respawn;
    c
}

#[test]
fn only_the_living_breed_and_only_adults() {
    let (mut births, mut deaths_and_catches, mut catches) = (0, 0, 0);
    for seed in [1] {
        let mut sim = Simulation::new(busy(seed), None);
        sim.app_mut()
            .init_resource::<Seen>()
            .add_systems(FixedUpdate, watch.in_set(SimSystems::Log));
        sim.run_until(12.0);
        let seen = sim.world().resource::<Seen>();
        births += seen.births.len();
        deaths_and_catches += seen.gone.values().map(|g| g.len()).sum::<usize>();
        catches += seen.caught;
        for &(step, (a, b), time) in &seen.births {
            let gone = seen.gone.get(&step);
            for parent in [a, b] {
                assert!(
                    !gone.is_some_and(|g| g.contains(&parent)),
                    "seed {seed}: boid {parent} bred in the step it died or was caught ({time} s)"
                );
            }
            // The initial population is born at t = 0 and adult at t_adult = 2 s.
            assert!(time >= 2.0 - 1e-9, "seed {seed}: a birth at {time} s");
        }
    }
    assert!(births > 100, "{births} births");
    assert!(
        deaths_and_catches > 100,
        "{deaths_and_catches} deaths and catches"
    );
    // Predators hunt isolated boids, which rarely have a partner: a catch and a birth of the
    // same boid in one step is rare (none in this run); the rule is checked at unit level
    // (`only_the_living_breed_and_only_they_count_against_the_cap`).
    assert!(catches > 10, "{catches} catches");
}
