//! BI Table 1's application (§7.2): a BONSAI red-black tree in global
//! memory, read by every core through the BI runtime and updated by one
//! **delegate** core that the others send their updates to.
//!
//! - A **reader** thread loops: pick a key of the range and whether the
//!   operation is an update (the update share; half inserts, half
//!   deletes). A lookup is `bi_enter`, `bi_dereference(root)`, then per
//!   node a load of its key and `bi_dereference` of the child on the key's
//!   side, until the key or NULL, then `bi_exit`. An update is a message
//!   to the delegate and a wait for its answer. Every `period` the thread
//!   runs one `reader_engine` (periodic cache quiescence, flushing the
//!   freed and modified objects).
//! - The **delegate** serves the updates in arrival order on the tree's
//!   authoritative copy (`workloads::bonsai`): per new node of the path
//!   copy `bi_alloc`, its child and colour words, `Write` (key, clear
//!   `free_mark`, clwb); then `bi_assign_pointer(root)`, `bi_free` of every
//!   replaced node, and `bi_reclaim` when the freed log is half full. An
//!   update that changes nothing (insert of a present key, delete of an
//!   absent one) is answered at once.
//!
//! Modelling choices (not in the paper; docs/design/bi.md §9):
//! - The delegation message is one fabric message each way (the paper's
//!   message passing is not described); its cost is the fabric's latency.
//! - Each thread's periodic engine starts at an offset of its index ×
//!   period / threads, so the threads' engines do not run in step.
//! - The delegate core runs no lookups.

use std::collections::VecDeque;

use super::program::{App, Next, ProgramSpec};
use super::protocol::Msg;
use super::runtime::{
    ptr_obj, ptr_word, Call, DomainClock, Layout, MicroOp, RtConfig, Runtime, Word, LOG_FLAG, PAYLOAD,
};
use crate::agents::protocol::AgentId;
use crate::engine::rng::xorshift64star;
use crate::engine::{Time, NS};
use crate::workloads::bonsai::{Bonsai, NodeWords, PathCopy, COLOR_WORD, KEY_WORD, LEFT_WORD, RIGHT_WORD};

/// The tree benchmark's parameters (`[protocol.bi.bench] kind = "tree"`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeBench {
    pub nodes: u64,
    /// Share of operations that are updates.
    pub updates: f64,
    /// Operations are measured from `warmup` to `end` (simulated time).
    pub warmup: Time,
    pub end: Time,
    /// The cache quiescence period.
    pub period: Time,
    pub deferred_writeback: bool,
    /// Records per log buffer.
    pub log_cap: u32,
    /// The skew margin D.
    pub d: Time,
    pub front_end: FrontEnd,
    /// A deliberately broken runtime (reproduction tests).
    pub mutant: Option<super::runtime::RtMutant>,
    /// Entries of each core's store buffer (`store_buffer.rs`, held by its
    /// front end; None: none, each store waits for its line).
    pub store_buffer: Option<u32>,
}

/// Who runs the tree: BI on the non-coherent machine (a delegate applies
/// the updates), or U-RCU on the coherent one (`urcu.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontEnd {
    Bi,
    Urcu,
}

/// The line of the root pointer.
pub const ROOT: u64 = 0;

/// Where the tree run's metadata and objects live, for `readers` threads.
pub fn layout(readers: u8, log_cap: u32, objects_from: u64) -> Layout {
    let mut l = Layout {
        readers,
        writers: 1,
        log_cap,
        obj_base: 0,
        obj_lines: 1,
        reader_time_base: 1,
        freed_base: 0,
        modified_base: 0,
        modified_fixed: false,
    };
    l.freed_base = l.reader_time_base + readers as u64;
    l.modified_base = l.freed_base + l.log_lines();
    l.obj_base = (l.modified_base + l.log_lines()).max(objects_from);
    l
}

/// A node's words as its object's first line holds them (the header first).
pub fn node_line(n: &NodeWords) -> [Word; 8] {
    let mut w = [0; 8];
    w[PAYLOAD as usize + KEY_WORD] = n.key;
    w[PAYLOAD as usize + LEFT_WORD] = n.left.map_or(0, |o| ptr_word(o, 0));
    w[PAYLOAD as usize + RIGHT_WORD] = n.right.map_or(0, |o| ptr_word(o, 0));
    w[PAYLOAD as usize + COLOR_WORD] = n.color.word();
    w
}

/// A thread's next operation: its key, and for an update whether it inserts.
pub(super) fn draw(rng: &mut u64, key_range: u64, update_share: u64) -> (u64, Option<bool>) {
    let r = xorshift64star(rng);
    let key = (r >> 8) % key_range.max(1);
    let update = (xorshift64star(rng) >> 32) < update_share;
    (key, update.then_some(r & 1 == 0))
}

/// The open interval a lookup's path allows the next key in. Every
/// snapshot of a path-copied tree is a search tree, so a key outside it is
/// a node reclaimed and reused under the reader (or a value lost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Bounds {
    pub lo: Option<u64>,
    pub hi: Option<u64>,
}

impl Bounds {
    /// Key `k` read on the way to `key`: false if it breaks the order;
    /// else the interval narrows to `k`'s side.
    pub fn visit(&mut self, key: u64, k: u64) -> bool {
        if self.lo.is_some_and(|lo| k <= lo) || self.hi.is_some_and(|hi| k >= hi) {
            return false;
        }
        if key < k {
            self.hi = Some(k);
        } else {
            self.lo = Some(k);
        }
        true
    }
}

/// Where a reader thread is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RState {
    /// Between operations.
    Idle,
    Quiesce,
    Enter,
    /// The dereference of the root or of a node's child.
    Deref,
    /// The load of node `obj`'s key.
    Key {
        obj: u32,
    },
    Exit,
    /// An update sent to the delegate.
    Update,
    Stopped,
}

/// Measured operations and their total latency (ps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Tally {
    pub reads: u64,
    pub read_ps: u64,
    pub writes: u64,
    pub write_ps: u64,
    pub quiesces: u64,
    pub quiesce_ps: u64,
    /// Keys a lookup read outside the bounds its path had set: a node of
    /// no snapshot of the tree (every snapshot is a search tree, so only
    /// an object reclaimed and reused under a reference gives one).
    pub order_violations: u64,
    /// Updates the delegate applied (changed the tree), and their service time.
    pub applied: u64,
    pub applied_ps: u64,
}

/// A reader thread.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reader {
    pub st: RState,
    pub key: u64,
    pub t0: Time,
    pub next_quiesce: Time,
    pub rng: u64,
    pub delegate: AgentId,
    pub key_range: u64,
    /// Updates per 2^32 operations.
    pub update_share: u64,
    pub warmup: Time,
    pub end: Time,
    pub period: Time,
    /// The delegate answered the update in flight.
    pub answered: bool,
    pub bounds: Bounds,
    pub tally: Tally,
}

impl Reader {
    fn measured(&self, now: Time) -> bool {
        self.t0 >= self.warmup && now <= self.end
    }

    pub fn next(&mut self, ret: Option<Word>, now: Time, obj_line: impl Fn(u32) -> u64) -> Next {
        let call = |c| Next::Call(c);
        match self.st {
            RState::Quiesce => {
                if self.measured(now) {
                    self.tally.quiesces += 1;
                    self.tally.quiesce_ps += now - self.t0;
                }
                self.st = RState::Idle;
            }
            RState::Enter => {
                self.st = RState::Deref;
                return call(Call::Deref { ptr: ROOT, word: 0 });
            }
            RState::Deref => match ret.and_then(ptr_obj) {
                Some(obj) => {
                    self.st = RState::Key { obj };
                    return call(Call::ReadObj { obj, lines: 1 });
                }
                None => {
                    self.st = RState::Exit;
                    return call(Call::Exit);
                }
            },
            RState::Key { obj } => {
                let k = ret.unwrap_or(0);
                if !self.bounds.visit(self.key, k) {
                    // a reused node may point anywhere, back up the path too: the lookup ends here
                    self.tally.order_violations += 1;
                    self.st = RState::Exit;
                    return call(Call::Exit);
                }
                if k == self.key {
                    self.st = RState::Exit;
                    return call(Call::Exit);
                }
                let word = PAYLOAD + if self.key < k { LEFT_WORD } else { RIGHT_WORD } as u8;
                self.st = RState::Deref;
                return call(Call::Deref { ptr: obj_line(obj), word });
            }
            RState::Exit => {
                if self.measured(now) {
                    self.tally.reads += 1;
                    self.tally.read_ps += now - self.t0;
                }
                self.st = RState::Idle;
            }
            RState::Update if !self.answered => return Next::Block,
            RState::Update => {
                self.answered = false;
                if self.measured(now) {
                    self.tally.writes += 1;
                    self.tally.write_ps += now - self.t0;
                }
                self.st = RState::Idle;
            }
            RState::Idle => {}
            RState::Stopped => return Next::Stop,
        }
        // between operations
        self.t0 = now;
        if now >= self.end {
            self.st = RState::Stopped;
            return Next::Stop;
        }
        if now >= self.next_quiesce {
            self.next_quiesce += self.period;
            self.st = RState::Quiesce;
            return call(Call::Quiesce { free: true, stale: true });
        }
        let (key, update) = draw(&mut self.rng, self.key_range, self.update_share);
        self.key = key;
        if let Some(insert) = update {
            self.st = RState::Update;
            return Next::Send { to: self.delegate, msg: Msg::Delegate { line: key, insert } };
        }
        self.st = RState::Enter;
        self.bounds = Bounds::default();
        call(Call::Enter)
    }
}

/// The delegate thread: its queue of updates and the steps of the one in service.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Delegate {
    pub queue: VecDeque<(AgentId, u64, bool)>,
    pub todo: VecDeque<Next>,
    /// Freed records not yet reclaimed.
    pub outstanding: u64,
    pub reclaim_at: u64,
    pub t0: Time,
    pub serving: bool,
    pub warmup: Time,
    /// Updates served after the threads stop (the queue draining) are not measured.
    pub end: Time,
    pub tally: Tally,
}

impl Delegate {
    /// The next step; `apply` runs an update on the authoritative tree
    /// (None: it changes nothing).
    pub fn next(
        &mut self,
        now: Time,
        apply: &mut dyn FnMut(u64, bool) -> Option<PathCopy>,
        obj_line: impl Fn(u32) -> u64,
    ) -> Next {
        loop {
            if let Some(s) = self.todo.pop_front() {
                return s;
            }
            if self.serving {
                self.serving = false;
                if self.t0 >= self.warmup && now <= self.end {
                    self.tally.applied += 1;
                    self.tally.applied_ps += now - self.t0;
                }
            }
            let Some((from, key, insert)) = self.queue.pop_front() else {
                return Next::Block;
            };
            self.t0 = now;
            let Some(PathCopy { new_nodes, freed, new_root: root }) = apply(key, insert) else {
                return Next::Send { to: from, msg: Msg::Delegated { line: 0 } };
            };
            self.serving = true;
            let call = |c| Next::Call(c);
            for (obj, n) in &new_nodes {
                let line = obj_line(*obj);
                let w = node_line(n);
                self.todo.push_back(call(Call::Alloc { obj: *obj, track: true }));
                for k in [LEFT_WORD, RIGHT_WORD, COLOR_WORD] {
                    let word = PAYLOAD + k as u8;
                    self.todo.push_back(Next::Op(MicroOp::Store { line, word, val: w[word as usize] }));
                }
                self.todo.push_back(call(Call::Write { obj: *obj, val: n.key }));
            }
            self.todo.push_back(call(Call::Assign { ptr: ROOT, val: root.map_or(0, |o| ptr_word(o, 0)) }));
            for obj in &freed {
                self.todo.push_back(call(Call::Free { obj: *obj }));
            }
            self.outstanding += freed.len() as u64;
            if self.outstanding >= self.reclaim_at {
                self.todo.push_back(call(Call::Reclaim));
            }
            self.todo.push_back(Next::Send { to: from, msg: Msg::Delegated { line: 0 } });
        }
    }
}

/// The authoritative tree and the object allocator (the delegate's own
/// memory: nothing here is timed).
#[derive(Debug, Clone, Default)]
pub struct TreeWorld {
    pub tree: Bonsai,
    pub free: Vec<u32>,
    pub fresh: u32,
    pub capacity: u32,
}

impl TreeWorld {
    /// An object: a reclaimed one, or a fresh one (past `capacity` too:
    /// [`TreeWorld::exhausted`] then says so, and the run stops with it).
    pub fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(o) => o,
            None => {
                self.fresh += 1;
                self.fresh - 1
            }
        }
    }

    /// Why the pool ran out, once more objects were handed out than it
    /// holds: the freed log is a ring of `log_cap` records, so objects
    /// freed faster than `bi_reclaim` returns them are overwritten in it
    /// and never come back (the modelled runtime does not block a free on
    /// a full log).
    pub fn exhausted(&self, log_cap: u32) -> Option<String> {
        (self.fresh > self.capacity).then(|| {
            format!(
                "the tree's object pool ({} objects) is exhausted: the delegate freed objects faster than bi_reclaim \
                 returned them, and the freed log's {log_cap} records wrapped; give [protocol.bi.tree] a larger \
                 log_cap, a shorter period, fewer updates or a shorter time",
                self.capacity
            )
        })
    }

    pub fn apply(&mut self, key: u64, insert: bool) -> Option<PathCopy> {
        let mut tree = std::mem::take(&mut self.tree);
        let pc = if insert { tree.insert(key, &mut || self.alloc()) } else { tree.delete(key, &mut || self.alloc()) };
        self.tree = tree;
        pc
    }
}

pub fn ns(t: Time) -> u64 {
    t / NS
}

/// App wrappers for the two threads.
pub fn reader_app(r: Reader) -> App {
    App::TreeReader(Box::new(r))
}

pub fn delegate_app(d: Delegate) -> App {
    App::TreeDelegate(Box::new(d))
}

/// The tree run's programs on machine `p`: core 0 the delegate, every
/// other core a reader; the populated tree and its root in memory.
pub fn program(t: &TreeBench, p: &super::Bi, seed: u64) -> ProgramSpec {
    let cores = p.core_count();
    let readers = u8::try_from(cores - 1).expect("the configuration checks the readers fit a byte");
    // U-RCU's counters take a line per thread after its locks
    let lay = layout(readers, t.log_cap, super::urcu::CTR + cores as u64);
    let key_range = 2 * t.nodes;
    let mut world = TreeWorld {
        capacity: (t.nodes + 4 * t.log_cap as u64 + 4096).min(u32::MAX as u64 - 1) as u32,
        ..TreeWorld::default()
    };
    let tree = Bonsai::populate(t.nodes as usize, key_range, seed, &mut || world.alloc());
    let mut image: Vec<(u64, [Word; 8])> = Vec::with_capacity(t.nodes as usize + 1);
    let mut root = [0; 8];
    root[0] = tree.root().map_or(0, |o| ptr_word(o, 0));
    image.push((ROOT, root));
    // breadth first: a warm start fills the caches from the leaves up, so the levels they keep are the top ones
    let mut level: VecDeque<u32> = tree.root().into_iter().collect();
    while let Some(obj) = level.pop_front() {
        let n = tree.words(obj);
        let mut w = node_line(&n);
        w[LOG_FLAG as usize] = 1;
        image.push((lay.obj_line(obj), w));
        level.extend(n.left.into_iter().chain(n.right));
    }
    world.tree = tree;
    let ns_ticks = |x: Time| (x / NS) as i64;
    let runtime = Runtime {
        layout: lay,
        cfg: RtConfig {
            deferred_writeback: t.deferred_writeback,
            period: ns_ticks(t.period),
            d: ns_ticks(t.d),
            mutant: t.mutant,
            writeback_after_flush: false,
        },
    };
    if t.front_end == FrontEnd::Urcu {
        return urcu_program(t, p, seed, runtime, image, world);
    }
    let mut apps = vec![Some((
        0u8,
        delegate_app(Delegate {
            reclaim_at: (t.log_cap / 2) as u64,
            warmup: t.warmup,
            end: t.end,
            ..Delegate::default()
        }),
    ))];
    let share = (t.updates * 4_294_967_296.0).round() as u64;
    for i in 1..cores {
        let me = (i - 1) as u8;
        apps.push(Some((
            me,
            reader_app(Reader {
                st: RState::Idle,
                key: 0,
                t0: 0,
                next_quiesce: t.period * (i as u64 - 1) / readers as u64,
                rng: crate::engine::rng::mix(seed, 0xb0_a5a1, i as u64) | 1,
                delegate: 0,
                key_range,
                update_share: share,
                warmup: t.warmup,
                end: t.end,
                period: t.period,
                answered: false,
                bounds: Bounds::default(),
                tally: Tally::default(),
            }),
        )));
    }
    ProgramSpec {
        runtime,
        clocks: vec![DomainClock { offset: 0, tick: 1 }; p.domains],
        apps,
        image,
        warm: true,
        world: Some(world),
        buffered: t.store_buffer.is_some(),
        core: super::program::front_params(&p.params, t.store_buffer),
    }
}

/// The tree run's measurements: every reader's and the delegate's tallies.
pub fn stats(tallies: impl Iterator<Item = (bool, Tally)>, t: &TreeBench, readers: usize) -> Vec<(String, f64)> {
    let mut r = Tally::default();
    let mut d = Tally::default();
    for (delegate, x) in tallies {
        let s = if delegate { &mut d } else { &mut r };
        s.reads += x.reads;
        s.read_ps += x.read_ps;
        s.writes += x.writes;
        s.write_ps += x.write_ps;
        s.quiesces += x.quiesces;
        s.quiesce_ps += x.quiesce_ps;
        s.applied += x.applied;
        s.applied_ps += x.applied_ps;
        s.order_violations += x.order_violations;
    }
    let mean = |ps: u64, n: u64| if n > 0 { ps as f64 / n as f64 / 1000.0 } else { f64::NAN };
    let secs = (t.end - t.warmup) as f64 * 1e-12;
    vec![
        ("tree_reads".into(), r.reads as f64),
        ("tree_read_ns".into(), mean(r.read_ps, r.reads)),
        ("tree_writes".into(), r.writes as f64),
        ("tree_write_ns".into(), mean(r.write_ps, r.writes)),
        ("tree_ops_per_core_s".into(), (r.reads + r.writes) as f64 / readers as f64 / secs),
        ("tree_quiesces".into(), r.quiesces as f64),
        ("tree_quiesce_ns".into(), mean(r.quiesce_ps, r.quiesces)),
        ("tree_applied".into(), d.applied as f64),
        ("tree_applied_ns".into(), mean(d.applied_ps, d.applied)),
        ("tree_delegate_busy".into(), d.applied_ps as f64 * 1e-12 / secs),
        ("tree_order_violations".into(), r.order_violations as f64),
    ]
}

/// U-RCU's programs: every core a thread; the grace-period counter starts at 1.
fn urcu_program(
    t: &TreeBench,
    p: &super::Bi,
    seed: u64,
    runtime: Runtime,
    mut image: Vec<(u64, [Word; 8])>,
    world: TreeWorld,
) -> ProgramSpec {
    use super::urcu::{UState, Urcu, GP};
    let cores = p.core_count();
    let mut gp = [0; 8];
    gp[0] = 1;
    image.push((GP, gp));
    let share = (t.updates * 4_294_967_296.0).round() as u64;
    let apps = (0..cores)
        .map(|i| {
            Some((
                0u8,
                App::Urcu(Box::new(Urcu {
                    st: UState::Idle,
                    me: i as u32,
                    threads: cores as u32,
                    key: 0,
                    insert: false,
                    t0: 0,
                    rng: crate::engine::rng::mix(seed, 0xb0_a5a1, i as u64 + 1) | 1,
                    key_range: 2 * t.nodes,
                    update_share: share,
                    warmup: t.warmup,
                    end: t.end,
                    obj_base: runtime.layout.obj_base,
                    gp: 0,
                    scan: 0,
                    todo: VecDeque::new(),
                    freed: Vec::new(),
                    bounds: Bounds::default(),
                    tally: Tally::default(),
                })),
            ))
        })
        .collect();
    ProgramSpec {
        runtime,
        clocks: vec![DomainClock { offset: 0, tick: 1 }; p.domains],
        apps,
        image,
        warm: true,
        world: Some(world),
        buffered: t.store_buffer.is_some(),
        core: super::program::front_params(&p.params, t.store_buffer),
    }
}
