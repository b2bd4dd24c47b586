//! CORD, SO and MP (seed 000) under the checker: the ordering invariants
//! with free cores, litmus tests with the paper's homes, and the broken
//! CORDs each caught.

use std::sync::Arc;

use fabricsim::check::litmus_run::LitmusRun;
use fabricsim::check::Report;
use fabricsim::config::litmus::{run_on_protocol, run_with};
use fabricsim::programs::Model;
use fabricsim::programs::{Op, Program};

/// A check of cord: `extra`'s sizes, mutant and symmetry go to `[check]`,
/// its other keys to `[protocol.cord]`.
fn check(extra: &str) -> Report {
    const SEARCH: [&str; 5] = ["caches", "directories", "addresses", "mutant", "symmetry"];
    let (search, own): (Vec<&str>, Vec<&str>) = extra.lines().partition(|l| SEARCH.iter().any(|k| l.starts_with(k)));
    let text =
        format!("[protocol]\nname = \"cord\"\n[protocol.cord]\n{}\n[check]\n{}\n", own.join("\n"), search.join("\n"));
    fabricsim::config::check_file::run(&text, "cord.toml", fabricsim::config::Format::Toml, &[]).unwrap().report
}

/// One core, two directories, 2-bit epochs, 1-bit counters, 2 unacked
/// epochs: small enough to explore in a second, large enough for epochs to
/// wrap, counters to split epochs and Releases to overtake.
const SMALL: &str = "caches = 1\ndirectories = 2\naddresses = 2\nepoch_bits = 2\ncounter_bits = 1\n\
                     proc_unacked = 2\nproc_counters = 1\ndir_counters = 2\ndir_notis = 2";

#[test]
fn release_and_same_address_order_hold_for_every_variant_with_wrapping_epochs_and_counters() {
    for v in ["cord", "so", "mp"] {
        let r = check(&format!("{SMALL}\nvariant = \"{v}\""));
        assert!(r.complete && r.violation.is_none(), "{v}: {}", r.trace_text());
        eprintln!("{v}: {} states, depth {}", r.states, r.depth);
    }
}

#[test]
fn one_entry_tables_and_one_bit_fields_do_not_deadlock_two_cores() {
    let r = check(
        "caches = 2\ndirectories = 2\naddresses = 2\nepoch_bits = 1\ncounter_bits = 1\nproc_unacked = 1\n\
         proc_counters = 1\ndir_counters = 1\ndir_notis = 1",
    );
    assert!(r.complete && r.violation.is_none(), "{}", r.trace_text());
    assert!(r.states > 100_000, "{} states", r.states);
}

#[test]
fn every_broken_cord_is_caught_with_a_counterexample() {
    for (m, kind) in [
        ("no-counter-check", "release order"),
        ("noti-lost", "release order"),
        // a wrapped epoch number aliases an unacked one; the first victim is two Releases to one line
        ("epoch-no-wrap", "same-address order"),
        ("no-recycle", "deadlock"),
        ("no-table-stall", "table overflow"),
    ] {
        let r = check(&format!("{SMALL}\nmutant = \"{m}\""));
        let cx = r.violation.as_ref().unwrap_or_else(|| panic!("{m} was not caught"));
        assert_eq!(cx.kind, kind, "{m}: {}", r.trace_text());
        assert!(!cx.steps.is_empty());
    }
}

fn litmus(name: &str) -> Arc<Program> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/fabricsim/litmus");
    let p = [dir.join(format!("{name}.litmus")), dir.join("extra").join(format!("{name}.litmus"))]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("no litmus test {name}"));
    Arc::new(fabricsim::programs::litmus::parse_file(&p).unwrap())
}

/// Fig 3's homes: X and Z at T2's directory, Y at T1's.
const FIG3_HOMES: [&str; 3] = ["homes.x=2", "homes.y=1", "homes.z=2"];

/// `--protocol cord --set variant=V --set homes.L=D... [--mutant M]`.
fn cord(program: Arc<Program>, model: Model, variant: &str, homes: &[&str], mutant: Option<&str>) -> LitmusRun {
    let variant = format!("variant={variant}");
    let sets: Vec<&str> = std::iter::once(variant.as_str()).chain(homes.iter().copied()).collect();
    run_with(program, model, "cord", &sets, mutant).unwrap_or_else(|e| panic!("{sets:?}: {e}"))
}

#[test]
fn isa2_with_fig3s_homes_is_forbidden_for_cord_and_so_and_observed_for_mp() {
    let isa2 = litmus("ISA2+rel+acq+acq");
    for proto in ["cord", "so"] {
        let r = cord(isa2.clone(), Model::Rc, proto, &FIG3_HOMES, None);
        assert!(r.ok(), "{proto}: {:?}\n{}", r.forbidden_observed(), r.report.trace_text());
        eprintln!("ISA2 {proto}: {} states", r.report.states);
    }
    let r = cord(isa2, Model::Rc, "mp", &FIG3_HOMES, None);
    assert!(r.report.complete && r.report.violation.is_none());
    let seen: Vec<String> = r.forbidden_observed().iter().map(|o| format!("{o:?}")).collect();
    assert!(!seen.is_empty(), "MP must show ISA2's forbidden outcome (r1=1, r2=1, r3=0)");
}

#[test]
fn message_passing_is_release_consistent_only_point_to_point() {
    let mp = litmus("MP+rel+acq");
    // data and flag at one directory: the ordered channel keeps them in order
    let same = cord(mp.clone(), Model::Rc, "mp", &["homes.x=0", "homes.y=0"], None);
    assert!(same.ok(), "{:?}", same.forbidden_observed());
    // at two directories nothing orders them, while CORD notifies
    let split = cord(mp.clone(), Model::Rc, "mp", &["homes.x=0", "homes.y=1"], None);
    assert!(!split.forbidden_observed().is_empty());
    for (proto, x) in [("cord", "homes.x=0"), ("so", "homes.x=0"), ("cord", "homes.x=1")] {
        let r = cord(mp.clone(), Model::Rc, proto, &[x, "homes.y=1"], None);
        assert!(r.ok(), "{proto} {x}: {:?}", r.forbidden_observed());
    }
}

#[test]
fn the_counter_check_is_what_orders_a_release_after_its_relaxed_store_at_one_directory() {
    let mp = litmus("MP+rel+acq");
    let r = cord(mp, Model::Rc, "cord", &["homes.x=0", "homes.y=0"], Some("no-counter-check"));
    // the ghost sees the Release commit first, before a load can observe it
    let v = r.report.violation.as_ref().expect("the Release overtook the data without being caught");
    assert_eq!(v.kind, "release order", "{}", r.report.trace_text());
    assert!(!r.ok());
}

/// Every starter and extra test without read-modify-writes, under RC and
/// TSO, on CORD and SO, with every location at one directory and spread
/// over the threads' directories.
#[test]
fn cord_and_so_pass_the_litmus_suite_under_rc_and_tso() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/fabricsim/litmus");
    let mut files: Vec<_> = [dir.clone(), dir.join("extra")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().filter_map(|e| e.ok()).map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "litmus"))
        .collect();
    files.sort();
    let mut runs = 0;
    for f in files {
        let prog = Arc::new(fabricsim::programs::litmus::parse_file(&f).unwrap());
        if prog.threads.iter().flatten().any(|op| matches!(op, Op::Rmw { .. })) {
            continue;
        }
        let one_home: Vec<String> = prog.locations.iter().map(|l| format!("homes.{l}=0")).collect();
        let one_home: Vec<&str> = one_home.iter().map(|s| s.as_str()).collect();
        for model in [Model::Rc, Model::Tso] {
            for proto in ["cord", "so"] {
                for homes in [&[][..], &one_home[..]] {
                    let name = format!("{proto} {homes:?}");
                    let r = cord(prog.clone(), model, proto, homes, None);
                    assert!(
                        r.ok(),
                        "{} on {name} under {model}: forbidden {:?}\n{}",
                        prog.name,
                        r.forbidden_observed(),
                        r.report.trace_text()
                    );
                    runs += 1;
                }
            }
        }
    }
    assert!(runs >= 60, "{runs} runs");
}

#[test]
fn bad_cord_parameters_and_homes_are_named() {
    let text = "[protocol]\nname = \"cord\"\n[protocol.cord]\nepoch_bits = 1\nproc_unacked = 2\n";
    let e = fabricsim::config::check_file::run(text, "c.toml", fabricsim::config::Format::Toml, &[]).err().unwrap();
    let msg = e.to_string();
    assert!(msg.contains("protocol.cord.proc_unacked") && msg.contains("epoch_bits = 1"), "{msg}");
    let e = run_with(litmus("MP+rel+acq"), Model::Rc, "cord", &["homes.x=5"], None).err().unwrap();
    assert!(e.contains("--set homes.x=5: protocol.cord.homes.x: 5: expected a directory 0 to 1"), "{e}");
    let e = run_with(litmus("MP+rel+acq"), Model::Rc, "cord", &["homes.z=0"], None).err().unwrap();
    assert!(e.contains("protocol.cord.homes.z: no location \"z\""), "{e}");
    let e = run_on_protocol(litmus("MP+rel+acq"), Model::Sc, "cord").err().unwrap();
    assert!(e.contains("--model: sc: cord runs under rc or tso"), "{e}");
    let e = run_with(litmus("MP+rel+acq"), Model::Rc, "cord", &["store_buffer=4"], None).err().unwrap();
    assert!(e.contains("protocol.cord.store_buffer: applies to the timed machine"), "{e}");
    let text = "[protocol]\nname = \"mesi\"\n[protocol.mesi]\nepoch_bits = 4\n";
    let e = fabricsim::config::check_file::run(text, "c.toml", fabricsim::config::Format::Toml, &[]).err().unwrap();
    assert!(e.to_string().contains("protocol.mesi.epoch_bits: unknown key"), "{e}");
    let text = "[protocol]\nname = \"cord\"\n[protocol.cord]\nvariant = \"so\"\nseq_bits = 8\n";
    let e = fabricsim::config::check_file::run(text, "c.toml", fabricsim::config::Format::Toml, &[]).err().unwrap();
    assert!(e.to_string().contains("protocol.cord.seq_bits") && e.to_string().contains("SEQ-n"), "{e}");
    // a check's homes are by address number, its model [protocol] model
    let text = "[protocol]\nname = \"cord\"\nmodel = \"sc\"\n[check]\ncaches = 1\n";
    let e = fabricsim::config::check_file::run(text, "c.toml", fabricsim::config::Format::Toml, &[]).err().unwrap();
    assert!(e.to_string().contains("c.toml: protocol.model: \"sc\": cord's cores run rc or tso"), "{e}");
    let text = "[protocol]\nname = \"cord\"\n[protocol.cord]\nhomes = { 2 = 0 }\n[check]\ncaches = 1\n";
    let e = fabricsim::config::check_file::run(text, "c.toml", fabricsim::config::Format::Toml, &[]).err().unwrap();
    assert!(e.to_string().contains("protocol.cord.homes.2: no address \"2\""), "{e}");
    let e = table1(&["protocol.cord.seq_bits=65"]).err().unwrap();
    assert!(e.contains("seq_bits") && e.contains("1 to 64"), "{e}");
}

/// Fig 5, timed: one core issues `m` Relaxed stores to `n - 1`
/// directories, then a Release to the last, on a star whose 100 ns links
/// dwarf everything else, so each message costs one crossing `T` (two
/// links). SO stalls for the acks (2 crossings) and its Release takes 2
/// more; CORD's Release commits after the notification request and the
/// notification (2 crossings) and is acked in a third; MP posts everything
/// (1 crossing). Control messages: SO m + 1 acks; CORD (n - 1) ReqNoti +
/// (n - 1) Noti + 1 RelAck.
#[test]
fn fig5_hops_and_control_messages_of_so_and_cord() {
    let (n, per_dir) = (4usize, 3usize);
    let m = per_dir * (n - 1);
    let dir = std::env::temp_dir().join(format!("fabricsim-fig5-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // location i lives at directory i mod n: the Release's is n - 1, the
    // Relaxed stores go to every other location (per_dir per directory)
    let locs: Vec<String> = (0..n * per_dir).map(|i| format!("a{i}")).collect();
    let mut prog = format!(
        "C fig5\n\n{{ {} }}\n\nP0({}) {{\n",
        locs.iter().map(|l| format!("[{l}]=0;")).collect::<Vec<_>>().join(" "),
        locs.iter().map(|l| format!("atomic_int* {l}")).collect::<Vec<_>>().join(", ")
    );
    for (i, l) in locs.iter().enumerate().filter(|(i, _)| i % n != n - 1) {
        prog += &format!("  atomic_store_explicit({l}, {i}, memory_order_relaxed);\n");
    }
    let rel = &locs[n - 1];
    prog += &format!("  atomic_store_explicit({rel}, 1, memory_order_release);\n}}\n\nexists ({rel}=1)\n");
    std::fs::write(dir.join("fig5.litmus"), prog).unwrap();
    let mut text = String::from(
        "name = \"fig5\"\n[defaults.link]\nbandwidth = \"64GB/s\"\nlatency = \"100ns\"\nport_delay = \"0ns\"\n\
         [defaults.switch]\nlatency = \"0ns\"\n[[switch]]\nname = \"sw\"\n[[requester]]\nname = \"core\"\n\
         [[link]]\na = \"core\"\nb = \"sw\"\n",
    );
    for d in 0..n {
        text += &format!("[[memory]]\nname = \"d{d}\"\n[[link]]\na = \"d{d}\"\nb = \"sw\"\n");
    }
    text += "[protocol]\nname = \"cord\"\nmodel = \"rc\"\nprogram = \"fig5.litmus\"\ndirectory_latency = \"0ns\"\n\
             cache_latency = \"0ns\"\nissue_interval = \"1ps\"\n";
    let path = dir.join("fig5.toml");
    let run = |variant: &str| {
        let t = format!("{text}[protocol.cord]\nvariant = \"{variant}\"\n");
        let r =
            fabricsim::run_text(&t, path.to_str().unwrap(), fabricsim::Format::Toml, &[], None, &mut |_| true).unwrap();
        let packets = |vc: &str| r.class_packets.iter().find(|c| c.0 == vc).map_or(0, |c| c.1);
        (r.sim_time as f64, packets("ack"), packets("noti"))
    };
    let (t_mp, mp_acks, mp_notis) = run("mp");
    let (t_so, so_acks, so_notis) = run("so");
    let (t_cord, cord_acks, cord_notis) = run("cord");
    assert_eq!((mp_acks, mp_notis), (0, 0));
    assert_eq!((so_acks, so_notis), (m as u64 + 1, 0), "SO: m + 1 control messages");
    assert_eq!((cord_acks, cord_notis), (1, 2 * (n as u64 - 1)), "CORD: 2n - 1 control messages");
    let (so, cord) = (t_so / t_mp, t_cord / t_mp);
    assert!((3.9..4.1).contains(&so), "SO took {so:.3} crossings (2 stalled for acks + 2 for the Release)");
    assert!((2.9..3.1).contains(&cord), "CORD took {cord:.3} crossings (ReqNoti, Noti, RelAck)");
    std::fs::remove_dir_all(&dir).ok();
}

/// The Table 1 example with `overrides`, one sender (Fig 8's microbenchmark).
fn table1(overrides: &[&str]) -> Result<fabricsim::sim::system::RunResult, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cord_table1.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut sets: Vec<String> = vec!["workload.remote_stores.senders=\"one\"".into()];
    sets.extend(overrides.iter().map(|s| s.to_string()));
    fabricsim::run_text(&text, path.to_str().unwrap(), fabricsim::Format::Toml, &sets, None, &mut |_| true)
        .map_err(|e| e.to_string())
}

#[test]
fn remote_stores_send_one_release_per_epoch_and_notify_only_with_fanout() {
    let stat = |r: &fabricsim::sim::system::RunResult, k: &str| {
        r.protocol_stats.iter().find(|s| s.0 == k).map(|s| s.1).unwrap_or_else(|| panic!("no {k}"))
    };
    // 10 epochs of 4 KiB in 64 B stores to host 1 (one directory): 10 Releases, no notification
    let one = table1(&["workload.requests=650"]).unwrap();
    assert_eq!(one.outcome, fabricsim::sim::system::Outcome::Completed);
    assert_eq!((stat(&one, "releases"), stat(&one, "req_notis")), (10.0, 0.0));
    // fanout 3: each Release to one host, the other two hosts notify it
    let three = table1(&["workload.requests=650", "workload.remote_stores.fanout=3"]).unwrap();
    assert_eq!((stat(&three, "releases"), stat(&three, "req_notis")), (10.0, 20.0));
    // MP sends the same stores and no ack; SO acks every one and waits a round trip per Release
    let t = |v: &str| {
        let r = table1(&["workload.requests=650", &format!("protocol.cord.variant=\"{v}\"")]).unwrap();
        let acks = r.class_packets.iter().find(|c| c.0 == "ack").map_or(0, |c| c.1);
        (r.sim_time as f64, acks)
    };
    let ((cord, cord_acks), (so, so_acks), (mp, mp_acks)) = (t("cord"), t("so"), t("mp"));
    assert_eq!((cord_acks, so_acks, mp_acks), (10, 650, 0));
    assert!(so > 2.0 * cord && cord < 1.3 * mp, "SO {so}, CORD {cord}, MP {mp} ps");
}

#[test]
fn bad_remote_stores_workloads_are_named() {
    for (set, want) in [
        ("workload.remote_stores.hosts=3", "workload.remote_stores.hosts: 3 hosts for 64 cores"),
        ("workload.remote_stores.fanout=8", "workload.remote_stores.fanout: fanout 8: expected 1 to 7"),
        (
            "workload.remote_stores.senders=\"two\"",
            "workload.remote_stores.senders: \"two\": expected \"all\" or \"one\"",
        ),
        ("workload.footprint=\"16KiB\"", "workload.footprint"),
        ("workload.remote_stores.compute=\"2s\"", "workload.remote_stores.compute"),
    ] {
        let e = table1(&[set]).err().unwrap_or_else(|| panic!("{set} accepted"));
        assert!(e.contains(want), "{set}: {e}");
    }
}

#[test]
fn seq_n_drains_when_its_numbers_run_out_and_stays_ordered_and_deadlock_free() {
    // checked: 2-bit sequence numbers run out every 4 stores; the drain must not deadlock or reorder
    let r = check(&format!("{SMALL}\nseq_bits = 2"));
    assert!(r.complete && r.violation.is_none(), "{}", r.trace_text());
    // timed: one sender, 2 MiB per Release in 64 B stores; SEQ-8 drains (a Release and its round trip)
    // every 256 stores, SEQ-40 never but carries 4 more bytes on every store
    let run = |set: &str| {
        let r = table1(&["workload.remote_stores.release_every=\"2MiB\"", "workload.requests=65538", set]).unwrap();
        let releases = r.protocol_stats.iter().find(|s| s.0 == "releases").unwrap().1;
        let bytes: u64 = r.class_packets.iter().map(|c| c.2).sum();
        (r.sim_time as f64, releases, bytes as f64)
    };
    let (cord, cord_rel, cord_bytes) = run("protocol.cord.seq_bits=0");
    let (seq8, seq8_rel, seq8_bytes) = run("protocol.cord.seq_bits=8");
    let (seq40, _, seq40_bytes) = run("protocol.cord.seq_bits=40");
    assert_eq!(cord_rel, 2.0);
    assert_eq!(seq8_rel, 2.0 + (65536.0 / 256.0_f64).floor(), "a drain per 256 numbers");
    assert!(seq8 > 1.5 * cord, "SEQ-8 {seq8} vs CORD {cord}: its drains cost a round trip each");
    assert!(seq40 < 1.1 * cord && seq40 > cord, "SEQ-40 {seq40} vs CORD {cord}");
    assert!(
        seq40_bytes > 1.04 * cord_bytes && seq8_bytes < 1.01 * cord_bytes,
        "{seq8_bytes} {cord_bytes} {seq40_bytes}"
    );
}

#[test]
fn symmetry_over_free_cores_keeps_every_verdict_and_shrinks_the_state_space() {
    // two interchangeable cores, one-entry tables and 1-bit fields
    let two = "caches = 2\ndirectories = 2\naddresses = 2\nepoch_bits = 1\ncounter_bits = 1\nproc_unacked = 1\n\
               proc_counters = 1\ndir_counters = 1\ndir_notis = 1";
    let full = check(two);
    let reduced = check(&format!("{two}\nsymmetry = true"));
    assert!(full.complete && full.violation.is_none() && reduced.complete && reduced.violation.is_none());
    // every orbit of two cores has one or two states
    assert!(
        reduced.states * 2 >= full.states && reduced.states < full.states,
        "{} orbits of {} states",
        reduced.states,
        full.states
    );
    // a broken CORD is caught as early (same depth) and the same way with symmetry as without
    for m in ["no-counter-check", "no-recycle", "no-table-stall"] {
        let a = check(&format!("{two}\nmutant = \"{m}\""));
        let b = check(&format!("{two}\nsymmetry = true\nmutant = \"{m}\""));
        let (va, vb) = (a.violation.as_ref().expect(m), b.violation.as_ref().expect(m));
        assert_eq!((&va.kind, va.steps.len()), (&vb.kind, vb.steps.len()), "{m}: {}", b.trace_text());
    }
}

/// The Table 1 example under WB (`mesi`, Table 1's L2 as each core's
/// cache), every core sending and receiving, with `overrides`.
fn table1_wb(overrides: &[&str]) -> Result<fabricsim::sim::system::RunResult, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cord_table1.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text: String = text
        .lines()
        .filter(|l| !l.starts_with("cache_latency") && !l.starts_with("variant"))
        .map(|l| match l {
            l if l.starts_with("name = \"cord\"") => "name = \"mesi\"".to_string(),
            // Table 1's L1 in front of the protocol's cache, which is its L2 (as experiments/cord/system.py)
            l if l.starts_with("preset = ") => {
                format!("{l}\n[protocol.core.l1]\nsize = \"64KiB\"\nways = 2\nlatency = \"1ns\"")
            }
            "[protocol.cord]" => {
                "[protocol.cache]\nsize = \"64KiB\"\nways = 8\nhit_latency = \"2ns\"\nmshrs = 16".into()
            }
            l => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut sets: Vec<String> =
        ["workload.footprint=\"128MiB\"", "protocol.interleave=\"2MiB\"", "workload.remote_stores.consume=true"]
            .map(String::from)
            .to_vec();
    sets.extend(overrides.iter().map(|s| s.to_string()));
    fabricsim::run_text(&text, path.to_str().unwrap(), fabricsim::Format::Toml, &sets, None, &mut |_| true)
        .map_err(|e| e.to_string())
}

#[test]
fn wb_fetches_ownership_across_hosts_and_its_receivers_take_the_lines_back() {
    // 64 cores, fanout 1: per epoch 4 line stores to the next host, a Release, then the receiver's
    // Acquire and 4 loads of what the previous host wrote to it; 3 epochs; SWMR checked at every step
    let base =
        ["workload.remote_stores.release_every=\"256B\"", "workload.requests=30", "protocol.assert_invariants=true"];
    let run = |extra: &[&str]| {
        let sets: Vec<&str> = base.iter().chain(extra).copied().collect();
        let r = table1_wb(&sets).unwrap();
        assert_eq!(r.outcome, fabricsim::sim::system::Outcome::Completed, "{extra:?}");
        r
    };
    let pk = |r: &fabricsim::sim::system::RunResult| r.class_packets.iter().map(|c| c.1).sum::<u64>();
    let wb = run(&[]);
    // without receivers a writer keeps its lines: fewer messages, less time
    let alone = run(&["workload.remote_stores.consume=false", "workload.requests=15"]);
    assert!(pk(&wb) > pk(&alone) && wb.sim_time > alone.sim_time, "{} vs {} packets", pk(&wb), pk(&alone));
    // a store miss is a round trip to the home in the next host (2 x 150 ns on CXL): WB is far slower than CORD
    let cord =
        table1(&["workload.remote_stores.senders=\"all\"", "workload.remote_stores.consume=true", base[0], base[1]])
            .unwrap();
    assert!(wb.sim_time as f64 > 2.0 * cord.sim_time as f64, "WB {} ps, CORD {} ps", wb.sim_time, cord.sim_time);
    // interleave = footprint / 64 slices homes host h's memory at its own slices: with one slice per host
    // (line interleaving) the same run sends a share of its misses to its own host instead
    let lined = run(&["protocol.interleave=\"64B\""]);
    assert_ne!(pk(&lined), pk(&wb));
    // word stores fill lines, and a store to a line whose miss is in flight joins that miss (the MSHR
    // merges it): 8 B stores cost about what the same lines' 64 B stores do, not a miss each in turn
    let alone64 = run(&["workload.remote_stores.consume=false", "workload.requests=15"]);
    let alone8 = run(&[
        "workload.remote_stores.consume=false",
        "workload.requests=99",
        "workload.remote_stores.store_size=\"8B\"",
    ]);
    assert_eq!(pk(&alone8), pk(&alone64));
    assert!((alone8.sim_time as f64) < 1.3 * alone64.sim_time as f64, "{} vs {}", alone8.sim_time, alone64.sim_time);
    let e = table1(&["workload.remote_stores.consume=true"]).err().unwrap();
    assert!(e.contains("workload.remote_stores.consume: true: receivers read what every core sends"), "{e}");
}
