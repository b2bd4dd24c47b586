//! The protocol driver's cores go through the shared core front end
//! (docs/core.md): a pointer chase through the driver costs the sum of its
//! serial latencies, independent misses overlap up to the misses the core
//! may have outstanding, and computation between operations costs its
//! dispatch cycles; the workload keys that state them are checked.

use fabricsim::{config, Format, RunResult};

/// One MESI core and one home behind a switch, with a fixed 100 ns memory.
fn system(protocol: &str, workload: &str) -> String {
    format!(
        r#"
name = "driver-core"
[defaults.link]
bandwidth = "64GB/s"
latency = "2ns"
[[requester]]
name = "c0"
[[switch]]
name = "sw"
[[memory]]
name = "home"
[[link]]
a = "c0"
b = "sw"
[[link]]
a = "sw"
b = "home"
[protocol]
name = "mesi"
memory_latency = "100ns"
directory_latency = "5ns"
issue_interval = "1ns"
{protocol}
[workload]
line = "64B"
{workload}
"#
    )
}

use crate::common::run_protocol as run;

fn error(toml: &str) -> String {
    match config::resolve(toml, "<test>", Format::Toml, &[], None) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// `n` loads of distinct cold lines (each a miss to memory), `mshrs` misses
/// outstanding at most, each load depending on the previous one or not.
fn cold_loads(n: u32, mshrs: u32, dependent: f64) -> RunResult {
    cold_loads_on("rc", n, mshrs, dependent)
}

fn cold_loads_on(model: &str, n: u32, mshrs: u32, dependent: f64) -> RunResult {
    let proto = format!("model = \"{model}\"\n[protocol.cache]\nsize = \"1MiB\"\nways = 8\nmshrs = {mshrs}\n");
    let work = format!(
        "pattern = \"stream\"\nread_fraction = 1.0\nfootprint = \"1MiB\"\nrequests = {n}\ndependent = {dependent}\n"
    );
    run(&system(&proto, &work))
}

#[test]
fn a_pointer_chase_costs_the_sum_of_its_serial_latencies() {
    let chase = cold_loads(16, 16, 1.0);
    let lat = &chase.read_latency;
    assert_eq!(lat.count, 16);
    // one miss after another: the core finishes when the sum of the latencies has passed
    assert_eq!(chase.requesters[0].finished as u128, lat.sum, "min {} max {}", lat.min, lat.max);
    assert!(lat.min > 100_000, "each load misses to memory: {}", lat.min);
    // the same loads, independent, overlap (16 misses outstanding)
    let free = cold_loads(16, 16, 0.0);
    assert!(free.requesters[0].finished * 4 < chase.requesters[0].finished);
    // the same under TSO and SC (SC serialises the independent loads too)
    for model in ["tso", "sc"] {
        let r = cold_loads_on(model, 16, 16, 1.0);
        assert_eq!(r.requesters[0].finished as u128, r.read_latency.sum, "{model}");
    }
    let tso = cold_loads_on("tso", 16, 16, 0.0);
    assert!(tso.requesters[0].finished * 4 < chase.requesters[0].finished);
    let sc = cold_loads_on("sc", 16, 16, 0.0);
    assert_eq!(sc.requesters[0].finished as u128, sc.read_latency.sum, "sc: one miss at a time");
}

/// A trace's `dep` and `instructions=N` fields drive the core the same way.
#[test]
fn a_trace_states_the_dependences_and_the_computation() {
    let dir = std::env::temp_dir().join(format!("fabricsim-driver-core-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run_trace = |name: &str, fields: &str| {
        let text: String = (0..8).map(|i| format!("0 c0 R {} 64 {fields}\n", i * 64)).collect();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let work = format!("pattern = \"trace\"\ntrace = \"{}\"\nfootprint = \"1MiB\"\n", path.display());
        run(&system("model = \"rc\"\n[protocol.cache]\nsize = \"1MiB\"\nways = 8\nmshrs = 16\n", &work))
    };
    let chase = run_trace("chase.trace", "dep");
    assert_eq!(chase.requesters[0].finished as u128, chase.read_latency.sum);
    let free = run_trace("free.trace", "");
    assert!(free.requesters[0].finished * 4 < chase.requesters[0].finished);
    // 40 instructions at width 1 before each of 8 independent loads: the
    // last issues after 8 x 40 cycles of computation and 7 operations' cycles
    let slow = run_trace("compute.trace", "instructions=40");
    let (end, lat) = (slow.requesters[0].finished, &slow.read_latency);
    let last_issue = (8 * 40 + 7) * 1_000;
    assert!(last_issue + lat.min <= end && end <= last_issue + lat.max, "{end} ps");
}

#[test]
fn independent_misses_overlap_up_to_the_fill_buffers() {
    for (n, m) in [(4, 8), (8, 8), (16, 8), (16, 4), (12, 1)] {
        let r = cold_loads(n, m, 0.0);
        let lat = &r.read_latency;
        assert_eq!(lat.count, n as u64);
        // misses outstanding on average: the sum of the latencies over the run
        let overlap = lat.sum as f64 / r.requesters[0].finished as f64;
        let want = n.min(m) as f64;
        assert!((overlap - want).abs() <= 0.12 * want, "{n} loads, {m} MSHRs: {overlap:.2} outstanding, want {want}");
    }
}

/// One core's `requests` loads of one line (a miss, then hits), `k`
/// instructions before each, `w` instructions per 1 ns cycle: its end.
fn hits(requests: u32, k: u64, w: u32) -> u64 {
    let proto = format!("model = \"rc\"\nwidth = {w}\n");
    let work = format!(
        "pattern = \"uniform\"\nread_fraction = 1.0\nfootprint = \"64B\"\nrequests = {requests}\ninstructions = {k}\n"
    );
    run(&system(&proto, &work)).requesters[0].finished
}

#[test]
fn compute_between_operations_costs_its_dispatch_cycles() {
    let cycle = 1_000;
    for (k, w) in [(0, 1), (3, 1), (8, 4), (5, 4), (16, 16), (7, 2)] {
        // per operation in the steady state (all hits): the operation and
        // its k instructions dispatch at w per cycle, ceil((k + 1) / w)
        // cycles; k adds ceil(k / w) cycles when w divides k or w is 1
        let per_op = (hits(300, k, w) - hits(100, k, w)) / 200;
        assert_eq!(per_op, cycle * (k + 1).div_ceil(w as u64), "k {k}, w {w}");
    }
    let slope = |k| (hits(300, k, 4) - hits(100, k, 4)) / 200;
    assert_eq!(slope(12) - slope(0), 3 * cycle, "12 instructions at width 4: 3 cycles more per op");
}

#[test]
fn workload_compute_and_dependence_keys_are_checked() {
    let e = error(&system("", "dependent = 1.5\n"));
    assert!(e.contains("workload.dependent") && e.contains("1.5") && e.contains("fraction"), "{e}");
    let e = error(&system("", "instructions = -1\n"));
    assert!(e.contains("instructions"), "{e}");
    let e = error(&system("", "instructions = 99999999999\n"));
    assert!(e.contains("workload.instructions") && e.contains("99999999999"), "{e}");
    let e = error(&system("width = 0\n", ""));
    assert!(e.contains("protocol.width") && e.contains("expected 1 to 1024"), "{e}");
    // request/response systems have no core front end
    let plain = "[[requester]]\nname = \"r\"\n[[memory]]\nname = \"m\"\n[[link]]\na = \"r\"\nb = \"m\"\n[workload]\n";
    let e = error(&format!("{plain}instructions = 4\n"));
    assert!(e.contains("workload.instructions") && e.contains("[protocol]"), "{e}");
    let e = error(&format!("{plain}dependent = 0.5\n"));
    assert!(e.contains("workload.dependent") && e.contains("[protocol]"), "{e}");
    let e = error(&system("", "dependant = 0.5\n"));
    assert!(e.contains("dependant"), "{e}");
}

#[test]
fn traces_state_instructions_and_dependences() {
    use fabricsim::workloads::trace::parse;
    let names = vec!["c0".to_string()];
    let t =
        parse("0 c0 R 0x40 64\n0 c0 R 0x80 64 instructions=12 dep\n0 c0 W 0xc0 64 instructions=3\n", "t.trace", &names)
            .unwrap();
    assert_eq!((t[0].instructions, t[0].dep), (0, false));
    assert_eq!((t[1].instructions, t[1].dep), (12, true));
    assert_eq!((t[2].instructions, t[2].dep), (3, false));
    let e = parse("0 c0 R 0x40 64 deps\n", "t.trace", &names).unwrap_err().to_string();
    assert!(e.contains("t.trace:1") && e.contains("deps") && e.contains("instructions=N or dep"), "{e}");
    let e = parse("0 c0 W 0x40 64 dep\n", "t.trace", &names).unwrap_err().to_string();
    assert!(e.contains("only a read"), "{e}");
    let e = parse("0 c0 R 0x40 64 instructions=x\n", "t.trace", &names).unwrap_err().to_string();
    assert!(e.contains("instructions \"x\""), "{e}");
}
