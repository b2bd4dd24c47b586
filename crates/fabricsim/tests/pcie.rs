//! PCIe read ordering (seed 003): the RLSQ variants checked small from
//! the same agents the figures time.

use std::sync::Arc;

use fabricsim::check::litmus_run::LitmusRun;
use fabricsim::config::litmus::run_with;
use fabricsim::programs::Model;
use fabricsim::programs::Program;

/// `--protocol pcie --set variant=V --set nic=T [--mutant M]`, for `V[+M]`.
fn pcie(program: Arc<Program>, model: Model, v: &str, nic: u32) -> LitmusRun {
    let (variant, mutant) = v.split_once('+').map_or((v, None), |(a, m)| (a, Some(m)));
    let (variant, nic) = (format!("variant={variant}"), format!("nic={nic}"));
    run_with(program, model, "pcie", &[&variant, &nic], mutant).unwrap_or_else(|e| panic!("{v}: {e}"))
}

/// `--protocol pcie --set mmio=MODE [--mutant M]`, for `MODE[+M]`.
fn pcie_mmio(program: Arc<Program>, model: Model, v: &str) -> LitmusRun {
    let (mode, mutant) = v.split_once('+').map_or((v, None), |(a, m)| (a, Some(m)));
    run_with(program, model, "pcie", &[&format!("mmio={mode}")], mutant).unwrap_or_else(|e| panic!("{v}: {e}"))
}

fn litmus(name: &str) -> Arc<Program> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/fabricsim/litmus");
    Arc::new(fabricsim::programs::litmus::parse_file(&dir.join(format!("{name}.litmus"))).unwrap())
}

/// MP over DMA: the host writes data then (release) the flag; the NIC reads the flag with acquire,
/// then the data. Forbidden: the new flag with the old data.
#[test]
fn mp_over_dma_is_ordered_by_the_nic_the_rlsq_and_its_speculation_and_broken_unordered() {
    let mp = litmus("MP+rel+acq");
    let run = |v: &str| pcie(mp.clone(), Model::Rc, v, 1);
    for v in ["nic", "rc", "thread", "rc-opt"] {
        let r = run(v);
        assert!(r.ok(), "{v}: {:?}\n{}", r.forbidden_observed(), r.report.trace_text());
    }
    // today's PCIe: the host serves the data read before the flag read
    // (a hit overtaking a miss); and each broken root complex is caught
    for v in ["unordered", "rc+acquire-no-block", "rc-opt+no-squash"] {
        let r = run(v);
        assert!(r.report.complete && r.report.violation.is_none(), "{v}");
        assert_eq!(r.forbidden_observed().len(), 1, "{v} must show the stale data under the new flag");
    }
}

#[test]
fn bad_pcie_litmus_names_and_programs_are_named() {
    let mp = litmus("MP+rel+acq");
    let none: &[&str] = &[];
    for (sets, mutant, want) in [
        (none, None, "protocol.pcie.nic: missing: name the threads that are NIC queue pairs"),
        (&["nic=5"], None, "--set nic=5: protocol.pcie.nic: thread 5: expected a thread 0 to 1"),
        (&["variant=fast", "nic=1"], None, "--set variant=fast: protocol.pcie.variant: \"fast\": expected"),
        (&["nic=1"], Some("nope"), "--mutant nope: \"nope\": expected one of acquire-no-block"),
        (&["window=4", "nic=1"], None, "protocol.pcie.window: applies to the timed machine"),
        (&["nic=[1]", "bogus=1"], None, "--set bogus=1: protocol.pcie.bogus: unknown key"),
    ] {
        let e =
            run_with(mp.clone(), Model::Rc, "pcie", sets, mutant).err().unwrap_or_else(|| panic!("{sets:?} accepted"));
        assert!(e.contains(want), "{sets:?}: {e}");
    }
    // a NIC thread loads and stores (DMA reads and writes) but has no fence: P0 of SB+fences fences
    let e = run_with(litmus("SB+fences"), Model::Rc, "pcie", &["variant=rc", "nic=0"], None).err().unwrap();
    assert!(e.contains("a NIC thread only loads and stores"), "{e}");
}

/// The Table 2 example with `overrides`.
fn table2(overrides: &[&str]) -> Result<fabricsim::sim::system::RunResult, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rlsq_table2.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let sets: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    fabricsim::run_text(&text, path.to_str().unwrap(), fabricsim::Format::Toml, &sets, None, &mut |_| true)
        .map_err(|e| e.to_string())
}

#[test]
fn ordered_dma_reads_cost_a_round_trip_at_the_nic_a_memory_access_at_the_rc_and_nothing_speculated() {
    let ns_per_read = |v: &str| {
        let r = table2(&[&format!("protocol.pcie.variant=\"{v}\"")]).unwrap();
        assert_eq!(r.outcome, fabricsim::sim::system::Outcome::Completed, "{v}");
        r.sim_time as f64 / 1000.0 / 2000.0
    };
    let (un, nic, rc, opt) = (ns_per_read("unordered"), ns_per_read("nic"), ns_per_read("rc"), ns_per_read("rc-opt"));
    // NIC: each read waits for the last one's completion: 2 x 200 ns of I/O bus, the root complex
    // (17 ns), an L2 miss (7 + 75 ns), 3 ns of issue, 5 ns of serialization and the hub's links
    assert!((500.0..540.0).contains(&nic), "nic {nic} ns per read");
    // RC: the NIC pipelines, the RLSQ reads memory one at a time: an L2 miss and the links between
    assert!((85.0..100.0).contains(&rc), "rc {rc} ns per read");
    // unordered: the I/O bus's bandwidth (an 80 B completion per 64 B line at 16 GB/s = 5 ns)
    assert!((5.0..5.5).contains(&un), "unordered {un} ns per read");
    // RC-opt: ordered at no cost
    assert!((opt / un - 1.0).abs() < 0.02, "rc-opt {opt}, unordered {un} ns per read");
}

#[test]
fn bad_pcie_configurations_are_named() {
    for (set, want) in [
        ("protocol.pcie.variant=\"fast\"", "protocol.pcie.variant: \"fast\": expected \"unordered\""),
        ("protocol.pcie.rlsq_entries=0", "protocol.pcie.rlsq_entries: 0: expected 1 to 65536"),
        (
            "workload.dma_reads.dma_size=\"100B\"",
            "workload.dma_reads.dma_size: 100 B: expected a positive multiple of the 64 B line",
        ),
        ("workload.pattern=\"uniform\"", "workload.dma_reads: applies to pattern = \"dma_reads\" only"),
        ("protocol.name=\"mesi\"", "protocol.pcie: applies to name = \"pcie\" only"),
        (
            "protocol.pcie.host_cores=64",
            "protocol.pcie.host_cores: 64: the host directory's sharer set holds 63 host cores and the root complex",
        ),
        ("protocol.pcie.host_l2=\"100B\"", "protocol.pcie.host_l2: 100B: expected a positive multiple of the line"),
        ("protocol.pcie.host_l2=\"64B\"", "protocol.pcie.host_l2: 8: expected at most the number of lines (1)"),
    ] {
        let e = table2(&[set]).err().unwrap_or_else(|| panic!("{set} accepted"));
        assert!(e.contains(want), "{set}: {e}");
    }
}

#[test]
fn thread_specific_ordering_lets_two_queue_pairs_proceed_apart() {
    // two QPs reading ordered lines: the global RLSQ serializes both behind each other's acquires,
    // the thread-specific one only each QP's own
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rlsq_table2.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "[[requester]]\nname = \"qp0\"",
        "[[requester]]\nname = \"qp1\"\n\n[[link]]\na = \"qp1\"\nb = \"nic\"\nlatency = \"0ns\"\n\n[[requester]]\nname = \"qp0\"",
    );
    let time = |v: &str| {
        let sets = vec![format!("protocol.pcie.variant=\"{v}\"")];
        let r =
            fabricsim::run_text(&text, "two_qps.toml", fabricsim::Format::Toml, &sets, None, &mut |_| true).unwrap();
        assert_eq!(r.requesters.len(), 2);
        r.sim_time as f64
    };
    let (rc, thread) = (time("rc"), time("thread"));
    assert!(rc > 1.8 * thread, "rc {rc} ps, thread {thread} ps");
}

#[test]
fn a_host_writer_squashes_only_rc_opts_speculative_reads() {
    // the Table 2 system with a host core storing to a hot 5 % of the lines (the first 51 of the 512
    // the QP reads in DMAs of 4 lines at random places)
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rlsq_table2.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "[[requester]]\nname = \"qp0\"",
        "[[requester]]\nname = \"qp0\"\nworkload = { pattern = \"dma_reads\", dma_reads = { dma_size = \"256B\", dma_start = \"random\" } }\n\n\
         [[requester]]\nname = \"cpu\"\nworkload = { pattern = \"hotspot\", hot_fraction = 0.05, hot_probability = 1.0, read_fraction = 0.0 }\n\n\
         [[link]]\na = \"cpu\"\nb = \"io\"\nlatency = \"1ns\"\nbandwidth = \"64GB/s\"\nport_delay = \"0ns\"\n",
    );
    // the lines the host wrote hit in its cache: their reads overtake earlier misses (L98)
    let text =
        without_dma_reads(&text, "pattern = \"stream\"").replace("footprint = \"64MiB\"", "footprint = \"64KiB\"");
    let run = |v: &str| {
        // the coherence invariants (single writer over the host cache and the root complex, data value)
        // checked after every event of the timed run
        let sets = vec![
            format!("protocol.pcie.variant=\"{v}\""),
            "protocol.pcie.host_cores=1".to_string(),
            "protocol.assert_invariants=true".to_string(),
        ];
        let r = fabricsim::run_text(&text, "writer.toml", fabricsim::Format::Toml, &sets, None, &mut |_| true)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.outcome, fabricsim::sim::system::Outcome::Completed, "{v}");
        r.protocol_stats.iter().find(|s| s.0 == "squashes").map(|s| s.1).unwrap()
    };
    // RC-opt reads ahead of the acquires before it; a store to such a line re-reads it
    let squashes = run("rc-opt");
    eprintln!("rc-opt: {squashes} squashes");
    assert!(squashes > 10.0, "rc-opt: {squashes} squashes");
    // the others hold no read data across a store: nothing to squash
    for v in ["rc", "nic", "unordered"] {
        assert_eq!(run(v), 0.0, "{v}");
    }
    // the host core's store reaches the directory, which invalidates the root complex's copy
    let sets = vec!["protocol.pcie.host_cores=1".to_string()];
    let r = fabricsim::run_text(&text, "writer.toml", fabricsim::Format::Toml, &sets, None, &mut |_| true).unwrap();
    let invs = r.protocol_stats.iter().find(|s| s.0 == "rc_invs").map(|s| s.1).unwrap();
    assert!(invs > 50.0, "{invs} invalidations reached the root complex");
}

fn pcie_litmus(name: &str) -> Arc<Program> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/fabricsim/litmus/pcie");
    Arc::new(fabricsim::programs::litmus::parse_file(&dir.join(format!("{name}.litmus"))).unwrap())
}

/// Single Read (§6.4): the host writes footer, data, header; the NIC reads header, data, footer.
#[test]
fn single_read_and_validation_are_never_torn_when_every_line_is_ordered_and_are_torn_otherwise() {
    let torn = |r: &LitmusRun| r.observed.iter().any(|o| o.regs[1] == [0, 1, 0]);
    let sr = pcie_litmus("SingleRead");
    for v in ["nic", "rc", "thread", "rc-opt"] {
        let r = pcie(sr.clone(), Model::Rc, v, 1);
        assert!(r.ok() && !torn(&r), "{v}: {:?}", r.forbidden_observed());
    }
    for v in ["unordered", "rc-opt+no-squash"] {
        let r = pcie(sr.clone(), Model::Rc, v, 1);
        assert!(torn(&r), "{v} must return a torn object");
    }
    // Validation (header, data, header): the same verdicts
    let val = pcie_litmus("Validation");
    for (v, ok) in [("rc", true), ("rc-opt", true), ("unordered", false), ("rc-opt+no-squash", false)] {
        let r = pcie(val.clone(), Model::Rc, v, 1);
        assert_eq!(!torn(&r), ok, "{v}: Validation");
    }
    // acquire on the header only: RC lets the data and footer reads pass each other, and even the
    // speculative RLSQ returns the torn object
    let hdr = pcie_litmus("SingleRead+hdr");
    let r = pcie(hdr, Model::Rc, "rc-opt", 1);
    assert!(r.ok() && torn(&r));
}

/// The Table 2 example running key-value GETs from a table in the host's L2, with `overrides`.
fn kvs(overrides: &[&str]) -> Result<fabricsim::sim::system::RunResult, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rlsq_table2.toml");
    let text = without_dma_reads(&std::fs::read_to_string(&path).unwrap(), "pattern = \"kvs_gets\"")
        .replace("footprint = \"64MiB\"", "footprint = \"256KiB\"");
    let mut sets: Vec<String> = vec!["protocol.pcie.host_cached=\"256KiB\"".into()];
    sets.extend(overrides.iter().map(|s| s.to_string()));
    fabricsim::run_text(&text, "kvs.toml", fabricsim::Format::Toml, &sets, None, &mut |_| true)
        .map_err(|e| e.to_string())
}

#[test]
fn kvs_get_batches_wait_for_their_gets_and_the_gap() {
    // 1000 Validation GETs of 64 B (3 line reads each), batches of 100: nine gaps between ten batches
    let time = |v: &str, gap: &str| {
        let r = kvs(&[
            &format!("protocol.pcie.variant=\"{v}\""),
            &format!("workload.kvs_gets.batch_gap=\"{gap}\""),
            "workload.requests=3000",
        ])
        .unwrap();
        assert_eq!(r.outcome, fabricsim::sim::system::Outcome::Completed, "{v}");
        r.sim_time as f64 / 1000.0
    };
    let (with, without) = (time("unordered", "1us"), time("unordered", "0ns"));
    assert!((with - without - 9000.0).abs() < 1.0, "{with} ns with gaps, {without} ns without");
    // the NIC waits for every line: three round trips of the I/O bus per GET, the L2 hit on each
    let nic = time("nic", "1us");
    let per_line = (nic - 9000.0) / 3000.0;
    assert!((425.0..450.0).contains(&per_line), "nic: {per_line} ns per line");
    // the RLSQ serializes only its L2 hits; speculation leaves the NIC's issue rate as the limit
    let (rc, opt) = (time("rc", "1us"), time("rc-opt", "1us"));
    assert!(nic / rc > 15.0 && nic / opt > 40.0 && rc > 1.5 * opt, "nic {nic}, rc {rc}, rc-opt {opt} ns");
}

#[test]
fn bad_kvs_gets_keys_are_named() {
    for (set, want) in [
        (
            "workload.kvs_gets.get=\"cell\"",
            "workload.kvs_gets.get: \"cell\": expected \"validation\", \"single_read\", \"farm\", \"pessimistic\"",
        ),
        ("workload.kvs_gets.copy_rate=\"10GB/s\"", "applies to get = \"farm\" with serial_reads = true"),
        ("workload.kvs_gets.batch=0", "workload.kvs_gets.batch: 0: expected at least one GET per batch"),
        ("workload.kvs_gets.object_size=\"1MiB\"", "expected the footprint (262144 B) to hold one"),
        ("workload.dma_reads.dma_size=\"64B\"", "workload.dma_reads: applies to pattern = \"dma_reads\" only"),
        ("protocol.pcie.host_cached=\"1MiB\"", "protocol.pcie.host_cached: 1048576 B: expected a multiple of the line"),
        (
            "protocol.pcie.host_l2=\"128KiB\"",
            "protocol.pcie.host_cached: 262144 B: expected at most the host's L2 (protocol.pcie.host_l2, 131072 B)",
        ),
    ] {
        let e = kvs(&[set]).err().unwrap_or_else(|| panic!("{set} accepted"));
        assert!(e.contains(want), "{set}: {e}");
    }
    let e = table2(&["workload.kvs_gets.batch=4"]).err().unwrap();
    assert!(e.contains("workload.kvs_gets: applies to pattern = \"kvs_gets\" only"), "{e}");
}

/// MMIO (§5.2): two messages' write-combining lines leave the core in any order.
#[test]
fn mmio_messages_arrive_in_order_with_fences_and_with_the_rob_and_the_rob_needs_credits() {
    let mmio = pcie_litmus("MMIO");
    let run = |p: &str| pcie_mmio(mmio.clone(), Model::Rc, p);
    for p in ["fence", "rob"] {
        let r = run(p);
        assert!(r.ok() && r.report.complete, "{p}: {:?}", r.forbidden_observed());
    }
    for p in ["unordered", "rob+rob-on-arrival"] {
        assert!(!run(p).forbidden_observed().is_empty(), "{p} must reorder the messages");
    }
    let r = run("rob-nic");
    assert!(r.ok() && r.report.complete, "rob-nic: {:?}", r.forbidden_observed());
    assert!(!run("rob-nic+rob-on-arrival").forbidden_observed().is_empty(), "the NIC's ROB applying on arrival");
    for p in ["rob+rob-no-credit", "rob-nic+rob-no-credit"] {
        let r = run(p);
        assert_eq!(r.report.violation.as_ref().map(|v| v.kind.as_str()), Some("deadlock"), "{p}: a full ROB");
    }
    for (mode, mutant, want) in [
        ("mmio=slow", None, "protocol.pcie.mmio: \"slow\": expected \"fence\""),
        ("mmio=rob", Some("no-squash"), "--mutant no-squash: \"no-squash\": expected one of rob-no-credit"),
    ] {
        let e = run_with(mmio.clone(), Model::Rc, "pcie", &[mode], mutant).err().unwrap();
        assert!(e.contains(want), "{mode}: {e}");
    }
    let e = run_with(litmus("MP+rel+acq"), Model::Rc, "pcie", &["mmio=rob"], None).err().unwrap();
    assert!(e.contains("an MMIO thread only stores"), "{e}");
}

/// The Table 3 example with `overrides`.
fn table3(overrides: &[&str]) -> Result<fabricsim::sim::system::RunResult, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rlsq_mmio.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let sets: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    fabricsim::run_text(&text, path.to_str().unwrap(), fabricsim::Format::Toml, &sets, None, &mut |_| true)
        .map_err(|e| e.to_string())
}

#[test]
fn a_fence_per_mmio_message_waits_for_the_root_complex_and_the_rob_does_not() {
    // 2000 messages of one 64 B line, each followed by a fence
    let ns_per_message = |mode: &str| {
        let r = table3(&[&format!("protocol.pcie.mmio=\"{mode}\"")]).unwrap();
        assert_eq!(r.outcome, fabricsim::sim::system::Outcome::Completed, "{mode}");
        r.sim_time as f64 / 1000.0 / 2000.0
    };
    let (fence, rob, un) = (ns_per_message("fence"), ns_per_message("rob"), ns_per_message("unordered"));
    // the sfence: 2 ns to the root complex, its 60 ns, 2 ns back, the store and the fence issued (1 ns each)
    assert!((64.0..75.0).contains(&fence), "fence: {fence} ns per message");
    // no stall: the I/O bus's 80 B per line at 16 GB/s; 16 credits cover the 64 ns round trip
    assert!((5.0..5.3).contains(&rob) && (rob / un - 1.0).abs() < 0.01, "rob {rob}, unordered {un} ns");
    // too few credits: 4 writes per 64 ns round trip
    let r = table3(&["protocol.pcie.rob_entries=4"]).unwrap();
    let small = r.sim_time as f64 / 1000.0 / 2000.0;
    assert!((15.0..18.0).contains(&small), "rob of 4: {small} ns per message");
    // the ROB at the NIC: its credits cross the 200 ns bus twice, 16 writes per ≈ 480 ns
    let r = table3(&["protocol.pcie.mmio=\"rob-nic\""]).unwrap();
    let nic = r.sim_time as f64 / 1000.0 / 2000.0;
    assert!((28.0..33.0).contains(&nic), "rob at the NIC: {nic} ns per message");
}

#[test]
fn bad_mmio_configurations_are_named() {
    for (set, want) in [
        (
            "protocol.pcie.mmio=\"slow\"",
            "protocol.pcie.mmio: \"slow\": expected \"fence\", \"rob\", \"rob-nic\", \"unordered\"",
        ),
        ("protocol.pcie.rob_entries=0", "protocol.pcie.rob_entries: 0: expected 1 to 4096"),
        ("protocol.pcie.host_cores=1", "with mmio every requester is a host core"),
        (
            "workload.mmio_writes.message_size=\"100B\"",
            "workload.mmio_writes.message_size: 100 B: expected a positive multiple of the 64 B line",
        ),
    ] {
        let e = table3(&[set]).err().unwrap_or_else(|| panic!("{set} accepted"));
        assert!(e.contains(want), "{set}: {e}");
    }
    let e = table2(&["protocol.pcie.rob_entries=4"]).err().unwrap();
    assert!(e.contains("protocol.pcie.rob_entries: applies with protocol.pcie.mmio only"), "{e}");
    let e = table2(&["protocol.pcie.mmio=\"rob\""]).err().unwrap();
    assert!(e.contains("2 memories: pcie's homes with mmio are the root complex, the host memory, then the NIC's device; expected 3"), "{e}");
    let e = table2(&["workload.mmio_writes.message_size=\"64B\""]).err().unwrap();
    assert!(e.contains("applies to pattern = \"mmio_writes\" only"), "{e}");
}

/// Table 2 with P2P: queue pair 0 reads the host, queue pair 1 a slow device through the same switch.
fn p2p(queues: &str, overrides: &[&str]) -> Result<fabricsim::sim::system::RunResult, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rlsq_table2.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "[[requester]]\nname = \"qp0\"",
        "[[memory]]\nname = \"switch\"\n\n[[memory]]\nname = \"p2p\"\n\n\
         [[link]]\na = \"switch\"\nb = \"io\"\nlatency = \"0ns\"\n\n[[link]]\na = \"p2p\"\nb = \"io\"\nlatency = \"1ns\"\n\n\
         [[requester]]\nname = \"qp1\"\n\n[[link]]\na = \"qp1\"\nb = \"nic\"\nlatency = \"0ns\"\n\n\
         [[requester]]\nname = \"qp0\"",
    );
    let mut sets = vec![format!("protocol.pcie.p2p=\"{queues}\"")];
    sets.extend(overrides.iter().map(|s| s.to_string()));
    fabricsim::run_text(&text, "p2p.toml", fabricsim::Format::Toml, &sets, None, &mut |_| true)
        .map_err(|e| e.to_string())
}

#[test]
fn a_shared_switch_queue_throttles_the_host_reads_to_the_p2p_device_and_voqs_do_not() {
    // the requesters in file order: qp1 (the P2P thread, listed first) is not the last queue pair, so
    // reverse the roles: the last requester, qp0, reads the device and qp1 the host
    let host_ns_per_line = |queues: &str| {
        let r = p2p(queues, &["workload.requests=20000", "requester[0].workload.requests=2000"]).unwrap();
        assert_eq!(r.outcome, fabricsim::sim::system::Outcome::Completed, "{queues}");
        let stats: std::collections::HashMap<_, _> = r.protocol_stats.iter().cloned().collect();
        (r.requesters[0].finished as f64 / 1000.0 / 2000.0, stats["switch_nacks"])
    };
    let (voq, voq_nacks) = host_ns_per_line("voq");
    let (shared, shared_nacks) = host_ns_per_line("shared");
    // VOQ: the host reads stream (ordered reads at RC-opt: about the I/O bus's 5 ns a line)
    assert!(voq < 8.0, "voq: {voq} ns per host line");
    // shared: behind the device's reads, about one host line per device read (100 ns) or two
    assert!((90.0..250.0).contains(&shared), "shared: {shared} ns per host line");
    assert!(voq_nacks > 0.0 && shared_nacks > 0.0, "the device's queue fills in both");
}

#[test]
fn bad_p2p_configurations_are_named() {
    for (set, want) in [
        ("protocol.pcie.p2p=\"fast\"", "protocol.pcie.p2p: \"fast\": expected \"shared\" or \"voq\""),
        ("protocol.pcie.switch_entries=0", "protocol.pcie.switch_entries: 0: expected 1 to 4096"),
        (
            "protocol.pcie.p2p_qps=2",
            "protocol.pcie.p2p_qps: 2: the last queue pairs read the P2P device; expected 1 to 1",
        ),
        ("protocol.pcie.mmio=\"rob\"", "expected one of p2p and mmio"),
    ] {
        let e = p2p("voq", &[set]).err().unwrap_or_else(|| panic!("{set} accepted"));
        assert!(e.contains(want), "{set}: {e}");
    }
    let e = table2(&["protocol.pcie.p2p_latency=\"50ns\""]).err().unwrap();
    assert!(e.contains("protocol.pcie.p2p_latency: applies with protocol.pcie.p2p only"), "{e}");
    let e = table2(&["protocol.pcie.p2p=\"voq\""]).err().unwrap();
    assert!(e.contains("expected 4"), "{e}");
}

/// DMA writes (§4.1, Table 1): W→W and W→R kept; the release bit orders relaxed writes under the RLSQ.
#[test]
fn dma_writes_keep_w_to_w_with_release_and_w_to_r_and_the_mutants_break_them() {
    let run = |test: &str, p: &str| pcie(pcie_litmus(test), Model::Rc, p, 0);
    for v in ["unordered", "nic", "rc", "thread", "rc-opt"] {
        for test in ["MP+dmawr", "WR"] {
            let r = run(test, v);
            assert!(r.ok() && r.report.complete, "{test} under {v}: {:?}", r.forbidden_observed());
        }
    }
    assert!(!run("MP+dmawr", "rc+release-no-wait").forbidden_observed().is_empty(), "a release that does not wait");
    // W→R across lines (a store buffering shape with a host core: the NIC writes x then reads y, the
    // host writes y then reads x; both reading 0 needs a read performed before the write before it).
    // On one line the host directory keeps W→R anyway: the root complex has one request per line out.
    let sb = |p: &str| pcie(pcie_litmus("WR+host"), Model::Sc, p, 0);
    for v in ["unordered", "nic", "rc", "thread", "rc-opt"] {
        let r = sb(v);
        assert!(r.ok() && r.report.complete, "WR+host under {v}: {:?}", r.forbidden_observed());
    }
    assert!(!sb("rc+read-passes-write").forbidden_observed().is_empty(), "a read passing the write");
    assert!(run("WR", "rc+read-passes-write").ok(), "one line: the directory orders the read after the write");
    let e =
        run_with(pcie_litmus("WR"), Model::Rc, "pcie", &["variant=rc", "nic=0"], Some("rob-no-credit")).err().unwrap();
    assert!(e.contains("--mutant rob-no-credit: \"rob-no-credit\": expected one of"), "{e}");
}

#[test]
fn timed_dma_writes_stream_at_the_io_bus_rate_under_every_variant() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rlsq_table2.toml");
    let text = without_dma_reads(&std::fs::read_to_string(&path).unwrap(), "pattern = \"stream\"\nread_fraction = 0.0");
    for v in ["unordered", "nic", "rc", "thread", "rc-opt"] {
        let sets = vec![format!("protocol.pcie.variant=\"{v}\"")];
        let r = fabricsim::run_text(&text, "writes.toml", fabricsim::Format::Toml, &sets, None, &mut |_| true).unwrap();
        assert_eq!(r.outcome, fabricsim::sim::system::Outcome::Completed, "{v}");
        // posted: an 80 B write every 5 ns on the 16 GB/s bus, nothing waits for the host
        let ns = r.sim_time as f64 / 1000.0 / 2000.0;
        assert!((5.0..5.5).contains(&ns), "{v}: {ns} ns per write");
    }
}

/// The host behind the root complex is a MESI domain: a host core's write reaches the directory,
/// which invalidates the root complex's copy (the RLSQ is a sharer), and RC-opt squashes only the
/// entry of that line. Driven by hand, message by message, from the protocol's own handlers.
#[test]
fn a_host_write_invalidates_the_root_complex_through_the_directory_and_squashes_only_that_entry() {
    use fabricsim::agents::coherence::directory::{Action as CohAction, Msg as Coh};
    use fabricsim::agents::pcie::{Action, Msg, Node, Pcie, St, Variant};
    use fabricsim::agents::protocol::{AgentId, Ctx, Protocol, Step};

    // P0 a host core (store x, store y release), P1 the NIC (load y acquire, load x, load z)
    let prog = pcie_litmus("MP+squash");
    let p = Pcie::running(Variant::RcOpt, prog, &[1]);
    let (host, nic, rc, home) = (0 as AgentId, 1 as AgentId, 2 as AgentId, 3 as AgentId);
    let (x, y, z) = (0u32, 1u32, 2u32);
    let (mut agents, mut ghost) = p.initial().remove(0);
    let mut mail: Vec<(AgentId, AgentId, Msg)> = Vec::new();
    let act = |agents: &mut Vec<Node>, ghost: &mut _, mail: &mut Vec<_>, a: AgentId, action: Action| {
        let mut sends = Vec::new();
        let mut ctx = Ctx::new(a, ghost, &mut sends);
        p.act(&mut agents[a as usize], &mut ctx, action).unwrap();
        mail.extend(sends.into_iter().map(|s| (a, s.to, s.msg)));
    };
    // deliver the first message in flight that `pick` accepts
    let deliver = |agents: &mut Vec<Node>,
                   ghost: &mut _,
                   mail: &mut Vec<(AgentId, AgentId, Msg)>,
                   pick: &dyn Fn(AgentId, &Msg) -> bool| {
        let i =
            mail.iter().position(|(_, to, m)| pick(*to, m)).unwrap_or_else(|| panic!("no such message in {mail:?}"));
        let (from, to, msg) = mail.remove(i);
        let mut sends = Vec::new();
        let mut ctx = Ctx::new(to, ghost, &mut sends);
        assert_eq!(p.on_message(&mut agents[to as usize], &mut ctx, from, msg).unwrap(), Step::Done, "{msg:?}");
        mail.extend(sends.into_iter().map(|s| (to, s.to, s.msg)));
    };
    let rlsq = |agents: &Vec<Node>| match &agents[rc as usize] {
        Node::Rc(r) => r.rlsq.iter().map(|e| (e.loc, e.st)).collect::<Vec<_>>(),
        _ => unreachable!(),
    };
    // the NIC's three reads reach the root complex; RC-opt sends all three GetS at once
    for _ in 0..3 {
        act(&mut agents, &mut ghost, &mut mail, nic, Action::Step);
    }
    for _ in 0..3 {
        deliver(&mut agents, &mut ghost, &mut mail, &|to, m| to == rc && matches!(m, Msg::MemRd { .. }));
    }
    assert_eq!(rlsq(&agents), vec![(y, St::Reading), (x, St::Reading), (z, St::Reading)]);
    // the directory answers x and z (the root complex never gets Exclusive); y is still out
    for l in [x, z] {
        deliver(&mut agents, &mut ghost, &mut mail, &|to, m| to == home && *m == Msg::Coh(Coh::GetS { loc: l }));
        deliver(&mut agents, &mut ghost, &mut mail, &|to, m| {
            to == rc && *m == Msg::Coh(Coh::Data { loc: l, data: 0, acks: 0, excl: false })
        });
        deliver(&mut agents, &mut ghost, &mut mail, &|to, m| to == home && *m == Msg::Coh(Coh::Unblock { loc: l }));
    }
    // x and z hold data but wait behind y's acquire
    assert_eq!(rlsq(&agents), vec![(y, St::Reading), (x, St::Data(0)), (z, St::Data(0))]);
    assert!(!mail.iter().any(|(_, to, _)| *to == nic), "nothing completes before the acquire");
    // the host core stores x: its GetM reaches the directory, which invalidates the sharers: the root complex
    act(&mut agents, &mut ghost, &mut mail, host, Action::Host(CohAction::Step));
    deliver(&mut agents, &mut ghost, &mut mail, &|to, m| to == home && *m == Msg::Coh(Coh::GetM { loc: x }));
    assert!(mail.contains(&(home, host, Msg::Coh(Coh::Data { loc: x, data: 0, acks: 1, excl: false }))));
    deliver(&mut agents, &mut ghost, &mut mail, &|to, m| to == rc && *m == Msg::Coh(Coh::Inv { loc: x, req: host }));
    // only x's entry is squashed (and reads again at once); z keeps its data; the host gets the ack
    assert_eq!(rlsq(&agents), vec![(y, St::Reading), (x, St::Reading), (z, St::Data(0))]);
    assert!(mail.contains(&(rc, host, Msg::Coh(Coh::InvAck { loc: x }))));
    assert!(mail.contains(&(rc, home, Msg::Coh(Coh::GetS { loc: x }))));
    // the host's store completes (M) before the directory serves the re-read: it returns the new value
    deliver(&mut agents, &mut ghost, &mut mail, &|to, m| to == host && matches!(m, Msg::Coh(Coh::Data { .. })));
    deliver(&mut agents, &mut ghost, &mut mail, &|to, m| to == host && matches!(m, Msg::Coh(Coh::InvAck { .. })));
    deliver(&mut agents, &mut ghost, &mut mail, &|to, m| to == home && *m == Msg::Coh(Coh::Unblock { loc: x }));
    deliver(&mut agents, &mut ghost, &mut mail, &|to, m| to == home && *m == Msg::Coh(Coh::GetS { loc: x }));
    deliver(&mut agents, &mut ghost, &mut mail, &|to, m| {
        to == host && *m == Msg::Coh(Coh::FwdGetS { loc: x, req: rc })
    });
    deliver(&mut agents, &mut ghost, &mut mail, &|to, m| to == rc && matches!(m, Msg::Coh(Coh::Data { .. })));
    assert_eq!(rlsq(&agents), vec![(y, St::Reading), (x, St::Data(1)), (z, St::Data(0))]);
    assert!(p.invariant(&agents, &ghost).is_ok());

    // exhaustively: MP with a third read is never broken under RC-opt, and is without the squash
    let r = pcie(pcie_litmus("MP+squash"), Model::Rc, "rc-opt", 1);
    assert!(r.ok() && r.report.complete, "{:?}", r.forbidden_observed());
    let r = pcie(pcie_litmus("MP+squash"), Model::Rc, "rc-opt+no-squash", 1);
    assert!(!r.forbidden_observed().is_empty(), "without the squash the stale x completes");
}

/// Single writer, multiple readers over the host caches and the root complex's copies (a read entry
/// holding data, a write entry owning its line), and every host copy holding the last value: checked
/// in every reachable state of two host cores and a NIC reading and DMA-writing the same lines.
#[test]
fn host_caches_and_the_root_complex_keep_a_single_writer_and_a_directory_that_forgets_the_rc_is_caught() {
    let swmr = pcie_litmus("SWMR");
    for v in ["unordered", "nic", "rc", "thread", "rc-opt"] {
        let r = pcie(swmr.clone(), Model::Rc, v, 2);
        assert!(r.report.complete && r.report.violation.is_none(), "{v}: {:?}", r.report.violation);
        eprintln!("SWMR {v}: {} states", r.report.states);
    }
    // a directory that never records the root complex as a sharer: a host core takes M while the
    // RLSQ holds the old value of the line (RC-opt's speculative read): the checker names it
    let r = pcie(litmus("MP+rel+acq"), Model::Rc, "rc-opt+forget-rc", 1);
    let v = r.report.violation.as_ref().expect("the forgotten sharer is caught");
    assert_eq!(v.kind, "single-writer-multiple-readers", "{v:?}");
    let trace = r.report.trace_text();
    assert!(trace.contains("GetS") && trace.contains("GetM"), "a counterexample: {trace}");
    // and the GETs, whose reads RC-opt holds behind the header's acquire
    for test in ["SingleRead", "Validation"] {
        let r = pcie(pcie_litmus(test), Model::Rc, "rc-opt+forget-rc", 1);
        let kind = r.report.violation.as_ref().map(|v| v.kind.as_str());
        assert_eq!(kind, Some("single-writer-multiple-readers"), "{test}: forget-rc not caught");
    }
    // where the RLSQ holds no data across a host write (RC completes each read as its data
    // arrives) the forgotten sharer changes nothing
    let r = pcie(litmus("MP+rel+acq"), Model::Rc, "rc+forget-rc", 1);
    assert!(r.ok() && r.report.violation.is_none());
}

/// The Table 2 example's text with another `[workload]` pattern in place of
/// its DMA reads (`pattern`: its lines) and without their
/// `[workload.dma_reads]` table.
fn without_dma_reads(text: &str, pattern: &str) -> String {
    let start = text.find("[workload.dma_reads]").expect("the example's DMA table");
    let end = text[start..].find("\n\n").map_or(text.len(), |i| start + i + 2);
    format!("{}{}", &text[..start], &text[end..]).replace("\npattern = \"dma_reads\"\n", &format!("\n{pattern}\n"))
}
