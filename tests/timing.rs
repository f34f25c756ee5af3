//! Timed events are exact at any dt (docs/model.md §5.2): an infection, immunity and a breeding
//! cooldown last their configured time to within half a step at dt = 1/30, 1/60, 1/120 s and an odd
//! 0.013 s, through the real fixed-step clock (whose dt is rounded to whole nanoseconds). Also: a
//! boid that dies of the disease cannot be caught by a predator in the same step.
#![allow(clippy::field_reassign_with_default)] // configs are built by changing a few defaults

mod common;

use bevy::prelude::*;
use pandemic_boids::run::Simulation;
use pandemic_boids::sim::agent::{AgentId, Breeding, Disease, Health, Position, Sex};
use pandemic_boids::sim::config::SimConfig;
use pandemic_boids::sim::metrics::Tally;
use pandemic_boids::sim::predators::{Caught, Predator};

const DTS: [f64; 4] = [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0, 0.013];

/// One Normal boid, nothing else: no doctors, no Antivax.
fn alone(dt: f64) -> SimConfig {
    let mut c = SimConfig::default();
    c.dt = dt;
    c.swarms.normal.count = 1;
    c.swarms.doctor.count = 0;
    c.antivax.p_antivax = 0.0;
    c
}

fn disease_of(sim: &mut Simulation, id: u64) -> Option<Disease> {
    let world = sim.world_mut();
    let mut q = world.query::<(&AgentId, &Health)>();
    q.iter(world)
        .find(|(a, _)| a.0 == id)
        .map(|(_, h)| h.disease)
}

/// Steps until `pred` holds for boid 0's disease; returns the clock time at the end of that
/// step.
fn step_until(sim: &mut Simulation, limit: f64, pred: impl Fn(Disease) -> bool) -> f64 {
    while sim.clock().time < limit {
        sim.step();
        if disease_of(sim, 0).is_some_and(&pred) {
            return sim.clock().time;
        }
    }
    panic!("nothing happened within {limit} s");
}

#[test]
fn infection_and_immunity_last_their_time_at_any_dt() {
    for dt in DTS {
        let mut c = alone(dt);
        c.epidemic.p_initial_infect_normal = 1.0;
        c.epidemic.t_death = 5.0;
        c.epidemic.p_death = 0.0;
        c.epidemic.t_immunity = 3.0;
        let mut sim = Simulation::new(c, None);
        sim.step();
        assert_eq!(
            disease_of(&mut sim, 0),
            Some(Disease::Infected { since: 0.0 })
        );
        let recovered = step_until(&mut sim, 10.0, |d| d.is_recovered());
        let Some(Disease::Recovered { since, .. }) = disease_of(&mut sim, 0) else {
            unreachable!()
        };
        assert_eq!(since, recovered, "recovery is stamped with the step's end");
        // The realised period is within half a step of t_death (a whole extra step is not).
        assert!(
            (recovered - 5.0).abs() <= 0.5 * dt + 1e-9,
            "dt = {dt}: infectious for {recovered} s instead of 5"
        );
        let waned = step_until(&mut sim, 20.0, |d| d.is_susceptible());
        assert!(
            (waned - recovered - 3.0).abs() <= 0.5 * dt + 1e-9,
            "dt = {dt}: immune for {} s instead of 3",
            waned - recovered
        );
    }
}

#[test]
fn breeding_cooldown_lasts_its_time_at_any_dt() {
    for dt in DTS {
        let mut c = alone(dt);
        c.world.width = 200.0;
        c.world.height = 200.0;
        c.swarms.normal.count = 2;
        // Boids that barely move, so the pair stays in contact.
        c.swarms.normal.max_speed = 1e-3;
        c.swarms.normal.min_speed = 0.0;
        c.epidemic.p_initial_infect_normal = 0.0;
        c.population.enabled = true;
        c.population.p_offspring_normal = 1.0;
        c.population.litter_mean_normal = 1.0;
        c.population.litter_sd_normal = 0.0;
        c.population.cooldown = 2.0;
        c.population.t_adult = 1e6; // newborns never breed here
        c.population.p_become_doctor = 0.0;
        let mut sim = Simulation::new(c, None);
        sim.step();
        // Put the two parents 10 px apart, make them a couple, and adults.
        {
            let world = sim.world_mut();
            let mut q = world.query::<(&AgentId, &mut Position, &mut Breeding, &mut Health)>();
            for (id, mut p, mut b, mut h) in q.iter_mut(world) {
                h.age = 1e6;
                p.0 = Vec2::new(100.0 + 10.0 * id.0 as f32, 100.0);
                b.sex = if id.0 == 0 { Sex::Female } else { Sex::Male };
                b.ready_at = 0.0;
            }
        }
        // The times (step ends) at which the pair bred: its cooldown is renewed each time.
        let mut bred_at = Vec::new();
        let mut last_ready = 0.0;
        while sim.clock().time < 9.0 {
            sim.step();
            let world = sim.world_mut();
            let mut q = world.query::<(&AgentId, &Breeding)>();
            let ready = q
                .iter(world)
                .find(|(id, _)| id.0 == 0)
                .map(|(_, b)| b.ready_at)
                .unwrap();
            if ready != last_ready {
                bred_at.push(sim.clock().time);
                last_ready = ready;
            }
        }
        assert!(bred_at.len() >= 4, "dt = {dt}: bred at {bred_at:?}");
        for w in bred_at.windows(2) {
            let gap = w[1] - w[0];
            assert!(
                (gap - 2.0).abs() <= 0.5 * dt + 1e-9,
                "dt = {dt}: cooldown lasted {gap} s instead of 2 ({bred_at:?})"
            );
        }
    }
}

#[test]
fn a_boid_that_dies_is_not_also_caught() {
    // Two boids 6 px apart and a predator between them, nearer boid 0, which dies of the
    // disease in exactly that step: the predator catches boid 1, and boid 0 counts once, dead.
    let dt = 1.0 / 60.0;
    let mut c = alone(dt);
    c.swarms.normal.count = 2;
    c.swarms.normal.max_speed = 1e-3;
    c.swarms.normal.min_speed = 0.0;
    c.epidemic.p_initial_infect_normal = 1.0;
    c.epidemic.p_infect_normal = 0.0;
    c.epidemic.t_death = 1.0;
    c.epidemic.p_death = 1.0;
    c.predators.count = 1;
    c.predators.speed = 1e-3;
    c.predators.catch_radius = 10.0;
    let mut sim = Simulation::new(c, None);
    sim.step();
    // Boid 1 is healthy.
    {
        let world = sim.world_mut();
        let mut q = world.query::<(&AgentId, &mut Health, &mut Position)>();
        for (id, mut h, mut p) in q.iter_mut(world) {
            p.0 = Vec2::new(500.0 + 6.0 * id.0 as f32, 500.0);
            if id.0 == 1 {
                h.disease = Disease::Susceptible;
            }
        }
    }
    // Park the predator far away until the step in which boid 0 dies.
    let park = |sim: &mut Simulation, at: Vec2| {
        let world = sim.world_mut();
        let mut q = world.query_filtered::<&mut Position, With<Predator>>();
        for mut p in q.iter_mut(world) {
            p.0 = at;
        }
    };
    while sim.clock().time + dt < 1.0 - 0.5 * dt {
        park(&mut sim, Vec2::new(100.0, 100.0));
        sim.step();
    }
    assert!(disease_of(&mut sim, 0).is_some(), "boid 0 is still alive");
    park(&mut sim, Vec2::new(502.0, 500.0));
    sim.step();
    assert_eq!(disease_of(&mut sim, 0), None, "boid 0 died");
    let tally = sim.world().resource::<Tally>().clone();
    assert_eq!(tally.dead[0], 1);
    assert_eq!(tally.caught[0], 1, "one boid caught: {tally:?}");
    let caught: Vec<Caught> = sim
        .world_mut()
        .resource_mut::<Events<Caught>>()
        .drain()
        .collect();
    assert_eq!(caught.len(), 1);
    assert_eq!(caught[0].prey, 1, "the predator caught the living boid");
}
