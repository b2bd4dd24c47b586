//! Latency grouped by hop count (ESF Figs 11/12): each measured request is
//! filed under the number of links on its route, with the time it waited in
//! fabric queues and in memory queues.

use crate::common;
use common::*;
use fabricsim::config::units::Bandwidth;
use fabricsim::engine::NS;

/// r and m0 on s0, m1 on s1, m2 on s2 (a chain): routes of 2, 3 and 4 links.
const CHAIN3: &str = r#"
[defaults.link]
bandwidth = "PCIe5x16"
latency = "2ns"
port_delay = "25ns"
[defaults.switch]
latency = "20ns"
[defaults.memory]
latency = "40ns"
bandwidth = "38.4GB/s"
[[requester]]
name = "r"
[[memory]]
name = "m0"
[[memory]]
name = "m1"
[[memory]]
name = "m2"
[[switch]]
name = "s0"
[[switch]]
name = "s1"
[[switch]]
name = "s2"
[[link]]
a = "r"
b = "s0"
[[link]]
a = "s0"
b = "m0"
[[link]]
a = "s0"
b = "s1"
[[link]]
a = "s1"
b = "m1"
[[link]]
a = "s1"
b = "s2"
[[link]]
a = "s2"
b = "m2"
[workload]
pattern = "uniform"
window = 1
requests = 300
header_overhead = 0.25
"#;

/// One request at a time: nothing waits, every request of a class takes the
/// same time, and each extra link adds its delays and serialization both ways.
#[test]
fn zero_load_classes_differ_by_one_link_each_way() {
    let r = run(CHAIN3);
    completed(&r);
    let hops: Vec<u32> = r.by_hops.iter().map(|c| c.hops).collect();
    assert_eq!(hops, [2, 3, 4]);
    let total: u64 = r.by_hops.iter().map(|c| c.latency.count).sum();
    assert_eq!(total, r.requesters[0].measured, "every measured request is in one class");
    for c in &r.by_hops {
        assert!(c.latency.count > 50, "{} hops: {} requests", c.hops, c.latency.count);
        assert_eq!(c.latency.min, c.latency.max, "{} hops: a lone request always takes the same time", c.hops);
        assert_eq!((c.fabric_wait_ps, c.memory_wait_ps), (0, 0), "{} hops: nothing queues at zero load", c.hops);
    }
    let bw = Bandwidth::parse("PCIe5x16").unwrap();
    let per_link = bw.serialize(16) + bw.serialize(64) + 2 * (2_000 + 2 * 25_000) + 2 * 20_000;
    for w in r.by_hops.windows(2) {
        assert_eq!(w[1].latency.min - w[0].latency.min, per_link, "{} -> {} hops", w[0].hops, w[1].hops);
    }
}

/// A chain of four switches with requesters on one half and memories on the
/// other (ESF's "bridge" routes): the longest routes share the most links
/// and wait the most in fabric queues.
#[test]
fn loaded_chain_queues_more_on_longer_routes() {
    let cfg = r#"
[topology]
kind = "chain"
switches = 4
requesters = 4
memories = 4
attach = "split"
[defaults.link]
bandwidth = "64GB/s"
[defaults.memory]
bandwidth = "inf"
queue = 4096
[workload]
pattern = "uniform"
read_fraction = 1.0
window = 1024
interleave = "64B"
warmup = 4000
requests = 20000
"#;
    let r = run(cfg);
    completed(&r);
    let total: u64 = r.by_hops.iter().map(|c| c.latency.count).sum();
    assert_eq!(total, r.requesters.iter().map(|q| q.measured).sum::<u64>());
    let (first, last) = (r.by_hops.first().unwrap(), r.by_hops.last().unwrap());
    assert!(last.hops > first.hops, "{} .. {} hops", first.hops, last.hops);
    let q = |c: &fabricsim::sim::system::HopClass| c.fabric_wait_ps as f64 / c.latency.count as f64 / NS as f64;
    assert!(
        q(last) > q(first),
        "fabric queueing {} hops {:.1} ns, {} hops {:.1} ns",
        last.hops,
        q(last),
        first.hops,
        q(first)
    );
    assert!(q(first) > 0.0, "the saturated bridge makes every route wait");
    // Memories with unbounded bandwidth never hold a request back.
    assert!(r.by_hops.iter().all(|c| c.memory_wait_ps == 0));
    // The table and the summary carry the same classes.
    let csv = r.hops_csv();
    assert_eq!(csv.lines().count(), r.by_hops.len() + 1);
    let v: serde_json::Value = serde_json::from_str(&r.summary_json("t")).unwrap();
    assert_eq!(v["latency_by_hops"].as_array().unwrap().len(), r.by_hops.len());
}
