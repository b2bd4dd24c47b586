//! Mesh benchmark loop: `mesh_loop [requests] [rounds]`.
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: u64 = a.get(1).map_or(3000, |s| s.parse().unwrap());
    let rounds: usize = a.get(2).map_or(3, |s| s.parse().unwrap());
    for _ in 0..rounds {
        let m = fabricsim::bench::mesh(n);
        println!(
            "hops {} events {} wall {:.3} hops/s {:.3}M ev/hop {:.3} thr {:.2}",
            m.packet_hops,
            m.events,
            m.wall_s,
            m.packet_hops as f64 / m.wall_s / 1e6,
            m.events as f64 / m.packet_hops as f64,
            m.throughput_gbps
        );
    }
}
