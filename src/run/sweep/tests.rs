//! Tests of the sweep design: ranges, the Latin hypercube, shards, values as run.

use super::*;

#[test]
fn params_parse_and_map() {
    let p = parse_param("epidemic.p_infect_normal=0.1..0.9").unwrap();
    assert_eq!(
        (p.key.as_str(), p.lo, p.hi, p.log),
        ("epidemic.p_infect_normal", 0.1, 0.9, false)
    );
    assert!((p.at(0.5) - 0.5).abs() < 1e-12);
    let q = parse_param("swarms.normal.noise=1..100:log").unwrap();
    assert!((q.at(0.5) - 10.0).abs() < 1e-9);
    for bad in ["x", "k=1", "k=2..1", "k=0..5:log", "=1..2", "k=a..b"] {
        assert!(parse_param(bad).is_err(), "{bad}");
    }
}

#[test]
fn latin_hypercube_fills_every_stratum_once() {
    for (n, d) in [(1, 1), (10, 3), (97, 2)] {
        let pts = latin_hypercube(n, d, 5);
        assert_eq!(pts.len(), n);
        for dim in 0..d {
            let mut strata: Vec<usize> = pts
                .iter()
                .map(|p| (p[dim] * n as f64).floor() as usize)
                .collect();
            assert!(pts.iter().all(|p| (0.0..1.0).contains(&p[dim])));
            strata.sort_unstable();
            assert_eq!(strata, (0..n).collect::<Vec<_>>(), "n={n} dim={dim}");
        }
    }
    assert_eq!(latin_hypercube(10, 2, 5), latin_hypercube(10, 2, 5));
    assert_ne!(latin_hypercube(10, 2, 5), latin_hypercube(10, 2, 6));
}

#[test]
fn shards_partition_the_samples_exactly() {
    for (n, k) in [(10, 3), (7, 7), (5, 8), (100, 1)] {
        let mut all: Vec<usize> = (0..k).flat_map(|i| shard_samples(n, i, k)).collect();
        all.sort_unstable();
        assert_eq!(all, (0..n).collect::<Vec<_>>());
    }
    assert_eq!(parse_shard("2/8"), Ok((2, 8)));
    assert!(parse_shard("8/8").is_err());
    assert!(parse_shard("1/0").is_err());
    assert!(parse_shard("x").is_err());
}

#[test]
fn integer_keys_are_rounded() {
    let base = SimConfig::default();
    let c = sample_config(&base, &["swarms.normal.count".into()], &[123.6], 9, None).unwrap();
    assert_eq!(c.swarms.normal.count, 124);
    assert_eq!(c.seed, 9);
    let c = sample_config(&base, &["epidemic.p_cure".into()], &[0.25], 1, Some(10.0)).unwrap();
    assert_eq!((c.epidemic.p_cure, c.duration), (0.25, 10.0));
    assert!(
        sample_config(
            &base,
            &["swarms.normal.min_speed".into()],
            &[900.0],
            1,
            None
        )
        .is_err()
    );
}
