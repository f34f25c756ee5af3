//! Flocking steering (docs/model.md §4): separation across all swarms, alignment and cohesion within a
//! swarm, field of view, noise; the baseline Shiffman Model B plus the `hybrid`, `adams` and
//! `pygame` models. Pure functions do the maths; `steer_boids` (phase `SimSystems::Steer`) gathers each
//! boid's neighbours from the index, calls them, and writes `Steering::flocking` and
//! `Steering::noise`, in parallel over boids.

use bevy::prelude::*;
use std::f32::consts::{PI, TAU};

use crate::sim::schedule::SteerSystems;
use crate::sim::agent::{Boid, Steering};
use crate::sim::clock::SimClock;
use crate::sim::config::{SimConfig, SteeringModel, SwarmParams};
use crate::sim::math::{UNIT_EPSILON, steer, truncate, unit};
use crate::sim::neighbours::{IndexRef, Near, Neighbours, Snapshot};
use crate::sim::rng::{Purpose, draw_unit};
use crate::sim::swarm::Swarm;

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

/// Per-boid factor on the three flocking weights this step, by snapshot slot; a boid without an
/// entry flocks at full weight. Modules that make boids flock less write it before
/// `SimSystems::Steer` (predator fear: `1 − 0.7u`, docs/model.md §7).
#[derive(Resource, Default, Debug, Clone)]
pub struct WeightGain {
    /// The factor of each slot (empty: 1 for everyone).
    pub per_slot: Vec<f32>,
}

impl WeightGain {
    /// The factor on a slot's flocking weights.
    #[inline]
    pub fn of(&self, slot: usize) -> f32 {
        self.per_slot.get(slot).copied().unwrap_or(1.0)
    }
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
}

impl Rules {
    /// Precomputes squared radii and the FOV cosine.
    pub fn new(p: &SwarmParams) -> Self {
        Self {
            sep2: p.separation_radius * p.separation_radius,
            ali2: p.alignment_radius * p.alignment_radius,
            coh2: p.cohesion_radius * p.cohesion_radius,
            cos_fov: (p.fov < FULL_FOV).then(|| libm::cosf(p.fov)),
            query_radius: p.query_radius(),
            query2: p.query_radius() * p.query_radius(),
        }
    }
}

/// Running sums over one boid's neighbours, one per rule (docs/model.md §4 neighbour sets).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlockSums {
    /// Σ unit(p_i − p_j)/d_ij over separation neighbours (any swarm).
    pub away: Vec2,
    /// Σ (p_i − p_j) over separation neighbours (raw, for hybrid/adams).
    pub away_raw: Vec2,
    /// Σ unit(p_i − p_j)/d_ij² over separation neighbours (inverse square, for pygame).
    pub away_sq: Vec2,
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
            }
        }
        self.n_ali += ali;
        self.velocity += vel * wa;
        self.n_coh += coh;
        self.toward += offset * wc;
    }
}

/// Adds the eight lanes in a fixed order, `(a0+a1+a2+a3) + (a4+a5+a6+a7)`: the same sum
/// whichever vector instructions the build uses, so results do not depend on the machine.
#[inline]
fn reduce(x: wide::f32x8) -> f32 {
    let a = x.to_array();
    (((a[0] + a[1]) + a[2]) + a[3]) + (((a[4] + a[5]) + a[6]) + a[7])
}

/// [`FlockSums`] of a boid at `p` moving with `v` that sees all round, eight candidates at a
/// time with SIMD where the backend keeps its candidates in contiguous arrays ([`Near::lanes`];
/// `None` elsewhere): the weights of [`FlockSums::add`] as 0/1 lane masks. The boid is in its
/// own neighbourhood (offset exactly zero, so it adds 1 to each count it is within radius of
/// and its own velocity to the alignment sum); that is taken back out at the end. The float
/// sums are grouped differently from the one-by-one path, so the two agree within rounding.
/// `INVERSE_SQUARE` also accumulates [`FlockSums::away_sq`] (only the pygame model needs it).
pub fn lane_sums<const INVERSE_SQUARE: bool>(
    near: &Near,
    p: Vec2,
    v: Vec2,
    swarm: u8,
    r: &Rules,
) -> Option<FlockSums> {
    use wide::{CmpEq, CmpGe, CmpLt, f32x8};
    let eps2 = UNIT_EPSILON * UNIT_EPSILON;
    let one = f32x8::splat(1.0);
    let (sep2, ali2, coh2) = (
        f32x8::splat(r.sep2),
        f32x8::splat(r.ali2),
        f32x8::splat(r.coh2),
    );
    let (eps, me) = (f32x8::splat(eps2), f32x8::splat(swarm as f32));
    let mut acc = [f32x8::ZERO; 13];
    let served = near.lanes(p, |l| {
        let (dx, dy) = (l.dx, l.dy);
        let d2 = dx * dx + dy * dy;
        let same = l.swarm.cmp_eq(me) & l.valid;
        let ws = d2.cmp_lt(sep2) & l.valid;
        let wa = d2.cmp_lt(ali2) & same;
        let wc = d2.cmp_lt(coh2) & same;
        let inv = ws * (d2.cmp_ge(eps) & one) / d2.max(eps);
        acc[0] += ws;
        acc[1] -= dx * inv;
        acc[2] -= dy * inv;
        if INVERSE_SQUARE {
            let inv3 = inv / d2.max(eps).sqrt();
            acc[11] -= dx * inv3;
            acc[12] -= dy * inv3;
        }
        acc[3] -= dx * ws;
        acc[4] -= dy * ws;
        acc[5] += wa;
        acc[6] += l.vx * wa;
        acc[7] += l.vy * wa;
        acc[8] += wc;
        acc[9] += dx * wc;
        acc[10] += dy * wc;
    });
    if !served {
        return None;
    }
    let sum = |i: usize| reduce(acc[i]);
    // Take the boid itself back out (offset 0: inside every positive radius, no direction).
    let inside = |r2: f32| (0.0 < r2) as u32;
    let (own_sep, own_ali, own_coh) = (inside(r.sep2), inside(r.ali2), inside(r.coh2));
    Some(FlockSums {
        away: Vec2::new(sum(1), sum(2)),
        away_raw: Vec2::new(sum(3), sum(4)),
        away_sq: Vec2::new(sum(11), sum(12)),
        n_sep: sum(0) as u32 - own_sep,
        velocity: Vec2::new(sum(6), sum(7)) - v * own_ali as f32,
        n_ali: sum(5) as u32 - own_ali,
        toward: Vec2::new(sum(9), sum(10)),
        n_coh: sum(8) as u32 - own_coh,
    })
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

/// Alignment `unit(mean v_j)·v_max − v` and cohesion `unit(mean d_ij)·v_max − v` without the
/// per-rule truncation (the `hybrid` and `pygame` models); zero without neighbours.
fn untruncated_steers(sums: &FlockSums, v: Vec2, p: &SwarmParams) -> (Vec2, Vec2) {
    let toward = |sum: Vec2, n: u32| {
        if n > 0 {
            unit(sum / n as f32) * p.max_speed - v
        } else {
            Vec2::ZERO
        }
    };
    (
        toward(sums.velocity, sums.n_ali),
        toward(sums.toward, sums.n_coh),
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

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<WeightGain>()
        .add_systems(FixedUpdate, steer_boids.in_set(SteerSystems::Flocking));
}

/// Every boid's flocking and noise accelerations, px/s², indexed by snapshot slot, from one
/// batched traversal of the neighbourhoods ([`IndexRef::map_near`]): SIMD over contiguous
/// candidates where the backend has them and the boid sees all round, one neighbour at a time
/// otherwise. Each boid's result depends only on the snapshot, so the output is the same for
/// any number of threads.
pub fn flocking_forces(
    snapshot: &Snapshot,
    index: &IndexRef,
    config: &SimConfig,
    gain: &WeightGain,
    dt: f32,
    step: u64,
) -> Vec<(Vec2, Vec2)> {
    let rules = Swarm::ALL.map(|s| Rules::new(config.swarms.get(s)));
    let model = config.steering_model;
    let reach = rules.iter().map(|r| r.query_radius).fold(0.0, f32::max);
    index.map_near(
        snapshot,
        reach,
        false,
        |_| true,
        |_| true,
        |i, near| {
            let swarm = snapshot.swarm[i];
            let r = &rules[swarm.index()];
            let (p, v) = (snapshot.pos[i], snapshot.vel[i]);
            let me = swarm.index() as u8;
            let simd = match (r.cos_fov, model) {
                (Some(_), _) => None,
                (None, SteeringModel::Pygame) => lane_sums::<true>(near, p, v, me, r),
                (None, _) => lane_sums::<false>(near, p, v, me, r),
            };
            let sums = simd.unwrap_or_else(|| {
                let mut sums = FlockSums::default();
                near.for_each_within(p, r.query_radius, |j, offset| {
                    if j != i {
                        sums.add(r, v, offset, snapshot.vel[j], snapshot.swarm[j] == swarm);
                    }
                });
                sums
            });
            let params = config.swarms.get(swarm);
            let noise = if params.noise > 0.0 {
                let draw = draw_unit(config.seed, step, snapshot.id[i], 0, Purpose::NOISE);
                noise_force(params.noise, dt, draw)
            } else {
                Vec2::ZERO
            };
            // Predator fear scales the flocking weights (docs/model.md §7).
            (flocking_force(model, &sums, v, params, gain.of(i)), noise)
        },
    )
}

/// Writes every boid's flocking and noise accelerations.
fn steer_boids(
    config: Res<SimConfig>,
    clock: Res<SimClock>,
    time: Res<Time>,
    gain: Res<WeightGain>,
    neighbours: Neighbours,
    mut boids: Query<(Entity, &mut Steering), With<Boid>>,
) {
    let snapshot = &*neighbours.snapshot;
    let forces = flocking_forces(
        snapshot,
        &neighbours.index(),
        &config,
        &gain,
        time.delta_secs(),
        clock.step,
    );
    crate::for_each_item!(boids, snapshot.len(), |(entity, mut steering)| {
        if let Some(i) = snapshot.slot_of(entity) {
            (steering.flocking, steering.noise) = forces[i];
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> SwarmParams {
        SwarmParams::with_count(1)
    }

    fn close(a: Vec2, b: Vec2) -> bool {
        (a - b).length() < 1e-3
    }

    fn sums_of(me_vel: Vec2, neighbours: &[(Vec2, Vec2, bool)], p: &SwarmParams) -> FlockSums {
        let rules = Rules::new(p);
        let mut s = FlockSums::default();
        for &(offset, vel, same) in neighbours {
            s.add(&rules, me_vel, offset, vel, same);
        }
        s
    }

    #[test]
    fn one_neighbour_separation_by_hand() {
        // Boid at rest-ish moving +x at 100 px/s; one neighbour 10 px to its right (d = (10,0)).
        // s = unit(p_i − p_j)/d = (−1,0)/10 → unit(s)·v_max − v = (−180 − 100, 0) → truncated to
        // F_max = 180: f_sep = (−180, 0).
        let p = params();
        let v = Vec2::new(100.0, 0.0);
        let s = sums_of(v, &[(Vec2::new(10.0, 0.0), Vec2::ZERO, false)], &p);
        assert_eq!(s.n_sep, 1);
        assert!(close(s.away, Vec2::new(-0.1, 0.0)));
        assert!(close(separation(&s, v, &p), Vec2::new(-180.0, 0.0)));
        // Another swarm: no alignment or cohesion.
        assert_eq!((s.n_ali, s.n_coh), (0, 0));
        // Whole Model B force: w_sep·f_sep only = 1.5·(−180, 0).
        let f = flocking_force(SteeringModel::Shiffman, &s, v, &p, 1.0);
        assert!(close(f, Vec2::new(-270.0, 0.0)), "{f}");
    }

    #[test]
    fn alignment_and_cohesion_by_hand() {
        // Boid moving (0, 100); one same-swarm neighbour 30 px to its right moving (100, 0),
        // outside r_sep (25) but inside r_ali = r_coh = 50.
        let p = params();
        let v = Vec2::new(0.0, 100.0);
        let s = sums_of(
            v,
            &[(Vec2::new(30.0, 0.0), Vec2::new(100.0, 0.0), true)],
            &p,
        );
        assert_eq!((s.n_sep, s.n_ali, s.n_coh), (0, 1, 1));
        // Alignment: unit(v̄)·180 − v = (180, −100); |·| = 205.9 > 180 → ×180/205.9.
        let want = Vec2::new(180.0, -100.0) * (180.0 / Vec2::new(180.0, -100.0).length());
        assert!(close(alignment(&s, v, &p), want));
        // Cohesion toward the neighbour: direction (1, 0): the same numbers.
        assert!(close(cohesion(&s, v, &p), want));
        let f = flocking_force(SteeringModel::Shiffman, &s, v, &p, 1.0);
        assert!(close(f, 2.0 * want));
    }

    #[test]
    fn separation_averages_inverse_distance_directions() {
        // Two neighbours: (5, 0) and (0, 10). s = mean((−1,0)/5, (0,−1)/10) = (−0.1, −0.05).
        let p = params();
        let v = Vec2::ZERO;
        let s = sums_of(
            v,
            &[
                (Vec2::new(5.0, 0.0), Vec2::ZERO, true),
                (Vec2::new(0.0, 10.0), Vec2::ZERO, true),
            ],
            &p,
        );
        let dir = Vec2::new(-0.1, -0.05).normalize();
        assert!(close(separation(&s, v, &p), dir * 180.0));
    }

    #[test]
    fn a_neighbour_across_the_seam_pulls_the_right_way() {
        // The index reports minimum-image offsets: a boid at x = 1915 seen from x = 5 on a
        // 1920-wide torus is at offset (−10, 0), so cohesion points −x, separation +x.
        let p = params();
        let v = Vec2::new(0.0, 100.0);
        let offset = crate::sim::space::Space::torus(1920.0, 1080.0)
            .displacement(Vec2::new(5.0, 500.0), Vec2::new(1915.0, 500.0));
        assert_eq!(offset, Vec2::new(-10.0, 0.0));
        let s = sums_of(v, &[(offset, Vec2::new(0.0, 100.0), true)], &p);
        assert!(cohesion(&s, v, &p).x < 0.0);
        assert!(separation(&s, v, &p).x > 0.0);
    }

    #[test]
    fn no_neighbours_no_force_and_coincident_points_are_finite() {
        let p = params();
        let v = Vec2::new(50.0, 0.0);
        let s = FlockSums::default();
        for model in ALL_MODELS {
            assert_eq!(flocking_force(model, &s, v, &p, 1.0), Vec2::ZERO);
        }
        let s = sums_of(v, &[(Vec2::ZERO, Vec2::new(1.0, 1.0), true)], &p);
        assert_eq!(s.n_sep, 1);
        for model in ALL_MODELS {
            assert!(flocking_force(model, &s, v, &p, 1.0).is_finite());
        }
    }

    #[test]
    fn field_of_view_hides_neighbours_behind() {
        let mut p = params();
        p.fov = 1.05; // ±60°
        let v = Vec2::new(100.0, 0.0);
        let behind = sums_of(v, &[(Vec2::new(-10.0, 0.0), Vec2::ZERO, true)], &p);
        assert_eq!(behind, FlockSums::default());
        let ahead = sums_of(v, &[(Vec2::new(10.0, 5.0), Vec2::ZERO, true)], &p);
        assert_eq!(ahead.n_sep, 1);
        let side = sums_of(v, &[(Vec2::new(5.0, 10.0), Vec2::ZERO, true)], &p);
        assert_eq!(side.n_sep, 0, "63° is outside a 60° half-angle");
        assert!(in_view(Vec2::ZERO, Vec2::new(-1.0, 0.0), Some(0.5)));
    }

    #[test]
    fn hybrid_uses_raw_separation_and_clamps_the_total() {
        // Neighbour at (3, 4) (d = 5): raw separation = (−3, −4), w_sep 1.5 → (−4.5, −6).
        let mut p = params();
        p.separation_radius = 12.0;
        let v = Vec2::new(180.0, 0.0);
        let s = sums_of(v, &[(Vec2::new(3.0, 4.0), Vec2::ZERO, false)], &p);
        let f = flocking_force(SteeringModel::Hybrid, &s, v, &p, 1.0);
        assert!(close(f, Vec2::new(-4.5, -6.0)), "{f}");
        // Same-swarm neighbour moving −x: alignment (−360, 0) alone exceeds F_max → clamped.
        let s = sums_of(
            v,
            &[(Vec2::new(0.0, 40.0), Vec2::new(-180.0, 0.0), true)],
            &p,
        );
        let f = flocking_force(SteeringModel::Hybrid, &s, v, &p, 1.0);
        assert!((f.length() - 180.0).abs() < 1e-3, "{f}");
    }

    #[test]
    fn adams_reproduces_its_per_frame_update_at_60_fps() {
        // Adams: v_f += w_match (v̄_f − v_f) per frame. In px/s at dt = 1/60 the kick F·dt must
        // equal 60 × the per-frame kick.
        let mut p = params();
        p.alignment_weight = 0.05;
        p.cohesion_weight = 0.0005;
        p.separation_weight = 0.05;
        let v_f = Vec2::new(3.0, 0.0);
        let nbr_v_f = Vec2::new(0.0, 3.0);
        let off = Vec2::new(4.0, 30.0);
        let s = sums_of(v_f * 60.0, &[(off, nbr_v_f * 60.0, true)], &p);
        let f = flocking_force(SteeringModel::Adams, &s, v_f * 60.0, &p, 1.0);
        let kick_f = 0.05 * (nbr_v_f - v_f) + 0.0005 * off; // outside r_sep = 25 (|off| > 25)
        assert!(close(f / 60.0, kick_f * 60.0), "{f} vs {kick_f}");
    }

    const ALL_MODELS: [SteeringModel; 4] = [
        SteeringModel::Shiffman,
        SteeringModel::Hybrid,
        SteeringModel::Adams,
        SteeringModel::Pygame,
    ];

    #[test]
    fn pygame_separation_is_an_inverse_square_sum() {
        // Neighbours at (10, 0) and (0, −5), another swarm: Σ unit(p_i − p_j)/d² =
        // (−1, 0)/100 + (0, 1)/25 = (−0.01, 0.04); w_sep = 40 000 px³/s² → (−400, 1600), not
        // truncated to F_max and not normalised.
        let mut p = params();
        p.separation_weight = 40_000.0;
        let v = Vec2::new(100.0, 0.0);
        let s = sums_of(
            v,
            &[
                (Vec2::new(10.0, 0.0), Vec2::ZERO, false),
                (Vec2::new(0.0, -5.0), Vec2::ZERO, false),
            ],
            &p,
        );
        assert!(close(s.away_sq, Vec2::new(-0.01, 0.04)), "{}", s.away_sq);
        let f = flocking_force(SteeringModel::Pygame, &s, v, &p, 1.0);
        assert!(close(f, Vec2::new(-400.0, 1600.0)), "{f}");
        // Halving the distance quadruples the push: it grows without bound as boids close in.
        let near = sums_of(v, &[(Vec2::new(5.0, 0.0), Vec2::ZERO, false)], &p);
        let far = sums_of(v, &[(Vec2::new(10.0, 0.0), Vec2::ZERO, false)], &p);
        let ratio = flocking_force(SteeringModel::Pygame, &near, v, &p, 1.0).length()
            / flocking_force(SteeringModel::Pygame, &far, v, &p, 1.0).length();
        assert!((ratio - 4.0).abs() < 1e-4, "{ratio}");
        // A coincident neighbour has no direction.
        let on_top = sums_of(v, &[(Vec2::ZERO, Vec2::ZERO, false)], &p);
        assert_eq!(
            flocking_force(SteeringModel::Pygame, &on_top, v, &p, 1.0),
            Vec2::ZERO
        );
    }

    #[test]
    fn pygame_alignment_and_cohesion_are_not_truncated() {
        // Boid moving (0, 100); one same-swarm neighbour 30 px to its right moving (100, 0)
        // (outside r_sep). Alignment: w_ali·(180·(1, 0) − (0, 100)) = (180, −100), |·| = 205.9
        // > F_max = 180 but kept; cohesion toward the neighbour: the same vector.
        let mut p = params();
        p.alignment_weight = 2.0;
        p.cohesion_weight = 0.5;
        let v = Vec2::new(0.0, 100.0);
        let s = sums_of(
            v,
            &[(Vec2::new(30.0, 0.0), Vec2::new(100.0, 0.0), true)],
            &p,
        );
        let f = flocking_force(SteeringModel::Pygame, &s, v, &p, 1.0);
        assert!(close(f, 2.5 * Vec2::new(180.0, -100.0)), "{f}");
        // Predator fear scales all three weights.
        let half = flocking_force(SteeringModel::Pygame, &s, v, &p, 0.5);
        assert!(close(half * 2.0, f));
    }

    #[test]
    fn noise_kick_scales_with_root_dt() {
        let a = noise_force(80.0, 1.0 / 60.0, 0.25) * (1.0 / 60.0);
        let b = noise_force(80.0, 1.0 / 15.0, 0.25) * (1.0 / 15.0);
        assert!((b.length() / a.length() - 2.0).abs() < 1e-4);
        assert!(close(unit(a), Vec2::Y));
        assert_eq!(noise_force(0.0, 0.1, 0.3), Vec2::ZERO);
    }

    #[test]
    fn gain_scales_the_weights() {
        let p = params();
        let v = Vec2::new(100.0, 0.0);
        let s = sums_of(
            v,
            &[(Vec2::new(30.0, 0.0), Vec2::new(0.0, 100.0), true)],
            &p,
        );
        let full = flocking_force(SteeringModel::Shiffman, &s, v, &p, 1.0);
        let half = flocking_force(SteeringModel::Shiffman, &s, v, &p, 0.5);
        assert!(close(half * 2.0, full));
    }

    #[test]
    fn every_backend_gives_brute_force_forces_across_the_seam_and_with_fov() {
        use crate::sim::agent::Disease;
        use crate::sim::config::IndexKind;
        use crate::sim::neighbours::Row;
        use crate::sim::neighbours::test_support::AllBackends;
        use crate::sim::swarm::Swarm;
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        // The small world makes grid neighbourhoods span whole axes (each candidate wrapped).
        for (w, h) in [(400.0, 300.0), (1000.0, 1000.0), (200.0, 160.0)] {
            let space = crate::sim::space::Space::torus(w, h);
            let rows: Vec<Row> = (0..1500)
                .map(|i| {
                    // Crowd the seams and corners.
                    let mut p = Vec2::new(rng.random::<f32>() * w, rng.random::<f32>() * h);
                    if i % 3 == 0 {
                        p.x = (rng.random::<f32>() * 40.0 - 20.0).rem_euclid(w);
                    }
                    Row {
                        entity: Entity::from_raw(i),
                        id: i as u64,
                        pos: p,
                        vel: crate::sim::math::from_angle(rng.random::<f32>() * TAU) * 120.0,
                        swarm: Swarm::ALL[i as usize % 3],
                        disease: Disease::Susceptible,
                    }
                })
                .collect();
            let b = AllBackends::new(Snapshot::from_rows(space, rows), 50.0);
            let mut config = SimConfig::default();
            config.swarms.normal.fov = 1.5;
            config.swarms.doctor.alignment_radius = 70.0;
            config.swarms.antivax.noise = 50.0;
            for model in ALL_MODELS {
                config.steering_model = model;
                let gain = WeightGain::default();
                let want = flocking_forces(
                    &b.snapshot,
                    &b.get(IndexKind::Brute),
                    &config,
                    &gain,
                    1.0 / 60.0,
                    3,
                );
                for kind in [IndexKind::Kdtree, IndexKind::Grid] {
                    let got =
                        flocking_forces(&b.snapshot, &b.get(kind), &config, &gain, 1.0 / 60.0, 3);
                    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                        let tol = 1e-3 * (1.0 + w.0.length());
                        assert!(
                            (g.0 - w.0).length() <= tol,
                            "{kind:?} {model:?} slot {i}: {} vs {}",
                            g.0,
                            w.0
                        );
                        assert_eq!(g.1, w.1, "noise is drawn from (seed, step, id)");
                    }
                }
            }
        }
    }
}
