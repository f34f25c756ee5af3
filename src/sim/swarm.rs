//! The swarms a boid can belong to (docs/model.md §1). Per-swarm parameters live in the
//! config, which is why this sits below it. No systems live here.

use bevy::prelude::*;

/// Which flock a boid belongs to; per-swarm parameters live in the config.
#[derive(
    Component,
    Reflect,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
#[reflect(Component)]
#[serde(rename_all = "snake_case")]
pub enum Swarm {
    /// Ordinary boids.
    #[default]
    Normal,
    /// Doctors cure the infected.
    Doctor,
    /// Antivax boids avoid doctors.
    Antivax,
}

impl Swarm {
    /// Every swarm, in column order.
    pub const ALL: [Swarm; 3] = [Swarm::Normal, Swarm::Doctor, Swarm::Antivax];

    /// Lower-case name used in config keys and CSV columns (as serde writes it).
    pub fn key(self) -> &'static str {
        crate::sim::names::name_of(&self)
    }

    /// Position in [`Swarm::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Title-case name for the UI.
    pub fn label(self) -> &'static str {
        match self {
            Swarm::Normal => "Normal",
            Swarm::Doctor => "Doctor",
            Swarm::Antivax => "Antivax",
        }
    }
}
