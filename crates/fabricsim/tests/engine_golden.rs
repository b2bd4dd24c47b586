//! The fabric engine's outputs, byte for byte, across its variants:
//! oblivious routing with hop-indexed VCs, dimension-order routing on a
//! mesh and on a torus (dateline VCs), adaptive routing, up*/down*, input
//! FIFOs, half-duplex links, open loop, tiny buffers (credit stalls).
//! Engine changes that only make it faster must leave every digest as it
//! is; the event count is reported beside it, not digested, since making
//! the engine faster is mostly about fewer events.

use fabricsim::{config, Format};

fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// Digest of every output but the wall time and the event count; and the event count.
fn digest(toml: &str, overrides: &[&str]) -> (u64, u64) {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let spec = config::resolve(toml, "golden.toml", Format::Toml, &o, None).unwrap_or_else(|e| panic!("{e}"));
    let mut r = fabricsim::run_spec(&spec, &mut |_| true);
    r.wall_s = 0.0;
    let events = r.events;
    r.events = 0;
    // The per-hop-count table and the requesters' finish times were added
    // to the outputs later: leave them out so the digests recorded before
    // still compare everything else.
    let mut summary: serde_json::Value = serde_json::from_str(&r.summary_json("golden")).unwrap();
    summary.as_object_mut().unwrap().remove("latency_by_hops");
    let mut all = serde_json::to_string_pretty(&summary).unwrap();
    for (name, t) in r.tables() {
        if name == "requesters" {
            for line in t.lines() {
                all += line.rsplit_once(',').map_or(line, |(kept, _finished)| kept);
                all.push('\n');
            }
        } else if name != "hops" {
            all += &t;
        }
    }
    (fnv(&all), events)
}

const MESH: &str = r#"
[topology]
kind = "mesh"
rows = 4
cols = 4
requesters = 16
memories = 16
[defaults.link]
bandwidth = "64GB/s"
latency = "1ns"
port_delay = "2ns"
[defaults.switch]
latency = "5ns"
[defaults.memory]
bandwidth = "inf"
[workload]
pattern = "uniform"
read_fraction = 0.5
window = 8
interleave = "64B"
header_overhead = 0.25
requests = 400
warmup = 50
"#;

fn example(name: &str) -> String {
    let p = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[test]
fn engine_outputs_unchanged() {
    let spine = example("spine_leaf.toml");
    let cases: Vec<(&str, &str, Vec<&str>)> = vec![
        ("mesh_oblivious", MESH, vec![]),
        ("mesh_dor", MESH, vec!["fabric.routing=dor"]),
        ("torus_dor", MESH, vec!["fabric.routing=dor", "topology.kind=torus"]),
        ("torus_oblivious", MESH, vec!["topology.kind=torus"]),
        ("mesh_adaptive", MESH, vec!["fabric.routing=adaptive"]),
        ("mesh_updown", MESH, vec!["fabric.routing=updown"]),
        ("mesh_input_fifo", MESH, vec!["fabric.switch_queueing=input_fifo"]),
        (
            "mesh_dor_fifo_small",
            MESH,
            vec!["fabric.routing=dor", "fabric.switch_queueing=input_fifo", "fabric.buffer=100B"],
        ),
        ("mesh_small_buffers", MESH, vec!["fabric.buffer=160B", "workload.window=32"]),
        ("mesh_half_duplex", MESH, vec!["defaults.link.duplex=half", "defaults.link.turnaround=3ns"]),
        (
            "mesh_open",
            MESH,
            vec!["workload.injection=open", "workload.rate=8GB/s", "workload.window=1000", "fabric.routing=dor"],
        ),
        ("spine_leaf", &spine, vec!["workload.requests=2000", "workload.warmup=200"]),
        (
            "spine_leaf_dmodk_fifo",
            &spine,
            vec!["workload.requests=2000", "fabric.spread=dmodk", "fabric.switch_queueing=input_fifo"],
        ),
    ];
    let mut got = Vec::new();
    for (name, toml, o) in &cases {
        let (d, ev) = digest(toml, o);
        println!("(\"{name}\", {d:#018x}), // {ev} events");
        got.push((name.to_string(), d));
    }
    // Recorded on main at 32d6a3d (issue 11's first fabric engine).
    let expected: &[(&str, u64)] = &[
        ("mesh_oblivious", 0x6a363034082a85ce),
        ("mesh_dor", 0x60e2e6e5f4b040af),
        ("torus_dor", 0xf84666abaf099d5a),
        ("torus_oblivious", 0xaa273e23a5107942),
        ("mesh_adaptive", 0xce006313b90a5eb0),
        ("mesh_updown", 0xd20c0fb1e604528e),
        ("mesh_input_fifo", 0x8c0e03ac55f1616c),
        ("mesh_dor_fifo_small", 0x848604f24c27615c),
        ("mesh_small_buffers", 0x81b7431b7f7faa45),
        ("mesh_half_duplex", 0xe23901cd19d9dafb),
        ("mesh_open", 0x05e26f850ddd4d99),
        ("spine_leaf", 0x39440c38429398eb),
        ("spine_leaf_dmodk_fifo", 0xb2aedb171db908a2),
    ];
    assert_eq!(got.len(), expected.len());
    for ((name, d), (en, ed)) in got.iter().zip(expected) {
        assert_eq!(name, en);
        assert_eq!(*d, *ed, "{name}: outputs changed");
    }
}
