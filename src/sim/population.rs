//! Population dynamics (docs/model.md §6, off unless `population.enabled`): aging, reproduction of
//! same-swarm opposite-sex pairs in contact (per-second probability, N(μ, σ) litters, cooldown,
//! a `max_population` cap, one infection roll for the litter of two infected parents) and
//! promotion of adult Normals to Doctors. Pairs are decided on the state at the start of the
//! step, initiators in id order, so births are deterministic. Systems run in
//! `SimSystems::Population`.

use bevy::prelude::*;
use rand::Rng;
use rand_distr::{Distribution, Normal};
use std::f32::consts::TAU;

use crate::sim::agent::{AgentId, Breeding, Disease, Health, IdCounter, Sex, boid};
use crate::sim::clock::{SimClock, is_due};
use crate::sim::config::{PopulationConfig, SimConfig};
use crate::sim::epidemic::{Cause, Infected, step_probability};
use crate::sim::metrics::Tally;
use crate::sim::neighbours::{NeighbourIndex, Neighbours, Snapshot};
use crate::sim::predators::Caught;
use crate::sim::rng::{Draws, Purpose, draw_rng, draw_unit};
use crate::sim::schedule::PopulationSystems;
use crate::sim::swarm::Swarm;

/// A boid was born.
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Born {
    /// The newborn.
    pub id: AgentId,
    /// Its parents.
    pub parents: (AgentId, AgentId),
    /// Inherited swarm.
    pub swarm: Swarm,
    /// Simulated time, s.
    pub time: f64,
}

/// A Normal boid became a Doctor.
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Promoted {
    /// The boid.
    pub id: AgentId,
    /// Simulated time, s.
    pub time: f64,
}

/// One newborn, before it is spawned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Newborn {
    /// Parents' slots.
    pub parents: (usize, usize),
    /// Inherited swarm.
    pub swarm: Swarm,
    /// The parents' midpoint, px.
    pub position: Vec2,
    /// Random heading at the swarm's v_max, px/s.
    pub velocity: Vec2,
    /// Born infected.
    pub infected: bool,
    /// Sex.
    pub sex: Sex,
}

/// A litter size: `round(N(μ, σ))`, at least 0.
pub fn litter_size(mean: f64, sd: f64, rng: &mut impl Rng) -> u32 {
    let x = if sd > 0.0 {
        Normal::new(mean, sd).map_or(mean, |n| n.sample(rng))
    } else {
        mean
    };
    x.round().max(0.0) as u32
}

/// Everything one reproduction step decides from.
pub struct BreedingStep<'a, I: NeighbourIndex> {
    /// State at the start of the step.
    pub snapshot: &'a Snapshot,
    /// Neighbour index over it.
    pub index: &'a I,
    /// Sex, cooldown and age (at the step's end, s) of each slot; `None` for a boid that may
    /// not breed this step because it died or was caught in it.
    pub breeding: &'a [Option<(Breeding, f64)>],
    /// The whole config (population, epidemic and swarm speeds).
    pub config: &'a SimConfig,
    /// Step number.
    pub step: u64,
    /// Simulated time at the start of the step, s.
    pub now: f64,
    /// Step length, s.
    pub dt: f64,
}

impl<I: NeighbourIndex> BreedingStep<'_, I> {
    /// Whether slot `i` may breed in this step: it is alive and not caught, an adult
    /// (`t_adult` old) and its cooldown ends by the step's end, with the half-step tolerance of
    /// every timed event (docs/model.md §5.2).
    fn ready(&self, i: usize) -> bool {
        self.breeding[i].is_some_and(|(b, age)| {
            is_due(b.ready_at, self.now + self.dt, self.dt)
                && is_due(self.config.population.t_adult, age, self.dt)
        })
    }

    /// The sex of slot `i` (only asked of slots that are [`ready`](Self::ready)).
    fn sex(&self, i: usize) -> Sex {
        self.breeding[i].map_or(Sex::Female, |(b, _)| b.sex)
    }

    /// The per-second breeding chance of a pair of `swarm`: lower when either parent is
    /// infected — a property of the pair, not of which parent started it.
    fn p_offspring(&self, swarm: Swarm, infected: bool) -> f64 {
        let pop = &self.config.population;
        let p = match swarm {
            Swarm::Doctor => pop.p_offspring_doctor,
            _ => pop.p_offspring_normal,
        };
        if infected {
            p * pop.infected_offspring_factor
        } else {
            p
        }
    }

    /// The newborns of this step and the slots that bred (both parents), in id order.
    pub fn decide(&self) -> (Vec<Newborn>, Vec<usize>) {
        let s = self.snapshot;
        let cfg = self.config;
        let pop: &PopulationConfig = &cfg.population;
        let space = s.space();
        // Alive now: the step's deaths and catches are gone.
        let alive = self.breeding.iter().filter(|b| b.is_some()).count();
        let mut room = (pop.max_population as usize).saturating_sub(alive);
        let mut bred = vec![false; s.len()];
        let mut newborns = Vec::new();
        let mut parents = Vec::new();
        for i in 0..s.len() {
            if room == 0 {
                break;
            }
            if bred[i] || !self.ready(i) {
                continue;
            }
            let swarm = s.swarm[i];
            let sick_i = s.disease.is_infected(i);
            if self.p_offspring(swarm, false) <= 0.0 {
                continue;
            }
            // Partners within the swarm's contact radius (not reduced by infection: that is a
            // debuff of disease contact).
            let mut partners: Vec<(usize, Vec2)> = Vec::new();
            self.index
                .for_each_within(s.pos[i], cfg.epidemic.r_interact(swarm), |j, off| {
                    if j > i
                        && !bred[j]
                        && s.swarm[j] == swarm
                        && self.sex(j) != self.sex(i)
                        && self.ready(j)
                    {
                        partners.push((j, off));
                    }
                });
            partners.sort_unstable_by_key(|p| p.0);
            for (j, offset) in partners {
                let sick = sick_i || s.disease.is_infected(j);
                let p_step = step_probability(self.p_offspring(swarm, sick), self.dt);
                if draw_unit(cfg.seed, self.step, s.id[i], s.id[j], Purpose::OFFSPRING) >= p_step {
                    continue;
                }
                let mut rng = draw_rng(cfg.seed, self.step, s.id[i], s.id[j], Purpose::LITTER);
                let (mean, sd) = match swarm {
                    Swarm::Doctor => (pop.litter_mean_doctor, pop.litter_sd_doctor),
                    _ => (pop.litter_mean_normal, pop.litter_sd_normal),
                };
                let size = (litter_size(mean, sd, &mut rng) as usize).min(room);
                let both_sick = sick_i && s.disease.is_infected(j);
                // One roll for the whole litter (docs/model.md §6).
                let infected = both_sick && rng.random::<f64>() < cfg.epidemic.p_infect(swarm);
                let midpoint = space.confine(s.pos[i] + 0.5 * offset, Vec2::ZERO).0;
                let speed = cfg.swarms.get(swarm).max_speed;
                for _ in 0..size {
                    let heading = rng.random::<f32>() * TAU;
                    let sex = if rng.random::<bool>() {
                        Sex::Male
                    } else {
                        Sex::Female
                    };
                    newborns.push(Newborn {
                        parents: (i, j),
                        swarm,
                        position: midpoint,
                        velocity: crate::sim::math::from_angle(heading) * speed,
                        infected,
                        sex,
                    });
                }
                room -= size;
                bred[i] = true;
                bred[j] = true;
                parents.extend([i, j]);
                break;
            }
        }
        parents.sort_unstable();
        (newborns, parents)
    }
}

pub(super) fn plugin(app: &mut App) {
    app.add_event::<Born>().add_event::<Promoted>().add_systems(
        FixedUpdate,
        (
            age_boids,
            (breed, promote_to_doctors)
                .chain()
                .run_if(|c: Res<SimConfig>| c.population.enabled),
        )
            .chain()
            .in_set(PopulationSystems::Life),
    );
}

fn age_boids(time: Res<Time>, mut boids: Query<&mut Health>) {
    let dt = time.delta_secs_f64();
    let n = boids.iter().len();
    crate::for_each_item!(boids, n, |mut h| h.age += dt);
}

fn breed(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    neighbours: Neighbours,
    mut parents: Query<(&mut Breeding, &Health)>,
    mut caught: EventReader<Caught>,
    mut ids: ResMut<IdCounter>,
    mut tally: ResMut<Tally>,
    mut born: EventWriter<Born>,
    mut infected: EventWriter<Infected>,
    mut commands: Commands,
) {
    let s = &*neighbours.snapshot;
    // Boids caught this step do not breed in it (the removed ones are gone already; the
    // respawned ones are elsewhere); nor do those that died of the disease (gone too).
    let caught: Vec<u64> = caught.read().map(|c| c.prey).collect();
    let breeding: Vec<Option<(Breeding, f64)>> = s
        .entity
        .iter()
        .zip(&s.id)
        .map(|(e, id)| {
            let (b, h) = parents.get(*e).ok()?;
            (!caught.contains(id)).then_some((*b, h.age))
        })
        .collect();
    let dt = time.delta_secs_f64();
    let end = clock.time + dt;
    let index = neighbours.index();
    let (newborns, bred) = BreedingStep {
        snapshot: s,
        index: &index,
        breeding: &breeding,
        config: &config,
        step: clock.step,
        now: clock.time,
        dt,
    }
    .decide();
    for i in bred {
        if let Ok((mut b, _)) = parents.get_mut(s.entity[i]) {
            b.ready_at = end + config.population.cooldown;
        }
    }
    for n in newborns {
        let id = ids.take();
        let disease = if n.infected {
            Disease::Infected { since: end }
        } else {
            Disease::Susceptible
        };
        commands.spawn(boid(
            id,
            n.swarm,
            n.position,
            n.velocity,
            Health { disease, age: 0.0 },
            // Newborns breed once adult (`t_adult` old), like every boid.
            Breeding {
                sex: n.sex,
                ready_at: end,
            },
        ));
        tally.born[n.swarm.index()] += 1;
        born.write(Born {
            id,
            parents: (AgentId(s.id[n.parents.0]), AgentId(s.id[n.parents.1])),
            swarm: n.swarm,
            time: end,
        });
        if n.infected {
            infected.write(Infected {
                source: None,
                target: id,
                swarm: n.swarm,
                pos: n.position,
                cause: Cause::Born,
                time: end,
            });
        }
    }
}

/// An adult Normal becomes a Doctor with `p_become_doctor` per second (Antivax never do).
fn promote_to_doctors(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    mut boids: Query<(&AgentId, &Health, &mut Swarm)>,
    mut tally: ResMut<Tally>,
    mut promoted: EventWriter<Promoted>,
) {
    let p_step = step_probability(config.population.p_become_doctor, time.delta_secs_f64());
    if p_step <= 0.0 {
        return;
    }
    let end = clock.time + time.delta_secs_f64();
    let draws = Draws::new(config.seed, clock.step, Purpose::PROMOTE);
    let mut done: Vec<AgentId> = Vec::new();
    for (id, health, mut swarm) in &mut boids {
        if *swarm == Swarm::Normal
            && is_due(config.population.t_adult, health.age, time.delta_secs_f64())
            && draws.unit(id.0, 0) < p_step
        {
            *swarm = Swarm::Doctor;
            done.push(*id);
        }
    }
    done.sort_unstable();
    for id in done {
        tally.promoted += 1;
        promoted.write(Promoted { id, time: end });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::IndexKind;
    use crate::sim::neighbours::Row;
    use crate::sim::neighbours::test_support::AllBackends;
    use crate::sim::space::Space;
    use rand::SeedableRng;

    #[test]
    fn litter_sizes_follow_the_rounded_normal() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let n = 20_000;
        let sizes: Vec<u32> = (0..n).map(|_| litter_size(2.0, 1.0, &mut rng)).collect();
        let mean = sizes.iter().sum::<u32>() as f64 / n as f64;
        // E[max(0, round(N(2,1)))] ≈ 2.0 (the clamp adds ≈ 0.008); se ≈ 0.007.
        assert!((mean - 2.0).abs() < 0.04, "{mean}");
        assert_eq!(litter_size(1.0, 0.0, &mut rng), 1);
        assert_eq!(litter_size(-3.0, 0.0, &mut rng), 0);
    }

    /// An adult's age, s.
    const ADULT: f64 = 100.0;

    fn setup(sexes: &[(Vec2, Sex, bool)]) -> (AllBackends, Vec<Option<(Breeding, f64)>>) {
        let rows = sexes
            .iter()
            .enumerate()
            .map(|(k, &(pos, _, sick))| Row {
                entity: Entity::from_raw(k as u32),
                id: k as u64,
                pos,
                vel: Vec2::X,
                swarm: Swarm::Normal,
                disease: if sick {
                    Disease::Infected { since: 0.0 }
                } else {
                    Disease::Susceptible
                },
            })
            .collect();
        let b = AllBackends::new(
            Snapshot::from_rows(Space::torus(1000.0, 1000.0), rows),
            50.0,
        );
        let breeding = sexes
            .iter()
            .map(|&(_, sex, _)| Some((Breeding { sex, ready_at: 0.0 }, ADULT)))
            .collect();
        (b, breeding)
    }

    fn config(p: f64, cap: u32) -> SimConfig {
        let mut c = SimConfig::default();
        c.population.enabled = true;
        c.population.p_offspring_normal = p;
        c.population.litter_sd_normal = 0.0;
        c.population.litter_mean_normal = 2.0;
        c.population.max_population = cap;
        c.population.infected_offspring_factor = 1.0;
        c.epidemic.p_infect_normal = 1.0;
        c
    }

    #[test]
    fn opposite_sex_pairs_in_contact_breed_at_the_midpoint() {
        let (b, breeding) = setup(&[
            (Vec2::new(100.0, 100.0), Sex::Female, false),
            (Vec2::new(120.0, 100.0), Sex::Male, false),
            (Vec2::new(130.0, 100.0), Sex::Female, false), // same sex as 0, but pairs with nobody free
            (Vec2::new(600.0, 600.0), Sex::Male, false),   // too far
        ]);
        let c = config(1.0, 1000);
        let idx = b.get(IndexKind::Kdtree);
        let step = BreedingStep {
            snapshot: &b.snapshot,
            index: &idx,
            breeding: &breeding,
            config: &c,
            step: 0,
            now: 0.0,
            dt: 0.1,
        };
        let (kids, bred) = step.decide();
        assert_eq!(bred, vec![0, 1]);
        assert_eq!(kids.len(), 2);
        assert!(
            kids.iter()
                .all(|k| (k.position - Vec2::new(110.0, 100.0)).length() < 1e-3 && !k.infected)
        );
    }

    #[test]
    fn cap_cooldown_and_litter_infection() {
        let (b, mut breeding) = setup(&[
            (Vec2::new(100.0, 100.0), Sex::Female, true),
            (Vec2::new(110.0, 100.0), Sex::Male, true),
        ]);
        let idx = b.get(IndexKind::Kdtree);
        let c = config(1.0, 3);
        let step = BreedingStep {
            snapshot: &b.snapshot,
            index: &idx,
            breeding: &breeding,
            config: &c,
            step: 0,
            now: 0.0,
            dt: 0.1,
        };
        let (kids, _) = step.decide();
        assert_eq!(kids.len(), 1, "cap of 3 leaves room for one");
        assert!(kids[0].infected, "both parents infected, p_infect = 1");
        breeding[0] = breeding[0].map(|(b, age)| (Breeding { ready_at: 5.0, ..b }, age));
        let step = BreedingStep {
            snapshot: &b.snapshot,
            index: &idx,
            breeding: &breeding,
            config: &c,
            step: 0,
            now: 0.0,
            dt: 0.1,
        };
        assert!(
            step.decide().0.is_empty(),
            "a parent in cooldown does not breed"
        );
    }

    /// The newborns of one step over `breeding` with config `c`.
    fn kids(b: &AllBackends, breeding: &[Option<(Breeding, f64)>], c: &SimConfig) -> usize {
        let idx = b.get(IndexKind::Kdtree);
        BreedingStep {
            snapshot: &b.snapshot,
            index: &idx,
            breeding,
            config: c,
            step: 0,
            now: 0.0,
            dt: 0.1,
        }
        .decide()
        .0
        .len()
    }

    #[test]
    fn only_the_living_breed_and_only_they_count_against_the_cap() {
        let (b, mut breeding) = setup(&[
            (Vec2::new(100.0, 100.0), Sex::Female, false),
            (Vec2::new(110.0, 100.0), Sex::Male, false),
            (Vec2::new(500.0, 500.0), Sex::Male, false),
        ]);
        let c = config(1.0, 4);
        assert_eq!(kids(&b, &breeding, &c), 1, "3 alive, cap 4: room for one");
        // Boid 2 died this step: it is gone, so there is room for two.
        breeding[2] = None;
        assert_eq!(kids(&b, &breeding, &c), 2);
        // Boid 1 died (or was caught) this step: it does not breed, and nobody is "the
        // mother" in its place.
        breeding[1] = None;
        assert_eq!(kids(&b, &breeding, &c), 0);
    }

    #[test]
    fn an_infected_parent_lowers_the_pairs_chance_whichever_started_it() {
        // infected_offspring_factor 0: a pair with an infected parent never breeds, whether
        // the infected one has the lower id (the initiator) or the higher.
        let mut c = config(1.0, 1000);
        c.population.infected_offspring_factor = 0.0;
        for sick in [[true, false], [false, true]] {
            let (b, breeding) = setup(&[
                (Vec2::new(100.0, 100.0), Sex::Female, sick[0]),
                (Vec2::new(110.0, 100.0), Sex::Male, sick[1]),
            ]);
            assert_eq!(kids(&b, &breeding, &c), 0, "infected {sick:?}");
        }
    }

    #[test]
    fn boids_breed_from_age_t_adult_whether_born_or_spawned() {
        let (b, mut breeding) = setup(&[
            (Vec2::new(100.0, 100.0), Sex::Female, false),
            (Vec2::new(110.0, 100.0), Sex::Male, false),
        ]);
        let c = config(1.0, 1000);
        // The initial population starts at age 0: no births before t_adult (8.33 s).
        breeding[1] = breeding[1].map(|(b, _)| (b, 0.1));
        assert_eq!(kids(&b, &breeding, &c), 0);
        breeding[1] = breeding[1].map(|(b, _)| (b, c.population.t_adult));
        assert_eq!(kids(&b, &breeding, &c), 2);
    }
}
