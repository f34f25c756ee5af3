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
use crate::sim::lanes::{F8, vectorized};
use crate::sim::parallel::map_chunks;
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

impl Bounds {
    /// The two halves of this box on either side of `at` along `axis` (the kd-tree layout of
    /// `kd_tree::kd_sort_by`: a slice's median sits at len/2 and splits on axis depth % 2).
    fn split(self, axis: usize, at: Vec2) -> (Bounds, Bounds) {
        let (mut lower, mut upper) = (self, self);
        lower.hi[axis] = at[axis];
        upper.lo[axis] = at[axis];
        (lower, upper)
    }
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

/// Largest subtree [`KdTree::map_by_group`] treats as one group.
pub const GROUP: usize = 32;

/// The points within reach of a group of boids, in the order a query of any one of them
/// visits them (the tree's pre-order): their snapshot slots and coordinates (the coordinate
/// arrays are padded with far-away points to a multiple of eight, for SIMD scans).
#[derive(Clone, Debug, Default)]
pub struct Candidates {
    /// Snapshot slot of each candidate.
    pub slot: Vec<u32>,
    /// x of each candidate, px.
    pub x: Vec<f32>,
    /// y of each candidate, px.
    pub y: Vec<f32>,
    space: Space,
}

impl Candidates {
    fn clear(&mut self, space: Space) {
        self.slot.clear();
        self.x.clear();
        self.y.clear();
        self.space = space;
    }

    fn push(&mut self, slot: usize, p: Vec2) {
        self.slot.push(slot as u32);
        self.x.push(p.x);
        self.y.push(p.y);
    }

    fn pad(&mut self) {
        while !self.x.len().is_multiple_of(8) {
            self.x.push(1e30);
            self.y.push(1e30);
        }
    }

    /// Calls `hit(slot, offset)` for every candidate whose minimum-image offset from `centre`
    /// is shorter than `sqrt(r2)` — the test of a query, in the query's order, with the query's
    /// offsets (`Space::displacement`). Eight candidates are tested at a time with SIMD first.
    #[inline]
    pub fn for_each_within(&self, centre: Vec2, r2: f32, mut hit: impl FnMut(usize, Vec2)) {
        vectorized!({
            let space = self.space;
            let wrap = |d: F8, l: f32| if space.wraps() { d.wrap_axis(l) } else { d };
            let (cx, cy, r2v) = (F8::splat(centre.x), F8::splat(centre.y), F8::splat(r2));
            for k in (0..self.x.len()).step_by(8) {
                let x = F8::load(&self.x, k);
                let y = F8::load(&self.y, k);
                let dx = wrap(x - cx, space.width);
                let dy = wrap(y - cy, space.height);
                let mut bits = (dx * dx + dy * dy).cmp_lt(r2v).move_mask();
                while bits != 0 {
                    let c = k + bits.trailing_zeros() as usize;
                    let offset = space.displacement(centre, Vec2::new(self.x[c], self.y[c]));
                    if offset.length_squared() < r2 {
                        hit(self.slot[c] as usize, offset);
                    }
                    bits &= bits - 1;
                }
            }
        })
    }
}

impl KdTree<'_> {
    /// Maps `f(slot, candidates)` over every boid, a group at a time, and returns the results
    /// indexed by snapshot slot. A group is a subtree of at most [`GROUP`] points (or the
    /// median of a bigger one): the tree is walked once for it, collecting every point within
    /// `reach` of the group's bounding box, in pre-order. The points within `reach` of one
    /// member come in the order a query of that member visits them, so a member that filters
    /// the candidates with the query's exact test sees exactly its query's neighbours, in the
    /// same order — the same sums, bit for bit — and the walk is paid once per group.
    pub fn map_by_group<T: Send + Clone + Default + 'static>(
        &self,
        reach: f32,
        f: impl Fn(usize, &Candidates) -> T + Sync,
    ) -> Vec<T> {
        self.map_by_group_where(reach, |_| true, |_| true, f)
    }

    /// [`KdTree::map_by_group`] for the boids whose slot passes `member` only (the others get
    /// `T::default()`), with only the points whose slot passes `candidate` collected: e.g.
    /// Antivax boids looking for doctors. Each member still sees its query's candidates that
    /// pass `candidate`, in its query's order.
    pub fn map_by_group_where<T: Send + Clone + Default + 'static>(
        &self,
        reach: f32,
        member: impl Fn(usize) -> bool + Sync,
        candidate: impl Fn(usize) -> bool + Sync,
        f: impl Fn(usize, &Candidates) -> T + Sync,
    ) -> Vec<T> {
        let mut groups = Vec::new();
        collect_groups(0, self.items.len(), &mut groups);
        let conservative = reach * (1.0 + 1e-5) + 1e-3;
        let slot_of = |p: &Point2| p.entity.and_then(|e| self.snapshot.slot_of(e));
        let pairs: Vec<(u32, T)> = map_chunks(groups.len(), |chunk| {
            let mut out = Vec::new();
            let mut cands = Candidates::default();
            let mut members: Vec<(usize, Vec2)> = Vec::new();
            for g in &groups[chunk] {
                members.clear();
                members.extend(
                    self.items[g.clone()]
                        .iter()
                        .filter_map(|m| slot_of(m).map(|s| (s, m.vec)))
                        .filter(|(s, _)| member(*s)),
                );
                if members.is_empty() {
                    continue;
                }
                let mut gbox = Bounds {
                    lo: Vec2::splat(f32::INFINITY),
                    hi: Vec2::splat(f32::NEG_INFINITY),
                };
                for (_, p) in &members {
                    gbox.lo = gbox.lo.min(*p);
                    gbox.hi = gbox.hi.max(*p);
                }
                cands.clear(self.space);
                walk_box(
                    self,
                    self.items,
                    0,
                    self.root_bounds(),
                    gbox,
                    conservative,
                    &candidate,
                    &mut cands,
                );
                cands.pad();
                for (slot, _) in &members {
                    out.push((*slot as u32, f(*slot, &cands)));
                }
            }
            out
        });
        let mut by_slot = vec![T::default(); self.snapshot.len()];
        for (slot, v) in pairs {
            by_slot[slot as usize] = v;
        }
        by_slot
    }
}

/// The groups of the kd-ordered range `lo..hi`: a subtree of at most [`GROUP`] points is one
/// group; a bigger one splits into its lower half, its median alone, and its upper half.
fn collect_groups(lo: usize, hi: usize, out: &mut Vec<std::ops::Range<usize>>) {
    let len = hi - lo;
    if len == 0 {
        return;
    }
    if len <= GROUP {
        out.push(lo..hi);
        return;
    }
    let mid = lo + len / 2;
    collect_groups(lo, mid, out);
    out.push(mid..mid + 1);
    collect_groups(mid + 1, hi, out);
}

/// Distance along one axis between the intervals `[a_lo, a_hi]` and `[b_lo, b_hi]`, around the
/// torus if `wrap` (0 where they overlap).
#[inline]
fn interval_gap(a_lo: f32, a_hi: f32, b_lo: f32, b_hi: f32, l: f32, wrap: bool) -> f32 {
    let gap = |s: f32| (b_lo + s - a_hi).max(a_lo - (b_hi + s)).max(0.0);
    let direct = gap(0.0);
    if direct == 0.0 || !wrap || !a_lo.is_finite() || !a_hi.is_finite() {
        return direct;
    }
    direct.min(gap(l)).min(gap(-l))
}

/// Collects, in pre-order, every point that passes `keep` within `reach` of the box `g`
/// (conservatively).
fn walk_box(
    tree: &KdTree<'_>,
    items: &[Point2],
    depth: usize,
    bounds: Bounds,
    g: Bounds,
    reach: f32,
    keep: &impl Fn(usize) -> bool,
    out: &mut Candidates,
) {
    if items.is_empty() {
        return;
    }
    let space = tree.space;
    let wrap = space.wraps();
    let gx = interval_gap(bounds.lo.x, bounds.hi.x, g.lo.x, g.hi.x, space.width, wrap);
    let gy = interval_gap(bounds.lo.y, bounds.hi.y, g.lo.y, g.hi.y, space.height, wrap);
    if gx > reach || gy > reach || gx * gx + gy * gy > reach * reach {
        return;
    }
    let mid = items.len() / 2;
    let item = &items[mid];
    let px = interval_gap(item.vec.x, item.vec.x, g.lo.x, g.hi.x, space.width, wrap);
    let py = interval_gap(item.vec.y, item.vec.y, g.lo.y, g.hi.y, space.height, wrap);
    if px * px + py * py <= reach * reach
        && let Some(slot) = item.entity.and_then(|e| tree.snapshot.slot_of(e))
        && keep(slot)
    {
        out.push(slot, item.vec);
    }
    let (lower, upper) = bounds.split(depth % 2, item.vec);
    walk_box(tree, &items[..mid], depth + 1, lower, g, reach, keep, out);
    walk_box(
        tree,
        &items[mid + 1..],
        depth + 1,
        upper,
        g,
        reach,
        keep,
        out,
    );
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
    let (lower, upper) = bounds.split(depth % 2, item.vec);
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
