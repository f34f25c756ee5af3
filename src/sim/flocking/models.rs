//! The steering models' maths (docs/model.md §4) as pure functions: the per-neighbour sums of
//! each rule ([`FlockSums`]), field of view, and the weighted flocking force of each model —
//! Shiffman's Model B (the baseline), `hybrid`, `adams`, `pygame` and the flocking report's own
//! `report` model — plus the noise kick.
//! No systems live here.

use bevy::prelude::*;
use std::f32::consts::{PI, TAU};

use crate::sim::config::{SteeringModel, SwarmParams};
use crate::sim::math::{UNIT_EPSILON, steer, truncate, unit};

/// Frames per second the Adams model's per-frame factors were tuned at.
pub const ADAMS_REFERENCE_FPS: f32 = 60.0;
/// Field-of-view half-angles at least this large see all round (3.14159 in files means π).
pub const FULL_FOV: f32 = PI - 1e-5;

/// Whether a neighbour at `offset` (p_j − p_i) is inside the field of view of a boid moving with
/// `v`: the angle between them is at most `fov`. Everything is visible at fov ≥ π, when the boid
/// is (almost) still, or when the neighbour sits on top of it.
#[inline]
pub fn in_view(v: Vec2, offset: Vec2, cos_fov: Option<f32>) -> bool {
    let Some(cos_fov) = cos_fov else { return true };
    let vl = v.length();
    let dl = offset.length();
    if vl < UNIT_EPSILON || dl < UNIT_EPSILON {
        return true;
    }
    v.dot(offset) >= cos_fov * vl * dl
}

/// A swarm's flocking parameters in the form the inner loop wants.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// r_sep².
    pub sep2: f32,
    /// r_ali².
    pub ali2: f32,
    /// r_coh².
    pub coh2: f32,
    /// cos(fov), or `None` for all round.
    pub cos_fov: Option<f32>,
    /// The single query radius that covers all three rules.
    pub query_radius: f32,
    /// Its square.
    pub query2: f32,
    /// Also sum the unit vectors away from separation neighbours ([`FlockSums::away_unit`]).
    pub unit_separation: bool,
}

impl Rules {
    /// Precomputes squared radii and the FOV cosine for a swarm under `model`. The `report`
    /// model has one perception radius for all three rules, the swarm's `alignment_radius`,
    /// and counts a neighbour at exactly that distance (`d ≤ R`): its squared radius is the
    /// next float above `R²`, so the strict tests every model shares accept `d² = R²`.
    pub fn new(p: &SwarmParams, model: SteeringModel) -> Self {
        let cos_fov = (p.fov < FULL_FOV).then(|| libm::cosf(p.fov));
        if model == SteeringModel::Report {
            let r = p.alignment_radius;
            let r2 = (r * r).next_up();
            let reach = r.next_up();
            return Self {
                sep2: r2,
                ali2: r2,
                coh2: r2,
                cos_fov,
                query_radius: reach,
                query2: reach * reach,
                unit_separation: true,
            };
        }
        Self {
            sep2: p.separation_radius * p.separation_radius,
            ali2: p.alignment_radius * p.alignment_radius,
            coh2: p.cohesion_radius * p.cohesion_radius,
            cos_fov,
            query_radius: p.query_radius(),
            query2: p.query_radius() * p.query_radius(),
            unit_separation: false,
        }
    }
}

/// Running sums over one boid's neighbours, one per rule (docs/model.md §4 neighbour sets).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlockSums {
    /// Σ unit(p_i − p_j)/d_ij over separation neighbours (any swarm).
    pub away: Vec2,
    /// Σ (p_i − p_j) over separation neighbours (raw, for hybrid/adams; the SIMD gathering sums
    /// it only for those, [`lane_sums`](super::lane_sums)).
    pub away_raw: Vec2,
    /// Σ unit(p_i − p_j)/d_ij² over separation neighbours (inverse square, for pygame).
    pub away_sq: Vec2,
    /// Σ unit(p_i − p_j) over separation neighbours (unit vectors, for the report model; only
    /// summed when [`Rules::unit_separation`]).
    pub away_unit: Vec2,
    /// Separation neighbour count.
    pub n_sep: u32,
    /// Σ v_j over same-swarm alignment neighbours.
    pub velocity: Vec2,
    /// Alignment neighbour count.
    pub n_ali: u32,
    /// Σ (p_j − p_i) (minimum image) over same-swarm cohesion neighbours.
    pub toward: Vec2,
    /// Cohesion neighbour count.
    pub n_coh: u32,
}

impl FlockSums {
    /// Adds one neighbour at `offset = p_j − p_i` moving with `vel`, seen by a boid moving with
    /// `me_vel`. Neighbours outside the field of view or every radius are ignored. The radius
    /// tests become 0/1 weights instead of branches: about a third of a grid query's candidates
    /// are neighbours, a pattern branch prediction cannot learn.
    #[inline]
    pub fn add(&mut self, rules: &Rules, me_vel: Vec2, offset: Vec2, vel: Vec2, same_swarm: bool) {
        if rules.cos_fov.is_some() && !in_view(me_vel, offset, rules.cos_fov) {
            return;
        }
        let d2 = offset.length_squared();
        let sep = (d2 < rules.sep2) as u32;
        let same = same_swarm as u32;
        let ali = same & (d2 < rules.ali2) as u32;
        let coh = same & (d2 < rules.coh2) as u32;
        let (wa, wc) = (ali as f32, coh as f32);
        // Separation neighbours are few (a quarter of the alignment ones): a branch here skips
        // the division for everyone else.
        if sep != 0 {
            self.n_sep += 1;
            self.away_raw -= offset;
            // unit(−d)/|d| = −d/|d|²; a coincident neighbour has no direction (unit(0) = 0).
            if d2 >= UNIT_EPSILON * UNIT_EPSILON {
                self.away -= offset / d2;
                self.away_sq -= offset / (d2 * d2.sqrt());
                if rules.unit_separation {
                    self.away_unit -= offset / d2.sqrt();
                }
            }
        }
        self.n_ali += ali;
        self.velocity += vel * wa;
        self.n_coh += coh;
        self.toward += offset * wc;
    }
}

/// Shiffman Model B separation: `truncate(unit(mean unit(p_i − p_j)/d)·v_max − v, F_max)`.
pub fn separation(sums: &FlockSums, v: Vec2, p: &SwarmParams) -> Vec2 {
    if sums.n_sep == 0 {
        return Vec2::ZERO;
    }
    steer(sums.away / sums.n_sep as f32, v, p.max_speed, p.max_force)
}

/// Shiffman Model B alignment: `truncate(unit(mean v_j)·v_max − v, F_max)`.
pub fn alignment(sums: &FlockSums, v: Vec2, p: &SwarmParams) -> Vec2 {
    if sums.n_ali == 0 {
        return Vec2::ZERO;
    }
    steer(
        sums.velocity / sums.n_ali as f32,
        v,
        p.max_speed,
        p.max_force,
    )
}

/// Shiffman Model B cohesion toward the torus-correct centre `mean(p_i + d_ij)`.
pub fn cohesion(sums: &FlockSums, v: Vec2, p: &SwarmParams) -> Vec2 {
    if sums.n_coh == 0 {
        return Vec2::ZERO;
    }
    steer(sums.toward / sums.n_coh as f32, v, p.max_speed, p.max_force)
}

/// `v_max·unit(sum / n) − v`: a Reynolds steer toward the mean of `n` vectors without
/// truncation; zero without neighbours.
fn untruncated(sum: Vec2, n: u32, v: Vec2, v_max: f32) -> Vec2 {
    if n > 0 {
        unit(sum / n as f32) * v_max - v
    } else {
        Vec2::ZERO
    }
}

/// Alignment `unit(mean v_j)·v_max − v` and cohesion `unit(mean d_ij)·v_max − v` without the
/// per-rule truncation (the `hybrid`, `pygame` and `report` models); zero without neighbours.
fn untruncated_steers(sums: &FlockSums, v: Vec2, p: &SwarmParams) -> (Vec2, Vec2) {
    (
        untruncated(sums.velocity, sums.n_ali, v, p.max_speed),
        untruncated(sums.toward, sums.n_coh, v, p.max_speed),
    )
}

/// The weighted flocking acceleration of one boid, px/s², for the chosen model (docs/model.md §4).
/// `gain` multiplies the three weights (predator fear lowers it; 1 otherwise).
pub fn flocking_force(
    model: SteeringModel,
    sums: &FlockSums,
    v: Vec2,
    p: &SwarmParams,
    gain: f32,
) -> Vec2 {
    let (ws, wa, wc) = (
        p.separation_weight * gain,
        p.alignment_weight * gain,
        p.cohesion_weight * gain,
    );
    match model {
        // Per-rule truncation, weighted sum, no clamp on the total.
        SteeringModel::Shiffman => {
            ws * separation(sums, v, p) + wa * alignment(sums, v, p) + wc * cohesion(sums, v, p)
        }
        // Raw separation sum; Model-B alignment/cohesion without per-rule truncation; the
        // total is clamped to F_max.
        SteeringModel::Hybrid => {
            let (ali, coh) = untruncated_steers(sums, v, p);
            truncate(ws * sums.away_raw + wa * ali + wc * coh, p.max_force)
        }
        // pygame: inverse-square separation summed over neighbours (w_sep in px³/s², growing
        // without bound as boids close in), alignment and cohesion as un-truncated Reynolds
        // steers, no clamp on the total; the speed band is the integrator's.
        SteeringModel::Pygame => {
            let (ali, coh) = untruncated_steers(sums, v, p);
            ws * sums.away_sq + wa * ali + wc * coh
        }
        // The flocking report's model: one radius, separation from the mean of unit vectors
        // away (no 1/d), each rule `w·(v_max·unit(·) − v)` with no truncation and no clamp;
        // F_max is not used.
        SteeringModel::Report => {
            let (ali, coh) = untruncated_steers(sums, v, p);
            let sep = untruncated(sums.away_unit, sums.n_sep, v, p.max_speed);
            ws * sep + wa * ali + wc * coh
        }
        // Adams' per-frame velocity increments in px/frame become px/s increments (×60 on the
        // position terms), and scaling each increment by dt·60 makes it a per-second rate:
        // F = 60 · increment.
        SteeringModel::Adams => {
            let fps = ADAMS_REFERENCE_FPS;
            let sep = fps * sums.away_raw;
            let ali = if sums.n_ali > 0 {
                sums.velocity / sums.n_ali as f32 - v
            } else {
                Vec2::ZERO
            };
            let coh = if sums.n_coh > 0 {
                fps * sums.toward / sums.n_coh as f32
            } else {
                Vec2::ZERO
            };
            fps * (ws * sep + wa * ali + wc * coh)
        }
    }
}

/// Random acceleration whose velocity kick over a step is `noise·√dt` in a uniform random
/// direction (a Wiener increment, frame-rate independent): `noise · ξ / √dt`.
pub fn noise_force(noise: f32, dt: f32, angle_unit: f64) -> Vec2 {
    if noise <= 0.0 || dt <= 0.0 {
        return Vec2::ZERO;
    }
    crate::sim::math::from_angle(angle_unit as f32 * TAU) * (noise / dt.sqrt())
}
