//! Conservation, deadlock freedom and determinism.

use crate::common;
use common::*;
use fabricsim::Outcome;

/// Every request gets exactly one response (the simulator asserts no
/// duplicate and no stray response as it runs); nothing is left over.
#[test]
fn every_request_gets_exactly_one_response() {
    let r = run(&std::fs::read_to_string("../../examples/spine_leaf.toml").unwrap());
    completed(&r);
    for q in &r.requesters {
        assert_eq!(q.issued, 11_000);
        assert_eq!(q.completed, q.issued);
    }
    assert_eq!(r.in_flight_packets, 0);
    // requests in = responses out, per class
    let c = |n: &str| r.class_packets.iter().find(|c| c.0 == n).unwrap().1;
    assert_eq!(c("read_req"), c("read_resp"));
    assert_eq!(c("write_req"), c("write_ack"));
    assert_eq!(c("read_req") + c("write_req"), 44_000);
}

#[test]
fn a_run_cut_short_reports_what_is_in_flight() {
    let r = run_with(&std::fs::read_to_string("../../examples/spine_leaf.toml").unwrap(), &["sim.max_time=5us"]);
    assert_eq!(r.outcome, Outcome::TimeLimit);
    assert!(r.in_flight_packets > 0);
    assert!(r.warnings[0].contains("outstanding") && r.warnings[0].contains("in flight"), "{:?}", r.warnings);
    let issued: u64 = r.requesters.iter().map(|q| q.issued).sum();
    let completed: u64 = r.requesters.iter().map(|q| q.completed).sum();
    assert!(issued > completed);
}

fn cyclic(kind: &str, shape: &str, n: u32) -> String {
    format!(
        r#"
[topology]
kind = "{kind}"
{shape}
requesters = {n}
memories = {n}
[fabric]
buffer = "128B"
[defaults.link]
bandwidth = "32GB/s"
latency = "1ns"
port_delay = "2ns"
[defaults.memory]
bandwidth = "inf"
[workload]
pattern = "uniform"
read_fraction = 0.5
window = 64
requests = 3000
interleave = "64B"
"#
    )
}

/// Under saturation with tiny buffers, the chosen routing never deadlocks
/// on a ring or a torus: hop-indexed VCs for minimal routing, or up*/down*.
#[test]
fn no_deadlock_on_ring_and_torus_under_saturation() {
    let ring = cyclic("ring", "switches = 8", 8);
    let torus = cyclic("torus", "rows = 4\ncols = 4", 16);
    for cfg in [&ring, &torus] {
        for routing in ["oblivious", "adaptive", "updown"] {
            let r = run_with(cfg, &[&format!("fabric.routing={routing}")]);
            completed(&r);
            if routing == "updown" {
                assert!(r.cdg_acyclic && r.vc_levels == 1);
            } else {
                assert!(!r.cdg_acyclic && r.vc_levels > 1, "{routing}: {} levels", r.vc_levels);
            }
        }
    }
}

/// The same ring with deadlock avoidance switched off does deadlock, and
/// the run says so: the check above can fail.
#[test]
fn ring_without_deadlock_avoidance_deadlocks_and_is_reported() {
    let r =
        run_with(&cyclic("ring", "switches = 8", 8), &["fabric.deadlock_avoidance=none", "workload.read_fraction=0.0"]);
    assert_eq!(r.outcome, Outcome::Deadlock, "{:?}", r.warnings);
    assert!(r.warnings[0].starts_with("deadlock"));
    assert!(r.in_flight_packets > 0);
}

/// Same configuration and seed, same bytes; another seed, other bytes.
#[test]
fn runs_are_deterministic() {
    let cfg = std::fs::read_to_string("../../examples/spine_leaf.toml").unwrap();
    let strip = |s: String| s.lines().filter(|l| !l.contains("\"wall_s\"")).collect::<Vec<_>>().join("\n");
    let a = run(&cfg);
    let b = run(&cfg);
    let c = run_with(&cfg, &["sim.seed=2"]);
    assert_eq!(strip(a.summary_json("x")), strip(b.summary_json("x")));
    assert_eq!(a.tables(), b.tables());
    assert_ne!(a.tables(), c.tables());
}
