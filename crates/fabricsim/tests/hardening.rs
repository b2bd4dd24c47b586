//! Issue 10: hostile input gets an error naming the file, key or line, the
//! bad value and what was expected; never a panic, an abort or a hang.

use crate::common;
use common::{completed, error, run};
use std::sync::Arc;

use fabricsim::config::litmus::run_on_protocol;
use fabricsim::programs::litmus::parse;
use fabricsim::programs::Model;

/// A litmus test with one thread of `regs` loads (one register each) over `locs` locations.
fn wide_litmus(regs: usize, locs: usize) -> String {
    let names: Vec<String> = (0..locs).map(|i| format!("x{i}")).collect();
    let init: String = names.iter().map(|n| format!("[{n}]=0; ")).collect();
    let params: Vec<String> = names.iter().map(|n| format!("atomic_int* {n}")).collect();
    let mut body = String::new();
    for r in 0..regs {
        body += &format!("  int r{r} = atomic_load_explicit({}, memory_order_relaxed);\n", names[r % locs]);
    }
    format!(
        "C WIDE\n\n{{ {init}}}\n\nP0({p}) {{\n{body}}}\n\nP1({p}) {{\n  atomic_store_explicit({n0}, 1, memory_order_relaxed);\n}}\n\nexists (0:r0=1)\n",
        p = params.join(", "),
        n0 = names[0]
    )
}

#[test]
fn litmus_limits_are_checked_before_running_on_a_protocol() {
    let prog = Arc::new(parse(&wide_litmus(5, 2), "wide.litmus").unwrap());
    let e = run_on_protocol(prog, Model::Sc, "mesi").err().expect("5 registers accepted");
    assert!(
        e.contains("WIDE") && e.contains("5 registers") && e.contains("MAX_REGS") && e.contains("at most 4"),
        "{e}"
    );

    // Locations are no longer capped at 4: the directory is sized by the program (issue 9).
    let prog = Arc::new(parse(&wide_litmus(2, 5), "wide.litmus").unwrap());
    assert!(run_on_protocol(prog, Model::Sc, "mesi").is_ok());

    let prog = Arc::new(parse(&wide_litmus(4, 2), "wide.litmus").unwrap());
    assert!(run_on_protocol(prog, Model::Sc, "mesi").is_ok());
}

#[test]
fn litmus_limits_are_checked_for_a_protocol_program_in_a_config() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wide.litmus"), wide_litmus(5, 2)).unwrap();
    let toml = r#"
[[requester]]
name = "c0"
[[requester]]
name = "c1"
[[switch]]
name = "s"
[[memory]]
name = "d"
[[link]]
a = "c0"
b = "s"
[[link]]
a = "c1"
b = "s"
[[link]]
a = "s"
b = "d"
[protocol]
name = "mesi"
program = "wide.litmus"
model = "sc"
"#;
    let path = dir.path().join("sys.toml");
    std::fs::write(&path, toml).unwrap();
    let src = path.to_str().unwrap();
    let Err(e) = fabricsim::config::resolve(toml, src, fabricsim::Format::Toml, &[], None) else { panic!("accepted") };
    let e = e.to_string();
    assert!(e.contains("protocol.program") && e.contains("wide.litmus") && e.contains("MAX_REGS"), "{e}");
    let _ = error; // keep the shared helper in scope for the tests below
}

const GENERATED: &str = r#"
[topology]
kind = "KIND"
requesters = 2
memories = 2
[workload]
requests = 10
"#;

#[test]
fn sizes_that_do_not_fit_in_memory_are_refused_by_validation() {
    // 4096 x 4096 switches: 33 M links of per-port state, about 40 GB.
    let e = error(
        &GENERATED.replace("KIND", "mesh").replace("memories = 2", "memories = 2\nrows = 4096\ncols = 4096"),
        &[],
    );
    assert!(e.starts_with("bad.toml: topology.rows:"), "{e}");
    assert!(e.contains("need about") && e.contains("GB") && e.contains("16777220 nodes"), "{e}");
    // 10 M generated requesters
    let e = error(
        &GENERATED.replace("KIND", "chain").replace("requesters = 2", "requesters = 10000000\nswitches = 2"),
        &[],
    );
    assert!(e.starts_with("bad.toml: topology.requesters:") && e.contains("10000004 nodes"), "{e}");
}

/// Issue 10's leftover: 4096 fully connected switches fit in memory but
/// their routing tables would take ~1e11 steps to build. Refused up front,
/// naming the key and the estimate, in well under a second.
#[test]
fn routing_tables_too_slow_to_build_are_refused() {
    let t = std::time::Instant::now();
    let e = error(
        &GENERATED
            .replace("KIND", "fully_connected")
            .replace("requesters = 2", "requesters = 4096\nswitches = 4096")
            .replace("memories = 2", "memories = 4096"),
        &["sim.max_time=1us"],
    );
    assert!(e.starts_with("bad.toml: topology.switches:") && e.contains("need about"), "{e}");
    // 1500 fully connected switches fit in memory; building their tables
    // would take too long.
    let e = error(
        &GENERATED
            .replace("KIND", "fully_connected")
            .replace("requesters = 2", "requesters = 1500\nswitches = 1500")
            .replace("memories = 2", "memories = 1500"),
        &[],
    );
    assert!(e.starts_with("bad.toml: topology.switches:"), "{e}");
    assert!(e.contains("steps to build the routing tables") && e.contains("limit"), "{e}");
    assert!(t.elapsed().as_secs_f64() < 5.0);
}

/// PBR scale: a spine-leaf fabric with 4096 edge ports (2048 requesters,
/// 2048 memories on 128 leaves under 32 spines) builds its tables per
/// destination group and runs.
#[test]
fn a_spine_leaf_with_4096_edge_ports_runs() {
    let cfg = r#"
[topology]
kind = "spine_leaf"
spines = 32
leaves = 128
requesters = 2048
memories = 2048
[workload]
requests = 4
window = 2
"#;
    let r = run(cfg);
    completed(&r);
    assert_eq!(r.requesters.iter().map(|q| q.completed).sum::<u64>(), 2048 * 4);
    assert!(r.cdg_acyclic && r.vc_levels == 1);
}

#[test]
fn request_counts_and_warmup_need_no_memory_per_request() {
    // 1e12 requests and a huge warm-up: the run starts at once and stops at max_time.
    let toml = r#"
[[requester]]
name = "r"
[[memory]]
name = "m"
[[link]]
a = "r"
b = "m"
[sim]
max_time = "2us"
[workload]
requests = 1000000000000
warmup = 1000000000000
"#;
    let t = std::time::Instant::now();
    let r = common::run(toml);
    assert_eq!(r.outcome, fabricsim::Outcome::TimeLimit);
    assert!(t.elapsed().as_secs() < 5);
}

/// 4 threads x 8 operations: far beyond what the oracle may explore.
fn big_litmus() -> String {
    let locs = ["x", "y", "z", "w"];
    let params: Vec<String> = locs.iter().map(|l| format!("atomic_int* {l}")).collect();
    let mut s = String::from("C BIG\n{ [x]=0; [y]=0; [z]=0; [w]=0; }\n");
    for t in 0..4 {
        let mut body = String::new();
        for i in 0..8 {
            let l = locs[(t + i) % 4];
            if i % 2 == 0 {
                body += &format!("  atomic_store_explicit({l}, {}, memory_order_relaxed);\n", t * 8 + i + 1);
            } else {
                body += &format!("  int r{} = atomic_load_explicit({l}, memory_order_relaxed);\n", i / 2);
            }
        }
        s += &format!("P{t}({}) {{\n{body}}}\n", params.join(", "));
    }
    s + "exists (0:r0=1)\n"
}

#[test]
fn the_oracle_stops_at_its_state_limit_and_when_asked() {
    use fabricsim::check::oracle::{try_allowed_outcomes, Limits};
    use fabricsim::check::Stop;
    let p = parse(&big_litmus(), "big.litmus").unwrap();
    for m in [Model::Sc, Model::Tso, Model::Rc] {
        let limits = Limits { max_states: 20_000, ..Default::default() };
        let e = try_allowed_outcomes(&p, m, &limits).expect_err("a 4x8 test fits");
        assert!(!e.interrupted && e.message.contains("too large") && e.message.contains("BIG"), "{}", e.message);
        let limits = Limits { stop: Stop::new(|| true), ..Default::default() };
        let e = try_allowed_outcomes(&p, m, &limits).expect_err("not interrupted");
        assert!(e.interrupted && e.explored > 0 && e.message.contains("incomplete"), "{}", e.message);
    }
}

#[test]
fn the_explorer_stops_when_asked_and_says_so() {
    let cfg = "[protocol]\nname = \"german\"\n[check]\ncaches = 8\nvalues = 2\n";
    let r = fabricsim::config::check_file::run_with_stop(
        cfg,
        "g.toml",
        fabricsim::Format::Toml,
        &[],
        fabricsim::check::Stop::new(|| true),
        false,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.report.interrupted && !r.report.complete && r.report.states > 0);
}

// -- part 2: nonsense accepted silently, and clearer messages ---------------------------------

const TINY: &str = r#"
[[requester]]
name = "host0"
[[memory]]
name = "mem0"
[[link]]
a = "host0"
b = "mem0"
[workload]
requests = 50
"#;

#[test]
fn two_explicit_components_with_one_name_are_an_error() {
    let e = error(&format!("{TINY}\n[[requester]]\nname = \"host0\"\n"), &[]);
    assert!(e.starts_with("bad.toml: requester[1].name: \"host0\" is already the name of requester[0]"), "{e}");
    let e = error(&format!("{TINY}\n[[memory]]\nname = \"mem0\"\n"), &[]);
    assert!(e.contains("memory[1].name") && e.contains("memory[0]"), "{e}");
    let two_switches = format!("{TINY}\n[[switch]]\nname = \"s\"\n[[switch]]\nname = \"s\"\n");
    let e = error(&two_switches, &[]);
    assert!(e.contains("switch[1].name") && e.contains("unique"), "{e}");
    // An explicit entry may still override a generated one, once.
    let generated = r#"
[topology]
kind = "chain"
switches = 2
requesters = 2
memories = 1
[[requester]]
name = "req1"
issue_latency = "5ns"
"#;
    assert!(fabricsim::config::resolve(generated, "g.toml", fabricsim::Format::Toml, &[], None).is_ok());
    let e = error(&format!("{generated}[[requester]]\nname = \"req1\"\n"), &[]);
    assert!(e.contains("requester[1].name") && e.contains("requester[0]"), "{e}");
}

#[test]
fn a_buffer_smaller_than_the_largest_packet_is_an_error() {
    for (buffer, ok) in [("0B", false), ("63B", false), ("64B", true), ("auto", true)] {
        let set = format!("fabric.buffer={buffer}");
        let r = fabricsim::config::resolve(TINY, "b.toml", fabricsim::Format::Toml, &[set], None);
        match r {
            Ok(_) => assert!(ok, "{buffer} accepted"),
            Err(e) => {
                let e = e.to_string();
                assert!(!ok, "{buffer}: {e}");
                assert!(
                    e.contains("fabric.buffer") && e.contains("largest packet (64B)") && e.contains("--set"),
                    "{e}"
                );
            }
        }
    }
}

/// A DCOH's BIRsp with InvBlk carries a line per line of its block: the
/// buffer check counts the largest such message (16 B + 4 x 64 B = 272 B),
/// not one line's message, which would let a run deadlock.
#[test]
fn a_buffer_smaller_than_the_largest_birsp_is_an_error() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/esf_dcoh.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let resolve = |set: &[&str]| {
        let o: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        fabricsim::config::resolve(&text, "esf_dcoh.toml", fabricsim::Format::Toml, &o, None)
    };
    let invblk4 = ["protocol.dcoh.invblk=4", "protocol.dcoh.snoop_filter.policy=lifo"];
    assert!(resolve(&[&invblk4[..], &["fabric.buffer=272B"]].concat()).is_ok());
    let e = resolve(&[&invblk4[..], &["fabric.buffer=256B"]].concat()).unwrap_err().to_string();
    assert!(e.contains("fabric.buffer") && e.contains("largest packet (272B)"), "{e}");
    assert!(resolve(&["fabric.buffer=256B"]).is_ok(), "without InvBlk the largest message is 80 B");
}

/// A GCS grant carries its region or page (the family says so before the
/// machine is built): 64 B of control and a 4 KiB page on gcs_mind.
#[test]
fn a_buffer_smaller_than_the_largest_gcs_grant_is_an_error() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/gcs_mind.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let resolve = |set: &str| {
        fabricsim::config::resolve(&text, "gcs_mind.toml", fabricsim::Format::Toml, &[set.to_string()], None)
    };
    assert!(resolve("fabric.buffer=4160B").is_ok());
    let e = resolve("fabric.buffer=4159B").unwrap_err().to_string();
    assert!(e.contains("fabric.buffer") && e.contains("largest packet (4160B)"), "{e}");
}

#[test]
fn keys_that_do_not_apply_to_the_kind_are_errors() {
    let topo = |kind: &str, keys: &str| {
        format!("[topology]\nkind = \"{kind}\"\n{keys}\nrequesters = 1\nmemories = 1\n[workload]\nrequests = 5\n")
    };
    let e = error(&topo("spine_leaf", "spines = 2\nleaves = 2\nrows = 2"), &[]);
    assert!(e.starts_with("bad.toml: topology.rows: does not apply to kind = \"spine_leaf\""), "{e}");
    let e = error(&topo("chain", "switches = 2\ncols = 2"), &[]);
    assert!(e.contains("topology.cols") && e.contains("takes switches"), "{e}");
    let e = error(&topo("mesh", "rows = 2\ncols = 2\nspines = 2"), &[]);
    assert!(e.contains("topology.spines") && e.contains("rows and cols"), "{e}");

    let e = error(TINY, &["link[0].turnaround=5ns"]);
    assert!(e.contains("link[0].turnaround") && e.contains("full-duplex") && e.starts_with("--set"), "{e}");
    assert!(fabricsim::config::resolve(
        TINY,
        "t.toml",
        fabricsim::Format::Toml,
        &["link[0].turnaround=5ns".into(), "link[0].duplex=half".into()],
        None
    )
    .is_ok());
    // A default applies to the half-duplex links there are, if any: switching
    // defaults.link.duplex keeps working with a default turnaround.
    assert!(fabricsim::config::resolve(
        TINY,
        "t.toml",
        fabricsim::Format::Toml,
        &["defaults.link.turnaround=5ns".into()],
        None
    )
    .is_ok());

    let check = |extra: &str| {
        let text = format!("[protocol]\nname = \"german\"\n[check]\ncaches = 2\n{extra}\n");
        fabricsim::config::check_file::run(&text, "c.toml", fabricsim::Format::Toml, &[]).err().map(|e| e.to_string())
    };
    for key in ["directories = 1", "addresses = 2"] {
        let e = check(key).unwrap_or_else(|| panic!("{key} accepted for german"));
        assert!(e.starts_with("c.toml: check.") && e.contains("does not apply to [protocol] name = \"german\""), "{e}");
    }
    // Symmetry applies to German too; threads must be a positive count.
    assert_eq!(check("symmetry = true"), None);
    for bad in ["threads = 0", "threads = -1", "threads = \"two\""] {
        let e = check(bad).unwrap_or_else(|| panic!("{bad} accepted"));
        assert!(e.contains("check.threads"), "{bad}: {e}");
    }
}

#[test]
fn simulated_time_is_never_reported_past_max_time() {
    let r = common::run_with(TINY, &["sim.max_time=100ns", "workload.requests=100000"]);
    assert_eq!(r.outcome, fabricsim::Outcome::TimeLimit);
    assert!(r.sim_time <= 100_000, "sim_time {} ps past max_time", r.sim_time);
    assert!(r.window_end <= 100_000, "window_end {} ps past max_time", r.window_end);
}

#[test]
fn an_error_caused_by_an_override_names_the_override() {
    let e = error(TINY, &["a.b="]);
    assert!(e.starts_with("--set a.b=: a: unknown key"), "{e}");
    let e = error(TINY, &["link[0].a=mem0"]);
    assert!(e.starts_with("--set link[0].a=mem0: link[0].b:"), "{e}");
    let e = error(TINY, &["switch[0].a=x"]);
    assert!(e.starts_with("--set switch[0].a=x: switch: is not a list"), "{e}");
    let e = fabricsim::config::check_file::run(
        "[protocol]\nname = \"mesi\"\n",
        "c.toml",
        fabricsim::Format::Toml,
        &["check.caches=0".into()],
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.starts_with("--set check.caches=0: check.caches: 0"), "{e}");
}

#[test]
fn a_number_too_large_for_its_unit_is_out_of_range() {
    let e = error(TINY, &["defaults.link.bandwidth=1e400GB/s"]);
    assert!(e.contains("out of range") && !e.contains("unknown unit"), "{e}");
    let e = error(TINY, &["workload.line=1e400B"]);
    assert!(e.contains("out of range"), "{e}");
}

#[test]
fn an_integer_too_large_for_its_key_is_out_of_range() {
    let e = error(TINY, &["sim.seed=18446744073709551616"]);
    assert!(
        e.starts_with("--set sim.seed=18446744073709551616: sim.seed: 18446744073709551616: out of range; expected an integer from 0 to 2^64-1"),
        "{e}"
    );
    let e = error(TINY, &["workload.requests=99999999999999999999999"]);
    assert!(e.contains("workload.requests") && e.contains("out of range"), "{e}");
}

#[test]
fn a_byte_order_mark_is_accepted_in_traces_and_litmus_files() {
    let names = vec!["host0".to_string()];
    let recs = fabricsim::workloads::trace::parse("\u{feff}0 host0 R 0x40 64\n", "t.trace", &names).unwrap();
    assert_eq!(recs.len(), 1);
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/fabricsim/litmus/MP.litmus"))
        .unwrap();
    parse(&format!("\u{feff}{text}"), "MP.litmus").unwrap();
}
