//! The PCIe read-ordering family as one [`Protocol`]: its agents, actions
//! and channels, for the checker and the timing engine alike.

use std::sync::Arc;

use super::dev::Dev;
use super::host::{Home, HostCore, L2};
use super::messages::{Loc, Msg, CHANNELS, COH};
use super::nic::Thread;
use super::rc::Rc;
use super::rob::Rob;
use super::switch::Switch;
use super::{Mmio, Mutant, Variant};
use crate::agents::cache::CacheGeometry;
use crate::agents::coherence::core::Core;
use crate::agents::coherence::directory::{self, CacheShape, DirLine, Directory};
use crate::agents::coherence::lines::{CacheLines, DirLines};
use crate::agents::protocol::{AgentId, ChannelOrder, Ctx, OpKind, OpOrder, Protocol, Role, Step, Violation, WorkOp};
use crate::engine::Time;
use crate::programs::{Outcome, Program};

/// What a core agent is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A NIC queue pair: DMA reads through the root complex.
    Qp,
    /// A host core: stores and loads through its private MESI cache (or,
    /// in MMIO mode, MMIO writes to the NIC's device).
    Host,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Node {
    /// A queue pair, or a host core making MMIO writes.
    Core(Thread),
    /// A host core with its cache (not in MMIO mode).
    Host(HostCore),
    Rc(Rc),
    Home(Home),
    Dev(Dev),
    Switch(Switch),
    P2p,
}

/// The host domain's coherence order (the last value written to each
/// location), for its data-value invariant; the litmus outcome is read off
/// the agents.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ghost {
    pub coh: directory::Ghost,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A program thread performs its next operation.
    Step,
    /// A workload read and DMA write (a QP in a timed run).
    Read {
        loc: Loc,
        acq: bool,
    },
    Write {
        loc: Loc,
        rel: bool,
    },
    /// A workload RDMA fetch-and-add (a QP in a timed run).
    FetchAdd {
        loc: Loc,
        acq: bool,
    },
    /// A host core's action: its program's next operation (checking), a
    /// workload's load or store (timing).
    Host(directory::Action),
    /// MMIO: a write-combining buffer flushes its `i`-th line (checking).
    Flush(u8),
    /// A host core's workload MMIO write, and fence (a timed run).
    MmioStore {
        loc: Loc,
        rel: bool,
    },
    Fence,
}

#[derive(Debug, Clone)]
pub struct Pcie {
    pub variant: Variant,
    pub mutant: Option<Mutant>,
    pub program: Option<Arc<Program>>,
    /// Per core agent.
    pub kinds: Vec<Kind>,
    pub locs: usize,
    /// RLSQ entries (Table 2: 256).
    pub rlsq_entries: usize,
    /// Reads a QP may have in flight.
    pub window: usize,
    /// Cores driven by a workload (timing).
    pub driven: bool,
    /// Timing: the root complex's handler time for a request from the PCIe
    /// link (its other handlers cost nothing), and the host cache's hit
    /// time (a miss adds `memory_latency`); None: `directory_latency`.
    pub rc_latency: Option<Time>,
    pub host_latency: Option<Time>,
    /// Timing: lines `0..host_cached` start in the host's cache (a table
    /// the host wrote before the run).
    pub host_cached: u64,
    /// MMIO mode: host cores' stores are MMIO writes to the NIC's device
    /// (agent `C + 2`), kept in order this way; and the ROB's entries per
    /// virtual network (relaxed stores, releases).
    pub mmio: Option<Mmio>,
    pub rob_entries: usize,
    /// P2P mode (timing): the NIC's reads cross a switch (agent `C + 2`)
    /// with one shared queue or virtual output queues (`voq`) of
    /// `switch_entries`; the last `p2p_qps` queue pairs read a P2P device
    /// (agent `C + 3`) that serves one read per `p2p_latency`.
    pub p2p: bool,
    pub voq: bool,
    pub p2p_qps: usize,
    pub switch_entries: usize,
    pub p2p_latency: Time,
    /// The host's MESI domain: host cores' caches and the root complex are
    /// requesters of its one directory, the home (see `host.rs`).
    pub coh: Directory,
    /// Timing: the host's L2 at the home (Table 2: 256 KiB, 8 ways).
    pub host_l2: CacheGeometry,
}

/// Table 2's L2: 256 KiB, 8 ways, 64 B lines.
pub fn table2_l2() -> CacheGeometry {
    CacheGeometry::new(256 << 10, 64, 8).expect("a valid geometry")
}

impl From<directory::Action> for Action {
    #[inline]
    fn from(a: directory::Action) -> Self {
        Action::Host(a)
    }
}

impl Pcie {
    /// The defaults both constructors share: Table 2's RLSQ and window,
    /// no MMIO, no P2P, every handler timed by the engine's defaults.
    fn new(variant: Variant, kinds: Vec<Kind>, locs: usize, program: Option<Arc<Program>>, driven: bool) -> Self {
        // sharer bits from the first host core (QPs never send to the directory) to the root complex
        let rc = kinds.len() as AgentId;
        let first = kinds.iter().position(|k| *k == Kind::Host).map_or(rc, |i| i as AgentId);
        let mut coh = Directory::domain(rc + 1, first, COH, locs, program.clone());
        coh.driven = driven;
        // the root complex reads for the RLSQ: a sharer, never Exclusive (it keeps no line to write silently)
        coh.reader_only = coh.bit(rc);
        Pcie {
            coh,
            host_l2: table2_l2(),
            variant,
            mutant: None,
            program,
            kinds,
            locs,
            rlsq_entries: 256,
            window: 256,
            driven,
            rc_latency: None,
            host_latency: None,
            host_cached: 0,
            mmio: None,
            rob_entries: 16,
            p2p: false,
            voq: false,
            p2p_qps: 0,
            switch_entries: 32,
            p2p_latency: 0,
        }
    }

    /// A litmus program: the threads in `qps` are QPs, the others host cores.
    pub fn running(variant: Variant, program: Arc<Program>, qps: &[usize]) -> Self {
        let kinds = (0..program.threads.len()).map(|t| if qps.contains(&t) { Kind::Qp } else { Kind::Host }).collect();
        let locs = program.locations.len();
        Self::new(variant, kinds, locs, Some(program), false)
    }

    /// A litmus program whose threads are host cores making MMIO writes,
    /// through a ROB of two entries per virtual network (a test of a few
    /// writes can fill one).
    pub fn running_mmio(mode: Mmio, program: Arc<Program>) -> Self {
        let mut p = Self::running(Variant::Unordered, program, &[]);
        p.mmio = Some(mode);
        p.rob_entries = 2;
        p
    }

    /// `qps` workload-driven queue pairs, then `hosts` host cores, over `locs` lines.
    pub fn timed(variant: Variant, qps: usize, hosts: usize, locs: usize, rlsq_entries: usize, window: usize) -> Self {
        let mut kinds = vec![Kind::Qp; qps];
        kinds.resize(qps + hosts, Kind::Host);
        let mut p = Self::new(variant, kinds, locs, None, true);
        p.rlsq_entries = rlsq_entries.max(1);
        p.window = window.max(1);
        p
    }

    /// Timing: host cores' stores are MMIO writes, ordered by `mode`.
    pub fn with_mmio(mut self, mode: Option<Mmio>, rob_entries: usize) -> Self {
        self.mmio = mode;
        self.rob_entries = rob_entries.max(1);
        self
    }

    /// Timing: P2P through a switch (see the fields).
    pub fn with_p2p(mut self, voq: bool, p2p_qps: usize, switch_entries: usize, p2p_latency: Time) -> Self {
        self.p2p = true;
        self.voq = voq;
        self.p2p_qps = p2p_qps;
        self.switch_entries = switch_entries.max(1);
        self.p2p_latency = p2p_latency;
        self
    }

    /// Timing: the root complex's and the home's handler times, and the
    /// lines that start in the host's L2.
    pub fn with_latencies(mut self, rc: Option<Time>, host: Option<Time>, host_cached: u64) -> Self {
        self.rc_latency = rc;
        self.host_latency = host;
        self.host_cached = host_cached.min(self.locs as u64);
        self
    }

    /// Timing: the host's L2 (default Table 2's) and the host cores'
    /// private caches (None: each holds every line it touches).
    pub fn with_host_caches(mut self, l2: Option<CacheGeometry>, cache: Option<CacheShape>) -> Self {
        if let Some(g) = l2 {
            self.host_l2 = g;
        }
        self.coh.cache = cache;
        self
    }

    pub fn with_mutant(mut self, m: Option<Mutant>) -> Self {
        self.mutant = m;
        // the directory that forgets the root complex as a sharer
        self.coh.forget = if m == Some(Mutant::ForgetRc) { self.coh.bit(self.rc_agent()) } else { 0 };
        self
    }

    /// Whether core agent `a` is a coherent host core (not a QP, not MMIO).
    pub(super) fn coherent_host(&self, a: usize) -> bool {
        self.kinds.get(a) == Some(&Kind::Host) && self.mmio.is_none()
    }

    pub(super) fn is(&self, m: Mutant) -> bool {
        self.mutant == Some(m)
    }

    pub(super) fn rc_agent(&self) -> AgentId {
        self.kinds.len() as AgentId
    }

    pub(super) fn mem_agent(&self) -> AgentId {
        self.kinds.len() as AgentId + 1
    }

    /// The NIC's device (MMIO mode only).
    pub(super) fn dev_agent(&self) -> AgentId {
        self.kinds.len() as AgentId + 2
    }

    /// The switch and the P2P device (P2P mode only).
    pub(super) fn switch_agent(&self) -> AgentId {
        self.kinds.len() as AgentId + 2
    }

    pub(super) fn p2p_agent(&self) -> AgentId {
        self.kinds.len() as AgentId + 3
    }

    /// Where a queue pair sends its reads.
    pub(super) fn first_hop(&self) -> AgentId {
        if self.p2p {
            self.switch_agent()
        } else {
            self.rc_agent()
        }
    }

    /// The final outcome of a quiescent state: registers and memory.
    pub fn outcome(&self, agents: &[Node]) -> Outcome {
        let p = self.program.as_ref().expect("a program");
        let regs = agents[..self.kinds.len()]
            .iter()
            .enumerate()
            .map(|(t, a)| match a {
                Node::Core(c) => c.regs[..p.registers[t].len()].to_vec(),
                Node::Host(h) => h.core.regs[..p.registers[t].len()].to_vec(),
                _ => unreachable!("cores come first"),
            })
            .collect();
        let mem = match (&agents[self.mem_agent() as usize], agents.get(self.dev_agent() as usize)) {
            (_, Some(Node::Dev(d))) => d.mem.clone(),
            // a host cache's M or E copy, else the directory's memory
            (Node::Home(h), _) => (0..p.locations.len() as Loc)
                .map(|l| {
                    let owned = agents[..self.kinds.len()].iter().find_map(|a| match a {
                        Node::Host(c) if c.lines.get(l).st.writable() => Some(c.lines.get(l).data),
                        _ => None,
                    });
                    owned.unwrap_or(h.lines[l as usize].mem)
                })
                .collect(),
            _ => unreachable!("memory follows the root complex"),
        };
        Outcome { regs, mem }
    }
}

impl Protocol for Pcie {
    type Agent = Node;
    type Msg = Msg;
    type Ghost = Ghost;
    type Action = Action;

    fn name(&self) -> String {
        let m = self.mutant.and_then(|m| super::MUTANTS.iter().find(|x| x.1 == m)).map(|m| m.0);
        format!("pcie-{}{}", self.variant.name(), m.map(|m| format!("+{m}")).unwrap_or_default())
    }

    fn vc_orders(&self) -> &[ChannelOrder] {
        use ChannelOrder::*;
        // nonposted, cpl, wc, posted, then MESI's three networks, relaxed
        &[Fifo, Unordered, Fifo, Fifo, Unordered, Unordered, Unordered, Unordered]
    }

    fn initial(&self) -> Vec<(Vec<Node>, Ghost)> {
        let init = |l: usize| self.program.as_ref().map_or(0, |p| p.init[l]);
        let mut agents: Vec<Node> = (0..self.kinds.len())
            .map(|t| {
                if !self.coherent_host(t) {
                    return Node::Core(Thread::default());
                }
                let len = self.program.as_ref().map_or(0, |p| p.threads[t].len());
                let lines = match &self.coh.cache {
                    None => CacheLines::dense(self.locs),
                    Some(c) => CacheLines::assoc(crate::agents::cache::SetAssoc::new(
                        c.geometry,
                        c.policy,
                        c.seed.wrapping_add(t as u64),
                    )),
                };
                Node::Host(HostCore { core: Core { len: len as u8, ..Core::default() }, lines })
            })
            .collect();
        agents.push(Node::Rc(Rc::default()));
        let ghost = Ghost { coh: directory::Ghost { last: (0..self.locs).map(init).collect() } };
        if self.mmio.is_some() {
            // the host is idle; the device holds what the program writes
            agents.push(Node::Home(Home::default()));
            let dev = self.program.as_ref().map_or_else(Vec::new, |p| p.init.clone());
            agents.push(Node::Dev(Dev { mem: dev, rob: Rob::default() }));
            return vec![(agents, ghost)];
        }
        let lines: DirLines = (0..self.locs).map(|l| DirLine { mem: init(l), ..DirLine::default() }).collect();
        let l2 = if self.driven { L2::new(self.host_l2, self.host_cached) } else { L2::default() };
        agents.push(Node::Home(Home { lines, l2 }));
        if self.p2p {
            agents.push(Node::Switch(Switch::default()));
            agents.push(Node::P2p);
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
            Node::Core(t) => {
                let me = ctx.me as usize;
                self.core_message(t, ctx, me, msg)?;
                Ok(Step::Done)
            }
            Node::Host(h) => match msg {
                Msg::Coh(m) => self.coh.cache_message(ctx.me, &mut h.core, &mut h.lines, ctx, m),
                _ => Err(Violation::unexpected("host core", msg)),
            },
            Node::Rc(rc) => self.rc_message(rc, ctx, from, msg),
            Node::Home(h) => self.home_message(h, ctx, from, msg),
            Node::Dev(d) => self.dev_message(d, ctx, msg),
            Node::Switch(s) => self.switch_message(s, ctx, from, msg),
            Node::P2p => self.p2p_message(ctx, from, msg),
        }
    }

    fn actions(&self, agent: &Node, me: AgentId, _ghost: &Ghost, out: &mut Vec<Action>) {
        if let Node::Host(h) = agent {
            // a program's next operation, in order (SC), through the cache
            self.coh.cache_actions(&h.core, &h.lines, me, out);
            return;
        }
        if let Node::Core(t) = agent {
            // MMIO (checking): any line in the write-combining buffers may leave next
            out.extend((0..t.wc.len()).map(|i| Action::Flush(i as u8)));
        }
        let (Node::Core(t), Some(p)) = (agent, &self.program) else { return };
        let prog = &p.threads[me as usize];
        let Some(&op) = prog.get(t.pc as usize) else { return };
        let kind = self.kinds[me as usize];
        use crate::programs::Op;
        let ready = match op {
            Op::Load { .. } => self.may_read(t, kind),
            Op::Store { order, .. } if self.mmio.is_some() => self.may_mmio_store(t, order.is_release()),
            Op::Store { .. } if kind == Kind::Qp => self.may_write(t),
            Op::Fence { .. } if self.mmio.is_some() => self.may_fence(t),
            _ => kind == Kind::Qp || t.out.is_empty(),
        };
        if ready {
            out.push(Action::Step);
        }
    }

    fn act(&self, agent: &mut Node, ctx: &mut Ctx<Msg, Ghost>, action: Action) -> Result<(), Violation> {
        if let (Node::Host(h), Action::Host(a)) = (&mut *agent, action) {
            return self.coh.cache_act(&mut h.core, &mut h.lines, ctx, a);
        }
        let Node::Core(t) = agent else { unreachable!("only cores act") };
        let me = ctx.me as usize;
        match action {
            Action::Step => {
                let op = self.program.as_ref().expect("a program").threads[me].get(t.pc as usize).copied();
                let op = op.expect("a step has an operation");
                self.step(t, self.kinds[me], ctx, op);
            }
            Action::Read { loc, acq } => self.read(t, ctx, loc, acq),
            Action::Write { loc, rel } => self.write(t, ctx, loc, rel),
            Action::FetchAdd { loc, acq } => self.fetch_add(t, ctx, loc, acq),
            Action::Host(a) => return Err(Violation::unexpected("a core without a cache", a)),
            Action::Flush(i) => self.flush(t, ctx, i as usize),
            Action::MmioStore { loc, rel } => self.workload_mmio(t, ctx, Some((loc, rel))),
            Action::Fence => self.workload_mmio(t, ctx, None),
        }
        Ok(())
    }

    fn is_environment(&self, action: &Action) -> bool {
        matches!(
            action,
            Action::Read { .. }
                | Action::Write { .. }
                | Action::FetchAdd { .. }
                | Action::Host(
                    directory::Action::Load(_)
                        | directory::Action::Acquire(_)
                        | directory::Action::Hit(_)
                        | directory::Action::Store(..)
                        | directory::Action::Merge(..)
                        | directory::Action::Evict(_)
                )
                | Action::MmioStore { .. }
                | Action::Fence
        )
    }

    fn invariant(&self, agents: &[Node], ghost: &Ghost) -> Result<(), (String, String)> {
        if let Node::Rc(rc) = &agents[self.rc_agent() as usize] {
            if rc.rlsq.len() > self.rlsq_entries {
                return Err((
                    "rlsq bound".into(),
                    format!("{} entries in an RLSQ of {}", rc.rlsq.len(), self.rlsq_entries),
                ));
            }
        }
        self.coherence_invariant(agents, ghost)
    }

    fn busy(&self, agent: &Node) -> bool {
        match agent {
            Node::Core(t) => t.busy(),
            Node::Host(h) => h.lines.any_transient() || !h.core.finished(),
            Node::Rc(rc) => !rc.rlsq.is_empty() || !rc.rob.is_empty(),
            Node::Home(h) => h.lines.iter().any(|d| d.wait > 0),
            Node::Dev(d) => !d.rob.is_empty(),
            Node::Switch(s) => !s.queue.is_empty() || !s.waiting.is_empty(),
            Node::P2p => false,
        }
    }

    fn agent_name(&self, id: AgentId) -> String {
        match self.kinds.get(id as usize) {
            Some(Kind::Qp) => format!("qp{id}"),
            Some(Kind::Host) => format!("host{id}"),
            None if id == self.rc_agent() => "rc".into(),
            None if id == self.mem_agent() => "mem".into(),
            None if self.p2p && id == self.switch_agent() => "switch".into(),
            None if self.p2p => "p2p".into(),
            None => "dev".into(),
        }
    }

    fn stats(&self, agents: &[Node]) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        if let Node::Rc(rc) = &agents[self.rc_agent() as usize] {
            out.push(("squashes".into(), rc.stats.squashes as f64));
            out.push(("rlsq_high".into(), rc.stats.rlsq_high as f64));
            out.push(("rc_invs".into(), rc.stats.invs as f64));
        }
        if let Some(Node::Switch(s)) = agents.get(self.switch_agent() as usize) {
            out.push(("switch_nacks".into(), s.nacks as f64));
        }
        out
    }

    fn role(&self, id: AgentId) -> Role {
        if (id as usize) < self.kinds.len() {
            Role::Core
        } else {
            Role::Home
        }
    }

    fn carries_data(&self, msg: &Msg) -> bool {
        if let Msg::Coh(m) = msg {
            return m.carries_data();
        }
        matches!(msg, Msg::Cpl { .. } | Msg::MmioWr { .. } | Msg::DevWr { .. } | Msg::MemWr { .. })
    }

    fn handler_latency(&self, id: AgentId, msg: &Msg) -> Option<Time> {
        if id == self.rc_agent() {
            self.rc_latency.map(|t| {
                if matches!(msg, Msg::MemRd { .. } | Msg::MmioWr { .. } | Msg::Fwd { .. }) {
                    t
                } else {
                    0
                }
            })
        } else if id == self.mem_agent() {
            self.host_latency
        } else if self.p2p && id == self.switch_agent() {
            // a crossbar: its queues, not its handling, cost time
            Some(0)
        } else if self.p2p {
            Some(self.p2p_latency)
        } else {
            None
        }
    }

    fn vc_names(&self) -> Vec<String> {
        CHANNELS.iter().map(|s| s.to_string()).collect()
    }

    fn workload_action(&self, agent: &Node, me: AgentId, op: &WorkOp) -> Option<Action> {
        if let Node::Host(h) = agent {
            return self.coh.cache_workload_action(&h.core, &h.lines, op).map(Action::Host);
        }
        let Node::Core(t) = agent else { return None };
        let kind = self.kinds[me as usize];
        let loc = (op.line % self.locs.max(1) as u64) as Loc;
        match (kind, op.kind) {
            (Kind::Qp, OpKind::Load) => self.may_read(t, kind).then_some(Action::Read {
                loc,
                acq: op.order == OpOrder::Acquire && self.variant != Variant::Unordered,
            }),
            (Kind::Host, OpKind::Store) if self.mmio.is_some() => {
                let rel = op.order == OpOrder::Release;
                self.may_mmio_store(t, rel).then_some(Action::MmioStore { loc, rel })
            }
            (Kind::Host, OpKind::Fence) => self.may_fence(t).then_some(Action::Fence),
            (Kind::Qp, OpKind::Rmw) => self.may_read(t, kind).then_some(Action::FetchAdd {
                loc,
                acq: op.order == OpOrder::Acquire && self.variant != Variant::Unordered,
            }),
            (Kind::Qp, OpKind::Store) => self.may_write(t).then_some(Action::Write {
                loc,
                rel: op.order == OpOrder::Release && self.variant != Variant::Unordered,
            }),
            _ => None,
        }
    }

    fn has_actions(&self, id: AgentId) -> bool {
        self.role(id) == Role::Core
    }
}
