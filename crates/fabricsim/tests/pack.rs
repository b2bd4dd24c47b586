//! The checker's compact state encoding (`engine::pack`): every state a
//! protocol reaches packs and unpacks to itself, so the frontier the
//! explorer keeps packed is the states it found, and equal states pack
//! to equal bytes (their fingerprints are of the bytes).

use std::collections::{HashSet, VecDeque};

use fabricsim::agents::coherence::directory::{Directory, Variant};
use fabricsim::agents::coherence::german::German;
use fabricsim::agents::cxl::dcoh::Dcoh;
use fabricsim::check::explorer::Checkable;
use fabricsim::check::world::{Label, World};

/// Breadth-first over up to `max` reachable states (by the public world
/// API), checking each state's round trip; the number of states visited.
fn round_trips<P: Checkable>(p: &P, max: usize) -> usize {
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    let mut queue: VecDeque<World<P>> = p.initial().into_iter().map(|(a, g)| World::new(a, g)).collect();
    let mut scratch = queue[0].clone();
    let mut idx = Vec::new();
    let mut acts = Vec::new();
    while let Some(w) = queue.pop_front() {
        let mut bytes = Vec::new();
        w.pack(&mut bytes);
        let mut src = &bytes[..];
        scratch.unpack_from(&mut src);
        assert!(src.is_empty(), "{} bytes left after {w:?}", src.len());
        assert_eq!(scratch, w, "packed as {bytes:?}");
        let mut again = Vec::new();
        scratch.pack(&mut again);
        assert_eq!(again, bytes);
        if !seen.insert(bytes) || seen.len() >= max {
            continue;
        }
        idx.clear();
        w.deliverable(p, &mut idx);
        let mut labels: Vec<Label<P::Msg, P::Action>> = idx.iter().map(|&i| Label::Deliver(w.mail[i])).collect();
        for a in 0..w.agents.len() {
            acts.clear();
            p.actions(&w.agents[a], a as u8, &w.ghost, &mut acts);
            labels.extend(acts.iter().map(|&action| Label::Act { agent: a as u8, action }));
        }
        queue.extend(labels.iter().filter_map(|l| w.replay(p, l)));
    }
    seen.len()
}

#[test]
fn german_states_round_trip() {
    assert_eq!(round_trips(&German::new(2, 2), usize::MAX), 3390);
    assert!(round_trips(&German::new(3, 3), 20_000) >= 20_000);
}

#[test]
fn directory_states_round_trip() {
    for v in [Variant::Msi, Variant::Mesi] {
        assert!(round_trips(&Directory::free(v, 2, 2, 2, 2), 20_000) >= 20_000);
        assert!(round_trips(&Directory::free(v, 3, 1, 2, 3), 20_000) >= 20_000);
    }
}

/// Cores running litmus programs (registers, store buffers, RC's bits).
#[test]
fn program_core_states_round_trip() {
    use fabricsim::agents::coherence::core::FrontEnd;
    use std::sync::Arc;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/fabricsim/litmus");
    for name in ["SB", "MP+rel+acq", "SB+fences", "CoRR"] {
        let prog = Arc::new(fabricsim::programs::litmus::parse_file(&dir.join(format!("{name}.litmus"))).unwrap());
        for fe in [FrontEnd::Sc, FrontEnd::Tso, FrontEnd::Rc] {
            let n = round_trips(&Directory::running(Variant::Mesi, prog.clone(), fe, 1), 5_000);
            assert!(n > 20, "{name} {fe:?}: {n} states");
        }
    }
}

/// German's and DCOH's litmus cores (a line per location, the waits).
#[test]
fn german_and_dcoh_program_core_states_round_trip() {
    use fabricsim::agents::coherence::core::FrontEnd;
    use fabricsim::agents::coherence::german_cores::GermanCores;
    use fabricsim::agents::cxl::dcoh_cores::DcohCores;
    use std::sync::Arc;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/fabricsim/litmus");
    for name in ["SB", "MP+rel+acq", "SB+fences"] {
        let prog = Arc::new(fabricsim::programs::litmus::parse_file(&dir.join(format!("{name}.litmus"))).unwrap());
        for fe in [FrontEnd::Sc, FrontEnd::Tso, FrontEnd::Rc] {
            let g = GermanCores::new(German::new(2, 1), prog.clone(), fe).unwrap();
            let n = round_trips(&g, 5_000);
            assert!(n > 20, "german {name} {fe:?}: {n} states");
            let n = round_trips(&DcohCores::new(prog.clone(), fe, 2, None).unwrap(), 5_000);
            assert!(n > 20, "dcoh {name} {fe:?}: {n} states");
        }
    }
}

#[test]
fn dcoh_states_round_trip() {
    assert!(round_trips(&Dcoh::checked(2, 1, 2, 1, 1, 2), 20_000) >= 20_000);
    assert!(round_trips(&Dcoh::checked(1, 1, 3, 2, 2, 2), 20_000) > 1000);
}

#[test]
fn cord_states_round_trip() {
    use fabricsim::agents::cord::{Cord, Params, Variant};
    let params = Params {
        epoch_bits: 2,
        counter_bits: 1,
        proc_counters: 1,
        proc_unacked: 2,
        dir_counters: 2,
        dir_notis: 2,
        seq_bits: 0,
    };
    for v in [Variant::Cord, Variant::So, Variant::Mp] {
        assert!(round_trips(&Cord::free(v, 1, 2, vec![0, 1], params), 20_000) > 10);
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../python/fabricsim/litmus/extra/ISA2+rel+acq+acq.litmus");
    let isa2 = std::sync::Arc::new(fabricsim::programs::litmus::parse_file(&dir).unwrap());
    let p = Cord::running(Variant::Cord, isa2, false, 3, vec![2, 1, 2]);
    assert!(round_trips(&p, 20_000) > 100);
}
