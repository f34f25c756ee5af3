//! Integration (docs/model.md §4): semi-implicit Euler with the speed band `[v_min, v_max]` and the
//! world boundary. `integrate` is the pure maths; `move_boids` (phase `SimSystems::Integrate`)
//! applies it to every boid with its total `Steering` and the step's `Time::delta`, in parallel.

use bevy::prelude::*;

use crate::sim::agent::{Boid, Isolated, Position, Velocity};
use crate::sim::config::SimConfig;
use crate::sim::math::{UNIT_EPSILON, truncate};
use crate::sim::neighbours::Snapshot;
use crate::sim::schedule::IntegrateSystems;
use crate::sim::space::Space;
use crate::sim::steering::Steering;
use crate::sim::swarm::Swarm;

/// Speed limits of a mover.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeedBand {
    /// v_min, px/s.
    pub min: f32,
    /// v_max, px/s.
    pub max: f32,
}

/// One semi-implicit Euler step: `v ← truncate(v + F·dt, v_max)`; if `|v| < v_min` rescale to
/// `v_min`; `p ← p + v·dt`; then the boundary. Returns the new `(p, v)`.
pub fn integrate(
    p: Vec2,
    v: Vec2,
    force: Vec2,
    dt: f32,
    band: SpeedBand,
    space: &Space,
) -> (Vec2, Vec2) {
    let mut v_new = truncate(v + force * dt, band.max);
    let speed = v_new.length();
    if speed < band.min {
        // Keep the heading; a boid brought exactly to rest keeps its previous heading.
        let heading = if speed >= UNIT_EPSILON {
            v_new / speed
        } else if v.length() >= UNIT_EPSILON {
            v.normalize()
        } else {
            Vec2::X
        };
        v_new = heading * band.min;
    }
    space.confine(p + v_new * dt, v_new)
}

pub(super) fn plugin(app: &mut App) {
    app.add_systems(FixedUpdate, move_boids.in_set(IntegrateSystems::Boids));
}

/// Applies every boid's total steering for one step (none for a boid the step's snapshot
/// does not have).
fn move_boids(
    config: Res<SimConfig>,
    time: Res<Time>,
    snapshot: Res<Snapshot>,
    steering: Res<Steering>,
    mut boids: Query<
        (Entity, &mut Position, &mut Velocity, &Swarm),
        (With<Boid>, Without<Isolated>),
    >,
) {
    let dt = time.delta_secs();
    let space = config.space();
    let bands = Swarm::ALL.map(|s| {
        let p = config.swarms.get(s);
        SpeedBand {
            min: p.min_speed,
            max: p.max_speed,
        }
    });
    let n = boids.iter().len();
    crate::for_each_item!(boids, n, |(entity, mut pos, mut vel, swarm)| {
        let force = snapshot
            .slot_of(entity)
            .map_or(Vec2::ZERO, |i| steering.total(i));
        let (p, v) = integrate(pos.0, vel.0, force, dt, bands[swarm.index()], &space);
        pos.0 = p;
        vel.0 = v;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::SwarmParams;
    use crate::sim::math::steer;

    const BAND: SpeedBand = SpeedBand {
        min: 54.0,
        max: 180.0,
    };

    fn close(a: Vec2, b: Vec2) -> bool {
        (a - b).length() < 1e-3
    }

    #[test]
    fn one_step_by_hand() {
        // v = (100, 0), F = (0, 60), dt = 1/60: v' = (100, 1), p' = p + v'/60.
        let space = Space::torus(1920.0, 1080.0);
        let (p, v) = integrate(
            Vec2::new(10.0, 10.0),
            Vec2::new(100.0, 0.0),
            Vec2::new(0.0, 60.0),
            1.0 / 60.0,
            BAND,
            &space,
        );
        assert!(close(v, Vec2::new(100.0, 1.0)));
        assert!(close(p, Vec2::new(10.0 + 100.0 / 60.0, 10.0 + 1.0 / 60.0)));
    }

    #[test]
    fn speed_is_capped_at_v_max() {
        let space = Space::torus(1920.0, 1080.0);
        let (_, v) = integrate(
            Vec2::ZERO,
            Vec2::new(180.0, 0.0),
            Vec2::new(600.0, 0.0),
            0.1,
            BAND,
            &space,
        );
        assert!(close(v, Vec2::new(180.0, 0.0)));
    }

    #[test]
    fn a_boid_below_v_min_is_rescaled_keeping_heading() {
        // v = (30, 40) (|v| = 50 < 54), no force: v' = (30, 40)·54/50 = (32.4, 43.2).
        let space = Space::torus(1920.0, 1080.0);
        let (p, v) = integrate(
            Vec2::new(100.0, 100.0),
            Vec2::new(30.0, 40.0),
            Vec2::ZERO,
            0.5,
            BAND,
            &space,
        );
        assert!(close(v, Vec2::new(32.4, 43.2)));
        assert!(close(p, Vec2::new(116.2, 121.6)));
        // Brought exactly to rest: the previous heading is kept.
        let (_, v) = integrate(
            Vec2::ZERO,
            Vec2::new(0.0, 60.0),
            Vec2::new(0.0, -120.0),
            0.5,
            BAND,
            &space,
        );
        assert!(close(v, Vec2::new(0.0, 54.0)), "{v}");
    }

    #[test]
    fn a_boid_at_the_seam_wraps() {
        // At x = 1919 moving +x at 120 px/s for 1/60 s: x = 1921 → 1.
        let space = Space::torus(1920.0, 1080.0);
        let (p, v) = integrate(
            Vec2::new(1919.0, 540.0),
            Vec2::new(120.0, 0.0),
            Vec2::ZERO,
            1.0 / 60.0,
            BAND,
            &space,
        );
        assert!(close(p, Vec2::new(1.0, 540.0)), "{p}");
        assert_eq!(v, Vec2::new(120.0, 0.0));
        let walls = Space {
            boundary: crate::sim::space::Boundary::Bounce,
            ..space
        };
        let (p, v) = integrate(
            Vec2::new(1919.0, 540.0),
            Vec2::new(120.0, 0.0),
            Vec2::ZERO,
            1.0 / 60.0,
            BAND,
            &walls,
        );
        assert!(close(p, Vec2::new(1919.0, 540.0)), "{p}");
        assert_eq!(v, Vec2::new(-120.0, 0.0));
    }

    /// Reference turn-time table (boid-model-reference.md §6.4): the steering force is capped at
    /// F_max per rule, so reversing from +v_max to −v_max at that maximum force takes
    /// T = 2·v_max/F_max = 2.0 s at the defaults (3 px/s per frame for 120 frames at 60 fps),
    /// whatever the step. The derivation has no speed floor (a head-on reversal passes through
    /// zero speed), so v_min is 0 here.
    #[test]
    fn reversal_at_maximum_force_takes_two_seconds() {
        let p = SwarmParams::with_count(1);
        let space = Space::torus(1920.0, 1080.0);
        let band = SpeedBand {
            min: 0.0,
            max: p.max_speed,
        };
        for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
            let (mut pos, mut v) = (Vec2::new(500.0, 500.0), Vec2::new(p.max_speed, 0.0));
            let mut t = 0.0f32;
            while v.x > -p.max_speed * 0.999 && t < 10.0 {
                (pos, v) = integrate(pos, v, Vec2::new(-p.max_force, 0.0), dt, band, &space);
                t += dt;
            }
            assert!((t - 2.0).abs() <= 0.1, "dt = {dt}: turn took {t} s");
        }
    }

    /// The table's assumption holds for the real alignment rule: facing a flock that flies the
    /// other way, the steer stays saturated at F_max until the boid stops, which takes
    /// v_max/F_max = 1.0 s — the first half of the 2.0 s reversal.
    #[test]
    fn alignment_steer_is_saturated_until_the_boid_stops() {
        let p = SwarmParams::with_count(1);
        let space = Space::torus(1920.0, 1080.0);
        let band = SpeedBand {
            min: 0.0,
            max: p.max_speed,
        };
        for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
            let (mut pos, mut v) = (Vec2::new(500.0, 500.0), Vec2::new(p.max_speed, 0.0));
            let mut t = 0.0f32;
            while v.x > 1e-3 && t < 10.0 {
                let f =
                    p.alignment_weight * steer(Vec2::new(-1.0, 0.0), v, p.max_speed, p.max_force);
                assert!(
                    (f.length() - p.max_force).abs() < 1e-3,
                    "saturated while moving forward"
                );
                (pos, v) = integrate(pos, v, f, dt, band, &space);
                t += dt;
            }
            assert!((t - 1.0).abs() <= 0.05, "dt = {dt}: stopping took {t} s");
        }
    }

    /// At the defaults (v_min = 54 px/s) a boid cannot slow through zero: its speed stops
    /// falling at v_min after (v_max − v_min)/F_max = 0.7 s and it turns instead, on a circle
    /// of radius about v_min²/F_max = 16 px. Steered by alignment toward a heading 179° away,
    /// it points within 5° of it after 3.6–3.7 s at any step; toward a heading exactly
    /// opposite it is held in an unstable balance (the steer has no sideways part) and does not
    /// turn within 5 s.
    #[test]
    fn at_the_defaults_a_boid_turns_round_instead_of_reversing() {
        let p = SwarmParams::with_count(1);
        let space = Space::torus(1920.0, 1080.0);
        let band = SpeedBand {
            min: p.min_speed,
            max: p.max_speed,
        };
        let turn = |target_deg: f32, dt: f32| -> Option<f32> {
            let target = crate::sim::math::from_angle(target_deg.to_radians());
            let (mut pos, mut v) = (Vec2::new(500.0, 500.0), Vec2::new(p.max_speed, 0.0));
            let mut t = 0.0f32;
            while t < 5.0 {
                let f = p.alignment_weight * steer(target, v, p.max_speed, p.max_force);
                (pos, v) = integrate(pos, v, f, dt, band, &space);
                t += dt;
                assert!(v.length() >= p.min_speed - 1e-3, "never below v_min");
                if v.angle_to(target).abs() < 5f32.to_radians() {
                    return Some(t);
                }
            }
            None
        };
        for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
            let t = turn(179.0, dt).expect("turns");
            assert!((3.5..=3.8).contains(&t), "dt = {dt}: turned in {t} s");
            assert_eq!(turn(180.0, dt), None, "dt = {dt}");
        }
    }
}
