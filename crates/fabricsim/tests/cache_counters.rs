//! The caches' write-backs, MSHR stalls and late overruns (summary.json
//! `caches`, docs/core.md): a private level counts a dirty eviction as a
//! write-back, an access that finds every miss entry of a level in use as
//! one stall, and the protocol's caches (MSI, MESI, DCOH) count their own
//! hits, misses, evictions and write-backs.

use fabricsim::sim::CacheStats;
use fabricsim::RunResult;

use crate::common::run_protocol as run;
use crate::core_levels::{cache, loads, proto, stats, system};

/// A trace of `ops` (line, write) one microsecond apart from core c0
/// (each done before the next: the levels fill in program order).
fn trace(name: &str, ops: &[(u64, bool)]) -> String {
    let dir = std::env::temp_dir().join(format!("fabricsim-counters-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.trace"));
    let text: String = ops
        .iter()
        .enumerate()
        .map(|(i, &(l, w))| format!("{}ns c0 {} {} 64\n", i * 1000, if w { "W" } else { "R" }, l * 64))
        .collect();
    std::fs::write(&path, text).unwrap();
    format!("pattern = \"trace\"\ntrace = \"{}\"\nfootprint = \"64KiB\"\n", path.display())
}

/// An L1 of 16 lines (2 ways: 8 sets, LRU) and, with `l2`, an L2 of that size.
fn levels(l2: Option<&str>) -> String {
    let mut s = "[protocol.core]\n[protocol.core.l1]\nsize = \"1KiB\"\nways = 2\nlatency = \"1ns\"\n".to_string();
    if let Some(size) = l2 {
        s += &format!("[protocol.core.l2]\nsize = \"{size}\"\nways = 4\nlatency = \"4ns\"\n");
    }
    s
}

#[test]
fn an_l1_writes_back_the_lines_written_since_their_fill() {
    // lines 0..32 once, the even ones stored: the L1 (16 lines) evicts
    // lines 0..16 (two of each set's four), half of them written
    let ops: Vec<(u64, bool)> = (0..32).map(|l| (l, l % 2 == 0)).collect();
    let r = run(&system(1, &proto(&levels(None)), &trace("half", &ops)));
    let l1 = stats(&r, "c0", "l1");
    assert_eq!((l1.capacity, l1.evictions, l1.writebacks), (32, 16, 8), "{l1:?}");
    // the protocol's cache (1 MiB) holds them all: no eviction of its own
    let p = stats(&r, "c0", "protocol");
    assert_eq!((p.evictions, p.writebacks, p.capacity), (0, 0, 32), "{p:?}");
    // an L2 that holds them takes the L1's write-backs and writes none back
    let r = run(&system(1, &proto(&levels(Some("16KiB"))), &trace("half_l2", &ops)));
    let (l1, l2) = (stats(&r, "c0", "l1"), stats(&r, "c0", "l2"));
    assert_eq!((l1.evictions, l1.writebacks), (16, 8), "{l1:?}");
    assert_eq!((l2.evictions, l2.writebacks), (0, 0), "{l2:?}");
}

#[test]
fn stores_make_every_eviction_a_write_back_and_loads_none() {
    // 64 lines through an L1 of 16 and an inclusive L2 of 32: each level
    // evicts, the L1 also the lines its L2 evicts
    for (write, name) in [(true, "stores"), (false, "loads")] {
        let ops: Vec<(u64, bool)> = (0..64).map(|l| (l, write)).collect();
        let r = run(&system(1, &proto(&levels(Some("2KiB"))), &trace(name, &ops)));
        let (l1, l2) = (stats(&r, "c0", "l1"), stats(&r, "c0", "l2"));
        assert_eq!((l1.evictions, l2.evictions), (48, 32), "{l1:?} {l2:?}");
        let want = |s: &CacheStats| if write { s.evictions } else { 0 };
        assert_eq!((l1.writebacks, l2.writebacks), (want(&l1), want(&l2)), "{name}: {l1:?} {l2:?}");
    }
}

/// `n` cold loads, independent, with `fill` fill buffers (the L1's) and
/// `l2` L2 MSHRs.
fn misses(n: u32, fill: u32, l2: u32) -> RunResult {
    let core = format!(
        "[protocol.core]\n[protocol.core.l1]\nsize = \"1KiB\"\nlatency = \"1ns\"\nmshrs = {fill}\n\
         [protocol.core.l2]\nsize = \"16KiB\"\nlatency = \"4ns\"\nmshrs = {l2}\n"
    );
    let r = run(&system(1, &proto(&core), &loads("stream", 4096, 0, n)));
    assert!(r.read_latency.min > 100_000, "each load misses to memory: {}", r.read_latency.min);
    r
}

#[test]
fn each_wave_of_misses_beyond_the_entries_stalls_the_issue_once_for_about_a_miss() {
    // The core issues the loads at once, in order: the first m take the
    // level's m entries, the next one waits at the issue stage (one stall,
    // the loads behind it wait behind it) until the wave's misses return,
    // and so on: ceil(n / m) - 1 stalls of about a miss latency each (with
    // one entry: every load but the first, n - 1)
    for (n, fill, l2, level) in [(12, 1, 64, "l1"), (16, 4, 64, "l1"), (12, 64, 1, "l2"), (16, 64, 4, "l2")] {
        let r = misses(n, fill, l2);
        let m = fill.min(l2);
        let waves = n.div_ceil(m) - 1;
        let (s, other) = (stats(&r, "c0", level), stats(&r, "c0", if level == "l1" { "l2" } else { "l1" }));
        assert_eq!(s.mshr_stalls, u64::from(waves), "{n} misses, {m} {level} entries: {s:?}");
        assert_eq!((other.mshr_stalls, other.mshr_stall_ps), (0, 0), "{other:?}");
        let lat = r.read_latency.sum as f64 / f64::from(n);
        let want = lat * f64::from(waves);
        let got = s.mshr_stall_ps as f64;
        assert!((got - want).abs() <= 0.05 * want, "{level}: waited {got} ps, ~{want} expected");
    }
    // enough entries: no stall
    let r = misses(8, 16, 16);
    assert_eq!((stats(&r, "c0", "l1").mshr_stalls, stats(&r, "c0", "l2").mshr_stalls), (0, 0));
}

#[test]
fn a_stale_l1_hit_past_a_full_fill_buffer_is_a_late_overrun() {
    // c0 reads line 0; c1 writes it (c0's L1 tag goes stale); c0 misses
    // line 64 and, while that miss holds the one fill buffer, reads line 0:
    // an L1 tag hit, so it goes without an entry, and the protocol misses
    let dir = std::env::temp_dir().join(format!("fabricsim-late-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("late.trace");
    std::fs::write(&path, "0 c0 R 0 64\n400ns c1 W 0 64\n1000ns c0 R 4096 64\n1001ns c0 R 0 64\n").unwrap();
    let work = format!("pattern = \"trace\"\ntrace = \"{}\"\nfootprint = \"64KiB\"\n", path.display());
    let core = "[protocol.core]\n[protocol.core.l1]\nsize = \"1KiB\"\nlatency = \"1ns\"\nmshrs = 1\n";
    let r = run(&system(2, &proto(core), &work));
    let l1 = stats(&r, "c0", "l1");
    assert_eq!((l1.coherence, l1.late_overruns), (1, 1), "{l1:?}");
    // the stale hit did not wait for the fill buffer: no stall
    assert_eq!(l1.mshr_stalls, 0, "{l1:?}");
    let v = crate::core_levels::summary(&r);
    assert_eq!(v["caches"][0]["late_overruns"], 1);
}

/// MSI or MESI, one core, no levels, a protocol cache of 64 lines (LRU)
/// under a loop over `lines` lines, `requests` accesses, all stores or all loads.
fn looping(protocol: &str, lines: u64, requests: u32, stores: bool) -> RunResult {
    let small = cache("").replace("size = \"1MiB\"", "size = \"4KiB\"");
    let work = loads("stream", lines, 0, requests)
        .replace("read_fraction = 1.0", &format!("read_fraction = {}", if stores { 0.0 } else { 1.0 }));
    run(&system(1, &small, &work).replace("name = \"mesi\"", &format!("name = \"{protocol}\"")))
}

#[test]
fn the_protocols_cache_counts_its_own_evictions_and_write_backs() {
    for protocol in ["msi", "mesi"] {
        // a loop over 256 lines: every access misses, each after the first 64 evicts
        for stores in [false, true] {
            let r = looping(protocol, 256, 1000, stores);
            assert_eq!(r.caches.len(), 1, "no levels: the protocol's row only");
            let p = stats(&r, "c0", "protocol");
            assert_eq!((p.hits, p.misses(), p.evictions), (0, 1000, 1000 - 64), "{protocol}: {p:?}");
            // stored lines are Modified: each eviction writes back; loaded ones are clean
            assert_eq!(p.writebacks, if stores { p.evictions } else { 0 }, "{protocol} stores={stores}: {p:?}");
        }
        // a loop that fits: the cold misses, then hits, no eviction
        let p = stats(&looping(protocol, 32, 1000, false), "c0", "protocol");
        assert_eq!((p.hits, p.misses(), p.evictions), (1000 - 32, 32, 0), "{protocol}: {p:?}");
    }
}

#[test]
fn dcohs_requester_cache_counts_its_own_evictions_and_write_backs() {
    let cfg = |stores: bool| {
        format!(
            "[[requester]]\nname = \"host0\"\n[[memory]]\nname = \"dev0\"\n[[link]]\na = \"host0\"\nb = \"dev0\"\n\
             [workload]\npattern = \"stream\"\nfootprint = \"8KiB\"\nread_fraction = {}\nrequests = 500\nwarmup = 0\n\
             [protocol]\nname = \"dcoh\"\nmodel = \"sc\"\n[protocol.cache]\nsize = \"4KiB\"\n\
             [protocol.dcoh.snoop_filter]\nsize = \"1MiB\"\n",
            if stores { 0.0 } else { 1.0 }
        )
    };
    for stores in [false, true] {
        let r = run(&cfg(stores));
        let p = stats(&r, "host0", "protocol");
        // 128 lines through 64: every access misses, each after the first 64 evicts
        assert_eq!((p.hits, p.misses(), p.evictions), (0, 500, 500 - 64), "{p:?}");
        assert_eq!(p.writebacks, if stores { p.evictions } else { 0 }, "{p:?}");
    }
}

#[test]
fn a_protocol_cache_without_a_capacity_reports_no_cache() {
    // MESI's caches hold every line without [protocol.cache]: nothing to
    // count, and the outputs have no caches
    let r = run(&system(1, "model = \"rc\"\n", &loads("stream", 256, 0, 200)));
    assert!(r.caches.is_empty(), "{:?}", r.caches);
    assert!(crate::core_levels::summary(&r).get("caches").is_none());
    assert!(!r.tables().iter().any(|(n, _)| *n == "caches"));
    assert!(!r.text().contains("writebacks"));
}

#[test]
fn the_terminal_shows_the_new_columns_and_names_no_file() {
    let r = looping("mesi", 256, 300, true);
    let text = r.text();
    assert!(text.contains("writebacks") && text.contains("mshr stalls"), "{text}");
    // the protocol's row: its evictions and write-backs, the private levels' columns "-"
    let line = text.lines().find(|l| l.trim_start().starts_with("protocol")).expect("a protocol row");
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[3..], ["-", "-", "236", "236", "-", "-", "-"], "{line}");
    assert!(!text.contains(".csv"), "{text}");
}
