//! Interventions (docs/model.md §11) do what they say: a full vaccination at t = 0 leaves only
//! the initial cases, instant isolation stops transmission, `set` values come back at the end,
//! a `when` fires within one sample of its condition at any dt, and isolated boids stay put (and
//! are released when their infection ends, also once the interventions are taken away).
#![allow(clippy::field_reassign_with_default)] // configs are built by changing a few defaults

mod common;

use pandemic_boids::run::Simulation;
use pandemic_boids::sim::agent::{AgentId, Isolated, Position};
use pandemic_boids::sim::config::SimConfig;
use pandemic_boids::sim::epidemic::EpidemicStats;
use pandemic_boids::sim::interventions::{EventKind, InterventionLog};
use pandemic_boids::sim::reproduction::first_generation_r0;
use pandemic_boids::sim::transmission::TransmissionLog;

/// The interventions' common base (`interventions/none.toml`: 300 Normal boids, SIRD) with
/// `interventions` (TOML of `[[interventions]]` entries) and 10 % infected at the start.
fn with(interventions: &str, seed: u64) -> SimConfig {
    let base =
        std::fs::read_to_string(common::scenarios().join("interventions/none.toml")).unwrap();
    let mut c = SimConfig::from_toml_str(&format!("{base}\n{interventions}"), "test", &[]).unwrap();
    c.seed = seed;
    c.epidemic.p_initial_infect_normal = 0.1;
    c
}

/// Test and isolate from t = 1 s: an infected boid is detected at a rate of once a second, from
/// half a second into its infection, and isolated.
const ISOLATE_FROM_1_S: &str = "[[interventions]]\nname = \"tti\"\nat = 1\n\
                                isolate = { detect_per_s = 1.0, delay = 0.5 }\n";

fn run(config: SimConfig, seconds: f64) -> Simulation {
    common::run_for(config, seconds)
}

#[test]
fn vaccinating_everyone_at_the_start_with_full_efficacy_leaves_only_the_initial_cases() {
    let jab = "[[interventions]]\nname = \"everyone\"\nat = 0\n\
               vaccinate = { fraction = 1.0, efficacy = 1.0 }\n";
    for seed in [1, 2, 3] {
        let sim = run(with(jab, seed), 30.0);
        let stats = sim.world().resource::<EpidemicStats>();
        assert!(stats.first_cohort > 5, "seed {seed}: too few initial cases");
        assert_eq!(
            stats.ever_infected, stats.first_cohort,
            "seed {seed}: vaccinated boids were infected"
        );
        // Without it the same seed spreads.
        let sim = run(with("", seed), 30.0);
        let stats = sim.world().resource::<EpidemicStats>();
        assert!(stats.ever_infected > 2 * stats.first_cohort, "seed {seed}");
    }
}

#[test]
fn instant_isolation_from_the_start_drives_r0_to_zero() {
    let tti = "[[interventions]]\nname = \"tti\"\nat = 0\n\
               isolate = { detect_per_s = 1.0, delay = 0.0 }\n";
    for seed in [1, 2] {
        let sim = run(with(tti, seed), 20.0);
        let log = sim.world().resource::<TransmissionLog>();
        let r0 = first_generation_r0(&log.records).unwrap();
        assert_eq!(r0.mean, 0.0, "seed {seed}: isolated boids infected others");
        let sim = run(with("", seed), 20.0);
        let log = sim.world().resource::<TransmissionLog>();
        assert!(first_generation_r0(&log.records).unwrap().mean > 1.0);
    }
}

#[test]
fn isolated_boids_stay_where_they_are_until_their_infection_ends() {
    let mut sim = Simulation::new(with(ISOLATE_FROM_1_S, 4), None);
    sim.run_until(1.5);
    let world = sim.world_mut();
    let mut q = world.query::<(&AgentId, &Position, &Isolated)>();
    let before: Vec<(u64, Position)> = q.iter(world).map(|(id, p, _)| (id.0, *p)).collect();
    assert!(!before.is_empty(), "nobody was isolated");
    sim.run_until(2.5);
    let world = sim.world_mut();
    let mut q = world.query::<(&AgentId, &Position, &Isolated)>();
    let mut still = 0;
    for (id, p, _) in q.iter(world) {
        still += 1;
        if let Some((_, was)) = before.iter().find(|(b, _)| *b == id.0) {
            assert_eq!(p.0, was.0, "isolated boid {} moved", id.0);
        }
    }
    assert!(still > 0);
    // By the end every infection is over and nobody is isolated any more.
    sim.run_until(12.0);
    let world = sim.world_mut();
    let mut q = world.query::<&Isolated>();
    assert_eq!(q.iter(world).count(), 0);
}

#[test]
fn isolated_boids_are_released_after_their_intervention_is_taken_away() {
    // The interventions' systems run while there is an intervention or an isolated boid: with
    // the list emptied mid-run (as an extension may), those still isolated are released
    // when their infection ends.
    let mut sim = Simulation::new(with(ISOLATE_FROM_1_S, 4), None);
    sim.run_until(2.0);
    let world = sim.world_mut();
    assert!(
        world.query::<&Isolated>().iter(world).count() > 0,
        "nobody was isolated"
    );
    world.resource_mut::<SimConfig>().interventions.clear();
    sim.run_until(12.0);
    let world = sim.world_mut();
    assert_eq!(world.query::<&Isolated>().iter(world).count(), 0);
}

#[test]
fn set_values_hold_while_active_and_come_back_at_the_end() {
    let lockdown = "[[interventions]]\nname = \"lockdown\"\nat = 2\nduration = 3\n\
                    set = { \"swarms.normal.max_speed\" = 60.0, \"epidemic.p_infect_normal\" = 0.1 }\n";
    let mut sim = Simulation::new(with(lockdown, 1), None);
    let speed = |sim: &Simulation| sim.config().swarms.normal.max_speed;
    sim.run_until(1.9);
    assert_eq!(speed(&sim), 180.0);
    sim.run_until(3.0);
    assert_eq!(speed(&sim), 60.0);
    assert_eq!(sim.config().epidemic.p_infect_normal, 0.1);
    sim.run_until(6.0);
    assert_eq!(speed(&sim), 180.0);
    assert_eq!(sim.config().epidemic.p_infect_normal, 0.5);
    let log = sim.world().resource::<InterventionLog>();
    let times: Vec<(EventKind, f64)> = log.events.iter().map(|e| (e.event, e.time_s)).collect();
    assert_eq!(times.len(), 2);
    assert!(
        (times[0].1 - 2.0).abs() < 1e-6 && (times[1].1 - 5.0).abs() < 1e-6,
        "{times:?}"
    );
}

#[test]
fn a_when_fires_within_one_sample_of_its_condition_at_any_dt() {
    let lockdown = "[[interventions]]\nname = \"lockdown\"\nwhen = \"infected_frac > 0.2\"\n\
                    set = { \"swarms.normal.max_speed\" = 60.0 }\n";
    for dt in [1.0 / 30.0, 1.0 / 120.0] {
        let mut c = with(lockdown, 3);
        c.dt = dt;
        let sim = run(c, 30.0);
        let first = sim
            .samples()
            .iter()
            .find(|s| s.overall.infected as f64 / s.overall.alive as f64 > 0.2)
            .expect("the epidemic passes 20 %")
            .time_s;
        let log = sim.world().resource::<InterventionLog>();
        let start = log.events.first().expect("it started").time_s;
        assert!(
            start >= first - 1e-9 && start <= first + sim.config().sample_every + 1e-9,
            "dt {dt}: condition at {first} s, started at {start} s"
        );
        // The metrics say so from then on.
        assert!(
            sim.samples()
                .iter()
                .filter(|s| s.time_s > start)
                .all(|s| s.interventions_active == 1)
        );
    }
}

#[test]
fn for_delays_the_start_until_the_condition_has_held_that_long() {
    let base = "[[interventions]]\nname = \"l\"\nwhen = \"infected_frac > 0.15\"\n\
                set = { \"swarms.normal.max_speed\" = 60.0 }\n";
    let held = format!("{base}for = 3.0\n");
    let start = |text: &str| {
        let sim = run(with(text, 3), 30.0);
        sim.world().resource::<InterventionLog>().events[0].time_s
    };
    let (now, later) = (start(base), start(&held));
    assert!((later - now - 3.0).abs() < 0.51, "{now} then {later}");
}

#[test]
fn an_import_infects_exactly_that_many_and_records_them() {
    let imp =
        "[[interventions]]\nname = \"imp\"\nat = 4\nimport = { count = 7, swarm = \"normal\" }\n";
    let mut c = with(imp, 2);
    c.epidemic.p_initial_infect_normal = 0.0;
    c.epidemic.p_initial_infect_doctor = 0.0;
    let sim = run(c, 4.5);
    let log = sim.world().resource::<TransmissionLog>();
    let imported: Vec<_> = log
        .records
        .iter()
        .filter(|t| t.cause.key() == "imported")
        .collect();
    assert_eq!(imported.len(), 7);
    assert!(imported.iter().all(|t| (t.time_s - 4.0).abs() < 0.02));
    assert_eq!(
        sim.world().resource::<EpidemicStats>().imported_infections,
        7
    );
}

#[test]
fn pairing_by_seed_narrows_the_interval_of_a_lockdowns_effect() {
    use pandemic_boids::run::compare::{CompareOptions, run};
    let tmp = tempfile::tempdir().unwrap();
    let dir = common::scenarios().join("interventions");
    let report = run(&CompareOptions {
        base: dir.join("none.toml"),
        variant: Some(dir.join("lockdown.toml")),
        variant_sets: Vec::new(),
        seeds: 8,
        base_seed: 1,
        jobs: 2,
        duration: Some(20.0),
        sets: Vec::new(),
        out: tmp.path().to_path_buf(),
        progress: false,
        stop: None,
    })
    .unwrap();
    // R0 is decided early, while both runs of a seed still share their draws.
    let r0 = report.rows.iter().find(|r| r.measure == "r0").unwrap();
    let paired = r0.paired.ci_high - r0.paired.ci_low;
    let unpaired = r0.unpaired.1 - r0.unpaired.0;
    assert!(
        paired < unpaired && r0.variance_reduction > 1.0,
        "paired {paired}, unpaired {unpaired}"
    );
    assert!(
        report.differences.contains("lockdown"),
        "{}",
        report.differences
    );
}
