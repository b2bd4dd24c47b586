//! German's protocol: the port reaches exactly the states a Murphi checker
//! reaches, passes its invariants, and every mutant is caught.

use fabricsim::agents::coherence::german::{German, MUTANTS};

/// German's protocol with `clients` clients and 2 data values (the
/// configuration of the speed comparison), explored: (states, seconds).
fn bench(clients: usize) -> (u64, f64) {
    let r = fabricsim::check::explore(&German::new(clients, 2), &fabricsim::check::Options::default(), &mut |_| {});
    assert!(r.violation.is_none() && r.complete, "German's protocol failed: {}", r.trace_text());
    (r.states, r.seconds)
}
use fabricsim::check::explorer::SymmetryMode;
use fabricsim::check::symmetry::Mode;
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

/// 1.1 million states: run in release builds only. On one thread and on
/// two (its layers are large enough that the visited set is filled and
/// the next layer copied on both threads; smaller ones use one).
#[test]
#[cfg_attr(debug_assertions, ignore)]
fn four_clients_two_values_match_rumur() {
    for threads in [1, 2] {
        let opts = Options { check_deadlock: true, threads, ..Options::default() };
        let r = explore(&German::new(4, 2), &opts, &mut |_| {});
        assert!(r.violation.is_none() && r.complete, "{}", r.trace_text());
        assert_eq!((r.states, r.transitions, r.depth), (1105434, 5922288, 35), "{threads} threads");
    }
}

/// Which check catches each mutant with the deadlock check on, and the
/// length of the shortest counterexample.
pub const CAUGHT_BY: &[(&str, &str, usize)] = &[
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
    let (states, secs) = bench(2);
    assert_eq!(states, 3390);
    assert!(secs >= 0.0);
}

/// Speed figures (best of 5 runs; peak memory of the whole process so far):
/// `cargo test --release -p fabricsim --test all german::speed -- --ignored --nocapture`.
#[test]
#[ignore]
fn speed() {
    for clients in [2, 3, 4] {
        let runs: Vec<(u64, f64)> = (0..5).map(|_| bench(clients)).collect();
        let states = runs[0].0;
        let best = runs.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
        println!(
            "german {clients} clients, 2 values: {states} states in {best:.3} s = {:.0} states/s, peak RSS {} MiB",
            states as f64 / best,
            fabricsim::check::explorer::peak_rss_kb() / 1024
        );
    }
}

// With symmetry reduction (german.m's scalarsets NODE and DATA), rumur
// 2022.08.20's default (heuristic) normalisation, and its exhaustive one,
// count these orbits and rules fired, DATA_NUM = 2:
//   rumur --deadlock-detection off --output german_N.c german_N.m
//   gcc -std=c11 -O3 -march=native -o german_N german_N.c -lpthread
//   ./german_N      # "S states, R rules fired"
const RUMUR_SYMMETRIC: &[(usize, u64, u64)] =
    &[(2, 852, 2491), (3, 5235, 21289), (4, 28088, 150584), (5, 131112, 876780), (6, 536837, 4303458)];

fn symmetric(clients: usize, threads: usize, mode: Mode) -> Report {
    let g = German::new(clients, 2).with_symmetry(true);
    let opts = Options { threads, symmetry: SymmetryMode(mode), ..Options::default() };
    let r = explore(&g, &opts, &mut |_| {});
    assert!(r.violation.is_none() && r.complete && r.symmetry, "{}", r.trace_text());
    r
}

#[test]
fn symmetry_reduction_counts_rumurs_orbits() {
    let upto = if cfg!(debug_assertions) { 3 } else { 6 };
    for &(n, states, rules) in RUMUR_SYMMETRIC.iter().filter(|e| e.0 <= upto) {
        let r = symmetric(n, 0, Mode::Sorted);
        assert_eq!((r.states, r.transitions), (states, rules), "{n} clients");
    }
}

/// Sorting clients by key (one order per state) gives the same orbits as
/// trying all n! x 2 renamings.
#[test]
fn sorted_canonical_form_equals_the_exhaustive_one() {
    for n in [2, 3, 4] {
        let a = symmetric(n, 1, Mode::Sorted);
        let b = symmetric(n, 1, Mode::Exhaustive);
        assert_eq!((a.states, a.transitions, a.depth), (b.states, b.transitions, b.depth), "{n} clients");
    }
}

/// Symmetry keeps every verdict and the length of every shortest
/// counterexample; and the threads change nothing in the result.
#[test]
fn mutants_are_caught_with_symmetry_and_any_number_of_threads() {
    for &(name, want, len) in CAUGHT_BY {
        for clients in [2, 3] {
            let mut texts = Vec::new();
            for (sym, threads) in [(false, 1), (false, 2), (true, 1), (true, 2)] {
                let g = German::with_mutant(clients, 2, Some(name)).unwrap().with_symmetry(sym);
                let opts = Options { check_deadlock: true, threads, ..Options::default() };
                let r = explore(&g, &opts, &mut |_| {});
                let v = r.violation.as_ref().unwrap_or_else(|| panic!("mutant {name} was not caught"));
                assert_eq!((v.kind.as_str(), v.steps.len()), (want, len), "mutant {name}: {}", r.trace_text());
                texts.push((sym, r.states, r.transitions, r.depth, r.trace_text()));
            }
            assert_eq!(texts[0], texts[1], "{name}: threads changed the result");
            assert_eq!(texts[2], texts[3], "{name}: threads changed the result");
        }
    }
}

#[test]
fn threads_do_not_change_the_result() {
    let a = explore(&German::new(3, 2), &Options { threads: 1, ..Options::default() }, &mut |_| {});
    for threads in [2, 3, 8] {
        let b = explore(&German::new(3, 2), &Options { threads, ..Options::default() }, &mut |_| {});
        assert_eq!(
            (a.states, a.transitions, a.depth, a.final_states),
            (b.states, b.transitions, b.depth, b.final_states)
        );
    }
    // A bound cuts the search at the same state whatever the threads.
    for m in [1000, 20_000, 33_333] {
        let cut = |threads| {
            let r = explore(
                &German::new(3, 2),
                &Options { threads, max_states: Some(m), ..Options::default() },
                &mut |_| {},
            );
            assert!(!r.complete);
            (r.states, r.transitions, r.depth)
        };
        assert_eq!(cut(1), cut(2), "max_states = {m}");
    }
}
