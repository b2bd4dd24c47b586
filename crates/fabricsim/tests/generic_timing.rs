//! One timing engine for every protocol: German's protocol (clients driven
//! by random requests) and MSI/MESI (cores driven by a workload) on the
//! fabric, homes with occupancy, and the same agents checked exhaustively.

use fabricsim::agents::coherence::german::German;
use fabricsim::check::{explore, Options};
use fabricsim::{config, run_spec, Format, Outcome, RunResult};

fn system(clients: usize, protocol: &str, workload: &str) -> String {
    let mut s = String::from(
        r#"
name = "generic"
[defaults.link]
bandwidth = "64GB/s"
[[switch]]
name = "sw"
[[memory]]
name = "home"
[[link]]
a = "sw"
b = "home"
"#,
    );
    for i in 0..clients {
        s += &format!("[[requester]]\nname = \"c{i}\"\n[[link]]\na = \"c{i}\"\nb = \"sw\"\n");
    }
    s + protocol + workload
}

fn run(toml: &str) -> RunResult {
    let spec = config::resolve(toml, "<test>", Format::Toml, &[], None).unwrap_or_else(|e| panic!("{e}"));
    run_spec(&spec, &mut |_| true)
}

fn error(toml: &str) -> String {
    match config::resolve(toml, "<test>", Format::Toml, &[], None) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn german_is_timed_on_the_fabric_and_checked_from_the_same_agents() {
    let toml = system(
        3,
        "[protocol]\nname = \"german\"\nassert_invariants = true\n",
        "[workload]\nrequests = 300\nwarmup = 20\n",
    );
    let r = run(&toml);
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    for c in &r.requesters {
        assert_eq!(c.issued, 320, "{}", c.name);
        assert!(c.measured > 0 && c.latency.count == c.measured);
    }
    // a request (ReqS/ReqE to the grant) crosses the fabric twice: it takes time
    assert!(r.read_latency.count > 0 && r.read_latency.min > 0, "{}", r.read_latency.min);
    // the same agents, exhaustively
    let e = explore(&German::new(3, 2), &Options::default(), &mut |_| {});
    assert!(e.complete && e.violation.is_none());
    assert!(e.states > 1000);
}

#[test]
fn home_occupancy_caps_throughput_at_one_message_per_service_time() {
    // 8 cores storing to 4 lines of one directory, so lines bounce between caches, and the
    // directory handles each message for 100 ns: it is the bottleneck.
    let proto = r#"
[protocol]
name = "msi"
directory_service = "100ns"
directory_latency = "1ns"
memory_latency = "0ns"
cache_latency = "1ns"
"#;
    let work = "[workload]\npattern = \"uniform\"\nread_fraction = 0.0\nfootprint = \"256B\"\nline = \"64B\"\nrequests = 400\nwarmup = 50\n";
    let r = run(&system(8, proto, work));
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let dir_msgs: u64 = r.class_packets.iter().map(|(_, p, _)| *p).sum::<u64>();
    // messages the directory handled: those sent to it (requests and responses to it)
    let to_home: u64 = r.links.iter().filter(|l| l.2 == "home").map(|l| l.4.packets).sum();
    assert!(to_home > 0 && dir_msgs >= to_home);
    // the link rows count the measured window
    let elapsed = (r.window_end - r.window_start) as f64;
    let rate = to_home as f64 / elapsed; // messages per ps
    let cap = 1.0 / 100_000.0;
    eprintln!("rate {rate:e} cap {cap:e} to_home {to_home} elapsed {elapsed}");
    assert!(rate <= cap * 1.001, "home handled {rate:e}/ps, above 1/service {cap:e}");
    assert!(rate >= cap * 0.98, "home handled {rate:e}/ps, well below 1/service {cap:e}: not the bottleneck?");
}

#[test]
fn msi_cores_run_a_workload_and_keep_the_invariants() {
    let proto = "[protocol]\nname = \"mesi\"\nassert_invariants = true\n";
    let work = "[workload]\npattern = \"uniform\"\nread_fraction = 0.7\nfootprint = \"256B\"\nline = \"64B\"\nrequests = 500\nwarmup = 50\n";
    let r = run(&system(4, proto, work));
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    for c in &r.requesters {
        assert_eq!((c.issued, c.completed), (550, 550), "{}", c.name);
        assert_eq!(c.measured, 500);
    }
    assert!(r.read_latency.count > 0 && r.write_latency.count > 0);
}

#[test]
fn protocol_config_errors_name_the_key() {
    let g = system(2, "[protocol]\nname = \"german\"\nprogram = \"x.litmus\"\n", "");
    assert!(error(&g).contains("protocol.program"), "{}", error(&g));
    let d = system(2, "[protocol]\nname = \"mesi\"\ndriver = \"magic\"\n", "");
    assert!(error(&d).contains("protocol.driver") && error(&d).contains("magic"));
    let q = system(2, "[protocol]\nname = \"mesi\"\ndirectory_queue = 0\n", "");
    assert!(error(&q).contains("protocol.directory_queue"), "{}", error(&q));
    let n = system(2, "[protocol]\nname = \"moesi\"\n", "");
    assert!(error(&n).contains("protocol.name"));
}

fn request_packets(r: &RunResult) -> u64 {
    r.class_packets.iter().find(|c| c.0 == "req").map(|c| c.1).expect("a request class")
}

#[test]
fn a_full_cache_evicts_and_the_directory_sees_the_write_backs() {
    // One core stores to 8 lines in turn, 4 times over; its cache holds 2 lines.
    let proto = |cache: &str| format!("[protocol]\nname = \"mesi\"\nassert_invariants = true\n{cache}");
    let work =
        "[workload]\npattern = \"stream\"\nread_fraction = 0.0\nfootprint = \"512B\"\nline = \"64B\"\nrequests = 32\n";
    let big = run(&system(1, &proto(""), work));
    let small = run(&system(1, &proto("[protocol.cache]\nsize = \"128B\"\nways = 2\nmshrs = 1\n"), work));
    for r in [&big, &small] {
        assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert_eq!(r.requesters[0].completed, 32);
    }
    // holding every line: 8 GetM, then hits; holding 2: every store misses and writes a victim back
    assert_eq!(request_packets(&big), 8);
    assert_eq!(request_packets(&small), 32 + 30, "32 GetM and a PutM for every line evicted (30)");
}

#[test]
fn mesi_on_64_cores_keeps_swmr_and_the_data_value_invariant() {
    let toml = String::from(
        r#"
name = "mesi64"
[topology]
kind = "mesh"
rows = 2
cols = 4
requesters = 64
memories = 8
[workload]
pattern = "uniform"
footprint = "8KiB"
line = "64B"
read_fraction = 0.6
requests = 60
[protocol]
name = "mesi"
model = "rc"
assert_invariants = true
directory_service = "2ns"
[protocol.cache]
size = "2KiB"
ways = 4
mshrs = 4
"#,
    );
    let r = run(&toml);
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
    assert!(r.warnings.is_empty(), "an invariant broke: {:?}", r.warnings);
    assert_eq!(r.requesters.len(), 64);
    assert!(
        r.requesters.iter().all(|c| c.completed == 60),
        "{:?}",
        r.requesters.iter().map(|c| c.completed).collect::<Vec<_>>()
    );
}

#[test]
fn the_same_directory_agents_are_checked_exhaustively() {
    use fabricsim::agents::coherence::directory::{Directory, Variant};
    let e = explore(&Directory::free(Variant::Mesi, 3, 1, 1, 2), &Options::default(), &mut |_| {});
    assert!(e.complete && e.violation.is_none());
    assert_eq!(e.states, 131_330, "the state count of MESI, 3 caches, 1 address, 2 values");
}

#[test]
fn relaxed_cores_overlap_misses_and_sc_cores_do_not() {
    // 4 cores, uniform loads and stores over 4096 lines (almost every access misses), 8 MSHRs.
    let run_model = |model: &str| {
        let proto = format!(
            "[protocol]\nname = \"mesi\"\nmodel = \"{model}\"\n[protocol.cache]\nsize = \"16KiB\"\nways = 4\nmshrs = 8\n"
        );
        let work = "[workload]\npattern = \"uniform\"\nread_fraction = 0.7\nfootprint = \"256KiB\"\nline = \"64B\"\nrequests = 400\n";
        let r = run(&system(4, &proto, work));
        assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        r.sim_time
    };
    let (sc, rc) = (run_model("sc"), run_model("rc"));
    // SC waits for each miss; RC keeps up to 8 in flight: several times faster
    assert!(sc > 3 * rc, "sc {sc} ps, rc {rc} ps");
}

/// One core loading cold lines one at a time from one MSI home, with the
/// home's memory `mem` (TOML lines for `[defaults.memory]`).
fn one_core_loads(requests: u32, memory_latency: &str, mem: &str, stride_lines: bool) -> RunResult {
    // memory_latency applies only to fixed-latency memories
    let mem_lat = if mem.contains("dram") { String::new() } else { format!("memory_latency = \"{memory_latency}\"\n") };
    let proto = format!("[protocol]\nname = \"msi\"\nmodel = \"sc\"\ndirectory_latency = \"1ns\"\n{mem_lat}");
    let pattern = if stride_lines { "stream" } else { "uniform" };
    let work = format!(
        "[workload]\npattern = \"{pattern}\"\nread_fraction = 1.0\nfootprint = \"64MiB\"\nline = \"64B\"\nrequests = {requests}\n\
         [defaults.memory]\n{mem}"
    );
    let r = run(&system(1, &proto, &work));
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    r
}

#[test]
fn a_homes_dram_read_costs_its_timings_exactly() {
    use fabricsim::agents::memory::Preset;
    let fixed = one_core_loads(1, "0ns", "model = \"fixed\"\n", false);
    let dram = one_core_loads(1, "0ns", "model = \"dram\"\ndram = \"DDR5-4800\"\nlatency = \"10ns\"\n", false);
    let p = Preset::find("DDR5-4800").expect("a preset").params();
    // The directory's 1 ns lookup overlaps the DRAM read; the sends leave after
    // ACT + CAS + burst + the controller's 10 ns.
    let extra = p.idle_read() + 10_000 - 1_000;
    assert_eq!(dram.read_latency.max, fixed.read_latency.max + extra);
    let m = &dram.memories[0];
    let d = m.dram.expect("DRAM counters");
    assert_eq!((m.served, d.accesses, d.activates), (1, 1, 1));
}

#[test]
fn a_homes_dram_serves_row_hits_faster_than_row_misses() {
    // Open page: a stream of consecutive lines hits the open row; random lines over
    // 64 MiB almost never do. Each load waits for its own read (SC, one core).
    let mem = "model = \"dram\"\ndram = \"DDR5-4800\"\npage = \"open\"\n";
    let stream = one_core_loads(200, "0ns", mem, true);
    let random = one_core_loads(200, "0ns", mem, false);
    let (s, r) = (stream.memories[0].dram.unwrap(), random.memories[0].dram.unwrap());
    assert!(s.row_hit_rate() > 0.7, "stream row hits {}", s.row_hit_rate());
    assert!(r.row_hit_rate() < 0.1, "random row hits {}", r.row_hit_rate());
    assert!(stream.read_latency.mean() < random.read_latency.mean());
    // Fixed latency: the same time whatever the address.
    let f1 = one_core_loads(50, "30ns", "model = \"fixed\"\n", true);
    let f2 = one_core_loads(50, "30ns", "model = \"fixed\"\n", false);
    assert_eq!(f1.read_latency.max, f2.read_latency.max);
}

/// A core `c0` and a memory `near` on switch `s0`, a memory `far` two
/// switches away; MSI with two homes (line l's home is home l mod 2).
fn two_homes(extra: &str, trace: &str) -> Result<RunResult, String> {
    let dir = std::env::temp_dir().join(format!("fabricsim-placement-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("t{}.trace", trace.len() + extra.len()));
    std::fs::write(&path, trace).unwrap();
    let toml = format!(
        r#"
name = "placement"
[defaults.link]
bandwidth = "64GB/s"
latency = "10ns"
[[switch]]
name = "s0"
[[switch]]
name = "s1"
[[switch]]
name = "s2"
[[requester]]
name = "c0"
[[memory]]
name = "near"
[[memory]]
name = "far"
[[link]]
a = "c0"
b = "s0"
[[link]]
a = "near"
b = "s0"
[[link]]
a = "s0"
b = "s1"
[[link]]
a = "s1"
b = "s2"
[[link]]
a = "far"
b = "s2"
[workload]
pattern = "trace"
trace = "{}"
footprint = "4KiB"
line = "64B"
[protocol]
name = "msi"
{extra}
"#,
        path.display()
    );
    let spec = config::resolve(&toml, "<test>", Format::Toml, &[], None).map_err(|e| e.to_string())?;
    Ok(run_spec(&spec, &mut |_| true))
}

#[test]
fn protocol_cores_replay_traces_at_their_times() {
    // loads of lines 0, 2, 4 (all homed at home 0), the last one not before 5 us
    let trace = "0 c0 R 0 64\n0 c0 R 128 64\n5us c0 R 256 8\n";
    let r = two_homes("", trace).unwrap();
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
    assert_eq!(r.requesters[0].completed, 3);
    assert!(r.sim_time > 5_000_000, "the third load waits for its time: {} ps", r.sim_time);
    assert_eq!(r.memories[0].served, 3, "home 0 read three lines");
    assert_eq!(r.memories[1].served, 0);
    // a record crossing a line, or beyond the footprint, is refused
    let e = two_homes("", "0 c0 R 60 8\n").err().unwrap();
    assert!(e.contains("workload.trace") && e.contains("crosses a 64 B line"), "{e}");
    let e = two_homes("", "0 c0 R 8192 8\n").err().unwrap();
    assert!(e.contains("workload.footprint") && e.contains("0x2008"), "{e}");
}

#[test]
fn placement_puts_homes_on_the_named_memories() {
    let trace = "0 c0 R 0 64\n0 c0 R 128 64\n0 c0 R 256 64\n";
    let near = two_homes("", trace).unwrap();
    let far = two_homes("homes = [\"far\", \"near\"]", trace).unwrap();
    assert_eq!(far.memories[0].name, "far");
    // each load crosses 2 more links and 2 more switches each way
    assert!(
        far.read_latency.min > near.read_latency.min + 40_000,
        "{} vs {}",
        far.read_latency.min,
        near.read_latency.min
    );
    let e = two_homes("homes = [\"far\", \"far\"]", trace).err().unwrap();
    assert!(e.contains("protocol.homes[1]") && e.contains("named twice"), "{e}");
    let e = two_homes("homes = [\"far\"]", trace).err().unwrap();
    assert!(e.contains("protocol.homes") && e.contains("1 names: expected one per memory"), "{e}");
    let e = two_homes("cores = [\"near\"]", trace).err().unwrap();
    assert!(e.contains("protocol.cores[0]") && e.contains("is not a requester"), "{e}");
    let e = two_homes("memory_latency = \"10ns\"\n[defaults.memory]\nmodel = \"dram\"\ndram = \"DDR4-3200\"", trace)
        .err()
        .unwrap();
    assert!(e.contains("protocol.memory_latency"), "{e}");
}

fn producer_consumer(release_every: &str, model: &str) -> RunResult {
    let proto = format!(
        "[protocol]\nname = \"mesi\"\nmodel = \"{model}\"\nassert_invariants = true\n[protocol.cache]\nsize = \"64KiB\"\nways = 8\nmshrs = 8\n"
    );
    let work = format!(
        "[workload]\npattern = \"producer_consumer\"\nfootprint = \"256KiB\"\nline = \"64B\"\nrequests = 600\n\
         [workload.producer_consumer]\nstore_size = \"64B\"\nrelease_every = \"{release_every}\"\nfanout = 1\n"
    );
    let r = run(&system(4, &proto, &work));
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    r
}

#[test]
fn producer_consumer_releases_wait_for_earlier_stores_and_acquires_hold_later_loads() {
    // One store per release: every release waits for the store before it, and every
    // consumer load waits for the acquire before it. 64 stores per release: misses overlap.
    let fine = producer_consumer("64B", "rc");
    let coarse = producer_consumer("4KiB", "rc");
    assert!(fine.sim_time > 2 * coarse.sim_time, "fine {} ps, coarse {} ps", fine.sim_time, coarse.sim_time);
    // SC ignores the marks but already serializes: fine and coarse take similar time
    let (sf, sc) = (producer_consumer("64B", "sc"), producer_consumer("4KiB", "sc"));
    let ratio = sf.sim_time as f64 / sc.sim_time as f64;
    assert!((0.6..1.7).contains(&ratio), "sc fine/coarse {ratio}");
    // The pattern needs a protocol, and groups that divide the cores
    let e = error(&system(2, "", "[workload]\npattern = \"producer_consumer\"\n"));
    assert!(e.contains("workload.pattern") && e.contains("[protocol]"), "{e}");
    let e = error(&system(
        4,
        "[protocol]\nname = \"mesi\"\n",
        "[workload]\npattern = \"producer_consumer\"\n[workload.producer_consumer]\nfanout = 2\n",
    ));
    assert!(e.contains("workload.producer_consumer.fanout") && e.contains("divide"), "{e}");
    let e = error(&system(
        4,
        "[protocol]\nname = \"mesi\"\n",
        "[workload]\npattern = \"uniform\"\n[workload.producer_consumer]\nfanout = 2\n",
    ));
    assert!(e.contains("workload.producer_consumer: applies to pattern = \"producer_consumer\" only"), "{e}");
    // a kernel's key where it was before kernels read their own tables names its new place
    let e =
        error(&system(4, "[protocol]\nname = \"mesi\"\n", "[workload]\npattern = \"producer_consumer\"\nfanout = 2\n"));
    assert!(
        e.contains(
            "workload.fanout: moved to [workload.producer_consumer]: give it as workload.producer_consumer.fanout"
        ),
        "{e}"
    );
    let e = error(&system(4, "[protocol]\nname = \"mesi\"\n", "[workload]\npattern = \"producer_consumr\"\n"));
    assert!(e.contains("unknown pattern \"producer_consumr\"; did you mean \"producer_consumer\"?"), "{e}");
}

#[test]
fn tso_cores_drain_their_stores_one_at_a_time_while_loads_pass() {
    // 64 stores per release: under RC the producer's misses overlap (8 MSHRs); under TSO its store
    // buffer performs one store at a time, so the producers take about a miss latency per store
    let rc = producer_consumer("4KiB", "rc");
    let tso = producer_consumer("4KiB", "tso");
    assert!(tso.sim_time > 3 * rc.sim_time, "tso {} ps, rc {} ps", tso.sim_time, rc.sim_time);
    // the consumers' loads are not held by a store buffer: they overlap as under RC
    let sc = producer_consumer("4KiB", "sc");
    assert!(tso.sim_time <= sc.sim_time, "tso {} ps, sc {} ps", tso.sim_time, sc.sim_time);
    let pc = "[workload]\npattern = \"producer_consumer\"\n";
    let e = error(&system(4, "[protocol]\nname = \"mesi\"\nmodel = \"rc\"\nstore_buffer = 8\n", pc));
    assert!(e.contains("protocol.store_buffer: 8: applies to workload-driven"), "{e}");
    let e = error(&system(4, "[protocol]\nname = \"mesi\"\nmodel = \"tso\"\nstore_buffer = 0\n", pc));
    assert!(e.contains("protocol.store_buffer: 0: expected 1 to 4096"), "{e}");
}

/// A protocol run's progress counts the cores' completed operations
/// against their total (it measured simulated time against `sim.max_time`,
/// and sat at 0 % for a whole run), never goes back, and ends at 100 %.
#[test]
fn a_protocol_runs_progress_counts_operations_and_ends_at_one() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mesi_64core.toml")).unwrap();
    let spec = fabricsim::config::resolve(
        &text,
        "mesi_64core.toml",
        fabricsim::Format::Toml,
        &["workload.requests=300".to_string()],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut seen = Vec::new();
    let r = fabricsim::run_spec(&spec, &mut |f| {
        seen.push(f);
        true
    });
    assert_eq!(r.outcome, fabricsim::Outcome::Completed);
    assert_eq!(seen.last(), Some(&1.0), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    // the run's middle reports a real share of the work, not ~0 (sim.max_time is far away)
    assert!(seen.iter().any(|&f| f > 0.2 && f < 1.0), "{seen:?}");
}
