//! The built-in defaults are the model's published numbers (docs/model.md §4–§7
//! and §10), written out here as literals — not read back from the code — so a default changed
//! by mistake fails this test.

use std::f32::consts::PI;

use pandemic_boids::sim::config::{
    CatchMode, DoctorBehavior, IndexKind, SimConfig, SteeringModel, SwarmParams,
};
use pandemic_boids::sim::space::Boundary;

/// docs/model.md §4: every swarm's flocking defaults (counts differ per swarm).
fn assert_flocking_defaults(name: &str, p: &SwarmParams) {
    let want = [
        ("max_speed", p.max_speed, 180.0),
        ("max_force", p.max_force, 180.0),
        ("min_speed", p.min_speed, 54.0),
        ("separation_radius", p.separation_radius, 25.0),
        ("alignment_radius", p.alignment_radius, 50.0),
        ("cohesion_radius", p.cohesion_radius, 50.0),
        ("separation_weight", p.separation_weight, 1.5),
        ("alignment_weight", p.alignment_weight, 1.0),
        ("cohesion_weight", p.cohesion_weight, 1.0),
        ("noise", p.noise, 0.0),
    ];
    for (key, got, spec) in want {
        assert_eq!(got, spec, "swarms.{name}.{key}");
    }
    assert!((p.fov - PI).abs() < 1e-6, "swarms.{name}.fov = {}", p.fov);
}

#[test]
fn defaults_are_the_specs_numbers() {
    let c = SimConfig::default();
    // §2, §9, §10 default scenario.
    assert_eq!((c.world.width, c.world.height), (1920.0, 1080.0));
    assert_eq!(c.world.boundary, Boundary::Wrap);
    assert_eq!(c.steering_model, SteeringModel::Shiffman);
    assert_eq!(c.neighbour_index, IndexKind::Kdtree);
    assert!((c.dt - 1.0 / 60.0).abs() < 1e-12);
    assert_eq!(c.swarms.normal.count, 200);
    assert_eq!(c.swarms.doctor.count, 10);
    assert_eq!(c.swarms.antivax.count, 0);
    assert_flocking_defaults("normal", &c.swarms.normal);
    assert_flocking_defaults("doctor", &c.swarms.doctor);
    assert_flocking_defaults("antivax", &c.swarms.antivax);

    // §5.2.
    let e = &c.epidemic;
    let probabilities = [
        ("p_initial_infect_normal", e.p_initial_infect_normal, 0.05),
        ("p_initial_infect_doctor", e.p_initial_infect_doctor, 0.02),
        ("p_infect_normal", e.p_infect_normal, 0.5),
        ("p_infect_doctor", e.p_infect_doctor, 0.5),
        ("p_spontaneous_infect", e.p_spontaneous_infect, 0.0),
        ("p_death", e.p_death, 1.0),
        ("t_death", e.t_death, 5.0),
        ("cure_immunity_level", e.cure_immunity_level, 1.0),
        ("p_cure", e.p_cure, 0.8),
        ("infected_cure_factor", e.infected_cure_factor, 0.5),
    ];
    for (key, got, spec) in probabilities {
        assert_eq!(got, spec, "epidemic.{key}");
    }
    assert_eq!(e.t_immunity, f64::INFINITY, "permanent immunity");
    let radii = [
        ("r_interact_normal", e.r_interact_normal, 30.0),
        ("r_interact_doctor", e.r_interact_doctor, 40.0),
        (
            "infected_radius_factor_normal",
            e.infected_radius_factor_normal,
            0.8,
        ),
        (
            "infected_radius_factor_doctor",
            e.infected_radius_factor_doctor,
            0.7,
        ),
    ];
    for (key, got, spec) in radii {
        assert_eq!(got, spec, "epidemic.{key}");
    }
    assert!(!e.cross_swarm_infection);

    // §5.3, §5.4.
    assert_eq!(c.doctors.behavior, DoctorBehavior::Passive);
    assert_eq!(c.doctors.seek_radius, 300.0);
    assert_eq!(c.doctors.seek_weight, 5.0);
    assert_eq!(c.antivax.p_antivax, 0.1);
    assert_eq!(c.antivax.repulsion_radius, 100.0);
    assert_eq!(c.antivax.repulsion_weight, 3.0);

    // §6.
    let pop = &c.population;
    assert!(!pop.enabled, "population dynamics are off by default");
    let population = [
        ("p_offspring_normal", pop.p_offspring_normal, 0.4),
        ("p_offspring_doctor", pop.p_offspring_doctor, 0.05),
        (
            "infected_offspring_factor",
            pop.infected_offspring_factor,
            0.5,
        ),
        ("litter_mean_normal", pop.litter_mean_normal, 2.0),
        ("litter_sd_normal", pop.litter_sd_normal, 1.0),
        ("litter_mean_doctor", pop.litter_mean_doctor, 1.0),
        ("litter_sd_doctor", pop.litter_sd_doctor, 1.0),
        ("cooldown", pop.cooldown, 5.0),
        ("t_adult", pop.t_adult, 8.33),
    ];
    for (key, got, spec) in population {
        assert_eq!(got, spec, "population.{key}");
    }

    // §7.
    let pr = &c.predators;
    assert_eq!(pr.count, 0, "no predators by default");
    let predators = [
        ("speed", pr.speed, 270.0),
        ("max_force", pr.max_force, 108.0),
        ("catch_radius", pr.catch_radius, 10.0),
        ("detection_range", pr.detection_range, 300.0),
        ("isolation_radius", pr.isolation_radius, 50.0),
        ("fear_radius", pr.fear_radius, 150.0),
    ];
    for (key, got, spec) in predators {
        assert_eq!(got, spec, "predators.{key}");
    }
    assert_eq!(pr.catch, CatchMode::Remove);
}
