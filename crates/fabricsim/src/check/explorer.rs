//! Exhaustive, breadth-first exploration of a protocol's reachable states.
//!
//! Breadth-first, so the first violation found has a shortest trace. Per
//! visited state the explorer keeps a fingerprint of its symmetry orbit in
//! a sharded visited set and its parent and rule in a compact tree
//! (`store`); only the frontier (one breadth-first layer, and the next as
//! it is found) is held whole, as byte arenas of packed states
//! (`engine::pack`, a few tens of bytes a state). A counterexample is
//! rebuilt by re-executing the rules from the initial state.
//!
//! Parallel, level-synchronous and deterministic. A layer is cut into
//! chunks of consecutive states, and taken a window of chunks at a time
//! (so only one window's candidates are held at once). (A) Threads expand
//! the window's chunks: each state's enabled transitions in a fixed order,
//! their successors' orbit fingerprints, and the successors not in the
//! visited set as it was before this window (the set is only read),
//! packed. (B) Each thread owns some shards of the set and inserts, in the
//! window's order, the candidates that fall in its shards; the first
//! occurrence of a fingerprint wins, as it would in a sequential search.
//! One thread then walks the candidates in order (counts, events, the
//! tree), and (C) threads copy the new states' bytes into the next layer
//! (B and C on one thread for a window of few candidates).
//! State numbers, the tree, the counts, the first violation and its trace
//! are those of the sequential breadth-first search, whatever the number
//! of threads; `threads = 1` runs the same phases on the calling thread.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::json;

use super::disk::{self, DiskOptions, DiskSet, LayerReader, LayerWriter, Manifest};
use super::store::{split, Shard, Tree, Visited, FINGERPRINT_BITS};
use super::symmetry::{Canon, Mode};
use super::world::{Label, World};
use crate::agents::protocol::{Protocol, Violation};
use crate::engine::fingerprint::fingerprint_bytes;
use crate::engine::pack::Pack;

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
    /// Keep the visited set and the frontier on disk, with checkpoints to
    /// resume from (`check::disk`).
    pub disk: Option<DiskOptions>,
    /// Print a line of progress to stderr every [`PROGRESS_EVERY`] seconds.
    pub progress: bool,
    /// Stop (with `Report::out_of_memory`) before the process's resident
    /// memory passes this many bytes, rather than abort on an allocation.
    pub memory_limit: Option<u64>,
}

/// Seconds between progress lines (Murphi prints one every 100,000 states).
pub const PROGRESS_EVERY: f64 = 5.0;

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
    /// With `Options::disk`: the depth the search continued from, if it
    /// resumed a checkpoint; the depth of the checkpoint it leaves, if it
    /// stopped before the end; and what failed, if the disk did.
    pub resumed_from: Option<u32>,
    pub checkpoint: Option<u32>,
    pub disk_error: Option<String>,
    /// Stopped at `Options::memory_limit`: the resident memory then.
    pub out_of_memory: Option<u64>,
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
            "resumed_from_depth": self.resumed_from,
            "checkpoint_depth": self.checkpoint,
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
    crate::engine::process::self_status_kb("VmHWM:")
}

/// Resident memory of this process now, in KiB (Linux; 0 elsewhere).
pub fn current_rss_kb() -> u64 {
    crate::engine::process::self_status_kb("VmRSS:")
}

/// A protocol the explorer can run on several threads (every protocol
/// whose parts are plain data) and whose states pack into bytes.
pub trait Checkable:
    Protocol<Agent: Send + Sync + Pack, Msg: Send + Sync + Pack, Ghost: Send + Sync + Pack, Action: Send + Sync> + Sync
{
}
impl<P> Checkable for P where
    P: Protocol<Agent: Send + Sync + Pack, Msg: Send + Sync + Pack, Ghost: Send + Sync + Pack, Action: Send + Sync>
        + Sync
{
}

/// States per chunk of a layer (the unit of parallel work), at most; a
/// layer is cut into about [`PARTS`] chunks of at least [`MIN_CHUNK`]
/// states, so the threads share a small layer evenly too. (The sizes
/// depend on the layers only, so the search does not depend on the number
/// of threads.)
const CHUNK: usize = 2048;
const MIN_CHUNK: usize = 32;
const PARTS: usize = 64;
/// Chunks per window: a layer is expanded a window at a time, so only one
/// window's candidates are held at once.
const WINDOW: usize = 64;
/// A window's candidates are inserted (phase B) and copied (phase C) on
/// several threads only from this many: a thread's start costs tens of
/// microseconds (more when it must wait for a core), as much as inserting
/// a few hundred candidates.
const PARALLEL_CANDIDATES: usize = 1 << 14;

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

/// Consecutive states of one breadth-first layer, packed back to back
/// (`World::pack`): state `k` is number `first_id + k`.
struct Chunk {
    first_id: u32,
    len: u32,
    bytes: Vec<u8>,
}

/// A breadth-first layer: its chunks in memory, or in a file of the
/// search directory.
enum Layer {
    Memory(Vec<Chunk>),
    Disk { name: String, states: u64, bytes: u64 },
}

impl Layer {
    /// (states, bytes).
    fn size(&self) -> (u64, usize) {
        match self {
            Layer::Memory(chunks) => chunks.iter().fold((0, 0), |(n, b), c| (n + c.len as u64, b + c.bytes.capacity())),
            Layer::Disk { states, bytes, .. } => (*states, *bytes as usize),
        }
    }
}

/// A layer being read, a window of chunks at a time.
enum LayerIn {
    Memory(std::vec::IntoIter<Chunk>),
    Disk(LayerReader),
}

impl LayerIn {
    fn open(layer: Layer, dir: Option<&disk::Dir>) -> Result<(LayerIn, Option<String>), String> {
        Ok(match layer {
            Layer::Memory(chunks) => (LayerIn::Memory(chunks.into_iter()), None),
            Layer::Disk { name, .. } => {
                let d = dir.expect("a layer on disk has a directory");
                (LayerIn::Disk(LayerReader::open(d.path(&name))?), Some(name))
            }
        })
    }

    fn window(&mut self, n: usize) -> Result<Vec<Chunk>, String> {
        match self {
            LayerIn::Memory(it) => Ok(it.by_ref().take(n).collect()),
            LayerIn::Disk(r) => {
                let mut w = Vec::with_capacity(n);
                while w.len() < n {
                    match r.next_chunk()? {
                        Some((first_id, len, bytes)) => w.push(Chunk { first_id, len, bytes }),
                        None => break,
                    }
                }
                Ok(w)
            }
        }
    }
}

/// The next layer being built: chunks in memory, or (but the last,
/// which may still grow) written to its file.
struct LayerOut {
    chunks: Vec<Chunk>,
    file: Option<(String, LayerWriter)>,
}

impl LayerOut {
    fn new(dir: Option<&disk::Dir>, depth: u32) -> Result<LayerOut, String> {
        let file = match dir {
            Some(d) => {
                let name = disk::layer_name(depth);
                Some((name.clone(), LayerWriter::create(d.path(&name))?))
            }
            None => None,
        };
        Ok(LayerOut { chunks: Vec::new(), file })
    }

    /// Add a chunk, merged into the last one while it holds fewer than `chunk` states.
    fn push(&mut self, l: Chunk, chunk: usize) {
        match self.chunks.last_mut() {
            Some(prev) if (prev.len + l.len) as usize <= chunk => {
                prev.bytes.extend_from_slice(&l.bytes);
                prev.len += l.len;
            }
            _ => self.chunks.push(l),
        }
    }

    /// On disk, write every chunk but the last.
    fn spill(&mut self) -> Result<(), String> {
        if let Some((_, w)) = &mut self.file {
            let keep = self.chunks.pop();
            for c in self.chunks.drain(..) {
                w.write(c.first_id, c.len, &c.bytes)?;
            }
            self.chunks.extend(keep);
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Layer, String> {
        match self.file.take() {
            None => {
                for c in &mut self.chunks {
                    c.bytes.shrink_to_fit();
                }
                Ok(Layer::Memory(self.chunks))
            }
            Some((name, mut w)) => {
                for c in self.chunks.drain(..) {
                    w.write(c.first_id, c.len, &c.bytes)?;
                }
                let (states, bytes) = (w.states, w.bytes);
                w.finish()?;
                Ok(Layer::Disk { name, states, bytes })
            }
        }
    }
}

/// Clear the new-flags of the candidates the disk's visited files hold
/// (looked up in sorted order, so the files are read forward).
fn filter_disk<P: Protocol>(
    set: &mut DiskSet,
    exps: &[Expanded<P>],
    limit: &[usize],
    flags: &mut [Vec<u64>],
) -> Result<(), String> {
    let mut q: Vec<(u8, u64, u32, u32)> = Vec::new();
    for (c, e) in exps.iter().enumerate() {
        for (x, cand) in e.cands[..limit[c]].iter().enumerate() {
            if is_new(&flags[c], x) {
                q.push((cand.shard() as u8, cand.key, c as u32, x as u32));
            }
        }
    }
    q.sort_unstable();
    for (shard, key, c, x) in q {
        if set.contains(shard as usize, key)? {
            flags[c as usize][x as usize / 64] &= !(1 << (x % 64));
        }
    }
    Ok(())
}

/// The state's orbit fingerprint: with symmetry, the canonical one;
/// without, that of its packed bytes (left in `buf`).
fn orbit<P: Checkable>(canon: &mut Canon<P>, p: &P, w: &World<P>, buf: &mut Vec<u8>) -> u128 {
    buf.clear();
    w.pack(buf);
    if canon.active() {
        canon.fingerprint(p, w)
    } else {
        fingerprint_bytes(buf)
    }
}

/// A thread's scratch buffers (reused for every state: a transition
/// allocates nothing).
struct Scratch<P: Protocol> {
    /// The state being expanded, and a copy of it that each transition
    /// changes in place and [`World::restore`] resets.
    w: World<P>,
    next: World<P>,
    bufs: Bufs<P>,
    /// Per enabled transition, its successor.
    succ: Vec<Succ>,
    packed: Vec<u8>,
    /// Where each agent's bytes start in the packed state being expanded.
    at: Vec<u32>,
    canon: Canon<P>,
    seen: Seen,
}

/// A successor of the state being expanded.
struct Succ {
    fp: u128,
    /// Not met before in the chunk (only such a successor is packed and
    /// has its invariant checked).
    fresh: bool,
    bad: bool,
    /// The end of its packed bytes in `Scratch::packed`.
    end: u32,
}

/// Buffers a transition uses.
struct Bufs<P: Protocol> {
    sends: Vec<crate::agents::protocol::Send<P::Msg>>,
    idx: Vec<usize>,
    acts: Vec<P::Action>,
}

impl<P: Protocol> Scratch<P> {
    fn new(p: &P, w: &World<P>, mode: Mode) -> Self {
        Scratch {
            w: w.clone(),
            next: w.clone(),
            bufs: Bufs { sends: Vec::new(), idx: Vec::new(), acts: Vec::new() },
            succ: Vec::new(),
            packed: Vec::new(),
            at: Vec::new(),
            canon: Canon::new(p, mode),
            seen: Seen::default(),
        }
    }
}

/// Take every enabled transition of `w` in the explorer's order
/// (deliveries, then each agent's actions) up to the first error: for the
/// j-th enabled one, `f(j, its move, whether it is an environment action,
/// the agent it changed, the successor)`. Each is taken in `next`, which
/// must equal `w` and is reset to it after each. The error, if any.
fn successors<P: Protocol>(
    p: &P,
    w: &World<P>,
    next: &mut World<P>,
    b: &mut Bufs<P>,
    mut f: impl FnMut(usize, Move<P::Action>, bool, u8, &World<P>),
) -> Option<(Move<P::Action>, Violation)> {
    let mut j = 0;
    b.idx.clear();
    w.deliverable(p, &mut b.idx);
    for &i in &b.idx {
        let mv = Move::Deliver(i as u16);
        let to = w.mail[i].to;
        let r = next.deliver_here(p, i, &mut b.sends);
        if let Ok(true) = r {
            f(j, mv, false, to, next);
            j += 1;
        }
        next.restore(w, to);
        if let Err(v) = r {
            return Some((mv, v));
        }
    }
    for a in 0..w.agents.len() {
        b.acts.clear();
        p.actions(&w.agents[a], a as u8, &w.ghost, &mut b.acts);
        for &action in &b.acts {
            let mv = Move::Act(a as u8, action);
            let r = next.act_here(p, a as u8, action, &mut b.sends);
            if let Ok(true) = r {
                f(j, mv, p.is_environment(&action), a as u8, next);
                j += 1;
            }
            next.restore(w, a as u8);
            if let Err(v) = r {
                return Some((mv, v));
            }
        }
    }
    None
}

/// A successor not in the visited set before its window (nor earlier in
/// its chunk). Its parent is known from `Expanded::ends`.
#[derive(Clone, Copy)]
struct Cand {
    /// Its fingerprint's key (`store::split`).
    key: u64,
    /// The end of its packed state in `Expanded::bytes` (it starts where
    /// the previous candidate's ends).
    end: u32,
    /// Its fingerprint's shard (6 bits), whether it violates an invariant
    /// (1 bit), and its rule: the index of its transition among its
    /// parent's enabled ones (the other 25).
    info: u32,
}

const RULE_SHIFT: u32 = 7;

impl Cand {
    #[inline]
    fn shard(self) -> usize {
        (self.info & 63) as usize
    }
    #[inline]
    fn bad(self) -> bool {
        self.info >> 6 & 1 == 1
    }
    #[inline]
    fn rule(self) -> u32 {
        self.info >> RULE_SHIFT
    }
}

/// The fingerprints met in one chunk (to drop repeated successors early):
/// open addressing, cleared per chunk (only the slots it used).
#[derive(Default)]
struct Seen {
    slots: Vec<u128>,
    used: Vec<u32>,
    zero: bool,
}

impl Seen {
    fn clear(&mut self) {
        for &i in &self.used {
            self.slots[i as usize] = 0;
        }
        self.used.clear();
        self.zero = false;
    }

    /// Add `fp`; true if it is new.
    #[inline]
    fn insert(&mut self, fp: u128) -> bool {
        if fp == 0 {
            return !std::mem::replace(&mut self.zero, true);
        }
        if (self.used.len() + 1) * 2 > self.slots.len() {
            let n = (self.slots.len() * 2).max(1 << 12);
            let old = std::mem::replace(&mut self.slots, vec![0; n]);
            self.used.clear();
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
                    self.used.push(i as u32);
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
    /// The chunk's first state number.
    first_id: u32,
    cands: Vec<Cand>,
    /// The candidates' packed states, back to back.
    bytes: Vec<u8>,
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
        Expanded {
            first_id: 0,
            cands: Vec::new(),
            bytes: Vec::new(),
            ends: Vec::new(),
            finals: Vec::new(),
            event: None,
        }
    }
}

/// Phase A for one chunk.
fn expand<P: Checkable>(p: &P, opts: &Options, chunk: &Chunk, visited: &Visited, s: &mut Scratch<P>) -> Expanded<P> {
    let mut out = Expanded { first_id: chunk.first_id, ..Expanded::default() };
    let mut transitions = 0u64;
    let symmetric = s.canon.active();
    s.seen.clear();
    let mut src = &chunk.bytes[..];
    for k in 0..chunk.len {
        let start = chunk.bytes.len() - src.len();
        s.w.unpack_noting(&mut src, &mut s.at);
        let parent = &chunk.bytes[start..chunk.bytes.len() - src.len()];
        s.next.clone_from(&s.w);
        // Every successor's fingerprint, its slot of the visited set
        // prefetched; the ones new in this chunk packed, with their
        // invariant; then the lookups.
        s.succ.clear();
        s.packed.clear();
        let mut progress = false;
        let Scratch { w, next, bufs, succ, packed, at, canon, seen, .. } = s;
        let failed = successors(p, w, next, bufs, |_, _, env, a, n| {
            progress |= !env;
            let begin = packed.len();
            let fp = if symmetric {
                canon.fingerprint(p, n)
            } else {
                n.pack_after(a, parent, at, packed);
                fingerprint_bytes(&packed[begin..])
            };
            // A successor met before in the chunk is no candidate (and
            // one already visited is none either: it was inserted there
            // as well, harmlessly).
            let fresh = seen.insert(fp);
            if fresh {
                visited.prefetch(fp);
                if symmetric {
                    n.pack_after(a, parent, at, packed);
                }
            } else {
                packed.truncate(begin);
            }
            let bad = fresh && p.invariant(&n.agents, &n.ghost).is_err();
            succ.push(Succ { fp, fresh, bad, end: packed.len() as u32 });
        });
        let mut begin = 0;
        for (j, e) in s.succ.iter().enumerate() {
            transitions += 1;
            let bytes = &s.packed[begin..e.end as usize];
            begin = e.end as usize;
            if !e.fresh || visited.contains(e.fp) {
                continue;
            }
            out.bytes.extend_from_slice(bytes);
            #[cfg(debug_assertions)]
            {
                let mut check = bytes;
                let mut back = s.w.clone();
                back.unpack_from(&mut check);
                let mut again = Vec::new();
                back.pack(&mut again);
                debug_assert!(check.is_empty() && again == bytes, "{back:?} packs differently");
            }
            let (shard, key) = split(e.fp);
            assert!(j < 1 << (32 - RULE_SHIFT), "more than 2^25 enabled transitions in one state");
            let info = shard as u32 | (e.bad as u32) << 6 | (j as u32) << RULE_SHIFT;
            let end = u32::try_from(out.bytes.len()).expect("a chunk's candidates pack in under 4 GB");
            out.cands.push(Cand { key, end, info });
        }
        out.ends.push((out.cands.len() as u32, transitions));
        if let Some((_, v)) = failed {
            out.event = Some((k, Event::Failed(v.kind.to_string(), v.detail)));
            break;
        }
        let quiet = s.w.quiescent(p);
        if s.succ.is_empty() && quiet {
            out.finals.push((k, s.w.clone()));
        } else if opts.check_deadlock && !progress && !quiet {
            let w = &s.w;
            out.event = Some((
                k,
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

/// Run `f(i, state)` for every `i < n` on one thread per element of
/// `states` (each with its own), handing out indices in order; the
/// results by index.
fn parallel<S: Send, T: Send, F>(states: &mut [S], n: usize, f: F) -> Vec<T>
where
    F: Fn(usize, &mut S) -> T + Sync,
{
    let results: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let work = |s: &mut S| loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            break;
        }
        let r = f(i, s);
        *results[i].lock().expect("no panics while holding") = Some(r);
    };
    let threads = states.len().min(n);
    if threads <= 1 {
        if let Some(s) = states.first_mut() {
            work(s);
        }
    } else {
        // The calling thread works too (it alone polls `Options::stop`,
        // which may only answer there, as Python's signal check does).
        let (mine, others) = states.split_first_mut().expect("threads > 1");
        std::thread::scope(|sc| {
            for s in others.iter_mut().take(threads - 1) {
                let work = &work;
                sc.spawn(move || work(s));
            }
            work(mine);
        });
    }
    results.into_iter().map(|m| m.into_inner().expect("no panics").expect("every index done")).collect()
}

/// Explore every state reachable from the protocol's initial states.
/// `on_final` sees each quiescent state that has no successor, in
/// breadth-first order.
pub fn explore<P: Checkable>(p: &P, opts: &Options, on_final: &mut dyn FnMut(&World<P>)) -> Report {
    explore_to(p, opts, &mut |w| {
        on_final(w);
        None
    })
}

/// A final state's violation, if it is one: kind and detail.
pub type FinalCheck<'a, P> = dyn FnMut(&World<P>) -> Option<(String, String)> + 'a;

/// [`explore`], where `on_final` may call a final state a violation
/// (kind, detail): the search stops there with the shortest trace to it,
/// as at a broken invariant (a litmus test's forbidden outcome).
pub fn explore_to<P: Checkable>(p: &P, opts: &Options, on_final: &mut FinalCheck<P>) -> Report {
    let t0 = Instant::now();
    let threads = opts.thread_count();
    let mode = opts.symmetry.0;
    let mut visited = Visited::default();
    let mut tree = Tree::default();
    let inits: Vec<World<P>> = p.initial().into_iter().map(|(a, g)| World::new(a, g)).collect();
    let mut report = Report {
        protocol: p.name(),
        states: 0,
        transitions: 0,
        depth: 0,
        seconds: 0.0,
        peak_rss_kb: 0,
        complete: true,
        violation: None,
        final_states: 0,
        interrupted: false,
        symmetry: false,
        threads,
        resumed_from: None,
        checkpoint: None,
        disk_error: None,
        out_of_memory: None,
    };
    let Some(first) = inits.first() else {
        report.seconds = t0.elapsed().as_secs_f64();
        report.peak_rss_kb = peak_rss_kb();
        return report;
    };
    let mut scratch: Vec<Scratch<P>> = (0..threads).map(|_| Scratch::new(p, first, mode)).collect();
    report.symmetry = scratch[0].canon.active();
    // The search directory, its visited files, and the checkpoint to continue from.
    let (mut dir, mut on_disk, resumed) = match &opts.disk {
        None => (None, None, None),
        Some(d) => match disk::Dir::open(d).and_then(|(dir, m)| {
            let set = DiskSet::open(&d.dir, m.as_ref().map_or(0, |m| m.generation))?;
            Ok((dir, set, m))
        }) {
            Ok((dir, set, m)) => (Some(dir), Some(set), m),
            Err(e) => {
                report.disk_error = Some(e);
                report.complete = false;
                report.seconds = t0.elapsed().as_secs_f64();
                return report;
            }
        },
    };
    // (state, failing transition's rule: the first error after its enabled ones, kind, detail)
    let mut violation: Option<(u32, bool, String, String)> = None;
    let mut transitions = 0u64;
    let mut depth = 0u32;
    let mut final_states = 0u64;
    let mut earlier_seconds = 0.0;
    let mut resumed_states = 0u64;
    let mut layer = match &resumed {
        Some(m) => {
            match dir.as_ref().expect("a checkpoint has a directory").read_tree(&m.tree) {
                Ok(t) => tree = t,
                Err(e) => {
                    report.disk_error = Some(e);
                    report.complete = false;
                    return report;
                }
            }
            transitions = m.transitions;
            depth = m.depth;
            final_states = m.final_states;
            earlier_seconds = m.seconds;
            resumed_states = m.states;
            report.resumed_from = Some(m.depth);
            report.checkpoint = Some(m.depth);
            Layer::Disk { name: m.layer.clone(), states: m.layer_states, bytes: m.layer_bytes }
        }
        None => {
            let mut first = Chunk { first_id: 0, len: 0, bytes: Vec::new() };
            let mut buf = Vec::new();
            for (i, w) in inits.iter().enumerate() {
                if visited.insert(orbit(&mut scratch[0].canon, p, w, &mut buf)) {
                    let id = tree.len();
                    tree.push_root(i as u32);
                    if let Err((k, d)) = p.invariant(&w.agents, &w.ghost) {
                        violation.get_or_insert((id, false, k, d));
                    }
                    first.bytes.extend_from_slice(&buf);
                    first.len += 1;
                }
            }
            Layer::Memory(vec![first])
        }
    };
    let debug = std::env::var_os("FABRICSIM_CHECK_DEBUG").is_some();
    // Wall time in phases A, B, the walk and C (for FABRICSIM_CHECK_DEBUG).
    let mut phases = [0f64; 4];
    let mut complete = true;
    let mut interrupted = false;
    let mut disk_error: Option<String> = None;
    let mut out_of_memory = None;
    let mut last_checkpoint = Instant::now();
    let mut last_progress = Instant::now();
    // Commit a checkpoint at a layer's start: the visited set wholly in
    // its files, the layer in its file, the tree and the counts.
    let checkpoint = |layer: &mut Layer,
                      dir: &mut disk::Dir,
                      set: &mut DiskSet,
                      visited: &mut Visited,
                      tree: &Tree,
                      counts: (u32, u64, u64, f64)|
     -> Result<(), String> {
        let (depth, transitions, final_states, seconds) = counts;
        if let Layer::Memory(chunks) = layer {
            let name = disk::layer_name(depth);
            let mut w = LayerWriter::create(dir.path(&name))?;
            for c in chunks.iter() {
                w.write(c.first_id, c.len, &c.bytes)?;
            }
            let (states, bytes) = (w.states, w.bytes);
            w.finish()?;
            *layer = Layer::Disk { name, states, bytes };
        }
        let Layer::Disk { name, states, bytes } = layer else { unreachable!("written above") };
        set.absorb(&mut visited.shards)?;
        set.keep();
        let m = Manifest {
            identity: dir.opts.identity.clone(),
            depth,
            layer: name.clone(),
            layer_states: *states,
            layer_bytes: *bytes,
            tree: disk::tree_name(depth),
            generation: set.generation(),
            states: tree.len() as u64,
            transitions,
            final_states,
            seconds,
        };
        dir.checkpoint(&m, tree)
    };
    'search: while layer.size().0 > 0 && violation.is_none() {
        if let (Some(d), Some(set)) = (dir.as_mut(), on_disk.as_mut()) {
            let bound = opts.max_depth.is_some_and(|m| depth >= m);
            let due = last_checkpoint.elapsed().as_secs_f64() >= d.opts.checkpoint_every;
            if (bound || due) && report.checkpoint != Some(depth) {
                let seconds = earlier_seconds + t0.elapsed().as_secs_f64();
                if let Err(e) =
                    checkpoint(&mut layer, d, set, &mut visited, &tree, (depth, transitions, final_states, seconds))
                {
                    disk_error = Some(e);
                    complete = false;
                    break;
                }
                report.checkpoint = Some(depth);
                last_checkpoint = Instant::now();
            }
        }
        if opts.max_depth.is_some_and(|d| depth >= d) {
            complete = false;
            break;
        }
        let (layer_states, layer_bytes) = layer.size();
        let mut layer_cands = 0usize;
        let mut layer_done = 0u64;
        // The next layer's chunks, sized by this one (layers grow slowly).
        let chunk = (layer_states as usize / PARTS).clamp(MIN_CHUNK, CHUNK);
        let opened = LayerIn::open(std::mem::replace(&mut layer, Layer::Memory(Vec::new())), dir.as_ref())
            .and_then(|(i, name)| Ok((i, name, LayerOut::new(dir.as_ref(), depth + 1)?)));
        let (mut chunks, reading, mut next) = match opened {
            Ok(x) => x,
            Err(e) => {
                disk_error = Some(e);
                complete = false;
                break;
            }
        };
        loop {
            let window = match chunks.window(WINDOW) {
                Ok(w) if w.is_empty() => break,
                Ok(w) => w,
                Err(e) => {
                    disk_error = Some(e);
                    complete = false;
                    break 'search;
                }
            };
            let t = if window.len() < 2 { 1 } else { threads };
            layer_done += window.iter().map(|c| c.len as u64).sum::<u64>();
            // Phase A: expand every chunk (the chunks after the first one
            // with an event are not needed, and are skipped).
            let first_event = AtomicUsize::new(usize::MAX);
            let caller = std::thread::current().id();
            let stop = AtomicBool::new(false);
            let clock = Instant::now();
            let exps: Vec<Expanded<P>> = parallel(&mut scratch[..t], window.len(), |c, s| {
                if c > first_event.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) {
                    return Expanded::default();
                }
                if std::thread::current().id() == caller && opts.stop.requested() {
                    stop.store(true, Ordering::Relaxed);
                    return Expanded::default();
                }
                let e = expand(p, opts, &window[c], &visited, s);
                if e.event.is_some() {
                    first_event.fetch_min(c, Ordering::Relaxed);
                }
                e
            });
            drop(window);
            if stop.load(Ordering::Relaxed) {
                complete = false;
                interrupted = true;
                break 'search;
            }
            // Candidates up to the first event count.
            let first_event = first_event.load(Ordering::Relaxed);
            let limit: Vec<usize> =
                exps.iter().enumerate().map(|(c, e)| if c > first_event { 0 } else { e.cands.len() }).collect();
            let window_cands = limit.iter().sum::<usize>();
            layer_cands += window_cands;
            phases[0] += clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            // Phases B and C cost about a cache miss and a copy per
            // candidate: for a few, starting threads costs more.
            let tb = if window_cands < PARALLEL_CANDIDATES { 1 } else { t };
            let mut flags = insert(&mut visited, &exps, &limit, tb);
            if let Some(set) = on_disk.as_mut().filter(|s| !s.is_empty()) {
                if let Err(e) = filter_disk(set, &exps, &limit, &mut flags) {
                    disk_error = Some(e);
                    complete = false;
                    break 'search;
                }
            }
            phases[1] += clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            // The sequential order of events: per chunk, per state, its new
            // successors (an invariant stops at the first bad one), then
            // its event, then the bound on states.
            let mut cut = false;
            let mut new_counts = Vec::with_capacity(exps.len());
            'walk: for (c, e) in exps.iter().enumerate() {
                let mut x = 0usize;
                let mut new = 0u32;
                for (k, &(cend, tend)) in e.ends.iter().enumerate() {
                    while x < cend as usize && x < limit[c] {
                        if is_new(&flags[c], x) {
                            let cand = e.cands[x];
                            new += 1;
                            tree.push(e.first_id + k as u32, cand.rule());
                            if cand.bad() {
                                let before = if k == 0 { 0 } else { e.ends[k - 1].1 };
                                transitions += before + cand.rule() as u64 + 1;
                                violation = Some((tree.len() - 1, false, String::new(), String::new()));
                                cut = true;
                                break 'walk;
                            }
                        }
                        x += 1;
                    }
                    let event_here = e.event.as_ref().filter(|ev| ev.0 as usize == k);
                    let bound = event_here.is_none() && opts.max_states.is_some_and(|m| tree.len() as u64 >= m);
                    if event_here.is_some() || bound {
                        transitions += tend;
                        for (f, w) in e.finals.iter().filter(|f| (f.0 as usize) <= k) {
                            final_states += 1;
                            if let Some((kind, detail)) = on_final(w) {
                                violation = Some((e.first_id + f, false, kind, detail));
                                complete = false;
                                cut = true;
                                break 'walk;
                            }
                        }
                        if let Some((_, ev)) = event_here {
                            let id = e.first_id + k as u32;
                            violation = Some(match ev {
                                Event::Failed(kind, detail) => (id, true, kind.clone(), detail.clone()),
                                Event::Deadlock(detail) => (id, false, "deadlock".to_string(), detail.clone()),
                            });
                        }
                        complete = false;
                        cut = true;
                        break 'walk;
                    }
                }
                transitions += e.ends.last().map_or(0, |l| l.1);
                final_states += e.finals.len() as u64;
                for (f, w) in &e.finals {
                    if let Some((kind, detail)) = on_final(w) {
                        violation = Some((e.first_id + f, false, kind, detail));
                        cut = true;
                        break 'walk;
                    }
                }
                new_counts.push(new);
            }
            if cut {
                break 'search;
            }
            // Phase C: the new states' packed bytes, in order, into the
            // next layer.
            let mut bases = Vec::with_capacity(exps.len());
            let mut id = tree.len() - new_counts.iter().sum::<u32>();
            for &n in &new_counts {
                bases.push(id);
                id += n;
            }
            phases[2] += clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            let built: Vec<Vec<Chunk>> = parallel(&mut vec![(); tb], exps.len(), |c, _| {
                let e = &exps[c];
                let mut out: Vec<Chunk> = Vec::new();
                let mut start = 0usize;
                for (x, cand) in e.cands[..limit[c]].iter().enumerate() {
                    let end = cand.end as usize;
                    if is_new(&flags[c], x) {
                        match out.last_mut() {
                            Some(l) if (l.len as usize) < chunk => {
                                l.bytes.extend_from_slice(&e.bytes[start..end]);
                                l.len += 1;
                            }
                            _ => {
                                let first_id = bases[c] + out.iter().map(|l| l.len).sum::<u32>();
                                out.push(Chunk { first_id, len: 1, bytes: e.bytes[start..end].to_vec() });
                            }
                        }
                    }
                    start = end;
                }
                out
            });
            drop(exps);
            for l in built.into_iter().flatten() {
                next.push(l, chunk);
            }
            let spilled = next.spill().and_then(|()| match (on_disk.as_mut(), dir.as_ref()) {
                (Some(set), Some(d)) if visited.bytes() as u64 > d.opts.memory => set.absorb(&mut visited.shards),
                _ => Ok(()),
            });
            if let Err(e) = spilled {
                disk_error = Some(e);
                complete = false;
                break 'search;
            }
            // The next window holds about as much again as this one: stop
            // with room to spare.
            let rss = current_rss_kb() * 1024;
            if opts.memory_limit.is_some_and(|m| rss > m / 10 * 9) {
                out_of_memory = Some(rss);
                complete = false;
                break 'search;
            }
            phases[3] += clock.elapsed().as_secs_f64();
            if opts.progress && last_progress.elapsed().as_secs_f64() >= PROGRESS_EVERY {
                last_progress = Instant::now();
                let seconds = t0.elapsed().as_secs_f64();
                eprintln!(
                    "check: depth {depth}, {layer_done} of {layer_states} states of the layer expanded; \
                     {} states, {:.0} states/s, {} MB{}",
                    tree.len(),
                    (tree.len() as u64 - resumed_states) as f64 / seconds,
                    current_rss_kb() >> 10,
                    on_disk.as_ref().map_or(String::new(), |s| format!(", {} on disk", s.len())),
                );
            }
        }
        if debug {
            eprintln!(
                "depth {depth}: {layer_states} states ({layer_bytes} B packed), {layer_cands} candidates, \
                 visited {} MB{}, tree {} MB, rss {} MB; so far {:.2} s expanding, {:.2} s inserting, \
                 {:.2} s walking, {:.2} s copying",
                visited.bytes() >> 20,
                on_disk.as_ref().map_or(String::new(), |s| format!(" (and {} states on disk)", s.len())),
                tree.bytes() >> 20,
                current_rss_kb() >> 10,
                phases[0],
                phases[1],
                phases[2],
                phases[3],
            );
        }
        drop(chunks);
        if let (Some(name), Some(d)) = (reading, dir.as_ref()) {
            if !d.is_kept_layer(&name) {
                let _ = std::fs::remove_file(d.path(&name));
            }
        }
        layer = match next.finish() {
            Ok(l) => l,
            Err(e) => {
                disk_error = Some(e);
                complete = false;
                break;
            }
        };
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
    // A search that ended needs no checkpoint.
    if let Some(d) = dir {
        if disk_error.is_none() && (complete || counterexample.is_some()) {
            d.finish();
            report.checkpoint = None;
        }
    }
    Report {
        states: tree.len() as u64,
        transitions,
        depth,
        seconds: earlier_seconds + t0.elapsed().as_secs_f64(),
        peak_rss_kb: peak_rss_kb(),
        complete,
        violation: counterexample,
        final_states,
        interrupted,
        disk_error,
        out_of_memory,
        ..report
    }
}

/// Phase B: insert a window's candidates (the first `limit[c]` of chunk
/// `c`) into the visited set in order, each of `t` threads into its own
/// shards, so the first occurrence of a fingerprint wins as it would in a
/// sequential search. Whether each candidate was new: per chunk, a bit per
/// candidate (each thread sets bits in a set of its own, so that threads
/// do not write to the same cache lines; the sets are then merged).
fn insert<P: Checkable>(visited: &mut Visited, exps: &[Expanded<P>], limit: &[usize], t: usize) -> Vec<Vec<u64>> {
    let mut groups: Vec<Vec<&mut Shard>> = (0..t).map(|_| Vec::new()).collect();
    for (i, s) in visited.shards.iter_mut().enumerate() {
        groups[i % t].push(s);
    }
    // A few candidates ahead, the slot is fetched (the one phase A
    // prefetched is long out of cache).
    const AHEAD: usize = 8;
    let insert = |g: usize, shards: &mut Vec<&mut Shard>| {
        let mut new: Vec<Vec<u64>> = limit.iter().map(|&n| vec![0; n.div_ceil(64)]).collect();
        for (c, e) in exps.iter().enumerate() {
            let cands = &e.cands[..limit[c]];
            for (x, cand) in cands.iter().enumerate() {
                if let Some(a) = cands.get(x + AHEAD).filter(|a| a.shard() % t == g) {
                    shards[a.shard() / t].prefetch(a.key);
                }
                let sh = cand.shard();
                if sh % t == g && shards[sh / t].insert(cand.key) {
                    new[c][x / 64] |= 1 << (x % 64);
                }
            }
        }
        new
    };
    let (mine, others) = groups.split_first_mut().expect("a thread");
    let theirs: Vec<Vec<Vec<u64>>> = std::thread::scope(|sc| {
        let handles: Vec<_> = others
            .iter_mut()
            .enumerate()
            .map(|(g, shards)| {
                let insert = &insert;
                sc.spawn(move || insert(g + 1, shards))
            })
            .collect();
        let mut all = vec![insert(0, mine)];
        all.extend(handles.into_iter().map(|h| h.join().expect("no panics")));
        all
    });
    let mut theirs = theirs.into_iter();
    let mut flags = theirs.next().expect("a thread");
    for other in theirs {
        for (f, o) in flags.iter_mut().zip(other) {
            f.iter_mut().zip(o).for_each(|(a, b)| *a |= b);
        }
    }
    flags
}

/// Whether bit `x` of a set of [`insert`] is set.
#[inline]
fn is_new(bits: &[u64], x: usize) -> bool {
    bits[x / 64] >> (x % 64) & 1 == 1
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
        let mut taken = None;
        let Scratch { w, next, bufs, .. } = &mut s;
        successors(p, w, next, bufs, |j, mv, _, _, n| {
            if j == rule as usize {
                taken = Some((mv.label(w), n.clone()));
            }
        });
        let (label, next) = taken.expect("the tree's rule is enabled again");
        step(&s, label, Some(&next));
        s.next.clone_from(&next);
        s.w = next;
    }
    if failing {
        let Scratch { w, next, bufs, .. } = &mut s;
        if let Some((mv, _)) = successors(p, w, next, bufs, |_, _, _, _, _| {}) {
            let label = mv.label(&s.w);
            step(&s, label, None);
        }
    }
    let inv = p.invariant(&s.w.agents, &s.w.ghost).err();
    (steps, inv)
}
