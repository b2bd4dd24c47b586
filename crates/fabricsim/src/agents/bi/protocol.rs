//! The BI machine as one [`Protocol`]: cores, the domains' LLCs and the
//! global memories (see the module doc in `mod.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

use smallvec::SmallVec;

use super::lines::Lines;
use super::program::{App, Prog, ProgramSpec, World};
use super::{Bench, FlushMode, FlushOp, Mutant, Params};
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

/// (Debug: `text.rs`.)
#[derive(Clone, PartialEq, Eq, Hash)]
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

/// The LLC's line: the L3 copy and the domain directory's entry (Debug: `text.rs`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
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
/// line the domain does not hold, broadcast to its cores (Debug: `text.rs`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pend {
    pub line: Line,
    pub acks: u8,
    pub dirty: bool,
    pub val: Val,
    pub flush_req: Option<u8>,
    pub writing: bool,
}

/// (Debug: `text.rs`.)
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Llc {
    pub lines: Lines<LLine>,
    pub pend: SmallVec<[Pend; 2]>,
}

// a core is the common agent (one per core of the machine); boxing it would cost a pointer chase per message
#[allow(clippy::large_enum_variant)]
#[derive(Clone, PartialEq, Eq, Hash)]
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
    /// A program core's load whose word its thread does not wait for
    /// (`front.rs`): performed as a `Load`, the core goes on at once.
    LoadAhead {
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
    /// A program core's front end holds its next micro-op `dur` longer
    /// (`front.rs`; timing).
    Stall {
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

    pub(super) fn is(&self, m: Mutant) -> bool {
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
    pub(super) fn bench_core(&self, id: AgentId) -> bool {
        match self.bench {
            Some(Bench::Periodic { mode: FlushMode::Other, .. }) => id <= 1,
            Some(_) => id == 0,
            None => false,
        }
    }

    pub(super) fn bench_line(&self, i: u64) -> Line {
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

    /// Whether a benchmark core goes on past its load misses: Fig 12's
    /// loader's loads are independent (up to the fill buffers); the other
    /// benchmarks' are a chain, one at a time.
    pub(super) fn loads_ahead(&self) -> bool {
        matches!(self.bench, Some(Bench::Periodic { dependent: false, .. }))
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
        // a miss holds a fill buffer (`front.rs`)
        if !hit && !self.fill_free(c) {
            return false;
        }
        hit || !c.wb.iter().any(|w| w.0 == line)
    }

    pub(super) fn may_flush(&self, c: &Core, line: Line, op: FlushOp) -> bool {
        c.wait == Wait::None
            && !c.flushing.iter().any(|f| f.0 == line)
            && !c.loads.iter().any(|l| l.0 == line)
            && (op != FlushOp::Clflush || c.flushing.is_empty())
            // a flush holds a fill buffer as a miss does (`front.rs`)
            && self.fill_free(c)
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
                c.prog = app.as_ref().map(|a| Box::new(Prog::new(a.0, a.1.clone(), spec.core, spec.buffered)));
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
            Action::Load { level: Level::L1, .. }
            | Action::LoadAhead { level: Level::L1, .. }
            | Action::Store { level: Level::L1, .. } => p.l1_latency,
            Action::Load { .. } | Action::LoadAhead { .. } | Action::Store { .. } => p.l2_latency,
            Action::Flush { .. } => p.flush_issue,
            Action::Fence => p.fence,
            Action::Evict { .. } | Action::LlcEvict { .. } | Action::Wait { .. } | Action::Stall { .. } => 0,
        })
    }

    fn action_busy(&self, id: AgentId, action: &Action) -> Option<Time> {
        let program = self.program.as_ref().is_some_and(|p| p.apps.get(id as usize).is_some_and(|a| a.is_some()));
        Some(if program { self.prog_busy(action) } else { self.busy_time(action) })
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
