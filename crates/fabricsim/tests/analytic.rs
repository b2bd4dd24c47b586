//! Analytic cases: the simulator must reproduce numbers we can compute by hand.

use crate::common;
use common::*;
use fabricsim::config::units::Bandwidth;

/// Zero-load latency across a chain of switches equals the sum of every
/// fixed delay and serialization on the path, to the picosecond.
#[test]
fn zero_load_latency_across_n_hops_is_exact() {
    for switches in [1u32, 3, 6] {
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
[workload]
window = 1
requests = 50
header_overhead = 0.25
"#,
        );
        let mut prev = "r".to_string();
        for i in 0..switches {
            cfg += &format!("[[switch]]\nname = \"s{i}\"\n[[link]]\na = \"{prev}\"\nb = \"s{i}\"\n");
            prev = format!("s{i}");
        }
        cfg += &format!("[[link]]\na = \"{prev}\"\nb = \"m\"\n");
        let r = run(&cfg);
        completed(&r);

        let links = switches as u64 + 1;
        let bw = Bandwidth::parse("PCIe5x16").unwrap();
        let prop = 2_000 + 2 * 25_000;
        let req = links * (bw.serialize(16) + prop) + switches as u64 * 20_000;
        let mem = Bandwidth::parse("38.4GB/s").unwrap().serialize(64) + 40_000;
        let resp = links * (bw.serialize(64) + prop) + switches as u64 * 20_000;
        let expected = 10_000 + req + mem + resp + 12_000;
        let h = r.all_latency();
        assert_eq!((h.min, h.max), (expected, expected), "{switches} switches");
    }
}

const SATURATE: &str = r#"
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
read_fraction = 0.0
window = 512
warmup = 2000
requests = 40000
"#;

/// A saturated link carries its configured bandwidth.
#[test]
fn saturated_link_delivers_configured_bandwidth() {
    let r = run(SATURATE);
    completed(&r);
    let gbps = r.throughput_gbps();
    assert!((gbps - 64.0).abs() / 64.0 < 0.01, "{gbps} GB/s");
    let util = link(&r, "r", "m").busy_ps as f64 / r.measured_time() as f64;
    assert!(util > 0.99 && util <= 1.0 + 1e-9, "utilization {util}");
}

/// A PCIe Gen5 x16 link delivers its encoded bandwidth (128b/130b).
#[test]
fn pcie_gen5_x16_delivers_encoded_bandwidth() {
    let r = run_with(SATURATE, &["defaults.link.bandwidth=PCIe5x16"]);
    completed(&r);
    let expected = 32.0 * 16.0 / 8.0 * 128.0 / 130.0;
    let gbps = r.throughput_gbps();
    assert!((gbps - expected).abs() / expected < 0.01, "{gbps} vs {expected} GB/s");
}

const DUPLEX: &str = r#"
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
[[switch]]
name = "s"
[[memory]]
name = "m0"
[[memory]]
name = "m1"
[[memory]]
name = "m2"
[[memory]]
name = "m3"
[[link]]
a = "r"
b = "s"
[[link]]
a = "s"
b = "m0"
bandwidth = "256GB/s"
[[link]]
a = "s"
b = "m1"
bandwidth = "256GB/s"
[[link]]
a = "s"
b = "m2"
bandwidth = "256GB/s"
[[link]]
a = "s"
b = "m3"
bandwidth = "256GB/s"
[workload]
pattern = "uniform"
window = 512
warmup = 2000
requests = 30000
"#;

fn duplex_bw(duplex: &str, read_fraction: f64, header: f64) -> f64 {
    let r = run_with(
        DUPLEX,
        &[
            &format!("link[0].duplex={duplex}"),
            &format!("workload.read_fraction={read_fraction}"),
            &format!("workload.header_overhead={header}"),
        ],
    );
    completed(&r);
    r.throughput_gbps()
}

/// ESF Figs 16/17: full duplex at a 1:1 mix with no header carries about
/// twice the read-only bandwidth; the gain falls as the header grows
/// (2/(1+h) in ESF's packet model); half duplex stays flat.
#[test]
fn full_duplex_gain_falls_with_header_and_half_duplex_is_flat() {
    let mut gains = Vec::new();
    for h in [0.0, 0.5, 1.0] {
        let g = duplex_bw("full", 0.5, h) / duplex_bw("full", 1.0, h);
        let model = 2.0 / (1.0 + h);
        assert!((g - model).abs() / model < 0.05, "h={h}: gain {g}, model {model}");
        gains.push(g);
    }
    assert!(gains[0] > 1.9 && gains[0] > gains[1] && gains[1] > gains[2], "{gains:?}");
    for h in [0.0, 0.5] {
        let g = duplex_bw("half", 0.5, h) / duplex_bw("half", 1.0, h);
        assert!((g - 1.0).abs() < 0.05, "half duplex h={h}: {g}");
    }
}

/// Poisson arrivals of fixed-size packets on one link: the mean wait in
/// the output queue is M/D/1's rho * S / (2 (1 - rho)).
#[test]
fn queueing_matches_md1_at_known_loads() {
    for (rho, n) in [(0.3f64, 100_000u64), (0.6, 200_000), (0.9, 600_000)] {
        let interval_ps = (1000.0 / rho).round() as u64; // S = 64 B / 64 GB/s = 1000 ps
        let r = run_with(
            SATURATE,
            &[
                "workload.injection=open",
                &format!("workload.interval={interval_ps}ps"),
                "workload.arrival=poisson",
                "workload.warmup=5000",
                &format!("workload.requests={n}"),
            ],
        );
        completed(&r);
        let s = link(&r, "r", "m");
        let measured = s.wait_ps as f64 / s.packets as f64;
        let rho_eff = 1000.0 / interval_ps as f64;
        let expected = rho_eff * 1000.0 / (2.0 * (1.0 - rho_eff));
        assert!((measured - expected).abs() / expected < 0.05, "rho {rho}: wait {measured} ps, M/D/1 {expected} ps");
    }
}
