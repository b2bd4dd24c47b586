//! The write-through family as one [`Protocol`]: who the agents are, what
//! drives the cores (a litmus program, free stores for the checker, or a
//! workload), the core's message handlers, and the checker's ghost.

use std::sync::Arc;

use smallvec::SmallVec;

use super::directory::Dir;
use super::messages::{Loc, Msg, Num, Write, CHANNELS, WT};
use super::processor::{Buffered, Proc, NO_OP};
use super::{Mutant, Params, Variant};
use crate::agents::coherence::core::{Core, STORE_BUFFER};
use crate::agents::protocol::{
    AgentId, ChannelOrder, Ctx, Envelope, OpKind, OpOrder, Protocol, Renaming, Role, Scalarset, Step, Violation, WorkOp,
};
use crate::programs::{Op, Outcome, Program};

/// (Debug: `text.rs`.)
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Node {
    Proc(Proc),
    Dir(Dir),
}

/// A store the checker follows from issue to commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GStore {
    Rlx { dir: u8, loc: Loc },
    Rel { dir: u8, ep: Num },
}

/// Checker bookkeeping: per core, its stores not yet committed, in program
/// order. A Release (CORD, SO) must commit after all of them; a store after
/// every earlier store to its address.
/// A core's uncommitted stores, oldest first, with the address each writes.
pub type Pending = SmallVec<[(GStore, Option<Loc>); 4]>;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Ghost {
    pub pending: Vec<Pending>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Free core (checker, environment): a store to `loc`, Release or not.
    Store {
        loc: Loc,
        release: bool,
    },
    /// Program, RC: perform operation j.
    Perform(u8),
    /// Program, TSO: the next operation.
    Step,
    /// Program (TSO) or timed core: the store buffer's oldest store leaves.
    Drain,
    /// Timed (environment): a load, or a store into the store buffer.
    Load {
        loc: Loc,
        acquire: bool,
    },
    Buffer {
        loc: Loc,
        release: bool,
        bytes: u32,
    },
}

/// A write-through system: its variant, sizes, CORD's parameters and what
/// drives the cores.
#[derive(Debug, Clone)]
pub struct Cord {
    pub variant: Variant,
    /// TSO cores (§6); else release consistency.
    pub tso: bool,
    pub cores: usize,
    pub dirs: usize,
    /// Locations (a program's) or lines (timed).
    pub locs: usize,
    /// Home directory per location (programs, free cores); empty: lines
    /// interleave over the directories by `granule` lines.
    pub homes: Vec<u8>,
    pub granule: u64,
    pub params: Params,
    pub program: Option<Arc<Program>>,
    pub mutant: Option<Mutant>,
    /// Timed: workload-driven cores, their loads outstanding and store buffer.
    pub driven: bool,
    pub mshrs: u16,
    /// Store buffer entries (a workload-driven core's; a TSO program core's).
    pub store_buffer: usize,
    pub line_bytes: u32,
    /// Largest store a workload issues (bytes; a store above a line is one message).
    pub max_store: u32,
    /// Checker: store one state per renaming of the (free, identical) cores.
    pub symmetry: bool,
    /// Messages in flight per (source, destination, VC) when checked (a
    /// bound that keeps the state space finite; unbounded when timed): at
    /// least one more than the unacked Releases, since a commit can release
    /// every held Release of a core at once, one RelAck each.
    pub channel_cap: usize,
}

impl Cord {
    fn base(variant: Variant, cores: usize, dirs: usize, locs: usize) -> Self {
        Cord {
            variant,
            tso: false,
            cores,
            dirs,
            locs,
            homes: (0..locs).map(|l| (l % dirs) as u8).collect(),
            granule: 1,
            params: Params::default(),
            program: None,
            mutant: None,
            driven: false,
            mshrs: 1,
            store_buffer: 1,
            line_bytes: 64,
            max_store: 0,
            symmetry: false,
            channel_cap: Params::default().proc_unacked + 1,
        }
    }

    /// Free cores that store to any location at any time (the checker's
    /// ordering invariants); location `l` lives at `homes[l]`.
    pub fn free(variant: Variant, cores: usize, dirs: usize, homes: Vec<u8>, params: Params) -> Self {
        let channel_cap = (params.proc_unacked + 1).max(2);
        Cord { homes: homes.clone(), params, channel_cap, ..Cord::base(variant, cores, dirs, homes.len()) }
    }

    /// One core per thread of `program`; `homes[l]` is location l's directory.
    pub fn running(variant: Variant, program: Arc<Program>, tso: bool, dirs: usize, homes: Vec<u8>) -> Self {
        Cord {
            tso,
            homes,
            program: Some(program.clone()),
            store_buffer: STORE_BUFFER,
            ..Cord::base(variant, program.threads.len(), dirs, 0)
        }
        .with_locs()
    }

    fn with_locs(mut self) -> Self {
        self.locs = self.homes.len();
        self
    }

    /// Workload-driven cores for the timing engine.
    #[allow(clippy::too_many_arguments)]
    pub fn timed(
        variant: Variant,
        tso: bool,
        cores: usize,
        dirs: usize,
        lines: usize,
        granule: u64,
        params: Params,
        mshrs: u16,
        store_buffer: usize,
        line_bytes: u32,
    ) -> Self {
        Cord {
            tso,
            homes: Vec::new(),
            granule: granule.max(1),
            params,
            driven: true,
            mshrs: mshrs.max(1),
            store_buffer: store_buffer.max(1),
            line_bytes,
            channel_cap: usize::MAX,
            ..Cord::base(variant, cores, dirs, lines)
        }
    }

    pub fn with_mutant(mut self, m: Option<Mutant>) -> Self {
        self.mutant = m;
        self
    }

    pub(super) fn is(&self, m: Mutant) -> bool {
        self.mutant == Some(m)
    }

    /// Directory index of location `loc`.
    pub fn home(&self, loc: Loc) -> u8 {
        match self.homes.get(loc as usize) {
            Some(&d) => d,
            None => ((loc as u64 / self.granule) % self.dirs as u64) as u8,
        }
    }

    pub(super) fn dir_agent(&self, d: u8) -> AgentId {
        (self.cores + d as usize) as AgentId
    }

    pub(super) fn dir_index(&self, a: AgentId) -> u8 {
        (a as usize - self.cores) as u8
    }

    fn prog(&self, me: AgentId) -> &[Op] {
        self.program.as_ref().map_or(&[], |p| p.threads[me as usize].as_slice())
    }

    /// The final outcome of a quiescent state: registers and memory.
    pub fn outcome(&self, agents: &[Node]) -> Outcome {
        let p = self.program.as_ref().expect("a program");
        let regs = (0..self.cores)
            .map(|t| match &agents[t] {
                Node::Proc(c) => c.core.regs[..p.registers[t].len()].to_vec(),
                Node::Dir(_) => unreachable!("cores come first"),
            })
            .collect();
        let mem = (0..self.locs)
            .map(|l| match &agents[self.dir_agent(self.home(l as Loc)) as usize] {
                Node::Dir(d) => d.mem[l],
                Node::Proc(_) => unreachable!("directories come last"),
            })
            .collect();
        Outcome { regs, mem }
    }

    // ------------------------------------------------------------ ghost

    pub(super) fn ghost_issue(&self, ctx: &mut Ctx<Msg, Ghost>, s: GStore) {
        if self.driven {
            return;
        }
        let loc = match s {
            GStore::Rlx { loc, .. } => Some(loc),
            GStore::Rel { .. } => None,
        };
        ctx.ghost.pending[ctx.me as usize].push((s, loc));
    }

    /// Record that Release of a program store writes `loc` (for the
    /// same-address check), right after `ghost_issue`.
    fn ghost_loc(&self, ctx: &mut Ctx<Msg, Ghost>, loc: Loc) {
        if let Some(last) = ctx.ghost.pending[ctx.me as usize].last_mut() {
            last.1 = Some(loc);
        }
    }

    /// A directory commits core `pid`'s store `s`: every earlier store to
    /// its address committed, and for a Release (CORD, SO) every earlier
    /// store.
    pub(super) fn ghost_commit(&self, ctx: &mut Ctx<Msg, Ghost>, pid: AgentId, s: GStore) -> Result<(), Violation> {
        if self.driven {
            return Ok(());
        }
        let list = &mut ctx.ghost.pending[pid as usize];
        let i = match s {
            // relaxed stores to one directory arrive in order: the oldest
            GStore::Rlx { dir, .. } => list.iter().position(|e| matches!(e.0, GStore::Rlx { dir: d, .. } if d == dir)),
            GStore::Rel { .. } => list.iter().position(|e| e.0 == s),
        };
        let Some(i) = i else {
            return Err(Violation { kind: "lost store", detail: format!("core {pid} committed {s:?}, never issued") });
        };
        let loc = list[i].1;
        if let Some(j) = list[..i].iter().position(|e| loc.is_some() && e.1 == loc) {
            return Err(Violation {
                kind: "same-address order",
                detail: format!("core {pid}'s {s:?} committed before its earlier {:?} to the same address", list[j].0),
            });
        }
        if matches!(s, GStore::Rel { .. }) && self.variant != Variant::Mp && i > 0 {
            return Err(Violation {
                kind: "release order",
                detail: format!("core {pid}'s Release {s:?} committed before its earlier store {:?}", list[0].0),
            });
        }
        list.remove(i);
        Ok(())
    }

    // ------------------------------------------------------------ core side

    fn core_message(&self, p: &mut Proc, ctx: &mut Ctx<Msg, Ghost>, msg: Msg) -> Result<(), Violation> {
        match msg {
            Msg::Ack { op } => {
                p.acks = p.acks.checked_sub(1).ok_or_else(|| Violation::unexpected("no ack awaited", msg))?;
                self.op_done(p, ctx, op);
            }
            Msg::RelAck { ep } => {
                let op = self.on_rel_ack(p, ep).ok_or_else(|| Violation::unexpected("no such Release", msg))?;
                self.op_done(p, ctx, op);
            }
            Msg::RdData { loc, val, op } => {
                if self.driven {
                    let i = p.loads.iter().position(|l| l.0 == loc).ok_or_else(|| Violation::unexpected("", msg))?;
                    let (_, id) = p.loads.remove(i);
                    p.acquiring = false;
                    ctx.done(id);
                    return Ok(());
                }
                if let Some(Op::Load { reg, .. }) = self.prog(ctx.me).get(op as usize) {
                    p.core.regs[*reg as usize] = val;
                }
                self.op_done(p, ctx, op);
            }
            _ => return Err(Violation::unexpected("core", msg)),
        }
        Ok(())
    }

    /// Program operation `op` (or none) completed.
    fn op_done(&self, p: &mut Proc, ctx: &mut Ctx<Msg, Ghost>, op: u8) {
        if op == NO_OP || self.program.is_none() {
            return;
        }
        ctx.done(op as u64);
        if self.tso {
            p.core.pc += 1;
            p.core.waiting = false;
        } else {
            p.core.inflight &= !(1 << op);
            p.core.done |= 1 << op;
        }
    }

    /// A program operation's write: a word when timed (checking keeps no
    /// sizes in its states).
    fn write(&self, loc: u8, value: i64) -> Write {
        let bytes = if self.channel_cap == usize::MAX { 8 } else { 0 };
        Write { loc: loc as Loc, val: value, bytes }
    }

    fn perform(&self, p: &mut Proc, ctx: &mut Ctx<Msg, Ghost>, j: u8) -> Result<(), Violation> {
        let op = self.prog(ctx.me)[j as usize];
        ctx.issued(j as u64, op_kind(op));
        let done = match op {
            Op::Load { loc, .. } => {
                ctx.send(self.dir_agent(self.home(loc as Loc)), WT, Msg::Rd { loc: loc as Loc, op: j });
                false
            }
            Op::Store { loc, value, order } => {
                // a seq_cst store also acquires: later operations wait for its ack
                let waited = if order.is_seq_cst() || self.variant == Variant::So { j } else { NO_OP };
                let done = self.send_store(p, ctx, self.write(loc, value), order.is_release(), waited);
                self.ghost_loc(ctx, loc as Loc);
                done
            }
            Op::Fence { order } if order.is_release() => self.fence(p, ctx, j),
            Op::Fence { .. } => true,
            Op::Rmw { .. } => return Err(Violation::unexpected("cord core (no RMWs)", op)),
        };
        if done {
            p.core.done |= 1 << j;
            ctx.done(j as u64);
        } else {
            p.core.inflight |= 1 << j;
        }
        Ok(())
    }

    /// TSO: the operation at the program counter.
    fn step(&self, p: &mut Proc, ctx: &mut Ctx<Msg, Ghost>) -> Result<(), Violation> {
        let pc = p.core.pc;
        let op = self.prog(ctx.me)[pc as usize];
        ctx.issued(pc as u64, op_kind(op));
        let done = match op {
            Op::Store { loc, value, .. } => {
                p.core.sb.push((loc, value));
                true
            }
            Op::Load { loc, reg, .. } => match p.core.sb.forward(loc) {
                Some(v) => {
                    p.core.regs[reg as usize] = v;
                    true
                }
                None => {
                    ctx.send(self.dir_agent(self.home(loc as Loc)), WT, Msg::Rd { loc: loc as Loc, op: pc });
                    false
                }
            },
            // mfence: the buffer drained (enabled only then), and every store committed
            Op::Fence { order } if order.is_seq_cst() => self.fence(p, ctx, pc),
            Op::Fence { .. } => true,
            Op::Rmw { .. } => return Err(Violation::unexpected("cord core (no RMWs)", op)),
        };
        if done {
            p.core.pc += 1;
            ctx.done(pc as u64);
        } else {
            p.core.waiting = true;
        }
        Ok(())
    }

    /// Timed: the store buffer's head may leave.
    fn drain_ready(&self, p: &Proc) -> bool {
        let Some(b) = p.sb.head() else { return false };
        // a Release waits for every earlier load (source-ordered, §4.4)
        (!b.release || p.loads.is_empty()) && self.store_ready(p, b.loc, b.release)
    }
}

fn op_kind(op: Op) -> OpKind {
    match op {
        Op::Load { .. } => OpKind::Load,
        Op::Store { .. } => OpKind::Store,
        Op::Rmw { .. } => OpKind::Rmw,
        Op::Fence { .. } => OpKind::Fence,
    }
}

impl Protocol for Cord {
    type Agent = Node;
    type Msg = Msg;
    type Ghost = Ghost;
    type Action = Action;

    fn name(&self) -> String {
        let m = self.mutant.and_then(|m| super::MUTANTS.iter().find(|x| x.1 == m)).map(|m| m.0);
        format!(
            "{}{}{}",
            self.variant.name(),
            if self.tso { "-tso" } else { "" },
            m.map(|m| format!("+{m}")).unwrap_or_default()
        )
    }

    fn vc_orders(&self) -> &[ChannelOrder] {
        use ChannelOrder::*;
        &[Fifo, Unordered, Unordered, Unordered, Unordered]
    }

    fn capacity(&self) -> usize {
        self.channel_cap
    }

    /// Free cores are interchangeable (a program's threads are not): one
    /// scalarset of cores; directories keep their identities (homes).
    fn scalarsets(&self) -> Vec<Scalarset> {
        if !self.symmetry || self.program.is_some() || self.driven {
            return Vec::new();
        }
        vec![Scalarset { name: "CORE", size: self.cores, keyed: false, complete: false }]
    }

    fn rename(&self, r: &Renaming, from: &[Node], to: &mut [Node], ghost: &mut Ghost, mail: &mut [Envelope<Msg>]) {
        let cores = self.cores as AgentId;
        let core = |a: AgentId| if a < cores { r.of(CORE_SET, a) } else { a };
        for (i, a) in from.iter().enumerate() {
            let mut a = a.clone();
            if let Node::Dir(d) = &mut a {
                d.cnt.rename(core);
                d.noti.rename(core);
                for e in d.largest.iter_mut() {
                    e.0 = core(e.0);
                }
                d.largest.sort_unstable();
                for h in d.held.iter_mut() {
                    h.0 = core(h.0);
                    h.1 = rename_msg(h.1, &core);
                }
            }
            to[core(i as AgentId) as usize] = a;
        }
        let mut pending = ghost.pending.clone();
        for (c, p) in ghost.pending.iter().enumerate() {
            pending[core(c as AgentId) as usize] = p.clone();
        }
        ghost.pending = pending;
        for e in mail.iter_mut() {
            e.to = core(e.to);
            e.from = core(e.from);
            e.msg = rename_msg(e.msg, &core);
        }
    }

    fn initial(&self) -> Vec<(Vec<Node>, Ghost)> {
        let mut agents: Vec<Node> = (0..self.cores)
            .map(|t| {
                let len = self.program.as_ref().map_or(0, |p| p.threads[t].len() as u8);
                Node::Proc(Proc { core: Core { len, ..Core::default() }, ..Proc::default() })
            })
            .collect();
        let mem = if self.driven { 0 } else { self.locs };
        agents.extend((0..self.dirs).map(|_| Node::Dir(Dir { mem: vec![0; mem], ..Dir::default() })));
        let ghost = Ghost { pending: vec![SmallVec::new(); if self.driven { 0 } else { self.cores }] };
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
            Node::Proc(p) => self.core_message(p, ctx, msg)?,
            Node::Dir(d) => self.dir_message(d, ctx, from, msg)?,
        }
        Ok(Step::Done)
    }

    fn actions(&self, agent: &Node, _me: AgentId, _ghost: &Ghost, out: &mut Vec<Action>) {
        let Node::Proc(p) = agent else { return };
        if self.driven {
            if self.drain_ready(p) {
                out.push(Action::Drain);
            }
            return;
        }
        let Some(program) = &self.program else {
            for loc in 0..self.locs as Loc {
                for release in [false, true] {
                    if self.store_ready(p, loc, release) {
                        out.push(Action::Store { loc, release });
                    }
                }
            }
            return;
        };
        let prog = &program.threads[_me as usize];
        let c = &p.core;
        if self.tso {
            if !c.waiting && (c.pc as usize) < prog.len() {
                let ok = match prog[c.pc as usize] {
                    Op::Store { .. } => c.sb.has_room(self.store_buffer),
                    Op::Load { loc, .. } => c.sb.forward(loc).is_some() || !p.line_blocked(loc as Loc),
                    Op::Fence { order } if order.is_seq_cst() => c.sb.is_empty() && self.fence_ready(p),
                    Op::Fence { .. } => true,
                    Op::Rmw { .. } => false,
                };
                if ok {
                    out.push(Action::Step);
                }
            }
            if c.sb.head().is_some_and(|&(l, _)| self.store_ready(p, l as Loc, true)) {
                out.push(Action::Drain);
            }
            return;
        }
        for j in 0..prog.len() {
            if !c.rc_may_start(prog, j, false) {
                continue;
            }
            let ok = match prog[j] {
                Op::Load { loc, .. } => !p.line_blocked(loc as Loc),
                Op::Store { loc, order, .. } => self.store_ready(p, loc as Loc, order.is_release()),
                Op::Fence { order } if order.is_release() => self.fence_ready(p),
                Op::Fence { .. } => true,
                Op::Rmw { .. } => false,
            };
            if ok {
                out.push(Action::Perform(j as u8));
            }
        }
    }

    fn act(&self, agent: &mut Node, ctx: &mut Ctx<Msg, Ghost>, action: Action) -> Result<(), Violation> {
        let Node::Proc(p) = agent else { unreachable!("directories take no actions") };
        match action {
            Action::Store { loc, release } => {
                self.send_store(p, ctx, Write { loc, val: 0, bytes: 0 }, release, NO_OP);
                self.ghost_loc(ctx, loc);
            }
            Action::Perform(j) => self.perform(p, ctx, j)?,
            Action::Step => self.step(p, ctx)?,
            Action::Drain if self.driven => {
                let b = p.sb.pop().expect("the head drains");
                if let Some((since, acks)) = p.stats.blocked_since.take() {
                    let waited = ctx.now - since;
                    if acks {
                        p.stats.ack_wait += waited;
                    } else {
                        p.stats.table_wait += waited;
                    }
                }
                self.send_store(p, ctx, Write { loc: b.loc, val: 1, bytes: b.bytes }, b.release, NO_OP);
                ctx.done(b.id);
            }
            Action::Drain => {
                let (loc, value) = p.core.sb.pop().expect("the head drains");
                // TSO: every store is ordered like a Release (CORD, §6) or waits for the last ack (SO)
                self.send_store(p, ctx, self.write(loc, value), false, NO_OP);
                self.ghost_loc(ctx, loc as Loc);
            }
            Action::Load { loc, acquire } => {
                let id = p.stats.next_id;
                p.stats.next_id += 1;
                ctx.issued(id, OpKind::Load);
                if p.sb.forward(loc).is_some() {
                    // forwarded from the store buffer
                    ctx.done(id);
                    return Ok(());
                }
                p.loads.push((loc, id));
                p.acquiring = acquire;
                ctx.send(self.dir_agent(self.home(loc)), WT, Msg::Rd { loc, op: NO_OP });
            }
            Action::Buffer { loc, release, bytes } => {
                let id = p.stats.next_id;
                p.stats.next_id += 1;
                ctx.issued(id, OpKind::Store);
                p.sb.push(Buffered { loc, release, bytes, id });
            }
        }
        if self.driven && p.stats.blocked_since.is_none() && !p.sb.is_empty() && !self.drain_ready(p) {
            p.stats.blocked_since = Some((ctx.now, self.variant == Variant::So));
        }
        Ok(())
    }

    fn is_environment(&self, action: &Action) -> bool {
        matches!(action, Action::Store { .. } | Action::Load { .. } | Action::Buffer { .. })
    }

    fn invariant(&self, _agents: &[Node], _ghost: &Ghost) -> Result<(), (String, String)> {
        Ok(())
    }

    fn busy(&self, agent: &Node) -> bool {
        match agent {
            Node::Proc(p) => p.busy() || (self.program.is_some() && !p.core.finished()),
            Node::Dir(d) => !d.held.is_empty(),
        }
    }

    fn agent_name(&self, id: AgentId) -> String {
        if (id as usize) < self.cores {
            format!("core{id}")
        } else {
            format!("dir{}", id as usize - self.cores)
        }
    }

    fn stats(&self, agents: &[Node]) -> Vec<(String, f64)> {
        let (mut ack_wait, mut table_wait, mut releases, mut splits, mut req_notis) = (0u64, 0u64, 0u64, 0u64, 0u64);
        let (mut unacked_high, mut counters_high) = (0u32, 0u32);
        let (mut cnt_high, mut noti_high, mut held_high, mut recycles) = (0u32, 0u32, 0u32, 0u64);
        for a in agents {
            match a {
                Node::Proc(p) => {
                    let s = &p.stats;
                    ack_wait += s.ack_wait;
                    table_wait += s.table_wait;
                    releases += s.releases;
                    splits += s.splits;
                    req_notis += s.req_notis;
                    unacked_high = unacked_high.max(s.unacked_high);
                    counters_high = counters_high.max(s.counters_high);
                }
                Node::Dir(d) => {
                    let s = &d.stats;
                    cnt_high = cnt_high.max(s.cnt_high);
                    noti_high = noti_high.max(s.noti_high);
                    held_high = held_high.max(s.held_high);
                    recycles += s.recycles;
                }
            }
        }
        let ns = |t: u64| t as f64 / 1000.0;
        vec![
            ("ack_wait_ns".into(), ns(ack_wait)),
            ("table_wait_ns".into(), ns(table_wait)),
            ("releases".into(), releases as f64),
            ("epoch_splits".into(), splits as f64),
            ("req_notis".into(), req_notis as f64),
            ("proc_unacked_high".into(), unacked_high as f64),
            ("proc_counters_high".into(), counters_high as f64),
            ("dir_counters_high".into(), cnt_high as f64),
            ("dir_notis_high".into(), noti_high as f64),
            ("dir_held_high".into(), held_high as f64),
            ("recycles".into(), recycles as f64),
        ]
    }

    fn role(&self, id: AgentId) -> Role {
        if (id as usize) < self.cores {
            Role::Core
        } else {
            Role::Home
        }
    }

    fn carries_data(&self, msg: &Msg) -> bool {
        msg.payload(self.line_bytes) > 0
    }

    fn payload_bytes(&self, msg: &Msg) -> Option<u32> {
        Some(msg.payload(self.line_bytes) + self.field_bytes(msg))
    }

    fn max_payload_bytes(&self) -> u32 {
        self.line_bytes.max(self.max_store)
            + self.params.seq_bits.div_ceil(8) as u32
            + self.params.counter_bits.div_ceil(8) as u32
            + 4
    }

    fn vc_names(&self) -> Vec<String> {
        CHANNELS.iter().map(|s| s.to_string()).collect()
    }

    fn workload_action(&self, agent: &Node, _me: AgentId, op: &WorkOp) -> Option<Action> {
        let Node::Proc(p) = agent else { return None };
        if p.acquiring {
            return None;
        }
        let loc = op.line as Loc;
        match op.kind {
            OpKind::Load => {
                let blocked = p.line_blocked(loc) || p.loads.len() >= self.mshrs as usize;
                let acquire = op.order == OpOrder::Acquire;
                // an acquire also waits for the earlier loads (it orders everything after it)
                (!blocked && (!acquire || p.loads.is_empty())).then_some(Action::Load { loc, acquire })
            }
            _ => p.sb.has_room(self.store_buffer).then_some(Action::Buffer {
                loc,
                release: op.order == OpOrder::Release,
                bytes: if op.bytes == 0 { self.line_bytes } else { op.bytes },
            }),
        }
    }
}

/// The cores' scalarset.
const CORE_SET: usize = 0;

/// A message with its core identities renamed.
fn rename_msg(m: Msg, core: &impl Fn(AgentId) -> AgentId) -> Msg {
    match m {
        Msg::Noti { pid, ep } => Msg::Noti { pid: core(pid), ep },
        m => m,
    }
}

impl Cord {
    /// Header bytes CORD's fields add beyond the reserved bits of a CXL
    /// message (8 bits, enough for an 8-bit epoch, §4.1): the epoch's
    /// excess on every Relaxed store; the store counter on a Release and a
    /// notification request.
    fn field_bytes(&self, msg: &Msg) -> u32 {
        if self.variant != Variant::Cord {
            return 0;
        }
        if self.params.seq_bits > 0 {
            // SEQ-n: one number on every request, beyond the 8 reserved bits
            let seq = (self.params.seq_bits.saturating_sub(8) as u32).div_ceil(8);
            return match msg {
                Msg::RlxST { .. } | Msg::RelST { .. } | Msg::ReqNoti { .. } => seq,
                _ => 0,
            };
        }
        let ep = (self.params.epoch_bits.saturating_sub(8) as u32).div_ceil(8);
        let cnt = (self.params.counter_bits as u32).div_ceil(8);
        match msg {
            Msg::RlxST { .. } => ep,
            Msg::RelST { .. } | Msg::ReqNoti { .. } => ep + cnt,
            _ => 0,
        }
    }
}
