//! Cores that run a program on the BI runtime (docs/design/bi.md §3.4):
//! the timed machine executes the micro-ops `runtime.rs` expands each BI
//! call into, and the runtime branches on the words its loads return, so
//! the runtime `fabricsim check` verifies is the one that is timed.
//!
//! **Words through the machine.** The machine carries one value per line
//! ([`Val`]); the runtime reads words. A line's value is a *version*: the
//! [`Versions`] table (in the run's [`World`]) holds the words of every
//! version, and a store makes a new version from the one the storing core
//! holds. A stale copy in another domain keeps its old version, so a load
//! of it returns exactly the words it was written with, and a store can
//! never be lost or invented by the table (the machine moves versions the
//! way it moved values).
//!
//! **The application** above the runtime ([`App`]) picks each thread's
//! next BI call from the results of the last. A core runs one thread.

use std::hash::{Hash, Hasher};

use smallvec::SmallVec;

use super::front::{Front, Side};
use super::protocol::{Action, Bi, Core, Ghost, Level, Line, Msg, Val, Wait, RESP};
use super::runtime::{Call, DomainClock, Layout, MicroOp, Runtime, Thread, Word, WORDS_PER_LINE};
use super::store_buffer::{holds_store, Entry, FILL_BUFFERS};
use super::tree::{Delegate, Reader, TreeWorld};
use super::urcu::Urcu;
use super::FlushOp;
use crate::agents::cache::Beside;
use crate::agents::core::{self as front, StoreBuffer};
use crate::agents::protocol::{AgentId, Ctx, Violation};
use crate::engine::{Time, NS};

const WPL: usize = WORDS_PER_LINE as usize;

/// The words of every version of every line (version 0: a line never written).
#[derive(Debug, Clone)]
pub struct Versions {
    words: Vec<[Word; WPL]>,
}

impl Default for Versions {
    fn default() -> Self {
        Versions { words: vec![[0; WPL]] }
    }
}

impl Versions {
    pub fn word(&self, v: Val, w: u8) -> Word {
        self.words[v as usize][w as usize]
    }

    pub fn words(&self, v: Val) -> &[Word; WPL] {
        &self.words[v as usize]
    }

    /// A new version with these words.
    pub fn line(&mut self, words: [Word; WPL]) -> Val {
        self.words.push(words);
        Val::try_from(self.words.len() - 1).expect("fewer than 2^32 line versions")
    }

    /// Version `v` with word `w` set to `x` (`v` itself if that changes nothing).
    pub fn store(&mut self, v: Val, w: u8, x: Word) -> Val {
        let mut l = self.words[v as usize];
        if l[w as usize] == x {
            return v;
        }
        l[w as usize] = x;
        self.line(l)
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

/// What a timed run's programs share: the versions of the lines' words,
/// and the tree benchmark's authoritative tree (the delegate's).
#[derive(Debug, Clone, Default)]
pub struct World {
    pub versions: Versions,
    pub tree: Option<TreeWorld>,
}

// Timing only (the checker never has a world): two worlds are told apart by size.
impl PartialEq for World {
    fn eq(&self, o: &Self) -> bool {
        self.versions.words == o.versions.words
    }
}
impl Eq for World {}
impl Hash for World {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.versions.len().hash(h);
    }
}

/// What a thread does next, as its application decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Next {
    /// A BI call through the runtime.
    Call(Call),
    /// An application's own micro-op (a store to a new object).
    Op(MicroOp),
    /// A message to another core (the tree's delegation).
    Send { to: AgentId, msg: Msg },
    /// Nothing until a message arrives.
    Block,
    /// The thread is over.
    Stop,
}

/// The application a core runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum App {
    /// A fixed list of calls (tests); `rets` collects each call's result.
    Script {
        calls: Vec<Call>,
        next: usize,
        rets: Vec<Option<Word>>,
    },
    TreeReader(Box<Reader>),
    TreeDelegate(Box<Delegate>),
    Urcu(Box<Urcu>),
}

impl App {
    /// The next step, given the result of the last call or load (`ret`).
    fn next(&mut self, ret: Option<Word>, first: bool, now: Time, world: &mut World, layout: &Layout) -> Next {
        match self {
            App::Script { calls, next, rets } => {
                if !first {
                    rets.push(ret);
                }
                match calls.get(*next) {
                    Some(&c) => {
                        *next += 1;
                        Next::Call(c)
                    }
                    None => Next::Stop,
                }
            }
            App::TreeReader(r) => r.next(ret, now, |o| layout.obj_line(o)),
            App::TreeDelegate(d) => {
                let tree = world.tree.as_mut().expect("the tree's world");
                d.next(now, &mut |k, ins| tree.apply(k, ins), |o| layout.obj_line(o))
            }
            App::Urcu(u) => u.next(ret, now, world),
        }
    }

    /// A message for this core's application: wake it if it waits.
    pub fn deliver(&mut self, from: AgentId, msg: Msg) -> bool {
        match (self, msg) {
            (App::TreeDelegate(d), Msg::Delegate { line, insert }) => {
                d.queue.push_back((from, line, insert));
                true
            }
            (App::TreeReader(r), Msg::Delegated { .. }) => {
                r.answered = true;
                true
            }
            _ => false,
        }
    }

    /// An object `bi_reclaim` gave back.
    fn reclaimed(&mut self, obj: u32, world: &mut World) {
        if let (App::TreeDelegate(d), Some(t)) = (self, world.tree.as_mut()) {
            d.outstanding -= 1;
            t.free.push(obj);
        }
    }
}

/// A core's program: its thread's runtime state, the micro-op it is on,
/// and its application.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Prog {
    pub thread: Thread,
    /// The micro-op the core executes now (None: blocked or stopped).
    pub op: Option<MicroOp>,
    pub app: App,
    pub started: bool,
    pub stopped: bool,
    /// The word an exchange replaced, for the thread's next step.
    pub swapped: Option<Word>,
    /// Retired stores and flushes not yet performed (`store_buffer.rs`).
    pub sb: StoreBuffer<Entry>,
    /// The lines whose ownership the buffer's stores asked for ahead.
    pub rfo: SmallVec<[Line; FILL_BUFFERS]>,
    /// When each micro-op may go (`front.rs`; timing only).
    pub front: Side,
}

impl Prog {
    /// Thread `me` running `app` on a core with front end `core`
    /// (`buffered`: its stores retire into its store buffer).
    pub fn new(me: u8, app: App, core: front::Params, buffered: bool) -> Self {
        Prog {
            thread: Thread::new(me),
            op: None,
            app,
            started: false,
            stopped: false,
            swapped: None,
            sb: StoreBuffer::new(),
            rfo: SmallVec::new(),
            front: Beside(Front::new(core, buffered)),
        }
    }
}

impl Bi {
    pub(super) fn runtime(&self) -> Runtime {
        self.program.as_ref().expect("a program").runtime
    }

    /// The action of a program core's current micro-op, if it may go now.
    pub(super) fn prog_action(&self, c: &Core) -> Option<Action> {
        let p = c.prog.as_ref()?;
        if !p.started {
            // the first step: a no-op that lets the core choose its first call
            return Some(Action::Wait { dur: 0 });
        }
        let op = p.op?;
        let f = &p.front.0;
        // the front end says when the micro-op may go: not before a completion, or at a known time
        let t = f.ready()?;
        if t > f.now {
            return Some(Action::Stall { dur: t - f.now });
        }
        let buffered = self.buffered();
        // with a store buffer, a store (and a flush behind one) retires into
        // it (the front end dispatched it: it had a store-buffer entry)
        let retire = buffered && c.wait == Wait::None;
        let flush = |line, op| {
            if buffered && !p.sb.is_empty() {
                retire.then_some(Action::Flush { line, op })
            } else {
                self.may_flush(c, line, op).then_some(Action::Flush { line, op })
            }
        };
        match op {
            MicroOp::Load { line, word } if p.sb.forward((line, word)).is_some() => {
                let level = Level::L1;
                let action = if f.used() { Action::Load { line, level } } else { Action::LoadAhead { line, level } };
                (c.wait == Wait::None).then_some(action)
            }
            MicroOp::Load { line, .. } | MicroOp::Prefetch { line } => {
                // another word of a line with a buffered store: the core's copy, if it holds one
                let wait = holds_store(&p.sb, line) && !c.l2.contains(line);
                let level = self.level(c, line);
                // a miss holds one of the front end's fill buffers
                let fill = level != Level::Miss || f.fill_free();
                let action = if f.used() { Action::Load { line, level } } else { Action::LoadAhead { line, level } };
                (!wait && fill && self.may_access(c, line, false)).then_some(action)
            }
            MicroOp::Store { line, .. } if buffered => {
                retire.then_some(Action::Store { line, val: 0, level: Level::L1 })
            }
            MicroOp::Store { line, .. } | MicroOp::Swap { line, .. } => {
                // the value is the new version, made when the store performs; an exchange drains the buffer
                (p.sb.is_empty() && self.may_access(c, line, true)).then(|| Action::Store {
                    line,
                    val: 0,
                    level: self.level(c, line),
                })
            }
            MicroOp::Clflushopt { line } => flush(line, FlushOp::Clflushopt),
            MicroOp::Clwb { line } => flush(line, FlushOp::Clwb),
            MicroOp::Mfence => {
                (c.wait == Wait::None && c.flushing.is_empty() && p.sb.is_empty()).then_some(Action::Fence)
            }
            // (its instructions dispatched: the front end's `ready`)
            MicroOp::Compute { .. } => Some(Action::Wait { dur: 0 }),
            MicroOp::ReadClock | MicroOp::Reclaimed { .. } | MicroOp::Done { .. } => None,
        }
    }

    /// A program core's store (or exchange) performs on version `old` of
    /// its line: the new version. An exchange keeps the word it replaced
    /// for the thread ([`Prog::swapped`]).
    pub(super) fn prog_store(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>, old: Val) -> Val {
        let p = c.prog.as_mut().expect("a program core");
        let versions = &mut ctx.ghost.world.as_mut().expect("a program's world").versions;
        match p.op {
            Some(MicroOp::Store { word, val, .. }) => versions.store(old, word, val),
            Some(MicroOp::Swap { word, val, .. }) => {
                p.swapped = Some(versions.word(old, word));
                versions.store(old, word, val)
            }
            op => unreachable!("a program core stores only its store micro-op, not {op:?}"),
        }
    }

    /// The word a program core's load reads from version `v` of its line.
    pub(super) fn prog_loaded(&self, c: &Core, ctx: &Ctx<Msg, Ghost>, v: Val) -> Word {
        let word = match c.prog.as_ref().and_then(|p| p.op) {
            Some(MicroOp::Load { word, .. }) => word,
            _ => 0,
        };
        ctx.ghost.world.as_ref().expect("a program's world").versions.word(v, word)
    }

    /// A message for a program core's application (the tree's delegation).
    pub(super) fn prog_deliver(
        &self,
        c: &mut Core,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<(), Violation> {
        let Some(p) = c.prog.as_mut() else { return Err(Violation::unexpected("a core without a program", msg)) };
        if !p.app.deliver(from, msg) {
            return Err(Violation::unexpected("the core's application", msg));
        }
        if p.op.is_none() && p.thread.idle() && p.started && !p.stopped {
            self.prog_next(c, ctx, None, ctx.now)?;
        }
        Ok(())
    }

    /// The current micro-op is over (with a load's word): run the thread
    /// to its next micro-op the machine executes, which goes to the front
    /// end to go no earlier than `at`.
    pub(super) fn prog_next(
        &self,
        c: &mut Core,
        ctx: &mut Ctx<Msg, Ghost>,
        loaded: Option<Word>,
        at: Time,
    ) -> Result<(), Violation> {
        let rt = self.runtime();
        let d = self.domain_of(ctx.me);
        let clock = self.program.as_ref().expect("a program").clocks[d];
        let Some(p) = c.prog.as_mut() else { return Ok(()) };
        let mut loaded = loaded;
        let mut ret = None;
        loop {
            if p.thread.idle() {
                let first = !p.started;
                p.started = true;
                let world = ctx.ghost.world.as_mut().expect("a program's world");
                // an application's own load hands its word back as the result
                let r = loaded.take().or(ret.take());
                let next = p.app.next(r, first, ctx.now, world, &rt.layout);
                if let Some(why) = world.tree.as_ref().and_then(|t| t.exhausted(rt.layout.log_cap)) {
                    return Err(Violation { kind: "tree object pool exhausted", detail: why });
                }
                match next {
                    Next::Call(call) => p.thread.start(call),
                    Next::Op(op) => {
                        p.op = Some(op);
                        // an application's own load hands its word to the application
                        p.front.0.push(op, true, at);
                        return Ok(());
                    }
                    Next::Send { to, msg } => {
                        ctx.send(to, RESP, msg);
                        continue;
                    }
                    Next::Block => {
                        p.op = None;
                        return Ok(());
                    }
                    Next::Stop => {
                        p.op = None;
                        p.stopped = true;
                        return Ok(());
                    }
                }
            }
            match rt.next(&mut p.thread, loaded.take()) {
                MicroOp::ReadClock => loaded = Some(clock.read(ctx.now / NS)),
                MicroOp::Reclaimed { obj } => {
                    let world = ctx.ghost.world.as_mut().expect("a program's world");
                    p.app.reclaimed(obj, world);
                }
                MicroOp::Done { ret: r } => ret = r,
                op => {
                    p.op = Some(op);
                    p.front.0.push(op, p.thread.uses_loaded(), at);
                    return Ok(());
                }
            }
        }
    }
}

/// A timed run's programs: the runtime, each domain's clock (in ns
/// ticks), each core's application and thread index (None: idle), and the
/// memory's initial words.
#[derive(Debug, Clone)]
pub struct ProgramSpec {
    pub runtime: Runtime,
    pub clocks: Vec<DomainClock>,
    pub apps: Vec<Option<(u8, App)>>,
    pub image: Vec<(u64, [Word; WPL])>,
    /// Every domain's L3 starts holding the image, filled from its end
    /// (the steady state of a long run whose working set the L3 holds).
    pub warm: bool,
    /// The tree benchmark's authoritative tree and allocator.
    pub world: Option<TreeWorld>,
    /// Each program core's stores retire into its store buffer (false: a
    /// store waits for its line as an in-order core's does).
    pub buffered: bool,
    /// Each program core's front end (`front.rs`): the machine's preset's,
    /// [`super::CORE`], with the machine's fill buffers; its
    /// `store_buffer` is the buffer's size.
    pub core: front::Params,
}

/// A program core's front end on a machine of `params`: the preset's,
/// with the machine's fill buffers (one count for every miss: loads, RFOs,
/// flushes) and a store buffer of `store_buffer` entries (None: none; the
/// preset's size is then kept, as no store waits in it).
pub fn front_params(params: &super::Params, store_buffer: Option<u32>) -> front::Params {
    let p = super::CORE.core;
    front::Params {
        fill_buffers: u32::from(params.fill_buffers),
        store_buffer: store_buffer.unwrap_or(p.store_buffer),
        ..p
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Arc;

    use super::*;
    use crate::agents::bi::protocol::Node;
    use crate::agents::bi::runtime::{ptr_word, Layout, RtConfig};
    use crate::agents::protocol::{AgentId, Protocol, Step as PStep};

    const ROOT: u64 = 5;

    fn layout() -> Layout {
        Layout {
            readers: 1,
            writers: 1,
            log_cap: 8,
            obj_base: 100,
            obj_lines: 1,
            reader_time_base: 10,
            freed_base: 20,
            modified_base: 40,
            modified_fixed: false,
        }
    }

    /// Two domains of one core: the writer (writer 0) in domain 0, the reader (reader 0) in domain 1.
    fn machine() -> Bi {
        let mut p = Bi::checking(2, 1, 0, 0);
        p.program = Some(Arc::new(ProgramSpec {
            runtime: Runtime { layout: layout(), cfg: RtConfig { period: 1_000, ..RtConfig::default() } },
            clocks: vec![DomainClock { offset: 0, tick: 1 }; 2],
            apps: vec![None, None],
            image: Vec::new(),
            warm: false,
            world: None,
            buffered: false,
            core: crate::agents::bi::CORE.core,
        }));
        p
    }

    /// Run `script` on core `a` to its end, untimed, delivering every message.
    fn run(p: &Bi, agents: &mut [Node], g: &mut Ghost, a: usize, me: u8, script: &[Call]) -> Vec<Option<Word>> {
        let Node::Core(c) = &mut agents[a] else { panic!("a core") };
        c.prog = Some(Box::new(Prog::new(
            me,
            App::Script { calls: script.to_vec(), next: 0, rets: Vec::new() },
            p.program.as_ref().unwrap().core,
            p.program.as_ref().unwrap().buffered,
        )));
        let mut q: VecDeque<(AgentId, AgentId, Msg)> = VecDeque::new();
        for _ in 0..100_000 {
            while let Some((to, from, msg)) = q.pop_front() {
                let mut sends = Vec::new();
                let mut ctx = Ctx::new(to, g, &mut sends);
                match p.on_message(&mut agents[to as usize], &mut ctx, from, msg).expect("no violation") {
                    PStep::Stall => q.push_back((to, from, msg)),
                    PStep::Done => q.extend(sends.into_iter().map(|s| (s.to, to, s.msg))),
                }
            }
            let mut acts = Vec::new();
            p.actions(&agents[a], a as AgentId, g, &mut acts);
            let Some(&x) = acts.first() else { break };
            let mut sends = Vec::new();
            let mut ctx = Ctx::new(a as AgentId, g, &mut sends);
            p.act(&mut agents[a], &mut ctx, x).expect("no violation");
            q.extend(sends.into_iter().map(|s| (s.to, a as AgentId, s.msg)));
        }
        let Node::Core(c) = &agents[a] else { unreachable!() };
        let p = c.prog.as_ref().expect("a program");
        assert!(p.stopped, "the script ran to its end");
        let App::Script { rets, .. } = &p.app else { panic!("a script") };
        rets.clone()
    }

    fn publish(obj: u32, val: Word) -> Vec<Call> {
        vec![
            Call::Alloc { obj, track: true },
            Call::Write { obj, val },
            Call::Assign { ptr: ROOT, val: ptr_word(obj, 0) },
        ]
    }

    fn read() -> Vec<Call> {
        vec![Call::Enter, Call::Deref { ptr: ROOT, word: 0 }, Call::ReadObj { obj: 0, lines: 1 }, Call::Exit]
    }

    #[test]
    fn a_reader_in_another_domain_sees_a_stale_root_until_its_reader_engine_runs() {
        let p = machine();
        let (mut agents, mut g) = p.initial().remove(0);
        run(&p, &mut agents, &mut g, 0, 0, &publish(0, 7));
        let rets = run(&p, &mut agents, &mut g, 1, 0, &read());
        assert_eq!(rets[1], Some(ptr_word(0, 0)), "the first dereference reads the published root");
        assert_eq!(rets[2], Some(7));
        run(&p, &mut agents, &mut g, 0, 0, &publish(1, 9));
        let rets = run(&p, &mut agents, &mut g, 1, 0, &read());
        assert_eq!(rets[1], Some(ptr_word(0, 0)), "domain 1's cached root line is stale");
        let mut again = vec![Call::Quiesce { free: false, stale: true }];
        again.extend(read());
        let rets = run(&p, &mut agents, &mut g, 1, 0, &again);
        assert_eq!(rets[2], Some(ptr_word(1, 0)), "the reader engine flushed the modified root");
    }

    #[test]
    fn a_null_root_is_retried_from_memory_by_lazy_invalidation() {
        let p = machine();
        let (mut agents, mut g) = p.initial().remove(0);
        // the reader caches the NULL root, then the writer publishes
        let rets = run(&p, &mut agents, &mut g, 1, 0, &[Call::Deref { ptr: ROOT, word: 0 }]);
        assert_eq!(rets, vec![None]);
        run(&p, &mut agents, &mut g, 0, 0, &publish(0, 7));
        let rets = run(&p, &mut agents, &mut g, 1, 0, &[Call::Deref { ptr: ROOT, word: 0 }]);
        assert_eq!(rets, vec![Some(ptr_word(0, 0))], "a NULL is flushed and read again");
    }

    /// The payload word of `line` in core `a`'s private copy (None: not held).
    fn payload(agents: &[Node], g: &Ghost, a: usize, line: u64) -> Option<Word> {
        let Node::Core(c) = &agents[a] else { panic!("a core") };
        let v = c.l2.get(line)?.val;
        Some(g.world.as_ref().expect("a world").versions.word(v, super::super::runtime::PAYLOAD))
    }

    #[test]
    fn a_buffered_store_performs_only_after_every_older_one() {
        let mut p = machine();
        Arc::get_mut(p.program.as_mut().unwrap()).unwrap().buffered = true;
        let (mut agents, mut g) = p.initial().remove(0);
        let (a_line, b_line) = (layout().obj_line(0), layout().obj_line(1));
        // core 0 holds object 1's line, written and written back (clwb keeps it, clean)
        run(&p, &mut agents, &mut g, 0, 0, &[Call::Write { obj: 1, val: 1 }]);
        assert_eq!(payload(&agents, &g, 0, b_line), Some(1));
        // then writes object 0 (a miss) and object 1 (a hit): the core retires both into its buffer
        let Node::Core(c) = &mut agents[0] else { panic!("a core") };
        let calls = vec![Call::Write { obj: 0, val: 7 }, Call::Write { obj: 1, val: 9 }];
        c.prog = Some(Box::new(Prog::new(
            0,
            App::Script { calls, next: 0, rets: Vec::new() },
            super::super::CORE.core,
            true,
        )));
        let mut held = Vec::new();
        let mut q: VecDeque<(AgentId, AgentId, Msg)> = VecDeque::new();
        for _ in 0..1_000 {
            while let Some((to, from, msg)) = q.pop_front() {
                if to == 0 && matches!(msg, Msg::Data { line, .. } if line == a_line) {
                    held.push((to, from, msg)); // the older store's line is slow to come
                    continue;
                }
                let mut sends = Vec::new();
                let mut ctx = Ctx::new(to, &mut g, &mut sends);
                match p.on_message(&mut agents[to as usize], &mut ctx, from, msg).expect("no violation") {
                    PStep::Stall => q.push_back((to, from, msg)),
                    PStep::Done => q.extend(sends.into_iter().map(|s| (s.to, to, s.msg))),
                }
            }
            let mut acts = Vec::new();
            p.actions(&agents[0], 0, &g, &mut acts);
            let Some(&x) = acts.first() else { break };
            let mut sends = Vec::new();
            let mut ctx = Ctx::new(0, &mut g, &mut sends);
            p.act(&mut agents[0], &mut ctx, x).expect("no violation");
            q.extend(sends.into_iter().map(|s| (s.to, 0, s.msg)));
        }
        let Node::Core(c) = &agents[0] else { unreachable!() };
        assert!(c.prog.as_ref().unwrap().stopped, "both writes retired");
        assert_eq!(held.len(), 1, "object 0's line is on its way");
        assert_eq!(payload(&agents, &g, 0, b_line), Some(1), "the younger store waits for the older (TSO)");
        assert_eq!(c.prog.as_ref().unwrap().sb.len(), 6, "2 stores and a clwb a write, none performed");
        // the line arrives: both stores perform, in order
        for (to, from, msg) in held {
            let mut sends = Vec::new();
            let mut ctx = Ctx::new(to, &mut g, &mut sends);
            p.on_message(&mut agents[to as usize], &mut ctx, from, msg).expect("no violation");
        }
        assert_eq!(payload(&agents, &g, 0, a_line), Some(7));
        assert_eq!(payload(&agents, &g, 0, b_line), Some(9));
    }

    #[test]
    fn versions_keep_every_written_state_of_a_line() {
        let mut v = Versions::default();
        let a = v.store(0, 3, 9);
        let b = v.store(a, 4, 1);
        assert_eq!((v.word(a, 3), v.word(a, 4), v.word(b, 3), v.word(b, 4)), (9, 0, 9, 1));
        assert_eq!(v.store(b, 4, 1), b, "a store of the same word makes no version");
        assert_eq!(v.word(0, 3), 0);
    }
}
