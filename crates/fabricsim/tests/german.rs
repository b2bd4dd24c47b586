//! German's protocol: the port reaches exactly the states a Murphi checker
//! reaches, passes its invariants, and every mutant is caught.

use fabricsim::agents::coherence::german::{self, German, MUTANTS};
use fabricsim::check::{explore, Options, Report};

fn check(g: &German) -> Report {
    explore(g, &Options { check_deadlock: true, ..Options::default() }, &mut |_| {})
}

fn passes(clients: usize, data: usize) -> Report {
    let r = check(&German::new(clients, data));
    assert!(r.violation.is_none(), "{}", r.trace_text());
    assert!(r.complete);
    r
}

// Reachable states and rules fired as rumur 2022.08.20 counts them with
// symmetry reduction off, for german.m with NODE_NUM/DATA_NUM edited:
//   rumur --symmetry-reduction off --threads 1 --deadlock-detection off \
//         --output german_N_D.c german_N_D.m
//   gcc -std=c11 -O3 -march=native -o german_N_D german_N_D.c -lpthread
//   ./german_N_D      # "S states, R rules fired"
// Rules fired are its transitions (enabled rule instances, including those
// that lead back to a visited state), which our explorer counts the same way.

#[test]
fn two_clients_two_values_match_rumur() {
    let r = passes(2, 2);
    assert_eq!(r.states, 3390);
    assert_eq!(r.transitions, 9912);
}

#[test]
fn three_clients_two_values_match_rumur() {
    let r = passes(3, 2);
    assert_eq!(r.states, 58104);
    assert_eq!(r.transitions, 235872);
}

#[test]
fn two_clients_three_values_match_rumur() {
    let r = passes(2, 3);
    assert_eq!(r.states, 5787);
    assert_eq!(r.transitions, 18630);
}

#[test]
fn three_clients_three_values_match_rumur() {
    let r = passes(3, 3);
    assert_eq!(r.states, 91773);
    assert_eq!(r.transitions, 381591);
}

/// 1.1 million states: run in release builds only.
#[test]
#[cfg_attr(debug_assertions, ignore)]
fn four_clients_two_values_match_rumur() {
    let r = passes(4, 2);
    assert_eq!(r.states, 1105434);
    assert_eq!(r.transitions, 5922288);
}

/// Which check catches each mutant with the deadlock check on, and the
/// length of the shortest counterexample.
const CAUGHT_BY: &[(&str, &str, usize)] = &[
    ("grant-before-acks", "CntrlProp", 8),
    ("forget-sharer", "CntrlProp", 8),
    ("stale-data", "DataProp", 10),
    ("drop-writeback", "undefined value", 9),
    ("ack-keeps-copy", "DataProp", 10),
    ("no-exclusive-flag", "DataProp", 5),
    ("store-in-shared", "DataProp", 5),
    ("reqs-no-inv", "deadlock", 6),
    ("inv-on-reqs", "deadlock", 10),
];

#[test]
fn every_mutant_is_caught() {
    assert_eq!(MUTANTS.len(), CAUGHT_BY.len());
    for &name in MUTANTS {
        let &(_, want, len) =
            CAUGHT_BY.iter().find(|(m, _, _)| *m == name).unwrap_or_else(|| panic!("{name} not in table"));
        for clients in [2, 3] {
            let r = check(&German::with_mutant(clients, 2, Some(name)).unwrap());
            let v = r.violation.as_ref().unwrap_or_else(|| panic!("mutant {name} was not caught"));
            assert_eq!((v.kind.as_str(), v.steps.len()), (want, len), "mutant {name}: {}", r.trace_text());
            // The trace replays: every step but the last reached a state.
            assert!(v.steps.iter().rev().skip(1).all(|s| !s.after.starts_with('(')), "{}", r.trace_text());
        }
    }
}

// The same mutants written into german.m and checked by rumur (symmetry
// off, deadlock detection off, one thread, breadth-first), NODE_NUM = 2 and
// 3, DATA_NUM = 2: the property that fails and the number of rules in its
// error trace, or, for reqs-no-inv (a pure liveness bug: Murphi's "stuck"
// deadlock never fires because new requests stay enabled), the reachable
// states and rules fired. "undefined value" is rumur's "read of undefined
// value in Chan3[i].Data within rule RecvInvAck".
const RUMUR_MUTANTS: &[(&str, &str, usize)] = &[
    ("grant-before-acks", "CntrlProp", 8),
    ("forget-sharer", "CntrlProp", 8),
    ("stale-data", "DataProp", 10),
    ("drop-writeback", "undefined value", 9),
    ("ack-keeps-copy", "DataProp", 10),
    ("no-exclusive-flag", "DataProp", 5),
    ("store-in-shared", "DataProp", 5),
    ("inv-on-reqs", "CntrlProp", 15),
];

#[test]
fn mutants_without_deadlock_check_fail_as_in_rumur() {
    for &(name, want, len) in RUMUR_MUTANTS {
        for clients in [2, 3] {
            let g = German::with_mutant(clients, 2, Some(name)).unwrap();
            let r = explore(&g, &Options::default(), &mut |_| {});
            let v = r.violation.as_ref().unwrap_or_else(|| panic!("mutant {name} was not caught"));
            assert_eq!((v.kind.as_str(), v.steps.len()), (want, len), "mutant {name}: {}", r.trace_text());
        }
    }
    for (clients, states, transitions) in [(2, 3102, 8904), (3, 56160, 227772)] {
        let g = German::with_mutant(clients, 2, Some("reqs-no-inv")).unwrap();
        let r = explore(&g, &Options::default(), &mut |_| {});
        assert!(r.violation.is_none() && r.complete);
        assert_eq!((r.states, r.transitions), (states, transitions));
    }
}

#[test]
fn mutants_by_name() {
    assert!(German::with_mutant(2, 2, None).is_ok());
    let e = German::with_mutant(2, 2, Some("no-such-bug")).unwrap_err();
    assert!(e.contains("grant-before-acks"), "{e}");
}

#[test]
fn counterexample_names_agents() {
    let r = check(&German::with_mutant(2, 2, Some("grant-before-acks")).unwrap());
    let t = r.trace_text();
    assert!(t.contains("home") && t.contains("client0") && t.contains("client1"), "{t}");
}

#[test]
fn bench_counts_states() {
    let (states, secs) = german::bench(2);
    assert_eq!(states, 3390);
    assert!(secs >= 0.0);
}

/// Speed figures (best of 5 runs; peak memory of the whole process so far):
/// `cargo test --release -p fabricsim --test german speed -- --ignored --nocapture`.
#[test]
#[ignore]
fn speed() {
    for clients in [2, 3, 4] {
        let runs: Vec<(u64, f64)> = (0..5).map(|_| german::bench(clients)).collect();
        let states = runs[0].0;
        let best = runs.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
        println!(
            "german {clients} clients, 2 values: {states} states in {best:.3} s = {:.0} states/s, peak RSS {} MiB",
            states as f64 / best,
            fabricsim::check::explorer::peak_rss_kb() / 1024
        );
    }
}
