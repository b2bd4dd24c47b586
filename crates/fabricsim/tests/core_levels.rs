//! `[protocol.core]` (docs/core.md): the driver's front end from the
//! configuration, and private L1/L2 tag levels in front of the protocol's
//! cache: a hit costs the latency of the level holding the line, misses of
//! a level are bounded by its miss entries, a line the protocol lost is a
//! coherence miss of the levels that still held its tag, and without the
//! table nothing changes.

use fabricsim::sim::{CacheResult, CacheStats};
use fabricsim::{config, Format, RunResult};

/// `cores` MESI cores and one home behind a switch, a fixed 100 ns memory,
/// a 10 ns protocol cache hit.
pub fn system(cores: usize, protocol: &str, workload: &str) -> String {
    let mut s = String::from(
        "name = \"core-levels\"\n[defaults.link]\nbandwidth = \"64GB/s\"\nlatency = \"2ns\"\n\
         [[switch]]\nname = \"sw\"\n[[memory]]\nname = \"home\"\n[[link]]\na = \"sw\"\nb = \"home\"\n",
    );
    for i in 0..cores {
        s += &format!("[[requester]]\nname = \"c{i}\"\n[[link]]\na = \"c{i}\"\nb = \"sw\"\n");
    }
    s + &format!(
        "[protocol]\nname = \"mesi\"\nmemory_latency = \"100ns\"\ndirectory_latency = \"5ns\"\n\
         issue_interval = \"1ns\"\n{protocol}\n[workload]\nline = \"64B\"\n{workload}\n"
    )
}

/// RC, the protocol's cache (1 MiB, 10 ns hits, 64 MSHRs), then `core`.
pub fn proto(core: &str) -> String {
    format!("model = \"rc\"\n{}", cache(core))
}

/// The protocol's cache, then `core`.
pub fn cache(core: &str) -> String {
    format!("[protocol.cache]\nsize = \"1MiB\"\nways = 8\nhit_latency = \"10ns\"\nmshrs = 64\n{core}")
}

const LEVELS: &str = "[protocol.core]\n[protocol.core.l1]\nsize = \"1KiB\"\nways = 2\nlatency = \"1500ps\"\n\
                      [protocol.core.l2]\nsize = \"16KiB\"\nways = 4\nlatency = \"4ns\"\nmshrs = 64\n";

use crate::common::run_protocol as run;

fn error(toml: &str) -> String {
    match config::resolve(toml, "<test>", Format::Toml, &[], None) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

pub fn stats(r: &RunResult, core: &str, level: &str) -> CacheStats {
    let c: Vec<&CacheResult> = r.caches.iter().filter(|c| c.core == core && c.level == level).collect();
    assert_eq!(c.len(), 1, "{core} {level}: {:?}", r.caches);
    c[0].stats
}

/// Loads over `lines` lines (`pattern`), `requests` of them after a warm-up of `warmup`.
pub fn loads(pattern: &str, lines: u64, warmup: u32, requests: u32) -> String {
    format!(
        "pattern = \"{pattern}\"\nread_fraction = 1.0\nfootprint = \"{}B\"\nwarmup = {warmup}\nrequests = {requests}\n",
        lines * 64
    )
}

#[test]
fn a_working_set_inside_the_l1_costs_the_l1_latency() {
    // 8 lines, the L1 holds 16
    let r = run(&system(1, &proto(LEVELS), &loads("uniform", 8, 200, 1000)));
    let lat = &r.read_latency;
    assert_eq!(lat.count, 1000);
    assert_eq!((lat.min, lat.max), (1500, 1500), "every measured load an L1 hit");
    let (l1, l2, p) = (stats(&r, "c0", "l1"), stats(&r, "c0", "l2"), stats(&r, "c0", "protocol"));
    // the 8 cold misses, then only L1 hits
    assert_eq!((l1.capacity, l1.coherence, l1.hits), (8, 0, 1192), "{l1:?}");
    assert_eq!((l2.hits, l2.capacity), (0, 8), "{l2:?}");
    assert_eq!((p.hits, p.capacity), (0, 8), "{p:?}");
}

#[test]
fn a_working_set_beyond_the_l1_inside_the_l2_costs_the_l2_latency() {
    // 64 lines in a loop: an LRU L1 of 16 lines (2 ways) misses each, the L2
    // (256) holds them; the warm-up's misses fill the levels when they
    // complete, late, so the steady state starts after 3 passes
    let r = run(&system(1, &proto(LEVELS), &loads("stream", 64, 192, 640)));
    let lat = &r.read_latency;
    assert_eq!((lat.min, lat.max), (4000, 4000), "every measured load an L2 hit");
    let (l1, l2) = (stats(&r, "c0", "l1"), stats(&r, "c0", "l2"));
    assert_eq!((l1.hits + l1.capacity, l1.coherence), (832, 0), "{l1:?}");
    assert!(l1.hits <= 64, "only in the warm-up: {l1:?}");
    assert_eq!((l2.hits + l2.capacity, l2.capacity), (l1.capacity, 64), "{l2:?}");
    // every L1 fill after the first 16 evicts
    assert_eq!(l1.evictions, l1.capacity - 16);
    // the same loop over 512 lines (twice the L2) hits the protocol's cache
    let r = run(&system(1, &proto(LEVELS), &loads("stream", 512, 512, 1024)));
    assert_eq!((r.read_latency.min, r.read_latency.max), (10_000, 10_000), "protocol cache hits");
    assert_eq!(stats(&r, "c0", "protocol").hits, 1024);
}

/// `n` cold loads (each a miss to memory), independent, through levels
/// with `fill` fill buffers and `l2` L2 MSHRs: misses outstanding on average.
fn overlap(n: u32, fill: u32, l2: u32) -> f64 {
    let core = format!(
        "[protocol.core]\nfill_buffers = {fill}\n[protocol.core.l1]\nsize = \"1KiB\"\nlatency = \"1ns\"\n\
         [protocol.core.l2]\nsize = \"16KiB\"\nlatency = \"4ns\"\nmshrs = {l2}\n"
    );
    let r = run(&system(1, &proto(&core), &loads("stream", 4096, 0, n)));
    let lat = &r.read_latency;
    assert_eq!(lat.count, n as u64);
    assert!(lat.min > 100_000, "each load misses to memory: {}", lat.min);
    lat.sum as f64 / r.requesters[0].finished as f64
}

#[test]
fn independent_misses_overlap_up_to_the_fill_buffers() {
    for (n, m) in [(4, 8), (16, 8), (16, 4), (12, 1)] {
        let got = overlap(n, m, 64);
        let want = n.min(m) as f64;
        assert!((got - want).abs() <= 0.12 * want, "{n} misses, {m} fill buffers: {got:.2} outstanding");
    }
}

#[test]
fn the_l2_mshrs_bound_the_misses_beyond_the_l1() {
    for (n, l2) in [(16, 4), (16, 2), (8, 16)] {
        let got = overlap(n, 16, l2);
        let want = n.min(l2) as f64;
        assert!((got - want).abs() <= 0.12 * want, "{n} misses, {l2} L2 MSHRs: {got:.2} outstanding");
    }
}

#[test]
fn an_invalidation_makes_the_next_access_a_coherence_miss() {
    let dir = std::env::temp_dir().join(format!("fabricsim-core-levels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        format!("pattern = \"trace\"\ntrace = \"{}\"\nfootprint = \"64KiB\"\n", path.display())
    };
    // c0 reads line 0 twice (a miss, then an L1 hit); c1 writes it in between
    let with_store = trace("store.trace", "0 c0 R 0 64\n400ns c1 W 0 64\n400ns c1 R 4096 64\n1000ns c0 R 0 64\n");
    let r = run(&system(2, &proto(LEVELS), &with_store));
    let l1 = stats(&r, "c0", "l1");
    assert_eq!((l1.hits, l1.capacity, l1.coherence), (0, 1, 1), "{l1:?}");
    assert_eq!(stats(&r, "c0", "l2").coherence, 1, "the L2 held the tag too");
    // the second read is a miss (it takes the line back from c1), not a 1.5 ns hit
    assert!(r.per_core_max(0) > 20_000, "{}", r.per_core_max(0));
    // without the store: an L1 hit
    let without = trace("read.trace", "0 c0 R 0 64\n400ns c1 R 4096 64\n1000ns c0 R 0 64\n");
    let r = run(&system(2, &proto(LEVELS), &without));
    let l1 = stats(&r, "c0", "l1");
    assert_eq!((l1.hits, l1.capacity, l1.coherence), (1, 1, 0), "{l1:?}");
    assert_eq!(r.read_latency.min, 1500);
}

trait PerCore {
    fn per_core_max(&self, i: usize) -> u64;
}

impl PerCore for RunResult {
    fn per_core_max(&self, i: usize) -> u64 {
        self.requesters[i].latency.max
    }
}

/// The summary without its wall-clock time.
pub fn summary(r: &RunResult) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&r.summary_json("test")).unwrap();
    v.as_object_mut().unwrap().remove("wall_s");
    v
}

#[test]
fn an_empty_core_table_changes_nothing() {
    let work = "pattern = \"uniform\"\nread_fraction = 0.7\nfootprint = \"64KiB\"\nwarmup = 100\nrequests = 600\n";
    for extra in ["model = \"rc\"\n", "model = \"rc\"\nwidth = 2\n", "model = \"tso\"\nstore_buffer = 4\n"] {
        let cache = cache("");
        let base = run(&system(2, &format!("{extra}{cache}"), work));
        let table = run(&system(2, &format!("{extra}{cache}[protocol.core]\n"), work));
        assert_eq!(summary(&base), summary(&table), "{extra}");
        // no levels: only the protocol's cache, which counts on its own
        assert!(base.caches.iter().all(|c| c.level == "protocol" && c.counted), "{:?}", base.caches);
        assert_eq!(base.caches.len(), 2);
        // the two keys may move into the table
        let (model, moved) = extra.split_at(extra.find('\n').unwrap() + 1);
        if !moved.is_empty() {
            let r = run(&system(2, &format!("{model}{cache}[protocol.core]\n{moved}"), work));
            assert_eq!(summary(&base), summary(&r), "{extra} in [protocol.core]");
        }
    }
}

#[test]
fn levels_report_per_core_counters_and_a_csv() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mesi_levels.toml")).unwrap();
    let r = run(&text);
    assert_eq!(r.caches.len(), 8 * 3);
    let sum = |level: &str, f: fn(&CacheStats) -> u64| -> u64 {
        r.caches.iter().filter(|c| c.level == level).map(|c| f(&c.stats)).sum()
    };
    assert!(sum("l1", |s| s.hits) > 0 && sum("l2", |s| s.hits) > 0 && sum("protocol", |s| s.hits) > 0);
    assert!(sum("l1", |s| s.coherence) > 0, "hot lines move between cores");
    assert!(sum("l1", |s| s.evictions) > 0 && sum("l2", |s| s.capacity) > 0);
    let v = summary(&r);
    let caches = v["caches"].as_array().unwrap();
    assert_eq!(caches.len(), 24);
    assert_eq!(caches[0]["level"], "l1");
    assert!(caches[2].get("coherence_misses").is_none(), "the protocol's misses are not split");
    assert!(caches[2].get("writebacks").is_some(), "MESI counts its cache's write-backs");
    assert!(caches[1].get("late_overruns").is_none() && caches[0].get("late_overruns").is_some());
    let csv = r.tables().into_iter().find(|(n, _)| *n == "caches").expect("caches.csv").1;
    assert_eq!(csv.lines().count(), 25);
    assert!(csv.starts_with(
        "core,level,hits,misses,capacity_misses,coherence_misses,evictions,writebacks,\
         mshr_stalls,mshr_stall_ns,late_overruns\n"
    ));
    // the protocol's row: its own evictions and write-backs, the rest empty
    let row = csv.lines().nth(3).unwrap();
    assert!(row.contains(",protocol,") && row.ends_with(",,,"), "{row}");
    // the same configuration and seed give the same bytes
    let again = run(&text);
    assert_eq!(summary(&r), summary(&again));
    assert_eq!(csv, again.caches_csv());
    // the terminal table names no file (it does not know whether they are written)
    assert!(!r.text().contains(".csv"), "{}", r.text());
    // and sums each level over the cores
    for level in ["l1", "l2", "protocol"] {
        let n = sum(level, |s| s.hits + s.capacity + s.coherence).to_string();
        let line = format!("  {level:<12} {n:>12} ");
        assert!(r.text().contains(&line), "{line:?} in\n{}", r.text());
    }
}

#[test]
fn bad_core_keys_are_config_errors_naming_the_key() {
    let sys = |core: &str| system(1, &proto(core), &loads("uniform", 8, 0, 10));
    let cases: &[(&str, &[&str])] = &[
        ("[protocol.core]\nrobb = 4\n", &["robb"]),
        ("[protocol.core]\nrob = 0\n", &["protocol.core.rob", "expected 1 to"]),
        ("[protocol.core]\nload_queue = 2000000\n", &["protocol.core.load_queue"]),
        ("[protocol.core]\nrob = 2\nwidth = 4\n", &["protocol.core.width", "at most rob"]),
        ("[protocol.core]\nclock = \"0ns\"\n", &["protocol.core.clock"]),
        ("[protocol.core]\nfill_buffers = 0\n", &["protocol.core.fill_buffers"]),
        ("[protocol.core]\nstore_buffer = 4\n", &["protocol.core.store_buffer", "tso"]),
        ("[protocol.core.l1]\nsize = \"100B\"\nlatency = \"1ns\"\n", &["protocol.core.l1.size"]),
        ("[protocol.core.l1]\nsize = \"1KiB\"\nways = 0\nlatency = \"1ns\"\n", &["protocol.core.l1.ways"]),
        ("[protocol.core.l1]\nsize = \"1KiB\"\nlatency = \"0ns\"\n", &["protocol.core.l1.latency"]),
        ("[protocol.core.l1]\nsize = \"1KiB\"\n", &["latency"]),
        ("[protocol.core.l1]\nsize = \"1KiB\"\nlatency = \"1ns\"\npolicy = \"plru\"\n", &["plru"]),
        ("[protocol.core.l1]\nsize = \"1KiB\"\nlatency = \"1ns\"\nmshrs = 0\n", &["protocol.core.l1.mshrs"]),
        (
            "[protocol.core]\nfill_buffers = 4\n[protocol.core.l1]\nsize = \"1KiB\"\nlatency = \"1ns\"\nmshrs = 4\n",
            &["protocol.core.l1.mshrs", "protocol.core.fill_buffers"],
        ),
        ("[protocol.core.l2]\nsize = \"1KiB\"\nlatency = \"1ns\"\n", &["protocol.core.l2", "L1"]),
        (
            "[protocol.core.l1]\nsize = \"4KiB\"\nlatency = \"1ns\"\n[protocol.core.l2]\nsize = \"1KiB\"\nlatency = \"4ns\"\n",
            &["protocol.core.l2.size", "inclusive"],
        ),
        (
            "[protocol.core.l1]\nsize = \"1KiB\"\nlatency = \"4ns\"\n[protocol.core.l2]\nsize = \"4KiB\"\nlatency = \"1ns\"\n",
            &["protocol.core.l2.latency"],
        ),
    ];
    for (core, want) in cases {
        let e = error(&sys(core));
        for w in *want {
            assert!(e.contains(w), "{core}: {e}");
        }
    }
    // one key in two places
    let e = error(&system(1, &format!("width = 2\n{}", proto("[protocol.core]\nwidth = 2\n")), ""));
    assert!(e.contains("protocol.width") && e.contains("protocol.core.width"), "{e}");
    let e = error(&system(
        1,
        &format!("model = \"tso\"\nstore_buffer = 2\n{}", cache("[protocol.core]\nstore_buffer = 2\n")),
        "",
    ));
    assert!(e.contains("protocol.store_buffer") && e.contains("protocol.core.store_buffer"), "{e}");
    // [protocol] width's key is still named when the table's rob binds it
    let e = error(&system(1, &format!("width = 8\n{}", proto("[protocol.core]\nrob = 4\n")), ""));
    assert!(e.contains("protocol.width") && e.contains("at most rob"), "{e}");
    // only workload-driven cores have the front end
    let e = error(&system(1, "driver = \"random\"\n[protocol.core]\nrob = 8\n", ""));
    assert!(e.contains("protocol.core") && e.contains("workload"), "{e}");
}

/// The resolved core of `toml`.
fn core_of(toml: &str) -> (fabricsim::spec::CoreSpec, fabricsim::spec::Timing) {
    let spec = config::resolve(toml, "<test>", Format::Toml, &[], None).unwrap_or_else(|e| panic!("{e}"));
    let t = spec.protocol.expect("a protocol").timing;
    (t.core.clone().expect("a [protocol.core]"), t)
}

/// `system` without its fixed issue interval.
fn free(cores: usize, protocol: &str, workload: &str) -> String {
    system(cores, protocol, workload).replace("issue_interval = \"1ns\"\n", "")
}

#[test]
fn a_preset_gives_its_cited_core_and_levels_and_keys_override_it() {
    let (c, t) = core_of(&free(1, "model = \"tso\"\n[protocol.core]\npreset = \"skylake-sp\"\n", ""));
    let f = c.front;
    assert_eq!((f.rob, f.width, f.load_queue, f.store_buffer, f.fill_buffers, f.cycle), (224, 4, 72, 56, 12, 400));
    // the driver counts the stores waiting to start; the preset's entries hold the one performing too
    assert_eq!((t.store_buffer, t.width, t.issue_interval), (55, 4, 0));
    let (l1, l2) = (c.l1.unwrap(), c.l2.unwrap());
    assert_eq!((l1.geometry.size_bytes(), l1.geometry.ways(), l1.latency, l1.mshrs), (32 << 10, 8, 1600, 12));
    assert_eq!((l2.geometry.size_bytes(), l2.geometry.ways(), l2.latency, l2.mshrs), (1 << 20, 16, 5600, 16));
    // a key beside the preset overrides one value; a clock re-times the levels in cycles
    let (c, _) = core_of(&free(1, "[protocol.core]\npreset = \"skylake-sp\"\nrob = 100\nclock = \"500ps\"\n", ""));
    assert_eq!((c.front.rob, c.front.width, c.front.cycle), (100, 4, 500));
    assert_eq!((c.l1.unwrap().latency, c.l2.unwrap().latency), (2000, 7000));
    // a store buffer given beside the preset sizes the front end's too (the waiting stores and the one performing)
    let (c, t) = core_of(&free(1, "model = \"tso\"\n[protocol.core]\npreset = \"skylake-sp\"\nstore_buffer = 8\n", ""));
    assert_eq!((t.store_buffer, c.front.store_buffer), (8, 9));
    // an explicit issue interval keeps the in-order issue stage
    let (_, t) = core_of(&system(1, "[protocol.core]\npreset = \"skylake-sp\"\n", ""));
    assert_eq!(t.issue_interval, 1000);
}

#[test]
fn a_presets_l1_hit_costs_its_cycles() {
    // 8 lines, loaded over and over: after the warm-up every load hits the L1 (4 cycles of 400 ps)
    let r = run(&free(1, &cache("[protocol.core]\npreset = \"skylake-sp\"\n"), &loads("stream", 8, 64, 400)));
    assert_eq!((r.read_latency.min, r.read_latency.max), (1600, 1600));
    assert_eq!(stats(&r, "c0", "l1").hits, 400 + 64 - 8);
}

#[test]
fn a_wrong_preset_is_refused_with_the_nearest_name() {
    let e = error(&free(1, "[protocol.core]\npreset = \"skylake\"\n", ""));
    assert!(e.contains("protocol.core.preset") && e.contains("did you mean \"skylake-sp\""), "{e}");
    assert!(e.contains("gem5-o3-2ghz") && e.contains("sapphire-rapids"), "{e}");
}
