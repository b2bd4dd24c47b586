//! Half-duplex turnaround, adaptive routing and trace replay.

use crate::common;
use common::*;

/// A half-duplex link alternates direction packet by packet when both
/// directions wait, paying the turnaround each time: saturated writes with
/// zero-size acknowledgements move one 64 B line per (serialization + 2 T).
#[test]
fn half_duplex_pays_turnaround_per_direction_change() {
    let cfg = r#"
[defaults.link]
bandwidth = "64GB/s"
latency = "1ns"
port_delay = "0ns"
duplex = "half"
turnaround = "500ps"
[defaults.memory]
latency = "10ns"
bandwidth = "inf"
queue = 4096
[[requester]]
name = "r"
[[memory]]
name = "m"
[[link]]
a = "r"
b = "m"
[workload]
read_fraction = 0.0
window = 256
warmup = 2000
requests = 20000
"#;
    let r = run(cfg);
    completed(&r);
    let expected = 64.0 / (1.0 + 2.0 * 0.5); // GB/s: 64 B per 2 ns
    let got = r.throughput_gbps();
    assert!((got - expected).abs() / expected < 0.02, "{got} vs {expected}");
    let st = link(&r, "r", "m");
    assert!(st.turnaround_ps > 0);
    // Full duplex on the same system is not limited by turnaround.
    let full = run_with(cfg, &["defaults.link.duplex=full"]);
    assert!(full.throughput_gbps() > 63.0);
}

const TWO_SPINES: &str = r#"
[fabric]
routing = "adaptive"
[defaults.link]
bandwidth = "64GB/s"
latency = "1ns"
port_delay = "2ns"
[defaults.memory]
bandwidth = "inf"
queue = 1024
[[requester]]
name = "r0"
[[requester]]
name = "r1"
[[requester]]
name = "r2"
[[requester]]
name = "r3"
[[memory]]
name = "m0"
[[switch]]
name = "leaf0"
[[switch]]
name = "leaf1"
[[switch]]
name = "s0"
[[switch]]
name = "s1"
[[link]]
a = "r0"
b = "leaf0"
[[link]]
a = "r1"
b = "leaf0"
[[link]]
a = "r2"
b = "leaf0"
[[link]]
a = "r3"
b = "leaf0"
[[link]]
a = "leaf0"
b = "s0"
bandwidth = "32GB/s"
[[link]]
a = "leaf0"
b = "s1"
bandwidth = "32GB/s"
[[link]]
a = "s0"
b = "leaf1"
bandwidth = "32GB/s"
[[link]]
a = "s1"
b = "leaf1"
bandwidth = "32GB/s"
[[link]]
a = "leaf1"
b = "m0"
[workload]
read_fraction = 0.0
window = 64
warmup = 500
requests = 5000
"#;

/// Adaptive routing spreads flows over both spines and fills the 64 GB/s
/// memory link; oblivious routing, fixed per flow, can do no better.
#[test]
fn adaptive_routing_uses_both_spines() {
    let a = run(TWO_SPINES);
    completed(&a);
    let o = run_with(TWO_SPINES, &["fabric.routing=oblivious"]);
    completed(&o);
    assert!(a.throughput_gbps() > 0.95 * 64.0, "adaptive {}", a.throughput_gbps());
    assert!(
        a.throughput_gbps() >= o.throughput_gbps() * 0.999,
        "adaptive {} < oblivious {}",
        a.throughput_gbps(),
        o.throughput_gbps()
    );
    let s0 = link(&a, "s0", "leaf1").payload_bytes as f64;
    let s1 = link(&a, "s1", "leaf1").payload_bytes as f64;
    assert!((s0 - s1).abs() / (s0 + s1) < 0.1, "spine split {s0} / {s1}");
}

/// Requests of a trace issue at their times; with no contention each has
/// the zero-load latency, and the run ends one latency after the last.
#[test]
fn trace_replay_issues_at_trace_times() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.trace"),
        "# time requester op address size\n0ns host0 R 0x0 64\n1us host0 W 0x40 64\n2000 host0 R 0x80 64\n",
    )
    .unwrap();
    let cfg = r#"
[[requester]]
name = "host0"
[[memory]]
name = "m"
[[link]]
a = "host0"
b = "m"
[workload]
pattern = "trace"
trace = "t.trace"
"#;
    let path = dir.path().join("c.toml");
    std::fs::write(&path, cfg).unwrap();
    let spec = fabricsim::config::resolve(cfg, path.to_str().unwrap(), fabricsim::Format::Toml, &[], None).unwrap();
    let r = fabricsim::System::build(&spec).run(&mut |_| true);
    completed(&r);
    assert_eq!(r.requesters[0].completed, 3);
    let h = r.all_latency();
    let zero_load_read = h.min;
    // last request (a read) issued at 2 us + issue latency, done one read latency later
    assert_eq!(r.sim_time, 2_000_000 + zero_load_read);
    let e = fabricsim::config::resolve(
        &cfg.replace("t.trace", "missing.trace"),
        path.to_str().unwrap(),
        fabricsim::Format::Toml,
        &[],
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("workload.trace") && e.contains("cannot read"), "{e}");
}

/// Head-of-line blocking: with one FIFO per input, a packet waiting for a
/// busy output holds back packets for idle outputs; virtual output queues
/// do not. Uniform traffic through a spine-leaf fabric shows it (about 10 %).
#[test]
fn virtual_output_queues_avoid_head_of_line_blocking() {
    let cfg = r#"
[topology]
kind = "spine_leaf"
spines = 2
leaves = 8
requesters = 16
memories = 16
attach = "split"
[defaults.link]
bandwidth = "64GB/s"
[defaults.memory]
bandwidth = "inf"
queue = 4096
[workload]
window = 1024
interleave = "64B"
warmup = 1000
requests = 3000
"#;
    let voq = run(cfg);
    let fifo = run_with(cfg, &["fabric.switch_queueing=input_fifo"]);
    completed(&voq);
    completed(&fifo);
    assert!(
        voq.throughput_gbps() > 1.06 * fifo.throughput_gbps(),
        "voq {} fifo {}",
        voq.throughput_gbps(),
        fifo.throughput_gbps()
    );
}

/// `attach = "split"` puts requesters on the first half of the edge
/// switches and memories on the second, so a chain's middle link carries
/// all traffic and caps it at one port.
#[test]
fn split_attachment_makes_the_chain_a_one_port_bottleneck() {
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
window = 512
interleave = "64B"
warmup = 500
requests = 3000
"#;
    let r = run(cfg);
    completed(&r);
    let ratio = r.throughput_gbps() / 64.0;
    assert!((0.95..=1.0).contains(&ratio), "{ratio}");
    assert!(link(&r, "sw2", "sw1").busy_ps as f64 / r.measured_time() as f64 > 0.95);
}

/// `switch_link_bandwidth` widens the generated switch-to-switch links only:
/// the split chain's bridge then carries twice a port, and the edge links
/// keep theirs (the iso-bisection systems of ESF Fig 12).
#[test]
fn switch_link_bandwidth_widens_the_bridge_not_the_edge() {
    let cfg = r#"
[topology]
kind = "chain"
switches = 4
requesters = 4
memories = 4
attach = "split"
switch_link_bandwidth = "128GB/s"
[defaults.link]
bandwidth = "64GB/s"
[defaults.memory]
bandwidth = "inf"
queue = 4096
[workload]
window = 512
interleave = "64B"
warmup = 500
requests = 3000
"#;
    let r = run(cfg);
    completed(&r);
    let bw = |from: &str, to: &str| r.links.iter().find(|l| l.1 == from && l.2 == to).unwrap().3;
    assert_eq!((bw("sw1", "sw2"), bw("req0", "sw0"), bw("mem0", "sw2")), (128.0, 64.0, 64.0));
    let ratio = r.throughput_gbps() / 128.0;
    assert!((0.9..=1.0).contains(&ratio), "{ratio}");
    let e = error(&cfg.replace("\"128GB/s\"", "\"inf\""), &[]);
    assert!(e.contains("topology.switch_link_bandwidth") && e.contains("finite"), "{e}");
}

/// `[fabric] flit`: every message costs its 16 B slots at the flit's bytes
/// per slot, so a saturated read stream carries 64 B of data per 68 B of
/// response (68 B flits) or per 69 B (256 B flits, 15 slots per flit).
#[test]
fn flit_modes_cost_slots_on_the_wire() {
    let cfg = r#"
[defaults.link]
bandwidth = "64GB/s"
latency = "1ns"
port_delay = "0ns"
[defaults.memory]
latency = "10ns"
bandwidth = "inf"
queue = 4096
[[requester]]
name = "r"
[[memory]]
name = "m"
[[link]]
a = "r"
b = "m"
[workload]
read_fraction = 1.0
window = 512
warmup = 2000
requests = 20000
"#;
    let plain = run(cfg);
    completed(&plain);
    for (mode, req, resp) in [("68B", 17u64, 68u64), ("256B", 18, 69)] {
        let r = run_with(cfg, &[&format!("fabric.flit={mode}")]);
        completed(&r);
        let (up, down) = (link(&r, "r", "m"), link(&r, "m", "r"));
        assert_eq!(up.bytes, up.packets * req, "{mode}: a header-only request is one slot");
        assert_eq!(down.bytes, down.packets * resp, "{mode}: a 64 B response is four slots");
        let ratio = r.throughput_gbps() / plain.throughput_gbps();
        assert!((ratio - 64.0 / resp as f64).abs() < 0.01, "{mode}: {ratio}");
    }
    let e = error(cfg, &["fabric.flit=128B"]);
    assert!(e.contains("fabric.flit") && e.contains("68B") && e.contains("256B"), "{e}");
}
