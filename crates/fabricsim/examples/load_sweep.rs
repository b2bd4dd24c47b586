//! Offered-load sweep of a configuration, one JSON line per load (for the
//! BookSim2 side by side, docs/performance.md):
//! `load_sweep CONFIG FLIT_BYTES CYCLES LOAD...`
//! A cycle is a nanosecond; each load is in flits per cycle per source
//! (`workload.rate` = load x FLIT_BYTES GB/s); a run lasts about `CYCLES`
//! cycles of injection (requests = load x CYCLES, warm-up a tenth).
//! Prints mean latency, accepted throughput in flits per cycle per source,
//! packet-hops (link traversals) and switch traversals, events, wall and
//! CPU seconds.
fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse::<f64>().ok()))
        .map_or(f64::NAN, |ns| ns / 1e9)
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 4 {
        eprintln!("usage: load_sweep CONFIG FLIT_BYTES CYCLES LOAD...");
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(&a[0]).expect("config file");
    let flit: f64 = a[1].parse().expect("flit bytes");
    let cycles: f64 = a[2].parse().expect("cycles");
    for load in &a[3..] {
        let load: f64 = load.parse().expect("load");
        let requests = (load * cycles).round().max(100.0) as u64;
        let o = vec![
            format!("workload.rate={}GB/s", load * flit),
            format!("workload.requests={requests}"),
            format!("workload.warmup={}", requests / 10),
        ];
        let spec = fabricsim::config::resolve(&text, &a[0], fabricsim::Format::Toml, &o, None).expect("valid config");
        let sources = spec.requesters.len() as f64;
        let c0 = cpu_s();
        let (r, hops) = fabricsim::System::build(&spec).run_counting(&mut |_| true);
        let cpu = cpu_s() - c0;
        let packets: u64 = r.class_packets.iter().map(|c| c.1).sum();
        let lat = r.all_latency();
        println!(
            "{}",
            serde_json::json!({
                "load": load,
                "latency_ns": lat.sum as f64 / lat.count.max(1) as f64 / 1000.0,
                "accepted": r.throughput_gbps() / sources / flit,
                "packets": packets,
                "packet_hops": hops,
                "switch_traversals": hops - packets,
                "events": r.events,
                "wall_s": r.wall_s,
                "cpu_s": cpu,
                "outcome": format!("{:?}", r.outcome),
            })
        );
    }
}
