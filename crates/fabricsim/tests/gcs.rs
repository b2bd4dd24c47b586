//! GCS (seed 004): the generalized coherence protocol and its ablations,
//! checked small from the same agents the figures time.

use fabricsim::agents::gcs::{Gcs, Mutant, Variant};
use fabricsim::check::{explore, Options};

fn opts() -> Options {
    Options { check_deadlock: true, max_states: Some(20_000_000), ..Default::default() }
}

#[test]
fn gcs_keeps_swmr_one_holder_fresh_data_and_no_deadlock() {
    // GCS on three blades (2.1 M states), two threads on a blade, two locks; the ablations smaller
    for v in Variant::ALL {
        let shapes: &[(usize, usize, usize)] = match v {
            Variant::Gcs => &[(2, 1, 1), (3, 1, 1), (2, 2, 1)],
            // (three blades pass 20 M states: the lock word, its sleepers and the page)
            Variant::Pthread => &[(2, 1, 1)],
            // three blades: the hand-off that splits readers from the next writer, and pages on it
            _ => &[(2, 1, 1), (2, 1, 2), (3, 1, 1)],
        };
        for &(blades, threads, locks) in shapes {
            let p = Gcs::checking(v, blades, threads, locks, (true, true));
            let r = explore(&p, &opts(), &mut |_| {});
            assert!(r.violation.is_none(), "{} {blades}x{threads} {locks}: {}", v.name(), r.trace_text());
            assert!(r.complete, "{} {blades}x{threads} {locks}: {} states", v.name(), r.states);
            eprintln!("{} {blades}x{threads} locks {locks}: {} states", v.name(), r.states);
        }
    }
}

#[test]
fn each_broken_gcs_is_caught() {
    for (m, want) in [
        // a forward that reached the old holder during the hand-off would be dropped with its queue
        (Mutant::NoVersionCheck, "lost request"),
        (Mutant::GrantWithoutData, "stale region"),
        (Mutant::EarlyInvAck, "swmr"),
    ] {
        let p = Gcs::checking(Variant::Gcs, 3, 1, 1, (true, true)).with_mutant(Some(m));
        let r = explore(&p, &opts(), &mut |_| {});
        let v = r.violation.as_ref().unwrap_or_else(|| panic!("{m:?} not caught in {} states", r.states));
        assert!(v.kind.contains(want) || v.detail.contains(want), "{m:?}: {}", r.trace_text());
        eprintln!("{m:?}: {} after {} states: {}", v.kind, r.states, v.detail);
    }
}
