//! Invariants over long runs: speeds stay within [v_min, v_max], positions inside the world,
//! nothing becomes NaN, and the population is conserved (alive + dead + caught = spawned +
//! born) at every sample; a steering force is gone once its cause is (no doctor left: no
//! doctor seeks and no Antivax boid flees).
#![allow(clippy::field_reassign_with_default)] // configs are built by changing a few defaults

mod common;

use common::boids;
use pandemic_boids::run::Simulation;
use pandemic_boids::sim::config::{DoctorBehavior, SimConfig, SteeringModel};
use pandemic_boids::sim::metrics::Tally;
use pandemic_boids::sim::space::Boundary;

fn check_every_step(mut config: SimConfig, seconds: f64) -> Simulation {
    config.swarms.normal.noise = 60.0;
    config.swarms.antivax.count = 30;
    let space = config.space();
    let mut sim = Simulation::new(config.clone(), None);
    while !sim.reached(seconds) {
        sim.step();
        for (swarm, p, v, _) in boids(&mut sim) {
            let band = config.swarms.get(swarm);
            let speed = v.0.length();
            assert!(
                p.0.is_finite() && v.0.is_finite(),
                "NaN at t = {}",
                sim.clock().time
            );
            assert!(
                space.contains(p.0),
                "{:?} outside the world at t = {}",
                p.0,
                sim.clock().time
            );
            assert!(
                speed >= band.min_speed - 1e-3 && speed <= band.max_speed + 1e-3,
                "speed {speed} outside [{}, {}]",
                band.min_speed,
                band.max_speed
            );
        }
    }
    sim
}

#[test]
fn speeds_positions_and_finiteness_hold_on_a_torus() {
    let mut c = SimConfig::default();
    c.doctors.behavior = DoctorBehavior::SeekNearest;
    check_every_step(c, 60.0);
}

#[test]
fn speeds_positions_and_finiteness_hold_with_walls_and_every_model() {
    for model in [SteeringModel::Hybrid, SteeringModel::Adams] {
        let mut c = SimConfig::default();
        c.world.boundary = Boundary::Bounce;
        c.steering_model = model;
        c.doctors.behavior = DoctorBehavior::SeekCentroid;
        check_every_step(c, 20.0);
    }
}

#[test]
fn population_is_conserved_at_every_sample() {
    let mut c = SimConfig::default();
    c.population.enabled = true;
    c.population.max_population = 400;
    c.population.p_become_doctor = 0.05;
    c.epidemic.p_spontaneous_infect = 0.02;
    c.epidemic.p_death = 0.5;
    c.epidemic.t_immunity = 20.0;
    c.duration = 90.0;
    c.predators.count = 2;
    c.predators.catch_radius = 25.0;
    let mut sim = Simulation::new(c, None);
    sim.run_until(90.0);
    sim.observe();
    let tally = sim.world().resource::<Tally>().clone();
    let spawned: u64 = tally.spawned.iter().sum();
    assert!(spawned > 0);
    let samples = sim.samples();
    assert!(samples.len() > 150);
    let mut births = 0;
    for s in samples {
        let o = &s.overall;
        assert_eq!(
            o.susceptible + o.infected + o.recovered,
            o.alive,
            "S + I + R = alive at {}",
            s.time_s
        );
        assert_eq!(
            o.alive + o.dead + o.caught,
            spawned + o.born,
            "conservation at t = {}",
            s.time_s
        );
        births = o.born;
    }
    assert!(births > 0, "the population module bred nobody");
    assert!(samples.last().unwrap().overall.dead > 0, "nobody died");
}

#[test]
fn seeks_and_flights_are_zero_once_no_doctor_is_left() {
    use pandemic_boids::sim::steering::Steering;
    use pandemic_boids::sim::swarm::Swarm;
    // A crowded world with doctors seeking the nearest infected and Antivax boids fleeing them.
    let mut config = SimConfig::default();
    config.seed = 3;
    (config.world.width, config.world.height) = (500.0, 400.0);
    config.swarms.normal.count = 60;
    config.swarms.doctor.count = 12;
    config.swarms.antivax.count = 40;
    config.epidemic.p_initial_infect_normal = 0.3;
    config.doctors.behavior = DoctorBehavior::SeekNearest;
    let mut sim = Simulation::new(config, None);
    sim.world_mut().insert_resource(Steering::keeping_parts());
    let forces = |sim: &mut Simulation| {
        let steering = sim.world().resource::<Steering>();
        let (mut seeks, mut flights) = (0, 0);
        for i in 0..steering.len() {
            let parts = steering.parts(i).unwrap();
            seeks += usize::from(parts.seek != Default::default());
            flights += usize::from(parts.repulsion != Default::default());
        }
        (seeks, flights)
    };
    let mut seen = (0, 0);
    while !sim.reached(10.0) && (seen.0 == 0 || seen.1 == 0) {
        sim.step();
        let (s, f) = forces(&mut sim);
        seen = (seen.0.max(s), seen.1.max(f));
    }
    assert!(
        seen.0 > 0 && seen.1 > 0,
        "no doctor sought or no Antivax boid fled: {seen:?}"
    );
    // Every doctor becomes a Normal boid: no one seeks and no one flees from the next step on.
    let world = sim.world_mut();
    for mut swarm in world.query::<&mut Swarm>().iter_mut(world) {
        if *swarm == Swarm::Doctor {
            *swarm = Swarm::Normal;
        }
    }
    sim.step();
    assert_eq!(
        forces(&mut sim),
        (0, 0),
        "seeks and flights left after the doctors"
    );
}
