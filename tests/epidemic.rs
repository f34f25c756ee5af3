//! The epidemic through the whole app (docs/model.md §5): the interaction matrix, death and
//! recovery timing, waning immunity, and an epidemic curve that does not depend on dt.
#![allow(clippy::field_reassign_with_default)] // configs are built by changing a few defaults

mod common;

use bevy::prelude::*;
use common::{boids, mean_se};
use pandemic_boids::run::Simulation;
use pandemic_boids::sim::agent::{Disease, Health, Position, Velocity};
use pandemic_boids::sim::clock::SimClock;
use pandemic_boids::sim::config::{IndexKind, SimConfig};
use pandemic_boids::sim::epidemic::{DecidingAside, Died, EpidemicStats, Infected};
use pandemic_boids::sim::swarm::Swarm;
use pandemic_boids::{IntegrateSystems, SimSystems};

/// Every `Infected` event of the run, with the swarms involved.
#[derive(Resource, Default)]
struct Seen(Vec<(Option<Swarm>, Swarm)>);

fn collect(
    mut seen: ResMut<Seen>,
    mut events: EventReader<Infected>,
    ids: Query<(&pandemic_boids::sim::agent::AgentId, &Swarm)>,
) {
    let swarm_of = |id| ids.iter().find(|(a, _)| **a == id).map(|(_, s)| *s);
    for e in events.read() {
        seen.0.push((
            e.source.and_then(|f| swarm_of(f.id)),
            swarm_of(e.target).unwrap(),
        ));
    }
}

fn with_collector(config: SimConfig) -> Simulation {
    let mut sim = Simulation::new(config, None);
    sim.app_mut()
        .init_resource::<Seen>()
        .add_systems(FixedUpdate, collect.in_set(SimSystems::Population));
    sim
}

fn quiet() -> SimConfig {
    let mut c = SimConfig::default();
    c.swarms.normal.count = 0;
    c.swarms.doctor.count = 0;
    c.epidemic.p_initial_infect_normal = 0.0;
    c.epidemic.p_initial_infect_doctor = 0.0;
    c.antivax.p_antivax = 0.0;
    c
}

#[test]
fn doctors_are_infected_only_when_enabled_and_antivax_are_one_population_with_normals() {
    let mut c = SimConfig::default();
    c.swarms.doctor.count = 40;
    c.epidemic.p_initial_infect_doctor = 0.2;
    c.epidemic.t_death = f64::INFINITY;
    c.epidemic.p_cure = 0.0;
    let mut sim = with_collector(c.clone());
    sim.run_until(30.0);
    let seen = &sim.world().resource::<Seen>().0;
    assert!(
        seen.len() > 10,
        "the epidemic spread ({} infections)",
        seen.len()
    );
    let doctor = |s: &Swarm| *s == Swarm::Doctor;
    assert!(
        seen.iter()
            .all(|(src, dst)| src.as_ref().is_some_and(|s| doctor(s) == doctor(dst))),
        "an infection crossed between Doctors and the others"
    );
    // Normal and Antivax boids infect each other (docs/model.md §5.2).
    assert!(
        seen.iter()
            .any(|(src, dst)| *src == Some(Swarm::Normal) && *dst == Swarm::Antivax)
            || seen
                .iter()
                .any(|(src, dst)| *src == Some(Swarm::Antivax) && *dst == Swarm::Normal),
        "Normal and Antivax boids never infected each other: {seen:?}"
    );

    c.epidemic.cross_swarm_infection = true;
    let mut sim = with_collector(c);
    sim.run_until(30.0);
    let seen = &sim.world().resource::<Seen>().0;
    assert!(
        seen.iter()
            .any(|(src, dst)| src.as_ref().is_some_and(|s| doctor(s) != doctor(dst))),
        "no infection between Doctors and the others though enabled"
    );
}

#[test]
fn a_lone_infected_doctor_is_never_cured() {
    let mut c = quiet();
    c.swarms.doctor.count = 1;
    c.epidemic.p_initial_infect_doctor = 1.0;
    c.epidemic.p_cure = 1.0;
    c.epidemic.t_death = f64::INFINITY;
    let mut sim = Simulation::new(c, None);
    sim.run_until(20.0);
    let all = boids(&mut sim);
    assert_eq!(all.len(), 1);
    assert!(all[0].3.disease.is_infected());
    assert_eq!(sim.world().resource::<EpidemicStats>().cures, 0);
}

#[test]
fn doctors_cure_healthy_boids_into_nothing() {
    // Doctors among healthy boids with certain cures: nothing changes state.
    let mut c = quiet();
    c.swarms.normal.count = 100;
    c.swarms.doctor.count = 30;
    c.epidemic.p_cure = 1.0;
    let mut sim = Simulation::new(c, None);
    sim.run_until(10.0);
    assert!(
        boids(&mut sim)
            .iter()
            .all(|b| b.3.disease == Disease::Susceptible)
    );
}

#[derive(Resource, Default)]
struct Deaths(Vec<f64>);

#[test]
fn an_infected_boid_dies_t_death_after_infection() {
    let mut c = quiet();
    c.swarms.normal.count = 3;
    c.epidemic.p_initial_infect_normal = 1.0;
    c.epidemic.t_death = 5.0;
    c.epidemic.p_death = 1.0;
    let mut sim = Simulation::new(c, None);
    sim.app_mut().init_resource::<Deaths>().add_systems(
        FixedUpdate,
        (|mut d: ResMut<Deaths>, mut ev: EventReader<Died>| d.0.extend(ev.read().map(|e| e.time)))
            .in_set(SimSystems::Population),
    );
    sim.run_until(4.9);
    assert_eq!(boids(&mut sim).len(), 3);
    sim.run_until(5.5);
    assert_eq!(boids(&mut sim).len(), 0);
    let deaths = &sim.world().resource::<Deaths>().0;
    assert_eq!(deaths.len(), 3);
    assert!(deaths.iter().all(|t| (t - 5.0).abs() < 1e-6), "{deaths:?}");
}

#[test]
fn survivors_recover_then_lose_immunity() {
    let mut c = quiet();
    c.swarms.normal.count = 2;
    c.epidemic.p_initial_infect_normal = 1.0;
    c.epidemic.t_death = 2.0;
    c.epidemic.p_death = 0.0;
    c.epidemic.t_immunity = 4.0;
    let mut sim = Simulation::new(c, None);
    sim.run_until(1.9);
    assert!(boids(&mut sim).iter().all(|b| b.3.disease.is_infected()));
    sim.run_until(2.1);
    for b in boids(&mut sim) {
        let Disease::Recovered { since, immunity } = b.3.disease else {
            panic!("{:?}", b.3)
        };
        assert!((since - 2.0).abs() < 1e-6 && immunity == 1.0);
        // Halfway through waning, immunity is one half.
        assert!((b.3.disease.immunity(4.0, 4.0) - 0.5).abs() < 1e-6);
    }
    sim.run_until(5.9);
    assert!(boids(&mut sim).iter().all(|b| b.3.disease.is_recovered()));
    sim.run_until(6.1);
    assert!(
        boids(&mut sim).iter().all(|b| b.3.disease.is_susceptible()),
        "immunity waned after 4 s"
    );
}

/// The default pandemic at dt = 1/30 and 1/120: deaths, peak and infected-seconds agree within
/// four standard errors of the difference of the seed-ensemble means.
#[test]
fn the_epidemic_curve_does_not_depend_on_dt() {
    const SEEDS: u64 = 10;
    let mut results = Vec::new();
    for dt in [1.0 / 30.0, 1.0 / 120.0] {
        let (mut dead, mut peak, mut area) = (Vec::new(), Vec::new(), Vec::new());
        for seed in 0..SEEDS {
            let mut c = SimConfig::default();
            c.seed = 100 + seed;
            c.dt = dt;
            c.epidemic.p_initial_infect_normal = 0.1;
            let mut sim = Simulation::new(c, None);
            sim.run_until(30.0);
            sim.observe();
            let s = sim.samples();
            dead.push(s.last().unwrap().overall.dead as f64);
            peak.push(s.iter().map(|x| x.overall.infected).max().unwrap() as f64);
            area.push(
                s.iter()
                    .map(|x| x.overall.infected as f64 * 0.5)
                    .sum::<f64>(),
            );
        }
        results.push([mean_se(&dead), mean_se(&peak), mean_se(&area)]);
    }
    for (k, name) in ["dead by 30 s", "peak infected", "infected-seconds"]
        .iter()
        .enumerate()
    {
        let (a, b) = (results[0][k], results[1][k]);
        let tol = 4.0 * (a.1.powi(2) + b.1.powi(2)).sqrt();
        println!(
            "{name}: dt 1/30 {:.1} ± {:.1}, dt 1/120 {:.1} ± {:.1}",
            a.0, a.1, b.0, b.1
        );
        assert!(
            (a.0 - b.0).abs() <= tol,
            "{name}: {} vs {} (tolerance {tol})",
            a.0,
            b.0
        );
        assert!(a.0 > 0.0, "{name}: the epidemic did not take off");
    }
}

/// Every boid's (swarm, position, velocity, health).
type Boids = Vec<(Swarm, Position, Velocity, Health)>;

/// The step at which [`raise_at_step`] raises the contact probability.
const RAISE_AT_STEP: u64 = 30;

/// Raises the contact infection probability of Normal boids to 1 at step [`RAISE_AT_STEP`].
fn raise_at_step(mut config: ResMut<SimConfig>, clock: Res<SimClock>) {
    if clock.step == RAISE_AT_STEP {
        config.epidemic.p_infect_normal = 1.0;
    }
}

/// The state after 60 steps of a small epidemic whose contact probability an extension raises
/// at step 30 in the system set `set` (or never), its contact infections, and how many steps
/// used decisions worked out aside.
fn raised_in(set: Option<impl SystemSet>) -> (Boids, u64, u64) {
    let mut c = SimConfig::default();
    c.swarms.normal.count = 150;
    c.swarms.doctor.count = 0;
    c.epidemic.p_initial_infect_normal = 0.3;
    c.epidemic.p_infect_normal = 0.0;
    c.epidemic.p_spontaneous_infect = 0.0;
    c.neighbour_index = IndexKind::Grid;
    let mut sim = Simulation::with(c, None, |app| {
        if let Some(set) = set {
            app.add_systems(FixedUpdate, raise_at_step.in_set(set));
        }
    });
    for _ in 0..60 {
        sim.step();
    }
    let contacts = sim.world().resource::<EpidemicStats>().contact_infections;
    let aside = sim.world().resource::<DecidingAside>().used();
    (boids(&mut sim), contacts, aside)
}

/// The epidemic decides on its parameters as they are when its phase runs, whichever
/// system changed them earlier in the step: where a headless run works the decisions out on an
/// idle worker once flocking is done, a change made after that (here while the boids move) is
/// not missed.
#[test]
fn a_parameter_changed_while_the_boids_move_counts_in_that_step() {
    let (before, contacts_before, aside) = raised_in(Some(SimSystems::Sense));
    let (during, contacts_during, _) = raised_in(Some(IntegrateSystems::Boids));
    let (_, never, _) = raised_in(None::<SimSystems>);
    // With a second core the run has a worker to hand the decisions to (one core: none, and
    // the two paths cannot differ).
    if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
        assert!(aside > 0, "no step's decisions were worked out aside");
    }
    assert_eq!(never, 0, "no contact infections without the change");
    assert!(contacts_before > 0, "the change infects");
    assert_eq!(contacts_during, contacts_before);
    assert!(
        before == during,
        "the same run whichever system changed the parameter"
    );
}
