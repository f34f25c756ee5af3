//! Vector helpers every steering rule shares (docs/model.md §4): `truncate`, `unit` and the
//! Reynolds `steer`. The bottom of the module graph: it imports nothing from the crate. No
//! systems live here.

use bevy::prelude::*;

/// Below this length a vector has no direction (docs/model.md §4 `unit`).
pub const UNIT_EPSILON: f32 = 1e-6;

/// The unit vector at `angle` radians. Every sine, cosine, power and exponential the
/// simulation takes goes through the pure-Rust `libm`, which rounds the same on every target,
/// so a browser build (wasm) follows exactly the desktop's trajectories.
#[inline]
pub fn from_angle(angle: f32) -> Vec2 {
    Vec2::new(libm::cosf(angle), libm::sinf(angle))
}

/// `truncate(x, m) = x · min(1, m/|x|)`.
#[inline]
pub fn truncate(x: Vec2, max: f32) -> Vec2 {
    let len2 = x.length_squared();
    if len2 > max * max && len2 > 0.0 {
        x * (max / len2.sqrt())
    } else {
        x
    }
}

/// `unit(x) = x/|x|`, zero if `|x| < 1e-6`.
#[inline]
pub fn unit(x: Vec2) -> Vec2 {
    let len = x.length();
    if len < UNIT_EPSILON {
        Vec2::ZERO
    } else {
        x / len
    }
}

/// Reynolds steer: `truncate(unit(direction)·v_max − v, F_max)`.
#[inline]
pub fn steer(direction: Vec2, v: Vec2, v_max: f32, f_max: f32) -> Vec2 {
    truncate(unit(direction) * v_max - v, f_max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Vec2, b: Vec2) -> bool {
        (a - b).length() < 1e-3
    }

    #[test]
    fn truncate_and_unit_follow_the_model() {
        assert_eq!(truncate(Vec2::new(3.0, 4.0), 10.0), Vec2::new(3.0, 4.0));
        assert!(close(
            truncate(Vec2::new(30.0, 40.0), 10.0),
            Vec2::new(6.0, 8.0)
        ));
        assert_eq!(truncate(Vec2::ZERO, 0.0), Vec2::ZERO);
        assert_eq!(unit(Vec2::new(1e-7, 0.0)), Vec2::ZERO);
        assert!(close(unit(Vec2::new(0.0, -5.0)), Vec2::new(0.0, -1.0)));
    }

    #[test]
    fn steer_is_the_truncated_velocity_error() {
        // Moving (100, 0), wanting +y at 180: (−100, 180) has length 205.9 → truncated to 180.
        let s = steer(Vec2::new(0.0, 5.0), Vec2::new(100.0, 0.0), 180.0, 180.0);
        let want = Vec2::new(-100.0, 180.0) * (180.0 / Vec2::new(-100.0, 180.0).length());
        assert!(close(s, want), "{s}");
        // No direction: brake toward rest, within F_max.
        assert!(close(
            steer(Vec2::ZERO, Vec2::new(50.0, 0.0), 180.0, 180.0),
            Vec2::new(-50.0, 0.0)
        ));
    }
}
