//! The set-associative store: exact victims per policy on hand-made
//! sequences (expected values worked out by hand from the definitions in
//! docs/cache.md), LFI's counters, restricted victims, random's seeding,
//! geometry and configuration errors, and capacity accounting.

use std::collections::BTreeSet;

use fabricsim::agents::cache::{CacheGeometry, CacheParams, GeometryError, SetAssoc, VictimPolicy, Ways};
use fabricsim::config::load::typed;

use VictimPolicy::*;

#[derive(Clone, Copy)]
enum Op {
    I(u64),
    T(u64),
    R(u64),
}
use Op::*;

fn cache(sets: u32, ways: u32, policy: VictimPolicy) -> SetAssoc<u64> {
    SetAssoc::new(CacheGeometry::new((sets * ways) as u64 * 64, 64, ways).unwrap(), policy, 1)
}

/// Run `ops`; the evicted lines in order. Every insertion's eviction must be
/// the one `victim` announced just before it, with the inserted value.
fn victims(c: &mut SetAssoc<u64>, ops: &[Op]) -> Vec<u64> {
    let mut out = Vec::new();
    for &op in ops {
        match op {
            I(a) => {
                let predicted = c.victim(a);
                let e = c.insert(a, 100 + a);
                assert_eq!(e.map(|e| e.0), predicted, "victim({a}) announced {predicted:?}");
                if let Some((v, val)) = e {
                    assert_eq!(val, 100 + v);
                    out.push(v);
                }
            }
            T(a) => {
                c.touch(a);
            }
            R(a) => {
                c.remove(a);
            }
        }
    }
    out
}

/// One set of 4 ways. After I1..I4, T1, T3 the recency order (least to most
/// recent) is 2 4 1 3 and the insertion order 1 2 3 4.
const ONE_SET: [Op; 11] = [I(1), I(2), I(3), I(4), T(1), T(3), I(5), T(4), T(2), I(6), I(7)];

#[test]
fn lru_one_set() {
    // I5 evicts 2 (order 4 1 3 5); T4 -> 1 3 5 4; T2 misses; I6 evicts 1
    // (3 5 4 6); I7 evicts 3.
    assert_eq!(victims(&mut cache(1, 4, Lru), &ONE_SET), [2, 1, 3]);
}

#[test]
fn fifo_one_set() {
    // Touches ignored: I5 evicts 1, I6 evicts 2, I7 evicts 3.
    assert_eq!(victims(&mut cache(1, 4, Fifo), &ONE_SET), [1, 2, 3]);
}

#[test]
fn lifo_one_set() {
    // The newest inserted goes: I5 evicts 4, I6 evicts 5, I7 evicts 6.
    assert_eq!(victims(&mut cache(1, 4, Lifo), &ONE_SET), [4, 5, 6]);
}

#[test]
fn mru_one_set() {
    // I5 evicts 3 (order 2 4 1 5); T4 -> 2 1 5 4; T2 -> 1 5 4 2; I6 evicts 2
    // (1 5 4 6); I7 evicts 6.
    assert_eq!(victims(&mut cache(1, 4, Mru), &ONE_SET), [3, 2, 6]);
}

#[test]
fn lfi_one_set() {
    // All counts 1: ties to the oldest inserted, so 1, 2, 3 as FIFO. Then 1
    // and 2 come back (count 2) evicting 4 and 5; from then on the lines
    // inserted once go, oldest first, and 1 and 2 stay.
    let mut ops = ONE_SET.to_vec();
    ops.extend([I(1), I(2), I(8), I(9), I(10), I(11), I(12)]);
    let mut c = cache(1, 4, Lfi);
    assert_eq!(victims(&mut c, &ops), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert_eq!((c.insertions(1), c.insertions(2), c.insertions(12)), (2, 2, 1));
    assert!(c.contains(1) && c.contains(2) && c.contains(11) && c.contains(12));
}

/// Two sets of 2 ways: even lines in set 0, odd lines in set 1.
/// Set 0 holds 0 2, set 1 holds 1 3; T0 and T3 make 0 and 3 most recent.
const TWO_SETS: [Op; 9] = [I(0), I(1), I(2), I(3), T(0), T(3), I(4), I(5), I(7)];

#[test]
fn two_sets_index_by_line_mod_sets() {
    // LRU: I4 evicts 2 (set 0: 0 4); I5 evicts 1 (set 1: 3 5); I7 evicts 3.
    assert_eq!(victims(&mut cache(2, 2, Lru), &TWO_SETS), [2, 1, 3]);
    // FIFO: I4 evicts 0; I5 evicts 1; I7 evicts 3 (set 1: 3 5).
    assert_eq!(victims(&mut cache(2, 2, Fifo), &TWO_SETS), [0, 1, 3]);
    // LIFO: I4 evicts 2; I5 evicts 3; I7 evicts 5.
    assert_eq!(victims(&mut cache(2, 2, Lifo), &TWO_SETS), [2, 3, 5]);
    // MRU: I4 evicts 0 (touched); I5 evicts 3 (touched); I7 evicts 5.
    assert_eq!(victims(&mut cache(2, 2, Mru), &TWO_SETS), [0, 3, 5]);
    // LFI: every count is 1, so FIFO's victims.
    assert_eq!(victims(&mut cache(2, 2, Lfi), &TWO_SETS), [0, 1, 3]);
    // Random: whatever it picks is in the inserted line's set.
    let mut c = cache(2, 2, Random);
    let v = victims(&mut c, &TWO_SETS);
    assert_eq!(v.len(), 3);
    assert_eq!(v[0] % 2, 0);
    assert_eq!(v[1] % 2, 1);
    assert_eq!(v[2] % 2, 1);
}

#[test]
fn a_set_count_that_is_not_a_power_of_two_uses_modulo() {
    // 3 sets × 2 ways: lines 0, 3, 6 share set 0.
    let mut c = cache(3, 2, Fifo);
    assert_eq!(c.geometry().sets(), 3);
    assert_eq!(victims(&mut c, &[I(0), I(3), I(1), I(4), I(2), I(5), I(6), I(7)]), [0, 1]);
    assert_eq!(c.len(), 6);
}

#[test]
fn lfi_a_line_inserted_three_times_survives_one_inserted_once() {
    // 1 set × 2 ways. A inserted three times (removed between), then B
    // once. C evicts B, though A is older; D evicts C.
    let (a, b, cc, d) = (10, 20, 30, 40);
    let mut c = cache(1, 2, Lfi);
    let v = victims(&mut c, &[I(a), R(a), I(a), R(a), I(a), I(b), I(cc), I(d)]);
    assert_eq!(v, [b, cc]);
    assert_eq!(c.insertions(a), 3);
    // The count survives an eviction, not only a removal: in 1 × 2, 1 is
    // evicted by 3, comes back (count 2, evicting 2, the older of the
    // count-1 pair), and then outlives 3, 4 and 5.
    let mut c = cache(1, 2, Lfi);
    assert_eq!(victims(&mut c, &[I(1), I(2), I(3), I(1), I(4), I(5), I(6)]), [1, 2, 3, 4, 5]);
    assert!(c.contains(1));
}

#[test]
fn lfi_ties_go_to_the_oldest_inserted() {
    let mut c = cache(1, 3, Lfi);
    // 7 and 8 reach count 2 (8 after 7); 9 count 1 is evicted first, then
    // the tie between 7 and 8 goes to 7, inserted earlier.
    let v = victims(&mut c, &[I(7), I(8), R(7), R(8), I(7), I(8), I(9), I(1), R(1), I(2)]);
    // I1 evicts 9 (the only count-1 line); after R1, I2 fills the free way.
    assert_eq!(v, [9]);
    // Now 7(2) 8(2) 2(1): I3 evicts 2, then I9 (count 2, newest) evicts 3 (count 1)
    assert_eq!(victims(&mut c, &[I(3), I(9)]), [2, 3]);
    // 7, 8, 9 all have count 2; the oldest insertion is 7's, then 8's.
    assert_eq!(c.victim(4), Some(7));
    assert_eq!(c.victim_where(4, |a, _| a != 7), Some(8));
    // I4 evicts 7; then 4 (count 1) goes before 8 and 9 (count 2).
    assert_eq!(victims(&mut c, &[I(4), I(5)]), [7, 4]);
}

#[test]
fn victim_where_skips_excluded_lines() {
    // For each policy, exclude its unrestricted victim: the next line in the
    // policy's order is chosen. Set after I1..I4, T1, T3: recency 2 4 1 3.
    let ops = [I(1), I(2), I(3), I(4), T(1), T(3)];
    for (p, first, second) in [(Lru, 2, 4), (Fifo, 1, 2), (Lifo, 4, 3), (Mru, 3, 1), (Lfi, 1, 2)] {
        let mut c = cache(1, 4, p);
        victims(&mut c, &ops);
        assert_eq!(c.victim(9), Some(first), "{p}");
        assert_eq!(c.victim_where(9, |a, _| a != first), Some(second), "{p}");
        // The predicate sees the value too.
        assert_eq!(c.victim_where(9, |_, &v| v != 100 + first), Some(second), "{p}");
        assert_eq!(c.victim_where(9, |a, _| a == 3), Some(3), "{p}");
        // All excluded: no victim, though an eviction is needed.
        assert_eq!(c.victim_where(9, |_, _| false), None, "{p}");
        assert!(c.needs_eviction(9));
        // Resident line or free way: nothing to evict.
        assert_eq!(c.victim_where(1, |_, _| true), None);
        c.remove(2);
        assert!(!c.needs_eviction(9));
        assert_eq!(c.victim(9), None);
        assert_eq!(c.victim_where(9, |_, _| true), None);
    }
    let mut c = cache(1, 4, Random);
    victims(&mut c, &ops);
    for _ in 0..20 {
        let v = c.victim_where(9, |a, _| a == 2 || a == 4).unwrap();
        assert!(v == 2 || v == 4);
        c.remove(v);
        c.insert(v, 0);
    }
    assert_eq!(c.victim_where(9, |_, _| false), None);
}

#[test]
fn a_protocol_writes_back_a_stable_victim_then_inserts() {
    // The write-back flow of docs/cache.md: pick among stable lines, remove
    // it (its value goes to the write-back), then insert into the free way.
    let mut c: SetAssoc<(bool, u32)> = SetAssoc::new(CacheGeometry::fully_associative(2, 64).unwrap(), Lru, 1);
    c.insert(1, (false, 11)); // transient
    c.insert(2, (true, 22));
    let v = c.victim_where(3, |_, &(stable, _)| stable).unwrap();
    assert_eq!(v, 2);
    assert_eq!(c.remove(v), Some((true, 22)));
    assert_eq!(c.insert(3, (true, 33)), None);
    assert_eq!(c.get(1), Some(&(false, 11)));
    c.get_mut(1).unwrap().0 = true;
    assert_eq!(c.victim_where(4, |_, &(s, _)| s), Some(1));
}

fn random_victims(seed: u64) -> Vec<u64> {
    let mut c: SetAssoc<u64> = SetAssoc::new(CacheGeometry::new(4 * 8 * 64, 64, 8).unwrap(), Random, seed);
    let ops: Vec<Op> = (0..2000u64).map(|i| I(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 50)).collect();
    victims(&mut c, &ops)
}

#[test]
fn random_is_seeded() {
    let a = random_victims(1);
    assert!(a.len() > 1000);
    assert_eq!(a, random_victims(1));
    let b = random_victims(2);
    assert_ne!(a, b);
    // Not a near copy either: most victims differ.
    let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
    assert!(same < a.len() / 2, "{same} of {} equal", a.len());
}

#[test]
fn geometry_errors_are_errors() {
    use GeometryError::*;
    assert_eq!(CacheGeometry::new(0, 64, 1), Err(ZeroSize));
    assert_eq!(CacheGeometry::new(1000, 64, 1), Err(SizeNotMultipleOfLine { size: 1000, line: 64 }));
    assert_eq!(CacheGeometry::new(512, 0, 1), Err(BadLine { line: 0 }));
    assert_eq!(CacheGeometry::new(512, 64, 0), Err(ZeroWays));
    assert_eq!(CacheGeometry::new(512, 64, 3), Err(LinesNotMultipleOfWays { lines: 8, ways: 3 }));
    assert_eq!(CacheGeometry::new(512, 64, 16), Err(WaysExceedLines { ways: 16, lines: 8 }));
    assert_eq!(CacheGeometry::new(1 << 40, 1, 1), Err(TooManyLines { lines: 1 << 40 }));
    assert_eq!(CacheGeometry::fully_associative(0, 64), Err(ZeroSize));
    let g = CacheGeometry::new(12 * 64, 64, 4).unwrap();
    assert_eq!((g.sets(), g.ways(), g.line_bytes(), g.lines()), (3, 4, 64, 12));
    let g = CacheGeometry::new(32 << 10, 64, 8).unwrap();
    assert_eq!((g.sets(), g.ways()), (64, 8));
    assert_eq!(g.set_of(g.line_of(64 * 65 + 3)), 1);
    let g = CacheGeometry::fully_associative(1000, 64).unwrap();
    assert!(g.is_fully_associative());
    assert_eq!((g.sets(), g.ways()), (1, 1000));
    let e = CacheGeometry::new(512, 64, 3).unwrap_err();
    assert_eq!(e.key(), "ways");
    assert!(e.to_string().contains("not a multiple of 3 ways"), "{e}");
}

fn params(toml_text: &str) -> Result<CacheParams, fabricsim::ConfigError> {
    let table: toml::Table = toml::from_str(toml_text).unwrap();
    typed(table, "c.toml", "l1", &[])
}

#[test]
fn cache_params_parse_and_validate() {
    let p = params("size = \"32KiB\"\nways = 8\nhit_latency = \"2ns\"\nmshrs = 4\npolicy = \"lfi\"").unwrap();
    assert_eq!(p.policy, Lfi);
    assert_eq!(p.hit_latency.ps(), 2_000);
    assert_eq!(p.line.bytes(), 64);
    let g = p.validate("c.toml", "l1").unwrap();
    assert_eq!((g.sets(), g.ways(), g.line_bytes()), (64, 8, 64));

    let p = params("size = \"4KiB\"\nline = \"4KiB\"\nways = \"full\"").unwrap();
    assert_eq!(p.ways, Ways::Full);
    assert_eq!(p.policy, Lru);
    assert_eq!(p.validate("c.toml", "sf").unwrap().sets(), 1);
    let g = params("size = \"1MiB\"\nways = \"full\"").unwrap().validate("c.toml", "sf").unwrap();
    assert_eq!((g.sets(), g.ways()), (1, 16384));

    let e = params("size = \"32KiB\"\npolicy = \"lfu\"").unwrap_err().to_string();
    assert!(e.starts_with("c.toml: l1.policy:") && e.contains("lru, fifo, lifo, mru, lfi, random"), "{e}");
    let e = params("size = \"32KiB\"\nassoc = 4").unwrap_err().to_string();
    assert!(e.starts_with("c.toml: l1.assoc: unknown key"), "{e}");
    let e = params("size = \"32 parsecs\"").unwrap_err().to_string();
    assert!(e.starts_with("c.toml: l1.size:") && e.contains("unknown unit"), "{e}");
    let e = params("ways = 4").unwrap_err().to_string();
    assert!(e.starts_with("c.toml: l1.size: missing"), "{e}");
    let e = params("size = \"1KiB\"\nways = \"half\"").unwrap_err().to_string();
    assert!(e.starts_with("c.toml: l1.ways:") && e.contains("'full'"), "{e}");

    let bad = |t: &str| params(t).unwrap().validate("c.toml", "l1").unwrap_err().to_string();
    let e = bad("size = \"1000B\"");
    assert!(e.starts_with("c.toml: l1.size: 1000B:") && e.contains("multiple of the line size (64B)"), "{e}");
    let e = bad("size = \"3KiB\"\nways = 5");
    assert!(e.starts_with("c.toml: l1.ways: 5:") && e.contains("48 lines"), "{e}");
    let e = bad("size = \"1KiB\"\nways = 0");
    assert!(e.starts_with("c.toml: l1.ways: 0:"), "{e}");
    let e = bad("size = \"1KiB\"\nline = \"0B\"");
    assert!(e.starts_with("c.toml: l1.line: 0B:"), "{e}");
    let e = bad("size = \"1KiB\"\nmshrs = 0");
    assert!(e.starts_with("c.toml: l1.mshrs: 0:"), "{e}");
    let e = bad("size = \"1000B\"\nways = \"full\"");
    assert!(e.starts_with("c.toml: l1.size:"), "{e}");
}

#[test]
fn policy_names_round_trip() {
    for p in VictimPolicy::ALL {
        assert_eq!(VictimPolicy::parse(p.name()), Ok(p));
        assert_eq!(p.to_string(), p.name());
    }
    assert!(VictimPolicy::parse("LRU").is_err());
    assert_eq!(VictimPolicy::ALL.map(|p| p.name()), ["lru", "fifo", "lifo", "mru", "lfi", "random"]);
}

#[test]
fn capacity_every_eviction_reported_once() {
    // 16-way sets and a fully associative store with the hash index.
    for geom in [CacheGeometry::new(4 * 4 * 64, 64, 4).unwrap(), CacheGeometry::fully_associative(100, 64).unwrap()] {
        for p in VictimPolicy::ALL {
            let mut c: SetAssoc<u64> = SetAssoc::new(geom, p, 9);
            let n = 5 * c.capacity() as u64 + 7;
            let mut evicted = Vec::new();
            for i in 0..n {
                // Distinct lines, spread over the sets in a scrambled order.
                let a = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20;
                if let Some((v, val)) = c.insert(a, a) {
                    assert_eq!(v, val, "{p}");
                    evicted.push(v);
                }
            }
            assert_eq!(c.len(), c.capacity(), "{p}");
            assert_eq!(evicted.len() as u64, n - c.capacity() as u64, "{p}");
            let ev: BTreeSet<u64> = evicted.iter().copied().collect();
            assert_eq!(ev.len(), evicted.len(), "{p}: a line evicted twice");
            let resident: BTreeSet<u64> = c.iter().map(|(a, _)| a).collect();
            assert_eq!(resident.len(), c.capacity());
            assert!(ev.is_disjoint(&resident), "{p}");
            let all: BTreeSet<u64> = (0..n).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20).collect();
            assert_eq!(all.len() as u64, n);
            assert_eq!(ev.union(&resident).copied().collect::<BTreeSet<_>>(), all, "{p}");
        }
    }
}
