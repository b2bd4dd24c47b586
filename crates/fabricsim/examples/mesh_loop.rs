//! The 8x8 mesh benchmark of `fabricsim bench` in a loop, for before/after
//! comparisons on a shared machine: `mesh_loop [requests] [rounds]`.
//! Prints hops, events, wall time, packet-hops per second of wall time and
//! of this thread's CPU time (less disturbed by other jobs), events per hop.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: u64 = a.get(1).map_or(3000, |s| s.parse().expect("requests per requester"));
    let rounds: usize = a.get(2).map_or(3, |s| s.parse().expect("rounds"));
    for _ in 0..rounds {
        let c0 = cpu_ns();
        let m = fabricsim::bench::mesh(n);
        let cpu = match (c0, cpu_ns()) {
            (Some(a), Some(b)) => format!("{:.3}M", m.packet_hops as f64 / ((b - a) as f64 / 1e9) / 1e6),
            _ => "n/a".to_string(),
        };
        println!(
            "hops {} events {} wall {:.3}s hops/s {:.3}M hops/cpu-s {} ev/hop {:.3} GB/s {:.2}",
            m.packet_hops,
            m.events,
            m.wall_s,
            m.packet_hops as f64 / m.wall_s / 1e6,
            cpu,
            m.events as f64 / m.packet_hops as f64,
            m.throughput_gbps
        );
    }
}
