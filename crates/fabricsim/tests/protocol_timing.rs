//! The MESI agents the checker explores, timed on the fabric: a hit costs
//! the cache latency; a miss to a remote directory costs the fabric round
//! trip plus directory and memory time, exactly, at zero load.

use fabricsim::config::units::Bandwidth;
use fabricsim::{config, run_spec, Format, Outcome};

fn cfg(name: &str) -> String {
    format!(
        r#"
name = "timed-{name}"
[defaults.link]
bandwidth = "64GB/s"
latency = "2ns"
port_delay = "5ns"
[defaults.switch]
latency = "20ns"
[[requester]]
name = "cache0"
[[switch]]
name = "sw"
[[memory]]
name = "dir0"
[[link]]
a = "cache0"
b = "sw"
[[link]]
a = "sw"
b = "dir0"
[protocol]
name = "{name}"
program = "timing/one_line.litmus"
model = "sc"
cache_latency = "1ns"
directory_latency = "10ns"
memory_latency = "50ns"
control_bytes = "16B"
data_bytes = "80B"
"#
    )
}

fn run(name: &str) -> fabricsim::RunResult {
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/protocol.toml");
    let spec = config::resolve(&cfg(name), source, Format::Toml, &[], None).unwrap_or_else(|e| panic!("{e}"));
    run_spec(&spec, &mut |_| true)
}

#[test]
fn mesi_hit_and_miss_latencies_are_exact_at_zero_load() {
    let r = run("mesi");
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let bw = Bandwidth::parse("64GB/s").unwrap();
    let hop = |bytes: u64| bw.serialize(bytes) + 2_000 + 2 * 5_000;
    let cache = 1_000;
    let miss = cache + 2 * hop(16) + 20_000 + 10_000 + 50_000 + 2 * hop(80) + 20_000 + cache;
    // load x: miss (E granted); load x: hit; store x: hit (silent E -> M)
    let loads = &r.read_latency;
    assert_eq!((loads.count, loads.min, loads.max), (2, cache, miss));
    let stores = &r.write_latency;
    assert_eq!((stores.count, stores.min, stores.max), (1, cache, cache));
}

#[test]
fn msi_store_to_a_shared_line_pays_an_upgrade_miss() {
    let r = run("msi");
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
    let bw = Bandwidth::parse("64GB/s").unwrap();
    let hop = |bytes: u64| bw.serialize(bytes) + 2_000 + 2 * 5_000;
    let cache = 1_000;
    // S -> M: GetM to the directory, which answers with data from memory (no other sharer).
    let upgrade = cache + 2 * hop(16) + 20_000 + 10_000 + 50_000 + 2 * hop(80) + 20_000 + cache;
    assert_eq!(r.write_latency.max, upgrade);
    assert_eq!(r.read_latency.min, cache);
}

/// RMWs and fences get latency histograms of their own (RMWs also count
/// with the stores): one per thread of SB+rmws and SB+fences; runs without
/// them keep their outputs (no such key).
#[test]
fn rmws_and_fences_have_their_own_latency() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/fabricsim/litmus");
    let run = |program: &str| {
        let text = format!(
            "[[requester]]\nname = \"c0\"\n[[requester]]\nname = \"c1\"\n[[memory]]\nname = \"d\"\n\
             [[switch]]\nname = \"s\"\n[[link]]\na = \"c0\"\nb = \"s\"\n[[link]]\na = \"c1\"\nb = \"s\"\n\
             [[link]]\na = \"s\"\nb = \"d\"\n[protocol]\nname = \"mesi\"\nprogram = \"{dir}/{program}\"\nmodel = \"sc\"\n"
        );
        let spec = config::resolve(&text, "t.toml", Format::Toml, &[], None).unwrap_or_else(|e| panic!("{e}"));
        let r = run_spec(&spec, &mut |_| true);
        assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
        r
    };
    let count = |r: &fabricsim::RunResult, k: &str| r.op_latency.iter().find(|(n, _)| *n == k).map(|(_, h)| h.count);
    let fences = run("SB+fences.litmus");
    assert_eq!((count(&fences, "fence"), count(&fences, "rmw")), (Some(2), None));
    let rmws = run("extra/SB+rmws.litmus");
    assert_eq!((count(&rmws, "rmw"), count(&rmws, "fence")), (Some(2), None));
    assert!(rmws.write_latency.count >= 2, "RMWs count with the stores too");
    let v: serde_json::Value = serde_json::from_str(&rmws.summary_json("t")).unwrap();
    assert_eq!(v["rmw_latency_ns"]["count"], 2);
    assert!(v.get("fence_latency_ns").is_none());
}

/// A protocol run's link rows count the measured window only (the
/// warm-up's traffic left out), so no link is busy longer than the window.
#[test]
fn link_rows_of_a_protocol_run_count_the_measured_window() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mesi_64core.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let sets = ["workload.requests=50".to_string(), "workload.warmup=1000".to_string()];
    let spec = config::resolve(&text, "mesi_64core.toml", Format::Toml, &sets, None).unwrap();
    let r = run_spec(&spec, &mut |_| true);
    assert_eq!(r.outcome, Outcome::Completed);
    assert!(r.window_start > 0, "a warm-up");
    let window = r.window_end - r.window_start;
    let busiest = r.links.iter().map(|l| l.4.busy_ps).max().unwrap();
    // a packet that started before the window ends inside it: allow one packet's serialization
    assert!(busiest <= window + 100_000, "busiest link {busiest} ps in a {window} ps window");
    assert!(busiest > window / 10, "the busiest link carries traffic ({busiest} ps)");
}
