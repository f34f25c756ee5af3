//! Tests of the grid's spans and strips of cells.

use super::span::{Span, ceil_usize, cell_within, disc_span, floor_within};
use super::*;

#[test]
fn spans_wrap_and_never_repeat_a_cell() {
    let all: Vec<usize> = span(0, 1, 10, true).iter().collect();
    assert_eq!(all, vec![9, 0, 1]);
    let all: Vec<usize> = span(1, 2, 4, true).iter().collect();
    assert_eq!(all, vec![0, 1, 2, 3]);
    let all: Vec<usize> = span(0, 1, 10, false).iter().collect();
    assert_eq!(all, vec![0, 1]);
    let all: Vec<usize> = span(9, 3, 10, false).iter().collect();
    assert_eq!(all, vec![6, 7, 8, 9]);
}

#[test]
fn a_small_disc_reads_only_the_cells_it_overlaps() {
    let cells = |s: Span| s.iter().collect::<Vec<_>>();
    // Cells of 100 px on a 10-cell wrapped axis; k = ⌈10 / 100⌉ = 1 would read 3 cells.
    assert_eq!(cells(disc_span(450.0, 4, 10.0, 100.0, 10, true)), vec![4]);
    assert_eq!(
        cells(disc_span(405.0, 4, 10.0, 100.0, 10, true)),
        vec![3, 4]
    );
    assert_eq!(
        cells(disc_span(495.0, 4, 10.0, 100.0, 10, true)),
        vec![4, 5]
    );
    // Across the seam the cell keeps the shift of the full neighbourhood.
    let near_seam = disc_span(3.0, 0, 10.0, 100.0, 10, true);
    assert_eq!(cells(near_seam), vec![9, 0]);
    assert_eq!(near_seam.pieces(1000.0).next(), Some((9, 9, -1000.0)));
    // A bounded axis stops at the wall; a disc as wide as the axis reads it whole.
    assert_eq!(cells(disc_span(3.0, 0, 10.0, 100.0, 10, false)), vec![0]);
    assert!(disc_span(450.0, 4, 600.0, 100.0, 10, true).full);
}

#[test]
fn spans_split_into_contiguous_pieces_at_the_seam() {
    let pieces = |s: Span| s.pieces(100.0).collect::<Vec<_>>();
    // Cells 9, 0, 1 of 10: cell 9 across the low seam (shift −L), then 0..=1.
    assert_eq!(
        pieces(span(0, 1, 10, true)),
        vec![(9, 9, -100.0), (0, 1, 0.0)]
    );
    // Cells 8, 9, 0: 8..=9 inside, 0 across the high seam (+L).
    assert_eq!(
        pieces(span(9, 1, 10, true)),
        vec![(8, 9, 0.0), (0, 0, 100.0)]
    );
    assert_eq!(pieces(span(4, 1, 10, true)), vec![(3, 5, 0.0)]);
    // A span of the whole axis is one piece with no shift.
    assert_eq!(pieces(span(1, 2, 4, true)), vec![(0, 3, 0.0)]);
    assert_eq!(pieces(span(0, 1, 10, false)), vec![(0, 1, 0.0)]);
}

#[test]
fn the_grid_is_the_same_whatever_the_threads_of_its_scatter() {
    use crate::sim::neighbours::test_support::random_snapshot;
    let fields = |g: &Grid| {
        let bits = |a: &[f32]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        (
            (
                g.start.clone(),
                g.slot.clone(),
                g.swarm.clone(),
                g.entry_of.clone(),
            ),
            [&g.x, &g.y, &g.vx, &g.vy, &g.swarm_f].map(|a| bits(a)),
        )
    };
    for (n, seed) in [(0, 1), (1, 2), (7, 3), (500, 4), (3000, 5)] {
        let space = Space::torus(640.0, 480.0);
        let mut snapshot = random_snapshot(space, n, seed);
        if n > 0 {
            snapshot.isolated[n / 2] = true;
        }
        // Every boid (unlisted, and listed as a subset of all), and every third one.
        let keeps: [Option<fn(usize) -> bool>; 3] = [None, Some(|_| true), Some(|i| i % 3 == 0)];
        let mut every = None;
        for keep in keeps {
            let mut one = Grid::default();
            one.rebuild_on(&snapshot, 50.0, keep, Some(1), MIN_CELL_BUDGET);
            // The entries are the kept boids, each once.
            let mut slots = one.slot.clone();
            slots.sort_unstable();
            let want: Vec<u32> = (0..n as u32)
                .filter(|&i| keep.is_none_or(|k| k(i as usize)))
                .collect();
            assert_eq!(slots, want, "n = {n}: not the kept boids");
            // Each kept boid's entry is the one that holds it (`map_by_cell` takes a boid's
            // result from it).
            assert_eq!(one.entry_of.len(), want.len());
            for (&entry, &slot) in one.entry_of.iter().zip(&want) {
                assert_eq!(
                    one.slot[entry as usize], slot,
                    "n = {n}: another boid's entry"
                );
            }
            if slots.len() == n {
                let grid = fields(&one);
                assert!(
                    every.get_or_insert_with(|| grid.clone()) == &grid,
                    "n = {n}: a grid of every boid depends on how they were kept"
                );
            }
            // The padding on either side: far away, still, of no swarm.
            let m = one.slot.len();
            for at in (0..LANES).chain(m + LANES..m + 2 * LANES) {
                assert_eq!(
                    [
                        one.x[at],
                        one.y[at],
                        one.vx[at],
                        one.vy[at],
                        one.swarm_f[at]
                    ],
                    [FAR, FAR, 0.0, 0.0, -1.0],
                    "padding entry {at}"
                );
            }
            // One thread is the plain counting sort: cells in order, each in slot order.
            for c in 0..one.cols * one.rows {
                let run = &one.slot[one.start[c] as usize..one.start[c + 1] as usize];
                assert!(
                    run.windows(2).all(|w| w[0] < w[1]),
                    "cell {c} out of slot order"
                );
                for &slot in run {
                    assert_eq!(one.cell_index_of(snapshot.pos[slot as usize]), c);
                }
            }
            for threads in [2, 3, 8, 5000] {
                let mut many = Grid::default();
                many.rebuild_on(&snapshot, 50.0, keep, Some(threads), MIN_CELL_BUDGET);
                assert!(
                    fields(&many) == fields(&one),
                    "n = {n}, {threads} threads: another grid"
                );
            }
        }
    }
}

#[test]
fn a_packed_neighbourhood_is_its_strips_one_after_another_then_far_away_entries() {
    use crate::sim::neighbours::test_support::random_snapshot;
    // A small torus, so that neighbourhoods cross the seams (shifted strips) or span a whole
    // axis; cells of every occupancy, some empty; an isolated boid (swarm −2).
    let (mut shifted, mut whole_axis) = (0, 0);
    for (w, h, n, reach) in [(640.0, 480.0, 900, 50.0), (300.0, 220.0, 60, 90.0)] {
        let space = Space::torus(w, h);
        let mut snapshot = random_snapshot(space, n, 9);
        snapshot.isolated[n / 3] = true;
        let mut grid = Grid::default();
        grid.rebuild(&snapshot, reach);
        // One neighbourhood reused cell after cell, as a traversal's part does (the copy must
        // follow the strips, and its columns outlast shorter copies); then a second one packing
        // into the columns the first left on this thread, as the next part does.
        let mut hood = Neighbourhood::reusing();
        for c in (0..grid.cols * grid.rows).chain(0..grid.cols * grid.rows) {
            if c == 0 && hood.is_packed() {
                hood.keep_columns();
                let spare = super::neighbourhood::COLUMNS.take();
                assert!(
                    spare.columns.iter().all(|col| col.len() >= LANES),
                    "columns not kept"
                );
                super::neighbourhood::COLUMNS.set(spare);
                hood = Neighbourhood::reusing();
            }
            grid.neighbourhood(c % grid.cols, c / grid.cols, reach, &mut hood);
            let packed = hood.packed(&grid);
            let len = hood.len();
            whole_axis += usize::from(hood.wrap_each.any());
            assert_eq!(packed.len, len.next_multiple_of(LANES), "cell {c}");
            let mut m = 0;
            for strip in &hood.strips {
                shifted += usize::from(strip.sx != 0.0 || strip.sy != 0.0);
                for e in strip.lo..strip.hi {
                    let want = [
                        grid.x[e + LANES],
                        grid.y[e + LANES],
                        grid.vx[e + LANES],
                        grid.vy[e + LANES],
                        grid.swarm_f[e + LANES],
                        strip.sx,
                        strip.sy,
                    ];
                    let got = packed.columns.each_ref().map(|col| col[m]);
                    assert_eq!(
                        got.map(f32::to_bits),
                        want.map(f32::to_bits),
                        "cell {c}, {m}"
                    );
                    m += 1;
                }
            }
            for m in len..packed.len {
                let got = packed.columns.each_ref().map(|col| col[m]);
                assert_eq!(
                    got,
                    [FAR, FAR, 0.0, 0.0, -1.0, 0.0, 0.0],
                    "cell {c}, pad {m}"
                );
            }
        }
    }
    assert!(shifted > 0, "no neighbourhood crossed a seam");
    assert!(whole_axis > 0, "no neighbourhood spanned a whole axis");
}

#[test]
fn a_grid_of_a_few_boids_has_few_cells_and_finds_what_a_full_one_finds() {
    use crate::sim::neighbours::test_support::random_snapshot;
    let space = Space::torus(1440.0, 1000.0);
    let snapshot = random_snapshot(space, 2000, 7);
    // Five boids kept, as when five are infected and doctors search among them.
    let keep = |i: usize| i.is_multiple_of(400);
    let mut few = Grid::default();
    few.rebuild_few(&snapshot, 40.0, keep);
    let mut full = Grid::default();
    full.rebuild_subset(&snapshot, 40.0, keep);
    // At most 64 cells (`FEW_MIN_CELLS`) for five boids, against 36 × 25 of 40 px.
    assert!(few.cols * few.rows <= 64, "{} × {}", few.cols, few.rows);
    assert!(full.cols * full.rows > 500, "{} × {}", full.cols, full.rows);
    let found = |g: &Grid, centre: Vec2, radius: f32| {
        let mut hits = Vec::new();
        g.query(centre, radius, |slot, offset| {
            hits.push((slot, offset.x.to_bits(), offset.y.to_bits()))
        });
        hits.sort_unstable();
        hits
    };
    let mut hits = 0;
    for centre in snapshot.pos.iter().step_by(7) {
        for radius in [40.0, 160.0, 300.0] {
            let expected = found(&full, *centre, radius);
            hits += expected.len();
            assert_eq!(
                found(&few, *centre, radius),
                expected,
                "{centre} within {radius}"
            );
        }
    }
    assert!(hits > 100, "only {hits} hits: the test examines too little");
}

#[test]
fn floor_cell_and_ceil_without_libm_match_libm_for_every_kind_of_f32() {
    // Every 4 096th bit pattern (both signs, every exponent, NaNs and infinities among them),
    // and the values around the integers a grid's quotients land on.
    let strided = (0..=u32::MAX >> 12).map(|k| f32::from_bits(k << 12 | k & 0xfff));
    let near_integers = (-300..300).flat_map(|i| {
        let x = i as f32 / 2.0;
        [x, x.next_up(), x.next_down()]
    });
    let specials = [
        0.0,
        -0.0,
        f32::MAX,
        f32::MIN,
        9.3e18,
        -9.3e18,
        1.9e19,
        16_777_217.0,
    ];
    let mut seen = 0;
    for x in strided.chain(near_integers).chain(specials) {
        // Clamped as a span's ends are: to the cells around c and to c, on either side.
        for (lo, hi) in [(-3, 2), (0, 0), (-40, -40), (5, 9), (-1000, 1000)] {
            let want = if x.is_nan() {
                lo
            } else {
                (x.floor() as isize).clamp(lo, hi)
            };
            assert_eq!(
                floor_within(x, lo, hi),
                want,
                "floor {x:e} ({:#x}) in {lo}..={hi}",
                x.to_bits()
            );
        }
        for cells in [1, 2, 7, 4096] {
            assert_eq!(
                cell_within(x, cells),
                (x.max(0.0) as usize).min(cells - 1),
                "cell of {x:e} ({:#x}) among {cells}",
                x.to_bits()
            );
        }
        assert_eq!(
            ceil_usize(x),
            x.ceil() as usize,
            "ceil {x:e} ({:#x})",
            x.to_bits()
        );
        seen += 1;
    }
    assert!(seen > 1_000_000);
}

#[test]
fn a_traversal_gives_every_boid_its_result_however_its_entries_are_split() {
    use crate::sim::neighbours::test_support::random_snapshot;
    // A world of a few crowded cells (most runs of entries start inside a cell), one of many,
    // and one of five boids; a filter keeps two boids in three.
    for (n, w, reach) in [
        (300usize, 900.0, 300.0),
        (1000, 2000.0, 60.0),
        (5, 300.0, 300.0),
    ] {
        let space = Space::torus(w, 0.7 * w);
        let snapshot = random_snapshot(space, n, n as u64 + 11);
        let mut grid = Grid::default();
        grid.rebuild(&snapshot, reach);
        let wanted = |e: usize| grid.slot[e] % 3 != 1;
        // Each kept entry's slot and how many entries its neighbourhood holds; each finished
        // result also the slot `finish` was given for it.
        type Seen = Option<(u32, usize)>;
        let kept = (0..n).filter(|&e| wanted(e)).count();
        let run = |parts: usize, stage: bool| {
            let mut out = vec![(u32::MAX, None); n];
            // Every kept entry is seen once, by one part.
            let calls = std::sync::atomic::AtomicUsize::new(0);
            grid.map_by_cell_in(
                parts,
                stage,
                reach,
                wanted,
                |e, hood, seen: &mut Seen| {
                    calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    *seen = Some((grid.slot[e], hood.len()));
                },
                |slots: &[u32], seen: &mut [Seen], out: &mut [(u32, Seen)]| {
                    assert!(slots.len() <= BATCH && slots.len() == seen.len());
                    for ((o, seen), &slot) in out.iter_mut().zip(seen.iter()).zip(slots) {
                        *o = (slot, *seen);
                    }
                },
                &mut out,
            );
            assert_eq!(calls.into_inner(), kept, "n = {n}, {parts} parts: calls");
            out
        };
        let one = run(1, false);
        for (i, &(slot, seen)) in one.iter().enumerate() {
            assert_eq!(slot as usize, i, "n = {n}: result in the wrong slot");
            let want = (i % 3 != 1).then(|| (i as u32, grid.candidates(snapshot.pos[i], reach)));
            assert_eq!(seen, want, "n = {n}, slot {i}");
        }
        // Each part's results moved straight to their slots, or staged in entry order first.
        for parts in [1, 2, 3, 4, 7, 64, n, n + 5] {
            for stage in [false, true] {
                let got = run(parts, stage);
                assert!(
                    got == one,
                    "n = {n}, {parts} parts, staged {stage}: other results"
                );
            }
        }
    }
}

#[test]
fn the_pairs_a_loop_visits_are_its_sources_times_the_boids_of_the_cells_they_span() {
    use crate::sim::neighbours::test_support::random_snapshot;
    // `matrix/B2_D2`'s world and radius: 4 × 3 cells of 360 × 333 px, each neighbourhood
    // 3 × 3 of them.
    let snapshot = random_snapshot(Space::torus(1440.0, 1000.0), 130, 3);
    let mut grid = Grid::default();
    grid.rebuild(&snapshot, 300.0);
    assert_eq!((grid.cols, grid.rows), (4, 3));
    assert_eq!(grid.pairs_within(300.0, 130), 130.0 * 130.0 * 9.0 / 12.0);
    assert_eq!(grid.pairs_within(300.0, 40), 40.0 * 130.0 * 9.0 / 12.0);
    // A reach of two cells spans every column (5 of 4) and every row: the whole world.
    assert_eq!(grid.pairs_within(700.0, 130), 130.0 * 130.0);
    // A smaller reach still spans one cell either side.
    assert_eq!(grid.pairs_within(10.0, 130), 130.0 * 130.0 * 9.0 / 12.0);
}

#[test]
fn a_reach_of_one_cell_is_told_from_a_wider_one() {
    use crate::sim::neighbours::test_support::random_snapshot;
    let s = random_snapshot(Space::torus(1000.0, 800.0), 500, 3);
    let mut grid = Grid::default();
    grid.rebuild_subset(&s, 50.0, |i| i.is_multiple_of(2));
    // 20 × 16 cells of 50 px: a reach of 100 px spans two cells each way.
    assert_eq!(grid.dims(), (20, 16));
    assert!(grid.reach_is_one_cell(50.0));
    assert!(!grid.reach_is_one_cell(100.0));
    // 3 × 2 cells: every neighbourhood and every query spans both axes whole.
    let small = random_snapshot(Space::torus(300.0, 250.0), 50, 4);
    grid.rebuild_subset(&small, 100.0, |_| true);
    assert_eq!(grid.dims(), (3, 2));
    assert!(grid.reach_is_one_cell(250.0));
}
