//! Generated litmus tests (`programs/generate.rs`, diy-style relaxation
//! cycles) in the thousands: on every one, SC's outcomes ⊆ TSO's (standard
//! mapping) ⊆ RC's, SC forbids the cycle's outcome, and on a sample every
//! directory protocol observes only outcomes its model allows.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use fabricsim::agents::coherence::core::check_protocol_limits;
use fabricsim::check::oracle::{allowed_outcomes, compile, verdict, Mapping};
use fabricsim::config::litmus::run_on_protocol;
use fabricsim::programs::generate::{cycles, Annotation, Cycle, Edge};
use fabricsim::programs::Model;
use fabricsim::programs::{Order, Outcome, Program};

/// The generated tests: every cycle of at most `max_edges` edges (Pod, Pos,
/// Rfe, Fre, Wse, and Fenced with seq_cst and acq_rel fences), at most four
/// threads and locations, each with relaxed, release/acquire, seq_cst and
/// one mixed annotation.
fn generated(max_edges: usize) -> Vec<Program> {
    let voc = Edge::vocabulary(&[Order::SeqCst, Order::AcqRel]);
    let mut out = Vec::new();
    for (i, c) in cycles(&voc, max_edges, 4, 4).iter().enumerate() {
        for ann in [Annotation::Relaxed, Annotation::RelAcq, Annotation::SeqCst, Annotation::Mixed(i as u64)] {
            out.push(c.program(ann).unwrap_or_else(|e| panic!("{}: {e}\n{}", c.name(), c.to_c(ann))));
        }
    }
    out
}

/// The outcomes of a model, C11 compiled for TSO with the standard mapping.
fn outcomes(p: &Program, m: Model) -> BTreeSet<Outcome> {
    allowed_outcomes(&compile(p, m, Mapping::Standard), m)
}

/// For every program, where `chain[i]`'s outcomes are not a subset of
/// `chain[i + 1]`'s under `outcomes_of`: one message per failed inclusion.
fn inclusion_violations(
    programs: &[Program],
    chain: &[Model],
    outcomes_of: impl Fn(&Program, Model) -> BTreeSet<Outcome>,
) -> Vec<String> {
    let mut bad = Vec::new();
    for p in programs {
        let sets: Vec<_> = chain.iter().map(|&m| outcomes_of(p, m)).collect();
        for i in 0..chain.len() - 1 {
            if let Some(o) = sets[i].difference(&sets[i + 1]).next() {
                bad.push(format!("{}: {} allows {} which {} forbids", p.name, chain[i], o.display(p), chain[i + 1]));
            }
        }
    }
    bad
}

#[test]
fn generated_tests_keep_sc_in_tso_in_rc() {
    let t = Instant::now();
    let programs = generated(6);
    assert!(programs.len() >= 3000, "only {} generated tests", programs.len());
    let bad = inclusion_violations(&programs, &[Model::Sc, Model::Tso, Model::Rc], outcomes);
    assert!(bad.is_empty(), "{} violations:\n{}", bad.len(), bad[..bad.len().min(20)].join("\n"));
    eprintln!("{} generated tests: SC ⊆ TSO ⊆ RC in {:.1?}", programs.len(), t.elapsed());
}

/// The checker catches a broken inclusion: with the chain reversed (RC
/// before SC), MP and SB among the generated tests violate it, and so does
/// a TSO that drops one outcome.
#[test]
fn a_broken_inclusion_is_caught() {
    let programs = generated(4);
    let reversed = inclusion_violations(&programs, &[Model::Rc, Model::Sc], outcomes);
    assert!(reversed.iter().any(|m| m.starts_with("Rfe+PodRR+Fre+PodWW+rlx:")), "{reversed:?}");
    assert!(reversed.iter().any(|m| m.starts_with("Fre+PodWR+Fre+PodWR+rlx:")), "{reversed:?}");
    // A TSO oracle that loses one SC outcome of every test.
    let lossy = |p: &Program, m: Model| {
        let mut s = outcomes(p, m);
        if m == Model::Tso {
            let first = outcomes(p, Model::Sc).into_iter().next();
            if let Some(o) = first {
                s.remove(&o);
            }
        }
        s
    };
    let bad = inclusion_violations(&programs, &[Model::Sc, Model::Tso, Model::Rc], lossy);
    assert_eq!(
        bad.len(),
        programs.len(),
        "every test should lose one SC outcome in TSO: {:?}",
        &bad[..bad.len().min(5)]
    );
    assert!(bad.iter().all(|m| m.contains(" sc allows ") && m.ends_with(" which tso forbids")), "{:?}", &bad[..5]);
}

/// A cycle is a non-SC execution: SC forbids the outcome its condition
/// names when the condition fixes the coherence order (at most two writes
/// per location; with three, the middle one's place is not observed).
#[test]
fn generated_conditions_are_forbidden_under_sc() {
    let voc = Edge::vocabulary(&[Order::SeqCst]);
    let mut checked = 0;
    for c in cycles(&voc, 6, 4, 4) {
        let p = c.program(Annotation::Relaxed).unwrap();
        let max_writes = (0..p.locations.len())
            .map(|l| p.threads.iter().flatten().filter(|o| o.is_write() && o.loc() == Some(l as u8)).count())
            .max()
            .unwrap_or(0);
        if max_writes > 2 {
            continue;
        }
        checked += 1;
        assert!(!verdict(&p, Model::Sc).allowed, "{}: SC allows the cycle\n{}", p.name, c.to_c(Annotation::Relaxed));
    }
    assert!(checked > 500, "{checked}");
}

/// Classic verdicts of generated tests: the generator and the oracle agree
/// with the textbook.
#[test]
fn generated_classics() {
    let cases = [
        ("Rfe PodRR Fre PodWW", Annotation::Relaxed, [false, false, true]), // MP
        ("Rfe PodRR Fre PodWW", Annotation::RelAcq, [false, false, false]), // MP+rel+acq
        ("Fre PodWR Fre PodWR", Annotation::Relaxed, [false, true, true]),  // SB
        ("Fre PodWR Fre PodWR", Annotation::SeqCst, [false, false, false]), // SB+sc (standard mapping)
        ("Fre FencedscWR Fre FencedscWR", Annotation::Relaxed, [false, false, false]), // SB+fences
        ("Rfe PodRW Rfe PodRW", Annotation::Relaxed, [false, false, true]), // LB (RC's documented choice)
        ("Rfe PodRR Fre Rfe PodRR Fre", Annotation::Relaxed, [false, false, true]), // IRIW
    ];
    for (cyc, ann, want) in cases {
        let p = Cycle::parse(cyc).unwrap().program(ann).unwrap();
        for (m, w) in Model::ALL.into_iter().zip(want) {
            let got = verdict(&compile(&p, m, Mapping::Standard), m).allowed;
            assert_eq!(got, w, "{} under {m}", p.name);
        }
    }
}

/// A sample of the generated tests on MSI and MESI behind each model's core
/// front end: every outcome the protocol produces is one the model allows.
#[test]
fn generated_sample_on_protocols() {
    let t = Instant::now();
    let programs = generated(5);
    let sample: Vec<&Program> =
        programs.iter().filter(|p| check_protocol_limits(p).is_ok()).step_by(7).take(250).collect();
    assert!(sample.len() >= 200, "{}", sample.len());
    let mut runs = 0;
    for p in &sample {
        for proto in ["msi", "mesi"] {
            for m in Model::ALL {
                let prog = Arc::new(compile(p, m, Mapping::Standard));
                let r = run_on_protocol(prog, m, proto).unwrap_or_else(|e| panic!("{}: {e}", p.name));
                assert!(
                    r.ok(),
                    "{} on {proto} under {m}: forbidden {:?}, complete {}",
                    p.name,
                    r.forbidden_observed().iter().map(|o| o.display(p).to_string()).collect::<Vec<_>>(),
                    r.report.complete
                );
                runs += 1;
            }
        }
    }
    eprintln!("{runs} protocol runs of generated tests in {:.1?}", t.elapsed());
}
