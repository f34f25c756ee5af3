//! [`Spec`]: what a config key allows and how it is shown — its unit, range, slider, whether it
//! applies only on reset — written on the key's own field as a reflect attribute:
//!
//! ```ignore
//! /// Contact radius of a Normal or Antivax boid.
//! #[reflect(@Spec::radius())]
//! pub r_interact_normal: f32,
//! ```
//!
//! The field's `///` comment is the key's one description; `keys` walks the config's type and
//! reads both. Nothing else describes a key. No systems live here.

use bevy::prelude::*;

use super::SimConfig;

/// One end of an allowed range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// The value must be beyond it.
    Open(f64),
    /// The value may equal it.
    Closed(f64),
}

/// The upper end of an allowed range, which may depend on the rest of the config.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Upper {
    /// A fixed bound.
    Fixed(Bound),
    /// At most the value of a sibling key (e.g. `min_speed` ≤ `max_speed`).
    Sibling(&'static str),
    /// A radius: below half the smaller world side on a torus (minimum images are unique only
    /// there, docs/model.md §2); checked only while its module is on (see [`Spec::active`]).
    HalfWorld,
}

/// When a change of the key reaches a running simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// On the next step (the panel, and interventions' `set`, may change it).
    Live,
    /// When the run is reset (counts, seed, spawn-time chances).
    OnReset,
    /// Only at the start of a headless run (its length and outputs); the panel shows it, an
    /// intervention may not change it.
    RunOnly,
}

/// What a key allows and how the panel shows it. Attached to a config field with
/// `#[reflect(@Spec::…)]`; built with the `const` constructors below.
#[derive(Reflect, Clone, Copy, Debug)]
#[reflect(opaque)]
pub struct Spec {
    /// Unit, or how the value is meant ("per s", "at spawn", "×"); empty for none.
    pub unit: &'static str,
    /// Label in the panel (empty: the field's name with spaces).
    pub label: &'static str,
    /// Lower end of the allowed values (numbers only).
    pub lower: Bound,
    /// Upper end of the allowed values (numbers only).
    pub upper: Upper,
    /// The value may also be `inf` ("never", "permanent").
    pub infinite_ok: bool,
    /// Slider range in the panel (numbers only); widened to hold the current value.
    pub slider: (f64, f64),
    /// The slider is logarithmic.
    pub log: bool,
    /// When a change takes effect.
    pub applies: Applies,
    /// For an [`Upper::HalfWorld`] radius: whether its module is on in a config (a radius of a
    /// module that is off is not checked against the world's size).
    pub active: Option<fn(&SimConfig) -> bool>,
}

/// The largest radius accepted where the half-world rule does not apply, px.
pub const MAX_RADIUS: f64 = 1e8;

/// Most boids a swarm may start with, and the population cap's largest value.
pub const MAX_BOIDS: f64 = 20_000_000.0;

impl Spec {
    /// A number ≥ 0 with a 0..1000 slider, no unit, live.
    pub const fn number() -> Self {
        Self {
            unit: "",
            label: "",
            lower: Bound::Closed(0.0),
            upper: Upper::Fixed(Bound::Closed(1e9)),
            infinite_ok: false,
            slider: (0.0, 1000.0),
            log: false,
            applies: Applies::Live,
            active: None,
        }
    }

    /// `true` or `false`.
    pub const fn flag() -> Self {
        Self::number()
    }

    /// One of an enum's names, shown as a drop-down labelled `label`.
    pub const fn choice(label: &'static str) -> Self {
        Self::number().label(label)
    }

    /// A probability in [0, 1] (`unit`: "per s", "at spawn", "at t_death").
    pub const fn probability(unit: &'static str) -> Self {
        Self::number().unit(unit).at_most(1.0).slider(0.0, 1.0)
    }

    /// A multiplier in [0, 1].
    pub const fn factor() -> Self {
        Self::probability("×")
    }

    /// A radius, px, below half the smaller world side on a torus.
    pub const fn radius() -> Self {
        let mut s = Self::number().unit("px").slider(0.0, 400.0);
        s.upper = Upper::HalfWorld;
        s
    }

    /// A radius of a module that may be off: checked against the world only while `on`.
    pub const fn module_radius(on: fn(&SimConfig) -> bool) -> Self {
        let mut s = Self::radius();
        s.active = Some(on);
        s
    }

    /// A steering weight in [0, `max`] with a 0..10 slider.
    pub const fn weight(max: f64) -> Self {
        Self::number().at_most(max).slider(0.0, 10.0)
    }

    /// A time ≥ 0, s.
    pub const fn time(lo: f64, hi: f64) -> Self {
        Self::number().unit("s").slider(lo, hi)
    }

    /// A time > 0, s, that may be `inf` ("never", "permanent").
    pub const fn never_time() -> Self {
        let mut s = Self::number().unit("s").above(0.0).slider(0.1, 120.0).log();
        s.upper = Upper::Fixed(Bound::Closed(f64::INFINITY));
        s.infinite_ok = true;
        s
    }

    /// A whole number in [0, `max`] (`unit`: what it counts).
    pub const fn count(unit: &'static str, max: f64) -> Self {
        Self::number().unit(unit).at_most(max).slider(0.0, 5000.0)
    }

    /// This spec with a unit.
    pub const fn unit(mut self, unit: &'static str) -> Self {
        self.unit = unit;
        self
    }

    /// This spec with a panel label.
    pub const fn label(mut self, label: &'static str) -> Self {
        self.label = label;
        self
    }

    /// Values must be greater than `x`.
    pub const fn above(mut self, x: f64) -> Self {
        self.lower = Bound::Open(x);
        self
    }

    /// Values must be at least `x`.
    pub const fn at_least(mut self, x: f64) -> Self {
        self.lower = Bound::Closed(x);
        self
    }

    /// Values may be at most `x`.
    pub const fn at_most(mut self, x: f64) -> Self {
        self.upper = Upper::Fixed(Bound::Closed(x));
        self
    }

    /// Values may be at most the sibling key `other` (same section).
    pub const fn at_most_key(mut self, other: &'static str) -> Self {
        self.upper = Upper::Sibling(other);
        self
    }

    /// The panel's slider range.
    pub const fn slider(mut self, lo: f64, hi: f64) -> Self {
        self.slider = (lo, hi);
        self
    }

    /// The slider is logarithmic.
    pub const fn log(mut self) -> Self {
        self.log = true;
        self
    }

    /// Takes effect when the run is reset.
    pub const fn on_reset(mut self) -> Self {
        self.applies = Applies::OnReset;
        self
    }

    /// Fixed for a headless run (duration, outputs).
    pub const fn run_only(mut self) -> Self {
        self.applies = Applies::RunOnly;
        self
    }

    /// Whether a change takes effect only when the run is reset.
    pub fn is_on_reset(&self) -> bool {
        self.applies == Applies::OnReset
    }
}
