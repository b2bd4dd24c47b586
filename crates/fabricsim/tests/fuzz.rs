//! Issue 10: the input surface fuzzed with proptest. Every parser takes
//! arbitrary and mutated input without a panic, and every error names where
//! it is (file, key or line).
//!
//! The normal suite runs a short pass (`PROPTEST_CASES`, default 64 cases
//! per property); a long run on demand:
//!
//! ```sh
//! PROPTEST_CASES=100000 cargo test -p fabricsim --release --test all fuzz::
//! ```

use fabricsim::config::units::{Bandwidth, Duration, Size};
use fabricsim::config::{resolve, ConfigError};
use fabricsim::programs::litmus;
use fabricsim::workloads::trace;
use fabricsim::Format;
use proptest::prelude::*;

const BASE: &str = r#"name = "fuzz"
[sim]
seed = 1
max_time = "1ms"
[fabric]
buffer = "auto"
[defaults.link]
bandwidth = "64GB/s"
latency = "1ns"
[[requester]]
name = "host0"
[[switch]]
name = "sw0"
[[memory]]
name = "mem0"
[[link]]
a = "host0"
b = "sw0"
[[link]]
a = "sw0"
b = "mem0"
[workload]
pattern = "uniform"
requests = 10
"#;

const TOPOLOGY: &str = r#"[topology]
kind = "mesh"
rows = 2
cols = 2
requesters = 2
memories = 1
[workload]
requests = 10
"#;

/// Keys a mutation may set (some valid, some not, some of the wrong kind).
const KEYS: &[&str] = &[
    "name",
    "sim.seed",
    "sim.max_time",
    "fabric.buffer",
    "fabric.routing",
    "fabric.deadlock_avoidance",
    "fabric.spread",
    "fabric.switch_queueing",
    "defaults.link.bandwidth",
    "defaults.link.latency",
    "defaults.link.duplex",
    "defaults.link.turnaround",
    "defaults.memory.queue",
    "defaults.memory.bandwidth",
    "requester[0].name",
    "requester[0].workload.window",
    "memory[0].name",
    "memory[0].queue",
    "memory[0].model",
    "memory[0].dram",
    "memory[0].channels",
    "memory[0].banks",
    "memory[0].page",
    "memory[0].channel_queue",
    "memory[0].trefi",
    "defaults.memory.model",
    "defaults.memory.dram",
    "defaults.memory.row_size",
    "defaults.memory.mapping",
    "switch[0].name",
    "link[0].a",
    "link[1].b",
    "link[0].bandwidth",
    "link[0].duplex",
    "link[2].a",
    "workload.pattern",
    "workload.requests",
    "workload.warmup",
    "workload.line",
    "workload.footprint",
    "workload.interleave",
    "workload.header_overhead",
    "workload.data_header",
    "workload.injection",
    "workload.interval",
    "workload.rate",
    "workload.read_fraction",
    "workload.hot_fraction",
    "workload.targets",
    "workload.trace",
    "topology.kind",
    "topology.rows",
    "topology.cols",
    "topology.switches",
    "topology.spines",
    "topology.leaves",
    "topology.arity",
    "topology.depth",
    "topology.requesters",
    "topology.memories",
    "topology.attach",
    "protocol.name",
    "protocol.model",
    "protocol.driver",
    "protocol.values",
    "protocol.directory_queue",
    "protocol.data_bytes",
    "bogus",
    "a.b.c",
    "link",
    "workload",
];

/// Values a mutation may write: the shapes users type, and nonsense.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        (0u64..5000).prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| format!("{v:?}")),
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("-inf".to_string()),
        Just("true".to_string()),
        Just("\"\"".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("[\"mem0\", \"x\"]".to_string()),
        (0u64..100000, prop::sample::select(&["", "B", "KiB", "GB", "ns", "ps", "us", "s", "GB/s", "Gb/s", "x"][..]))
            .prop_map(|(n, u)| format!("{n}{u}")),
        "[0-9]{0,3}(\\.[0-9]{0,3})?([eE][+-]?[0-9]{0,4})?(B|KiB|ns|GB/s|PCIe5x16)?",
        prop::sample::select(
            &[
                "uniform",
                "stream",
                "hotspot",
                "trace",
                "open",
                "closed",
                "half",
                "full",
                "mesh",
                "torus",
                "spine_leaf",
                "chain",
                "tree",
                "ring",
                "fully_connected",
                "msi",
                "mesi",
                "german",
                "sc",
                "tso",
                "auto",
                "adaptive",
                "updown",
                "host0",
                "mem0",
                "sw0",
                "PCIe7x3",
                "dram",
                "fixed",
                "DDR4-3200",
                "DDR5-4800",
                "open",
                "closed",
            ][..]
        )
        .prop_map(String::from),
        "\\PC{0,12}",
    ]
}

/// The error names where it is: a file (with a key or line when it has
/// one) or the `--set` override that caused it.
fn names_a_place(e: &ConfigError, file: &str) {
    assert!(e.source.starts_with(file) || e.source.starts_with("--set "), "error names no file or override: {e}");
    assert!(!e.message.trim().is_empty(), "empty message: {e:?}");
}

proptest! {
    #[test]
    fn config_loader_takes_arbitrary_text(text in "\\PC{0,300}") {
        if let Err(e) = resolve(&text, "f.toml", Format::Toml, &[], None) {
            names_a_place(&e, "f.toml");
        }
    }

    #[test]
    fn config_loader_takes_arbitrary_json(text in "\\PC{0,200}") {
        if let Err(e) = resolve(&text, "f.json", Format::Json, &[], None) {
            names_a_place(&e, "f.json");
        }
    }

    #[test]
    fn config_loader_takes_mutated_configs(
        topology in any::<bool>(),
        sets in prop::collection::vec((prop::sample::select(KEYS), value()), 1..4),
    ) {
        let base = if topology { TOPOLOGY } else { BASE };
        let sets: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
        // Through overrides...
        if let Err(e) = resolve(base, "m.toml", Format::Toml, &sets, None) {
            names_a_place(&e, "m.toml");
            prop_assert!(!e.key.is_empty() || e.source.contains(':'), "no key or line: {}", e);
        }
        // What validates also runs, briefly (this fuzzes the input, not the simulator's speed).
        let mut short = sets.clone();
        short.extend(["sim.max_time=2us", "workload.requests=20", "workload.warmup=0"].map(String::from));
        if let Ok(spec) = resolve(base, "m.toml", Format::Toml, &short, None) {
            if spec.topology.nodes.len() <= 64 {
                let r = fabricsim::run_spec(&spec, &mut |_| true);
                prop_assert!(r.sim_time <= spec.max_time, "sim_time {} past max_time {}", r.sim_time, spec.max_time);
            }
        }
        // ...and written into the file text itself.
        let mut text = base.to_string();
        for s in &sets {
            let (k, v) = s.split_once('=').unwrap();
            text = format!("{k} = {v}\n{text}");
        }
        if let Err(e) = resolve(&text, "m.toml", Format::Toml, &[], None) {
            names_a_place(&e, "m.toml");
        }
    }

    #[test]
    fn config_loader_takes_damaged_text(cut in 0usize..600, junk in "\\PC{0,8}") {
        // Delete or insert a few characters at a random place of a valid config.
        for base in [BASE, TOPOLOGY] {
            let at = (0..=cut.min(base.len())).rev().find(|&i| base.is_char_boundary(i)).unwrap();
            let text = format!("{}{junk}{}", &base[..at], &base[at..]);
            if let Err(e) = resolve(&text, "d.toml", Format::Toml, &[], None) {
                names_a_place(&e, "d.toml");
            }
            let end = (at + junk.len()).min(base.len());
            let end = (end..=base.len()).find(|&i| base.is_char_boundary(i)).unwrap();
            let text = format!("{}{}", &base[..at], &base[end..]);
            if let Err(e) = resolve(&text, "d.toml", Format::Toml, &[], None) {
                names_a_place(&e, "d.toml");
            }
        }
    }

    #[test]
    fn overrides_take_arbitrary_text(set in "\\PC{0,40}") {
        if let Err(e) = resolve(BASE, "o.toml", Format::Toml, &[set], None) {
            names_a_place(&e, "o.toml");
        }
    }

    #[test]
    fn unit_parser_takes_arbitrary_text(s in "\\PC{0,30}", n in "[0-9.eE+-]{0,40}", u in "[a-zA-Z/µ]{0,5}") {
        for text in [s.clone(), format!("{n}{u}"), format!("{n} {u}")] {
            for r in [
                Duration::parse(&text).map(|_| ()),
                Size::parse(&text).map(|_| ()),
                Bandwidth::parse(&text).map(|b| { b.serialize(u32::MAX as u64); }),
            ] {
                if let Err(e) = r {
                    prop_assert!(e.starts_with("invalid "), "{}", e);
                    prop_assert!(e.contains(&format!("{text:?}")), "the value is not named: {}", e);
                }
            }
        }
    }

    #[test]
    fn litmus_parser_takes_arbitrary_and_damaged_text(
        text in "\\PC{0,200}",
        which in 0usize..6,
        cut in 0usize..400,
        junk in "\\PC{0,6}",
    ) {
        let check = |t: &str| {
            if let Err(e) = litmus::parse(t, "l.litmus") {
                assert_eq!(e.file, "l.litmus");
                assert!(e.line >= 1, "no line: {e}");
                assert!(!e.message.is_empty());
            }
        };
        check(&text);
        let base = LITMUS[which];
        let at = (0..=cut.min(base.len())).rev().find(|&i| base.is_char_boundary(i)).unwrap();
        check(&format!("{}{junk}{}", &base[..at], &base[at..]));
        let end = ((at + junk.len()).min(base.len())..=base.len()).find(|&i| base.is_char_boundary(i)).unwrap();
        check(&format!("{}{}", &base[..at], &base[end..]));
    }

    #[test]
    fn trace_reader_takes_arbitrary_lines(
        lines in prop::collection::vec(
            prop_oneof![
                "\\PC{0,30}",
                ("[0-9.]{0,8}(ns|ps|us|x)?", "(host0|host1|[0-9]{1,3}|x)", "(R|W|r|w|X)", "(0x)?[0-9a-fA-F]{0,20}", "-?[0-9]{0,12}")
                    .prop_map(|(t, r, o, a, b)| format!("{t} {r} {o} {a} {b}")),
            ],
            0..6,
        ),
    ) {
        let names = vec!["host0".to_string(), "host1".to_string()];
        let text = lines.join("\n");
        if let Err(e) = trace::parse(&text, "t.trace", &names) {
            prop_assert!(e.source.starts_with("t.trace"), "{}", e);
        }
    }

    #[test]
    fn check_config_loader_takes_mutated_configs(
        protocol in prop::sample::select(&["msi", "mesi", "german", "moesi", ""][..]),
        sets in prop::collection::vec(
            (
                prop::sample::select(&[
                    "caches", "directories", "addresses", "values", "mutant", "max_states", "max_depth", "deadlock",
                    "symmetry", "bogus",
                ][..]),
                prop_oneof![
                    (0i64..12).prop_map(|v| v.to_string()),
                    any::<i64>().prop_map(|v| v.to_string()),
                    Just("true".to_string()),
                    Just("\"forget-sharer\"".to_string()),
                    "\\PC{0,6}",
                ],
            ),
            0..4,
        ),
    ) {
        let mut text = format!("[protocol]\nname = \"{protocol}\"\n[check]\n");
        let mut seen = std::collections::HashSet::new();
        for (k, v) in &sets {
            if seen.insert(*k) {
                text += &format!("{k} = {v}\n");
            }
        }
        // Bound the exploration of whatever is valid: this fuzzes the loader, not the checker.
        let bound = vec!["check.max_states=200".to_string(), "check.max_depth=20".to_string()];
        if let Err(e) = fabricsim::config::check_file::run(&text, "c.toml", Format::Toml, &bound) {
            names_a_place(&e, "c.toml");
        }
    }
}

const LITMUS: [&str; 6] = [
    include_str!("../../../python/fabricsim/litmus/MP.litmus"),
    include_str!("../../../python/fabricsim/litmus/SB.litmus"),
    include_str!("../../../python/fabricsim/litmus/CoRR.litmus"),
    include_str!("../../../python/fabricsim/litmus/SB+fences.litmus"),
    include_str!("../../../python/fabricsim/litmus/MP+rel+acq.litmus"),
    include_str!("../../../python/fabricsim/litmus/LB+acq+rel.litmus"),
];
