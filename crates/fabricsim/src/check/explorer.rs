//! Exhaustive, breadth-first exploration of a protocol's reachable states.
//!
//! Breadth-first, so the first violation found has a shortest trace. Per
//! visited state the explorer keeps a fingerprint of its symmetry orbit in
//! a sharded visited set and its parent and rule in a compact tree
//! (`store`); only the frontier (one breadth-first layer, in flat arrays
//! of full states) is held whole. A counterexample is rebuilt by
//! re-executing the rules from the initial state.
//!
//! Parallel, level-synchronous and deterministic. A layer is cut into
//! chunks of consecutive states. (A) Threads expand chunks: each state's
//! enabled transitions in a fixed order, their successors' orbit
//! fingerprints, and the successors not in the visited set as it was
//! before this layer (the set is only read). (B) Each thread owns some
//! shards of the set and inserts, in the layer's order, the candidates that
//! fall in its shards; the first occurrence of a fingerprint wins, as it
//! would in a sequential search. (C) Threads rebuild the new states from
//! their parents (one transition each) into the next layer, freeing the
//! chunks they are done with. State numbers, the tree, the counts, the
//! first violation and its trace are those of the sequential breadth-first
//! search, whatever the number of threads; `threads = 1` runs the same
//! phases on the calling thread.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::json;

use super::store::{split, Tree, Visited, FINGERPRINT_BITS};
use super::symmetry::{Canon, Mode};
use super::world::{Label, World};
use crate::agents::protocol::{Protocol, Violation};

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Stop after this many states (the result says the search was cut).
    pub max_states: Option<u64>,
    /// Do not expand states deeper than this.
    pub max_depth: Option<u32>,
    /// Report states where work is pending but only environment actions
    /// (or nothing) can happen.
    pub check_deadlock: bool,
    /// Polled about every thousand states; when it asks, the search stops
    /// and the report says `interrupted` (and not `complete`).
    pub stop: super::Stop,
    /// Worker threads; 0 means one per core. The result does not depend on it.
    pub threads: usize,
    /// How symmetric states are reduced (when the protocol declares
    /// scalarsets).
    pub symmetry: SymmetryMode,
}

/// [`Mode`], with a default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymmetryMode(pub Mode);

impl Default for SymmetryMode {
    fn default() -> Self {
        SymmetryMode(Mode::Sorted)
    }
}

impl Options {
    /// The number of threads these options ask for.
    pub fn thread_count(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }
}

/// A violation and the shortest execution that reaches it.
#[derive(Debug, Clone)]
pub struct Counterexample {
    pub kind: String,
    pub detail: String,
    pub steps: Vec<TraceStep>,
}

#[derive(Debug, Clone)]
pub struct TraceStep {
    pub step: usize,
    /// "deliver" or "action".
    pub what: &'static str,
    pub from: Option<String>,
    pub agent: String,
    pub event: String,
    pub before: String,
    pub after: String,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub protocol: String,
    pub states: u64,
    pub transitions: u64,
    pub depth: u32,
    pub seconds: f64,
    pub peak_rss_kb: u64,
    /// Whether every reachable state was visited (no bound was hit).
    pub complete: bool,
    pub violation: Option<Counterexample>,
    /// Quiescent states with no enabled transition (for litmus outcomes).
    pub final_states: u64,
    /// Stopped from outside (Ctrl-C) before the search finished.
    pub interrupted: bool,
    /// Whether states were reduced by symmetry (`states` counts orbits).
    pub symmetry: bool,
    /// Worker threads used.
    pub threads: usize,
}

impl Report {
    pub fn states_per_s(&self) -> f64 {
        self.states as f64 / self.seconds.max(1e-9)
    }

    /// Upper bound on the probability that hash compaction omitted a state
    /// (two of `n` states with equal stored fingerprints: n^2 / 2^(b+1)).
    pub fn omission_bound(&self) -> f64 {
        let n = self.states as f64;
        n * n / 2f64.powi(FINGERPRINT_BITS + 1)
    }

    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "protocol": self.protocol,
            "ok": self.violation.is_none(),
            "complete": self.complete,
            "interrupted": self.interrupted,
            "states": self.states,
            "transitions": self.transitions,
            "depth": self.depth,
            "seconds": self.seconds,
            "states_per_s": self.states_per_s(),
            "peak_rss_kb": self.peak_rss_kb,
            "omission_probability_bound": self.omission_bound(),
            "symmetry": self.symmetry,
            "threads": self.threads,
            "violation": self.violation.as_ref().map(|v| json!({
                "kind": v.kind,
                "detail": v.detail,
                "trace": v.steps.iter().map(|s| json!({
                    "step": s.step, "what": s.what, "from": s.from, "agent": s.agent,
                    "event": s.event, "before": s.before, "after": s.after,
                })).collect::<Vec<_>>(),
            })),
        })
    }

    /// The counterexample as text: one line per step.
    pub fn trace_text(&self) -> String {
        let Some(v) = &self.violation else { return String::new() };
        let mut s = format!("{}: {}\n", v.kind, v.detail);
        for t in &v.steps {
            let who = match &t.from {
                Some(f) => format!("{f} -> {}", t.agent),
                None => t.agent.clone(),
            };
            s += &format!(
                "{:>4}  {:<22} {}\n        before: {}\n        after:  {}\n",
                t.step, who, t.event, t.before, t.after
            );
        }
        s
    }
}

/// Peak resident memory of this process, in KiB (Linux; 0 elsewhere).
pub fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Resident memory of this process now, in KiB (Linux; 0 elsewhere).
fn current_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// A protocol the explorer can run on several threads (every protocol
/// whose parts are plain data).
pub trait Checkable:
    Protocol<Agent: Send + Sync, Msg: Send + Sync, Ghost: Send + Sync, Action: Send + Sync> + Sync
{
}
impl<P> Checkable for P where
    P: Protocol<Agent: Send + Sync, Msg: Send + Sync, Ghost: Send + Sync, Action: Send + Sync> + Sync
{
}

/// States per chunk of a layer (the unit of parallel work).
const CHUNK: usize = 2048;

/// A transition as the search names it: deliver message `i` of the state,
/// or fire an agent's action.
#[derive(Debug, Clone, Copy)]
enum Move<A> {
    Deliver(u16),
    Act(u8, A),
}

impl<A: Copy> Move<A> {
    fn label<P: Protocol<Action = A>>(self, w: &World<P>) -> Label<P::Msg, A> {
        match self {
            Move::Deliver(i) => Label::Deliver(w.mail[i as usize]),
            Move::Act(agent, action) => Label::Act { agent, action },
        }
    }
}

/// One part of a breadth-first layer, stored flat (no allocation per
/// state): state `k` (number `first_id + k`) is `ghosts[k]`, the agents in
/// `agents[agent_end[k-1]..agent_end[k]]` and the messages in
/// `mail[mail_end[k-1]..mail_end[k]]`.
struct Layer<P: Protocol> {
    first_id: u32,
    ghosts: Vec<P::Ghost>,
    agents: Vec<P::Agent>,
    agent_end: Vec<u32>,
    mail: Vec<super::world::Envelope<P::Msg>>,
    mail_end: Vec<u32>,
}

impl<P: Protocol> Layer<P> {
    fn new(first_id: u32) -> Self {
        Layer {
            first_id,
            ghosts: Vec::new(),
            agents: Vec::new(),
            agent_end: Vec::new(),
            mail: Vec::new(),
            mail_end: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.ghosts.len()
    }

    fn push(&mut self, w: &World<P>) {
        self.ghosts.push(w.ghost.clone());
        self.agents.extend_from_slice(&w.agents);
        self.agent_end.push(self.agents.len() as u32);
        self.mail.extend_from_slice(&w.mail);
        self.mail_end.push(self.mail.len() as u32);
    }

    /// Append `o` (the next states in number order).
    fn append(&mut self, o: Layer<P>) {
        let (a, m) = (self.agents.len() as u32, self.mail.len() as u32);
        self.ghosts.extend(o.ghosts);
        self.agents.extend(o.agents);
        self.agent_end.extend(o.agent_end.into_iter().map(|e| e + a));
        self.mail.extend(o.mail);
        self.mail_end.extend(o.mail_end.into_iter().map(|e| e + m));
    }

    /// Copy state `k` into `w` (reusing its buffers).
    fn load(&self, k: usize, w: &mut World<P>) {
        let (a0, m0) = if k == 0 { (0, 0) } else { (self.agent_end[k - 1] as usize, self.mail_end[k - 1] as usize) };
        w.agents.clear();
        w.agents.extend_from_slice(&self.agents[a0..self.agent_end[k] as usize]);
        w.mail.clear();
        w.mail.extend_from_slice(&self.mail[m0..self.mail_end[k] as usize]);
        w.ghost.clone_from(&self.ghosts[k]);
    }
}

/// A thread's scratch buffers (reused for every state: a transition
/// allocates nothing).
struct Scratch<P: Protocol> {
    w: World<P>,
    succ: Vec<World<P>>,
    batch: Vec<(Move<P::Action>, bool, u128)>,
    sends: Vec<crate::agents::protocol::Send<P::Msg>>,
    idx: Vec<usize>,
    acts: Vec<P::Action>,
    canon: Canon<P>,
    seen: Seen,
}

/// A successor's orbit fingerprint with its visited-set slot prefetched
/// (0 when no set is consulted).
#[inline]
fn key<P: Protocol>(canon: &mut Canon<P>, p: &P, s: &World<P>, visited: Option<&Visited>) -> u128 {
    match visited {
        Some(v) => {
            let fp = canon.fingerprint(p, s);
            v.prefetch(fp);
            fp
        }
        None => 0,
    }
}

impl<P: Protocol> Scratch<P> {
    fn new(p: &P, w: &World<P>, mode: Mode) -> Self {
        Scratch {
            w: w.clone(),
            succ: Vec::new(),
            batch: Vec::new(),
            sends: Vec::new(),
            idx: Vec::new(),
            acts: Vec::new(),
            canon: Canon::new(p, mode),
            seen: Seen::default(),
        }
    }

    /// Take every enabled transition of `self.w` in the explorer's order
    /// (deliveries, then each agent's actions) up to the first error:
    /// `batch[j]` and `succ[j]` are the j-th enabled one (its move, whether
    /// it is an environment action, its successor's orbit fingerprint when
    /// `fingerprints`); the error, if any, ends the list.
    fn transitions(&mut self, p: &P, visited: Option<&Visited>) -> Option<(Move<P::Action>, Violation)> {
        self.batch.clear();
        self.idx.clear();
        let w = &self.w;
        w.deliverable(p, &mut self.idx);
        for &i in &self.idx {
            let b = self.batch.len();
            if self.succ.len() == b {
                self.succ.push(w.clone());
            }
            let mv = Move::Deliver(i as u16);
            match w.deliver_into(p, i, &mut self.sends, &mut self.succ[b]) {
                Ok(true) => {
                    let fp = key(&mut self.canon, p, &self.succ[b], visited);
                    self.batch.push((mv, false, fp));
                }
                Ok(false) => {}
                Err(v) => return Some((mv, v)),
            }
        }
        for a in 0..w.agents.len() {
            self.acts.clear();
            p.actions(&w.agents[a], a as u8, &w.ghost, &mut self.acts);
            for &action in &self.acts {
                let b = self.batch.len();
                if self.succ.len() == b {
                    self.succ.push(w.clone());
                }
                let mv = Move::Act(a as u8, action);
                match w.act_into(p, a as u8, action, &mut self.sends, &mut self.succ[b]) {
                    Ok(true) => {
                        let fp = key(&mut self.canon, p, &self.succ[b], visited);
                        self.batch.push((mv, p.is_environment(&action), fp));
                    }
                    Ok(false) => {}
                    Err(v) => return Some((mv, v)),
                }
            }
        }
        None
    }

    /// Take move `mv` from `self.w` into `self.succ[0]`.
    fn take(&mut self, p: &P, mv: Move<P::Action>) {
        if self.succ.is_empty() {
            self.succ.push(self.w.clone());
        }
        let ok = match mv {
            Move::Deliver(i) => self.w.deliver_into(p, i as usize, &mut self.sends, &mut self.succ[0]),
            Move::Act(a, action) => self.w.act_into(p, a, action, &mut self.sends, &mut self.succ[0]),
        };
        debug_assert!(matches!(ok, Ok(true)), "a move taken during the search is taken again");
    }
}

/// A successor not in the visited set before its layer (nor earlier in
/// its chunk).
struct Cand<A> {
    /// Its fingerprint's key and shard (`store::split`).
    key: u64,
    shard: u8,
    /// It violates an invariant.
    bad: bool,
    /// Its parent's index in the chunk (chunks hold at most `CHUNK` states).
    state: u16,
    /// The index of its rule among its parent's enabled transitions.
    rule: u32,
    mv: Move<A>,
}

/// The fingerprints met in one chunk (to drop repeated successors early):
/// open addressing, cleared per chunk.
#[derive(Default)]
struct Seen {
    slots: Vec<u128>,
    len: usize,
    zero: bool,
}

impl Seen {
    fn clear(&mut self) {
        if self.len > 0 {
            self.slots.iter_mut().for_each(|s| *s = 0);
            self.len = 0;
        }
        self.zero = false;
    }

    /// Add `fp`; true if it is new.
    fn insert(&mut self, fp: u128) -> bool {
        if fp == 0 {
            return !std::mem::replace(&mut self.zero, true);
        }
        if (self.len + 1) * 2 > self.slots.len() {
            let n = (self.slots.len() * 2).max(1 << 12);
            let old = std::mem::replace(&mut self.slots, vec![0; n]);
            self.len = 0;
            for f in old.into_iter().filter(|&f| f != 0) {
                self.insert(f);
            }
        }
        let mask = self.slots.len() - 1;
        let mut i = (fp >> 64) as usize & mask;
        loop {
            match self.slots[i] {
                0 => {
                    self.slots[i] = fp;
                    self.len += 1;
                    return true;
                }
                f if f == fp => return false,
                _ => i = (i + 1) & mask,
            }
        }
    }
}

/// What stops the search at a state of a chunk (besides an invariant).
enum Event {
    /// A transition failed (kind, detail), after the state's enabled ones.
    Failed(String, String),
    /// Only environment actions (or nothing) can happen while work is pending.
    Deadlock(String),
}

/// Phase A's result for one chunk.
struct Expanded<P: Protocol> {
    cands: Vec<Cand<P::Action>>,
    /// Per state expanded: the end of its candidates and of its
    /// transitions (counted from the chunk's start).
    ends: Vec<(u32, u64)>,
    /// Quiescent states with no successor: (index in chunk, state).
    finals: Vec<(u32, World<P>)>,
    /// The first event, at state `.0`; the chunk's later states are not expanded.
    event: Option<(u32, Event)>,
}

impl<P: Protocol> Default for Expanded<P> {
    fn default() -> Self {
        Expanded { cands: Vec::new(), ends: Vec::new(), finals: Vec::new(), event: None }
    }
}

/// Phase C's result for one chunk: the new states (in parts of at most
/// `CHUNK`) and their (parent, rule) in order.
type Built<P> = (Vec<Layer<P>>, Vec<(u32, u32)>);

/// Phase A for one chunk.
fn expand<P: Protocol>(p: &P, opts: &Options, layer: &Layer<P>, visited: &Visited, s: &mut Scratch<P>) -> Expanded<P> {
    let mut out = Expanded::default();
    let mut transitions = 0u64;
    s.seen.clear();
    for k in 0..layer.len() {
        layer.load(k, &mut s.w);
        let failed = s.transitions(p, Some(visited));
        let mut progress = false;
        for (j, &(mv, env, fp)) in s.batch.iter().enumerate() {
            transitions += 1;
            progress |= !env;
            if !visited.contains(fp) && s.seen.insert(fp) {
                let n = &s.succ[j];
                let bad = p.invariant(&n.agents, &n.ghost).is_err();
                let (shard, key) = split(fp);
                out.cands.push(Cand { key, shard: shard as u8, bad, state: k as u16, rule: j as u32, mv });
            }
        }
        out.ends.push((out.cands.len() as u32, transitions));
        if let Some((_, v)) = failed {
            out.event = Some((k as u32, Event::Failed(v.kind.to_string(), v.detail)));
            break;
        }
        let quiet = s.w.quiescent(p);
        if s.batch.is_empty() && quiet {
            out.finals.push((k as u32, s.w.clone()));
        } else if opts.check_deadlock && !progress && !quiet {
            let w = &s.w;
            out.event = Some((
                k as u32,
                Event::Deadlock(format!(
                    "work is pending ({} messages in flight, {} agents waiting) and nothing but new requests can happen",
                    w.mail.len(),
                    w.agents.iter().filter(|a| p.busy(a)).count()
                )),
            ));
            break;
        }
    }
    out
}

/// Run `f(i, scratch)` for every `i < n` on `threads` threads (each with
/// its own scratch), handing out indices in order; the results by index.
fn parallel<P: Checkable, T, F>(p: &P, threads: usize, n: usize, mode: Mode, init: &World<P>, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize, &mut Scratch<P>) -> T + Sync,
{
    let results: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        let mut s = Scratch::new(p, init, mode);
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            let r = f(i, &mut s);
            *results[i].lock().expect("no panics while holding") = Some(r);
        }
    };
    if threads <= 1 || n <= 1 {
        work();
    } else {
        // The calling thread works too (it alone polls `Options::stop`,
        // which may only answer there, as Python's signal check does).
        std::thread::scope(|sc| {
            for _ in 1..threads.min(n) {
                sc.spawn(work);
            }
            work();
        });
    }
    results.into_iter().map(|m| m.into_inner().expect("no panics").expect("every index done")).collect()
}

/// Explore every state reachable from the protocol's initial states.
/// `on_final` sees each quiescent state that has no successor, in
/// breadth-first order.
pub fn explore<P: Checkable>(p: &P, opts: &Options, on_final: &mut dyn FnMut(&World<P>)) -> Report {
    let t0 = Instant::now();
    let threads = opts.thread_count();
    let mode = opts.symmetry.0;
    let mut visited = Visited::default();
    let mut tree = Tree::default();
    let inits: Vec<World<P>> = p.initial().into_iter().map(|(a, g)| World::new(a, g)).collect();
    let Some(first) = inits.first() else {
        return Report {
            protocol: p.name(),
            states: 0,
            transitions: 0,
            depth: 0,
            seconds: t0.elapsed().as_secs_f64(),
            peak_rss_kb: peak_rss_kb(),
            complete: true,
            violation: None,
            final_states: 0,
            interrupted: false,
            symmetry: false,
            threads,
        };
    };
    let mut canon = Canon::new(p, mode);
    let symmetry = canon.active();
    // (state, failing transition's rule: the first error after its enabled ones, kind, detail)
    let mut violation: Option<(u32, bool, String, String)> = None;
    let mut frontier = vec![Layer::<P>::new(0)];
    for (i, w) in inits.iter().enumerate() {
        if visited.insert(canon.fingerprint(p, w)) {
            let id = tree.len();
            tree.push_root(i as u32);
            if let Err((k, d)) = p.invariant(&w.agents, &w.ghost) {
                violation.get_or_insert((id, false, k, d));
            }
            frontier[0].push(w);
        }
    }
    let mut transitions = 0u64;
    let mut depth = 0u32;
    let mut complete = true;
    let mut final_states = 0u64;
    let mut interrupted = false;
    let mut expanded = 0u64;
    'search: while frontier.iter().any(|l| l.len() > 0) && violation.is_none() {
        if opts.max_depth.is_some_and(|d| depth >= d) {
            complete = false;
            break;
        }
        let layer_states: usize = frontier.iter().map(Layer::len).sum();
        let t = if layer_states < 2 * CHUNK { 1 } else { threads };
        // Phase A: expand every chunk (the chunks after the first one with
        // an event are not needed, and are skipped).
        let first_event = AtomicUsize::new(usize::MAX);
        let caller = std::thread::current().id();
        let stop = AtomicBool::new(false);
        let parts: Vec<Mutex<Option<Layer<P>>>> = frontier.drain(..).map(|l| Mutex::new(Some(l))).collect();
        let exps: Vec<Expanded<P>> = parallel(p, t, parts.len(), mode, first, |c, s| {
            if c > first_event.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) {
                return Expanded::default();
            }
            if std::thread::current().id() == caller && opts.stop.requested() {
                stop.store(true, Ordering::Relaxed);
                return Expanded::default();
            }
            let guard = parts[c].lock().expect("no panics");
            let e = expand(p, opts, guard.as_ref().expect("chunk present"), &visited, s);
            if e.event.is_some() {
                first_event.fetch_min(c, Ordering::Relaxed);
            }
            e
        });
        if stop.load(Ordering::Relaxed) {
            complete = false;
            interrupted = true;
            break 'search;
        }
        // Candidates up to the first event count.
        let limit: Vec<usize> = exps
            .iter()
            .enumerate()
            .map(|(c, e)| match c.cmp(&first_event.load(Ordering::Relaxed)) {
                std::cmp::Ordering::Greater => 0,
                _ => e.cands.len(),
            })
            .collect();
        // Phase B: insert in order, each thread into its own shards.
        let flags: Vec<Vec<AtomicBool>> =
            limit.iter().map(|&n| (0..n).map(|_| AtomicBool::new(false)).collect()).collect();
        {
            let mut groups: Vec<Vec<&mut super::store::Shard>> = (0..t).map(|_| Vec::new()).collect();
            for (i, s) in visited.shards.iter_mut().enumerate() {
                groups[i % t].push(s);
            }
            let insert = |g: usize, shards: &mut Vec<&mut super::store::Shard>| {
                for (c, e) in exps.iter().enumerate() {
                    for (x, cand) in e.cands[..limit[c]].iter().enumerate() {
                        let sh = cand.shard as usize;
                        if sh % t == g && shards[sh / t].insert(cand.key) {
                            flags[c][x].store(true, Ordering::Relaxed);
                        }
                    }
                }
            };
            if t == 1 {
                insert(0, &mut groups[0]);
            } else {
                std::thread::scope(|sc| {
                    for (g, shards) in groups.iter_mut().enumerate() {
                        let insert = &insert;
                        sc.spawn(move || insert(g, shards));
                    }
                });
            }
        }
        // The sequential order of events: per chunk, per state, its new
        // successors (an invariant stops at the first bad one), then its
        // event, then the bound on states.
        let mut states = tree.len() as u64;
        let mut cut: Option<(usize, usize)> = None; // (chunk, candidates counted)
        let mut new_counts = Vec::with_capacity(exps.len());
        'walk: for (c, e) in exps.iter().enumerate() {
            let mut x = 0usize;
            let mut new = 0u32;
            for (k, &(cend, tend)) in e.ends.iter().enumerate() {
                while x < cend as usize && x < limit[c] {
                    if flags[c][x].load(Ordering::Relaxed) {
                        new += 1;
                        states += 1;
                        if e.cands[x].bad {
                            let before = if k == 0 { 0 } else { e.ends[k - 1].1 };
                            transitions += before + e.cands[x].rule as u64 + 1;
                            violation = Some(((states - 1) as u32, false, String::new(), String::new()));
                            cut = Some((c, x + 1));
                            new_counts.push(new);
                            break 'walk;
                        }
                    }
                    x += 1;
                }
                expanded += 1;
                let event_here = e.event.as_ref().filter(|ev| ev.0 as usize == k);
                let bound = event_here.is_none() && opts.max_states.is_some_and(|m| states >= m);
                if event_here.is_some() || bound {
                    transitions += tend;
                    final_states += e.finals.iter().filter(|f| (f.0 as usize) <= k).count() as u64;
                    for (_, w) in e.finals.iter().filter(|f| (f.0 as usize) <= k) {
                        on_final(w);
                    }
                    if let Some((_, ev)) = event_here {
                        let id = parts[c].lock().expect("no panics").as_ref().expect("chunk").first_id + k as u32;
                        violation = Some(match ev {
                            Event::Failed(kind, detail) => (id, true, kind.clone(), detail.clone()),
                            Event::Deadlock(detail) => (id, false, "deadlock".to_string(), detail.clone()),
                        });
                    }
                    complete = false;
                    cut = Some((c, x));
                    new_counts.push(new);
                    break 'walk;
                }
            }
            transitions += e.ends.last().map_or(0, |l| l.1);
            final_states += e.finals.len() as u64;
            for (_, w) in &e.finals {
                on_final(w);
            }
            new_counts.push(new);
        }
        let _ = expanded;
        if std::env::var_os("FABRICSIM_CHECK_DEBUG").is_some() {
            let cands: usize = exps.iter().map(|e| e.cands.len()).sum();
            eprintln!(
                "depth {depth}: {layer_states} states, {cands} candidates ({} B each), visited {} MB, tree {} MB, rss {} MB",
                std::mem::size_of::<Cand<P::Action>>(),
                visited.bytes() >> 20,
                tree.bytes() >> 20,
                current_rss_kb() >> 10
            );
        }
        // Phase C: the new states, rebuilt from their parents, in order.
        let chunks = new_counts.len();
        let mut bases = Vec::with_capacity(chunks);
        let mut id = tree.len();
        for &n in &new_counts {
            bases.push(id);
            id += n;
        }
        let built: Vec<Built<P>> = parallel(p, t, chunks, mode, first, |c, s| {
            let Some(parent) = parts[c].lock().expect("no panics").take() else { return (Vec::new(), Vec::new()) };
            let e = &exps[c];
            let upto = match cut {
                Some((cc, n)) if cc == c => n,
                _ => limit[c],
            };
            let mut out: Vec<Layer<P>> = Vec::new();
            let mut edges = Vec::new();
            let mut id = bases[c];
            let mut loaded = usize::MAX;
            for (x, cand) in e.cands[..upto].iter().enumerate() {
                if !flags[c][x].load(Ordering::Relaxed) {
                    continue;
                }
                if loaded != cand.state as usize {
                    parent.load(cand.state as usize, &mut s.w);
                    loaded = cand.state as usize;
                }
                s.take(p, cand.mv);
                if out.last().is_none_or(|l| l.len() >= CHUNK) {
                    out.push(Layer::new(id));
                }
                out.last_mut().expect("a part").push(&s.succ[0]);
                edges.push((parent.first_id + cand.state as u32, cand.rule));
                id += 1;
            }
            (out, edges)
        });
        drop(parts);
        for (layers, edges) in built {
            for (parent, rule) in edges {
                tree.push(parent, rule);
            }
            for l in layers {
                match frontier.last_mut() {
                    Some(prev) if prev.len() + l.len() <= CHUNK => prev.append(l),
                    _ => frontier.push(l),
                }
            }
        }
        if cut.is_some() {
            break 'search;
        }
        depth += 1;
    }
    // An invariant found in the walk: its kind and detail, from the state itself.
    let counterexample = violation.map(|(id, failing, kind, detail)| {
        let (steps, found) = rebuild(p, &tree, id, failing);
        let (kind, detail) = if kind.is_empty() {
            found.unwrap_or_else(|| ("invariant".to_string(), "(not reproduced)".to_string()))
        } else {
            (kind, detail)
        };
        Counterexample { kind, detail, steps }
    });
    if counterexample.is_some() {
        complete = false;
    }
    Report {
        protocol: p.name(),
        states: tree.len() as u64,
        transitions,
        depth,
        seconds: t0.elapsed().as_secs_f64(),
        peak_rss_kb: peak_rss_kb(),
        complete,
        violation: counterexample,
        final_states,
        interrupted,
        symmetry,
        threads,
    }
}

/// Re-execute the rules from the initial state to state `id` (and, if
/// `failing`, the state's first failing transition). Also the invariant
/// the last state violates, if any.
fn rebuild<P: Protocol>(p: &P, tree: &Tree, id: u32, failing: bool) -> (Vec<TraceStep>, Option<(String, String)>) {
    let mut rules = Vec::new();
    let mut cur = id;
    let root = loop {
        match tree.get(cur) {
            (Some(parent), rule) => {
                rules.push(rule);
                cur = parent;
            }
            (None, index) => break index,
        }
    };
    rules.reverse();
    let inits: Vec<World<P>> = p.initial().into_iter().map(|(a, g)| World::new(a, g)).collect();
    let mut s = Scratch::new(p, &inits[root as usize], Mode::Sorted);
    let mut steps = Vec::new();
    let mut step = |s: &Scratch<P>, label: Label<P::Msg, P::Action>, after: Option<&World<P>>| {
        let (what, from, agent) = match &label {
            Label::Deliver(e) => ("deliver", Some(p.agent_name(e.from)), e.to),
            Label::Act { agent, .. } => ("action", None, *agent),
        };
        let event = match &label {
            Label::Deliver(e) => format!("{:?}", e.msg),
            Label::Act { action, .. } => format!("{action:?}"),
        };
        steps.push(TraceStep {
            step: steps.len() + 1,
            what,
            from,
            agent: p.agent_name(agent),
            event,
            before: format!("{:?}", s.w.agents[agent as usize]),
            after: after.map_or("(violation)".to_string(), |n| format!("{:?}", n.agents[agent as usize])),
        });
    };
    for rule in rules {
        let failed = s.transitions(p, None);
        debug_assert!(failed.is_none() || (rule as usize) < s.batch.len());
        let (mv, _, _) = s.batch[rule as usize];
        let label = mv.label(&s.w);
        let next = s.succ[rule as usize].clone();
        step(&s, label, Some(&next));
        s.w = next;
    }
    if failing {
        if let Some((mv, _)) = s.transitions(p, None) {
            let label = mv.label(&s.w);
            step(&s, label, None);
        }
    }
    let inv = p.invariant(&s.w.agents, &s.w.ghost).err();
    (steps, inv)
}
