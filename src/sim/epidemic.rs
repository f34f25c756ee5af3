//! The epidemic (docs/model.md §5): contact and spontaneous infection, cure by doctors, death or recovery
//! at `t_death`, and waning immunity — all rates per second, converted with the step's dt
//! (§5.1), all decided on the state at the start of the step (the snapshot), so results depend
//! neither on iteration order nor on thread count. Contacts come from the neighbour index.
//! `spread_infection` runs in `SimSystems::Epidemic`; `track_epidemic` keeps the run's
//! epidemic statistics in `SimSystems::Sample`. Who infected whom is published as `Infected`.

use bevy::prelude::*;
use serde::Serialize;

use crate::sim::schedule::SimSystems;
use crate::sim::agent::{AgentId, Disease, Health, RunStarted};
use crate::sim::clock::{SimClock, is_due};
use crate::sim::config::{EpidemicConfig, SimConfig};
use crate::sim::metrics::Tally;
use crate::sim::neighbours::{IndexRef, Neighbours, Snapshot};
use crate::sim::rng::{Purpose, draw_unit};
use crate::sim::swarm::Swarm;

/// How an infection began.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Infected when the run started (generation 0).
    Initial,
    /// By contact with an infected boid.
    Contact,
    /// Spontaneously (`p_spontaneous_infect`; an imported case, generation 0).
    Spontaneous,
    /// Born infected to two infected parents (generation 0: no single infector).
    Born,
}

impl Cause {
    /// The name written to `transmissions.csv`.
    pub fn key(self) -> &'static str {
        match self {
            Cause::Initial => "initial",
            Cause::Contact => "contact",
            Cause::Spontaneous => "spontaneous",
            Cause::Born => "born",
        }
    }
}

/// The infector of a contact infection, as the step saw it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Source {
    /// Its id.
    pub id: AgentId,
    /// Its swarm.
    pub swarm: Swarm,
    /// Where it was at the start of the step, px.
    pub pos: Vec2,
}

/// A boid was infected (by `source`, or with no infector when `None`).
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Infected {
    /// The infector, if by contact.
    pub source: Option<Source>,
    /// The newly infected boid.
    pub target: AgentId,
    /// Its swarm.
    pub swarm: Swarm,
    /// Where it was at the start of the step, px.
    pub pos: Vec2,
    /// How.
    pub cause: Cause,
    /// Simulated time at the end of the step, s.
    pub time: f64,
}

/// An infected boid survived `t_death` and recovered.
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Recovered {
    /// The boid.
    pub id: AgentId,
    /// Simulated time, s.
    pub time: f64,
}

/// A doctor cured a boid.
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Cured {
    /// The cured boid.
    pub patient: AgentId,
    /// The doctor.
    pub doctor: AgentId,
    /// Simulated time, s.
    pub time: f64,
}

/// A boid died of the disease (and was despawned).
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Died {
    /// The boid.
    pub id: AgentId,
    /// Its swarm.
    pub swarm: Swarm,
    /// Simulated time, s.
    pub time: f64,
}

/// `p_step = 1 − (1 − p)^dt`: a per-second probability over a step of `dt` seconds (§5.1).
#[inline]
pub fn step_probability(p_per_s: f64, dt: f64) -> f64 {
    if p_per_s >= 1.0 {
        1.0
    } else if p_per_s <= 0.0 || dt <= 0.0 {
        0.0
    } else {
        1.0 - libm::pow(1.0 - p_per_s, dt)
    }
}

/// What happens to one boid this step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transition {
    /// Susceptible or recovered → infected, by the boid in slot `source` or spontaneously.
    Infect {
        /// Slot of the infector.
        source: Option<usize>,
    },
    /// Infected → recovered, by the doctor in slot `doctor`.
    Cure {
        /// Slot of the doctor.
        doctor: usize,
    },
    /// Infected for `t_death`: dies.
    Die,
    /// Infected for `t_death`: survives and recovers.
    Recover,
    /// Recovered → susceptible: immunity has waned to zero.
    Wane,
}

/// Everything one epidemic step decides from.
pub struct EpidemicStep<'a> {
    /// State at the start of the step.
    pub snapshot: &'a Snapshot,
    /// Neighbour index over it.
    pub index: &'a IndexRef<'a>,
    /// Parameters.
    pub params: &'a EpidemicConfig,
    /// Run seed.
    pub seed: u64,
    /// Step number (draws differ every step).
    pub step: u64,
    /// Simulated time at the start of the step, s.
    pub now: f64,
    /// Step length, s.
    pub dt: f64,
}

impl EpidemicStep<'_> {
    /// Whether `source` can infect `target` given their swarms.
    fn swarms_mix(&self, target: usize, source: usize) -> bool {
        self.params.cross_swarm_infection
            || self.snapshot.swarm[target] == self.snapshot.swarm[source]
    }

    /// Per-second infection probability of `target` against a per-second pressure `p`,
    /// reduced by its current immunity (docs/model.md §5.2).
    fn susceptibility(&self, target: usize, p: f64) -> f64 {
        let immunity = self.snapshot.disease[target].immunity(self.now, self.params.t_immunity);
        p * (1.0 - immunity)
    }

    /// Whether infected `j` infects `i` this step (`p_plain`: each infector swarm's step
    /// probability against a target with no immunity).
    #[inline]
    fn infects(&self, i: usize, j: usize, p_plain: &[f64; 3]) -> bool {
        let s = self.snapshot;
        if i == j || s.disease[i].is_infected() || !self.swarms_mix(i, j) {
            return false;
        }
        let swarm = s.swarm[j];
        let p_step = if s.disease[i].is_susceptible() {
            p_plain[swarm.index()]
        } else {
            step_probability(self.susceptibility(i, self.params.p_infect(swarm)), self.dt)
        };
        p_step > 0.0 && draw_unit(self.seed, self.step, s.id[i], s.id[j], Purpose::INFECT) < p_step
    }

    /// Whether doctor `j` cures infected `i` this step (`p_step`: the doctor's cure
    /// probability over the step).
    #[inline]
    fn cures(&self, i: usize, j: usize, p_step: f64) -> bool {
        let s = self.snapshot;
        i != j
            && s.disease[i].is_infected()
            && draw_unit(self.seed, self.step, s.id[i], s.id[j], Purpose::CURE) < p_step
    }

    /// Every (target, source) pair that `decides(target, source)` accepts among the targets
    /// (slots passing `is_target`) within `radius(source)` of each source that passes
    /// `is_source`, in any order: callers resolve them order-free. One batched traversal of
    /// the sources' neighbourhoods; `few_targets` as in [`IndexRef::map_near`].
    fn pairs_within(
        &self,
        few_targets: bool,
        is_source: impl Fn(usize) -> bool + Sync,
        is_target: impl Fn(usize) -> bool + Sync,
        radius: impl Fn(usize) -> f32 + Sync,
        decides: impl Fn(usize, usize) -> bool + Sync,
    ) -> Vec<(usize, usize)> {
        let s = self.snapshot;
        let reach = (0..s.len())
            .filter(|&j| is_source(j))
            .map(&radius)
            .fold(0.0, f32::max);
        let by_source: Vec<Vec<(usize, usize)>> =
            self.index
                .map_near(s, reach, few_targets, &is_source, &is_target, |j, near| {
                    let mut out = Vec::new();
                    near.for_each_within(s.pos[j], radius(j), |i, _| {
                        if decides(i, j) {
                            out.push((i, j));
                        }
                    });
                    out
                });
        by_source.into_iter().flatten().collect()
    }

    /// Every (target, infector) pair of the step's contact infections (docs/model.md §5.2): each
    /// infected boid tries every boid it can infect within its (debuffed) contact radius.
    pub fn contact_pairs(&self) -> Vec<(usize, usize)> {
        let s = self.snapshot;
        // Most targets have no immunity: convert each swarm's probability once.
        let p_plain = Swarm::ALL.map(|sw| step_probability(self.params.p_infect(sw), self.dt));
        self.pairs_within(
            false,
            |j| s.disease[j].is_infected(),
            |i| !s.disease[i].is_infected(),
            |j| self.params.contact_radius(s.swarm[j], true),
            |i, j| self.infects(i, j, &p_plain),
        )
    }

    /// Every (patient, doctor) pair of the step's cures (docs/model.md §5.2): each doctor tries
    /// every infected boid within its (debuffed) radius, never itself.
    pub fn cure_pairs(&self) -> Vec<(usize, usize)> {
        let s = self.snapshot;
        let p_step = |sick: bool| {
            let p = if sick {
                self.params.p_cure * self.params.infected_cure_factor
            } else {
                self.params.p_cure
            };
            step_probability(p, self.dt)
        };
        let (p_well, p_sick) = (p_step(false), p_step(true));
        let doctor_p = |j: usize| {
            if s.disease[j].is_infected() {
                p_sick
            } else {
                p_well
            }
        };
        self.pairs_within(
            false,
            |j| s.swarm[j] == Swarm::Doctor && doctor_p(j) > 0.0,
            |i| s.disease[i].is_infected(),
            |j| {
                self.params
                    .contact_radius(Swarm::Doctor, s.disease[j].is_infected())
            },
            |i, j| self.cures(i, j, doctor_p(j)),
        )
    }

    /// What happens to slot `i` this step, given who (if anyone) infects or cures it.
    pub fn transition(
        &self,
        i: usize,
        infector: Option<usize>,
        curer: Option<usize>,
    ) -> Option<Transition> {
        let s = self.snapshot;
        let id = s.id[i];
        let end = self.now + self.dt;
        match s.disease[i] {
            Disease::Infected { since } => {
                if let Some(doctor) = curer {
                    return Some(Transition::Cure { doctor });
                }
                if !is_due(since + self.params.t_death, end, self.dt) {
                    return None;
                }
                let dies =
                    draw_unit(self.seed, self.step, id, 0, Purpose::DEATH) < self.params.p_death;
                Some(if dies {
                    Transition::Die
                } else {
                    Transition::Recover
                })
            }
            d => {
                if let Some(source) = infector {
                    return Some(Transition::Infect {
                        source: Some(source),
                    });
                }
                let p_spont = self.params.p_spontaneous_infect;
                if p_spont > 0.0 {
                    let p_step = step_probability(self.susceptibility(i, p_spont), self.dt);
                    if draw_unit(self.seed, self.step, id, 0, Purpose::SPONTANEOUS) < p_step {
                        return Some(Transition::Infect { source: None });
                    }
                }
                d.immunity_ends(self.params.t_immunity)
                    .is_some_and(|due| is_due(due, end, self.dt))
                    .then_some(Transition::Wane)
            }
        }
    }

    /// Decides every transition of the step, in slot order.
    pub fn decide(&self) -> Vec<(usize, Transition)> {
        let n = self.snapshot.len();
        let infector = lowest_partner(n, self.contact_pairs());
        let curer = lowest_partner(n, self.cure_pairs());
        (0..n)
            .filter_map(|i| self.transition(i, infector[i], curer[i]).map(|t| (i, t)))
            .collect()
    }
}

/// For each of `n` slots, the lowest-slot partner among `pairs` (slot, partner): the lowest
/// id wins when several infect or cure the same boid, so the outcome is order-free.
pub fn lowest_partner(n: usize, pairs: Vec<(usize, usize)>) -> Vec<Option<usize>> {
    let mut out: Vec<Option<usize>> = vec![None; n];
    for (i, j) in pairs {
        out[i] = Some(out[i].map_or(j, |k| k.min(j)));
    }
    out
}

/// The run's epidemic record (docs/model.md §8 run summary).
#[derive(Resource, Clone, Debug, Default, Serialize)]
pub struct EpidemicStats {
    /// Ids infected at t = 0.
    pub first_cohort: Vec<u64>,
    /// Infections caused by the first cohort during their initial infection.
    pub cohort_infections: u64,
    /// By id: a member of the first cohort still in its initial infection (cleared when that
    /// infection ends, so a later reinfection does not count).
    #[serde(skip)]
    in_first_infection: Vec<bool>,
    /// Contact infections.
    pub contact_infections: u64,
    /// Spontaneous infections.
    pub spontaneous_infections: u64,
    /// Cures.
    pub cures: u64,
    /// Deaths.
    pub deaths: u64,
    /// Natural recoveries at `t_death`.
    pub recoveries: u64,
    /// Distinct boids ever infected.
    pub ever_infected: u64,
    /// Peak of I: count.
    pub peak_infected: u64,
    /// Peak of I as a fraction of the living.
    pub peak_fraction: f64,
    /// When the peak (first) happened, s.
    pub peak_time_s: f64,
    /// First time I = 0 after being > 0, s.
    pub eradication_time_s: Option<f64>,
    #[serde(skip)]
    seen: Vec<bool>,
    #[serde(skip)]
    had_infection: bool,
    #[serde(skip)]
    started: bool,
}

impl EpidemicStats {
    /// Mean secondary infections per member of the first cohort (`None` if it was empty).
    pub fn mean_secondary_infections(&self) -> Option<f64> {
        (!self.first_cohort.is_empty())
            .then(|| self.cohort_infections as f64 / self.first_cohort.len() as f64)
    }

    /// Whether boid `id` is in the first cohort's initial infection.
    pub fn in_first_infection(&self, id: u64) -> bool {
        self.in_first_infection
            .get(id as usize)
            .copied()
            .unwrap_or(false)
    }

    fn mark(&mut self, id: u64) {
        let k = id as usize;
        if self.seen.len() <= k {
            self.seen.resize(k + 1, false);
        }
        if !self.seen[k] {
            self.seen[k] = true;
            self.ever_infected += 1;
        }
    }
}

pub(super) fn plugin(app: &mut App) {
    app.add_event::<Infected>()
        .add_event::<Cured>()
        .add_event::<Died>()
        .add_event::<Recovered>()
        .init_resource::<EpidemicStats>()
        .add_observer(|_: Trigger<RunStarted>, mut stats: ResMut<EpidemicStats>| {
            *stats = EpidemicStats::default();
        })
        .add_systems(FixedUpdate, track_epidemic.in_set(SimSystems::Sample))
        .add_systems(FixedUpdate, spread_infection.in_set(SimSystems::Epidemic));
}

/// Peak, eradication and the first cohort, from the state at the start of each step.
fn track_epidemic(clock: Res<SimClock>, neighbours: Neighbours, mut stats: ResMut<EpidemicStats>) {
    let s = &*neighbours.snapshot;
    if !stats.started {
        stats.started = true;
        for i in 0..s.len() {
            if s.disease[i].is_infected() {
                let id = s.id[i];
                stats.first_cohort.push(id);
                if stats.in_first_infection.len() <= id as usize {
                    stats.in_first_infection.resize(id as usize + 1, false);
                }
                stats.in_first_infection[id as usize] = true;
            }
        }
    }
    let mut infected = 0u64;
    for i in 0..s.len() {
        if s.disease[i].is_infected() {
            infected += 1;
            // Every infection (contact, spontaneous, born infected) shows in the next snapshot,
            // so this one place counts the boids ever infected.
            stats.mark(s.id[i]);
        }
    }
    if infected > stats.peak_infected {
        stats.peak_infected = infected;
        stats.peak_fraction = infected as f64 / s.len().max(1) as f64;
        stats.peak_time_s = clock.time;
    }
    if infected > 0 {
        stats.had_infection = true;
    } else if stats.had_infection && stats.eradication_time_s.is_none() {
        stats.eradication_time_s = Some(clock.time);
    }
}

/// Applies one step of the epidemic.
fn spread_infection(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    neighbours: Neighbours,
    mut boids: Query<&mut Health>,
    mut commands: Commands,
    mut tally: ResMut<Tally>,
    mut stats: ResMut<EpidemicStats>,
    mut infected_events: EventWriter<Infected>,
    mut cured_events: EventWriter<Cured>,
    mut died_events: EventWriter<Died>,
    mut recovered_events: EventWriter<Recovered>,
) {
    let s = &*neighbours.snapshot;
    let index = neighbours.index();
    let dt = time.delta_secs_f64();
    let step = EpidemicStep {
        snapshot: s,
        index: &index,
        params: &config.epidemic,
        seed: config.seed,
        step: clock.step,
        now: clock.time,
        dt,
    };
    let end = clock.time + dt;
    // First-cohort infections that end this step; their flags clear after the step, so every
    // decision of the step sees the state at its start.
    let mut cohort_ended = Vec::new();
    for (i, transition) in step.decide() {
        let Ok(mut health) = boids.get_mut(s.entity[i]) else {
            continue;
        };
        let id = AgentId(s.id[i]);
        if !matches!(transition, Transition::Infect { .. }) && stats.in_first_infection(id.0) {
            cohort_ended.push(id.0);
        }
        match transition {
            Transition::Infect { source } => {
                health.disease = Disease::Infected { since: end };
                match source {
                    Some(j) => {
                        stats.contact_infections += 1;
                        if stats.in_first_infection(s.id[j]) {
                            stats.cohort_infections += 1;
                        }
                    }
                    None => stats.spontaneous_infections += 1,
                }
                infected_events.write(Infected {
                    source: source.map(|j| Source {
                        id: AgentId(s.id[j]),
                        swarm: s.swarm[j],
                        pos: s.pos[j],
                    }),
                    target: id,
                    swarm: s.swarm[i],
                    pos: s.pos[i],
                    cause: if source.is_some() {
                        Cause::Contact
                    } else {
                        Cause::Spontaneous
                    },
                    time: end,
                });
            }
            Transition::Cure { doctor } => {
                health.disease = Disease::Recovered {
                    since: end,
                    immunity: config.epidemic.cure_immunity_level,
                };
                stats.cures += 1;
                cured_events.write(Cured {
                    patient: id,
                    doctor: AgentId(s.id[doctor]),
                    time: end,
                });
            }
            Transition::Recover => {
                health.disease = Disease::Recovered {
                    since: end,
                    immunity: config.epidemic.cure_immunity_level,
                };
                stats.recoveries += 1;
                recovered_events.write(Recovered { id, time: end });
            }
            Transition::Wane => health.disease = Disease::Susceptible,
            Transition::Die => {
                commands.entity(s.entity[i]).despawn();
                tally.dead[s.swarm[i].index()] += 1;
                stats.deaths += 1;
                died_events.write(Died {
                    id,
                    swarm: s.swarm[i],
                    time: end,
                });
            }
        }
    }
    for id in cohort_ended {
        stats.in_first_infection[id as usize] = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::IndexKind;
    use crate::sim::neighbours::Row;
    use crate::sim::neighbours::test_support::AllBackends;
    use crate::sim::space::Space;

    #[test]
    fn step_probability_compounds_to_the_per_second_rate() {
        for p in [0.0, 0.1, 0.5, 0.8, 1.0] {
            for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
                let q = step_probability(p, dt);
                let steps = (1.0 / dt).round() as i32;
                let survive_one_second = (1.0 - q).powi(steps);
                assert!((1.0 - survive_one_second - p).abs() < 1e-9, "p={p} dt={dt}");
            }
        }
        assert_eq!(step_probability(0.5, 1.0), 0.5);
        assert_eq!(step_probability(0.5, 0.0), 0.0);
    }

    pub(crate) fn world(boids: &[(Vec2, Swarm, Disease)]) -> AllBackends {
        let rows = boids
            .iter()
            .enumerate()
            .map(|(k, &(pos, swarm, disease))| Row {
                entity: Entity::from_raw(k as u32),
                id: k as u64,
                pos,
                vel: Vec2::X,
                swarm,
                disease,
            })
            .collect();
        AllBackends::new(
            Snapshot::from_rows(Space::torus(1000.0, 1000.0), rows),
            50.0,
        )
    }

    fn decide(
        b: &AllBackends,
        params: &EpidemicConfig,
        step: u64,
        now: f64,
        dt: f64,
    ) -> Vec<(usize, Transition)> {
        decide_seeded(b, params, 7, step, now, dt)
    }

    fn decide_seeded(
        b: &AllBackends,
        params: &EpidemicConfig,
        seed: u64,
        step: u64,
        now: f64,
        dt: f64,
    ) -> Vec<(usize, Transition)> {
        let index = b.get(IndexKind::Kdtree);
        EpidemicStep {
            snapshot: &b.snapshot,
            index: &index,
            params,
            seed,
            step,
            now,
            dt,
        }
        .decide()
    }

    const I0: Disease = Disease::Infected { since: 0.0 };
    const S: Disease = Disease::Susceptible;

    #[test]
    fn certain_infection_within_radius_only() {
        let mut params = EpidemicConfig {
            p_infect_normal: 1.0,
            ..default()
        };
        params.t_death = f64::INFINITY;
        let b = world(&[
            (Vec2::new(100.0, 100.0), Swarm::Normal, I0),
            (Vec2::new(120.0, 100.0), Swarm::Normal, S), // 20 < 30·0.8 = 24
            (Vec2::new(125.0, 100.0), Swarm::Normal, S), // 25 > 24
            (Vec2::new(85.0, 100.0), Swarm::Doctor, S),  // other swarm
        ]);
        let t = decide(&b, &params, 0, 0.0, 1.0 / 60.0);
        assert_eq!(t, vec![(1, Transition::Infect { source: Some(0) })]);
        params.cross_swarm_infection = true;
        let t = decide(&b, &params, 0, 0.0, 1.0 / 60.0);
        assert_eq!(
            t,
            vec![
                (1, Transition::Infect { source: Some(0) }),
                (3, Transition::Infect { source: Some(0) })
            ]
        );
    }

    #[test]
    fn infection_reaches_across_the_seam() {
        let params = EpidemicConfig {
            p_infect_normal: 1.0,
            ..default()
        };
        let b = world(&[
            (Vec2::new(995.0, 995.0), Swarm::Normal, I0),
            (Vec2::new(5.0, 5.0), Swarm::Normal, S),
        ]);
        assert_eq!(
            decide(&b, &params, 0, 0.0, 0.01),
            vec![(1, Transition::Infect { source: Some(0) })]
        );
    }

    #[test]
    fn doctors_cure_any_swarm_but_never_themselves() {
        let params = EpidemicConfig {
            p_cure: 1.0,
            p_infect_normal: 0.0,
            p_infect_doctor: 0.0,
            ..default()
        };
        let b = world(&[
            (Vec2::new(500.0, 500.0), Swarm::Doctor, S),
            (Vec2::new(520.0, 500.0), Swarm::Normal, I0),
            (Vec2::new(480.0, 500.0), Swarm::Antivax, I0),
            (Vec2::new(500.0, 530.0), Swarm::Doctor, I0), // cured by doctor 0 (30 < 40)
            (Vec2::new(500.0, 470.0), Swarm::Normal, S),  // healthy: no-op
            (Vec2::new(100.0, 100.0), Swarm::Doctor, I0), // alone: never cured
        ]);
        let t = decide(&b, &params, 0, 0.0, 0.01);
        assert_eq!(
            t,
            vec![
                (1, Transition::Cure { doctor: 0 }),
                (2, Transition::Cure { doctor: 0 }),
                (3, Transition::Cure { doctor: 0 }),
            ]
        );
    }

    #[test]
    fn an_infected_doctor_cures_within_its_debuffed_radius() {
        let params = EpidemicConfig {
            p_cure: 1.0,
            infected_cure_factor: 1.0,
            p_infect_doctor: 0.0,
            p_infect_normal: 0.0,
            ..default()
        };
        let b = world(&[
            (Vec2::new(500.0, 500.0), Swarm::Doctor, I0),
            (Vec2::new(527.0, 500.0), Swarm::Normal, I0), // 27 < 40·0.7 = 28
            (Vec2::new(470.0, 500.0), Swarm::Normal, I0), // 30 > 28
        ]);
        assert_eq!(
            decide(&b, &params, 0, 0.0, 0.01),
            vec![(1, Transition::Cure { doctor: 0 })]
        );
    }

    #[test]
    fn death_or_recovery_at_t_death() {
        let mut params = EpidemicConfig {
            p_infect_normal: 0.0,
            t_death: 5.0,
            p_death: 1.0,
            ..default()
        };
        let b = world(&[(Vec2::new(100.0, 100.0), Swarm::Normal, I0)]);
        // Step ending at 4.99 s: nothing; ending at 5.0 s: dies.
        assert!(decide(&b, &params, 299, 4.98, 0.01).is_empty());
        assert_eq!(
            decide(&b, &params, 300, 4.99, 0.01),
            vec![(0, Transition::Die)]
        );
        params.p_death = 0.0;
        assert_eq!(
            decide(&b, &params, 300, 4.99, 0.01),
            vec![(0, Transition::Recover)]
        );
        params.t_death = f64::INFINITY;
        assert!(decide(&b, &params, 300, 1e6, 0.01).is_empty());
    }

    #[test]
    fn immunity_wanes_and_lowers_susceptibility() {
        let params = EpidemicConfig {
            p_infect_normal: 1.0,
            t_immunity: 10.0,
            t_death: f64::INFINITY,
            ..default()
        };
        // Full immunity: p·(1 − 1) = 0, never infected.
        let b = world(&[
            (Vec2::new(100.0, 100.0), Swarm::Normal, I0),
            (
                Vec2::new(110.0, 100.0),
                Swarm::Normal,
                Disease::Recovered {
                    since: 0.0,
                    immunity: 1.0,
                },
            ),
        ]);
        assert!(decide(&b, &params, 0, 0.0, 0.01).is_empty());
        // Half-waned at t = 5: p = 0.5 per second.
        let mut hits = 0;
        let trials = 4000;
        for step in 0..trials {
            if !decide(&b, &params, step, 5.0, 1.0).is_empty() {
                hits += 1;
            }
        }
        let rate = hits as f64 / trials as f64;
        assert!((rate - 0.5).abs() < 0.03, "{rate}");
        // Waned completely at 10 s: back to susceptible.
        let lone = world(&[(
            Vec2::new(100.0, 100.0),
            Swarm::Normal,
            Disease::Recovered {
                since: 0.0,
                immunity: 1.0,
            },
        )]);
        assert!(decide(&lone, &params, 0, 9.0, 0.5).is_empty());
        assert_eq!(
            decide(&lone, &params, 0, 9.5, 0.5),
            vec![(0, Transition::Wane)]
        );
    }

    #[test]
    fn lowest_id_infector_wins() {
        let params = EpidemicConfig {
            p_infect_normal: 1.0,
            ..default()
        };
        let b = world(&[
            (Vec2::new(100.0, 100.0), Swarm::Normal, I0),
            (Vec2::new(110.0, 100.0), Swarm::Normal, S),
            (Vec2::new(120.0, 100.0), Swarm::Normal, I0),
        ]);
        assert_eq!(
            decide(&b, &params, 0, 0.0, 0.01)[0],
            (1, Transition::Infect { source: Some(0) })
        );
    }

    /// Fraction of seeded trials in which slot `target` changes state within `seconds`, the
    /// pair held still, stepping at `dt`.
    fn fraction_changed(
        b: &AllBackends,
        params: &EpidemicConfig,
        dt: f64,
        seconds: f64,
        trials: u64,
    ) -> f64 {
        let steps = (seconds / dt).round() as u64;
        let mut hits = 0;
        for seed in 0..trials {
            for k in 0..steps {
                if !decide_seeded(b, params, 1000 + seed, k, k as f64 * dt, dt).is_empty() {
                    hits += 1;
                    break;
                }
            }
        }
        hits as f64 / trials as f64
    }

    /// Per-second rates hold at every dt. 2000 trials per case: the binomial standard error of
    /// a fraction near 0.5 is ≤ 0.0112, so a tolerance of 0.045 is four standard errors. Two
    /// wrong conversions must fall outside it: the per-second p applied per frame (≈ 1.0 after
    /// a second) and `p·dt` per step (≈ 1 − e^−p after a second); [`assert_rate`] checks that
    /// each case's p is one where the second is detectable.
    const TRIALS: u64 = 2000;
    const TOLERANCE: f64 = 0.045;

    /// The fraction changed within one second under the wrong conversion `p·dt` per step.
    fn linear_conversion(p: f64, dt: f64) -> f64 {
        1.0 - (1.0 - p * dt).powf(1.0 / dt)
    }

    /// `f` (measured within one second) matches the per-second `p`, and the test could tell
    /// `p` from the `p·dt` conversion.
    fn assert_rate(f: f64, p: f64, dt: f64, what: &str) {
        assert!(
            (f - p).abs() < TOLERANCE,
            "{what}, dt = {dt}: changed within 1 s in {f} of trials, expected {p}"
        );
        let wrong = linear_conversion(p, dt);
        assert!(
            (wrong - p).abs() > 2.0 * TOLERANCE,
            "{what}: p = {p} cannot tell the p·dt conversion ({wrong}) apart"
        );
    }

    #[test]
    fn contact_infection_rate_is_per_second_at_every_dt() {
        let params = EpidemicConfig {
            p_infect_normal: 0.5,
            t_death: f64::INFINITY,
            ..default()
        };
        let b = world(&[
            (Vec2::new(100.0, 100.0), Swarm::Normal, I0),
            (Vec2::new(115.0, 100.0), Swarm::Normal, S),
        ]);
        for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
            let f = fraction_changed(&b, &params, dt, 1.0, TRIALS);
            assert_rate(f, 0.5, dt, "contact infection");
        }
    }

    #[test]
    fn cure_rate_is_per_second_at_every_dt() {
        let params = EpidemicConfig {
            p_cure: 0.8,
            p_infect_normal: 0.0,
            p_infect_doctor: 0.0,
            t_death: f64::INFINITY,
            ..default()
        };
        let b = world(&[
            (Vec2::new(100.0, 100.0), Swarm::Doctor, S),
            (Vec2::new(130.0, 100.0), Swarm::Normal, I0),
        ]);
        for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
            let f = fraction_changed(&b, &params, dt, 1.0, TRIALS);
            assert_rate(f, 0.8, dt, "cure");
        }
        // An infected doctor cures at half the rate: p_cure 1.0 × 0.5 = 0.5 per second.
        let params = EpidemicConfig {
            p_cure: 1.0,
            ..params
        };
        let b = world(&[
            (Vec2::new(100.0, 100.0), Swarm::Doctor, I0),
            (Vec2::new(120.0, 100.0), Swarm::Normal, I0),
        ]);
        let f = fraction_changed(&b, &params, 1.0 / 60.0, 1.0, TRIALS);
        // The doctor itself is never cured (it is alone with a Normal), so only slot 1 changes.
        assert_rate(f, 0.5, 1.0 / 60.0, "cure by an infected doctor");
    }

    #[test]
    fn spontaneous_infection_rate_is_per_second_at_every_dt() {
        // 0.6 per second: `p·dt` per step would give 1 − e^−0.6 = 0.45 within a second.
        let params = EpidemicConfig {
            p_spontaneous_infect: 0.6,
            ..default()
        };
        let b = world(&[(Vec2::new(100.0, 100.0), Swarm::Normal, S)]);
        for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
            let f = fraction_changed(&b, &params, dt, 1.0, TRIALS);
            assert_rate(f, 0.6, dt, "spontaneous infection");
        }
    }
}
