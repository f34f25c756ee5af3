//! Who infected whom (docs/model.md §8, transmission record): one [`Transmission`] per infection,
//! with its infector, generation, how it ended and how many boids it infected in turn. Built in
//! `SimSystems::Sample` from the infections, cures, deaths, recoveries and catches the previous
//! step published (and, on the first step, from the boids infected at the start), so it lags the
//! world by one step; the final observation of a run brings it up to date.

use bevy::prelude::*;

use crate::sim::agent::RunStarted;
use crate::sim::clock::SimClock;
use crate::sim::config::{CatchMode, SimConfig};
use crate::sim::epidemic::{Cause, Cured, Died, Infected, Recovered};
use crate::sim::neighbours::Snapshot;
use crate::sim::predators::Caught;
use crate::sim::schedule::SimSystems;
use crate::sim::swarm::Swarm;

/// How an infection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Outcome {
    /// Survived `t_death` and recovered.
    Recovered,
    /// Died at `t_death`.
    Died,
    /// Cured by this doctor (id).
    Cured(u64),
    /// Caught and removed by this predator (id) while infected.
    Caught(u64),
}

impl Outcome {
    /// The name written to `transmissions.csv`.
    pub fn key(self) -> &'static str {
        match self {
            Outcome::Recovered => "recovered",
            Outcome::Died => "died",
            Outcome::Cured(_) => "cured",
            Outcome::Caught(_) => "caught",
        }
    }

    /// The doctor or predator that ended it, if any.
    pub fn by(self) -> Option<u64> {
        match self {
            Outcome::Cured(id) | Outcome::Caught(id) => Some(id),
            Outcome::Recovered | Outcome::Died => None,
        }
    }
}

/// Who infected a boid. Its id is its own infection's infectee ([`TransmissionLog::infector_id`]),
/// not kept twice: `city.toml`'s log holds 1.16 million records after 10 simulated seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Infector {
    /// Its swarm when it infected.
    pub swarm: Swarm,
    /// Index of its own infection in [`TransmissionLog::records`] (`u32`, as the indices by id
    /// are).
    pub infection: u32,
    /// Where it was when it infected, px.
    pub pos: Vec2,
}

impl Infector {
    /// Its id: the infectee of its own infection in `records` (the log's records).
    pub fn id(&self, records: &[Transmission]) -> u64 {
        records[self.infection as usize].infectee
    }
}

/// One infection: 80 B (with the infector's id and a `usize` index, as until round 3's
/// eighteenth stop, 96 B).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transmission {
    /// When it began (end of the step), s.
    pub time_s: f64,
    /// By whom (`None`: initial, spontaneous or born infected).
    pub infector: Option<Infector>,
    /// The infected boid.
    pub infectee: u64,
    /// Its swarm.
    pub swarm: Swarm,
    /// Where it was infected, px.
    pub pos: Vec2,
    /// 0 for infections with no infector, else the infector's generation + 1.
    pub generation: u32,
    /// How it began.
    pub cause: Cause,
    /// When and how it ended (`None`: still infected).
    pub end: Option<(f64, Outcome)>,
    /// Boids this infection infected.
    pub secondary: u32,
}

/// Every infection of the run, in the order they began.
#[derive(Resource, Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(from = "SavedLog<Vec<SavedRecord>, Vec<u32>, Vec<u32>>")]
pub struct TransmissionLog {
    /// The infections; an index here names an infection.
    pub records: Vec<Transmission>,
    /// Indices of ended infections, in the order they ended (what `transmissions.csv` streams).
    /// `u32`, as [`Infector::infection`]; a checkpoint stores them as it did `usize`s.
    pub ended: Vec<u32>,
    /// By boid id: its latest infection + 1 (0: never infected). A boid's open infection, if it
    /// has one, is its latest, so no second array by id is kept (4 B per boid, not 8).
    latest: Vec<u32>,
    started: bool,
}

/// How a [`TransmissionLog`] is saved in a checkpoint: with the array of open infections by
/// id that earlier versions kept (worked out from the latest ones), and each record with its
/// infector's id (see [`SavedRecord`]), so the bytes stay the same.
#[derive(serde::Serialize, serde::Deserialize)]
struct SavedLog<R, E, L> {
    records: R,
    ended: E,
    open: Vec<u32>,
    latest: L,
    started: bool,
}

/// A [`Transmission`] as a checkpoint holds it: its fields in their order, and the infector's
/// id, which earlier versions kept in the record. (postcard writes a `u32` and a `usize` of
/// the same value alike.)
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct SavedRecord {
    time_s: f64,
    infector: Option<SavedInfector>,
    infectee: u64,
    swarm: Swarm,
    pos: Vec2,
    generation: u32,
    cause: Cause,
    end: Option<(f64, Outcome)>,
    secondary: u32,
}

/// An [`Infector`] as a checkpoint holds it, with its id.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct SavedInfector {
    id: u64,
    swarm: Swarm,
    infection: u32,
    pos: Vec2,
}

impl SavedRecord {
    /// Record `t` of `records`, with its infector's id.
    fn of(t: &Transmission, records: &[Transmission]) -> Self {
        Self {
            time_s: t.time_s,
            infector: t.infector.map(|f| SavedInfector {
                id: f.id(records),
                swarm: f.swarm,
                infection: f.infection,
                pos: f.pos,
            }),
            infectee: t.infectee,
            swarm: t.swarm,
            pos: t.pos,
            generation: t.generation,
            cause: t.cause,
            end: t.end,
            secondary: t.secondary,
        }
    }
}

impl From<SavedRecord> for Transmission {
    fn from(t: SavedRecord) -> Self {
        Self {
            time_s: t.time_s,
            infector: t.infector.map(|f| Infector {
                swarm: f.swarm,
                infection: f.infection,
                pos: f.pos,
            }),
            infectee: t.infectee,
            swarm: t.swarm,
            pos: t.pos,
            generation: t.generation,
            cause: t.cause,
            end: t.end,
            secondary: t.secondary,
        }
    }
}

/// The records in their saved form, made one at a time as they are written.
struct SavedRecords<'a>(&'a [Transmission]);

impl serde::Serialize for SavedRecords<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|t| SavedRecord::of(t, self.0)))
    }
}

impl serde::Serialize for TransmissionLog {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let open = (0..self.latest.len() as u64)
            .map(|id| self.open_of(id).map_or(0, |r| r as u32 + 1))
            .collect();
        SavedLog {
            records: SavedRecords(&self.records),
            ended: &self.ended,
            open,
            latest: &self.latest,
            started: self.started,
        }
        .serialize(serializer)
    }
}

impl From<SavedLog<Vec<SavedRecord>, Vec<u32>, Vec<u32>>> for TransmissionLog {
    fn from(saved: SavedLog<Vec<SavedRecord>, Vec<u32>, Vec<u32>>) -> Self {
        Self {
            records: saved.records.into_iter().map(Transmission::from).collect(),
            ended: saved.ended,
            latest: saved.latest,
            started: saved.started,
        }
    }
}

/// Boid `id`'s entry of an array by id, grown to hold it: by an eighth more than asked, not
/// doubled (ids come in any order, and the array is as long as the population).
fn slot(v: &mut Vec<u32>, id: u64) -> &mut u32 {
    let k = id as usize;
    if v.len() <= k {
        v.reserve_exact((k + 1 + k / 8) - v.len());
        v.resize(k + 1, 0);
    }
    &mut v[k]
}

fn lookup(v: &[u32], id: u64) -> Option<usize> {
    v.get(id as usize)
        .and_then(|&r| r.checked_sub(1))
        .map(|r| r as usize)
}

impl TransmissionLog {
    /// The infection boid `id` is in now.
    pub fn open_of(&self, id: u64) -> Option<usize> {
        self.latest_of(id)
            .filter(|&r| self.records[r].end.is_none())
    }

    /// The id of the boid that caused infection `t` (`None`: no infector).
    pub fn infector_id(&self, t: &Transmission) -> Option<u64> {
        t.infector.map(|f| f.id(&self.records))
    }

    /// Boid `id`'s latest infection (ongoing or ended).
    pub fn latest_of(&self, id: u64) -> Option<usize> {
        lookup(&self.latest, id)
    }

    /// Infections still going on, in the order they began.
    pub fn ongoing(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.records.len()).filter(|&r| self.records[r].end.is_none())
    }

    /// The infections that infection `record` caused, in the order they began.
    pub fn infected_by(&self, record: usize) -> impl Iterator<Item = usize> + '_ {
        (record + 1..self.records.len()).filter(move |&r| {
            self.records[r]
                .infector
                .is_some_and(|f| f.infection as usize == record)
        })
    }

    /// Contact infections that began at most `span` seconds before `now`, newest first, as
    /// (infector's position, infectee's position, age in s; the age of an infection recorded at
    /// the end of the current step is slightly negative).
    pub fn recent(&self, now: f64, span: f64) -> impl Iterator<Item = (Vec2, Vec2, f64)> + '_ {
        self.records
            .iter()
            .rev()
            .map(move |t| (t, now - t.time_s))
            .take_while(move |(_, age)| *age <= span)
            .filter_map(|(t, age)| t.infector.map(|f| (f.pos, t.pos, age)))
    }

    /// The boid to select after `current` among those infected now, ranked by how many they
    /// have infected (most first, then lowest id), cycling; `None` if nobody is infected.
    pub fn next_spreader(&self, current: Option<u64>) -> Option<u64> {
        let mut ranked: Vec<(u32, u64)> = self
            .ongoing()
            .map(|r| (self.records[r].secondary, self.records[r].infectee))
            .collect();
        ranked.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let next = current
            .and_then(|id| ranked.iter().position(|&(_, i)| i == id))
            .map_or(0, |k| (k + 1) % ranked.len());
        ranked.get(next).map(|&(_, id)| id)
    }

    /// Records that `infectee` was infected at `time_s` (by `source`, if by contact) and
    /// returns the infection's index. An infector with no open infection (never the case
    /// when every infection is recorded) counts as generation 0.
    pub fn begin(
        &mut self,
        time_s: f64,
        source: Option<(u64, Swarm, Vec2)>,
        infectee: u64,
        swarm: Swarm,
        pos: Vec2,
        cause: Cause,
    ) -> usize {
        let infector = source.and_then(|(id, swarm, pos)| {
            self.open_of(id).map(|infection| Infector {
                swarm,
                infection: infection as u32,
                pos,
            })
        });
        let generation = infector.map_or(0, |f| self.records[f.infection as usize].generation + 1);
        if let Some(f) = infector {
            self.records[f.infection as usize].secondary += 1;
        }
        let r = self.records.len();
        self.records.push(Transmission {
            time_s,
            infector,
            infectee,
            swarm,
            pos,
            generation,
            cause,
            end: None,
            secondary: 0,
        });
        *slot(&mut self.latest, infectee) = r as u32 + 1;
        r
    }

    /// Records that boid `id`'s infection ended at `time_s`; ignored if it has none open.
    pub fn end(&mut self, id: u64, time_s: f64, outcome: Outcome) {
        let Some(r) = self.open_of(id) else { return };
        self.records[r].end = Some((time_s, outcome));
        self.ended.push(r as u32);
    }
}

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<TransmissionLog>()
        .add_observer(|_: Trigger<RunStarted>, mut log: ResMut<TransmissionLog>| {
            *log = TransmissionLog::default();
        })
        .add_systems(FixedUpdate, record_transmissions.in_set(SimSystems::Log));
}

/// Brings the log up to date: the boids infected at the start (first step), then the previous
/// step's infections before its endings (a boid can infect in the step its infection ends).
fn record_transmissions(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    snapshot: Res<Snapshot>,
    mut log: ResMut<TransmissionLog>,
    mut infected: EventReader<Infected>,
    mut recovered: EventReader<Recovered>,
    mut cured: EventReader<Cured>,
    mut died: EventReader<Died>,
    mut caught: EventReader<Caught>,
) {
    let infections: Vec<Infected> = infected.read().copied().collect();
    if !log.started {
        log.started = true;
        // Room for one infection per boid, so the first wave never moves the arrays: a large
        // reservation is mapped memory of which only the pages written become resident, while
        // moving a growing array leaves its old block behind in the allocator's heap (a city's
        // peak resident memory is then several MB higher; BENCHMARKS.md, eighteenth stop). A
        // run resumed from a checkpoint starts with its log, and grows it as it goes.
        log.records.reserve(snapshot.len());
        log.ended.reserve(snapshot.len());
        for i in 0..snapshot.len() {
            // Cases imported at the very start come with their own event.
            let imported = || infections.iter().any(|e| e.target.0 == snapshot.id[i]);
            if snapshot.disease.is_infected(i) && !imported() {
                let (id, swarm, pos) = (snapshot.id[i], snapshot.swarm[i], snapshot.pos[i]);
                log.begin(clock.time, None, id, swarm, pos, Cause::Initial);
            }
        }
    }
    for e in &infections {
        let source = e.source.map(|f| (f.id.0, f.swarm, f.pos));
        log.begin(e.time, source, e.target.0, e.swarm, e.pos, e.cause);
    }
    for e in recovered.read() {
        log.end(e.id.0, e.time, Outcome::Recovered);
    }
    for e in cured.read() {
        log.end(e.patient.0, e.time, Outcome::Cured(e.doctor.0));
    }
    for e in died.read() {
        log.end(e.id.0, e.time, Outcome::Died);
    }
    if config.predators.catch == CatchMode::Remove {
        for e in caught.read() {
            log.end(e.prey, e.time, Outcome::Caught(e.predator));
        }
    } else {
        // A respawned boid keeps its infection.
        caught.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_secondaries_and_reinfection_follow_the_chain() {
        let mut log = TransmissionLog::default();
        let n = Swarm::Normal;
        let a = log.begin(0.0, None, 1, n, Vec2::ZERO, Cause::Initial);
        let b = log.begin(
            1.0,
            Some((1, n, Vec2::ZERO)),
            2,
            n,
            Vec2::ZERO,
            Cause::Contact,
        );
        let c = log.begin(
            2.0,
            Some((2, n, Vec2::ZERO)),
            3,
            n,
            Vec2::ZERO,
            Cause::Contact,
        );
        let d = log.begin(
            2.5,
            Some((1, n, Vec2::ZERO)),
            4,
            n,
            Vec2::ZERO,
            Cause::Contact,
        );
        log.end(1, 3.0, Outcome::Recovered);
        // Boid 1 again, infected by 3: a new infection of generation 3.
        let e = log.begin(
            4.0,
            Some((3, n, Vec2::ZERO)),
            1,
            n,
            Vec2::ZERO,
            Cause::Contact,
        );
        log.end(2, 5.0, Outcome::Cured(9));
        let gens: Vec<u32> = log.records.iter().map(|t| t.generation).collect();
        assert_eq!(gens, [0, 1, 2, 1, 3]);
        let secondary: Vec<u32> = log.records.iter().map(|t| t.secondary).collect();
        assert_eq!(secondary, [2, 1, 1, 0, 0]);
        assert_eq!(log.infected_by(a).collect::<Vec<_>>(), [b, d]);
        assert_eq!(log.records[e].infector.unwrap().infection as usize, c);
        assert_eq!(log.infector_id(&log.records[e]), Some(3));
        assert_eq!(log.infector_id(&log.records[d]), Some(1));
        assert_eq!(log.infector_id(&log.records[a]), None);
        assert_eq!(log.open_of(1), Some(e));
        assert_eq!(log.latest_of(2), Some(b));
        assert_eq!(log.open_of(2), None);
        assert_eq!(log.ended, [a, b].map(|r| r as u32));
        assert_eq!(log.ongoing().collect::<Vec<_>>(), [c, d, e]);
        // Infected now: 3 (1 secondary), 4 and 1 (none): 3 first, then by id, cycling.
        assert_eq!(log.next_spreader(None), Some(3));
        assert_eq!(log.next_spreader(Some(3)), Some(1));
        assert_eq!(log.next_spreader(Some(1)), Some(4));
        assert_eq!(log.next_spreader(Some(4)), Some(3));
        assert_eq!(log.next_spreader(Some(99)), Some(3));
        assert_eq!(log.records[b].end, Some((5.0, Outcome::Cured(9))));
        // Ending a boid with no open infection changes nothing.
        log.end(2, 6.0, Outcome::Died);
        assert_eq!(log.ended.len(), 2);
    }

    #[test]
    fn a_record_takes_80_bytes() {
        // 96 with the infector's id and a `usize` index: 18.5 MB more for the city's 1.16
        // million infections in its first 10 s.
        assert_eq!(std::mem::size_of::<Transmission>(), 80);
    }

    #[test]
    fn a_saved_log_holds_the_open_infections_by_id_that_earlier_versions_saved() {
        // The fields in the order and types the log had when it kept both arrays by id.
        #[derive(serde::Deserialize)]
        struct Earlier {
            records: Vec<SavedRecord>,
            ended: Vec<usize>,
            open: Vec<u32>,
            latest: Vec<u32>,
            started: bool,
        }
        let (mut log, n) = (TransmissionLog::default(), Swarm::Normal);
        let a = log.begin(0.0, None, 1, n, Vec2::ZERO, Cause::Initial);
        let b = log.begin(
            1.0,
            Some((1, n, Vec2::ONE)),
            4,
            n,
            Vec2::ZERO,
            Cause::Contact,
        );
        log.end(1, 2.0, Outcome::Recovered);
        let c = log.begin(3.0, Some((4, n, Vec2::ZERO)), 2, n, Vec2::X, Cause::Contact);
        log.started = true;
        let bytes = postcard::to_allocvec(&log).unwrap();
        let earlier: Earlier = postcard::from_bytes(&bytes).unwrap();
        let [a, b, c] = [a, b, c].map(|r| r as u32 + 1);
        assert_eq!(earlier.open, [0, 0, c, 0, b]);
        assert_eq!(earlier.latest, [0, a, c, 0, b]);
        let saved: Vec<SavedRecord> = log
            .records
            .iter()
            .map(|t| SavedRecord::of(t, &log.records))
            .collect();
        assert_eq!(earlier.records, saved);
        // The infectors' ids, as the records held them: 1 infected 4, then 4 infected 2.
        let ids: Vec<Option<u64>> = earlier
            .records
            .iter()
            .map(|t| t.infector.map(|f| f.id))
            .collect();
        assert_eq!(ids, [None, Some(1), Some(4)]);
        assert_eq!(earlier.ended, [0]);
        assert!(earlier.started);
        let back: TransmissionLog = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back, log);
        assert_eq!(back.open_of(4), Some(1));
        assert_eq!(back.open_of(1), None);
    }
}
