//! Built-in benchmarks behind `fabricsim bench`: raw event dispatch of the
//! engine and packet hops of the fabric on a loaded 8x8 mesh. The Criterion
//! benchmarks in `benches/` measure the same paths with statistics; these
//! give one figure each, quickly, from the installed package.

use std::time::Instant;

use serde_json::json;

use crate::config::{self, Format};
use crate::engine::rng::Stream;
use crate::engine::EventQueue;
use crate::sim::System;

/// Pop-and-reschedule loop: `pending` events in flight, each handler
/// schedules one new event a pseudo-random delay ahead (the classic "hold"
/// model of event-queue benchmarks).
pub fn engine_dispatch(events: u64, pending: usize) -> (u64, f64) {
    let mut q: EventQueue<u32> = EventQueue::with_capacity(pending * 2);
    let mut rng = Stream::new(1, 0);
    for i in 0..pending {
        q.schedule(rng.below(1000), i as u32);
    }
    let t = Instant::now();
    let mut n = 0;
    let mut acc = 0u64;
    while n < events {
        let (_, c) = q.pop().expect("events pending");
        acc = acc.wrapping_add(c as u64);
        q.schedule_in(1 + (rng.next_u64() & 1023), c);
        n += 1;
    }
    std::hint::black_box(acc);
    (n, t.elapsed().as_secs_f64())
}

/// The 8x8 mesh of the issue: 64 requesters and 64 memories, one of each
/// per switch, uniform random reads and writes, closed loop.
pub const MESH_8X8: &str = r#"
name = "bench_mesh_8x8"
[topology]
kind = "mesh"
rows = 8
cols = 8
requesters = 64
memories = 64
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
"#;

pub struct MeshBench {
    pub events: u64,
    pub packet_hops: u64,
    pub requests: u64,
    pub wall_s: f64,
    pub throughput_gbps: f64,
}

pub fn mesh(requests_per_requester: u64) -> MeshBench {
    let spec = config::resolve(
        MESH_8X8,
        "<bench>",
        Format::Toml,
        &[format!("workload.requests={requests_per_requester}")],
        None,
    )
    .expect("benchmark configuration is valid");
    let sys = System::build(&spec);
    // Hops, events and wall time all cover the whole run (building the
    // system is in none of them).
    let t = Instant::now();
    let (r, packet_hops) = sys.run_counting(&mut |_| true);
    let wall = t.elapsed().as_secs_f64();
    MeshBench {
        events: r.events,
        packet_hops,
        requests: r.requesters.iter().map(|q| q.completed).sum(),
        wall_s: wall,
        throughput_gbps: r.throughput_gbps(),
    }
}

/// The BookSim2 comparison's fabric (`benchmarks/booksim_mesh88.toml`: 8x8
/// mesh, DOR, uniform random one-flit posted writes) at an offered load in
/// flits per cycle per source (docs/performance.md).
pub const BOOKSIM_MESH88: &str = include_str!("../../../benchmarks/booksim_mesh88.toml");

pub fn booksim_mesh(load: f64, requests: u64) -> serde_json::Value {
    let spec = config::resolve(
        BOOKSIM_MESH88,
        "<bench>",
        Format::Toml,
        &[format!("workload.rate={}GB/s", load * 16.0), format!("workload.requests={requests}")],
        None,
    )
    .expect("benchmark configuration is valid");
    let sys = System::build(&spec);
    let t = Instant::now();
    let (r, hops) = sys.run_counting(&mut |_| true);
    let wall = t.elapsed().as_secs_f64();
    let lat = r.all_latency();
    json!({
        "what": "8x8 mesh, DOR, uniform random 16-byte posted writes, 16 GB/s links, 4 ns switches (the BookSim2 comparison)",
        "offered_flits_per_cycle": load,
        "accepted_flits_per_cycle": r.throughput_gbps() / 64.0 / 16.0,
        "mean_latency_ns": lat.sum as f64 / lat.count.max(1) as f64 / 1000.0,
        "packet_hops": hops,
        "events": r.events,
        "wall_s": wall,
        "packet_hops_per_s": hops as f64 / wall,
        "events_per_packet_hop": r.events as f64 / hops.max(1) as f64,
    })
}

/// The explicit-state checker on a protocol: states, seconds, states/s,
/// peak memory, symmetry, threads. The peak is this run's own where Linux
/// lets the process reset it (`/proc/self/clear_refs`), else the process's
/// peak so far.
fn checker<P: crate::check::explorer::Checkable>(p: &P, threads: usize) -> serde_json::Value {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let opts = crate::check::Options { check_deadlock: true, threads, ..Default::default() };
    let r = crate::check::explore(p, &opts, &mut |_| {});
    json!({
        "states": r.states,
        "transitions": r.transitions,
        "seconds": r.seconds,
        "states_per_s": r.states_per_s(),
        "peak_rss_kb": r.peak_rss_kb,
        "bytes_per_state": r.peak_rss_kb as f64 * 1024.0 / r.states.max(1) as f64,
        "symmetry": r.symmetry,
        "threads": r.threads,
        "ok": r.violation.is_none() && r.complete,
    })
}

/// Checker figures: German's protocol (2 data values) with and without
/// symmetry, on one thread and on every core, and MSI/MESI. Smallest
/// first, so each peak-memory figure is that run's own even where the peak
/// cannot be reset.
pub fn checker_figures(quick: bool) -> serde_json::Value {
    use crate::agents::coherence::directory::{Directory, Variant};
    use crate::agents::coherence::german::German;
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut german = serde_json::Map::new();
    let sizes: &[usize] = if quick { &[2, 3] } else { &[2, 3, 4] };
    for &n in sizes {
        german.insert(format!("{n}_clients"), checker(&German::new(n, 2), 1));
    }
    let mut symmetric = serde_json::Map::new();
    // Issue 11: Rumur's orbit counts, 852; 5,235; 28,088; 131,112; 536,837.
    let sym_sizes: &[usize] = if quick { &[3, 4] } else { &[2, 3, 4, 5, 6] };
    for &n in sym_sizes {
        for t in [1, all] {
            symmetric.insert(format!("{n}_clients_{t}_threads"), checker(&German::new(n, 2).with_symmetry(true), t));
        }
    }
    let mut out = json!({
        "mesi_3_caches_1_address": checker(&Directory::free(Variant::Mesi, 3, 1, 1, 2), 1),
        "msi_3_caches_1_address": checker(&Directory::free(Variant::Msi, 3, 1, 1, 2), 1),
        "msi_3_caches_1_address_symmetry": checker(&Directory::free(Variant::Msi, 3, 1, 1, 2).with_symmetry(true), all),
    });
    if !quick {
        // Issue 11's figures: memory per state (German, 5 clients) and the
        // speed-up on every core (German 4 and 5 clients, MSI 3 caches x 2
        // addresses x 2 values with symmetry; German 6 clients with
        // symmetry); MSI and MESI 3 x 2 x 2 within 2 minutes and 2 GB.
        german.insert(format!("4_clients_{all}_threads"), checker(&German::new(4, 2), all));
        german.insert("5_clients".to_string(), checker(&German::new(5, 2), 1));
        german.insert(format!("5_clients_{all}_threads"), checker(&German::new(5, 2), all));
        let msi = Directory::free(Variant::Msi, 3, 1, 2, 2).with_symmetry(true);
        out["msi_3_caches_2_addresses_symmetry"] = checker(&msi, 1);
        out[format!("msi_3_caches_2_addresses_symmetry_{all}_threads")] = checker(&msi, all);
        let speedup = |one: &serde_json::Value, many: &serde_json::Value| {
            json!(one["seconds"].as_f64().unwrap_or(0.0) / many["seconds"].as_f64().unwrap_or(1.0).max(1e-9))
        };
        out["mesi_3_caches_2_addresses_symmetry"] =
            checker(&Directory::free(Variant::Mesi, 3, 1, 2, 2).with_symmetry(true), 1);
        out["speedup_german_5_clients"] = speedup(&german["5_clients"], &german[&format!("5_clients_{all}_threads")]);
        out["speedup_german_6_clients_symmetry"] =
            speedup(&symmetric["6_clients_1_threads"], &symmetric[&format!("6_clients_{all}_threads")]);
        out["speedup_msi_3_caches_2_addresses_symmetry"] = speedup(
            &out["msi_3_caches_2_addresses_symmetry"],
            &out[format!("msi_3_caches_2_addresses_symmetry_{all}_threads")],
        );
    }
    out["german"] = german.into();
    out["german_symmetry"] = symmetric.into();
    out
}

/// MESI at full size on the generic protocol timing engine:
/// `examples/mesi_64core.toml` (64 cores with capacity caches, 8 directory
/// slices with occupancy, a 2x4 mesh, uniform over 1 M lines, 30 % stores),
/// with `requests` per core. Protocol messages are the packets every agent
/// sends (requests, forwards, responses).
pub const MESI_64CORE: &str = include_str!("../../../examples/mesi_64core.toml");

pub fn protocol_mesi_64(requests: u64) -> serde_json::Value {
    let spec = config::resolve(
        MESI_64CORE,
        "<bench>",
        Format::Toml,
        &[format!("workload.requests={requests}"), "workload.warmup=0".to_string()],
        None,
    )
    .expect("the benchmark configuration is valid");
    let r = crate::run_spec(&spec, &mut |_| true);
    let messages: u64 = r.class_packets.iter().map(|c| c.1).sum();
    let ops: u64 = r.requesters.iter().map(|c| c.completed).sum();
    json!({
        "what": "MESI, 64 cores (256 KiB 8-way caches, 16 MSHRs), 8 directories with DDR5-4800, 2x4 mesh, uniform over 1M lines, 30% stores",
        "operations": ops,
        "protocol_messages": messages,
        "events": r.events,
        "wall_s": r.wall_s,
        "protocol_messages_per_s": messages as f64 / r.wall_s,
        "operations_per_s": ops as f64 / r.wall_s,
        "events_per_s": r.events as f64 / r.wall_s,
        "events_per_message": r.events as f64 / messages.max(1) as f64,
        "outcome": format!("{:?}", r.outcome).to_lowercase(),
    })
}

/// GCS (seed 004) at the paper's size on the generic protocol timing
/// engine: Fig 7's MIND cluster (8 blades of 10 threads, the switch
/// directory, the memory blade, 2 µs RDMA hops) on MIND-KVS, YCSB-C's
/// Zipfian keys over `buckets` bucket locks, `requests` operations a
/// thread. The cost of a step must not grow with the number of locks.
pub fn protocol_gcs(buckets: u64, requests: u64) -> serde_json::Value {
    const BLADES: usize = 8;
    const THREADS: usize = 10;
    let rdma =
        |a: String, bw: &str| json!({"a": a, "b": "tor", "latency": "2us", "bandwidth": bw, "port_delay": "0ns"});
    let mut links = Vec::new();
    let mut threads = Vec::new();
    for b in 0..BLADES {
        for t in 0..THREADS {
            threads.push(json!({"name": format!("t{b}.{t}")}));
            links.push(free_link(format!("t{b}.{t}"), format!("b{b}")));
        }
        links.push(free_link(format!("blade{b}"), format!("b{b}")));
        links.push(rdma(format!("b{b}"), "100Gb/s"));
    }
    links.push(json!({"a": "switch", "b": "tor", "latency": "0ns", "bandwidth": "6400Gb/s", "port_delay": "0ns"}));
    links.push(rdma("memory".into(), "400Gb/s"));
    let mut switches: Vec<_> = (0..BLADES).map(|b| json!({"name": format!("b{b}"), "latency": "0ns"})).collect();
    switches.push(json!({"name": "tor", "latency": "0ns"}));
    let mut memories: Vec<_> = (0..BLADES).map(|b| json!({"name": format!("blade{b}")})).collect();
    memories.extend([json!({"name": "switch"}), json!({"name": "memory"})]);
    let cfg = json!({
        "name": "bench_gcs_mind",
        "requester": threads,
        "switch": switches,
        "memory": memories,
        "link": links,
        "workload": {"pattern": "zipf", "read_fraction": 1.0, "footprint": format!("{}B", buckets * 64),
                     "line": "64B", "requests": requests, "warmup": 0, "window": 1},
        "protocol": {"name": "gcs", "cache_latency": "0.1us", "directory_latency": "0.3us", "memory_latency": "1us",
                     "issue_interval": "1ns", "control_bytes": "64B", "data_bytes": "64B",
                     "gcs": {"variant": "gcs", "region": "1KiB", "blade_latency": "1us", "nic_service": "1us"}},
    });
    run_system(
        &cfg,
        format!("GCS on MIND: 8 blades x 10 threads, YCSB-C Zipf 0.99 over {buckets} bucket locks (GCS Fig 7)"),
    )
}

/// A link that costs nothing (a component to its own switch).
fn free_link(a: String, b: String) -> serde_json::Value {
    json!({"a": a, "b": b, "latency": "0ns", "bandwidth": "1TB/s", "port_delay": "0ns"})
}

/// Resolve and run a benchmark configuration given as JSON.
fn run_spec_of(cfg: &serde_json::Value) -> crate::RunResult {
    let spec = config::resolve(&cfg.to_string(), "<bench>", Format::Json, &[], None)
        .expect("the benchmark configuration is valid");
    crate::run_spec(&spec, &mut |_| true)
}

/// Run a benchmark system (a configuration as JSON) on the protocol timing
/// engine: its operations, protocol messages and events, per wall second.
fn run_system(cfg: &serde_json::Value, what: String) -> serde_json::Value {
    let r = run_spec_of(cfg);
    let messages: u64 = r.class_packets.iter().map(|c| c.1).sum();
    let ops: u64 = r.requesters.iter().map(|c| c.completed).sum();
    json!({
        "what": what,
        "operations": ops,
        "protocol_messages": messages,
        "events": r.events,
        "wall_s": r.wall_s,
        "operations_per_s": ops as f64 / r.wall_s,
        "events_per_s": r.events as f64 / r.wall_s,
        "outcome": format!("{:?}", r.outcome).to_lowercase(),
    })
}

/// The BI machine (seed 001) on the generic protocol timing engine: 8
/// sockets (coherence domains) of 4 cores with the paper's cache sizes,
/// non-coherent global memory, sockets linked all-to-all (25 ns, UPI's
/// 20.8 GB/s); every core loads and stores (30 %) uniformly over 64 MiB,
/// `requests` each, so private caches, LLCs and the global memories all work
/// (8 MiB of the footprint in each socket's memory).
pub fn protocol_bi(requests: u64) -> serde_json::Value {
    let mut cfg = bi_sockets(8, 4);
    cfg["name"] = json!("bench_bi_superdome");
    cfg["workload"] = json!({"pattern": "uniform", "read_fraction": 0.7, "footprint": "64MiB", "line": "64B",
                             "requests": requests, "warmup": 0});
    cfg["protocol"] = json!({"name": "bi", "control_bytes": "8B", "data_bytes": "72B", "issue_interval": "1ps",
                             "bi": {"domains": 8, "interleave": "8MiB"}});
    run_system(
        &cfg,
        "BI machine: 8 sockets x 4 cores (32K L1, 1M L2, 38.5M L3), non-coherent global memory, uniform over 64 MiB, 30% stores".into(),
    )
}

/// A BI machine of `sockets` sockets of `cores` cores: each core, LLC and
/// global memory on its socket's switch at no cost, the sockets linked
/// all-to-all (25 ns, UPI's 20.8 GB/s). The caller adds the rest.
fn bi_sockets(sockets: usize, cores: usize) -> serde_json::Value {
    let mut requesters = Vec::new();
    let mut links = Vec::new();
    for s in 0..sockets {
        for k in 0..cores {
            requesters.push(json!({"name": format!("c{s}.{k}")}));
            links.push(free_link(format!("c{s}.{k}"), format!("s{s}")));
        }
        links.push(free_link(format!("llc{s}"), format!("s{s}")));
        links.push(free_link(format!("mem{s}"), format!("s{s}")));
        for t in s + 1..sockets {
            links.push(json!({"a": format!("s{s}"), "b": format!("s{t}"), "latency": "25ns",
                              "bandwidth": "20.8GB/s", "port_delay": "0ns"}));
        }
    }
    let switches: Vec<_> = (0..sockets).map(|s| json!({"name": format!("s{s}"), "latency": "0ns"})).collect();
    let memories: Vec<_> = (0..sockets)
        .map(|s| json!({"name": format!("llc{s}")}))
        .chain((0..sockets).map(|s| json!({"name": format!("mem{s}")})))
        .collect();
    json!({"requester": requesters, "switch": switches, "memory": memories, "link": links})
}

/// BI Table 1's tree on the BI runtime (`agents/bi/program.rs`): 2
/// sockets × 8 cores with the paper's caches, a 64K-node tree, 10 %
/// updates delegated to core 0, every other core looking keys up through
/// the runtime (each micro-op a load, store, flush or fence of the timed
/// machine), for `us` simulated microseconds.
pub fn protocol_bi_tree(us: u64) -> serde_json::Value {
    let mut cfg = bi_sockets(2, 8);
    cfg["name"] = json!("bench_bi_tree");
    cfg["sim"] = json!({"max_time": "1s"});
    cfg["workload"] = json!({"pattern": "uniform", "footprint": "1MiB", "line": "64B", "requests": 1});
    cfg["protocol"] = json!({"name": "bi", "control_bytes": "8B", "data_bytes": "72B", "issue_interval": "1ps",
                             "bi": {"domains": 2, "tree": {"nodes": 65536, "updates": 0.1,
                                    "time": format!("{us}us"), "warmup": "0ns", "period": format!("{}us", us / 2),
                                    // as Table 1 runs it (no store buffer; the key's default is the preset's)
                                    "store_buffer": 0}}});
    let r = run_spec_of(&cfg);
    let stat = |k: &str| r.protocol_stats.iter().find(|s| s.0 == k).map_or(0.0, |s| s.1);
    let ops = stat("tree_reads") + stat("tree_writes");
    json!({
        "what": "BI tree on the BI runtime: 2 sockets x 8 cores, 64K nodes, 10% updates delegated to core 0",
        "operations": ops,
        "events": r.events,
        "wall_s": r.wall_s,
        "operations_per_s": ops / r.wall_s,
        "events_per_s": r.events as f64 / r.wall_s,
        "outcome": format!("{:?}", r.outcome).to_lowercase(),
    })
}

/// All built-in benchmarks as JSON text.
pub fn run_all(quick: bool) -> Result<String, String> {
    // The checker first: where the peak memory cannot be reset, its
    // figures are the process's peak so far.
    let checker = checker_figures(quick);
    let protocol = protocol_mesi_64(if quick { 200 } else { 2000 });
    let gcs = protocol_gcs(if quick { 1000 } else { 10_000 }, if quick { 200 } else { 2000 });
    let bi = protocol_bi(if quick { 2000 } else { 20_000 });
    let tree = protocol_bi_tree(if quick { 100 } else { 1000 });
    let (n, s) = engine_dispatch(if quick { 2_000_000 } else { 20_000_000 }, 1024);
    let m = mesh(if quick { 300 } else { 3000 });
    let v = json!({
        "fabricsim_version": crate::VERSION,
        "quick": quick,
        "engine": {
            "what": "event queue pop + schedule, 1024 pending events",
            "events": n,
            "wall_s": s,
            "events_per_s": n as f64 / s,
        },
        "fabric_mesh_8x8": {
            "what": "8x8 mesh, 64 requesters + 64 memories, uniform random 1:1 R:W, window 8; hops and events over the whole run, divided by its wall time",
            "events": m.events,
            "packet_hops": m.packet_hops,
            "requests": m.requests,
            "wall_s": m.wall_s,
            "events_per_s": m.events as f64 / m.wall_s,
            "events_per_packet_hop": m.events as f64 / m.packet_hops.max(1) as f64,
            "packet_hops_per_s": m.packet_hops as f64 / m.wall_s,
            "simulated_throughput_GBps": m.throughput_gbps,
        },
        "fabric_mesh_8x8_dor_posted_0.3": booksim_mesh(0.3, if quick { 1000 } else { 18000 }),
        "protocol_mesi_64core": protocol,
        "protocol_gcs_mind": gcs,
        "protocol_bi_superdome": bi,
        "protocol_bi_tree": tree,
        "checker": checker,
    });
    Ok(serde_json::to_string_pretty(&v).expect("json"))
}
