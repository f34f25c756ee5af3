//! The default backend: bevy_spatial's `KDTree2<Boid>` resource, rebuilt from the snapshot with
//! the same `kd_tree` builder bevy_spatial's own update uses (its `UpdateSpatialAccess` trait is
//! not exported), and queried by a torus-aware walk of the tree's
//! kd-ordered item array. The walk allocates nothing, visits every point at most once (no
//! per-image duplicates), and tests candidates with the same minimum-image predicate as the
//! other backends, so the sets are identical.

use bevy::prelude::*;
use bevy_spatial::kdtree::KDTree2;
use bevy_spatial::point::{IntoSpatialPoint, Point2};

use super::{NeighbourIndex, Snapshot};
use crate::sim::agent::Boid;
use crate::sim::space::Space;

/// Rebuilds the tree from every position in the snapshot.
pub(super) fn rebuild(tree: &mut KDTree2<Boid>, snapshot: &Snapshot) {
    let points: Vec<Point2> = snapshot
        .pos
        .iter()
        .zip(&snapshot.entity)
        .map(|(p, e)| p.into_spatial_point(*e))
        .collect();
    tree.tree = kd_tree::KdTree::build_by_ordered_float(points);
}

/// A KD-tree query view over a snapshot.
pub struct KdTree<'a> {
    items: &'a [Point2],
    snapshot: &'a Snapshot,
    space: Space,
}

impl<'a> KdTree<'a> {
    /// Borrows the tree resource and the snapshot it was built from.
    pub fn new(tree: &'a KDTree2<Boid>, snapshot: &'a Snapshot) -> Self {
        Self {
            items: tree.tree.items(),
            snapshot,
            space: snapshot.space(),
        }
    }
}

impl KdTree<'_> {
    /// On a torus every point lies in [0, W) × [0, H): start from those bounds so the
    /// wrap-around gap of a subtree is known. Walls need no wrap: leave the bounds open.
    fn root_bounds(&self) -> Bounds {
        if self.space.wraps() {
            Bounds {
                lo: Vec2::ZERO,
                hi: self.space.size(),
            }
        } else {
            Bounds {
                lo: Vec2::splat(f32::NEG_INFINITY),
                hi: Vec2::splat(f32::INFINITY),
            }
        }
    }
}

/// Axis-aligned bounds of a subtree.
#[derive(Clone, Copy)]
struct Bounds {
    lo: Vec2,
    hi: Vec2,
}

impl NeighbourIndex for KdTree<'_> {
    fn for_each_within(&self, centre: Vec2, radius: f32, mut visit: impl FnMut(usize, Vec2)) {
        if self.items.is_empty() || radius <= 0.0 {
            return;
        }
        let bounds = self.root_bounds();
        // Pruning is conservative (a small margin); the exact test is the shared predicate.
        let reach = radius * (1.0 + 1e-5) + 1e-3;
        let mut examined = 0;
        walk(
            self,
            self.items,
            0,
            bounds,
            centre,
            radius,
            reach,
            &mut visit,
            &mut examined,
        );
    }

    fn candidates(&self, centre: Vec2, radius: f32) -> usize {
        let mut examined = 0;
        if !self.items.is_empty() && radius > 0.0 {
            let reach = radius * (1.0 + 1e-5) + 1e-3;
            walk(
                self,
                self.items,
                0,
                self.root_bounds(),
                centre,
                radius,
                reach,
                &mut |_, _| {},
                &mut examined,
            );
        }
        examined
    }
}

/// Distance along one axis from `c` to the interval `[lo, hi]`, around the torus if `wrap`.
#[inline]
fn axis_gap(c: f32, lo: f32, hi: f32, l: f32, wrap: bool) -> f32 {
    if c >= lo && c <= hi {
        return 0.0;
    }
    let direct = if c < lo { lo - c } else { c - hi };
    if !wrap || !lo.is_finite() || !hi.is_finite() {
        return direct;
    }
    // Going the other way round the circle.
    let around = if c < lo { c + l - hi } else { lo + l - c };
    direct.min(around.max(0.0))
}

fn walk(
    tree: &KdTree<'_>,
    items: &[Point2],
    depth: usize,
    bounds: Bounds,
    centre: Vec2,
    radius: f32,
    reach: f32,
    visit: &mut impl FnMut(usize, Vec2),
    examined: &mut usize,
) {
    if items.is_empty() {
        return;
    }
    let space = tree.space;
    let wrap = space.wraps();
    let gx = axis_gap(centre.x, bounds.lo.x, bounds.hi.x, space.width, wrap);
    let gy = axis_gap(centre.y, bounds.lo.y, bounds.hi.y, space.height, wrap);
    if gx > reach || gy > reach || gx * gx + gy * gy > reach * reach {
        return;
    }
    // kd-tree layout (kd_tree::kd_sort_by): the median of this slice sits at len/2, split on
    // axis depth % 2; the lower half is ≤ it on that axis, the upper half ≥.
    let mid = items.len() / 2;
    let item = &items[mid];
    *examined += 1;
    let offset = space.displacement(centre, item.vec);
    if offset.length_squared() < radius * radius
        && let Some(slot) = item.entity.and_then(|e| tree.snapshot.slot_of(e))
    {
        visit(slot, offset);
    }
    let axis = depth % 2;
    let split = item.vec[axis];
    let mut lower = bounds;
    let mut upper = bounds;
    lower.hi[axis] = split;
    upper.lo[axis] = split;
    walk(
        tree,
        &items[..mid],
        depth + 1,
        lower,
        centre,
        radius,
        reach,
        visit,
        examined,
    );
    walk(
        tree,
        &items[mid + 1..],
        depth + 1,
        upper,
        centre,
        radius,
        reach,
        visit,
        examined,
    );
}

/// The splitting lines of the tree down to `max_depth`, clipped to the world (for drawing).
pub fn splits(tree: &KDTree2<Boid>, space: &Space, max_depth: usize) -> Vec<(Vec2, Vec2)> {
    fn go(
        items: &[Point2],
        depth: usize,
        max: usize,
        lo: Vec2,
        hi: Vec2,
        out: &mut Vec<(Vec2, Vec2)>,
    ) {
        if items.is_empty() || depth >= max {
            return;
        }
        let mid = items.len() / 2;
        let axis = depth % 2;
        let split = items[mid].vec[axis];
        let (mut lower_hi, mut upper_lo) = (hi, lo);
        lower_hi[axis] = split;
        upper_lo[axis] = split;
        out.push(if axis == 0 {
            (Vec2::new(split, lo.y), Vec2::new(split, hi.y))
        } else {
            (Vec2::new(lo.x, split), Vec2::new(hi.x, split))
        });
        go(&items[..mid], depth + 1, max, lo, lower_hi, out);
        go(&items[mid + 1..], depth + 1, max, upper_lo, hi, out);
    }
    let mut out = Vec::new();
    go(
        tree.tree.items(),
        0,
        max_depth,
        Vec2::ZERO,
        space.size(),
        &mut out,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::agent::Disease;
    use crate::sim::neighbours::Row;
    use crate::sim::swarm::Swarm;
    use bevy_spatial::SpatialAccess;

    #[test]
    fn matches_bevy_spatial_within_distance_away_from_the_seam() {
        let space = Space::torus(1000.0, 1000.0);
        let rows: Vec<Row> = (0..500)
            .map(|i| Row {
                entity: Entity::from_raw(i),
                id: i as u64,
                pos: Vec2::new((i * 37 % 700 + 150) as f32, (i * 91 % 700 + 150) as f32),
                vel: Vec2::X,
                swarm: Swarm::Normal,
                disease: Disease::Susceptible,
            })
            .collect();
        let snapshot = Snapshot::from_rows(space, rows);
        let mut tree = KDTree2::<Boid>::default();
        rebuild(&mut tree, &snapshot);
        let view = KdTree::new(&tree, &snapshot);
        for q in [
            Vec2::new(500.0, 500.0),
            Vec2::new(300.0, 620.0),
            Vec2::new(777.0, 222.0),
        ] {
            let mut theirs: Vec<usize> = tree
                .within_distance(q, 60.0)
                .into_iter()
                .map(|(_, e)| snapshot.slot_of(e.unwrap()).unwrap())
                .collect();
            theirs.sort_unstable();
            assert_eq!(view.within(q, 60.0), theirs);
        }
    }

    #[test]
    fn axis_gap_wraps() {
        assert_eq!(axis_gap(5.0, 0.0, 10.0, 100.0, true), 0.0);
        assert_eq!(axis_gap(95.0, 0.0, 10.0, 100.0, true), 5.0);
        assert_eq!(axis_gap(95.0, 0.0, 10.0, 100.0, false), 85.0);
        assert_eq!(axis_gap(2.0, 90.0, 99.0, 100.0, true), 3.0);
        assert_eq!(axis_gap(2.0, 90.0, f32::INFINITY, 100.0, true), 88.0);
    }
}
