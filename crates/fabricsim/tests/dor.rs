//! Dimension-order routing (`routing = "dor"`) on meshes and tori.

use crate::common;
use common::*;
use fabricsim::config::schema::{DeadlockAvoidance, RoutingAlgorithm, Spread};
use fabricsim::fabric::routing::RoutingTable;
use fabricsim::{config, Format};

fn spec(kind: &str, rows: u32, cols: u32, extra: &[&str]) -> fabricsim::SystemSpec {
    let cfg = format!(
        "[fabric]\nrouting = \"dor\"\n[topology]\nkind = \"{kind}\"\nrows = {rows}\ncols = {cols}\nrequesters = {n}\nmemories = {n}\n",
        n = rows * cols
    );
    let o: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    config::resolve(&cfg, "dor.toml", Format::Toml, &o, None).unwrap_or_else(|e| panic!("{e}"))
}

fn all_flows(s: &fabricsim::SystemSpec) -> Vec<Vec<(u32, u32)>> {
    let mut req = Vec::new();
    let mut resp = Vec::new();
    for r in &s.requesters {
        for &t in &r.workload.targets {
            let m = s.memories[t as usize].node;
            req.push((r.node, m));
            resp.push((m, r.node));
        }
    }
    vec![req, resp]
}

/// On a mesh every route has Manhattan length (plus the two endpoint
/// links) and moves along X before Y.
#[test]
fn mesh_routes_are_manhattan_and_x_first() {
    let (rows, cols) = (4u32, 5u32);
    let s = spec("mesh", rows, cols, &[]);
    let t = &s.topology;
    let rt = RoutingTable::build(t, RoutingAlgorithm::Dor, Spread::Hash, DeadlockAvoidance::Auto, &all_flows(&s));
    let coord = |sw: u32| (sw / cols, sw % cols);
    let home = |e: u32| t.peer(t.nodes[e as usize].ports[0]);
    for r in &s.requesters {
        for m in &s.memories {
            let (src, dst) = (r.node, m.node);
            let (a, b) = (coord(home(src)), coord(home(dst)));
            let manhattan = a.0.abs_diff(b.0) + a.1.abs_diff(b.1);
            assert_eq!(rt.distance(src, 0, dst), Some(manhattan + 2));
            // Walk it: X moves (same row) all come before Y moves.
            let (mut node, mut hops, mut turned) = (src, 0, false);
            while node != dst {
                let o = rt.oblivious(src, node, 0, dst);
                let next = t.peer(o);
                if t.nodes[node as usize].kind.is_switch() && t.nodes[next as usize].kind.is_switch() {
                    let (p, q) = (coord(node), coord(next));
                    if p.0 != q.0 {
                        turned = true;
                    } else {
                        assert!(!turned, "an X move after a Y move from {src} to {dst}");
                    }
                }
                node = next;
                hops += 1;
            }
            assert_eq!(hops, manhattan + 2);
        }
    }
    assert!(rt.cdg_acyclic, "DOR on a mesh has an acyclic channel dependency graph");
    assert_eq!(rt.levels, 1);
}

/// On a torus, DOR's rings make the channel dependency graph cyclic
/// unless packets switch VC at the dateline: with dateline VCs the check
/// finds it acyclic; without (deadlock_avoidance = "none"), cyclic.
#[test]
fn torus_needs_and_gets_dateline_vcs() {
    let s = spec("torus", 4, 4, &[]);
    let flows = all_flows(&s);
    let dl = RoutingTable::build(&s.topology, RoutingAlgorithm::Dor, Spread::Hash, DeadlockAvoidance::Auto, &flows);
    assert!(dl.cdg_acyclic);
    assert_eq!(dl.levels, 2);
    let none = RoutingTable::build(&s.topology, RoutingAlgorithm::Dor, Spread::Hash, DeadlockAvoidance::None, &flows);
    assert!(!none.cdg_acyclic);
    assert_eq!(none.levels, 1);
    // Shortest way round each ring: at most 2 + 2 switch hops on a 4x4 torus.
    assert_eq!(dl.max_hops, 4 + 2);
}

/// A torus under saturation (uniform traffic, deep windows, small buffers)
/// completes with DOR and dateline VCs.
#[test]
fn torus_under_saturation_does_not_deadlock() {
    let cfg = r#"
[fabric]
routing = "dor"
buffer = "128B"
[topology]
kind = "torus"
rows = 4
cols = 4
requesters = 16
memories = 16
[defaults.link]
bandwidth = "16GB/s"
[defaults.memory]
bandwidth = "inf"
queue = 1024
[workload]
pattern = "uniform"
read_fraction = 0.5
window = 64
interleave = "64B"
requests = 2000
"#;
    let r = run(cfg);
    completed(&r);
    assert!(r.cdg_acyclic && r.vc_levels == 2);
    assert_eq!(r.routing, "dor");
}

#[test]
fn dor_needs_a_generated_grid() {
    let e = error(
        "[fabric]\nrouting = \"dor\"\n[topology]\nkind = \"ring\"\nswitches = 4\nrequesters = 1\nmemories = 1\n",
        &[],
    );
    assert!(e.starts_with("bad.toml: fabric.routing:") && e.contains("mesh or torus"), "{e}");
    let e = error(
        "[fabric]\nrouting = \"dor\"\ndeadlock_avoidance = \"hop_vcs\"\n[topology]\nkind = \"mesh\"\nrows = 2\ncols = 2\nrequesters = 1\nmemories = 1\n",
        &[],
    );
    assert!(e.starts_with("bad.toml: fabric.deadlock_avoidance:"), "{e}");
}
