//! Issue 10: hostile input gets an error naming the file, key or line, the
//! bad value and what was expected; never a panic, an abort or a hang.

mod common;
use common::error;
use std::sync::Arc;

use fabricsim::check::litmus_run::run_on_protocol;
use fabricsim::check::oracle::Model;
use fabricsim::workloads::litmus::parse;

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
    // 4096 x 4096 switches: a dense routing table of about 2 PB.
    let e = error(
        &GENERATED.replace("KIND", "mesh").replace("memories = 2", "memories = 2\nrows = 4096\ncols = 4096"),
        &[],
    );
    assert!(e.starts_with("bad.toml: topology.rows:"), "{e}");
    assert!(e.contains("need about") && e.contains("TB") && e.contains("16777220 nodes"), "{e}");
    // 10 M generated requesters
    let e = error(
        &GENERATED.replace("KIND", "chain").replace("requesters = 2", "requesters = 10000000\nswitches = 2"),
        &[],
    );
    assert!(e.starts_with("bad.toml: topology.requesters:") && e.contains("10000004 nodes"), "{e}");
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
    let cfg = "[check]\nprotocol = \"german\"\ncaches = 8\nvalues = 2\n";
    let r = fabricsim::check::config::run_with_stop(
        cfg,
        "g.toml",
        fabricsim::Format::Toml,
        &[],
        fabricsim::check::Stop::new(|| true),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.report.interrupted && !r.report.complete && r.report.states > 0);
}
