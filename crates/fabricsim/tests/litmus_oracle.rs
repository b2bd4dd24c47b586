//! The memory-model oracle against `litmus/expected.tsv`, hand-checked
//! classic tests, and properties relating the three models.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fabricsim::check::oracle::{allowed_outcomes, outcome_strings, report_json, verdict};
use fabricsim::programs::litmus::parse_file;
use fabricsim::programs::Model;
use fabricsim::programs::{Condition, Expr, Op, Order, Outcome, Program, Quantifier, RmwKind};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The in-repository copy of the starter tests.
fn starter_dir() -> PathBuf {
    crate_dir().join("../../python/fabricsim/litmus")
}

fn load(path: &Path) -> Program {
    parse_file(path).unwrap_or_else(|e| panic!("{e}"))
}

/// `expected.tsv`: test name -> verdict per model column.
fn expected(dir: &Path) -> Vec<(String, Vec<(Model, String)>)> {
    let text = std::fs::read_to_string(dir.join("expected.tsv")).unwrap();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    assert_eq!(header[0], "test");
    let models: Vec<Model> = header[1..].iter().map(|m| m.parse().unwrap()).collect();
    lines
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), models.len() + 1, "bad row {l:?}");
            let v = models.iter().zip(&cols[1..]).map(|(m, v)| (*m, v.trim().to_string())).collect();
            (cols[0].to_string(), v)
        })
        .collect()
}

fn litmus_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
        .collect();
    v.sort();
    v
}

/// Every `.litmus` file of `dir` has a row in `expected.tsv` (and the
/// reverse), and the oracle's verdict equals it for every model.
fn check_against_expected(dir: &Path) {
    let rows = expected(dir);
    let files = litmus_files(dir);
    let mut names = BTreeSet::new();
    let mut failures = Vec::new();
    for f in &files {
        let p = load(f);
        names.insert(p.name.clone());
        let row =
            rows.iter().find(|(n, _)| *n == p.name).unwrap_or_else(|| panic!("{} has no row in expected.tsv", p.name));
        for (m, want) in &row.1 {
            let got = verdict(&p, *m);
            if got.as_str() != want {
                failures.push(format!(
                    "{} under {m}: expected {want}, oracle says {} (allowed: {:?})",
                    p.name,
                    got.as_str(),
                    outcome_strings(&p, &allowed_outcomes(&p, *m))
                ));
            }
        }
    }
    for (n, _) in &rows {
        assert!(names.contains(n), "expected.tsv names {n}, which has no file");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn starter_tests_match_expected_tsv() {
    let dir = starter_dir();
    assert_eq!(litmus_files(&dir).len(), 6);
    check_against_expected(&dir);
}

/// Another copy of the starter tests, named by `FABRICSIM_LITMUS_DIR`, when
/// set: a new starter test there is checked against its `expected.tsv` too.
#[test]
fn other_starter_tests_match_expected_tsv_when_given() {
    match std::env::var_os("FABRICSIM_LITMUS_DIR").map(PathBuf::from) {
        Some(dir) if dir.join("expected.tsv").exists() => check_against_expected(&dir),
        _ => eprintln!("FABRICSIM_LITMUS_DIR not set; the in-repository copy is checked"),
    }
}

#[test]
fn starter_tests_answer_in_milliseconds() {
    for f in litmus_files(&starter_dir()) {
        let p = load(&f);
        for m in Model::ALL {
            let t = Instant::now();
            let v = verdict(&p, m);
            let dt = t.elapsed();
            eprintln!("{:<12} {m:<3} {:<9} {:?}", p.name, v.as_str(), dt);
            // Debug builds and loaded CI machines included; a release build
            // answers in well under a millisecond.
            assert!(dt < Duration::from_millis(500), "{} {m}: {dt:?}", p.name);
        }
    }
}

/// Exact outcome sets of MP, hand-enumerated.
#[test]
fn message_passing_outcome_sets() {
    let p = load(&starter_dir().join("MP.litmus"));
    let sc = ["1:r0=0; 1:r1=0; x=1; y=1;", "1:r0=0; 1:r1=1; x=1; y=1;", "1:r0=1; 1:r1=1; x=1; y=1;"];
    let weak = [
        "1:r0=0; 1:r1=0; x=1; y=1;",
        "1:r0=0; 1:r1=1; x=1; y=1;",
        "1:r0=1; 1:r1=0; x=1; y=1;",
        "1:r0=1; 1:r1=1; x=1; y=1;",
    ];
    let got = |p: &Program, m| outcome_strings(p, &allowed_outcomes(p, m));
    assert_eq!(got(&p, Model::Sc), sc);
    assert_eq!(got(&p, Model::Tso), sc);
    assert_eq!(got(&p, Model::Rc), weak);
    let p = load(&starter_dir().join("MP+rel+acq.litmus"));
    for m in Model::ALL {
        assert_eq!(got(&p, m), sc, "{m}");
    }
}

#[test]
fn json_contract() {
    let p = load(&starter_dir().join("SB.litmus"));
    let j = report_json(&p, Model::Tso);
    for key in ["test", "model", "verdict", "allowed"] {
        assert!(j.get(key).is_some(), "missing {key}: {j}");
    }
    assert_eq!(j["test"], "SB");
    assert_eq!(j["model"], "tso");
    assert_eq!(j["verdict"], "allowed");
    let allowed: Vec<&str> = j["allowed"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let mut sorted = allowed.clone();
    sorted.sort();
    assert_eq!(allowed, sorted);
    assert_eq!(
        allowed,
        [
            "0:r0=0; 1:r0=0; x=1; y=1;",
            "0:r0=0; 1:r0=1; x=1; y=1;",
            "0:r0=1; 1:r0=0; x=1; y=1;",
            "0:r0=1; 1:r0=1; x=1; y=1;"
        ]
    );
    assert_eq!(report_json(&p, Model::Sc)["verdict"], "forbidden");
}

const A: &str = "allowed";
const F: &str = "forbidden";

/// Classic tests beyond the starters, with verdicts checked by hand:
/// (file, SC, TSO, RC, why).
const EXTRA: &[(&str, &str, &str, &str, &str)] = &[
    (
        "IRIW+acq",
        F,
        F,
        A,
        "RC is not multi-copy atomic: the readers may see the two independent writes in \
      opposite orders even with acquire loads; x86-TSO has one memory, so it is MCA",
    ),
    ("IRIW+fences", F, F, F, "seq_cst fences between the loads order everything (RC11 psc_F); TSO is MCA anyway"),
    ("WRC", F, F, A, "relaxed: P1's store to y may become visible to P2 before P0's x=1 does"),
    ("WRC+rel+acq", F, F, F, "cumulativity: P1 observed x=1 before its release, so P2, which acquires y=1, sees x=1"),
    ("ISA2+rel+acq+acq", F, F, F, "happens-before is transitive through a chain of release/acquire pairs"),
    (
        "2+2W",
        F,
        F,
        A,
        "TSO drains each FIFO store buffer in order; RC does not order relaxed stores to \
      different locations",
    ),
    ("2+2W+fences", F, F, F, "seq_cst fences order the stores (psc_F over mo); on TSO, MFENCE drains the buffer"),
    (
        "2+2W+rel",
        F,
        F,
        A,
        "RC11 (kept here, see oracle docs): release stores synchronise with nobody when \
      nothing reads them, and coherence order alone does not create happens-before",
    ),
    ("CoWW", F, F, F, "coherence: two stores of one thread reach x in program order"),
    ("CoRW1", F, F, F, "coherence: a load cannot read a later store of its own thread"),
    ("CoRW2", F, F, F, "coherence: P0's store x=1 is after the x=2 its earlier load read, so x ends at 1"),
    (
        "CoWWR",
        F,
        F,
        F,
        "coherence: a load reads its thread's newest store or a later one (TSO forwards the \
      newest buffered store)",
    ),
    ("CoWR", F, F, F, "coherence: having read x=2 after its own x=1, P0 saw x=1 overwritten, so x ends at 2"),
    (
        "LB",
        F,
        F,
        A,
        "RC reorders a relaxed load with a later relaxed store to another location (this is \
      where the README's RC is weaker than RC11, which forbids po∪rf cycles); \
      x86 never reorders a load with a later store",
    ),
    (
        "LB+rels",
        F,
        F,
        F,
        "a release store is ordered after every earlier access, so no load can read a \
      store that depends on it (ppo ∪ rf acyclic)",
    ),
    (
        "MP+fences",
        F,
        F,
        F,
        "a release fence before the flag store and an acquire fence after the flag load \
      synchronise (RC11 sw through fences)",
    ),
    (
        "SB+rel+acq",
        F,
        A,
        A,
        "a release does not order later accesses and an acquire not earlier ones (RCpc); \
      TSO has store buffers",
    ),
    (
        "SB+scs",
        F,
        A,
        F,
        "seq_cst accesses are totally ordered under RC (RC11 psc), but the oracle's TSO runs the \
      program as given (the plain mapping: every C11 access a plain x86 access), so TSO's store \
      buffers allow SB; with the standard mapping (`fabricsim litmus`'s default) it is forbidden: \
      sb_scs_under_tso_follows_the_mapping",
    ),
    ("SB+rmws", F, F, A, "x86 RMWs are LOCK'd and drain the store buffer; relaxed RMWs are not fences under RC"),
    ("R", F, A, A, "TSO: P1's load passes its buffered store y=2; RC: relaxed accesses are unordered"),
    ("R+fences", F, F, F, "seq_cst fences on both sides forbid R (RC11 psc_F with mo)"),
    (
        "S+rel+acq",
        F,
        F,
        F,
        "P1 acquires y=1, so P0's x=2 happens before P1's x=1, which must then be later in \
      coherence: x cannot end at 2",
    ),
    ("RMW-atomic", A, A, A, "forall: two fetch-adds always end at x=2 with old values 0 and 1 (RMW atomicity)"),
    ("CAS-mutex", F, F, F, "both compare-exchanges 0->1 cannot read 0: the second is atomic after the first"),
    (
        "MP+cas-lock",
        F,
        F,
        F,
        "~exists: a compare-exchange that acquires the lock released by an exchange sees the \
      data written before it; the named outcome is forbidden, so the condition holds",
    ),
];

#[test]
fn extra_classic_tests() {
    let dir = crate_dir().join("../../python/fabricsim/litmus/extra");
    let files = litmus_files(&dir);
    assert_eq!(files.len(), EXTRA.len(), "one expectation per file in {dir:?}");
    let mut failures = Vec::new();
    for (name, sc, tso, rc, why) in EXTRA {
        let p = load(&dir.join(format!("{name}.litmus")));
        assert_eq!(&p.name, name);
        for (m, want) in [(Model::Sc, sc), (Model::Tso, tso), (Model::Rc, rc)] {
            let got = verdict(&p, m);
            if got.as_str() != *want {
                failures.push(format!(
                    "{name} under {m}: expected {want} ({why}), oracle says {} (allowed: {:?})",
                    got.as_str(),
                    outcome_strings(&p, &allowed_outcomes(&p, m))
                ));
            }
            if p.condition.quantifier == Quantifier::NotExists {
                assert_eq!(got.condition_holds, !got.allowed);
            } else {
                assert_eq!(got.condition_holds, got.allowed);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------
// Properties over random small programs.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u64) as usize]
    }
}

/// A random program of 2 or 3 threads, 1 to 3 operations each, over 2
/// locations. `sc_accesses`: whether accesses may be seq_cst. `fenced`:
/// put a seq_cst fence between every two accesses.
fn random_program(rng: &mut Rng, sc_accesses: bool, fenced: bool) -> Program {
    let nthreads = 2 + rng.below(2) as usize;
    let mut threads = Vec::new();
    let mut registers = Vec::new();
    let load_orders: &[Order] =
        if sc_accesses { &[Order::Relaxed, Order::Acquire, Order::SeqCst] } else { &[Order::Relaxed, Order::Acquire] };
    let store_orders: &[Order] =
        if sc_accesses { &[Order::Relaxed, Order::Release, Order::SeqCst] } else { &[Order::Relaxed, Order::Release] };
    let rmw_orders: &[Order] =
        if sc_accesses { &Order::ALL } else { &[Order::Relaxed, Order::Acquire, Order::Release, Order::AcqRel] };
    for _ in 0..nthreads {
        let n = 1 + rng.below(3);
        let mut ops = Vec::new();
        let mut regs = 0u8;
        for k in 0..n {
            if fenced && k > 0 {
                ops.push(Op::Fence { order: Order::SeqCst });
            }
            let loc = rng.below(2) as u8;
            let value = 1 + rng.below(2) as i64;
            let op = match rng.below(if fenced { 3 } else { 4 }) {
                0 => {
                    regs += 1;
                    Op::Load { loc, reg: regs - 1, order: rng.pick(load_orders) }
                }
                1 => Op::Store { loc, value, order: rng.pick(store_orders) },
                2 => {
                    regs += 1;
                    let kind = match rng.below(3) {
                        0 => RmwKind::FetchAdd(value),
                        1 => RmwKind::Exchange(value),
                        _ => RmwKind::CompareExchange { expected: rng.below(2) as i64, new: value },
                    };
                    Op::Rmw { loc, reg: regs - 1, kind, order: rng.pick(rmw_orders) }
                }
                _ => Op::Fence { order: rng.pick(&[Order::Acquire, Order::Release, Order::AcqRel, Order::SeqCst]) },
            };
            ops.push(op);
        }
        threads.push(ops);
        registers.push((0..regs).map(|r| format!("r{r}")).collect());
    }
    Program {
        name: "random".into(),
        locations: vec!["x".into(), "y".into()],
        init: vec![0, 0],
        threads,
        registers,
        condition: Condition { quantifier: Quantifier::Exists, expr: Expr::True },
        code: None,
    }
}

fn subset(a: &BTreeSet<Outcome>, b: &BTreeSet<Outcome>) -> bool {
    a.iter().all(|o| b.contains(o))
}

/// SC ⊆ TSO and SC ⊆ RC always; TSO ⊆ RC without seq_cst accesses (the
/// README's TSO maps them to plain accesses, which RC11 orders more
/// strongly); every model allows at least one outcome.
#[test]
fn models_are_ordered_by_strength() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..300 {
        let sc_accesses = i % 2 == 0;
        let p = random_program(&mut rng, sc_accesses, false);
        let sc = allowed_outcomes(&p, Model::Sc);
        let tso = allowed_outcomes(&p, Model::Tso);
        let rc = allowed_outcomes(&p, Model::Rc);
        assert!(!sc.is_empty());
        assert!(subset(&sc, &tso), "SC ⊄ TSO for {p:?}");
        assert!(subset(&sc, &rc), "SC ⊄ RC for {p:?}");
        if !sc_accesses {
            assert!(
                subset(&tso, &rc),
                "TSO ⊄ RC for {p:?}\nTSO {:?}\nRC {:?}",
                outcome_strings(&p, &tso),
                outcome_strings(&p, &rc)
            );
        }
    }
}

/// A seq_cst fence between every two accesses restores SC under TSO and RC.
#[test]
fn fences_everywhere_restore_sc() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for _ in 0..200 {
        let p = random_program(&mut rng, true, true);
        let sc = allowed_outcomes(&p, Model::Sc);
        assert_eq!(allowed_outcomes(&p, Model::Tso), sc, "TSO {p:?}");
        let rc = allowed_outcomes(&p, Model::Rc);
        assert_eq!(rc, sc, "RC {p:?}\nRC {:?}\nSC {:?}", outcome_strings(&p, &rc), outcome_strings(&p, &sc));
    }
}

/// SB with seq_cst accesses under TSO: allowed as given (the plain
/// mapping), forbidden once compiled with the standard C11-to-x86 mapping
/// (a seq_cst store is MOV; MFENCE), which `fabricsim litmus` applies.
#[test]
fn sb_scs_under_tso_follows_the_mapping() {
    use fabricsim::check::oracle::{compile, Mapping};
    let p =
        fabricsim::programs::litmus::parse_file(&crate_dir().join("../../python/fabricsim/litmus/extra/SB+scs.litmus"))
            .unwrap();
    assert_eq!(verdict(&p, Model::Tso).as_str(), "allowed");
    assert_eq!(verdict(&compile(&p, Model::Tso, Mapping::Plain), Model::Tso).as_str(), "allowed");
    assert_eq!(verdict(&compile(&p, Model::Tso, Mapping::Standard), Model::Tso).as_str(), "forbidden");
    assert_eq!(verdict(&compile(&p, Model::Rc, Mapping::Standard), Model::Rc).as_str(), "forbidden");
}
