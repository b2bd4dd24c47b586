//! `fabricsim litmus --protocol NAME --set KEY=VALUE --mutant M`: a litmus
//! program reaches its protocol through the registry, with the keys of the
//! family's `[protocol.<name>]` table; a failure comes with its shortest
//! interleaving.

use std::sync::Arc;

use fabricsim::check::oracle::Limits;
use fabricsim::config::litmus::{protocol, run_on_protocol, run_with};
use fabricsim::programs::{Model, Program};
use fabricsim::registry;

fn litmus(name: &str) -> Arc<Program> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/fabricsim/litmus");
    Arc::new(fabricsim::programs::litmus::parse_file(&dir.join(format!("{name}.litmus"))).unwrap())
}

/// Each family with cores, a test its cores run and the keys they need.
const WITH_CORES: &[(&str, &str, Model, &[&str])] = &[
    ("msi", "MP+rel+acq", Model::Rc, &[]),
    ("mesi", "SB", Model::Tso, &[]),
    ("cord", "MP+rel+acq", Model::Rc, &[]),
    ("cord", "MP+rel+acq", Model::Tso, &["variant=so"]),
    // MP orders a core's stores only to one directory
    ("cord", "MP+rel+acq", Model::Rc, &["variant=mp", "homes.x=0", "homes.y=0"]),
    ("pcie", "MP+rel+acq", Model::Rc, &["variant=rc-opt", "nic=1"]),
    ("pcie", "pcie/MMIO", Model::Rc, &["mmio=rob"]),
    ("german", "MP+rel+acq", Model::Rc, &[]),
    ("dcoh", "SB", Model::Tso, &["invblk=2"]),
];

#[test]
fn every_family_with_cores_runs_a_litmus_test_within_its_allowed_outcomes() {
    for f in registry::FAMILIES.iter().filter(|f| f.litmus_refusal().is_none()) {
        assert!(WITH_CORES.iter().any(|c| c.0 == f.name()), "{} has cores but no litmus test here", f.name());
    }
    for &(name, test, model, sets) in WITH_CORES {
        let r = run_with(litmus(test), model, name, sets, None).unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"));
        assert!(r.ok() && !r.observed.is_empty(), "{name} {sets:?} on {test}: {:?}", r.forbidden_observed());
        assert!(r.witness.is_none() && r.counterexample().is_none(), "{name}: no failure, no interleaving");
    }
}

#[test]
fn the_old_spellings_are_the_new_keys() {
    for (old, name, sets, mutant) in [
        ("pcie-rc-opt+no-squash@nic=1", "pcie", &["variant=rc-opt", "nic=1"][..], Some("no-squash")),
        ("mp@x=0,y=1", "cord", &["variant=mp", "homes.x=0", "homes.y=1"][..], None),
        ("msi+reorder-release", "msi", &[][..], Some("reorder-release")),
    ] {
        let a = run_on_protocol(litmus("MP+rel+acq"), Model::Rc, old).unwrap();
        let b = run_with(litmus("MP+rel+acq"), Model::Rc, name, sets, mutant).unwrap();
        assert_eq!((a.observed, a.report.states), (b.observed, b.report.states), "{old}");
    }
}

#[test]
fn a_mutant_s_forbidden_outcome_comes_with_its_shortest_interleaving() {
    let prog = litmus("MP+rel+acq");
    let r = run_with(prog.clone(), Model::Rc, "msi", &[], Some("reorder-release")).unwrap();
    assert!(!r.ok() && !r.forbidden_observed().is_empty());
    let cx = r.counterexample().expect("an interleaving");
    let v = cx.violation.as_ref().unwrap();
    assert_eq!(v.kind, "forbidden outcome");
    let forbidden = r.forbidden_observed()[0].display(&prog).to_string();
    let forbidden = forbidden.trim_end_matches([';', ' ']);
    assert_eq!(v.detail, format!("{forbidden} (rc does not allow it)"));
    // breadth first: no final state with a forbidden outcome is nearer the start
    assert!(!v.steps.is_empty() && v.steps.len() as u32 <= cx.depth + 1, "{} steps", v.steps.len());
    let j = fabricsim::check::litmus_run::run_json(&prog, Model::Rc, "msi", &r);
    let text = j["trace_text"].as_str().unwrap();
    assert!(text.starts_with("forbidden outcome: ") && text.contains("before:"), "{text}");
    assert!(j["chart"].as_str().is_some_and(|s| s.starts_with("<svg")), "a sequence chart");
    // the first search is the one reported: its states do not change
    let old = run_on_protocol(prog, Model::Rc, "msi+reorder-release").unwrap();
    assert_eq!(old.report.states, r.report.states);
}

#[test]
fn an_unknown_key_is_named_with_the_family_s_keys() {
    let e = run_with(litmus("MP+rel+acq"), Model::Rc, "cord", &["epoch_bit=3"], None).err().unwrap();
    assert!(e.contains("--set epoch_bit=3: protocol.cord.epoch_bit: unknown key; did you mean `epoch_bits`?"), "{e}");
    let e = run_with(litmus("SB"), Model::Sc, "msi", &["caches=2"], None).err().unwrap();
    assert!(e.contains("--set caches=2: protocol.msi.caches: unknown key"), "{e}");
    let e = run_with(litmus("SB"), Model::Rc, "cord", &["variant=xx"], None).err().unwrap();
    assert!(e.contains("--set variant=xx: protocol.cord.variant: \"xx\": expected \"cord\", \"so\" or \"mp\""), "{e}");
    let e = run_with(litmus("SB"), Model::Sc, "mesi", &["protocol.cord.variant=so"], None).err().unwrap();
    assert!(e.contains("protocol.cord: applies to protocol \"cord\" only"), "{e}");
}

#[test]
fn a_family_without_cores_says_why() {
    let without: Vec<_> = registry::FAMILIES.iter().filter(|f| f.litmus_refusal().is_some()).collect();
    assert!(without.iter().any(|f| f.name() == "gcs"));
    for f in without {
        let e = run_on_protocol(litmus("SB"), Model::Sc, f.name()).err().unwrap();
        let why = f.litmus_refusal().unwrap();
        assert!(e.contains(&format!("\"{}\" has no cores for litmus programs: {why}", f.name())), "{e}");
    }
}

#[test]
fn a_configuration_s_protocol_table_is_the_one_litmus_reads() {
    let text = "name = \"r\"\n[protocol]\nname = \"pcie\"\n[protocol.pcie]\nvariant = \"unordered\"\nnic = [1]\n";
    let p = protocol(None, Some((text, "r.toml", fabricsim::Format::Toml)), &[], None).unwrap();
    let unordered = p.run(litmus("MP+rel+acq"), Model::Rc, &Limits::default()).unwrap();
    assert!(!unordered.ok(), "unordered DMA reads break MP");
    // --set applies on top of the file's table
    let p = protocol(None, Some((text, "r.toml", fabricsim::Format::Toml)), &["variant=rc".into()], None).unwrap();
    assert!(p.run(litmus("MP+rel+acq"), Model::Rc, &Limits::default()).unwrap().ok());
    let bad = "[protocol]\nname = \"pcie\"\n[protocol.pcie]\nnic = \"one\"\n";
    let e = protocol(None, Some((bad, "b.toml", fabricsim::Format::Toml)), &[], None).err().unwrap().to_string();
    assert!(e.contains("b.toml: protocol.pcie.nic") && e.contains("a thread number or a list of them"), "{e}");
}

/// Under SC, SB and MP give every outcome SC allows and no other.
fn exactly_sc_s_outcomes(name: &str) {
    for test in ["SB", "MP"] {
        let r = run_with(litmus(test), Model::Sc, name, &[], None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(r.ok(), "{name} on {test}: {:?} {:?}", r.forbidden_observed(), r.report.violation);
        assert_eq!(r.observed, r.allowed, "{name} on {test}");
    }
}

/// German's program cores: a german.m line and home per location.
#[test]
fn german_cores_give_exactly_sc_s_outcomes() {
    exactly_sc_s_outcomes("german");
}

/// DCOH's host requesters, each with a core.
#[test]
fn dcoh_cores_give_exactly_sc_s_outcomes() {
    exactly_sc_s_outcomes("dcoh");
}

/// A mutant of German's rules breaks a program on its cores, and the
/// failure comes with its shortest interleaving.
#[test]
fn a_german_mutant_fails_a_litmus_test_with_its_interleaving() {
    let prog = litmus("MP");
    for mutant in ["ack-keeps-copy", "no-exclusive-flag", "forget-sharer"] {
        let r = run_with(prog.clone(), Model::Sc, "german", &[], Some(mutant)).unwrap();
        assert!(!r.ok(), "{mutant}");
        let cx = r.counterexample().unwrap_or_else(|| panic!("{mutant}: an interleaving"));
        let j = fabricsim::check::litmus_run::run_json(&prog, Model::Sc, "german", &r);
        let text = j["trace_text"].as_str().unwrap();
        assert!(!cx.violation.as_ref().unwrap().steps.is_empty() && text.contains("before:"), "{mutant}: {text}");
    }
}

/// A DCOH mutant breaks a program on its requesters, with the interleaving
/// (MP's requesters never write back nor share a line that is being
/// back-invalidated, so only the dirty BIRsp's mutant shows on it).
#[test]
fn a_dcoh_mutant_fails_a_litmus_test_with_its_interleaving() {
    let prog = litmus("MP");
    let mutant = "drop-dirty-birsp";
    let r = run_with(prog.clone(), Model::Sc, "dcoh", &[], Some(mutant)).unwrap();
    assert!(!r.ok(), "{mutant}");
    let cx = r.counterexample().unwrap_or_else(|| panic!("{mutant}: an interleaving"));
    let j = fabricsim::check::litmus_run::run_json(&prog, Model::Sc, "dcoh", &r);
    let text = j["trace_text"].as_str().unwrap();
    assert!(!cx.violation.as_ref().unwrap().steps.is_empty() && text.contains("before:"), "{mutant}: {text}");
}
