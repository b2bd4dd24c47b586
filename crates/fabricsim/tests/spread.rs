//! `[fabric] spread`: how oblivious routing picks among equal-cost paths.

use crate::common;
use common::*;

/// ESF Fig 10's system (`fig10.base()` in the Python package): endpoints
/// split over the fabric, read-only uniform traffic over every memory,
/// 64 GB/s ports, memories without a media limit.
fn fig10(shape: &str, n: u32, spread: Option<&str>) -> String {
    let fabric = spread.map(|s| format!("[fabric]\nspread = \"{s}\"\n")).unwrap_or_default();
    format!(
        r#"
{fabric}
[topology]
{shape}
requesters = {n}
memories = {n}
attach = "split"
[defaults.link]
bandwidth = "64GB/s"
[defaults.memory]
bandwidth = "inf"
queue = 4096
[workload]
pattern = "uniform"
read_fraction = 1.0
header_overhead = 0.0
window = 1024
interleave = "64B"
warmup = 2000
requests = 4096
"#
    )
}

const RING8: &str = "kind = \"ring\"\nswitches = 8";
const SPINE_LEAF: &str = "kind = \"spine_leaf\"\nspines = 2\nleaves = 4";

/// Bytes over both directions of the link joining `a` and `b`.
fn link_bytes(r: &fabricsim::RunResult, a: &str, b: &str) -> u64 {
    link(r, a, b).bytes + link(r, b, a).bytes
}

fn imbalance(x: u64, y: u64) -> f64 {
    (x as f64 - y as f64).abs() / ((x + y) as f64 / 2.0)
}

/// A ring of 8 with requesters on sw0-sw3 and memories on sw4-sw7: the
/// flows between opposite switches have two shortest paths, one through
/// each cut link (sw3-sw4, sw7-sw0). `first` sends all of them the same
/// way, so the cuts carry unequal bytes; `dmodk` alternates them by
/// destination, so the cuts carry the same.
#[test]
fn first_sends_every_tied_flow_one_way_and_dmodk_alternates() {
    let first = run(&fig10(RING8, 4, Some("first")));
    completed(&first);
    let (a, b) = (link_bytes(&first, "sw3", "sw4"), link_bytes(&first, "sw7", "sw0"));
    assert!(imbalance(a, b) > 0.2, "first: cut links carry {a} and {b} bytes");

    let dmodk = run(&fig10(RING8, 4, Some("dmodk")));
    completed(&dmodk);
    let (a, b) = (link_bytes(&dmodk, "sw3", "sw4"), link_bytes(&dmodk, "sw7", "sw0"));
    assert!(a > 0 && imbalance(a, b) < 0.02, "dmodk: cut links carry {a} and {b} bytes");
}

/// Spine-leaf, 2 spines (sw0, sw1) and 4 leaves (sw2-sw5), 8 requesters on
/// sw2-sw3 and 8 memories on sw4-sw5: `dmodk` splits every leaf's traffic
/// evenly over its two uplinks; `first` puts all of it on spine 0.
#[test]
fn dmodk_balances_leaf_uplinks() {
    let r = run(&fig10(SPINE_LEAF, 8, Some("dmodk")));
    completed(&r);
    let first = run(&fig10(SPINE_LEAF, 8, Some("first")));
    completed(&first);
    for leaf in ["sw2", "sw3", "sw4", "sw5"] {
        let (a, b) = (link_bytes(&r, leaf, "sw0"), link_bytes(&r, leaf, "sw1"));
        assert!(a > 0 && imbalance(a, b) < 0.05, "dmodk: {leaf}'s uplinks carry {a} and {b} bytes");
        let (a, b) = (link_bytes(&first, leaf, "sw0"), link_bytes(&first, leaf, "sw1"));
        assert!(a > 0 && b == 0, "first: {leaf}'s uplinks carry {a} and {b} bytes");
    }
}

/// The summary without its wall-clock time.
fn summary(r: &fabricsim::RunResult) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&r.summary_json("test")).unwrap();
    v.as_object_mut().unwrap().remove("wall_s");
    v
}

/// No `spread` key means `hash`, today's choice: the same summary and link
/// statistics as an explicit `hash`, on a system where the spread matters.
#[test]
fn the_default_is_hash() {
    let default = run(&fig10(SPINE_LEAF, 8, None));
    completed(&default);
    let hash = run(&fig10(SPINE_LEAF, 8, Some("hash")));
    assert_eq!(summary(&default), summary(&hash));
    assert_eq!(default.links_csv(), hash.links_csv());
    assert_eq!(default.throughput_gbps(), hash.throughput_gbps());
    assert_eq!(summary(&default)["routing"]["spread"], "hash");
    // The comparison can tell: another spread changes the results.
    let dmodk = run(&fig10(SPINE_LEAF, 8, Some("dmodk")));
    assert_eq!(summary(&dmodk)["routing"]["spread"], "dmodk");
    assert_ne!(default.links_csv(), dmodk.links_csv());
    assert_ne!(default.throughput_gbps(), dmodk.throughput_gbps());
    // Adaptive routing ignores the spread, and the summary says so.
    let adaptive = run_with(&fig10(SPINE_LEAF, 8, Some("first")), &["fabric.routing=adaptive"]);
    assert_eq!(summary(&adaptive)["routing"]["spread"], serde_json::Value::Null);
}

#[test]
fn a_bad_spread_is_named() {
    for (text, set, source) in [
        (fig10(RING8, 4, Some("random")), vec![], "bad.toml"),
        (fig10(RING8, 4, None), vec!["fabric.spread=random"], "--set fabric.spread=random"),
    ] {
        let e = error(&text, &set);
        assert!(e.starts_with(&format!("{source}: fabric.spread:")), "{e}");
        assert!(e.contains("random") && e.contains("expected one of `hash`, `dmodk`, `first`"), "{e}");
    }
}
