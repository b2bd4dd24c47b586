//! The BI machine as one [`Protocol`]: cores, the domains' LLCs and the
//! global memories (see the module doc in `mod.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

use smallvec::SmallVec;

use super::lines::Lines;
use super::program::{App, Prog, ProgramSpec, World};
use super::{Bench, FlushMode, FlushOp, LineState, Mutant, Params};
use crate::agents::cache::{CacheGeometry, SetAssoc, VictimPolicy};
use crate::agents::protocol::{AgentId, ChannelOrder, Ctx, OpKind, Protocol, Role, Step, Violation, WorkOp};
use crate::engine::Time;

/// A line address.
pub type Line = u64;
/// A data value (checking; timed runs carry them too).
pub type Val = u32;

pub const REQ: u8 = 0;
pub const DOWN: u8 = 1;
pub const RESP: u8 = 2;
pub const MREQ: u8 = 3;
pub const MRESP: u8 = 4;
/// Coherent mode only (`home.rs`): the home's snoops to an LLC, and the LLC's
/// answers to the home (snoop acks, a grant's completion).
pub const SNOOP: u8 = 5;
pub const HRESP: u8 = 6;
pub const CHANNELS: [&str; 7] = ["req", "down", "resp", "mem_req", "mem_resp", "snoop", "home_resp"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    // core -> its LLC (REQ)
    GetS {
        line: Line,
    },
    GetM {
        line: Line,
    },
    /// A dirty L2 victim.
    PutM {
        line: Line,
        val: Val,
    },
    /// clflush/clflushopt (`inv`) or clwb; `data`: the issuer's dirty copy.
    Flush {
        line: Line,
        inv: bool,
        data: Option<Val>,
    },
    // LLC -> core (DOWN, FIFO)
    Data {
        line: Line,
        val: Val,
        excl: bool,
    },
    /// Invalidate (or, with `keep`, downgrade to S and return dirty data).
    Inv {
        line: Line,
        keep: bool,
    },
    PutAck {
        line: Line,
    },
    FlushAck {
        line: Line,
    },
    // core -> LLC (RESP)
    Ack {
        line: Line,
        data: Option<Val>,
        kept: bool,
    },
    // LLC <-> memory
    MemRd {
        line: Line,
    },
    MemWr {
        line: Line,
        val: Val,
    },
    MemData {
        line: Line,
        val: Val,
    },
    MemWrAck {
        line: Line,
    },
    // coherent mode (home.rs): LLC -> home (MREQ)
    /// A miss or an upgrade that wants M permission for the domain.
    MemRdX {
        line: Line,
    },
    /// A flush, machine-wide: the home snoops every domain holding the line.
    MemFlush {
        line: Line,
        inv: bool,
    },
    // home -> LLC (MRESP)
    /// The line with the domain's permission: M (`excl`) or S.
    Grant {
        line: Line,
        val: Val,
        excl: bool,
    },
    MemFlushAck {
        line: Line,
    },
    // home -> LLC (SNOOP)
    /// Recall the line from the domain's cores: invalidate it (`inv`) or
    /// downgrade the domain to S; return dirty data.
    Snoop {
        line: Line,
        inv: bool,
    },
    // LLC -> home (HRESP)
    SnoopAck {
        line: Line,
        data: Option<Val>,
    },
    /// A grant arrived: the home's transaction on the line is over.
    MemDone {
        line: Line,
    },
    // core <-> core (RESP): the tree's delegation (`tree.rs`)
    /// An update of key `line` for the delegate: insert or delete.
    Delegate {
        line: Line,
        insert: bool,
    },
    /// The delegate's answer.
    Delegated {
        line: Line,
    },
}

impl Msg {
    pub fn line(self) -> Line {
        match self {
            Msg::GetS { line }
            | Msg::GetM { line }
            | Msg::PutM { line, .. }
            | Msg::Flush { line, .. }
            | Msg::Data { line, .. }
            | Msg::Inv { line, .. }
            | Msg::PutAck { line }
            | Msg::FlushAck { line }
            | Msg::Ack { line, .. }
            | Msg::MemRd { line }
            | Msg::MemWr { line, .. }
            | Msg::MemData { line, .. }
            | Msg::MemWrAck { line }
            | Msg::MemRdX { line }
            | Msg::MemFlush { line, .. }
            | Msg::Grant { line, .. }
            | Msg::MemFlushAck { line }
            | Msg::Snoop { line, .. }
            | Msg::SnoopAck { line, .. }
            | Msg::MemDone { line }
            | Msg::Delegate { line, .. }
            | Msg::Delegated { line } => line,
        }
    }

    pub fn vc(self) -> u8 {
        match self {
            Msg::GetS { .. } | Msg::GetM { .. } | Msg::PutM { .. } | Msg::Flush { .. } => REQ,
            Msg::Data { .. } | Msg::Inv { .. } | Msg::PutAck { .. } | Msg::FlushAck { .. } => DOWN,
            Msg::Ack { .. } | Msg::Delegate { .. } | Msg::Delegated { .. } => RESP,
            Msg::MemRd { .. } | Msg::MemWr { .. } | Msg::MemRdX { .. } | Msg::MemFlush { .. } => MREQ,
            Msg::MemData { .. } | Msg::MemWrAck { .. } | Msg::Grant { .. } | Msg::MemFlushAck { .. } => MRESP,
            Msg::Snoop { .. } => SNOOP,
            Msg::SnoopAck { .. } | Msg::MemDone { .. } => HRESP,
        }
    }

    pub fn carries_data(self) -> bool {
        matches!(
            self,
            Msg::PutM { .. }
                | Msg::Flush { data: Some(_), .. }
                | Msg::Data { .. }
                | Msg::Ack { data: Some(_), .. }
                | Msg::MemWr { .. }
                | Msg::MemData { .. }
                | Msg::Grant { .. }
                | Msg::SnoopAck { data: Some(_), .. }
        )
    }
}

/// A private line's stable MESI state (I: absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum P {
    S,
    E,
    M,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PLine {
    pub st: P,
    pub val: Val,
}

/// An L1 tag (the L1 holds no state of its own: L1 ⊂ L2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Tag;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Wait {
    #[default]
    None,
    /// A load (`store` None) or store miss.
    Miss { line: Line, store: Option<Val>, id: u64 },
    /// A clflush: the core issues nothing until its ack.
    Clflush { line: Line },
}

/// Where a micro-benchmark is (timing only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Phase {
    #[default]
    Prep,
    PrepFence,
    Measure,
    MeasureFence,
    Reread,
    RereadFence,
    Done,
    /// Fig 12's loader: loads (and, on the same core, the invalidation when due).
    Load,
    /// A periodic invalidation: flushing line `i`, then the fence.
    Flushing,
    FlushFence,
    /// Fig 12B's flusher between invalidations.
    Idle,
    /// Aggressive: the flush of the line just loaded, then the fence.
    AggrFlush,
    AggrFence,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Run {
    pub phase: Phase,
    /// The operation's index in its phase, and (read bench) the line index.
    pub i: u64,
    pub cur: u64,
    /// Read bench: the current line was flushed already.
    pub flushed: bool,
    pub rep: u64,
    pub t0: Time,
    /// When the last load completed.
    pub t_end: Time,
    pub total: Time,
    pub ops: u64,
    pub reread: Time,
    pub rng: u64,
    /// Fig 12 (timing): when this core's next step is (its last action's
    /// time plus the time it keeps the core, or a later message's), so a
    /// core can tell the time without the engine's clock.
    pub clock: Time,
    /// When the next periodic invalidation is due (loader: the next period's start).
    pub next_flush: Time,
    /// Loads since the last invalidation.
    pub since_flush: u64,
    /// The line of the last load (aggressive flushes it).
    pub prev: u64,
    /// In the measured periods: the loader's idle time (its refills over),
    /// the invalidations' time (first flush to the fence's end) and number.
    pub idle: Time,
    pub flush_total: Time,
    pub flushes: u64,
    pub flush_t0: Time,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Core {
    /// L1 tags (timing; the checker keeps one private level).
    pub l1: Option<Lines<Tag>>,
    pub l2: Lines<PLine>,
    /// Dirty lines written back (PutM, or a flush's data): the latest
    /// value and the acks still owed for it (PutAck, or FlushAck of a flush
    /// that carried data). A recall meanwhile is answered from here.
    pub wb: SmallVec<[(Line, Val, u8); 2]>,
    /// Lines with a flush in flight, and whether it carried data.
    pub flushing: SmallVec<[(Line, bool); 4]>,
    /// Load misses in flight and their operation ids, when the benchmark
    /// lets the core have more than one (Fig 12's loader); else a miss is `wait`.
    pub loads: SmallVec<[(Line, u64); 4]>,
    pub wait: Wait,
    /// The last load's line and value (tests).
    pub last: Option<(Line, Val)>,
    pub ids: u64,
    pub run: Run,
    /// A core running a program on the BI runtime (timing).
    pub prog: Option<Box<Prog>>,
}

/// The LLC's line: the L3 copy and the domain directory's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LLine {
    pub sharers: u64,
    pub owner: Option<u8>,
    pub dirty: bool,
    pub val: Val,
    pub busy: Busy,
    /// Coherent mode: the domain's permission at the home (always M when
    /// not coherent); I while a miss is in flight or after a snoop
    /// invalidated a line that is still busy.
    pub mp: Mp,
    /// Coherent mode: a home's snoop collecting the domain cores' acks.
    pub snoop: Option<Snp>,
}

impl LLine {
    /// Core `k`'s answer to an invalidation or recall: its data if it had
    /// the line dirty, and whether it keeps a (clean) copy.
    pub(super) fn record_ack(&mut self, k: u8, data: Option<Val>, kept: bool) {
        if let Some(v) = data {
            self.val = v;
            self.dirty = true;
        }
        if self.owner == Some(k) {
            self.owner = None;
        }
        if kept {
            self.sharers |= Bi::bit(k);
        } else {
            self.sharers &= !Bi::bit(k);
        }
    }
}

/// A domain's machine-level permission on a line (coherent mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mp {
    I,
    S,
    M,
}

/// A snoop in progress at an LLC: acks still owed by its cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Snp {
    pub acks: u8,
    pub inv: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    GetS,
    GetM,
    Flush { inv: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Busy {
    None,
    /// Reading memory for core `req`.
    Mem {
        req: u8,
        write: bool,
    },
    /// Collecting `acks` from the domain's cores, then finishing `kind` for `req`.
    Collect {
        req: u8,
        kind: Kind,
        acks: u8,
    },
    /// Writing back for `req`'s flush.
    Wb {
        req: u8,
        inv: bool,
    },
    /// Coherent mode: `req`'s flush is at the home, which snoops every
    /// domain holding the line (this one too).
    Home {
        req: u8,
    },
}

/// A line the LLC no longer holds but still works on: an L3 victim
/// recalled from the domain's cores, then written back; or a flush of a
/// line the domain does not hold, broadcast to its cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pend {
    pub line: Line,
    pub acks: u8,
    pub dirty: bool,
    pub val: Val,
    pub flush_req: Option<u8>,
    pub writing: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Llc {
    pub lines: Lines<LLine>,
    pub pend: SmallVec<[Pend; 2]>,
}

// a core is the common agent (one per core of the machine); boxing it would cost a pointer chase per message
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Node {
    Core(Core),
    Llc(Llc),
    /// A global memory: the values written to it (kept when checking).
    Mem(BTreeMap<Line, Val>),
    /// Coherent mode: a global memory with the machine's home directory.
    Home(super::home::Home),
}

/// Lines whose last written value the checker follows (coherent mode).
pub const GHOST_LINES: usize = 2;

/// Checking, coherent mode: the last value stored to each line. Timing a
/// program (`program.rs`): the words of the lines' versions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Ghost {
    pub last: [Val; GHOST_LINES],
    pub world: Option<Box<World>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    L1,
    L2,
    Miss,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Load {
        line: Line,
        level: Level,
    },
    Store {
        line: Line,
        val: Val,
        level: Level,
    },
    Flush {
        line: Line,
        op: FlushOp,
    },
    Fence,
    /// A private (L2) eviction (checking).
    Evict {
        line: Line,
    },
    /// An L3 eviction (checking).
    LlcEvict {
        line: Line,
    },
    /// A benchmark core waits `dur` (timing: Fig 12's flusher between
    /// invalidations, or a loader whose refills are over).
    Wait {
        dur: Time,
    },
}

/// The caches' shapes (timing); None: no capacity (checking).
#[derive(Debug, Clone, Copy)]
pub struct Shapes {
    pub l1: CacheGeometry,
    pub l2: CacheGeometry,
    pub l3: CacheGeometry,
    pub policy: VictimPolicy,
}

#[derive(Debug, Clone)]
pub struct Bi {
    pub domains: usize,
    pub cores: usize,
    pub mems: usize,
    /// Interleaving of lines over the memories, in lines.
    pub interleave: u64,
    pub params: Params,
    pub shapes: Option<Shapes>,
    pub bench: Option<Bench>,
    /// The memory that holds the benchmark's lines (default: its domain's).
    pub bench_home: Option<usize>,
    pub mutant: Option<Mutant>,
    /// Checking: lines, and store values 1..=values.
    pub lines: u64,
    pub values: Val,
    /// Memories keep the values written (checking, tests).
    pub keep_values: bool,
    pub seed: u64,
    /// Coherent across domains (`home.rs`): the baselines' machine.
    pub coherent: bool,
    /// Cores that run programs on the BI runtime (`program.rs`; timing).
    pub program: Option<Arc<ProgramSpec>>,
    /// The tree benchmark the program runs (its measurements).
    pub tree: Option<super::tree::TreeBench>,
}

impl Bi {
    /// A checkable machine: `domains` × `cores`, `lines` lines, no capacity.
    pub fn checking(domains: usize, cores: usize, lines: u64, values: Val) -> Self {
        Bi {
            domains,
            cores,
            mems: 1,
            interleave: 1,
            params: Params::default(),
            shapes: None,
            bench: None,
            bench_home: None,
            mutant: None,
            lines,
            values,
            keep_values: true,
            seed: 0,
            coherent: false,
            program: None,
            tree: None,
        }
    }

    /// The same machine, coherent across domains or not.
    pub fn with_coherent(mut self, coherent: bool) -> Self {
        self.coherent = coherent;
        self
    }

    pub fn with_mutant(mut self, m: Option<Mutant>) -> Self {
        self.mutant = m;
        self
    }

    /// Memories keep the values written back: checking, tests, and programs
    /// (whose loads branch on the words; timing alone needs no values).
    pub(super) fn keeps_values(&self) -> bool {
        self.keep_values || self.program.is_some()
    }

    fn is(&self, m: Mutant) -> bool {
        self.mutant == Some(m)
    }

    pub fn core_count(&self) -> usize {
        self.domains * self.cores
    }

    pub fn llc_agent(&self, d: usize) -> AgentId {
        (self.core_count() + d) as AgentId
    }

    pub(super) fn domain_of(&self, core: AgentId) -> usize {
        core as usize / self.cores
    }

    /// The memory agent that is `line`'s home.
    pub fn home(&self, line: Line) -> AgentId {
        let m = (line / self.interleave.max(1)) % self.mems as u64;
        (self.core_count() + self.domains + m as usize) as AgentId
    }

    /// The `i`-th line homed at memory `m`.
    pub fn line_at(&self, m: usize, i: u64) -> Line {
        let il = self.interleave.max(1);
        ((i / il) * self.mems as u64 + m as u64) * il + i % il
    }

    fn role_of(&self, id: AgentId) -> usize {
        let id = id as usize;
        if id < self.core_count() {
            0
        } else if id < self.core_count() + self.domains {
            1
        } else {
            2
        }
    }

    /// A core running the benchmark: domain 0's first, and its second as Fig 12B's flusher.
    fn bench_core(&self, id: AgentId) -> bool {
        match self.bench {
            Some(Bench::Periodic { mode: FlushMode::Other, .. }) => id <= 1,
            Some(_) => id == 0,
            None => false,
        }
    }

    fn bench_line(&self, i: u64) -> Line {
        let home = self.bench_home.unwrap_or(0);
        self.line_at(home, i)
    }

    fn new_core(&self) -> Core {
        let (l1, l2) = match (self.shapes, self.is(Mutant::NoCapacity)) {
            (Some(s), false) => (
                Some(Lines::Assoc(Box::new(SetAssoc::new(s.l1, s.policy, self.seed)))),
                Lines::Assoc(Box::new(SetAssoc::new(s.l2, s.policy, self.seed))),
            ),
            (Some(_), true) => (Some(Lines::map()), Lines::map()),
            (None, _) => (None, Lines::map()),
        };
        Core {
            l1,
            l2,
            wb: SmallVec::new(),
            flushing: SmallVec::new(),
            loads: SmallVec::new(),
            wait: Wait::None,
            last: None,
            ids: 0,
            run: Run::default(),
            prog: None,
        }
    }

    fn new_llc(&self) -> Llc {
        let lines = match self.shapes {
            Some(s) if !self.is(Mutant::NoCapacity) => Lines::Assoc(Box::new(SetAssoc::new(s.l3, s.policy, self.seed))),
            _ => Lines::map(),
        };
        Llc { lines, pend: SmallVec::new() }
    }

    /// A warm start for the read benchmark: the caches as one pass over
    /// the lines, in order, leaves them (only the last lines the caches can
    /// hold are inserted).
    fn warm(&self, core: &mut Core, llc: &mut Llc, lines: u64) {
        let cap = match self.shapes {
            Some(s) if !self.is(Mutant::NoCapacity) => s.l1.lines() + s.l2.lines() + s.l3.lines(),
            _ => lines,
        };
        for i in lines.saturating_sub(cap)..lines {
            let line = self.bench_line(i);
            let e = LLine { sharers: 1, owner: None, dirty: false, val: 0, busy: Busy::None, mp: Mp::M, snoop: None };
            if let Some((v, _)) = llc.lines.insert(line, e) {
                core.l2.remove(v);
                if let Some(l1) = &mut core.l1 {
                    l1.remove(v);
                }
            }
            if let Some((v, _)) = core.l2.insert(line, PLine { st: P::S, val: 0 }) {
                if let Some(l1) = &mut core.l1 {
                    l1.remove(v);
                }
            }
            if let Some(l1) = &mut core.l1 {
                l1.insert(line, Tag);
            }
        }
    }

    pub(super) fn level(&self, c: &Core, line: Line) -> Level {
        if c.l1.as_ref().is_some_and(|l1| l1.contains(line)) {
            Level::L1
        } else if c.l2.contains(line) {
            Level::L2
        } else {
            Level::Miss
        }
    }

    /// Load misses a core may have in flight.
    fn mlp(&self) -> usize {
        match self.bench {
            Some(Bench::Periodic { mlp, .. }) => mlp as usize,
            _ => 1,
        }
    }

    /// Whether core `c` may access `line` now.
    pub(super) fn may_access(&self, c: &Core, line: Line, write: bool) -> bool {
        if c.wait != Wait::None || c.flushing.iter().any(|f| f.0 == line) || c.loads.iter().any(|l| l.0 == line) {
            return false;
        }
        let hit = match c.l2.get(line) {
            Some(l) => !write || l.st != P::S,
            None => false,
        };
        if !hit && c.loads.len() >= self.mlp() {
            return false;
        }
        hit || !c.wb.iter().any(|w| w.0 == line)
    }

    pub(super) fn may_flush(&self, c: &Core, line: Line, op: FlushOp) -> bool {
        c.wait == Wait::None
            && !c.flushing.iter().any(|f| f.0 == line)
            && !c.loads.iter().any(|l| l.0 == line)
            && match op {
                FlushOp::Clflush => c.flushing.is_empty(),
                _ => c.flushing.len() < self.params.flush_slots as usize,
            }
    }

    // ------------------------------------------------------------ core

    fn install(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>, line: Line, pl: PLine) {
        if let Some(old) = c.l2.get_mut(line) {
            *old = pl;
            c.l2.touch(line);
        } else if let Some((v, vl)) = c.l2.insert(line, pl) {
            if let Some(l1) = &mut c.l1 {
                l1.remove(v);
            }
            if vl.st == P::M {
                push_wb(c, v, vl.val);
                let llc = self.llc_agent(self.domain_of(ctx.me));
                ctx.send(llc, REQ, Msg::PutM { line: v, val: vl.val });
            }
        }
        if let Some(l1) = &mut c.l1 {
            l1.insert(line, Tag);
        }
    }

    fn core_message(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>, from: AgentId, msg: Msg) -> Result<(), Violation> {
        let llc = self.llc_agent(self.domain_of(ctx.me));
        if self.bench.is_some() {
            // a message steps the core now, unless a step is due later already
            c.run.clock = c.run.clock.max(ctx.now);
        }
        match msg {
            Msg::Data { line, val, excl } if c.loads.iter().any(|l| l.0 == line) => {
                let i = c.loads.iter().position(|l| l.0 == line).expect("pending");
                let (_, id) = c.loads.swap_remove(i);
                c.last = Some((line, val));
                self.install(c, ctx, line, PLine { st: if excl { P::E } else { P::S }, val });
                c.run.t_end = ctx.now;
                ctx.done(id);
            }
            Msg::Data { line, val, excl } => {
                let Wait::Miss { line: l, store, id } = c.wait else { return Err(Violation::unexpected(c.wait, msg)) };
                if l != line {
                    return Err(Violation::unexpected(c.wait, msg));
                }
                let pl = match store {
                    Some(_) if c.prog.is_some() => PLine { st: P::M, val: self.prog_store(c, ctx, val) },
                    Some(v) => PLine { st: P::M, val: v },
                    None => {
                        c.last = Some((line, val));
                        PLine { st: if excl { P::E } else { P::S }, val }
                    }
                };
                if store.is_some() && !excl {
                    return Err(Violation { kind: "store granted S", detail: format!("{msg:?}") });
                }
                if let Some(v) = store {
                    self.wrote(ctx, line, v);
                }
                self.install(c, ctx, line, pl);
                c.wait = Wait::None;
                c.run.t_end = ctx.now;
                ctx.done(id);
                if let Some(p) = c.prog.as_mut() {
                    let w = p.swapped.take();
                    let w = if store.is_none() { Some(self.prog_loaded(c, ctx, val)) } else { w };
                    self.prog_next(c, ctx, w)?;
                }
            }
            Msg::Inv { line, keep } => {
                let wb = c.wb.iter().find(|w| w.0 == line).map(|w| w.1);
                let (data, kept) = match c.l2.get(line).copied() {
                    Some(pl) => {
                        let data = if pl.st == P::M { Some(pl.val) } else { wb };
                        if keep {
                            c.l2.get_mut(line).expect("held").st = P::S;
                        } else {
                            c.l2.remove(line);
                            if let Some(l1) = &mut c.l1 {
                                l1.remove(line);
                            }
                        }
                        (data, keep)
                    }
                    None => (wb, false),
                };
                ctx.send(llc, RESP, Msg::Ack { line, data, kept });
            }
            Msg::PutAck { line } => pop_wb(c, line),
            Msg::FlushAck { line } => {
                let Some(i) = c.flushing.iter().position(|f| f.0 == line) else {
                    return Err(Violation::unexpected("no flush of the line", msg));
                };
                let (_, carried) = c.flushing.swap_remove(i);
                if carried {
                    pop_wb(c, line);
                }
                if c.wait == (Wait::Clflush { line }) {
                    c.wait = Wait::None;
                }
            }
            Msg::Delegate { .. } | Msg::Delegated { .. } => self.prog_deliver(c, ctx, from, msg)?,
            _ => return Err(Violation::unexpected("core", msg)),
        }
        Ok(())
    }

    fn core_act(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>, action: Action) -> Result<(), Violation> {
        let llc = self.llc_agent(self.domain_of(ctx.me));
        match action {
            Action::Load { line, .. } => {
                let id = c.ids;
                // (checked states stay finite: operations are numbered when timed only)
                c.ids += self.shapes.is_some() as u64;
                ctx.issued(id, OpKind::Load);
                match self.level(c, line) {
                    Level::L1 | Level::L2 => {
                        let lvl = self.level(c, line);
                        c.l2.touch(line);
                        if let Some(l1) = &mut c.l1 {
                            l1.insert(line, Tag);
                        }
                        c.last = c.l2.get(line).map(|l| (line, l.val));
                        c.run.t_end = ctx.now + self.hit_latency(lvl);
                        ctx.done(id);
                        if let (true, Some((_, v))) = (c.prog.is_some(), c.last) {
                            let w = self.prog_loaded(c, ctx, v);
                            self.prog_next(c, ctx, Some(w))?;
                        }
                    }
                    Level::Miss => {
                        if self.mlp() > 1 {
                            // an out-of-order core goes on to its next load
                            c.loads.push((line, id));
                        } else {
                            c.wait = Wait::Miss { line, store: None, id };
                        }
                        ctx.send(llc, REQ, Msg::GetS { line });
                    }
                }
            }
            Action::Store { line, val, .. } => {
                let id = c.ids;
                // (checked states stay finite: operations are numbered when timed only)
                c.ids += self.shapes.is_some() as u64;
                ctx.issued(id, OpKind::Store);
                let lvl = self.level(c, line);
                let val = match (c.prog.is_some(), c.l2.get(line).copied()) {
                    (true, Some(pl)) if pl.st != P::S => self.prog_store(c, ctx, pl.val),
                    _ => val,
                };
                match c.l2.get_mut(line) {
                    Some(pl) if pl.st != P::S => {
                        pl.st = P::M;
                        pl.val = val;
                        self.wrote(ctx, line, val);
                        c.l2.touch(line);
                        if let Some(l1) = &mut c.l1 {
                            l1.insert(line, Tag);
                        }
                        c.run.t_end = ctx.now + self.hit_latency(lvl);
                        ctx.done(id);
                        if let Some(p) = c.prog.as_mut() {
                            let w = p.swapped.take();
                            self.prog_next(c, ctx, w)?;
                        }
                    }
                    _ => {
                        c.wait = Wait::Miss { line, store: Some(val), id };
                        ctx.send(llc, REQ, Msg::GetM { line });
                    }
                }
            }
            Action::Flush { line, op } => {
                let mut inv = op != FlushOp::Clwb || self.params.clwb_invalidates;
                if op != FlushOp::Clwb && self.is(Mutant::FlushKeepsLine) {
                    inv = false;
                }
                let mut data = None;
                if let Some(pl) = c.l2.get(line).copied() {
                    let skip = op == FlushOp::Clwb && self.is(Mutant::ClwbNoWriteback);
                    if pl.st == P::M && !skip {
                        data = Some(pl.val);
                        push_wb(c, line, pl.val);
                    }
                    if inv {
                        c.l2.remove(line);
                        if let Some(l1) = &mut c.l1 {
                            l1.remove(line);
                        }
                    } else if data.is_some() {
                        c.l2.get_mut(line).expect("held").st = P::E;
                    }
                } else if let Some(&(_, val, _)) = c.wb.iter().find(|w| w.0 == line) {
                    // the line left with an eviction whose PutM may still be on its way: the flush
                    // can overtake it, and the LLC, which still counts this core the owner, would
                    // drop the PutM that follows, so the flush carries the data too
                    if !(op == FlushOp::Clwb && self.is(Mutant::ClwbNoWriteback)) {
                        data = Some(val);
                        push_wb(c, line, val);
                    }
                }
                c.flushing.push((line, data.is_some()));
                if op == FlushOp::Clflush {
                    c.wait = Wait::Clflush { line };
                }
                ctx.send(llc, REQ, Msg::Flush { line, inv, data });
            }
            Action::Fence => {}
            Action::Evict { line } => {
                if let Some(pl) = c.l2.remove(line) {
                    if let Some(l1) = &mut c.l1 {
                        l1.remove(line);
                    }
                    if pl.st == P::M {
                        push_wb(c, line, pl.val);
                        ctx.send(llc, REQ, Msg::PutM { line, val: pl.val });
                    }
                }
            }
            Action::LlcEvict { .. } => unreachable!("an LLC's action"),
            Action::Wait { .. } => {}
        }
        if self.bench.is_some() {
            c.run.clock = ctx.now + self.busy_time(&action);
        }
        if self.bench_core(ctx.me) {
            self.bench_advance(c, ctx.now, action);
        }
        if c.prog.is_some() && matches!(action, Action::Flush { .. } | Action::Fence | Action::Wait { .. }) {
            // (a clflush's wait for its ack keeps the core from the next micro-op)
            self.prog_next(c, ctx, None)?;
        }
        Ok(())
    }

    /// How long an action keeps its core from the next (an in-order core waits for its hit).
    fn busy_time(&self, action: &Action) -> Time {
        match action {
            Action::Wait { dur } => *dur,
            a => self.action_latency(0, a).unwrap_or(0),
        }
    }

    fn hit_latency(&self, lvl: Level) -> Time {
        match lvl {
            Level::L1 => self.params.l1_latency,
            _ => self.params.l2_latency,
        }
    }

    // ------------------------------------------------------------ bench

    fn next_random(r: &mut u64) -> u64 {
        crate::workloads::rng::xorshift64star(r)
    }

    /// The benchmark's next action for core `c`, if it may go now.
    fn bench_next(&self, c: &Core) -> Option<Action> {
        let b = self.bench?;
        let r = &c.run;
        match (b, r.phase) {
            (_, Phase::Done) => None,
            (Bench::Read { flush, .. }, _) => {
                let line = self.bench_line(r.cur);
                if flush && !r.flushed {
                    self.may_flush(c, line, FlushOp::Clflush).then_some(Action::Flush { line, op: FlushOp::Clflush })
                } else {
                    self.may_access(c, line, false).then(|| Action::Load { line, level: self.level(c, line) })
                }
            }
            (Bench::Flush { op, state, .. }, phase) => {
                let line = self.bench_line(r.i);
                match phase {
                    Phase::Prep => match state {
                        LineState::Read => {
                            self.may_access(c, line, false).then(|| Action::Load { line, level: self.level(c, line) })
                        }
                        LineState::Modified => self.may_access(c, line, true).then(|| Action::Store {
                            line,
                            val: 1 + r.rep as Val,
                            level: self.level(c, line),
                        }),
                        LineState::Invalid => self
                            .may_flush(c, line, FlushOp::Clflush)
                            .then_some(Action::Flush { line, op: FlushOp::Clflush }),
                    },
                    Phase::Measure => self.may_flush(c, line, op).then_some(Action::Flush { line, op }),
                    Phase::Reread => {
                        self.may_access(c, line, false).then(|| Action::Load { line, level: self.level(c, line) })
                    }
                    _ => (c.wait == Wait::None && c.flushing.is_empty()).then_some(Action::Fence),
                }
            }
            (Bench::Periodic { mode, op, period, periods, settle, .. }, phase) => {
                let end = period.saturating_mul(periods);
                let flush = |i: u64| {
                    let line = self.bench_line(i);
                    self.may_flush(c, line, op).then_some(Action::Flush { line, op })
                };
                match phase {
                    // an invalidation in progress finishes, even past the end
                    Phase::Flushing => flush(r.i),
                    Phase::AggrFlush => flush(r.prev),
                    Phase::FlushFence | Phase::AggrFence => {
                        // an mfence orders the loads in flight too
                        (c.wait == Wait::None && c.flushing.is_empty() && c.loads.is_empty()).then_some(Action::Fence)
                    }
                    _ if r.clock >= end => None,
                    Phase::Idle if r.clock >= r.next_flush => flush(0),
                    Phase::Idle => Some(Action::Wait { dur: r.next_flush.min(end) - r.clock }),
                    _ if mode == FlushMode::Same && r.clock >= r.next_flush => flush(0),
                    _ if settle > 0
                        && r.since_flush >= settle
                        && matches!(mode, FlushMode::Same | FlushMode::Other)
                        && r.clock < r.next_flush =>
                    {
                        // the refills are over: the rest of the period runs at the steady rate
                        Some(Action::Wait { dur: r.next_flush.min(end) - r.clock })
                    }
                    _ => {
                        let line = self.bench_line(r.cur);
                        self.may_access(c, line, false).then(|| Action::Load { line, level: self.level(c, line) })
                    }
                }
            }
        }
    }

    fn bench_advance(&self, c: &mut Core, now: Time, action: Action) {
        let Some(b) = self.bench else { return };
        let r = &mut c.run;
        match b {
            Bench::Read { lines, ops, sequential, .. } => {
                if r.i == 0 && !r.flushed {
                    r.t0 = now;
                }
                if matches!(action, Action::Flush { .. }) {
                    r.flushed = true;
                    return;
                }
                r.flushed = false;
                r.i += 1;
                r.ops += 1;
                r.cur = if sequential { r.i % lines.max(1) } else { Self::next_random(&mut r.rng) % lines.max(1) };
                if r.i >= ops {
                    r.phase = Phase::Done;
                }
            }
            Bench::Periodic { lines, mode, period, skip, .. } => {
                // the first periods bring the caches to the periodic state; the rest are measured
                let measured = period.saturating_mul(skip);
                match action {
                    Action::Wait { dur } if now >= measured => r.idle += dur,
                    Action::Load { .. } => {
                        if mode == FlushMode::Other {
                            while now >= r.next_flush {
                                r.next_flush += period;
                                r.since_flush = 0;
                            }
                        }
                        r.ops += (now >= measured) as u64;
                        r.since_flush += 1;
                        r.prev = r.cur;
                        r.cur = Self::next_random(&mut r.rng) % lines.max(1);
                        if mode == FlushMode::Aggressive {
                            r.phase = Phase::AggrFlush;
                        }
                    }
                    Action::Flush { .. } => match r.phase {
                        Phase::AggrFlush => r.phase = Phase::AggrFence,
                        Phase::Flushing => {
                            r.i += 1;
                            if r.i >= lines {
                                r.phase = Phase::FlushFence;
                            }
                        }
                        _ => {
                            // an invalidation starts; the next is due a period after this one's start
                            r.flush_t0 = now;
                            r.next_flush += period;
                            r.since_flush = 0;
                            r.i = 1;
                            r.phase = if lines > 1 { Phase::Flushing } else { Phase::FlushFence };
                        }
                    },
                    Action::Fence if r.phase == Phase::AggrFence => r.phase = Phase::Load,
                    Action::Fence => {
                        if r.flush_t0 >= measured {
                            r.flush_total += now + self.params.fence - r.flush_t0;
                            r.flushes += 1;
                        }
                        r.phase = if mode == FlushMode::Other { Phase::Idle } else { Phase::Load };
                    }
                    _ => {}
                }
            }
            Bench::Flush { lines, reps, reread, .. } => match r.phase {
                Phase::Prep | Phase::Measure | Phase::Reread => {
                    if r.i == 0 {
                        r.t0 = now;
                    }
                    r.i += 1;
                    if r.i >= lines {
                        r.i = 0;
                        r.phase = match r.phase {
                            Phase::Prep => Phase::PrepFence,
                            Phase::Measure => Phase::MeasureFence,
                            _ => Phase::RereadFence,
                        };
                    }
                }
                Phase::PrepFence => r.phase = Phase::Measure,
                Phase::MeasureFence => {
                    r.total += now + self.params.fence - r.t0;
                    r.ops += lines;
                    r.phase = if reread { Phase::Reread } else { Self::next_rep(r, reps) };
                }
                Phase::RereadFence => {
                    r.reread += r.t_end.max(now) - r.t0;
                    r.phase = Self::next_rep(r, reps);
                }
                _ => {}
            },
        }
    }

    fn next_rep(r: &mut Run, reps: u64) -> Phase {
        r.rep += 1;
        if r.rep >= reps {
            Phase::Done
        } else {
            Phase::Prep
        }
    }

    // ------------------------------------------------------------ LLC

    pub(super) fn bit(k: u8) -> u64 {
        1u64 << k
    }

    pub(super) fn core_id(&self, d: usize, k: u8) -> AgentId {
        (d * self.cores + k as usize) as AgentId
    }

    /// Send `Inv` to every core in `mask` of domain `d`; how many.
    pub(super) fn inv_all(&self, ctx: &mut Ctx<Msg, Ghost>, d: usize, mut mask: u64, line: Line, keep: bool) -> u8 {
        let mut n = 0;
        while mask != 0 {
            let k = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            ctx.send(self.core_id(d, k), DOWN, Msg::Inv { line, keep });
            n += 1;
        }
        n
    }

    /// A core's request on a line the domain may serve: recall what
    /// conflicts from the domain's cores, or grant now.
    pub(super) fn serve(&self, e: &mut LLine, ctx: &mut Ctx<Msg, Ghost>, d: usize, k: u8, line: Line, write: bool) {
        if e.owner == Some(k) {
            // a clean E line the core dropped silently
            e.owner = None;
        }
        let acks = match (e.owner, write) {
            (Some(o), false) => self.inv_all(ctx, d, Self::bit(o), line, true),
            (o, true) => {
                let mask = (e.sharers | o.map_or(0, Self::bit)) & !Self::bit(k);
                self.inv_all(ctx, d, mask, line, false)
            }
            (None, false) => 0,
        };
        if acks > 0 {
            let kind = if write { Kind::GetM } else { Kind::GetS };
            e.busy = Busy::Collect { req: k, kind, acks };
        } else {
            self.grant(e, ctx, d, k, line, write);
        }
    }

    /// No transaction and no snoop on the line.
    pub(super) fn idle(e: &LLine) -> bool {
        e.busy == Busy::None && e.snoop.is_none()
    }

    /// Checking, coherent mode: follow the last value stored to a line.
    fn wrote(&self, ctx: &mut Ctx<Msg, Ghost>, line: Line, val: Val) {
        if self.coherent && self.shapes.is_none() && (line as usize) < GHOST_LINES {
            ctx.ghost.last[line as usize] = val;
        }
    }

    fn grant(&self, e: &mut LLine, ctx: &mut Ctx<Msg, Ghost>, d: usize, k: u8, line: Line, write: bool) {
        let excl = write || (e.mp == Mp::M && e.owner.is_none() && e.sharers & !Self::bit(k) == 0);
        if excl {
            e.owner = Some(k);
            e.sharers = 0;
        } else {
            e.sharers |= Self::bit(k);
        }
        e.busy = Busy::None;
        ctx.send(self.core_id(d, k), DOWN, Msg::Data { line, val: e.val, excl });
    }

    /// The flush's domain is clean of the line: write it back if dirty, then ack.
    /// Returns whether the entry goes (an invalidating flush that is done).
    fn finish_flush(&self, e: &mut LLine, ctx: &mut Ctx<Msg, Ghost>, d: usize, k: u8, line: Line, inv: bool) -> bool {
        if e.dirty {
            e.dirty = false;
            e.busy = Busy::Wb { req: k, inv };
            ctx.send(self.home(line), MREQ, Msg::MemWr { line, val: e.val });
            false
        } else {
            e.busy = Busy::None;
            ctx.send(self.core_id(d, k), DOWN, Msg::FlushAck { line });
            inv
        }
    }

    /// Drop `line` from the L3: recall it from the domain's cores, then write it back if dirty.
    fn evict(&self, l: &mut Llc, ctx: &mut Ctx<Msg, Ghost>, d: usize, line: Line) {
        let Some(e) = l.lines.remove(line) else { return };
        let holders = e.sharers | e.owner.map_or(0, Self::bit);
        let acks = self.inv_all(ctx, d, holders, line, false);
        if acks > 0 {
            l.pend.push(Pend { line, acks, dirty: e.dirty, val: e.val, flush_req: None, writing: false });
        } else if e.dirty {
            ctx.send(self.home(line), MREQ, Msg::MemWr { line, val: e.val });
            l.pend.push(Pend { line, acks: 0, dirty: false, val: e.val, flush_req: None, writing: true });
        }
    }

    fn llc_message(&self, l: &mut Llc, ctx: &mut Ctx<Msg, Ghost>, from: AgentId, msg: Msg) -> Result<Step, Violation> {
        let d = ctx.me as usize - self.core_count();
        let k = (from as usize).wrapping_sub(d * self.cores) as u8;
        let line = msg.line();
        let pending = l.pend.iter().position(|p| p.line == line);
        let busy = l.lines.get(line).is_some_and(|e| !Self::idle(e));
        if matches!(msg, Msg::GetS { .. } | Msg::GetM { .. } | Msg::PutM { .. } | Msg::Flush { .. })
            && (pending.is_some() || busy)
        {
            return Ok(Step::Stall);
        }
        if self.coherent
            && matches!(msg, Msg::Flush { .. } | Msg::Snoop { .. } | Msg::Grant { .. } | Msg::MemFlushAck { .. })
        {
            return self.llc_coherent(l, ctx, d, k, msg);
        }
        match msg {
            Msg::GetS { .. } | Msg::GetM { .. } => {
                let write = matches!(msg, Msg::GetM { .. });
                if l.lines.get(line).is_none() {
                    if l.lines.full(line) {
                        let Some(v) = l.lines.victim_where(line, |_, e| Self::idle(e)) else {
                            return Ok(Step::Stall);
                        };
                        self.evict(l, ctx, d, v);
                    }
                    let e = LLine {
                        sharers: 0,
                        owner: None,
                        dirty: false,
                        val: 0,
                        busy: Busy::Mem { req: k, write },
                        mp: Mp::I,
                        snoop: None,
                    };
                    l.lines.insert(line, e);
                    let rd = if self.coherent && write { Msg::MemRdX { line } } else { Msg::MemRd { line } };
                    ctx.send(self.home(line), MREQ, rd);
                    return Ok(Step::Done);
                }
                l.lines.touch(line);
                let e = l.lines.get_mut(line).expect("held");
                if write && e.mp != Mp::M {
                    // coherent: the domain holds the line shared; the home upgrades it first
                    e.busy = Busy::Mem { req: k, write };
                    ctx.send(self.home(line), MREQ, Msg::MemRdX { line });
                    return Ok(Step::Done);
                }
                self.serve(e, ctx, d, k, line, write);
            }
            Msg::PutM { val, .. } => {
                if let Some(e) = l.lines.get_mut(line) {
                    if e.owner == Some(k) {
                        e.val = val;
                        e.dirty = true;
                        e.owner = None;
                    }
                }
                ctx.send(from, DOWN, Msg::PutAck { line });
            }
            Msg::Flush { inv, data, .. } => {
                let local = self.is(Mutant::FlushCoreLocal);
                let Some(e) = l.lines.get_mut(line) else {
                    // the domain holds no copy (a dirty one went with an eviction already)
                    if self.params.broadcast_on_miss && !local {
                        ctx.delay = self.params.broadcast;
                        let others = (u64::MAX >> (64 - self.cores)) & !Self::bit(k);
                        let acks = if self.cores > 1 { self.inv_all(ctx, d, others, line, false) } else { 0 };
                        if acks > 0 {
                            l.pend.push(Pend { line, acks, dirty: false, val: 0, flush_req: Some(k), writing: false });
                        } else {
                            ctx.send(from, DOWN, Msg::FlushAck { line });
                        }
                        ctx.delay = 0;
                    } else {
                        ctx.send(from, DOWN, Msg::FlushAck { line });
                    }
                    return Ok(Step::Done);
                };
                if e.owner == Some(k) {
                    if let Some(v) = data {
                        e.val = v;
                        e.dirty = true;
                    }
                    if inv {
                        e.owner = None;
                    }
                }
                if inv {
                    e.sharers &= !Self::bit(k);
                }
                let acks = if inv && local {
                    0
                } else if inv {
                    let mask = (e.sharers | e.owner.map_or(0, Self::bit)) & !Self::bit(k);
                    self.inv_all(ctx, d, mask, line, false)
                } else {
                    match e.owner {
                        Some(o) if o != k => self.inv_all(ctx, d, Self::bit(o), line, true),
                        _ => 0,
                    }
                };
                if acks > 0 {
                    e.busy = Busy::Collect { req: k, kind: Kind::Flush { inv }, acks };
                } else if self.finish_flush(e, ctx, d, k, line, inv && !local) {
                    l.lines.remove(line);
                }
            }
            Msg::Ack { data, kept, .. } => {
                if let Some(i) = pending {
                    let p = &mut l.pend[i];
                    p.acks -= 1;
                    if let Some(v) = data {
                        p.val = v;
                        p.dirty = true;
                    }
                    if p.acks == 0 {
                        if p.dirty {
                            p.writing = true;
                            ctx.send(self.home(line), MREQ, Msg::MemWr { line, val: p.val });
                        } else {
                            if let Some(r) = p.flush_req {
                                ctx.send(self.core_id(d, r), DOWN, Msg::FlushAck { line });
                            }
                            l.pend.swap_remove(i);
                        }
                    }
                    return Ok(Step::Done);
                }
                let Some(e) = l.lines.get_mut(line) else { return Err(Violation::unexpected("no line", msg)) };
                if e.snoop.is_some() {
                    if self.snoop_ack(e, ctx, line, k, data, kept) {
                        l.lines.remove(line);
                    }
                    return Ok(Step::Done);
                }
                let Busy::Collect { req, kind, acks } = e.busy else { return Err(Violation::unexpected(e.busy, msg)) };
                e.record_ack(k, data, kept);
                if acks > 1 {
                    e.busy = Busy::Collect { req, kind, acks: acks - 1 };
                    return Ok(Step::Done);
                }
                match kind {
                    Kind::GetS => self.grant(e, ctx, d, req, line, false),
                    Kind::GetM => self.grant(e, ctx, d, req, line, true),
                    Kind::Flush { inv } => {
                        if self.finish_flush(e, ctx, d, req, line, inv) {
                            l.lines.remove(line);
                        }
                    }
                }
            }
            Msg::MemData { val, .. } => {
                let Some(e) = l.lines.get_mut(line) else { return Err(Violation::unexpected("no line", msg)) };
                let Busy::Mem { req, write } = e.busy else { return Err(Violation::unexpected(e.busy, msg)) };
                e.val = val;
                e.dirty = false;
                e.mp = Mp::M;
                self.grant(e, ctx, d, req, line, write);
            }
            Msg::MemWrAck { .. } => {
                if let Some(i) = pending {
                    if let Some(r) = l.pend[i].flush_req {
                        ctx.send(self.core_id(d, r), DOWN, Msg::FlushAck { line });
                    }
                    l.pend.swap_remove(i);
                    return Ok(Step::Done);
                }
                let Some(e) = l.lines.get_mut(line) else { return Err(Violation::unexpected("no line", msg)) };
                let Busy::Wb { req, inv } = e.busy else { return Err(Violation::unexpected(e.busy, msg)) };
                e.busy = Busy::None;
                ctx.send(self.core_id(d, req), DOWN, Msg::FlushAck { line });
                if inv && e.sharers == 0 && e.owner.is_none() {
                    l.lines.remove(line);
                }
            }
            _ => return Err(Violation::unexpected("llc", msg)),
        }
        Ok(Step::Done)
    }

    /// Per domain, per line: at most one core with E or M, and then no other with S.
    fn swmr(&self, agents: &[Node]) -> Result<(), (String, String)> {
        for d in 0..self.domains {
            let mut seen: BTreeMap<Line, (u32, u32)> = BTreeMap::new();
            for a in &agents[d * self.cores..(d + 1) * self.cores] {
                let Node::Core(c) = a else { continue };
                for (line, pl) in c.l2.held() {
                    let e = seen.entry(line).or_default();
                    if pl.st == P::S {
                        e.0 += 1;
                    } else {
                        e.1 += 1;
                    }
                }
            }
            for (line, (r, w)) in seen {
                if w > 1 || (w == 1 && r > 0) {
                    return Err((
                        "swmr".into(),
                        format!("domain {d}, line {line}: {w} cores hold it E/M and {r} hold it S"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// What a benchmark measured (timing).
    pub fn bench_result(&self, agents: &[Node]) -> Option<Run> {
        match (self.bench, agents.first()) {
            // a read benchmark runs from its first load's issue to its last load's completion
            (Some(Bench::Read { .. }), Some(Node::Core(c))) => Some(Run { total: c.run.t_end - c.run.t0, ..c.run }),
            (Some(_), Some(Node::Core(c))) => Some(c.run),
            _ => None,
        }
    }
}

impl Protocol for Bi {
    type Agent = Node;
    type Msg = Msg;
    type Ghost = Ghost;
    type Action = Action;

    fn name(&self) -> String {
        let m = self.mutant.and_then(|m| super::MUTANTS.iter().find(|x| x.1 == m)).map(|m| m.0);
        let c = if self.coherent { "-coherent" } else { "" };
        format!("bi{c}{}", m.map(|m| format!("+{m}")).unwrap_or_default())
    }

    fn vc_orders(&self) -> &[ChannelOrder] {
        use ChannelOrder::*;
        const ORDERS: [ChannelOrder; 7] = [Unordered, Fifo, Unordered, Unordered, Unordered, Unordered, Unordered];
        // the coherent mode's two channels only when coherent: the other machine is unchanged
        &ORDERS[..if self.coherent { 7 } else { 5 }]
    }

    fn initial(&self) -> Vec<(Vec<Node>, Ghost)> {
        let mut cores: Vec<Core> = (0..self.core_count()).map(|_| self.new_core()).collect();
        let mut llcs: Vec<Llc> = (0..self.domains).map(|_| self.new_llc()).collect();
        if let Some(Bench::Read { lines, warm: true, .. } | Bench::Periodic { lines, warm: true, .. }) = self.bench {
            self.warm(&mut cores[0], &mut llcs[0], lines);
        }
        if let (Some(Bench::Read { lines, sequential: false, .. } | Bench::Periodic { lines, .. }), Some(c)) =
            (self.bench, cores.first_mut())
        {
            c.run.rng = self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            c.run.cur = Self::next_random(&mut c.run.rng) % lines.max(1);
        }
        if let Some(Bench::Periodic { mode, .. }) = self.bench {
            cores[0].run.phase = Phase::Load;
            if mode == FlushMode::Other {
                cores[1].run.phase = Phase::Idle;
            }
        }
        let mut ghost = Ghost::default();
        let mut mems: Vec<BTreeMap<Line, Val>> = vec![BTreeMap::new(); self.mems];
        let mut dirs: Vec<BTreeMap<Line, super::home::HLine>> = vec![BTreeMap::new(); self.mems];
        if let Some(spec) = &self.program {
            let mut world = World { tree: spec.world.clone(), ..World::default() };
            let first = self.core_count() + self.domains;
            let mut versions = Vec::with_capacity(spec.image.len());
            for (line, words) in &spec.image {
                let v = world.versions.line(*words);
                mems[self.home(*line) as usize - first].insert(*line, v);
                versions.push(v);
            }
            if spec.warm {
                let mp = if self.coherent { Mp::S } else { Mp::M };
                for (d, llc) in llcs.iter_mut().enumerate() {
                    for ((line, _), &val) in spec.image.iter().zip(&versions).rev() {
                        let e = LLine { sharers: 0, owner: None, dirty: false, val, busy: Busy::None, mp, snoop: None };
                        llc.lines.insert(*line, e);
                        if self.coherent {
                            let dir = dirs[self.home(*line) as usize - first].entry(*line);
                            dir.or_insert(super::home::HLine::FREE).sharers |= 1 << d;
                        }
                    }
                }
            }
            ghost.world = Some(Box::new(world));
            for (c, app) in cores.iter_mut().zip(&spec.apps) {
                c.prog = app.as_ref().map(|a| Box::new(Prog::new(a.0, a.1.clone())));
            }
        }
        let mut agents: Vec<Node> = cores.into_iter().map(Node::Core).collect();
        agents.extend(llcs.into_iter().map(Node::Llc));
        if self.coherent {
            agents.extend(mems.into_iter().zip(dirs).map(|(mem, dir)| Node::Home(super::home::Home { mem, dir })));
        } else {
            agents.extend(mems.into_iter().map(Node::Mem));
        }
        vec![(agents, ghost)]
    }

    fn on_message(
        &self,
        agent: &mut Node,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        match agent {
            Node::Core(c) => self.core_message(c, ctx, from, msg).map(|_| Step::Done),
            Node::Llc(l) => self.llc_message(l, ctx, from, msg),
            Node::Home(h) => self.home_message(h, ctx, from, msg),
            Node::Mem(m) => {
                match msg {
                    Msg::MemRd { line } => {
                        let val = m.get(&line).copied().unwrap_or(0);
                        ctx.send(from, MRESP, Msg::MemData { line, val });
                    }
                    Msg::MemWr { line, val } => {
                        if self.keeps_values() {
                            m.insert(line, val);
                        }
                        ctx.send(from, MRESP, Msg::MemWrAck { line });
                    }
                    _ => return Err(Violation::unexpected("memory", msg)),
                }
                Ok(Step::Done)
            }
        }
    }

    fn actions(&self, agent: &Node, me: AgentId, _ghost: &Ghost, out: &mut Vec<Action>) {
        match agent {
            Node::Core(c) if c.prog.is_some() => out.extend(self.prog_action(c)),
            Node::Core(c) if self.bench.is_some() && self.bench_core(me) => out.extend(self.bench_next(c)),
            Node::Core(_) if self.bench.is_some() => {}
            Node::Core(c) if self.shapes.is_none() => {
                for line in 0..self.lines {
                    if self.may_access(c, line, false) && !c.l2.contains(line) {
                        out.push(Action::Load { line, level: Level::Miss });
                    }
                    if self.may_access(c, line, true) {
                        for val in 1..=self.values {
                            if c.l2.get(line) != Some(&PLine { st: P::M, val }) {
                                out.push(Action::Store { line, val, level: self.level(c, line) });
                            }
                        }
                    }
                    for op in FlushOp::ALL {
                        if self.may_flush(c, line, op) {
                            out.push(Action::Flush { line, op });
                        }
                    }
                    if c.wait == Wait::None && c.l2.contains(line) && !c.flushing.iter().any(|f| f.0 == line) {
                        out.push(Action::Evict { line });
                    }
                }
            }
            Node::Llc(l) if self.shapes.is_none() && self.bench.is_none() && self.program.is_none() => {
                for (line, e) in l.lines.held() {
                    if Self::idle(&e) && !l.pend.iter().any(|p| p.line == line) {
                        out.push(Action::LlcEvict { line });
                    }
                }
            }
            _ => {}
        }
    }

    fn act(&self, agent: &mut Node, ctx: &mut Ctx<Msg, Ghost>, action: Action) -> Result<(), Violation> {
        match agent {
            Node::Core(c) => self.core_act(c, ctx, action),
            Node::Llc(l) => {
                let Action::LlcEvict { line } = action else { unreachable!("an LLC only evicts") };
                let d = ctx.me as usize - self.core_count();
                self.evict(l, ctx, d, line);
                Ok(())
            }
            Node::Mem(_) | Node::Home(_) => unreachable!("memories do not act"),
        }
    }

    fn is_environment(&self, _action: &Action) -> bool {
        self.bench.is_none() && self.program.is_none()
    }

    fn invariant(&self, agents: &[Node], ghost: &Ghost) -> Result<(), (String, String)> {
        if self.coherent {
            self.coherent_swmr(agents, ghost)
        } else {
            self.swmr(agents)
        }
    }

    fn stats(&self, agents: &[Node]) -> Vec<(String, f64)> {
        if let Some(t) = self.tree {
            let tallies = agents.iter().filter_map(|a| match a {
                Node::Core(c) => match c.prog.as_ref().map(|p| &p.app) {
                    Some(App::TreeReader(r)) => Some((false, r.tally)),
                    Some(App::TreeDelegate(d)) => Some((true, d.tally)),
                    Some(App::Urcu(u)) => Some((false, u.tally)),
                    _ => None,
                },
                _ => None,
            });
            let threads = self.core_count() - (t.front_end == super::tree::FrontEnd::Bi) as usize;
            return super::tree::stats(tallies, &t, threads);
        }
        if let Some(Bench::Periodic { mode, period, periods, skip, .. }) = self.bench {
            let core = |i: usize| match agents.get(i) {
                Some(Node::Core(c)) => Some(&c.run),
                _ => None,
            };
            let (Some(l), Some(f)) = (core(0), core(if mode == FlushMode::Other { 1 } else { 0 })) else {
                return Vec::new();
            };
            let end = period.saturating_mul(periods);
            let measured = end.saturating_sub(period.saturating_mul(skip));
            let ns = |t: Time| t as f64 / 1000.0;
            let busy = measured.saturating_sub(l.idle);
            return vec![
                ("bench_ops".into(), l.ops as f64),
                ("bench_ns_per_op".into(), if l.ops > 0 { ns(busy) / l.ops as f64 } else { f64::NAN }),
                ("bench_measured_ns".into(), ns(measured)),
                ("bench_idle_ns".into(), ns(l.idle)),
                ("bench_flush_ns".into(), ns(f.flush_total)),
                ("bench_flushes".into(), f.flushes as f64),
                ("bench_done".into(), (l.clock >= end && f.clock >= end) as u8 as f64),
            ];
        }
        match self.bench_result(agents) {
            Some(r) => vec![
                ("bench_ops".into(), r.ops as f64),
                ("bench_ns_per_op".into(), if r.ops > 0 { r.total as f64 / r.ops as f64 / 1000.0 } else { 0.0 }),
                (
                    "bench_reread_ns_per_op".into(),
                    if r.ops > 0 { r.reread as f64 / r.ops as f64 / 1000.0 } else { 0.0 },
                ),
                ("bench_done".into(), (r.phase == Phase::Done) as u8 as f64),
            ],
            None => Vec::new(),
        }
    }

    fn busy(&self, agent: &Node) -> bool {
        match agent {
            Node::Core(c) => c.wait != Wait::None || !c.flushing.is_empty() || !c.wb.is_empty() || !c.loads.is_empty(),
            Node::Llc(l) => !l.pend.is_empty() || l.lines.held().iter().any(|(_, e)| !Self::idle(e)),
            Node::Mem(_) => false,
            Node::Home(h) => h.busy(),
        }
    }

    fn agent_name(&self, id: AgentId) -> String {
        match self.role_of(id) {
            0 => format!("core{}.{}", self.domain_of(id), id as usize % self.cores),
            1 => format!("llc{}", id as usize - self.core_count()),
            _ => format!("mem{}", id as usize - self.core_count() - self.domains),
        }
    }

    fn role(&self, id: AgentId) -> Role {
        if self.role_of(id) == 0 {
            Role::Core
        } else {
            Role::Home
        }
    }

    fn carries_data(&self, msg: &Msg) -> bool {
        msg.carries_data()
    }

    fn handler_latency(&self, id: AgentId, msg: &Msg) -> Option<Time> {
        let p = &self.params;
        Some(match (self.role_of(id), msg) {
            (1, Msg::GetS { .. } | Msg::GetM { .. } | Msg::Flush { .. } | Msg::PutM { .. }) => {
                p.l3_latency.saturating_sub(p.l2_latency)
            }
            // coherent: the home's directory is read with the line (Intel keeps it in DRAM)
            (2, Msg::MemRd { .. } | Msg::MemRdX { .. } | Msg::MemFlush { .. }) => {
                p.memory_latency.saturating_sub(p.l3_latency)
            }
            // a snoop looks the line up in the L3 and its directory
            (1, Msg::Snoop { .. }) => p.l3_latency.saturating_sub(p.l2_latency),
            (2, Msg::MemWr { .. }) => p.memory_write,
            _ => 0,
        })
    }

    fn occupancy(&self, id: AgentId, msg: &Msg) -> Option<Time> {
        Some(match (self.role_of(id), msg) {
            (2, Msg::MemWr { .. }) => self.params.writeback_service,
            _ => 0,
        })
    }

    fn action_latency(&self, _id: AgentId, action: &Action) -> Option<Time> {
        let p = &self.params;
        Some(match action {
            Action::Load { level: Level::L1, .. } | Action::Store { level: Level::L1, .. } => p.l1_latency,
            Action::Load { .. } | Action::Store { .. } => p.l2_latency,
            Action::Flush { .. } => p.flush_issue,
            Action::Fence => p.fence,
            Action::Evict { .. } | Action::LlcEvict { .. } | Action::Wait { .. } => 0,
        })
    }

    fn action_busy(&self, _id: AgentId, action: &Action) -> Option<Time> {
        Some(self.busy_time(action))
    }

    fn vc_names(&self) -> Vec<String> {
        CHANNELS[..self.vc_orders().len()].iter().map(|s| s.to_string()).collect()
    }

    fn workload_action(&self, agent: &Node, _me: AgentId, op: &WorkOp) -> Option<Action> {
        let Node::Core(c) = agent else { return None };
        if c.prog.is_some() {
            return None;
        }
        let line = op.line;
        match op.kind {
            OpKind::Load => self.may_access(c, line, false).then(|| Action::Load { line, level: self.level(c, line) }),
            OpKind::Store | OpKind::Rmw => self.may_access(c, line, true).then(|| Action::Store {
                line,
                val: op.value as Val,
                level: self.level(c, line),
            }),
            _ => None,
        }
    }

    fn has_actions(&self, id: AgentId) -> bool {
        match self.role_of(id) {
            0 => true,
            1 => self.shapes.is_none() && self.bench.is_none(),
            _ => false,
        }
    }
}

/// A dirty line leaves the core: keep its latest value until every ack owed for it.
fn push_wb(c: &mut Core, line: Line, val: Val) {
    match c.wb.iter_mut().find(|w| w.0 == line) {
        Some(w) => {
            w.1 = val;
            w.2 += 1;
        }
        None => c.wb.push((line, val, 1)),
    }
}

fn pop_wb(c: &mut Core, line: Line) {
    if let Some(i) = c.wb.iter().position(|w| w.0 == line) {
        c.wb[i].2 -= 1;
        if c.wb[i].2 == 0 {
            c.wb.swap_remove(i);
        }
    }
}
