//! MSI and MESI: coherence invariants, litmus tests against the memory
//! models, and the deliberately broken variants the checker must catch.

use std::sync::Arc;

use fabricsim::agents::coherence::directory::{mutant_by_name, Directory, Variant, MUTANTS};
use fabricsim::agents::protocol::Protocol;
use fabricsim::check::explorer::SymmetryMode;
use fabricsim::check::symmetry::Mode;
use fabricsim::check::{explore, Options};

fn opts() -> Options {
    Options { check_deadlock: true, ..Default::default() }
}

/// Unconstrained cores (any load, store of either value, or eviction, one
/// miss at a time per core): single writer or multiple readers, every
/// readable copy holds the last value written, no deadlock, no unexpected
/// message. Three caches on one address, and two caches on two addresses
/// homed at two directories (see the issue note on three caches and two
/// addresses together).
#[test]
fn msi_and_mesi_keep_the_invariants() {
    for v in [Variant::Msi, Variant::Mesi] {
        for (caches, dirs, locs, min_states) in [(3, 1, 1, 100_000), (2, 2, 2, 500_000)] {
            let p = Directory::free(v, caches, dirs, locs, 2);
            let r = explore(&p, &opts(), &mut |_| {});
            assert!(r.violation.is_none(), "{}", r.trace_text());
            assert!(r.complete);
            assert!(r.states > min_states, "{} states", r.states);
            eprintln!("{} {caches} caches {locs} addresses: {} states, {:.2}s", r.protocol, r.states, r.seconds);
        }
    }
}

/// Every deliberately broken variant is caught, with a counterexample, by
/// the invariant expected to catch it.
#[test]
fn the_checker_catches_every_mutant() {
    use fabricsim::config::litmus::run_with;
    use fabricsim::programs::Model;
    let caught_by = |m: &str| match m {
        "grant-before-acks" | "forget-sharer" => "single-writer-multiple-readers",
        "stale-data" | "drop-writeback" => "data-value invariant",
        "inv-without-ack" => "deadlock",
        "reorder-release" => "memory model",
        other => panic!("no expectation for mutant {other}"),
    };
    for v in [Variant::Msi, Variant::Mesi] {
        for (name, _) in MUTANTS {
            let expected = caught_by(name);
            if expected == "memory model" {
                let mp = starter().into_iter().find(|t| t.0 == "MP+rel+acq").unwrap().1;
                let proto = if v == Variant::Msi { "msi" } else { "mesi" };
                let r = run_with(Arc::new(mp), Model::Rc, proto, &[], Some(name)).unwrap();
                assert!(!r.ok() && !r.forbidden_observed().is_empty(), "{proto} passed MP+rel+acq");
                continue;
            }
            let p = Directory::free(v, 2, 1, 1, 2).with_mutant(mutant_by_name(name));
            let r = explore(&p, &opts(), &mut |_| {});
            let cx = r.violation.as_ref().unwrap_or_else(|| panic!("{} was not caught", p.name()));
            assert_eq!(cx.kind, expected, "{}: {}", p.name(), r.trace_text());
            assert!(!cx.steps.is_empty());
            assert!(fabricsim::check::chart::sequence_svg(&r).unwrap().contains("<svg"));
        }
    }
}

fn starter() -> Vec<(String, fabricsim::programs::Program)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/fabricsim/litmus");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "litmus"))
        .map(|p| {
            (p.file_stem().unwrap().to_string_lossy().to_string(), fabricsim::programs::litmus::parse_file(&p).unwrap())
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn msi_and_mesi_pass_every_starter_test_under_every_model() {
    use fabricsim::config::litmus::run_on_protocol;
    use fabricsim::programs::Model;
    for (name, prog) in starter() {
        let prog = Arc::new(prog);
        for proto in ["msi", "mesi"] {
            for model in [Model::Sc, Model::Tso, Model::Rc] {
                let r = run_on_protocol(prog.clone(), model, proto).unwrap();
                assert!(
                    r.ok(),
                    "{name} on {proto} under {model}: forbidden {:?}\n{}",
                    r.forbidden_observed(),
                    r.report.trace_text()
                );
                assert!(!r.observed.is_empty());
                eprintln!(
                    "{name:12} {proto:5} {model:4} observed {} of {} allowed, {} states",
                    r.observed.len(),
                    r.allowed.len(),
                    r.report.states
                );
            }
        }
    }
}

/// Symmetry reduction (interchangeable caches, data values, addresses) is
/// sound here: it still catches every mutant, and stores far fewer states.
#[test]
fn symmetry_reduction_keeps_verdicts_and_shrinks_the_state_space() {
    for v in [Variant::Msi, Variant::Mesi] {
        let full = explore(&Directory::free(v, 3, 1, 1, 2), &opts(), &mut |_| {});
        let sym = explore(&Directory::free(v, 3, 1, 1, 2).with_symmetry(true), &opts(), &mut |_| {});
        assert!(sym.violation.is_none() && sym.complete);
        assert!(sym.states * 8 < full.states, "{} vs {}", sym.states, full.states);
        for (name, _) in MUTANTS.iter().filter(|m| m.0 != "reorder-release") {
            let p = Directory::free(v, 2, 1, 2, 2).with_mutant(mutant_by_name(name)).with_symmetry(true);
            let r = explore(&p, &opts(), &mut |_| {});
            assert!(r.violation.is_some(), "{} not caught with symmetry", p.name());
        }
    }
}

/// Sorting caches by key (permuting only ties) finds the same orbits as
/// trying every renaming of caches, values and addresses; and the number
/// of threads changes nothing.
#[test]
fn sorted_canonical_form_equals_the_exhaustive_one() {
    for v in [Variant::Msi, Variant::Mesi] {
        for (caches, dirs, locs) in [(3, 1, 1), (2, 1, 2), (2, 2, 2)] {
            let p = Directory::free(v, caches, dirs, locs, 2).with_symmetry(true);
            let run = |mode, threads| {
                let o = Options { symmetry: SymmetryMode(mode), threads, ..opts() };
                let r = explore(&p, &o, &mut |_| {});
                assert!(r.violation.is_none() && r.complete && r.symmetry, "{}", r.trace_text());
                (r.states, r.transitions, r.depth)
            };
            let sorted = run(Mode::Sorted, 2);
            assert_eq!(sorted, run(Mode::Exhaustive, 1), "{}", p.name());
            assert_eq!(sorted, run(Mode::Sorted, 1), "{}", p.name());
        }
    }
}

/// The full configuration of the issue: 3 caches, 2 addresses, 2 values,
/// with symmetry reduction (about 13 million orbits each). With the packed
/// frontier it needs about 400 MB, and about 80 s of CPU per protocol in a
/// release build (see docs/performance.md). Where MSI/MESI's features meet
/// (docs/checker.md, "Checks where features meet"): it runs with the other
/// long checks, `cargo test --release -p fabricsim --test all -- --ignored`,
/// not in CI, whose smaller configurations above cover every transition.
#[test]
#[ignore = "a features-meet check: minutes; run with --ignored"]
fn msi_and_mesi_keep_the_invariants_with_3_caches_2_addresses_2_values() {
    for (v, states, transitions) in [(Variant::Msi, 13_014_844, 54_641_632), (Variant::Mesi, 12_739_492, 54_135_624)] {
        let p = Directory::free(v, 3, 1, 2, 2).with_symmetry(true);
        let r = explore(&p, &opts(), &mut |_| {});
        assert!(r.violation.is_none(), "{}", r.trace_text());
        assert!(r.complete);
        assert_eq!((r.states, r.transitions), (states, transitions), "{}", r.protocol);
        eprintln!("{}: {} orbits, {} transitions, {:.0} s", r.protocol, r.states, r.transitions, r.seconds);
    }
}
