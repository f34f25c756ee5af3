//! The epidemic's rules as pure functions over the step's snapshot (docs/model.md §5.1–5.2):
//! the per-step probability of a per-second rate, every contact and cure pair of a step found
//! in one traversal of the neighbourhoods, and each boid's transition. No systems live here.

use bevy::prelude::*;

use crate::sim::agent::Disease;
use crate::sim::clock::is_due;
use crate::sim::config::{EpidemicConfig, SimConfig};
use crate::sim::neighbours::{IndexRef, NeighbourIndex, Snapshot, SubsetIndex, Targets};
use crate::sim::parallel::{map_chunks, map_light_chunks};
use crate::sim::rng::{Draws, Purpose};
use crate::sim::swarm::Swarm;

/// Below one source in this many boids, [`EpidemicStep`] queries around each source instead of
/// traversing every neighbourhood.
const FEW_SOURCES: usize = 8;
/// How many sources ahead [`EpidemicStep::query_each`] asks for a source's data: four queries,
/// over a microsecond, take longer than a load from memory (not tuned further).
const AHEAD: usize = 4;
/// At most this many of a query's hits [`EpidemicStep::query_each`] holds before deciding on
/// them (a contact search has a handful; more are decided this many at a time).
const HITS_AT_ONCE: usize = 32;

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

/// How far above a bound a draw must be for [`falls_below`] to answer without the power: far
/// more than the rounding of `1 − (1 − p)^dt` (a few 1e-16), far less than any probability
/// that matters.
const BOUND_MARGIN: f64 = 1e-12;

/// Whether draw `u` falls below `step_probability(p_per_s, dt)`, given `bound`, the step
/// probability of a rate `p_max` at least `p_per_s`. The step probability grows with the rate,
/// so a draw above the bound (nearly every draw, for small rates) is above it too: the answer
/// is then given without working out the power, and is always the one the power gives.
#[inline]
pub fn falls_below(u: f64, p_per_s: f64, p_max: f64, bound: f64, dt: f64) -> bool {
    if p_per_s <= p_max && u >= bound + BOUND_MARGIN {
        return false;
    }
    u < step_probability(p_per_s, dt)
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

/// Whether an infected boid of swarm `source` can infect a boid of swarm `target` by contact
/// (docs/model.md §5.2): Normal and Antivax boids are one population for transmission (Antivax
/// are Normal people who refuse doctors); between Doctors and the others only with
/// `cross_swarm_infection`.
pub fn swarms_mix(params: &EpidemicConfig, target: Swarm, source: Swarm) -> bool {
    let doctor = |s: Swarm| s == Swarm::Doctor;
    params.cross_swarm_infection || doctor(target) == doctor(source)
}

/// Which swarms can be infected at all under `config` — the population at risk that the
/// attack rate is a share of: a swarm is at risk if its boids can start infected, catch it
/// spontaneously, catch it by contact from a swarm at risk, or become Doctors (promotion keeps
/// the disease) from a swarm at risk. By `Swarm::index()`.
pub fn swarms_at_risk(config: &SimConfig) -> [bool; 3] {
    let e = &config.epidemic;
    let mut risk = Swarm::ALL.map(|s| {
        let initial = match s {
            Swarm::Doctor => e.p_initial_infect_doctor,
            Swarm::Normal | Swarm::Antivax => e.p_initial_infect_normal,
        };
        initial > 0.0 || e.p_spontaneous_infect > 0.0
    });
    // Spread the risk along contact (and promotion) until nothing changes.
    loop {
        let mut grew = false;
        for target in Swarm::ALL {
            if risk[target.index()] {
                continue;
            }
            let by_contact = Swarm::ALL.iter().any(|&source| {
                risk[source.index()] && e.p_infect(source) > 0.0 && swarms_mix(e, target, source)
            });
            let promoted = target == Swarm::Doctor
                && config.population.enabled
                && config.population.p_become_doctor > 0.0
                && risk[Swarm::Normal.index()];
            if by_contact || promoted {
                risk[target.index()] = true;
                grew = true;
            }
        }
        if !grew {
            return risk;
        }
    }
}

/// What every boid's transition shares in one step, worked out once
/// ([`EpidemicStep::per_step`]).
#[derive(Clone, Copy, Debug)]
pub struct PerStep {
    /// The step probability of `p_spontaneous_infect` for a boid with no immunity
    /// ([`step_probability`]).
    pub p_spontaneous: f64,
    /// The step's spontaneous-infection draws.
    pub spontaneous: Draws,
    /// The step's death-or-recovery draws.
    pub death: Draws,
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
        swarms_mix(
            self.params,
            self.snapshot.swarm[target],
            self.snapshot.swarm[source],
        )
    }

    /// Per-second infection probability of `target` against a per-second pressure `p`,
    /// reduced by its current immunity (docs/model.md §5.2).
    fn susceptibility(&self, target: usize, p: f64) -> f64 {
        let immunity = self
            .snapshot
            .disease
            .get(target)
            .immunity(self.now, self.params.t_immunity);
        p * (1.0 - immunity)
    }

    /// Whether infected `j` infects `i` this step (`p_plain`: each infector swarm's step
    /// probability against a target with no immunity; `draws`: the step's infection draws).
    #[inline]
    fn infects(&self, i: usize, j: usize, p_plain: &[f64; 3], draws: Draws) -> bool {
        let s = self.snapshot;
        if i == j || s.disease.is_infected(i) || !self.swarms_mix(i, j) {
            return false;
        }
        let swarm = s.swarm[j];
        let plain = p_plain[swarm.index()];
        if plain <= 0.0 {
            return false;
        }
        let u = draws.unit(s.id[i], s.id[j]);
        if s.disease.get(i).is_susceptible() {
            return u < plain;
        }
        // Immunity lowers the rate: the power only for the rare draw below the plain one.
        let p = self.params.p_infect(swarm);
        falls_below(u, self.susceptibility(i, p), p, plain, self.dt)
    }

    /// Whether doctor `j` cures infected `i` this step (`p_step`: the doctor's cure
    /// probability over the step; `draws`: the step's cure draws).
    #[inline]
    fn cures(&self, i: usize, j: usize, p_step: f64, draws: Draws) -> bool {
        let s = self.snapshot;
        i != j && s.disease.is_infected(i) && draws.unit(s.id[i], s.id[j]) < p_step
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
        let sources: Vec<usize> = (0..s.len()).filter(|&j| is_source(j)).collect();
        // Nothing to traverse without a source or a target (no one infected, say).
        if sources.is_empty() || !(0..s.len()).any(&is_target) {
            return Vec::new();
        }
        let reach = sources.iter().map(|&j| radius(j)).fold(0.0, f32::max);
        // A few sources (early in an outbreak, a handful of doctors): one query each, rather
        // than a traversal of every boid's neighbourhood; where the targets are few as well (the
        // infected a doctor may cure), the queries go to a grid of the targets alone, so they
        // examine targets only. The pairs are the same set (every index reports the same boids;
        // callers resolve them order-free).
        if sources.len() * FEW_SOURCES < s.len() {
            let targets = (0..s.len()).filter(|&i| is_target(i)).count();
            if targets * FEW_SOURCES < s.len() {
                let mut subset = SubsetIndex::default();
                subset.rebuild(s, reach, &is_target);
                return self.query_each(&sources, &subset, &is_target, &radius, &decides);
            }
            return self.query_each(&sources, self.index, &is_target, &radius, &decides);
        }
        // Most sources pass nothing on in a step: their entry is one null pointer, not an
        // empty list's 24 bytes.
        let by_source: Vec<Option<Box<Vec<(usize, usize)>>>> = self.index.map_near(
            s,
            reach,
            few_targets,
            &is_source,
            Targets::Where(&is_target),
            |j, near| {
                let mut out = Vec::new();
                near.for_each_within(near.source(s, j).0, radius(j), |i, _| {
                    if decides(i, j) {
                        out.push((i, j));
                    }
                });
                (!out.is_empty()).then(|| Box::new(out))
            },
        );
        by_source
            .into_iter()
            .flatten()
            .flat_map(|pairs| *pairs)
            .collect()
    }

    /// The pairs `decides` accepts among the targets within `radius(j)` of each source `j` of
    /// `sources`, by one query of `index` per source, in parallel. What the decisions read is
    /// asked for ahead ([`Snapshot::prefetch`]): the position, id, disease words and swarm of
    /// the source [`AHEAD`] places on, and the id, disease words and swarm of each of a query's
    /// hits before any of them is decided on. The sources are a few of the boids, scattered
    /// over the slots with no pattern the hardware could follow; the hits lie anywhere in the
    /// snapshot. Hits are decided in the order the query reports them.
    fn query_each(
        &self,
        sources: &[usize],
        index: &(impl NeighbourIndex + Sync),
        is_target: &(impl Fn(usize) -> bool + Sync),
        radius: &(impl Fn(usize) -> f32 + Sync),
        decides: &(impl Fn(usize, usize) -> bool + Sync),
    ) -> Vec<(usize, usize)> {
        let s = self.snapshot;
        // Some of source `j`'s hits, all of them asked for, then decided on.
        let decide = |j: usize, hits: &[u32], out: &mut Vec<(usize, usize)>| {
            for &i in hits {
                s.prefetch(i as usize, false);
            }
            for &i in hits {
                let i = i as usize;
                if is_target(i) && decides(i, j) {
                    out.push((i, j));
                }
            }
        };
        map_chunks(sources.len(), |range| {
            let mut out = Vec::new();
            let mut hits = [0u32; HITS_AT_ONCE];
            let chunk = &sources[range];
            for (k, &j) in chunk.iter().enumerate() {
                if let Some(&next) = chunk.get(k + AHEAD) {
                    s.prefetch(next, true);
                }
                let mut len = 0;
                index.for_each_within(s.pos[j], radius(j), |i, _| {
                    hits[len] = i as u32;
                    len += 1;
                    if len == HITS_AT_ONCE {
                        decide(j, &hits, &mut out);
                        len = 0;
                    }
                });
                decide(j, &hits[..len], &mut out);
            }
            out
        })
    }

    /// Every (target, infector) pair of the step's contact infections (docs/model.md §5.2): each
    /// infected boid tries every boid it can infect within its (debuffed) contact radius.
    pub fn contact_pairs(&self) -> Vec<(usize, usize)> {
        let s = self.snapshot;
        // Most targets have no immunity: convert each swarm's probability once.
        let p_plain = Swarm::ALL.map(|sw| step_probability(self.params.p_infect(sw), self.dt));
        let draws = self.draws(Purpose::INFECT);
        self.pairs_within(
            false,
            |j| s.is_contagious(j),
            |i| !s.disease.is_infected(i),
            |j| self.params.contact_radius(s.swarm[j], true),
            |i, j| self.infects(i, j, &p_plain, draws),
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
        let draws = self.draws(Purpose::CURE);
        let doctor_p = |j: usize| {
            if s.disease.is_infected(j) {
                p_sick
            } else {
                p_well
            }
        };
        self.pairs_within(
            false,
            |j| s.swarm[j] == Swarm::Doctor && doctor_p(j) > 0.0,
            |i| s.disease.is_infected(i),
            |j| {
                self.params
                    .contact_radius(Swarm::Doctor, s.disease.is_infected(j))
            },
            |i, j| self.cures(i, j, doctor_p(j), draws),
        )
    }

    /// Whether no boid can change state this step: every boid is susceptible (no one to
    /// infect or cure, no one to die, recover or lose immunity) and none is infected
    /// spontaneously. [`EpidemicStep::transition`] then gives `None` for every boid.
    fn is_quiet(&self) -> bool {
        self.params.p_spontaneous_infect <= 0.0
            && self.snapshot.disease.iter().all(|d| d.is_susceptible())
    }

    /// What happens to slot `i` this step, given who (if anyone) infects or cures it, and
    /// what every boid's transition shares, `per_step`: this step's [`EpidemicStep::per_step`]
    /// (another step's would draw that step's numbers).
    pub fn transition(
        &self,
        i: usize,
        infector: Option<usize>,
        curer: Option<usize>,
        per_step: &PerStep,
    ) -> Option<Transition> {
        let s = self.snapshot;
        let id = s.id[i];
        let end = self.now + self.dt;
        match s.disease.get(i) {
            Disease::Infected { since } => {
                if let Some(doctor) = curer {
                    return Some(Transition::Cure { doctor });
                }
                if !is_due(since + self.params.t_death, end, self.dt) {
                    return None;
                }
                let dies = per_step.death.unit(id, 0) < self.params.p_death;
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
                    let u = per_step.spontaneous.unit(id, 0);
                    let p = self.susceptibility(i, p_spont);
                    if falls_below(u, p, p_spont, per_step.p_spontaneous, self.dt) {
                        return Some(Transition::Infect { source: None });
                    }
                }
                d.immunity_ends(self.params.t_immunity)
                    .is_some_and(|due| is_due(due, end, self.dt))
                    .then_some(Transition::Wane)
            }
        }
    }

    /// The step's draws for `purpose`.
    fn draws(&self, purpose: Purpose) -> Draws {
        Draws::new(self.seed, self.step, purpose)
    }

    /// What every boid's [`EpidemicStep::transition`] shares this step.
    pub fn per_step(&self) -> PerStep {
        PerStep {
            p_spontaneous: step_probability(self.params.p_spontaneous_infect, self.dt),
            spontaneous: self.draws(Purpose::SPONTANEOUS),
            death: self.draws(Purpose::DEATH),
        }
    }

    /// Decides every transition of the step, in slot order.
    pub fn decide(&self) -> Vec<(usize, Transition)> {
        if self.is_quiet() {
            return Vec::new();
        }
        let n = self.snapshot.len();
        let infector = lowest_partner(n, self.contact_pairs());
        let curer = lowest_partner(n, self.cure_pairs());
        let per_step = self.per_step();
        // Each boid's transition on its own, the list in slot order.
        map_light_chunks(n, |range| {
            range
                .filter_map(|i| {
                    self.transition(i, partner(infector[i]), partner(curer[i]), &per_step)
                        .map(|t| (i, t))
                })
                .collect()
        })
    }
}

/// For each of `n` slots, the lowest-slot partner among `pairs` (slot, partner): the lowest
/// id wins when several infect or cure the same boid, so the outcome is order-free. Each is
/// kept as slot + 1, 0 for none (read it with [`partner`]): 4 bytes per boid, where an
/// `Option<usize>` takes 16.
pub fn lowest_partner(n: usize, pairs: Vec<(usize, usize)>) -> Vec<u32> {
    assert!(
        n < u32::MAX as usize,
        "{n} boids: slots must fit in 32 bits"
    );
    let mut out = vec![0u32; n];
    for (i, j) in pairs {
        let j = j as u32 + 1;
        out[i] = if out[i] == 0 { j } else { out[i].min(j) };
    }
    out
}

/// The partner [`lowest_partner`] kept for a slot, if any.
#[inline]
pub fn partner(kept: u32) -> Option<usize> {
    kept.checked_sub(1).map(|slot| slot as usize)
}
