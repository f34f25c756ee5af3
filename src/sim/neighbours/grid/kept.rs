//! Which boids a grid of some of them (the doctors, the infected) holds: [`pick_kept`], their
//! slots in order, picked in parallel. No systems live here.

use crate::sim::parallel::{SERIAL_BELOW, for_each_part, parts_for};

/// The slots of `0..n` that pass `keep`, in order, into `kept` (emptied first). From
/// [`SERIAL_BELOW`] boids in parallel, in two passes over the same runs of slots: each run asks
/// `keep` of its slots once, setting a bit for each kept one and counting them, then writes
/// its kept slots at its place in `kept`. Besides `kept` only the bits are made, an eighth of
/// a byte a boid (the city's memory, `city.toml`, is counted to the byte). A grid of the 10 000
/// doctors among 100 000 boids took 0.28–0.37 ms with the slots picked on one thread and
/// 0.25–0.26 ms with them picked on both into a list per run (BENCHMARKS.md, round 3,
/// thirty-fifth stop), which made up to 8 bytes a boid more.
pub(super) fn pick_kept(n: usize, keep: &(impl Fn(usize) -> bool + Sync), kept: &mut Vec<u32>) {
    kept.clear();
    let parts = parts_for(n);
    if n < SERIAL_BELOW || parts == 1 {
        kept.extend((0..n).filter(|&i| keep(i)).map(|i| i as u32));
        return;
    }
    // Runs of whole words of 64 slots each.
    let mut bits = vec![0u64; n.div_ceil(64)];
    let run = bits.len().div_ceil(parts);
    let mut counts = vec![0; bits.len().div_ceil(run)];
    let words = bits.chunks_mut(run).zip(&mut counts).enumerate();
    for_each_part(words.collect(), |(r, (words, count))| {
        for (w, word) in words.iter_mut().enumerate() {
            let first = (r * run + w) * 64;
            for i in first..(first + 64).min(n) {
                *word |= u64::from(keep(i)) << (i - first);
            }
            *count += word.count_ones() as usize;
        }
    });
    kept.resize(counts.iter().sum(), 0);
    let mut rest = &mut kept[..];
    let mut places = Vec::with_capacity(counts.len());
    for &count in &counts {
        let (place, after) = rest.split_at_mut(count);
        places.push(place);
        rest = after;
    }
    let runs = bits.chunks(run).zip(places).enumerate();
    for_each_part(runs.collect(), |(r, (words, place))| {
        let mut at = 0;
        for (w, &word) in words.iter().enumerate() {
            let first = (r * run + w) * 64;
            let mut word = word;
            while word != 0 {
                place[at] = (first + word.trailing_zeros() as usize) as u32;
                at += 1;
                word &= word - 1;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_slots_are_those_a_filter_gives_in_order() {
        // Below and above the size where the runs are picked in parallel; none, some, all.
        for n in [0, 7, SERIAL_BELOW - 1, SERIAL_BELOW, 5_000, 100_003] {
            for keep in [
                &(|_: usize| false) as &(dyn Fn(usize) -> bool + Sync),
                &|i| (i * 7919) % 13 < 3,
                &|_| true,
            ] {
                // Whatever `kept` held before goes.
                let mut kept = vec![9; 5];
                pick_kept(n, &keep, &mut kept);
                let want: Vec<u32> = (0..n).filter(|&i| keep(i)).map(|i| i as u32).collect();
                assert_eq!(kept, want, "{n} slots");
            }
        }
    }
}
