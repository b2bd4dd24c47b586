//! Posted (one-way) writes: `[workload] posted_writes = true`.

use crate::common;
use common::*;
use fabricsim::config::units::Bandwidth;

fn chain(switches: u32, extra: &str) -> String {
    let mut cfg = String::from(
        r#"
[defaults.link]
bandwidth = "PCIe5x16"
latency = "2ns"
port_delay = "25ns"
[defaults.switch]
latency = "20ns"
[defaults.requester]
issue_latency = "10ns"
cache_latency = "12ns"
[defaults.memory]
latency = "40ns"
bandwidth = "38.4GB/s"
[[requester]]
name = "r"
[[memory]]
name = "m"
"#,
    );
    let mut prev = "r".to_string();
    for i in 0..switches {
        cfg += &format!("[[switch]]\nname = \"s{i}\"\n[[link]]\na = \"{prev}\"\nb = \"s{i}\"\n");
        prev = format!("s{i}");
    }
    cfg += &format!("[[link]]\na = \"{prev}\"\nb = \"m\"\n");
    cfg + extra
}

fn class(r: &fabricsim::RunResult, name: &str) -> u64 {
    r.class_packets.iter().find(|c| c.0 == name).map_or(0, |c| c.1)
}

/// A posted write's latency is one way: issue, every link and switch on
/// the way, the media and the controller, to the picosecond; no
/// acknowledgement crosses the fabric.
#[test]
fn zero_load_latency_of_a_posted_write_is_one_way_and_exact() {
    for switches in [1u32, 4] {
        let cfg = chain(switches, "[workload]\nread_fraction = 0.0\nwindow = 1\nrequests = 50\nposted_writes = true\n");
        let r = run(&cfg);
        completed(&r);
        let links = switches as u64 + 1;
        let bw = Bandwidth::parse("PCIe5x16").unwrap();
        let prop = 2_000 + 2 * 25_000;
        let one_way = links * (bw.serialize(64) + prop) + switches as u64 * 20_000;
        let mem = Bandwidth::parse("38.4GB/s").unwrap().serialize(64) + 40_000;
        let expected = 10_000 + one_way + mem;
        let h = &r.write_latency;
        assert_eq!((h.count, h.min, h.max), (50, expected, expected), "{switches} switches");
        // The same write, acknowledged, takes the way back too (a header-only ack).
        let acked = run(&cfg.replace("posted_writes = true", "posted_writes = false"));
        let back = links * (bw.serialize(0) + prop) + switches as u64 * 20_000 + 12_000;
        assert_eq!(acked.write_latency.min, expected + back);
    }
}

/// Reads and posted writes mixed: every request is performed exactly once
/// (the run asserts it), reads get responses, writes none; the memories
/// serve every request and nothing is left in the fabric.
#[test]
fn posted_writes_send_no_response_and_conserve_requests() {
    let cfg = r#"
[topology]
kind = "mesh"
rows = 3
cols = 3
requesters = 9
memories = 9
[workload]
read_fraction = 0.5
window = 8
requests = 400
warmup = 40
posted_writes = true
"#;
    let r = run(cfg);
    completed(&r);
    let issued: u64 = r.requesters.iter().map(|q| q.issued).sum();
    assert_eq!(issued, 9 * 440);
    assert_eq!(r.requesters.iter().map(|q| q.completed).sum::<u64>(), issued);
    let (reads, writes) = (class(&r, "read_req"), class(&r, "posted_write"));
    assert_eq!(reads + writes, issued);
    assert!(writes > 1500 && reads > 1500, "{reads} reads, {writes} writes");
    assert_eq!(class(&r, "read_resp"), reads);
    assert_eq!(class(&r, "write_req"), 0);
    assert_eq!(class(&r, "write_ack"), 0, "a posted write is never acknowledged");
    assert_eq!(r.memories.iter().map(|m| m.served).sum::<u64>(), issued);
    assert_eq!(r.in_flight_packets, 0);
    // Measured requests: reads by their responses, writes when performed.
    assert_eq!(r.requesters.iter().map(|q| q.measured).sum::<u64>(), 9 * 400);
    assert_eq!(r.write_latency.count + r.read_latency.count, 9 * 400);

    // Without posting, the same workload sends one acknowledgement per write.
    let acked = run(&cfg.replace("posted_writes = true", ""));
    assert_eq!(class(&acked, "write_ack"), class(&acked, "write_req"));
    assert!(class(&acked, "write_req") > 1500);
    assert!(acked.class_packets.iter().all(|c| c.0 != "posted_write"), "no posted_write row without posted writes");
}

/// A DRAM memory performs posted writes too; the run waits for the last one.
#[test]
fn posted_writes_reach_a_dram_and_the_run_waits_for_them() {
    let cfg = chain(
        1,
        "[[memory]]\nname = \"d\"\nmodel = \"dram\"\n[[link]]\na = \"s0\"\nb = \"d\"\n[workload]\nread_fraction = 0.0\nwindow = 4\nrequests = 300\nposted_writes = true\n",
    );
    let r = run(&cfg);
    completed(&r);
    assert_eq!(r.memories.iter().map(|m| m.served).sum::<u64>(), 300);
    let dram = r.memories.iter().find(|m| m.name == "d").unwrap();
    assert!(dram.served > 0 && dram.dram.is_some());
    assert_eq!(r.in_flight_packets, 0);
    // The last write was performed after the requester finished issuing.
    assert!(r.sim_time >= r.write_latency.max);
}

/// Same configuration and seed, same bytes.
#[test]
fn posted_runs_are_deterministic() {
    let cfg = chain(2, "[workload]\nread_fraction = 0.3\nwindow = 6\nrequests = 500\nposted_writes = true\n");
    let a = run(&cfg);
    let b = run(&cfg);
    let strip = |s: String| s.lines().filter(|l| !l.contains("wall_s")).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(a.summary_json("t")), strip(b.summary_json("t")));
}

#[test]
fn posted_writes_are_refused_for_protocol_cores_and_non_booleans() {
    let proto = "[topology]\nkind = \"chain\"\nswitches = 1\nrequesters = 2\nmemories = 1\n[protocol]\nname = \"msi\"\n[workload]\nposted_writes = true\n";
    let e = error(proto, &[]);
    assert!(e.contains("workload.posted_writes"), "{e}");
    let e = error(&chain(1, "[workload]\nposted_writes = \"yes\"\n"), &[]);
    assert!(e.contains("posted_writes"), "{e}");
    let e = error(&chain(1, "[workload]\nposted_write = true\n"), &[]);
    assert!(e.contains("posted_write"), "{e}");
}
