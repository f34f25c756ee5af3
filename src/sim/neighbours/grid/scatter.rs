//! The grid's scatter: the boids' rows copied to their entries in cell order when the grid is
//! rebuilt (`Grid::rebuild_on`), a run of entries per thread. No systems live here.

use bevy::prelude::*;

use super::ISOLATED_LANE;
use crate::sim::swarm::Swarm;

/// The snapshot's columns a rebuild copies to the grid's entries.
pub(super) struct Rows<'a> {
    pub pos: &'a [Vec2],
    pub vel: &'a [Vec2],
    pub swarm: &'a [Swarm],
    pub isolated: &'a [bool],
}

/// Entries of the grid being written: each one's slot, swarm and lane columns (x, y, vx, vy and
/// the swarm as a float), from the first entry of a run of them.
pub(super) struct Entries<'a> {
    pub slot: &'a mut [u32],
    pub swarm: &'a mut [Swarm],
    pub columns: [&'a mut [f32]; 5],
}

impl<'a> Entries<'a> {
    /// The first `len` entries, leaving the rest here.
    pub(super) fn split_off(&mut self, len: usize) -> Entries<'a> {
        let slot;
        (slot, self.slot) = std::mem::take(&mut self.slot).split_at_mut(len);
        let swarm;
        (swarm, self.swarm) = std::mem::take(&mut self.swarm).split_at_mut(len);
        let columns = self.columns.each_mut().map(|column| {
            let head;
            (head, *column) = std::mem::take(column).split_at_mut(len);
            head
        });
        Entries {
            slot,
            swarm,
            columns,
        }
    }

    /// Writes boid `slot`'s row to entry `entry`.
    #[inline(always)]
    pub(super) fn put(&mut self, entry: usize, slot: usize, rows: &Rows) {
        let (p, v, swarm) = (rows.pos[slot], rows.vel[slot], rows.swarm[slot]);
        self.slot[entry] = slot as u32;
        self.swarm[entry] = swarm;
        let [x, y, vx, vy, swarm_f] = &mut self.columns;
        x[entry] = p.x;
        y[entry] = p.y;
        vx[entry] = v.x;
        vy[entry] = v.y;
        // An isolated boid is of no swarm for alignment and cohesion (it attracts no one) but
        // is still kept apart from (docs/model.md §11).
        swarm_f[entry] = if rows.isolated[slot] {
            ISOLATED_LANE
        } else {
            swarm.index() as f32
        };
    }
}
