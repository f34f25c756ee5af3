//! World geometry (docs/model.md §2): the rectangle `[0, W) × [0, H)`, its boundary mode, and the
//! torus-correct maths every other module uses — minimum-image displacement, wrapping, bouncing
//! and the circular-mean centroid. Pure functions only; no systems.

use bevy::prelude::*;
use serde::{Deserialize, Serialize};
use std::f32::consts::TAU;

use crate::sim::trig::{LANES, sincos8};

/// What happens at the world's edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Reflect, Default)]
#[serde(rename_all = "snake_case")]
pub enum Boundary {
    /// Torus: leaving one side enters the opposite one; all distances use the minimum image.
    #[default]
    Wrap,
    /// Walls: the position is reflected about the wall and that velocity component negated.
    Bounce,
}

/// The world rectangle and its boundary mode.
#[derive(Clone, Copy, Debug, PartialEq, Reflect)]
pub struct Space {
    /// W, px.
    pub width: f32,
    /// H, px.
    pub height: f32,
    /// Wrap or bounce.
    pub boundary: Boundary,
}

impl Default for Space {
    /// The model's default world: a 1920 × 1080 torus.
    fn default() -> Self {
        Self::torus(1920.0, 1080.0)
    }
}

impl Space {
    /// A wrapped (torus) world of the given size.
    pub fn torus(width: f32, height: f32) -> Self {
        Self {
            width,
            height,
            boundary: Boundary::Wrap,
        }
    }

    /// `(W, H)`.
    pub fn size(&self) -> Vec2 {
        Vec2::new(self.width, self.height)
    }

    /// Whether distances wrap around the seam.
    pub fn wraps(&self) -> bool {
        self.boundary == Boundary::Wrap
    }

    /// Displacement `to − from`, each axis wrapped into `(−L/2, L/2]` on a torus (docs/model.md
    /// §2).
    #[inline]
    pub fn displacement(&self, from: Vec2, to: Vec2) -> Vec2 {
        let d = to - from;
        if self.wraps() {
            Vec2::new(wrap_axis(d.x, self.width), wrap_axis(d.y, self.height))
        } else {
            d
        }
    }

    /// Torus-aware distance.
    #[inline]
    pub fn distance(&self, a: Vec2, b: Vec2) -> f32 {
        self.displacement(a, b).length()
    }

    /// Whether `p` lies inside `[0, W) × [0, H)`.
    pub fn contains(&self, p: Vec2) -> bool {
        p.x >= 0.0 && p.x < self.width && p.y >= 0.0 && p.y < self.height
    }

    /// Brings a position that left the world back in: wraps on a torus, reflects off walls
    /// (negating the matching velocity component). Returns the new position and velocity.
    pub fn confine(&self, p: Vec2, v: Vec2) -> (Vec2, Vec2) {
        match self.boundary {
            Boundary::Wrap => (
                Vec2::new(wrap_coord(p.x, self.width), wrap_coord(p.y, self.height)),
                v,
            ),
            Boundary::Bounce => {
                let (x, vx) = bounce_axis(p.x, v.x, self.width);
                let (y, vy) = bounce_axis(p.y, v.y, self.height);
                (Vec2::new(x, y), Vec2::new(vx, vy))
            }
        }
    }

    /// Centroid of points: the circular mean per axis on a torus, the plain mean otherwise
    /// (docs/model.md §2). `None` when there are no points.
    pub fn centroid(&self, points: impl IntoIterator<Item = Vec2>) -> Option<Vec2> {
        let mut sums = CentroidSums::default();
        for p in points {
            sums.add(&self.centroid_term(p));
        }
        self.centroid_of(&sums)
    }

    /// What point `p` adds to a [`Space::centroid`]'s sums: worked out once, it can go into
    /// several (a swarm's and its flock's), at one set of sines and cosines a point.
    #[inline]
    pub fn centroid_term(&self, p: Vec2) -> CentroidTerm {
        if self.wraps() {
            let [ax, ay] = self.angles(p);
            // One argument reduction per angle: libm's `sincos` gives its `sin` and `cos` to
            // the bit (the same steps; a test checks it).
            let ((sx, cx), (sy, cy)) = (libm::sincos(ax), libm::sincos(ay));
            CentroidTerm::Angles([cx, sx, cy, sy])
        } else {
            CentroidTerm::Point(p)
        }
    }

    /// [`Space::centroid_term`] of eight points, to the bit, their sines and cosines taken in
    /// vector lanes ([`sincos8`]). Always inlined: it takes the vector width of the
    /// `vectorized!` block it is in.
    #[inline(always)]
    pub fn centroid_terms(&self, p: [Vec2; LANES]) -> [CentroidTerm; LANES] {
        if !self.wraps() {
            return p.map(CentroidTerm::Point);
        }
        let angles = p.map(|p| self.angles(p));
        let (sx, cx) = sincos8(angles.map(|[ax, _]| ax));
        let (sy, cy) = sincos8(angles.map(|[_, ay]| ay));
        std::array::from_fn(|k| CentroidTerm::Angles([cx[k], sx[k], cy[k], sy[k]]))
    }

    /// A point's angles on a torus's x and y circles, rad: each axis is a circle of its own,
    /// and a centroid averages the unit vectors at these angles.
    #[inline(always)]
    fn angles(&self, p: Vec2) -> [f64; 2] {
        [
            (p.x / self.width * TAU) as f64,
            (p.y / self.height * TAU) as f64,
        ]
    }

    /// The centroid of the points whose terms `sums` holds ([`Space::centroid`]); `None`
    /// without points.
    pub fn centroid_of(&self, sums: &CentroidSums) -> Option<Vec2> {
        if sums.n == 0 {
            return None;
        }
        if self.wraps() {
            let [cx, sx, cy, sy] = sums.angles;
            let to_coord = |s: f64, c: f64, l: f32| {
                let angle = libm::atan2(s, c).rem_euclid(std::f64::consts::TAU);
                wrap_coord((angle / std::f64::consts::TAU * l as f64) as f32, l)
            };
            Some(Vec2::new(
                to_coord(sx, cx, self.width),
                to_coord(sy, cy, self.height),
            ))
        } else {
            Some(sums.plain / sums.n as f32)
        }
    }
}

/// One point's share of a centroid ([`Space::centroid_term`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CentroidTerm {
    /// On a torus: the cosine and sine of the point's angle on the x circle, then on the y one.
    Angles([f64; 4]),
    /// Elsewhere: the point.
    Point(Vec2),
}

/// The running sums a centroid is worked out from ([`Space::centroid_of`]). Terms are added in
/// the order given, and the same terms in the same order give the same bits.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CentroidSums {
    /// Sums of the cosines and sines of [`CentroidTerm::Angles`], in its order.
    angles: [f64; 4],
    /// Sum of the points of [`CentroidTerm::Point`].
    plain: Vec2,
    /// Terms added.
    n: usize,
}

impl CentroidSums {
    /// Adds one point's term.
    #[inline]
    pub fn add(&mut self, term: &CentroidTerm) {
        match term {
            CentroidTerm::Angles(a) => {
                for (sum, x) in self.angles.iter_mut().zip(a) {
                    *sum += x;
                }
            }
            CentroidTerm::Point(p) => self.plain += *p,
        }
        self.n += 1;
    }
}

/// Wraps a difference into `(−L/2, L/2]`. Differences of two in-world coordinates lie in
/// `(−L, L)`, which one add or subtract fixes; anything further out takes the general path.
#[inline]
pub fn wrap_axis(d: f32, l: f32) -> f32 {
    let half = 0.5 * l;
    if d > half {
        let r = d - l;
        if r > half { wrap_axis_far(d, l) } else { r }
    } else if d <= -half {
        let r = d + l;
        if r <= -half { wrap_axis_far(d, l) } else { r }
    } else {
        d
    }
}

/// `wrap_axis` for differences of more than a world length.
#[cold]
fn wrap_axis_far(d: f32, l: f32) -> f32 {
    let mut r = d - l * (d / l).round();
    if r <= -0.5 * l {
        r += l;
    } else if r > 0.5 * l {
        r -= l;
    }
    r
}

/// Wraps a coordinate into `[0, L)`. A coordinate at most one world length outside (every
/// boid after a step) takes one add or subtract — the value `rem_euclid` gives there, exactly
/// (`x − L` is exact for `L ≤ x < 2L`; `x % L` is `x` for `|x| < L`) — without the call to
/// libm's `fmodf` that `%` is.
#[inline]
pub fn wrap_coord(x: f32, l: f32) -> f32 {
    let r = if (0.0..l).contains(&x) {
        x
    } else if x >= l && x < 2.0 * l {
        x - l
    } else if x < 0.0 && x > -l {
        x + l
    } else {
        x.rem_euclid(l)
    };
    // rem_euclid of a tiny negative number rounds up to exactly L.
    if r >= l { 0.0 } else { r }
}

/// Reflects a coordinate about the walls at 0 and L, negating the velocity component to point
/// back inside. Always returns a coordinate in `[0, L)`.
fn bounce_axis(x: f32, v: f32, l: f32) -> (f32, f32) {
    if x < 0.0 {
        ((-x).min(l.next_down()), v.abs())
    } else if x >= l {
        ((2.0 * l - x).clamp(0.0, l.next_down()), -v.abs())
    } else {
        (x, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The centroid terms take each angle's sine and cosine from libm's `sincos`: the very
    /// bits of its `sin` and `cos`, for the angles a position gives (an `f32` in `[0, 2π]`),
    /// the small ones where `sin` and `sincos` test different bounds included.
    #[test]
    fn sincos_gives_the_bits_of_sin_and_cos() {
        let mut angles: Vec<f32> = vec![0.0, f32::MIN_POSITIVE, 1e-30, 1e-10, TAU];
        for edge in [
            // 2^-27 · √2 (libm tests a high word of 0x3e46a09e, a few steps below): under
            // it `cos` returns 1 and `sincos` (x, 1).
            1.053_671_2e-8,
            1.490_116_1e-8, // 2^-26, where `sin` stops returning x
            std::f32::consts::FRAC_PI_4,
            std::f32::consts::FRAC_PI_2,
            std::f32::consts::PI,
            3.0 * std::f32::consts::FRAC_PI_2,
            TAU,
        ] {
            let mut x = edge;
            for _ in 0..64 {
                x = x.next_down();
            }
            for _ in 0..128 {
                angles.push(x);
                x = x.next_up();
            }
        }
        let mut rng = rand_pcg::Pcg64::seed_from_u64(8);
        angles.extend((0..200_000).map(|_| rng.random::<f32>() * TAU));
        for a in angles {
            let a = a as f64;
            let (s, c) = libm::sincos(a);
            assert_eq!(s.to_bits(), libm::sin(a).to_bits(), "sin {a:e}");
            assert_eq!(c.to_bits(), libm::cos(a).to_bits(), "cos {a:e}");
        }
    }

    /// Eight points' terms at once are each point's own, to the bit, on a torus and between
    /// walls, for points on the world's edges and all over it (`sim::lanes`' tests take the
    /// lanes' sines and cosines at each vector width; the sample's test the whole first pass).
    #[test]
    fn eight_points_terms_are_each_point_s_own() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
        let bits = |t: CentroidTerm| match t {
            CentroidTerm::Angles(a) => a.map(f64::to_bits).to_vec(),
            CentroidTerm::Point(q) => vec![q.x.to_bits().into(), q.y.to_bits().into()],
        };
        for boundary in [Boundary::Wrap, Boundary::Bounce] {
            let space = Space {
                width: 1920.0,
                height: 1080.0,
                boundary,
            };
            // Angles 0, just under 2π, π, π/2 and 3π/2 first, then points anywhere.
            let mut points = vec![
                Vec2::ZERO,
                Vec2::new(1920f32.next_down(), 1080f32.next_down()),
                Vec2::new(960.0, 540.0),
                Vec2::new(480.0, 810.0),
            ];
            points
                .extend((0..3996).map(|_| {
                    Vec2::new(rng.random::<f32>() * 1920.0, rng.random::<f32>() * 1080.0)
                }));
            assert_eq!(points.len() % LANES, 0, "every point in a run of eight");
            for p in points.chunks_exact(LANES) {
                let p: [Vec2; LANES] = p.try_into().unwrap();
                for (t, q) in space.centroid_terms(p).into_iter().zip(p) {
                    assert_eq!(bits(t), bits(space.centroid_term(q)), "{boundary:?} {q}");
                }
            }
        }
    }

    #[test]
    fn wrap_axis_maps_into_half_open_interval() {
        assert_eq!(wrap_axis(0.0, 100.0), 0.0);
        assert_eq!(wrap_axis(49.0, 100.0), 49.0);
        assert_eq!(wrap_axis(50.0, 100.0), 50.0);
        assert_eq!(wrap_axis(-50.0, 100.0), 50.0);
        assert_eq!(wrap_axis(51.0, 100.0), -49.0);
        assert_eq!(wrap_axis(-99.0, 100.0), 1.0);
        assert_eq!(wrap_axis(99.0, 100.0), -1.0);
        assert_eq!(wrap_axis(250.0, 100.0), 50.0);
        assert_eq!(wrap_axis(-349.0, 100.0), -49.0);
    }

    #[test]
    fn displacement_across_the_seam_is_short() {
        let s = Space::torus(1920.0, 1080.0);
        let d = s.displacement(Vec2::new(1915.0, 5.0), Vec2::new(5.0, 1075.0));
        assert!((d - Vec2::new(10.0, -10.0)).length() < 1e-3, "{d}");
        let walls = Space {
            boundary: Boundary::Bounce,
            ..s
        };
        let d = walls.displacement(Vec2::new(1915.0, 5.0), Vec2::new(5.0, 1075.0));
        assert_eq!(d, Vec2::new(-1910.0, 1070.0));
    }

    #[test]
    fn wrap_coord_stays_inside() {
        assert_eq!(wrap_coord(-1e-9, 1920.0), 0.0);
        assert_eq!(wrap_coord(1920.0, 1920.0), 0.0);
        assert_eq!(wrap_coord(-10.0, 1920.0), 1910.0);
        assert_eq!(wrap_coord(1930.0, 1920.0), 10.0);
    }

    #[test]
    fn wrap_coord_is_rem_euclid_bit_for_bit() {
        // The one-add shortcut against the general formula, on and around every boundary.
        let general = |x: f32, l: f32| {
            let r = x.rem_euclid(l);
            if r >= l { 0.0 } else { r }
        };
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        for l in [1.0f32, 100.0, 1440.0, 1920.0, 13_500.0] {
            let mut xs = vec![
                0.0f32,
                -0.0,
                l,
                -l,
                2.0 * l,
                -2.0 * l,
                3.7 * l,
                -5.2 * l,
                1e-30,
            ];
            for edge in [0.0f32, l, -l, 2.0 * l] {
                xs.extend([edge.next_down(), edge.next_up(), edge - 1e-3, edge + 1e-3]);
            }
            xs.extend((0..2000).map(|_| (rng.random::<f32>() * 4.0 - 2.0) * l));
            for x in xs {
                assert_eq!(
                    wrap_coord(x, l).to_bits(),
                    general(x, l).to_bits(),
                    "x={x} l={l}"
                );
            }
        }
    }

    #[test]
    fn bounce_reflects_position_and_velocity() {
        let s = Space {
            width: 100.0,
            height: 50.0,
            boundary: Boundary::Bounce,
        };
        let (p, v) = s.confine(Vec2::new(-3.0, 52.0), Vec2::new(-10.0, 4.0));
        assert_eq!(p, Vec2::new(3.0, 48.0));
        assert_eq!(v, Vec2::new(10.0, -4.0));
        let (p, _) = s.confine(Vec2::new(100.0, 50.0), Vec2::ZERO);
        assert!(s.contains(p), "{p}");
    }

    #[test]
    fn torus_centroid_of_points_straddling_the_seam() {
        let s = Space::torus(100.0, 100.0);
        let c = s
            .centroid([Vec2::new(98.0, 50.0), Vec2::new(2.0, 50.0)])
            .unwrap();
        assert!(c.x < 1e-3 || c.x > 100.0 - 1e-3, "{c}");
        assert!((c.y - 50.0).abs() < 1e-3, "{c}");
        let c = s
            .centroid([Vec2::new(96.0, 10.0), Vec2::new(2.0, 10.0)])
            .unwrap();
        assert!((c.x - 99.0).abs() < 1e-3, "{c}");
        assert_eq!(s.centroid(std::iter::empty()), None);
    }
}
