//! A force of one's own reaches the boids the way the README's "Add your own system" says: a
//! system after `SteerSystems::Flee` adds its part to `Steering`, the integrator applies it
//! with the built-in parts, and the parts kept for the window's inspector hold it as `other`.
//! Keeping the parts changes no step; a new run starts with no steering.

use bevy::prelude::*;
use pandemic_boids::run::Simulation;
use pandemic_boids::sim::agent::{Boid, Position, ResetRequest, Velocity};
use pandemic_boids::sim::config::{DoctorBehavior, SimConfig};
use pandemic_boids::sim::movement::{SpeedBand, integrate};
use pandemic_boids::sim::schedule::{SimSystems, SteerSystems};
use pandemic_boids::sim::steering::{Part, Steering};

/// The extension's force, px/s².
const WIND: Vec2 = Vec2::new(0.0, 90.0);

fn blow(mut steering: ResMut<Steering>) {
    steering.add(Part::Other, |_| WIND);
}

/// One Normal boid alone (no neighbours, no noise): its steering is the wind alone.
fn lone_boid(wind: bool) -> Simulation {
    let mut c = SimConfig {
        seed: 4,
        ..SimConfig::default()
    };
    c.swarms.normal.count = 1;
    c.swarms.normal.noise = 0.0;
    c.swarms.doctor.count = 0;
    c.swarms.antivax.count = 0;
    c.antivax.p_antivax = 0.0;
    let mut sim = Simulation::with(c, None, |app| {
        if wind {
            app.add_systems(
                FixedUpdate,
                blow.in_set(SimSystems::Steer).after(SteerSystems::Flee),
            );
        }
    });
    sim.world_mut().insert_resource(Steering::keeping_parts());
    sim
}

fn state(sim: &mut Simulation) -> (Vec2, Vec2) {
    let world = sim.world_mut();
    let mut q = world.query_filtered::<(&Position, &Velocity), With<Boid>>();
    let (p, v) = q.single(world).unwrap();
    (p.0, v.0)
}

#[test]
fn a_force_added_after_the_built_in_ones_moves_the_boids_and_shows_as_other() {
    let mut sim = lone_boid(true);
    sim.step();
    let (p, v) = state(&mut sim);
    sim.step();
    let world = sim.world();
    let dt = world.resource::<Time<Fixed>>().timestep().as_secs_f32();
    let config = world.resource::<SimConfig>();
    let band = SpeedBand {
        min: config.swarms.normal.min_speed,
        max: config.swarms.normal.max_speed,
    };
    let want = integrate(p, v, WIND, dt, band, &config.space());
    let parts = *world.resource::<Steering>().parts(0).unwrap();
    assert_eq!(parts.other, WIND);
    assert_eq!(parts.flocking + parts.noise + parts.seek, Vec2::ZERO);
    assert_eq!(parts.total(), WIND);
    assert_eq!(
        state(&mut sim),
        want,
        "the boid did not move as the wind says"
    );
    // Without the wind the same boid moves otherwise.
    let mut calm = lone_boid(false);
    calm.step();
    calm.step();
    assert_ne!(state(&mut calm), want);
    assert_eq!(
        calm.world().resource::<Steering>().parts(0).unwrap().other,
        Vec2::ZERO
    );
}

#[test]
fn keeping_the_parts_changes_nothing_and_they_add_up_to_each_total() {
    // The defaults with noise, seeking doctors and predators: every built-in part is at work.
    let mut c = SimConfig {
        seed: 9,
        ..SimConfig::default()
    };
    c.swarms.normal.noise = 40.0;
    c.doctors.behavior = DoctorBehavior::SeekNearest;
    c.predators.count = 2;
    let mut headless = Simulation::new(c.clone(), None);
    let mut window = Simulation::new(c, None);
    window
        .world_mut()
        .insert_resource(Steering::keeping_parts());
    let mut parts = [0usize; 5];
    while !headless.reached(3.0) {
        headless.step();
        window.step();
        let steering = window.world().resource::<Steering>();
        for i in 0..steering.len() {
            let p = steering.parts(i).unwrap();
            let bits = |v: Vec2| v.to_array().map(f32::to_bits);
            assert_eq!(bits(p.total()), bits(steering.total(i)), "slot {i}");
            for (k, v) in [p.flocking, p.noise, p.seek, p.repulsion, p.flee]
                .iter()
                .enumerate()
            {
                parts[k] += usize::from(*v != Vec2::ZERO);
            }
        }
    }
    assert!(
        parts.iter().all(|&n| n > 0),
        "a part was never at work: {parts:?}"
    );
    assert!(headless.world().resource::<Steering>().parts(0).is_none());
    assert_eq!(headless.checkpoint().unwrap(), window.checkpoint().unwrap());
}

#[test]
fn a_new_run_starts_with_no_steering() {
    let mut sim = lone_boid(false);
    sim.step();
    sim.step();
    assert_eq!(sim.world().resource::<Steering>().len(), 1);
    // The window's reset while paused: the new run is spawned and observed, not stepped.
    sim.world_mut().insert_resource(ResetRequest {
        pending: true,
        seed: Some(5),
    });
    sim.observe();
    let steering = sim.world().resource::<Steering>();
    assert!(steering.is_empty() && steering.parts(0).is_none());
}
