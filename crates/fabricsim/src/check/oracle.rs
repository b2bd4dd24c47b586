//! Memory-model oracle: the final outcomes that SC, TSO and RC allow for a
//! litmus [`Program`], and the verdict of its condition.
//!
//! The three models are those of `litmus/README.md`, formalised as follows.
//!
//! # SC — interleaving semantics
//!
//! Sequential consistency (L. Lamport, "How to make a multiprocessor
//! computer that correctly executes multiprocess programs", IEEE Trans.
//! Computers C-28(9), 1979): an execution is an interleaving of the
//! threads' operations, each acting atomically on one memory. Memory orders
//! and fences change nothing. The oracle explores every interleaving
//! (depth-first, with a visited set of states).
//!
//! # TSO — the x86-TSO abstract machine
//!
//! The operational x86-TSO machine of S. Owens, S. Sarkar, P. Sewell, "A
//! better x86 memory model: x86-TSO", TPHOLs 2009 (and Sewell, Sarkar, Owens,
//! Zappa Nardelli, Myreen, "x86-TSO: a rigorous and usable programmer's model
//! for x86 multiprocessors", CACM 53(7), 2010): each thread has a FIFO store
//! buffer; a store enters its thread's buffer; a load reads the newest
//! buffered store to its location in its own buffer (store forwarding), or
//! memory; at any time the oldest buffered store of any thread may drain to
//! memory; MFENCE and LOCK'd instructions wait for their thread's buffer to
//! drain, and a LOCK'd instruction reads and writes memory atomically. The
//! machine runs the program's operations as given: each C11 load or store
//! is a plain x86 load or store whatever its memory order,
//! `atomic_thread_fence(memory_order_seq_cst)` is MFENCE, weaker fences
//! compile to nothing, and every RMW (including a compare-exchange that
//! fails) is a LOCK'd instruction (XADD, XCHG, CMPXCHG). An outcome is taken
//! when every thread has finished and every buffer has drained. Explored
//! depth-first with a visited set.
//!
//! How C11 is compiled to it is a [`Mapping`], applied by [`compile`] before
//! the oracle (and a protocol) runs: [`Mapping::Standard`], the usual
//! C11-to-x86 mapping (Batty et al., POPL 2011; the table of Sewell's
//! "C/C++11 mappings to processors"), makes a seq_cst store a store followed
//! by MFENCE, so SB with every access seq_cst is forbidden as C11 requires;
//! [`Mapping::Plain`] (what the README describes) leaves it a plain store,
//! so that SB is allowed. `fabricsim litmus --model tso` uses the standard
//! mapping unless `--mapping plain` is given.
//!
//! # RC — RC11 with hardware release consistency's load buffering
//!
//! An axiomatic model: RC11 of O. Lahav, V. Vafeiadis, J. Kang, C.-K. Hur,
//! D. Dreyer, "Repairing sequential consistency in C/C++11", PLDI 2017,
//! restricted to the supported constructs (atomic accesses only, no
//! `consume`, no non-atomics, so RC11's data-race clause never applies).
//! Candidate executions are enumerated: a success/failure guess for every
//! compare-exchange, a coherence order `mo` per location (initial write
//! first) and a reads-from source for every read; write values follow `mo`
//! (an RMW reads the write immediately before it in `mo`). An execution is
//! consistent when
//!
//! 1. COHERENCE: `hb ; eco?` is irreflexive, with `hb = (po ∪ sw)+`,
//!    `eco = (rf ∪ mo ∪ rb)+`, and RC11's `sw` with release sequences and
//!    fences;
//! 2. ATOMICITY: `rmw ∩ (rb ; mo) = ∅`;
//! 3. SC: `psc = psc_base ∪ psc_F` is acyclic (RC11's definition, which
//!    orders seq_cst accesses and fences);
//! 4. NO-CAUSALITY-CYCLE (replaces RC11's NO-THIN-AIR, see below):
//!    `ppo ∪ rf` is acyclic, where `ppo` is the program order that the
//!    README's RC preserves: from an acquire read (or RMW) to every later
//!    access; from every earlier access to a release write (or RMW); through
//!    an acquire fence (earlier reads before it, everything after it);
//!    through a release fence (everything before it, writes after it);
//!    through a seq_cst fence (everything before, everything after); between
//!    two accesses to one location except a write followed by a read (store
//!    forwarding); and from the read to the write of an RMW.
//!
//! How the README's statements map onto it: relaxed accesses to different
//! locations are unordered and not multi-copy atomic (RC11 allows IRIW even
//! with acquire loads); a release orders every earlier access before it and
//! an acquire every later access after it (synchronisation `sw`, plus `ppo`
//! in axiom 4); releases are cumulative (`hb` is transitive through `rf`
//! into the releasing thread: WRC+rel+acq and ISA2+rel+acq+acq are
//! forbidden); a seq_cst fence orders everything around it (`psc_F`; SB, R,
//! 2+2W and IRIW with seq_cst fences are forbidden); accesses to one
//! location are coherent (axiom 1).
//!
//! ## Where this RC differs from RC11, and why
//!
//! * **Load buffering.** RC11 forbids every cycle in `po ∪ rf` (its
//!   NO-THIN-AIR axiom), hence forbids LB with relaxed accesses. The README
//!   says relaxed accesses to different locations may be reordered, and a
//!   release-consistent machine with relaxed issue (a store may perform
//!   before an earlier load to another location returns) produces LB. So
//!   axiom 4 only forbids cycles through *preserved* program order: LB is
//!   allowed, LB+acq+rel, LB with release stores, LB with acquire loads are
//!   forbidden. Out-of-thin-air values, the reason for RC11's axiom, cannot
//!   arise: in straight-line programs stores write constants and an RMW
//!   writes a function of the value it reads to the same location, which
//!   atomicity and `mo` make well founded; in general code (data and
//!   control dependencies) the dependencies are part of `ppo`, and the
//!   values a read may return are only those some path writes from the
//!   initial state (see "General code" below). The RC here therefore allows a superset of
//!   RC11's outcomes: the executions it adds are exactly those with a
//!   `po ∪ rf` cycle but no `ppo ∪ rf` cycle (a unit test runs both and
//!   checks that, on this repository's tests, only LB differs).
//! * Everything else is RC11. In particular RC11 (like C11) allows
//!   2+2W with release stores and R with a release store and one seq_cst
//!   fence, which a machine whose releases wait for earlier writes to be
//!   globally performed would forbid; the README does not say that writes
//!   are ordered in coherence by release order, so the weaker (language)
//!   reading is kept: a protocol is checked against an upper bound of
//!   behaviours.
//! * seq_cst *accesses* (the README speaks only of seq_cst fences) have
//!   RC11's meaning: they are ordered by `psc`, so SB with seq_cst loads and
//!   stores is forbidden under RC — while under the README's TSO mapping
//!   (plain stores) it is allowed.
//!
//! # General code
//!
//! Programs with [`Program::code`] (register arithmetic, data and control
//! dependencies, `if`/`else`) run by specialisation to straight-line
//! programs, under every model (`mod general` below): each read's value is
//! guessed, every read is constrained to return its guess, and under RC a
//! dependency from a read to a later write (data: the written value or RMW
//! operand is computed from the read; control: the write follows a branch
//! on it) is preserved program order in axiom 4.
//!
//! # Common to the three models
//!
//! A `memory_order_relaxed` fence does nothing. An RMW returns the old value
//! into its register; a compare-exchange that fails writes nothing and is a
//! read with the read part of its order (the parser requires the failure
//! order to be exactly that). Registers that are never written end at 0.
//!
//! # Verdicts
//!
//! As in herd's expected tables, the verdict says whether the outcome the
//! condition names is allowed: for `exists e` and `~exists e`, "allowed"
//! iff some allowed outcome satisfies `e` (for `~exists`, the condition
//! holds iff none does); for `forall e`, "allowed" iff every allowed outcome
//! satisfies `e`.

use std::cell::Cell;
use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::str::FromStr;

use crate::programs::{Model, Op, Order, Outcome, Program, Quantifier, RmwKind, Value};

/// What a run of the oracle on a straight-line program derived from general
/// code ([`Program::code`]) must respect: per thread and operation, the
/// value its read must return (the guess the program was specialised for),
/// and per thread the dependencies `(read op, dependent write op)`.
pub(crate) struct Spec {
    expect: Vec<Vec<Option<Value>>>,
    deps: Vec<Vec<(usize, usize)>>,
}

impl Spec {
    fn expect(&self, t: usize, i: usize) -> Option<Value> {
        self.expect.get(t).and_then(|e| e.get(i)).copied().flatten()
    }
}

/// How C11 accesses are compiled for the TSO machine (see the module
/// documentation); SC and RC ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mapping {
    /// A seq_cst store is MOV; MFENCE (the standard C11-to-x86 mapping).
    #[default]
    Standard,
    /// Every store is a plain MOV (the README's TSO).
    Plain,
}

impl Mapping {
    pub const ALL: [Mapping; 2] = [Mapping::Standard, Mapping::Plain];

    /// `standard` or `plain`.
    pub fn name(self) -> &'static str {
        match self {
            Mapping::Standard => "standard",
            Mapping::Plain => "plain",
        }
    }
}

impl FromStr for Mapping {
    type Err = String;

    fn from_str(s: &str) -> Result<Mapping, String> {
        Mapping::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown mapping `{s}`; expected standard or plain"))
    }
}

/// The program `model` runs when C11 is compiled with `mapping`: under TSO
/// with the standard mapping, a seq_cst fence (MFENCE) after every seq_cst
/// store, in straight-line operations and in general code alike; otherwise
/// the program unchanged.
pub fn compile(p: &Program, model: Model, mapping: Mapping) -> Program {
    use crate::programs::Stmt;
    if model != Model::Tso || mapping == Mapping::Plain {
        return p.clone();
    }
    fn stmts(code: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(code.len());
        for s in code {
            match s {
                Stmt::If { cond, then, otherwise } => {
                    out.push(Stmt::If { cond: cond.clone(), then: stmts(then), otherwise: stmts(otherwise) })
                }
                Stmt::Store { order: Order::SeqCst, .. } => {
                    out.push(s.clone());
                    out.push(Stmt::Fence { order: Order::SeqCst });
                }
                s => out.push(s.clone()),
            }
        }
        out
    }
    let mut q = p.clone();
    for ops in &mut q.threads {
        let mut out = Vec::with_capacity(ops.len());
        for &op in ops.iter() {
            out.push(op);
            if matches!(op, Op::Store { order: Order::SeqCst, .. }) {
                out.push(Op::Fence { order: Order::SeqCst });
            }
        }
        *ops = out;
    }
    if let Some(code) = &mut q.code {
        for c in code.iter_mut() {
            *c = stmts(c);
        }
    }
    q
}

/// The verdict of a test's condition under a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Verdict {
    pub quantifier: Quantifier,
    /// herd's "allowed"/"forbidden": for `exists`/`~exists`, whether some
    /// allowed outcome satisfies the proposition; for `forall`, whether all
    /// do.
    pub allowed: bool,
    /// Whether the condition, quantifier included, holds.
    pub condition_holds: bool,
    /// How many allowed outcomes satisfy the proposition.
    pub matching: usize,
    /// How many outcomes the model allows.
    pub outcomes: usize,
}

impl Verdict {
    /// `"allowed"` or `"forbidden"`.
    pub fn as_str(&self) -> &'static str {
        if self.allowed {
            "allowed"
        } else {
            "forbidden"
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every final outcome the model allows for the program.
///
/// # Panics
///
/// Under RC, if the program has more than 128 memory events (initial
/// writes, reads, writes and fences together); litmus tests are far smaller.
pub fn allowed_outcomes(p: &Program, m: Model) -> BTreeSet<Outcome> {
    try_allowed_outcomes(p, m, &Limits::unbounded()).unwrap_or_else(|e| panic!("{}", e.message))
}

/// States (SC, TSO) or candidate executions (RC) the oracle explores by
/// default before it gives up with "too large": about 1 GB of visited
/// states for the operational models.
pub const DEFAULT_MAX_STATES: u64 = 2_000_000;

/// Bounds on the oracle's search.
#[derive(Debug, Clone)]
pub struct Limits {
    pub max_states: u64,
    pub stop: super::Stop,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_states: DEFAULT_MAX_STATES, stop: super::Stop::default() }
    }
}

impl Limits {
    pub fn unbounded() -> Self {
        Limits { max_states: u64::MAX, stop: super::Stop::default() }
    }
}

/// The oracle stopped before it had every allowed outcome.
#[derive(Debug, Clone)]
pub struct Incomplete {
    /// Stopped from outside (Ctrl-C) rather than by a limit.
    pub interrupted: bool,
    /// States or candidate executions explored so far.
    pub explored: u64,
    pub message: String,
}

/// Counts the work of one search against its limits.
struct Budget<'a> {
    limits: &'a Limits,
    explored: Cell<u64>,
    interrupted: Cell<bool>,
    exhausted: Cell<bool>,
}

impl<'a> Budget<'a> {
    fn new(limits: &'a Limits) -> Self {
        Budget { limits, explored: Cell::new(0), interrupted: Cell::new(false), exhausted: Cell::new(false) }
    }

    /// Count one unit of work; false when the search must stop.
    fn tick(&self) -> bool {
        if self.stopped() {
            return false;
        }
        let n = self.explored.get() + 1;
        self.explored.set(n);
        if n >= self.limits.max_states {
            self.exhausted.set(true);
            return false;
        }
        if n.is_multiple_of(1024) && self.limits.stop.requested() {
            self.interrupted.set(true);
            return false;
        }
        true
    }

    fn stopped(&self) -> bool {
        self.exhausted.get() || self.interrupted.get()
    }

    fn result<T>(&self, p: &Program, m: Model, value: T) -> Result<T, Incomplete> {
        let explored = self.explored.get();
        let unit = if m == Model::Rc { "candidate executions" } else { "states" };
        if self.interrupted.get() {
            return Err(Incomplete {
                interrupted: true,
                explored,
                message: format!("{}: interrupted after {explored} {unit} under {}: incomplete", p.name, m.name()),
            });
        }
        if self.exhausted.get() {
            return Err(Incomplete {
                interrupted: false,
                explored,
                message: format!(
                    "{}: too large for the {} oracle: more than {} {unit} (the limit); \
                     expected fewer threads or operations",
                    p.name,
                    m.name(),
                    self.limits.max_states
                ),
            });
        }
        Ok(value)
    }
}

/// [`allowed_outcomes`] within `limits`: an error says the test is too
/// large or the search was interrupted, and how much was explored.
pub fn try_allowed_outcomes(p: &Program, m: Model, limits: &Limits) -> Result<BTreeSet<Outcome>, Incomplete> {
    let budget = Budget::new(limits);
    let fail = |message| Incomplete { interrupted: false, explored: 0, message };
    let out = match &p.code {
        Some(code) => general::outcomes(p, code, m, &budget).map_err(fail)?,
        None => {
            let out = match m {
                Model::Sc => operational(p, false, &budget, None),
                Model::Tso => operational(p, true, &budget, None),
                Model::Rc => rc::outcomes(p, rc::Variant::Rc, &budget, None).map_err(fail)?,
            };
            if p.registers.iter().flatten().any(|r| r.starts_with('%')) {
                out.into_iter().map(|o| p.project(o)).collect()
            } else {
                out
            }
        }
    };
    budget.result(p, m, out)
}

/// The verdict of the program's condition under the model.
pub fn verdict(p: &Program, m: Model) -> Verdict {
    verdict_of(p, &allowed_outcomes(p, m))
}

/// The verdict of the program's condition over a given set of outcomes
/// (e.g. those a protocol produced).
pub fn verdict_of(p: &Program, outcomes: &BTreeSet<Outcome>) -> Verdict {
    let e = &p.condition.expr;
    let matching = outcomes.iter().filter(|o| e.eval(o)).count();
    let q = p.condition.quantifier;
    let (allowed, condition_holds) = match q {
        Quantifier::Exists => (matching > 0, matching > 0),
        Quantifier::NotExists => (matching > 0, matching == 0),
        Quantifier::Forall => (matching == outcomes.len(), matching == outcomes.len()),
    };
    Verdict { quantifier: q, allowed, condition_holds, matching, outcomes: outcomes.len() }
}

/// The outcomes as herd-style strings with the program's names, sorted.
pub fn outcome_strings<'a>(p: &Program, outcomes: impl IntoIterator<Item = &'a Outcome>) -> Vec<String> {
    let mut v: Vec<String> = outcomes.into_iter().map(|o| o.display(p).to_string()).collect();
    v.sort();
    v
}

/// The `fabricsim litmus --json` object (docs/architecture.md, "Litmus tests") for one test:
/// `{"test", "model", "verdict", "allowed": [sorted outcomes], "condition",
/// "quantifier", "condition_holds", "matching": [sorted outcomes satisfying
/// the proposition]}`.
pub fn report_json(p: &Program, m: Model) -> serde_json::Value {
    let outcomes = allowed_outcomes(p, m);
    report_json_of(p, m, &outcomes)
}

/// [`report_json`] of outcomes already computed.
pub fn report_json_of(p: &Program, m: Model, outcomes: &BTreeSet<Outcome>) -> serde_json::Value {
    let outcomes = outcomes.clone();
    let v = verdict_of(p, &outcomes);
    let e = &p.condition.expr;
    serde_json::json!({
        "test": p.name,
        "model": m.name(),
        "verdict": v.as_str(),
        "allowed": outcome_strings(p, &outcomes),
        "condition": p.condition_string(),
        "quantifier": v.quantifier.keyword(),
        "condition_holds": v.condition_holds,
        "matching": outcome_strings(p, outcomes.iter().filter(|o| e.eval(o))),
    })
}

// ---------------------------------------------------------------------------
// SC and TSO: operational machines.

#[derive(Clone, PartialEq, Eq, Hash)]
struct MState {
    pc: Vec<u16>,
    regs: Vec<Value>,
    mem: Vec<Value>,
    /// Per thread, FIFO store buffer of (loc, value), oldest first (TSO).
    bufs: Vec<Vec<(u8, Value)>>,
}

fn operational(p: &Program, tso: bool, budget: &Budget, spec: Option<&Spec>) -> BTreeSet<Outcome> {
    let init = p.initial_outcome();
    let shape: Vec<usize> = init.regs.iter().map(Vec::len).collect();
    let offsets: Vec<usize> = shape
        .iter()
        .scan(0, |acc, &n| {
            let o = *acc;
            *acc += n;
            Some(o)
        })
        .collect();
    let start = MState {
        pc: vec![0; p.threads.len()],
        regs: vec![0; shape.iter().sum()],
        mem: init.mem.clone(),
        bufs: vec![Vec::new(); p.threads.len()],
    };
    let mut out = BTreeSet::new();
    let mut seen: HashSet<MState> = HashSet::new();
    let mut stack = vec![start];
    while let Some(s) = stack.pop() {
        if !seen.insert(s.clone()) {
            continue;
        }
        if !budget.tick() {
            break;
        }
        let mut done = true;
        for (t, ops) in p.threads.iter().enumerate() {
            // Drain the oldest buffered store.
            if let Some(&(loc, v)) = s.bufs[t].first() {
                done = false;
                let mut n = s.clone();
                n.bufs[t].remove(0);
                n.mem[loc as usize] = v;
                stack.push(n);
            }
            let Some(&op) = ops.get(s.pc[t] as usize) else {
                continue;
            };
            done = false;
            let empty = s.bufs[t].is_empty();
            let mut n = s.clone();
            n.pc[t] += 1;
            match op {
                Op::Load { loc, reg, .. } => {
                    let v = s.bufs[t].iter().rev().find(|(l, _)| *l == loc).map_or(s.mem[loc as usize], |&(_, v)| v);
                    if spec.and_then(|x| x.expect(t, s.pc[t] as usize)).is_some_and(|e| e != v) {
                        continue; // not the execution this specialisation stands for
                    }
                    n.regs[offsets[t] + reg as usize] = v;
                }
                Op::Store { loc, value, .. } => {
                    if tso {
                        n.bufs[t].push((loc, value));
                    } else {
                        n.mem[loc as usize] = value;
                    }
                }
                Op::Rmw { loc, reg, kind, .. } => {
                    if !empty {
                        continue; // LOCK'd: waits for the buffer to drain
                    }
                    let old = s.mem[loc as usize];
                    if spec.and_then(|x| x.expect(t, s.pc[t] as usize)).is_some_and(|e| e != old) {
                        continue;
                    }
                    n.regs[offsets[t] + reg as usize] = old;
                    if let Some(v) = kind.apply(old) {
                        n.mem[loc as usize] = v;
                    }
                }
                Op::Fence { order } => {
                    if order == Order::SeqCst && !empty {
                        continue; // MFENCE: waits for the buffer to drain
                    }
                }
            }
            stack.push(n);
        }
        if done {
            let regs = shape.iter().zip(&offsets).map(|(&n, &o)| s.regs[o..o + n].to_vec()).collect();
            out.insert(Outcome { regs, mem: s.mem.clone() });
        }
    }
    out
}

// ---------------------------------------------------------------------------
// RC: axiomatic, by enumeration of candidate executions.

mod rc {
    use super::*;

    /// Which axiom forbids causality cycles.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub(super) enum Variant {
        /// `ppo ∪ rf` acyclic (the README's RC).
        Rc,
        /// `po ∪ rf` acyclic: RC11 exactly (used by tests to compare).
        #[cfg_attr(not(test), allow(dead_code))]
        Rc11,
    }

    /// A relation over at most 128 events, one bit row per event.
    #[derive(Clone)]
    struct Rel {
        rows: Vec<u128>,
    }

    fn bits(mut s: u128) -> impl Iterator<Item = usize> {
        std::iter::from_fn(move || {
            if s == 0 {
                None
            } else {
                let i = s.trailing_zeros() as usize;
                s &= s - 1;
                Some(i)
            }
        })
    }

    impl Rel {
        fn empty(n: usize) -> Rel {
            Rel { rows: vec![0; n] }
        }
        fn id(n: usize, set: u128) -> Rel {
            let mut r = Rel::empty(n);
            for i in bits(set) {
                r.rows[i] |= 1 << i;
            }
            r
        }
        fn add(&mut self, i: usize, j: usize) {
            self.rows[i] |= 1 << j;
        }
        #[cfg(test)]
        fn has(&self, i: usize, j: usize) -> bool {
            self.rows[i] >> j & 1 == 1
        }
        fn is_empty(&self) -> bool {
            self.rows.iter().all(|&r| r == 0)
        }
        fn union(&self, o: &Rel) -> Rel {
            Rel { rows: self.rows.iter().zip(&o.rows).map(|(a, b)| a | b).collect() }
        }
        fn inter(&self, o: &Rel) -> Rel {
            Rel { rows: self.rows.iter().zip(&o.rows).map(|(a, b)| a & b).collect() }
        }
        fn minus(&self, o: &Rel) -> Rel {
            Rel { rows: self.rows.iter().zip(&o.rows).map(|(a, b)| a & !b).collect() }
        }
        /// `self ; o`
        fn seq(&self, o: &Rel) -> Rel {
            Rel { rows: self.rows.iter().map(|&r| bits(r).fold(0, |acc, j| acc | o.rows[j])).collect() }
        }
        /// `[dom] ; self ; [ran]`
        fn restrict(&self, dom: u128, ran: u128) -> Rel {
            Rel {
                rows: self.rows.iter().enumerate().map(|(i, &r)| if dom >> i & 1 == 1 { r & ran } else { 0 }).collect(),
            }
        }
        fn inverse(&self) -> Rel {
            let mut r = Rel::empty(self.rows.len());
            for (i, &row) in self.rows.iter().enumerate() {
                for j in bits(row) {
                    r.add(j, i);
                }
            }
            r
        }
        /// Transitive closure (Warshall).
        fn plus(&self) -> Rel {
            let mut r = self.clone();
            for k in 0..r.rows.len() {
                let rk = r.rows[k];
                for i in 0..r.rows.len() {
                    if r.rows[i] >> k & 1 == 1 {
                        r.rows[i] |= rk;
                    }
                }
            }
            r
        }
        /// Reflexive closure.
        fn opt(&self) -> Rel {
            let mut r = self.clone();
            for i in 0..r.rows.len() {
                r.rows[i] |= 1 << i;
            }
            r
        }
        fn irreflexive(&self) -> bool {
            self.rows.iter().enumerate().all(|(i, &r)| r >> i & 1 == 0)
        }
        fn acyclic(&self) -> bool {
            self.plus().irreflexive()
        }
    }

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Kind {
        R,
        W,
        F,
    }

    #[derive(Clone, Copy, Debug)]
    struct Ev {
        /// `None` for an initial write.
        thread: Option<usize>,
        kind: Kind,
        loc: u8,
        mode: Order,
        /// Register a read writes (thread-local index).
        reg: u8,
        /// For an RMW's read: its write (if it writes); for an RMW's write:
        /// its read.
        pair: Option<usize>,
        /// Store: the value written. RMW write: the kind.
        value: Value,
        rmw: Option<RmwKind>,
        /// A read: the value it must return (general code's specialisation).
        expect: Option<Value>,
    }

    /// One candidate shape: events for a guess of which compare-exchanges
    /// succeed.
    struct Shape {
        evs: Vec<Ev>,
        /// Failed compare-exchange reads and the value they must not read.
        cas_fail: Vec<(usize, Value)>,
        /// Successful compare-exchange reads and the value they must read.
        cas_ok: Vec<(usize, Value)>,
        /// Dependencies (read event, dependent write event).
        deps: Vec<(usize, usize)>,
    }

    fn shape(p: &Program, nloc: usize, init: &[Value], guess: u64, spec: Option<&Spec>) -> Shape {
        let mut evs = Vec::new();
        for (l, &v) in init.iter().enumerate().take(nloc) {
            evs.push(Ev {
                thread: None,
                kind: Kind::W,
                loc: l as u8,
                mode: Order::Relaxed,
                reg: 0,
                pair: None,
                value: v,
                rmw: None,
                expect: None,
            });
        }
        let mut deps = Vec::new();
        let mut cas_fail = Vec::new();
        let mut cas_ok = Vec::new();
        let mut k = 0;
        for (t, ops) in p.threads.iter().enumerate() {
            // Per op: its read event and its write event.
            let mut op_ev: Vec<(Option<usize>, Option<usize>)> = Vec::new();
            for (i, &op) in ops.iter().enumerate() {
                let first = evs.len();
                let expect = spec.and_then(|x| x.expect(t, i));
                let base = Ev {
                    thread: Some(t),
                    kind: Kind::F,
                    loc: 0,
                    mode: Order::Relaxed,
                    reg: 0,
                    pair: None,
                    value: 0,
                    rmw: None,
                    expect,
                };
                match op {
                    Op::Load { loc, reg, order } => {
                        evs.push(Ev { kind: Kind::R, loc, reg, mode: order.read_part(), ..base })
                    }
                    Op::Store { loc, value, order } => {
                        evs.push(Ev { kind: Kind::W, loc, value, mode: order.write_part(), ..base })
                    }
                    Op::Rmw { loc, reg, kind, order } => {
                        let r = evs.len();
                        evs.push(Ev { kind: Kind::R, loc, reg, mode: order.read_part(), ..base });
                        let writes = match kind {
                            RmwKind::CompareExchange { expected, .. } => {
                                let ok = guess >> k & 1 == 1;
                                k += 1;
                                if ok {
                                    cas_ok.push((r, expected));
                                } else {
                                    cas_fail.push((r, expected));
                                }
                                ok
                            }
                            _ => true,
                        };
                        if writes {
                            evs[r].pair = Some(r + 1);
                            evs.push(Ev {
                                kind: Kind::W,
                                loc,
                                mode: order.write_part(),
                                pair: Some(r),
                                rmw: Some(kind),
                                ..base
                            });
                        }
                    }
                    Op::Fence { order } => {
                        if order != Order::Relaxed {
                            evs.push(Ev { mode: order, ..base });
                        }
                    }
                }
                let mine = first..evs.len();
                let read = mine.clone().find(|&e| evs[e].kind == Kind::R);
                let write = mine.clone().find(|&e| evs[e].kind == Kind::W);
                op_ev.push((read, write));
            }
            if let Some(spec) = spec {
                for &(r, w) in spec.deps.get(t).map_or(&[][..], |d| &d[..]) {
                    if let (Some((Some(re), _)), Some((_, Some(we)))) = (op_ev.get(r), op_ev.get(w)) {
                        deps.push((*re, *we));
                    }
                }
            }
        }
        Shape { evs, cas_fail, cas_ok, deps }
    }

    /// All permutations of `v` in which the writes of one thread keep
    /// program order (coherence would reject the others anyway).
    fn orders(v: &[usize], evs: &[Ev], budget: &Budget) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        let mut cur = Vec::with_capacity(v.len());
        let mut used = vec![false; v.len()];
        fn rec(
            v: &[usize],
            evs: &[Ev],
            cur: &mut Vec<usize>,
            used: &mut [bool],
            out: &mut Vec<Vec<usize>>,
            budget: &Budget,
        ) {
            if cur.len() == v.len() {
                if budget.tick() {
                    out.push(cur.clone());
                }
                return;
            }
            if budget.stopped() {
                return;
            }
            for i in 0..v.len() {
                if used[i] {
                    continue;
                }
                // A write may come next only if no po-earlier write of its
                // thread (in v) is still unplaced.
                let blocked = (0..i).any(|j| !used[j] && evs[v[j]].thread == evs[v[i]].thread);
                if blocked {
                    continue;
                }
                used[i] = true;
                cur.push(v[i]);
                rec(v, evs, cur, used, out, budget);
                cur.pop();
                used[i] = false;
            }
        }
        rec(v, evs, &mut cur, &mut used, &mut out, budget);
        out
    }

    pub(super) fn outcomes(
        p: &Program,
        variant: Variant,
        budget: &Budget,
        spec: Option<&Spec>,
    ) -> Result<BTreeSet<Outcome>, String> {
        let init = p.initial_outcome();
        let nloc = init.mem.len();
        let ncas = p
            .threads
            .iter()
            .flatten()
            .filter(|op| matches!(op, Op::Rmw { kind: RmwKind::CompareExchange { .. }, .. }))
            .count();
        if ncas >= 32 {
            return Err(format!("{}: {ncas} compare-exchanges: the RC oracle supports at most 31", p.name));
        }
        let mut out = BTreeSet::new();
        for guess in 0..(1u64 << ncas) {
            let sh = shape(p, nloc, &init.mem, guess, spec);
            if sh.evs.len() > MAX_EVENTS {
                return Err(format!(
                    "{}: {} events (accesses, fences and initial writes): the RC oracle supports at most {MAX_EVENTS}",
                    p.name,
                    sh.evs.len()
                ));
            }
            Enum::new(&init, sh, variant, budget).run(&mut out);
            if budget.stopped() {
                break;
            }
        }
        Ok(out)
    }

    /// Events of one candidate execution: relations are 128-bit masks.
    pub const MAX_EVENTS: usize = 128;

    /// A read whose source the enumeration chooses.
    struct Free {
        read: usize,
        /// Possible sources before `mo` is known.
        cands: Vec<usize>,
        /// Writes (including RMW writes) to the same location by the same
        /// thread before and after the read in program order.
        before_w: Vec<usize>,
        after_w: Vec<usize>,
        /// Earlier reads (any, RMW reads included) to the same location by
        /// the same thread.
        before_r: Vec<usize>,
        /// A failed compare-exchange must not read this value.
        cas_fail: Option<Value>,
    }

    struct Enum<'a> {
        init: &'a Outcome,
        budget: &'a Budget<'a>,
        variant: Variant,
        evs: Vec<Ev>,
        cas_ok: Vec<(usize, Value)>,
        n: usize,
        /// Writes per location (initial writes excluded), in event order.
        writes: Vec<Vec<usize>>,
        /// Reads whose source is free (not an RMW's read that writes).
        free: Vec<Free>,
        // Static relations and sets.
        po: Rel,
        sloc: Rel,
        rmw: Rel,
        ppo: Rel,
        set_w: u128,
        set_f: u128,
        set_rel: u128,
        set_acq: u128,
        set_sc: u128,
        set_fsc: u128,
    }

    impl<'a> Enum<'a> {
        fn new(init: &'a Outcome, sh: Shape, variant: Variant, budget: &'a Budget<'a>) -> Enum<'a> {
            let evs = sh.evs;
            let n = evs.len();
            let nloc = init.mem.len();
            let mut writes = vec![Vec::new(); nloc];
            let (mut set_w, mut set_f, mut set_rel, mut set_acq, mut set_sc, mut set_fsc) =
                (0u128, 0u128, 0u128, 0u128, 0u128, 0u128);
            for (i, e) in evs.iter().enumerate() {
                let b = 1u128 << i;
                match e.kind {
                    Kind::W => {
                        set_w |= b;
                        if e.thread.is_some() {
                            writes[e.loc as usize].push(i);
                        }
                    }
                    Kind::F => set_f |= b,
                    Kind::R => {}
                }
                if e.mode.is_release() && e.kind != Kind::R {
                    set_rel |= b;
                }
                if e.mode.is_acquire() && e.kind != Kind::W {
                    set_acq |= b;
                }
                if e.mode.is_seq_cst() {
                    set_sc |= b;
                    if e.kind == Kind::F {
                        set_fsc |= b;
                    }
                }
            }
            let mut po = Rel::empty(n);
            let mut sloc = Rel::empty(n);
            let mut rmw = Rel::empty(n);
            let mut ppo = Rel::empty(n);
            for i in 0..n {
                for j in 0..n {
                    let (a, b) = (&evs[i], &evs[j]);
                    let mem = a.kind != Kind::F && b.kind != Kind::F;
                    if mem && a.loc == b.loc && i != j {
                        sloc.add(i, j);
                    }
                    let in_po = match (a.thread, b.thread) {
                        (None, Some(_)) => true,
                        (Some(s), Some(t)) => s == t && i < j,
                        _ => false,
                    };
                    if !in_po {
                        continue;
                    }
                    po.add(i, j);
                    if a.thread.is_none() {
                        continue;
                    }
                    let ordered = match variant {
                        Variant::Rc11 => true,
                        Variant::Rc => {
                            (a.kind == Kind::R && a.mode.is_acquire())
                                || (b.kind == Kind::W && b.mode.is_release())
                                || (a.kind == Kind::F
                                    && (a.mode.is_acquire() || (a.mode.is_release() && b.kind == Kind::W)))
                                || (b.kind == Kind::F
                                    && (b.mode.is_release() || (b.mode.is_acquire() && a.kind == Kind::R)))
                                || (mem && a.loc == b.loc && !(a.kind == Kind::W && b.kind == Kind::R))
                        }
                    };
                    if ordered {
                        ppo.add(i, j);
                    }
                }
                if evs[i].kind == Kind::R {
                    if let Some(w) = evs[i].pair {
                        rmw.add(i, w);
                    }
                }
            }
            // Dependencies are preserved program order (data and control
            // dependencies into writes); RC11 has all of po anyway.
            if variant == Variant::Rc {
                for &(r, w) in &sh.deps {
                    ppo.add(r, w);
                }
            }
            // Candidate sources of the free reads: the initial write and the
            // writes of other threads, or the last po-earlier write of the
            // same thread (coherence rules out po-later writes and older
            // writes of the same thread).
            let mut free = Vec::new();
            for (i, e) in evs.iter().enumerate() {
                if e.kind != Kind::R || e.pair.is_some() {
                    continue;
                }
                let l = e.loc as usize;
                let mut c = Vec::new();
                let own_last = writes[l].iter().copied().filter(|&w| evs[w].thread == e.thread && w < i).max();
                match own_last {
                    Some(w) => c.push(w),
                    None => c.push(l),
                }
                c.extend(writes[l].iter().copied().filter(|&w| evs[w].thread != e.thread));
                let same = |j: usize| {
                    let o = &evs[j];
                    o.thread == e.thread && o.kind != Kind::F && o.loc == e.loc
                };
                free.push(Free {
                    read: i,
                    cands: c,
                    before_w: (0..i).filter(|&j| same(j) && evs[j].kind == Kind::W).collect(),
                    after_w: (i + 1..n).filter(|&j| same(j) && evs[j].kind == Kind::W).collect(),
                    before_r: (0..i).filter(|&j| same(j) && evs[j].kind == Kind::R).collect(),
                    cas_fail: sh.cas_fail.iter().find(|(r, _)| *r == i).map(|&(_, v)| v),
                });
            }
            Enum {
                init,
                variant,
                budget,
                evs,
                cas_ok: sh.cas_ok,
                n,
                writes,
                free,
                po,
                sloc,
                rmw,
                ppo,
                set_w,
                set_f,
                set_rel,
                set_acq,
                set_sc,
                set_fsc,
            }
        }

        fn run(&mut self, out: &mut BTreeSet<Outcome>) {
            let per_loc: Vec<Vec<Vec<usize>>> = self.writes.iter().map(|w| orders(w, &self.evs, self.budget)).collect();
            if self.budget.stopped() {
                return;
            }
            let mut choice = vec![0usize; per_loc.len()];
            if per_loc.iter().any(Vec::is_empty) {
                return;
            }
            loop {
                let mo: Vec<&Vec<usize>> = per_loc.iter().zip(&choice).map(|(o, &c)| &o[c]).collect();
                self.with_mo(&mo, out);
                if self.budget.stopped() {
                    return;
                }
                // Next combination.
                let mut k = 0;
                loop {
                    if k == choice.len() {
                        return;
                    }
                    choice[k] += 1;
                    if choice[k] < per_loc[k].len() {
                        break;
                    }
                    choice[k] = 0;
                    k += 1;
                }
            }
        }

        fn with_mo(&mut self, mo: &[&Vec<usize>], out: &mut BTreeSet<Outcome>) {
            let n = self.n;
            // rf sources fixed by mo for RMWs; values of writes in mo order.
            let mut rf_src = vec![usize::MAX; n];
            let mut val = vec![0 as Value; n];
            let mut morel = Rel::empty(n);
            for (l, order) in mo.iter().enumerate() {
                val[l] = self.init.mem[l];
                let mut prev = l;
                for &w in order.iter() {
                    let e = self.evs[w];
                    match (e.rmw, e.pair) {
                        (Some(kind), Some(r)) => {
                            rf_src[r] = prev;
                            let old = val[prev];
                            val[r] = old;
                            match kind.apply(old) {
                                Some(v) => val[w] = v,
                                None => return, // a CAS guessed to succeed reads a mismatch
                            }
                        }
                        _ => val[w] = e.value,
                    }
                    prev = w;
                }
                let chain: Vec<usize> = std::iter::once(l).chain(order.iter().copied()).collect();
                for (a, &x) in chain.iter().enumerate() {
                    for &y in &chain[a + 1..] {
                        morel.add(x, y);
                    }
                }
            }
            for &(r, expected) in &self.cas_ok {
                if val[r] != expected {
                    return;
                }
            }
            for (r, e) in self.evs.iter().enumerate() {
                if e.kind == Kind::R && e.pair.is_some() && e.expect.is_some_and(|x| x != val[r]) {
                    return;
                }
            }
            // Position of every write in its location's coherence order.
            let mut pos = vec![0usize; n];
            for order in mo.iter() {
                for (k, &w) in order.iter().enumerate() {
                    pos[w] = k + 1;
                }
            }
            // Per free read, the sources that per-location coherence with
            // the writes of its own thread allows under this mo.
            let free = std::mem::take(&mut self.free);
            let cands: Vec<Vec<usize>> = free
                .iter()
                .map(|f| {
                    f.cands
                        .iter()
                        .copied()
                        .filter(|&w| {
                            f.before_w.iter().all(|&b| pos[w] >= pos[b])
                                && f.after_w.iter().all(|&a| pos[w] < pos[a])
                                && !matches!(f.cas_fail, Some(e) if val[w] == e)
                                && self.evs[f.read].expect.is_none_or(|x| x == val[w])
                        })
                        .collect()
                })
                .collect();
            self.pick(0, &free, &cands, &pos, &mut rf_src, &mut val, &morel, mo, out);
            self.free = free;
        }

        /// Choose the source of free read `k` onwards (depth first), keeping
        /// two reads of one thread and location in coherence order.
        #[allow(clippy::too_many_arguments)]
        fn pick(
            &self,
            k: usize,
            free: &[Free],
            cands: &[Vec<usize>],
            pos: &[usize],
            rf_src: &mut [usize],
            val: &mut [Value],
            morel: &Rel,
            mo: &[&Vec<usize>],
            out: &mut BTreeSet<Outcome>,
        ) {
            let Some(f) = free.get(k) else {
                if self.budget.tick() && self.consistent(rf_src, morel) {
                    out.insert(self.outcome(val, mo));
                }
                return;
            };
            for &w in &cands[k] {
                if f.before_r.iter().any(|&r| pos[w] < pos[rf_src[r]]) {
                    continue;
                }
                rf_src[f.read] = w;
                val[f.read] = val[w];
                self.pick(k + 1, free, cands, pos, rf_src, val, morel, mo, out);
                if self.budget.stopped() {
                    return;
                }
            }
        }

        fn outcome(&self, val: &[Value], mo: &[&Vec<usize>]) -> Outcome {
            let mut o = self.init.clone();
            for (i, e) in self.evs.iter().enumerate() {
                if let (Kind::R, Some(t)) = (e.kind, e.thread) {
                    o.regs[t][e.reg as usize] = val[i];
                }
            }
            for (l, order) in mo.iter().enumerate() {
                if let Some(&w) = order.last() {
                    o.mem[l] = val[w];
                }
            }
            o
        }

        fn consistent(&self, rf_src: &[usize], mo: &Rel) -> bool {
            let n = self.n;
            let mut rf = Rel::empty(n);
            for (r, &w) in rf_src.iter().enumerate() {
                if w != usize::MAX {
                    rf.add(w, r);
                }
            }
            // NO-CAUSALITY-CYCLE (or RC11's NO-THIN-AIR): cheap, first.
            let causal = match self.variant {
                Variant::Rc => self.ppo.union(&rf),
                Variant::Rc11 => self.po.union(&rf),
            };
            if !causal.acyclic() {
                return false;
            }
            let rb = rf.inverse().seq(mo);
            // ATOMICITY
            if !self.rmw.inter(&rb.seq(mo)).is_empty() {
                return false;
            }
            let eco = rf.union(mo).union(&rb).plus();
            // sw = [E⊒rel]; ([F]; po)?; rs; rf; (po; [F])?; [E⊒acq]
            let all = if n == 128 { u128::MAX } else { (1u128 << n) - 1 };
            let po_loc = self.po.inter(&self.sloc);
            let rs = po_loc.opt().restrict(self.set_w, self.set_w).seq(&rf.seq(&self.rmw).plus().opt());
            let left = self.po.restrict(self.set_f, all).opt().restrict(self.set_rel, all);
            let right = self.po.restrict(all, self.set_f).opt().restrict(all, self.set_acq);
            let sw = left.seq(&rs).seq(&rf).seq(&right);
            let hb = self.po.union(&sw).plus();
            // COHERENCE: irreflexive(hb; eco?)
            if !hb.seq(&eco.opt()).irreflexive() {
                return false;
            }
            // SC: acyclic(psc_base ∪ psc_F)
            if self.set_sc != 0 {
                let hb_opt = hb.opt();
                let po_neq = self.po.minus(&self.sloc);
                let scb =
                    self.po.union(&po_neq.seq(&hb).seq(&po_neq)).union(&hb.inter(&self.sloc)).union(mo).union(&rb);
                let sc_id = Rel::id(n, self.set_sc);
                let l = sc_id.union(&hb_opt.restrict(self.set_fsc, all));
                let r = sc_id.union(&hb_opt.restrict(all, self.set_fsc));
                let psc_base = l.seq(&scb).seq(&r);
                let psc_f = hb.union(&hb.seq(&eco).seq(&hb)).restrict(self.set_fsc, self.set_fsc);
                if !psc_base.union(&psc_f).acyclic() {
                    return false;
                }
            }
            true
        }
    }

    #[cfg(test)]
    pub(super) fn rel_selftest() {
        let mut r = Rel::empty(3);
        r.add(0, 1);
        r.add(1, 2);
        assert!(r.plus().has(0, 2));
        assert!(r.acyclic());
        r.add(2, 0);
        assert!(!r.acyclic());
        assert!(r.inverse().has(1, 0));
        assert!(Rel::id(3, 0b101).has(2, 2));
    }
}

// ---------------------------------------------------------------------------
// General code: specialisation to straight-line programs.

/// Programs with code ([`Program::code`]: register arithmetic, data and
/// control dependencies, `if`/`else`) run by specialisation: every read's
/// value is guessed from a finite domain (the initial values and every value
/// a write can write given guesses from the domain, to a fixpoint); a guess
/// per read fixes each thread's path, its written values and its final
/// registers, giving a straight-line program. Each combination of threads'
/// straight lines runs on the model with the constraint that every read
/// returns its guess (and, under RC, with the dependencies in preserved
/// program order); the outcomes, with the registers of the guesses, are
/// those of the program.
mod general {
    use super::*;
    use crate::programs::{RmwExp, Stmt};

    /// At most this many distinct values a read may return.
    const MAX_VALUES: usize = 16;
    /// At most this many straight lines per thread and combinations in all.
    const MAX_TRACES: usize = 100_000;

    struct Trace {
        ops: Vec<Op>,
        expect: Vec<Option<Value>>,
        deps: Vec<(usize, usize)>,
        regs: Vec<Value>,
    }

    #[derive(Clone)]
    struct St {
        regs: Vec<Value>,
        /// Per register: the reads (op indices) its value depends on.
        taint: Vec<Vec<usize>>,
        /// Reads that the path so far depends on (control dependencies).
        ctrl: Vec<usize>,
        ops: Vec<Op>,
        expect: Vec<Option<Value>>,
        deps: Vec<(usize, usize)>,
    }

    impl St {
        fn taint_of(&self, e: &crate::programs::Exp) -> Vec<usize> {
            let mut rs = Vec::new();
            e.regs(&mut rs);
            let mut t: Vec<usize> = rs.iter().flat_map(|&r| self.taint[r as usize].iter().copied()).collect();
            t.sort_unstable();
            t.dedup();
            t
        }

        /// The op about to be pushed depends on `data` and the control.
        fn depend(&mut self, data: &[usize]) {
            let i = self.ops.len();
            let mut d: Vec<usize> = data.iter().chain(&self.ctrl).copied().collect();
            d.sort_unstable();
            d.dedup();
            self.deps.extend(d.into_iter().map(|r| (r, i)));
        }

        fn set(&mut self, reg: Option<u8>, v: Value, taint: Vec<usize>) {
            if let Some(r) = reg {
                self.regs[r as usize] = v;
                self.taint[r as usize] = taint;
            }
        }
    }

    /// Every path through a thread: one per value each read may return
    /// (`domain[loc]`).
    fn traces(code: &[Stmt], nregs: usize, domain: &[Vec<Value>]) -> Result<Vec<Trace>, String> {
        let st = St {
            regs: vec![0; nregs],
            taint: vec![Vec::new(); nregs],
            ctrl: Vec::new(),
            ops: Vec::new(),
            expect: Vec::new(),
            deps: Vec::new(),
        };
        let mut out = Vec::new();
        let stack: Vec<&Stmt> = code.iter().rev().collect();
        exec(stack, st, domain, &mut out)?;
        Ok(out)
    }

    fn exec(mut stack: Vec<&Stmt>, mut st: St, domain: &[Vec<Value>], out: &mut Vec<Trace>) -> Result<(), String> {
        while let Some(s) = stack.pop() {
            match s {
                Stmt::Assign { reg, value } => {
                    let t = st.taint_of(value);
                    let v = value.eval(&st.regs);
                    st.set(Some(*reg), v, t);
                }
                Stmt::Fence { order } => {
                    st.ops.push(Op::Fence { order: *order });
                    st.expect.push(None);
                }
                Stmt::Store { loc, value, order } => {
                    let t = st.taint_of(value);
                    st.depend(&t);
                    st.ops.push(Op::Store { loc: *loc, value: value.eval(&st.regs), order: *order });
                    st.expect.push(None);
                }
                Stmt::If { cond, then, otherwise } => {
                    let t = st.taint_of(cond);
                    st.ctrl.extend(t);
                    st.ctrl.sort_unstable();
                    st.ctrl.dedup();
                    let branch = if cond.eval(&st.regs) != 0 { then } else { otherwise };
                    stack.extend(branch.iter().rev());
                }
                Stmt::Load { loc, .. } | Stmt::Rmw { loc, .. } => {
                    // A read: one path per value it may return.
                    for &v in &domain[*loc as usize] {
                        let mut n = st.clone();
                        let i = n.ops.len();
                        match s {
                            Stmt::Load { loc, reg, order } => {
                                n.ops.push(Op::Load { loc: *loc, reg: reg.unwrap_or(0), order: *order });
                                n.set(*reg, v, vec![i]);
                            }
                            Stmt::Rmw { loc, reg, op, order } => {
                                let (kind, data, dest) = match op {
                                    RmwExp::FetchAdd(e) => (RmwKind::FetchAdd(e.eval(&n.regs)), n.taint_of(e), *reg),
                                    RmwExp::Exchange(e) => (RmwKind::Exchange(e.eval(&n.regs)), n.taint_of(e), *reg),
                                    RmwExp::CompareExchange { expected, new, .. } => {
                                        let mut d = n.taint_of(new);
                                        d.extend(n.taint[*expected as usize].iter().copied());
                                        let kind = RmwKind::CompareExchange {
                                            expected: n.regs[*expected as usize],
                                            new: new.eval(&n.regs),
                                        };
                                        (kind, d, Some(*expected))
                                    }
                                };
                                n.depend(&data);
                                n.ops.push(Op::Rmw { loc: *loc, reg: dest.unwrap_or(0), kind, order: *order });
                                if let RmwExp::CompareExchange { result, .. } = op {
                                    let ok = matches!(kind, RmwKind::CompareExchange { expected, .. } if expected == v);
                                    n.set(*result, ok as Value, vec![i]);
                                }
                                n.set(dest, v, vec![i]);
                            }
                            _ => unreachable!("a read"),
                        }
                        n.expect.push(Some(v));
                        exec(stack.clone(), n, domain, out)?;
                        if out.len() > MAX_TRACES {
                            return Err(format!("more than {MAX_TRACES} paths through one thread"));
                        }
                    }
                    return Ok(());
                }
            }
        }
        out.push(Trace { ops: st.ops, expect: st.expect, deps: st.deps, regs: st.regs });
        Ok(())
    }

    /// The values a read of each location may return: a fixpoint from the
    /// initial values, adding every value a path writes there.
    fn domain(p: &Program, code: &[Vec<Stmt>]) -> Result<Vec<Vec<Value>>, String> {
        let mut d: Vec<BTreeSet<Value>> = p.init.iter().map(|&v| BTreeSet::from([v])).collect();
        for _ in 0..16 {
            let dv: Vec<Vec<Value>> = d.iter().map(|s| s.iter().copied().collect()).collect();
            let mut w = d.clone();
            for (t, c) in code.iter().enumerate() {
                for tr in traces(c, p.registers[t].len(), &dv)? {
                    for (op, e) in tr.ops.iter().zip(&tr.expect) {
                        match *op {
                            Op::Store { loc, value, .. } => {
                                w[loc as usize].insert(value);
                            }
                            Op::Rmw { loc, kind, .. } => {
                                if let Some(v) = e.and_then(|old| kind.apply(old)) {
                                    w[loc as usize].insert(v);
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            if w.iter().any(|s| s.len() > MAX_VALUES) {
                return Err(format!(
                    "{}: reads may return more than {MAX_VALUES} distinct values (register arithmetic): \
                     too large for the oracle",
                    p.name
                ));
            }
            if w == d {
                return Ok(dv);
            }
            d = w;
        }
        Err(format!("{}: the values written do not reach a fixpoint: too large for the oracle", p.name))
    }

    pub(super) fn outcomes(
        p: &Program,
        code: &[Vec<Stmt>],
        m: Model,
        budget: &Budget,
    ) -> Result<BTreeSet<Outcome>, String> {
        let dom = domain(p, code)?;
        let per: Vec<Vec<Trace>> = code
            .iter()
            .enumerate()
            .map(|(t, c)| traces(c, p.registers[t].len(), &dom))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{}: {e}: too large for the oracle", p.name))?;
        let total = per.iter().try_fold(1usize, |a, t| a.checked_mul(t.len()).filter(|&n| n <= MAX_TRACES));
        if total.is_none() {
            return Err(format!(
                "{}: more than {MAX_TRACES} combinations of paths through the threads: too large for the oracle",
                p.name
            ));
        }
        let mut out = BTreeSet::new();
        let mut choice = vec![0usize; per.len()];
        if per.iter().any(Vec::is_empty) {
            return Ok(out);
        }
        loop {
            let traces: Vec<&Trace> = per.iter().zip(&choice).map(|(t, &c)| &t[c]).collect();
            let sp = Program {
                name: p.name.clone(),
                locations: p.locations.clone(),
                init: p.init.clone(),
                threads: traces.iter().map(|t| t.ops.clone()).collect(),
                registers: p.registers.clone(),
                condition: p.condition.clone(),
                code: None,
            };
            let spec = Spec {
                expect: traces.iter().map(|t| t.expect.clone()).collect(),
                deps: traces.iter().map(|t| t.deps.clone()).collect(),
            };
            let got = match m {
                Model::Sc => operational(&sp, false, budget, Some(&spec)),
                Model::Tso => operational(&sp, true, budget, Some(&spec)),
                Model::Rc => rc::outcomes(&sp, rc::Variant::Rc, budget, Some(&spec))?,
            };
            for mut o in got {
                o.regs = traces.iter().map(|t| t.regs.clone()).collect();
                out.insert(o);
            }
            if budget.stopped() {
                return Ok(out);
            }
            let mut k = 0;
            loop {
                if k == choice.len() {
                    return Ok(out);
                }
                choice[k] += 1;
                if choice[k] < per[k].len() {
                    break;
                }
                choice[k] = 0;
                k += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::programs::litmus::parse;

    fn outcomes(src: &str, m: Model) -> Vec<String> {
        let p = parse(src, "t.litmus").unwrap();
        outcome_strings(&p, &allowed_outcomes(&p, m))
    }

    #[test]
    fn relations() {
        rc::rel_selftest();
    }

    /// RC11 (with its NO-THIN-AIR axiom) allows a subset of our RC, and
    /// among the repository's litmus tests they differ exactly on LB.
    #[test]
    fn rc_only_adds_load_buffering_to_rc11() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/fabricsim/litmus");
        let mut differ = Vec::new();
        let mut n = 0;
        for dir in [root.clone(), root.join("extra")] {
            for f in std::fs::read_dir(&dir).unwrap() {
                let f = f.unwrap().path();
                if f.extension().and_then(|e| e.to_str()) != Some("litmus") {
                    continue;
                }
                let p = crate::programs::litmus::parse_file(&f).unwrap();
                let limits = Limits::unbounded();
                let ours = rc::outcomes(&p, rc::Variant::Rc, &Budget::new(&limits), None).unwrap();
                let rc11 = rc::outcomes(&p, rc::Variant::Rc11, &Budget::new(&limits), None).unwrap();
                assert!(rc11.is_subset(&ours), "{}", p.name);
                if rc11 != ours {
                    differ.push(p.name.clone());
                }
                n += 1;
            }
        }
        assert!(n >= 6);
        assert_eq!(differ, vec!["LB".to_string()]);
    }

    #[test]
    fn model_names() {
        for m in Model::ALL {
            assert_eq!(m.name().parse::<Model>().unwrap(), m);
        }
        assert_eq!("TSO".parse::<Model>().unwrap(), Model::Tso);
        assert!("pso".parse::<Model>().unwrap_err().contains("sc, tso or rc"));
    }

    const SB: &str = "C SB\n{ [x]=0; [y]=0; }\n\
        P0(atomic_int* x, atomic_int* y) { atomic_store_explicit(x, 1, memory_order_relaxed); int r0 = atomic_load_explicit(y, memory_order_relaxed); }\n\
        P1(atomic_int* x, atomic_int* y) { atomic_store_explicit(y, 1, memory_order_relaxed); int r0 = atomic_load_explicit(x, memory_order_relaxed); }\n\
        exists (0:r0=0 /\\ 1:r0=0)\n";

    #[test]
    fn store_buffering_outcome_sets() {
        let sc = outcomes(SB, Model::Sc);
        assert_eq!(sc, vec!["0:r0=0; 1:r0=1; x=1; y=1;", "0:r0=1; 1:r0=0; x=1; y=1;", "0:r0=1; 1:r0=1; x=1; y=1;"]);
        let mut tso = sc.clone();
        tso.insert(0, "0:r0=0; 1:r0=0; x=1; y=1;".to_string());
        assert_eq!(outcomes(SB, Model::Tso), tso);
        assert_eq!(outcomes(SB, Model::Rc), tso);
    }

    #[test]
    fn verdicts_by_quantifier() {
        let p = parse(SB, "sb").unwrap();
        let v = verdict(&p, Model::Sc);
        assert!(!v.allowed && !v.condition_holds && v.matching == 0 && v.outcomes == 3);
        let v = verdict(&p, Model::Tso);
        assert!(v.allowed && v.condition_holds && v.matching == 1);
        let mut q = p.clone();
        q.condition.quantifier = Quantifier::NotExists;
        let v = verdict(&q, Model::Tso);
        assert!(v.allowed && !v.condition_holds);
        let v = verdict(&q, Model::Sc);
        assert!(!v.allowed && v.condition_holds);
        q.condition.quantifier = Quantifier::Forall;
        q.condition.expr = crate::programs::Expr::LocEq { loc: 0, value: 1 };
        let v = verdict(&q, Model::Rc);
        assert!(v.allowed && v.condition_holds && v.matching == 4);
    }

    fn verdict_str(src: &str, m: Model) -> &'static str {
        verdict(&parse(src, "t.litmus").unwrap(), m).as_str()
    }

    /// LB whose writes depend on the reads: `dep` is the second half of
    /// each thread.
    fn lb_with(dep0: &str, dep1: &str) -> String {
        format!(
            "C LB+deps\n{{}}\n\
             P0(atomic_int* x, atomic_int* y) {{ int r0 = atomic_load_explicit(x, memory_order_relaxed); {dep0} }}\n\
             P1(atomic_int* x, atomic_int* y) {{ int r1 = atomic_load_explicit(y, memory_order_relaxed); {dep1} }}\n\
             exists (0:r0=1 /\\ 1:r1=1)\n"
        )
    }

    #[test]
    fn control_dependencies_forbid_load_buffering_under_rc() {
        // P1 writes x=1 on both branches (so 1 is not out of thin air): still
        // a control dependency, as in herd's models.
        let ctrl = lb_with("if (r0 == 1) { *y = 1; }", "if (r1 == 1) { *x = 1; } else { *x = 1; }");
        for m in Model::ALL {
            assert_eq!(verdict_str(&ctrl, m), "forbidden", "{m}");
        }
        // Without the dependency RC allows LB; with the branch on one side only, too.
        let plain = lb_with("*y = 1;", "*x = 1;");
        assert_eq!(verdict_str(&plain, Model::Rc), "allowed");
        let one = lb_with("if (r0 == 1) { *y = 1; }", "*x = 1;");
        assert_eq!(verdict_str(&one, Model::Rc), "allowed");
        assert_eq!(verdict_str(&one, Model::Tso), "forbidden");
        // The outcomes of the branches: under SC, r0=1 needs P1's write.
        assert_eq!(outcomes(&ctrl, Model::Sc), vec!["0:r0=0; 1:r1=0; x=1; y=0;", "0:r0=1; 1:r1=0; x=1; y=1;"]);
        // Values out of thin air never appear: with no write of 1 on any
        // path from the initial state, no read returns 1.
        let oota = lb_with("if (r0 == 1) { *y = 1; }", "if (r1 == 1) { *x = 1; }");
        assert_eq!(outcomes(&oota, Model::Rc), vec!["0:r0=0; 1:r1=0; x=0; y=0;"]);
        assert_eq!(outcomes(&one, Model::Sc), vec!["0:r0=0; 1:r1=0; x=1; y=0;", "0:r0=1; 1:r1=0; x=1; y=1;"]);
    }

    #[test]
    fn data_dependencies_forbid_load_buffering_under_rc() {
        // False dependencies (`r & 0`) are dependencies, as in herd's models.
        let data = lb_with("*y = (r0 & 0) + 1;", "*x = (r1 & 0) + 1;");
        assert_eq!(verdict_str(&data, Model::Rc), "forbidden");
        assert_eq!(verdict_str(&data, Model::Sc), "forbidden");
        let one = lb_with("*y = (r0 & 0) + 1;", "*x = 1;");
        assert_eq!(verdict_str(&one, Model::Rc), "allowed");
        // Values flow through registers into memory.
        let src = "C T\n{ x=3; }\nP0(atomic_int* x, atomic_int* y) { int r0 = atomic_load_explicit(x, memory_order_relaxed); \
                   atomic_store_explicit(y, r0 * 2 + 1, memory_order_relaxed); }\n\
                   P1(atomic_int* x) { *x = 5; }\nexists (y=11)\n";
        for m in Model::ALL {
            assert_eq!(outcomes(src, m), vec!["0:r0=3; x=5; y=7;", "0:r0=5; x=5; y=11;"], "{m}");
        }
    }

    #[test]
    fn register_arithmetic_and_else_branches_give_final_registers() {
        let src = "C T\n{}\nP0(atomic_int* x) { r0 = atomic_load_explicit(x, memory_order_acquire); \
                   if (r0) { r1 = r0 * 10 + 2; } else { r1 = 7; r2 = -1; } }\n\
                   P1(atomic_int* x) { atomic_store_explicit(x, 4, memory_order_release); }\nexists (0:r1=42)\n";
        for m in Model::ALL {
            assert_eq!(outcomes(src, m), vec!["0:r0=0; 0:r1=7; 0:r2=-1; x=4;", "0:r0=4; 0:r1=42; 0:r2=0; x=4;"]);
        }
        // A compare-exchange's boolean result, and the old value in its expected register.
        let src =
            "C T\n{ x=1; }\nP0(atomic_int* x) { int e = 1; int ok = atomic_compare_exchange_strong(x, &e, 5); }\n\
                   P1(atomic_int* x) { atomic_store(x, 2); }\nexists (0:ok=1)\n";
        for m in Model::ALL {
            assert_eq!(outcomes(src, m), vec!["0:e=1; 0:ok=1; x=2;", "0:e=2; 0:ok=0; x=2;"], "{m}");
        }
    }

    #[test]
    fn unassigned_results_are_not_outcomes() {
        // Two increments whose old values nobody reads: one outcome, x=2.
        let src = "C T\n{}\nP0(atomic_int* x) { atomic_fetch_add_explicit(x, 1, memory_order_relaxed); }\n\
                   P1(atomic_int* x) { atomic_fetch_add_explicit(x, 1, memory_order_relaxed); }\nexists (x=2)\n";
        for m in Model::ALL {
            assert_eq!(outcomes(src, m), vec!["x=2;"], "{m}");
            assert_eq!(verdict(&parse(src, "t").unwrap(), m).outcomes, 1);
        }
    }

    #[test]
    fn seq_cst_store_buffering_under_tso_follows_the_mapping() {
        let sb_sc = SB.replace("memory_order_relaxed", "memory_order_seq_cst");
        let p = parse(&sb_sc, "sb").unwrap();
        let standard = compile(&p, Model::Tso, Mapping::Standard);
        assert_eq!(standard.threads[0][1], Op::Fence { order: Order::SeqCst });
        assert_eq!(verdict(&standard, Model::Tso).as_str(), "forbidden");
        let plain = compile(&p, Model::Tso, Mapping::Plain);
        assert_eq!(plain, p);
        assert_eq!(verdict(&plain, Model::Tso).as_str(), "allowed");
        // The same in general code (a branch around the store), and only under TSO.
        let branchy = sb_sc.replace(
            "atomic_store_explicit(x, 1, memory_order_seq_cst);",
            "if (1) { atomic_store_explicit(x, 1, memory_order_seq_cst); }",
        );
        let q = parse(&branchy, "sb").unwrap();
        assert!(q.code.is_some());
        assert_eq!(verdict(&compile(&q, Model::Tso, Mapping::Standard), Model::Tso).as_str(), "forbidden");
        assert_eq!(verdict(&compile(&q, Model::Tso, Mapping::Plain), Model::Tso).as_str(), "allowed");
        assert_eq!(compile(&p, Model::Rc, Mapping::Standard), p);
        assert_eq!("PLAIN".parse::<Mapping>().unwrap(), Mapping::Plain);
        assert!("x".parse::<Mapping>().unwrap_err().contains("standard or plain"));
    }

    #[test]
    fn json_report() {
        let p = parse(SB, "sb").unwrap();
        let j = report_json(&p, Model::Tso);
        assert_eq!(j["test"], "SB");
        assert_eq!(j["model"], "tso");
        assert_eq!(j["verdict"], "allowed");
        assert_eq!(j["allowed"].as_array().unwrap().len(), 4);
        assert_eq!(j["allowed"][0], "0:r0=0; 1:r0=0; x=1; y=1;");
        assert_eq!(j["matching"][0], "0:r0=0; 1:r0=0; x=1; y=1;");
        assert_eq!(j["condition"], "exists (0:r0=0 /\\ 1:r0=0)");
        assert_eq!(j["condition_holds"], true);
        assert_eq!(report_json(&p, Model::Sc)["verdict"], "forbidden");
    }
}
