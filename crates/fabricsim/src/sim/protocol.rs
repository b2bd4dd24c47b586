//! The timing engine for any [`Protocol`]: the same agents the checker
//! explores, with their messages carried by the fabric.
//!
//! Placement: agents whose [`Role`] is `Core` sit on the fabric's requester
//! nodes, `Home` agents on its memory nodes, in order or as `[protocol]
//! cores` / `homes` place them.
//!
//! Time: a handler or action at a core costs `cache_latency` per cache
//! access it makes ([`Protocol::cache_accesses`], one by default); at a home,
//! `directory_latency`, plus `memory_latency` when it sends data. The sends
//! of a handler leave after that delay. A home is also *occupied*
//! `service` per message it handles, one message at a time, and holds at
//! most `queue` messages per virtual channel; further messages stay in the
//! fabric, holding its credits (back-pressure).
//!
//! Drivers: every agent fires its own enabled non-environment actions (a
//! litmus program's next operation, a home's next grant). Environment
//! actions (new requests from outside the protocol) come from the driver:
//! none (`Own`), a random enabled one every `issue_interval` (`Random`), or
//! the next operation of a workload generator, which the protocol maps to
//! an action with [`Protocol::workload_action`] (`Workload`).
//!
//! An operation's latency runs from the handler that reports it issued to
//! the end of the handler that reports it done ([`crate::agents::protocol::OpEvent`]).
//!
//! Memory: a home handler that reports a memory read costs
//! `memory_latency` more, or, when the home's memory node has
//! `model = "dram"`, its sends wait for the DRAM ([`super::home_memory`]).

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;

use crate::agents::cache::LineHasher;
use crate::agents::core::{self as front, Core, Next, Queues};
use crate::agents::protocol::{AgentId, Ctx, OpEvent, OpKind, OpOrder, Protocol, Role, Send, Step, WorkOp};
use crate::engine::rng::Stream;
use crate::engine::{EventQueue, Time};
use crate::fabric::kinds::Spread;
use crate::fabric::routing::RoutingTable;
use crate::fabric::{Fabric, FabricEvent, LinkStats, NodeId, PacketHeader, PacketId};
use crate::sim::home_memory::HomeDram;
use crate::sim::levels::{Held, Levels};
use crate::sim::profile::{Part, Profiler};
use crate::sim::system::{CacheResult, CacheStats, MemoryResult, Outcome, RequesterResult, RunResult};
use crate::spec::{CoreSpec, Driver, ProtocolSpec, SystemSpec, Timing};
use crate::stats::Histogram;
use crate::workloads::pattern::{Generator, PatternSource};
use crate::workloads::source::{OpSource, Seat};
use crate::workloads::trace::Replay;
use crate::workloads::WorkloadSpec;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Fabric(FabricEvent),
    /// Agent may fire its next action.
    Step(AgentId),
    /// A send leaves its agent (after the agent's processing delay).
    Leave(u32),
    /// A home finished serving a message.
    Served(AgentId),
    /// A home's DRAM channel may issue a command.
    DramWake(AgentId, u32),
    /// A home's DRAM request completed.
    DramDone(AgentId, u32),
}

impl From<FabricEvent> for Event {
    fn from(e: FabricEvent) -> Self {
        Event::Fabric(e)
    }
}

/// The event kinds' names (`--profile`), by [`Event::kind`].
const EVENT_KINDS: [&str; 10] = crate::sim::profile::event_kinds(["step", "leave", "served"]);

impl Event {
    #[inline]
    fn kind(&self) -> usize {
        match self {
            Event::Fabric(fe) => fe.kind(),
            Event::Step(_) => 5,
            Event::Leave(_) => 6,
            Event::Served(_) => 7,
            Event::DramWake(..) => 8,
            Event::DramDone(..) => 9,
        }
    }

    /// The part of the simulator an event's handler starts in (`--profile`;
    /// handlers switch parts where they call into another).
    #[inline]
    fn part(&self) -> Part {
        match self {
            // a send leaving its agent is injected into the fabric
            Event::Fabric(_) | Event::Leave(_) => Part::Fabric,
            Event::Step(_) => Part::Driver,
            Event::Served(_) => Part::Protocol,
            Event::DramWake(..) | Event::DramDone(..) => Part::Dram,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire<M> {
    from: AgentId,
    vc: u8,
    msg: M,
}

/// Per-core driver state.
struct CoreDrive {
    issued: u64,
    ops: u64,
    warmup: u64,
    /// Where its operations come from: a kernel, a trace or a generator.
    source: Option<Box<dyn OpSource>>,
    /// The pending operation starts a batch: it waits until every earlier
    /// one completed, then this long.
    barrier: Option<Time>,
    /// The next operation, generated, not yet given to the front end: with
    /// its instructions before it and whether it depends on the previous load.
    pending: Option<(WorkOp, u64, bool)>,
    /// The issue stage: the next operation enters the front end no earlier
    /// than this (an `issue_interval` after the previous one passed).
    next_issue: Time,
    /// The operation in the front end that has not passed the issue stage.
    gate: Gate,
    /// That operation, once the front end let it go and the protocol
    /// refused it (it stays ready: the front end is not asked again).
    ready: Option<(front::OpId, front::Kind, WorkOp)>,
    /// Workload: instructions before each operation, and the fraction of
    /// loads that depend on the previous load.
    instructions: u64,
    dependent: f64,
    /// Workload-driven cores: the shared core front end
    /// ([`crate::agents::core`]), through which every operation goes.
    core: Option<Core<WorkOp>>,
    /// Its private levels (`[protocol.core.l1]`, `.l2`).
    levels: Option<Levels>,
}

/// Whether the operation given to the front end last passed the issue stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    Open,
    /// A store: it passes when it dispatches into the store buffer.
    Store,
    /// Anything else: it passes when it issues.
    Issue,
}

/// An operation in flight: its issue time, kind, whether it is measured,
/// and the core front end's id of it.
type OpenOp = (Time, OpKind, bool, Option<front::OpId>);

/// The reorder buffer and load queue of a workload-driven core's front end:
/// large enough not to bind at the default pacing (the stand-in before the
/// front end had none), small enough to allocate per core.
const DRIVER_ROB: u32 = 512;

/// The core front end of a workload-driven core: `[protocol.core]`'s
/// parameters when given, else [`driver_front`].
fn front_end(t: &Timing) -> Core<WorkOp> {
    let p = t.core.as_ref().map_or_else(|| driver_front(t), |c| c.front);
    Core::new(p).expect("resolve() validates the front end's parameters")
}

/// The base `[protocol.core]` without a `preset` resolves from before its
/// keys override it: the driver's stand-in front end, no levels (a preset
/// is the base otherwise: `config::resolve`'s `preset_spec`).
pub fn core_base(t: &Timing) -> CoreSpec {
    CoreSpec { front: driver_front(t), l1: None, l2: None }
}

/// Whether a workload operation writes its line (it dirties the levels' copy).
fn writes(op: &WorkOp) -> bool {
    matches!(op.kind, OpKind::Store | OpKind::Rmw)
}

/// The driver's stand-in front end (no `[protocol.core]`, and the values
/// of the keys it does not give): `width` instructions per
/// `issue_interval`; under TSO (`store_buffer` > 0) its store buffer of
/// `store_buffer` entries orders the stores, RMWs and fences; otherwise
/// (SC, RC, and protocols with their own ordering) every operation issues
/// at dispatch and the protocol's agent orders it. The fill buffers do
/// not bind: the protocol's MSHRs bound the misses.
pub fn driver_front(t: &Timing) -> front::Params {
    let tso = t.store_buffer > 0;
    front::Params {
        rob: DRIVER_ROB,
        width: t.width.min(DRIVER_ROB),
        load_queue: DRIVER_ROB,
        fill_buffers: front::MAX_ENTRIES,
        // `store_buffer` counts the stores waiting to start, as before the
        // front end; the one performing holds one more entry
        store_buffer: if tso { t.store_buffer as u32 + 1 } else { 1 },
        wc_buffers: 1,
        cycle: t.issue_interval.clamp(1, front::MAX_CYCLE),
        model: if tso { front::Model::Tso } else { front::Model::Rc },
    }
}

pub struct ProtocolSystem<P: Protocol> {
    p: P,
    t: Timing,
    driver: Driver,
    agents: Vec<P::Agent>,
    ghost: P::Ghost,
    roles: Vec<Role>,
    node_of: Vec<NodeId>,
    agent_of_node: Vec<Option<AgentId>>,
    q: EventQueue<Event>,
    fabric: Fabric<Wire<P::Msg>>,
    leaving: Vec<Option<(AgentId, Send<P::Msg>)>>,
    free_slots: Vec<u32>,
    /// Per agent and VC: messages taken from the fabric, waiting to be handled.
    inbox: Vec<Vec<VecDeque<Wire<P::Msg>>>>,
    /// Per agent and VC: delivered packets not yet taken (the inbox is full).
    overflow: Vec<Vec<VecDeque<PacketId>>>,
    step_scheduled: Vec<bool>,
    /// Per agent: whether it ever steps (it has actions, or a driver issues to it).
    steps: Vec<bool>,
    idle: IdleSteps,
    serving: Vec<bool>,
    drive: Vec<CoreDrive>,
    rng: Stream,
    /// Operations in flight, keyed by `op_key(agent, id)`: issue time,
    /// kind, measured, and the core front end's id of the operation.
    open_ops: HashMap<u64, OpenOp, BuildHasherDefault<LineHasher>>,
    /// The front end's operation an action of a core performs while it
    /// fires, and whether the protocol reported it issued and done then.
    firing: Option<(AgentId, front::OpId)>,
    fired: (bool, bool),
    /// While it fires: the latency of a hit in the private level holding
    /// its line (None: no levels, or the protocol cache's own); and the
    /// delay of the action (the protocol cache's hit latency).
    level_hit: Option<Time>,
    fire_delay: Time,
    sends: Vec<Send<P::Msg>>,
    ops: Vec<OpEvent>,
    acts: Vec<P::Action>,
    loads: Histogram,
    /// Stores and RMWs (the request/response systems' "writes").
    stores: Histogram,
    /// RMWs and fences on their own (reported when the run had any).
    rmws: Histogram,
    fences: Histogram,
    per_core: Vec<Histogram>,
    ops_done: Vec<u64>,
    /// Per agent: when its last operation completed.
    finished: Vec<Time>,
    measured: Vec<u64>,
    warm_cores: usize,
    window_start: Time,
    /// The links' counters when the measured window started (none: it
    /// started with the run).
    links_at_start: Option<Vec<LinkStats>>,
    name: String,
    seed: u64,
    max_time: Time,
    error: Option<String>,
    /// Check the invariants after every handler and action.
    check: bool,
    /// Messages in flight per (source, destination, VC), when the protocol bounds them.
    in_flight: Vec<u32>,
    cap: usize,
    /// Per agent: the DRAM behind a home whose memory node has `model = "dram"`.
    dram: Vec<Option<HomeDram>>,
    /// Per agent: memory reads and writes of a home with the fixed latency.
    mem_accesses: Vec<u64>,
    /// Scratch: DRAM channels to step.
    chans: Vec<u32>,
    /// `--profile` (off unless the run asks).
    prof: Profiler,
    /// Profile the run (`--profile`).
    profile: bool,
}

/// The steps of agents that never step ([`Protocol::has_actions`] false,
/// no driver), which are not scheduled: only their times are kept. They
/// would do nothing, but the run ends at its last event and stops at the
/// first event past the time limit, and those may be such a step.
struct IdleSteps {
    /// Per agent: the event key of its pending step (already past: none).
    pending: Vec<u128>,
    /// The latest step time.
    last: Time,
    /// The earliest step time past the time limit.
    over: Time,
}

impl IdleSteps {
    /// A step of `a` at `at`, unless one is pending (as `schedule_step`).
    fn step(&mut self, q: &mut EventQueue<Event>, a: AgentId, at: Time, max_time: Time) {
        if self.pending[a as usize] <= q.current() {
            self.pending[a as usize] = EventQueue::<Event>::key(at, q.reserve());
            self.last = self.last.max(at);
            if at > max_time {
                self.over = self.over.min(at);
            }
        }
    }

    /// The run's end, and whether it went past the time limit, given the
    /// time of the last event and whether that one did.
    fn end(&self, last_event: Time, over: bool) -> (Time, bool) {
        match (over, self.over) {
            (true, o) => (last_event.min(o), true),
            (false, Time::MAX) => (last_event.max(self.last), false),
            (false, o) => (o, true),
        }
    }
}

/// One key for an agent's operation (ids are line or program indices, far below 2^56).
#[inline]
fn op_key(a: AgentId, id: u64) -> u64 {
    id << 8 | a as u64
}

impl<P: Protocol> ProtocolSystem<P> {
    pub fn build(system: &SystemSpec, p: P, ps: &ProtocolSpec) -> Result<Self, String> {
        let (t, driver, check) = (ps.timing.clone(), ps.driver, ps.assert_invariants);
        let (agents, ghost) = p.initial().remove(0);
        let p_cap = p.capacity();
        let roles: Vec<Role> = (0..agents.len()).map(|a| p.role(a as AgentId)).collect();
        let cores = roles.iter().filter(|r| **r == Role::Core).count();
        let homes = roles.len() - cores;
        if cores != system.requesters.len() || homes != system.memories.len() {
            return Err(format!(
                "protocol {} has {cores} cores and {homes} homes; the system has {} requesters and {} memories \
                 (one requester per core, one memory per home)",
                p.name(),
                system.requesters.len(),
                system.memories.len()
            ));
        }
        let (mut next_core, mut next_home) = (0, 0);
        // Per agent: its requester (core) or memory (home) index.
        let host: Vec<usize> = roles
            .iter()
            .map(|r| match r {
                Role::Core => {
                    next_core += 1;
                    ps.cores[next_core - 1]
                }
                Role::Home => {
                    next_home += 1;
                    ps.homes[next_home - 1]
                }
            })
            .collect();
        let node_of: Vec<NodeId> = roles
            .iter()
            .zip(&host)
            .map(|(r, &h)| match r {
                Role::Core => system.requesters[h].node,
                Role::Home => system.memories[h].node,
            })
            .collect();
        let mut agent_of_node = vec![None; system.topology.nodes.len()];
        for (a, &n) in node_of.iter().enumerate() {
            agent_of_node[n as usize] = Some(a as AgentId);
        }
        let nvc = p.vc_orders().len();
        // Every agent may talk to every other: the deadlock check sees all flows.
        let flows: Vec<(NodeId, NodeId)> =
            node_of.iter().flat_map(|&a| node_of.iter().filter(move |&&b| b != a).map(move |&b| (a, b))).collect();
        let routing = RoutingTable::build(
            &system.topology,
            system.fabric.routing,
            system.fabric.spread,
            system.fabric.deadlock_avoidance,
            &vec![flows; nvc],
        );
        let fabric = Fabric::new(
            system.topology.clone(),
            routing,
            system.fabric.switch_queueing,
            nvc,
            system.fabric.buffer.bytes(),
            t.message_bytes(p.max_data_lines()).max(t.control_bytes + p.max_payload_bytes()),
            system.fabric.flit,
        );
        let n = agents.len();
        let dram = host
            .iter()
            .zip(&roles)
            .map(|(&h, r)| match r {
                Role::Core => None,
                Role::Home => {
                    let m = &system.memories[h];
                    m.dram.clone().map(|d| HomeDram::new(d, m.latency, t.line_bytes))
                }
            })
            .collect();
        let homes = roles.iter().filter(|r| **r == Role::Home).count() as u32;
        let drive = (0..n)
            .map(|a| {
                let core = roles[..a].iter().filter(|r| **r == Role::Core).count();
                let w: Option<&WorkloadSpec> =
                    (roles[a] == Role::Core && driver != Driver::Own).then(|| &system.requesters[host[a]].workload);
                let lines = w.map_or(1, |w| (w.footprint / w.line.max(1) as u64).max(1));
                let seat =
                    Seat { core: core as u32, cores: cores as u32, homes, lines, line: w.map_or(1, |w| w.line as u64) };
                let line = t.line_bytes.max(1) as u64;
                let kernel = w.and_then(|w| w.kernel.as_ref());
                let source: Option<Box<dyn OpSource>> = match (w, kernel) {
                    (_, Some(k)) => k.source(&seat),
                    (Some(w), None) => match &w.trace {
                        Some(records) => Some(Box::new(Replay { records: records.clone(), line })),
                        None if driver == Driver::Workload => Some(Box::new(PatternSource {
                            gen: Generator::new(w, core as u32, cores as u32, &[]),
                            line,
                        })),
                        None => None,
                    },
                    (None, None) => None,
                };
                // a kernel's core that issues nothing has no source
                let idle = kernel.is_some() && source.is_none();
                CoreDrive {
                    issued: 0,
                    ops: if idle { 0 } else { w.map_or(0, |w| w.total()) },
                    warmup: w.map_or(0, |w| w.warmup),
                    source,
                    barrier: None,
                    pending: None,
                    next_issue: 0,
                    gate: Gate::Open,
                    ready: None,
                    instructions: w.map_or(0, |w| w.instructions),
                    dependent: w.map_or(0.0, |w| w.dependent),
                    core: (roles[a] == Role::Core && driver == Driver::Workload).then(|| front_end(&ps.timing)),
                    levels: match &ps.timing.core {
                        Some(c) if roles[a] == Role::Core && driver == Driver::Workload => {
                            Levels::new(c, system.seed ^ (a as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                        }
                        _ => None,
                    },
                }
            })
            .collect();
        Ok(ProtocolSystem {
            inbox: vec![vec![VecDeque::new(); nvc]; n],
            overflow: vec![vec![VecDeque::new(); nvc]; n],
            step_scheduled: vec![false; n],
            steps: (0..n)
                .map(|a| p.has_actions(a as AgentId) || (roles[a] == Role::Core && driver != Driver::Own))
                .collect(),
            idle: IdleSteps { pending: vec![0; n], last: 0, over: Time::MAX },
            serving: vec![false; n],
            per_core: vec![Histogram::default(); n],
            ops_done: vec![0; n],
            finished: vec![0; n],
            measured: vec![0; n],
            drive,
            rng: Stream::new(system.seed, 0x5eed_0a11),
            open_ops: HashMap::default(),
            firing: None,
            fired: (false, false),
            level_hit: None,
            fire_delay: 0,
            sends: Vec::new(),
            ops: Vec::new(),
            acts: Vec::new(),
            warm_cores: 0,
            window_start: 0,
            links_at_start: None,
            p,
            t,
            driver,
            agents,
            ghost,
            roles,
            node_of,
            agent_of_node,
            q: EventQueue::with_capacity(1024),
            fabric,
            leaving: Vec::new(),
            free_slots: Vec::new(),
            loads: Histogram::default(),
            stores: Histogram::default(),
            rmws: Histogram::default(),
            fences: Histogram::default(),
            name: system.name.clone(),
            seed: system.seed,
            max_time: system.max_time,
            error: None,
            check,
            in_flight: if p_cap < usize::MAX { vec![0; n * n * nvc] } else { Vec::new() },
            cap: p_cap,
            dram,
            mem_accesses: vec![0; n],
            chans: Vec::new(),
            prof: Profiler::new(false, 0),
            profile: false,
        })
    }

    fn is_core(&self, a: AgentId) -> bool {
        self.roles[a as usize] == Role::Core
    }

    fn schedule_step(&mut self, a: AgentId, at: Time) {
        if !self.steps[a as usize] {
            self.idle.step(&mut self.q, a, at, self.max_time);
        } else if !self.step_scheduled[a as usize] {
            self.step_scheduled[a as usize] = true;
            self.q.schedule(at, Event::Step(a));
        }
    }

    /// Processing delay of agent `a` before the sends of its handler of
    /// `msg` (None: an action) leave (a DRAM read adds its own time when it
    /// completes).
    fn delay(&self, a: AgentId, msg: Option<&P::Msg>) -> Time {
        let own = msg.and_then(|m| self.p.handler_latency(a, m));
        let read = self.dram[a as usize].is_none() && self.ops.iter().any(|o| matches!(o, OpEvent::MemoryRead { .. }));
        let memory = if read { self.t.memory_latency } else { 0 };
        match own {
            Some(t) => t + memory,
            None if self.is_core(a) => self.t.cache_latency * Time::from(msg.map_or(1, |m| self.p.cache_accesses(m))),
            None => self.t.directory_latency + memory,
        }
    }

    /// Index of the (source, destination, VC) channel in `in_flight`.
    fn slot(&self, from: AgentId, to: AgentId, vc: u8) -> usize {
        let n = self.agents.len();
        (from as usize * n + to as usize) * self.p.vc_orders().len() + vc as usize
    }

    /// With bounded channels, the agent and ghost before a handler or
    /// action runs, so it can be undone if its sends would overflow.
    fn checkpoint(&self, a: AgentId) -> Option<(P::Agent, P::Ghost)> {
        (self.cap < usize::MAX).then(|| (self.agents[a as usize].clone(), self.ghost.clone()))
    }

    /// Drop a handler's or action's sends and operation reports, and with a
    /// checkpoint undo its change to the agent and the ghost.
    fn discard(&mut self, a: AgentId, saved: Option<(P::Agent, P::Ghost)>) {
        if let Some((agent, ghost)) = saved {
            self.agents[a as usize] = agent;
            self.ghost = ghost;
        }
        self.sends.clear();
        self.ops.clear();
    }

    /// Whether the pending sends of `a` fit the protocol's bound on messages in flight.
    fn sends_fit(&mut self, a: AgentId) -> bool {
        if self.cap == usize::MAX {
            return true;
        }
        let mut ok = true;
        for i in 0..self.sends.len() {
            let k = self.slot(a, self.sends[i].to, self.sends[i].vc);
            self.in_flight[k] += 1;
            ok &= self.in_flight[k] as usize <= self.cap;
        }
        if !ok {
            for i in 0..self.sends.len() {
                let k = self.slot(a, self.sends[i].to, self.sends[i].vc);
                self.in_flight[k] -= 1;
            }
        }
        ok
    }

    /// After a handler or action of `a`: queue its sends, account its operations.
    fn finish(&mut self, a: AgentId, delay: Time) {
        let now = self.q.now();
        if self.check && self.error.is_none() {
            if let Err((name, detail)) = self.p.invariant(&self.agents, &self.ghost) {
                self.error = Some(format!("invariant {name} violated at {now} ps: {detail}"));
            }
        }
        let ai = a as usize;
        // With a DRAM, a memory read holds this handler's sends until it completes.
        let read = match &mut self.dram[ai] {
            Some(d) => {
                let part = self.prof.enter(Part::Dram);
                let r = self.ops.iter().find_map(|o| match *o {
                    OpEvent::MemoryRead { line } => Some((d.open(now + delay, true), line)),
                    _ => None,
                });
                self.prof.enter(part);
                r
            }
            None => None,
        };
        for i in 0..self.sends.len() {
            // a send's own extra delay (a handler whose cost depends on its state) adds to the handler's
            let s = Send { delay: delay + self.sends[i].delay, ..self.sends[i] };
            let at = now + s.delay;
            let slot = match self.free_slots.pop() {
                Some(i) => {
                    self.leaving[i as usize] = Some((a, s));
                    i
                }
                None => {
                    self.leaving.push(Some((a, s)));
                    (self.leaving.len() - 1) as u32
                }
            };
            match (read, &mut self.dram[ai]) {
                (Some((r, _)), Some(d)) => d.hold(r, slot),
                _ => self.q.schedule(at, Event::Leave(slot)),
            }
        }
        self.sends.clear();
        if let Some((r, line)) = read {
            self.dram_submit(a, r, line);
        }
        for i in 0..self.ops.len() {
            match self.ops[i] {
                OpEvent::MemoryRead { .. } if self.dram[ai].is_none() => self.mem_accesses[ai] += 1,
                OpEvent::MemoryRead { .. } => {}
                OpEvent::MemoryWrite { line } => match &mut self.dram[ai] {
                    Some(d) => {
                        let r = d.open(now, false);
                        self.dram_submit(a, r, line);
                    }
                    None => self.mem_accesses[ai] += 1,
                },
                OpEvent::Issued { id, kind } => {
                    let measured = self.in_window(a);
                    // the first operation an action of the front end's starts is that one
                    let fe = match self.firing {
                        Some((f, cid)) if f == a && !self.fired.0 => {
                            self.fired.0 = true;
                            Some(cid)
                        }
                        _ => None,
                    };
                    self.open_ops.insert(op_key(a, id), (now, kind, measured, fe));
                }
                OpEvent::Done { id } => {
                    if let Some((t0, kind, measured, fe)) = self.open_ops.remove(&op_key(a, id)) {
                        self.ops_done[a as usize] += 1;
                        let mut end = now + delay;
                        match (fe, self.firing) {
                            // done in the action that started it: the front end learns it at issue;
                            // a hit in a private level costs that level's latency
                            (Some(cid), Some((f, c))) if f == a && c == cid => {
                                self.fired.1 = true;
                                if let Some(l) = self.level_hit {
                                    end = now + l;
                                }
                            }
                            (Some(cid), _) => {
                                let d = &mut self.drive[ai];
                                let core = d.core.as_mut().expect("a front end's operation");
                                if let Some(lv) = &mut d.levels {
                                    let part = self.prof.enter(Part::Caches);
                                    let op = core.payload(cid).expect("an operation the front end issued");
                                    lv.fill(op.line, writes(op));
                                    if let Some(m) = &mut lv.l2_mshrs {
                                        m.release();
                                    }
                                    self.prof.enter(part);
                                }
                                core.complete(cid, now).expect("an operation the front end issued");
                            }
                            (None, _) => {}
                        }
                        self.finished[ai] = end;
                        if measured {
                            let lat = end.saturating_sub(t0);
                            self.measured[a as usize] += 1;
                            self.per_core[a as usize].record(lat);
                            match kind {
                                OpKind::Load => self.loads.record(lat),
                                OpKind::Store => self.stores.record(lat),
                                OpKind::Rmw => {
                                    self.stores.record(lat);
                                    self.rmws.record(lat);
                                }
                                OpKind::Fence => self.fences.record(lat),
                                OpKind::Other => {}
                            }
                        }
                    }
                }
            }
        }
        self.ops.clear();
    }

    /// Whether operations issued now by `a` are measured (past the warm-up).
    fn in_window(&self, a: AgentId) -> bool {
        // called while the operation fires, before it is counted
        self.driver == Driver::Own || self.drive[a as usize].issued >= self.drive[a as usize].warmup
    }

    fn leave(&mut self, slot: u32) {
        let (from, s) = self.leaving[slot as usize].take().expect("a send waits in this slot");
        self.free_slots.push(slot);
        let (bytes, payload) = match self.p.payload_bytes(&s.msg) {
            Some(b) => (self.t.control_bytes + b, b),
            None => {
                let n = self.p.data_lines(&s.msg);
                (self.t.message_bytes(n), n * self.t.line_bytes.min(self.t.data_bytes))
            }
        };
        let hdr = PacketHeader {
            src: self.node_of[from as usize],
            dst: self.node_of[s.to as usize],
            bytes,
            payload,
            class: s.vc,
            vc_class: s.vc,
        };
        self.fabric.inject(&mut self.q, hdr.src, hdr, Wire { from, vc: s.vc, msg: s.msg });
    }

    // ------------------------------------------------------------ DRAM

    fn dram_submit(&mut self, a: AgentId, r: u32, line: u64) {
        let part = self.prof.enter(Part::Dram);
        let now = self.q.now();
        let d = self.dram[a as usize].as_mut().expect("a DRAM home");
        if let Some(ch) = d.submit(now, r, line) {
            if self.dram_step(a, ch) {
                self.dram_admit(a);
            }
        }
        self.prof.enter(part);
    }

    /// Let channel `ch` of home `a`'s DRAM issue what it can now; schedule
    /// the completion of a column command and the channel's next step.
    /// Returns whether a request left the channel's queue (making room).
    fn dram_step(&mut self, a: AgentId, ch: u32) -> bool {
        let now = self.q.now();
        let d = self.dram[a as usize].as_mut().expect("a DRAM home");
        let (issued, wake) = d.dram.advance(now, ch);
        if let Some(t) = wake {
            self.q.schedule(t, Event::DramWake(a, ch));
        }
        match issued {
            Some(i) => {
                self.q.schedule(i.done + d.controller, Event::DramDone(a, i.id));
                true
            }
            None => false,
        }
    }

    /// Move waiting requests into channels with room, in arrival order,
    /// while issuing makes more room.
    fn dram_admit(&mut self, a: AgentId) {
        let now = self.q.now();
        let mut chans = std::mem::take(&mut self.chans);
        loop {
            chans.clear();
            self.dram[a as usize].as_mut().expect("a DRAM home").admit(now, &mut chans);
            let mut room = false;
            for &ch in &chans {
                room |= self.dram_step(a, ch);
            }
            if !room {
                break;
            }
        }
        self.chans = chans;
    }

    fn dram_wake(&mut self, a: AgentId, ch: u32) {
        let now = self.q.now();
        if self.dram[a as usize].as_mut().expect("a DRAM home").dram.take_wake(ch, now) && self.dram_step(a, ch) {
            self.dram_admit(a);
        }
    }

    /// A DRAM request of home `a` completed: the sends it held leave.
    fn dram_done(&mut self, a: AgentId, r: u32) {
        let now = self.q.now();
        let d = self.dram[a as usize].as_mut().expect("a DRAM home");
        let at = d.leave_at(r, now);
        for &slot in d.held(r) {
            self.q.schedule(at, Event::Leave(slot));
        }
        d.close(r);
    }

    fn violation(&mut self, a: AgentId, kind: &str, detail: &str) {
        let name = self.p.agent_name(a);
        self.error.get_or_insert_with(|| format!("{name}: {kind}: {detail}"));
    }

    // ------------------------------------------------------------ messages

    fn deliver(&mut self, node: NodeId, pkt: PacketId) {
        let a = self.agent_of_node[node as usize].expect("an agent on every endpoint");
        let vc = self.fabric.message(pkt).vc as usize;
        self.overflow[a as usize][vc].push_back(pkt);
        self.admit(a, vc);
        self.serve(a);
    }

    /// Take waiting packets into the inbox while it has room; their credit returns upstream.
    fn admit(&mut self, a: AgentId, vc: usize) {
        let cap = if self.is_core(a) { usize::MAX } else { self.t.queue };
        while self.inbox[a as usize][vc].len() < cap {
            let Some(pkt) = self.overflow[a as usize][vc].pop_front() else { break };
            let (_, wire, _) = self.fabric.consume(&mut self.q, pkt);
            self.inbox[a as usize][vc].push_back(wire);
        }
    }

    /// Handle inbox messages, oldest first per VC, until none is taken (or the home becomes occupied).
    fn serve(&mut self, a: AgentId) {
        let ai = a as usize;
        if self.serving[ai] {
            return;
        }
        let part = self.prof.enter(Part::Protocol);
        self.serve_inbox(a);
        self.prof.enter(part);
    }

    #[inline(always)]
    fn serve_inbox(&mut self, a: AgentId) {
        let ai = a as usize;
        loop {
            let mut taken = false;
            'vcs: for vc in 0..self.inbox[ai].len() {
                for k in 0..self.inbox[ai][vc].len() {
                    let w = self.inbox[ai][vc][k];
                    let saved = self.checkpoint(a);
                    let mut ctx = Ctx {
                        me: a,
                        ghost: &mut self.ghost,
                        sends: &mut self.sends,
                        delay: 0,
                        ops: Some(&mut self.ops),
                        now: self.q.now(),
                    };
                    // A handler that stalls leaves the agent unchanged (the Protocol contract).
                    match self.p.on_message(&mut self.agents[ai], &mut ctx, w.from, w.msg) {
                        Ok(Step::Stall) => {
                            self.discard(a, None);
                            continue;
                        }
                        Ok(Step::Done) => {}
                        Err(v) => self.violation(a, v.kind, &v.detail),
                    }
                    if !self.sends_fit(a) {
                        self.discard(a, saved);
                        continue;
                    }
                    if self.cap < usize::MAX {
                        let k = self.slot(w.from, a, w.vc);
                        self.in_flight[k] -= 1;
                        // the sender may have waited for this channel to free
                        let now = self.q.now();
                        self.schedule_step(w.from, now);
                    }
                    self.inbox[ai][vc].remove(k);
                    self.admit(a, vc);
                    let delay = self.delay(a, Some(&w.msg));
                    self.finish(a, delay);
                    let now = self.q.now();
                    self.schedule_step(a, now + delay);
                    taken = true;
                    let busy = match self.p.occupancy(a, &w.msg) {
                        Some(t) => t,
                        None if self.is_core(a) => 0,
                        None => self.t.service,
                    };
                    if busy > 0 {
                        self.serving[ai] = true;
                        self.q.schedule(now + busy, Event::Served(a));
                        return;
                    }
                    break 'vcs;
                }
            }
            if !taken {
                return;
            }
        }
    }

    // ------------------------------------------------------------ actions

    fn step(&mut self, a: AgentId) {
        let ai = a as usize;
        self.step_scheduled[ai] = false;
        let now = self.q.now();
        let mut acts = std::mem::take(&mut self.acts);
        acts.clear();
        let part = self.prof.enter(Part::Protocol);
        self.p.actions(&self.agents[ai], a, &self.ghost, &mut acts);
        self.prof.enter(part);
        let mut own = false;
        let mut busy = None;
        for &x in &acts {
            if !self.p.is_environment(&x) && self.fire(a, x) {
                own = true;
                busy = self.p.action_busy(a, &x);
                break;
            }
        }
        let fired = match own {
            true => true,
            false if self.is_core(a) && self.driver == Driver::Workload => self.drive_core(a),
            false if self.is_core(a) && now >= self.drive[ai].next_issue => self.drive_env(a, &acts),
            false => {
                if self.is_core(a) && self.wants_to_issue(a) {
                    let at = self.drive[ai].next_issue;
                    self.schedule_step(a, at);
                }
                false
            }
        };
        self.acts = acts;
        if fired {
            self.schedule_step(a, now + busy.unwrap_or(self.t.issue_interval));
        }
    }

    fn wants_to_issue(&self, a: AgentId) -> bool {
        let d = &self.drive[a as usize];
        d.issued < d.ops || d.core.as_ref().is_some_and(|c| !c.drained())
    }

    /// A workload-driven core's turn: at most one action. Under TSO a
    /// buffered store that may perform goes first (the store buffer drains
    /// through the computation too); then the issue stage gives the front
    /// end the workload's next operation, once the previous one passed it
    /// (an in-order issue stage, one operation per `issue_interval` after
    /// the previous passed, as the driver paced them before the front end)
    /// with its instructions before it and its dependence; then the
    /// operation the front end lets go issues, if the protocol accepts it.
    /// When nothing fires, the core's next step is scheduled (or waits for
    /// a completion, which steps the core).
    fn drive_core(&mut self, a: AgentId) -> bool {
        let ai = a as usize;
        let now = self.q.now();
        let tso = self.t.store_buffer > 0;
        let mut wake = Time::MAX;
        let d = &mut self.drive[ai];
        let core = d.core.as_mut().expect("a workload-driven core has a front end");
        core.at(now);
        if d.gate == Gate::Store {
            if let Some(t) = core.dispatched_at() {
                self.drive[ai].gate = Gate::Open;
                self.count_issue(a, t);
            }
        }
        if tso {
            match self.core_issue(a, Queues::Buffers) {
                Ok(true) => return true,
                Ok(false) => {}
                Err(t) => wake = t,
            }
        }
        if self.drive[ai].gate == Gate::Open && self.drive[ai].issued < self.drive[ai].ops {
            match self.fetch(a) {
                Ok(true) => return true,
                Ok(false) => {}
                Err(t) => wake = wake.min(t),
            }
        }
        // the window's only operation not issued is the one at the issue stage
        if self.drive[ai].gate == Gate::Issue {
            match self.core_issue(a, Queues::Window) {
                Ok(true) => return true,
                Ok(false) => {}
                Err(t) => wake = wake.min(t),
            }
        }
        if wake < Time::MAX {
            self.schedule_step(a, wake);
        }
        false
    }

    /// The issue stage of core `a`: generate its next operation and give it
    /// to the front end when its time came. `Ok(true)`: a store passed into
    /// the store buffer (the core's action this turn); `Err(t)`: not before `t`.
    fn fetch(&mut self, a: AgentId) -> Result<bool, Time> {
        let ai = a as usize;
        let now = self.q.now();
        if now < self.drive[ai].next_issue {
            return Err(self.drive[ai].next_issue);
        }
        if self.drive[ai].pending.is_none() {
            self.drive[ai].pending = Some(self.generate(a));
        }
        // a batch starts once every earlier operation completed (each completion steps the core)
        if let Some(gap) = self.drive[ai].barrier {
            if self.ops_done[ai] < self.drive[ai].issued {
                return Ok(false);
            }
            self.drive[ai].barrier = None;
            self.drive[ai].next_issue = now + gap;
        }
        if self.drive[ai].next_issue > now {
            return Err(self.drive[ai].next_issue);
        }
        let (op, instructions, dep) = self.drive[ai].pending.expect("set above");
        let tso = self.t.store_buffer > 0;
        let kind = match op.kind {
            _ if !tso => front::Kind::Load,
            OpKind::Load => front::Kind::Load,
            OpKind::Store => front::Kind::Store,
            OpKind::Rmw => front::Kind::Rmw,
            OpKind::Fence | OpKind::Other => front::Kind::Mfence,
        };
        let core = self.drive[ai].core.as_mut().expect("a workload-driven core has a front end");
        // TSO: `store_buffer` stores wait to start at most (a full buffer stalls the core)
        if kind == front::Kind::Store && core.waiting_stores().count() >= self.t.store_buffer {
            return Ok(false);
        }
        let mut x = front::Op::new(kind, instructions, op);
        if dep && op.kind == OpKind::Load {
            x = x.dep();
        }
        core.push(x, now).expect("the previous operation dispatched");
        let dispatched = core.dispatched_at();
        self.drive[ai].pending = None;
        if kind == front::Kind::Store {
            match dispatched {
                Some(t) => {
                    self.count_issue(a, t);
                    return Ok(true);
                }
                None => self.drive[ai].gate = Gate::Store,
            }
        } else {
            self.drive[ai].gate = Gate::Issue;
        }
        Ok(false)
    }

    /// Issue what the front end of core `a` lets go now from `queues`:
    /// `Ok(true)` if it issued, `Ok(false)` if nothing may (the protocol
    /// refused it, or it waits for a completion), `Err(t)`: not before `t`.
    /// Under TSO a load of a line a buffered store waits to write takes its
    /// value at once, and a store goes to the protocol as a release, so it
    /// also waits for the loads in flight (x86 retires a store after its
    /// earlier loads; conservatively, after later ones too).
    fn core_issue(&mut self, a: AgentId, queues: Queues) -> Result<bool, Time> {
        let ai = a as usize;
        let now = self.q.now();
        let tso = self.t.store_buffer > 0;
        let cached = if queues == Queues::Window { self.drive[ai].ready.take() } else { None };
        let core = self.drive[ai].core.as_mut().expect("a workload-driven core has a front end");
        let (id, kind, payload) = match cached {
            Some(x) => x,
            None => match core.next_from(now, queues) {
                Next::Issue { id, kind, payload, .. } => (id, kind, payload),
                Next::Wait(t) => return Err(t),
                _ => return Ok(false),
            },
        };
        if tso && kind == front::Kind::Load && core.waiting_stores().any(|s| s.line == payload.line) {
            core.issue(id, now, Some(0)).expect("the front end offered it");
            self.ops_done[ai] += 1;
            self.passed(a, queues);
            return Ok(true);
        }
        let op = match kind {
            front::Kind::Store => WorkOp { order: OpOrder::Release, ..payload },
            _ => payload,
        };
        let refused = |d: &mut CoreDrive| {
            if queues == Queues::Window {
                d.ready = Some((id, kind, payload));
            }
            Ok(false)
        };
        // the miss entries an access needs before it may go: a fill buffer
        // if it misses the L1 (without levels: any access, a hit or a miss
        // of the protocol's cache is known only after), an L2 MSHR if it
        // misses the L2; none free: wait for one (a completion steps the core)
        let part = self.prof.enter(Part::Caches);
        let held = self.drive[ai].levels.as_ref().map(|lv| lv.held(op.line));
        self.prof.enter(part);
        if let Some(c) = &self.t.core {
            let d = &mut self.drive[ai];
            let core = d.core.as_ref().expect("checked");
            let mut wait = None;
            let mut full = [false; 2];
            if held != Some(Held::L1) && c.front.fill_buffers < front::MAX_ENTRIES && !core.fill_free() {
                wait = Some(core.fill_frees_at());
                full[0] = true;
            }
            if let (Some(Held::Neither), Some(m)) = (held, d.levels.as_ref().and_then(|lv| lv.l2_mshrs.as_ref())) {
                if !m.free(now) {
                    wait = Some(wait.flatten().into_iter().chain(m.frees_at(now)).min());
                    full[1] = true;
                }
            }
            if let Some(lv) = &mut d.levels {
                let part = self.prof.enter(Part::Caches);
                lv.entries(queues, id, now, full);
                self.prof.enter(part);
            }
            if let Some(w) = wait {
                let r = refused(d);
                return match w {
                    Some(t) => Err(t),
                    None => r,
                };
            }
        }
        let Some(x) = self.p.workload_action(&self.agents[ai], a, &op) else { return refused(&mut self.drive[ai]) };
        self.firing = Some((a, id));
        self.fired = (false, false);
        self.level_hit = held.and_then(|h| self.drive[ai].levels.as_ref().and_then(|lv| lv.hit_latency(h)));
        let ok = self.fire(a, x);
        self.firing = None;
        self.level_hit = None;
        if !ok {
            return refused(&mut self.drive[ai]);
        }
        let d = &mut self.drive[ai];
        let core = d.core.as_mut().expect("checked");
        match (held, &mut d.levels) {
            (Some(h), Some(lv)) => {
                let part = self.prof.enter(Part::Caches);
                let access = match self.fired {
                    // the protocol missed: filled at completion
                    (true, false) => {
                        lv.miss(op.line, h);
                        if let Some(m) = &mut lv.l2_mshrs {
                            m.hold();
                        }
                        match h {
                            Held::L1 => front::Access::LateMiss,
                            _ => front::Access::Miss,
                        }
                    }
                    // done at once: a hit of the level holding it
                    (true, true) => {
                        lv.hit(op.line, h, writes(&op));
                        match h {
                            Held::L1 => front::Access::Hit(lv.l1_latency),
                            Held::L2 => front::Access::Fill(lv.hit_latency(h).expect("an L2")),
                            Held::Neither => {
                                if let Some(m) = &mut lv.l2_mshrs {
                                    m.hold_until(now, now + self.fire_delay);
                                }
                                front::Access::Fill(self.fire_delay)
                            }
                        }
                    }
                    // no operation reported: over now
                    (false, _) => front::Access::Hit(0),
                };
                self.prof.enter(part);
                core.issue_as(id, now, access).expect("the front end offered it, its entries checked");
            }
            _ => {
                // an action that reports no operation, or one done at once, is over now
                let latency = match self.fired {
                    (true, false) => None,
                    _ => Some(0),
                };
                core.issue(id, now, latency).expect("the front end offered it");
            }
        }
        self.passed(a, queues);
        Ok(true)
    }

    /// An operation of the window issued: it is the one at the issue stage.
    fn passed(&mut self, a: AgentId, queues: Queues) {
        if queues == Queues::Window {
            debug_assert_eq!(self.drive[a as usize].gate, Gate::Issue);
            self.drive[a as usize].gate = Gate::Open;
            let now = self.q.now();
            self.count_issue(a, now);
        }
    }

    /// Core `a`'s next workload operation, its instructions before it and
    /// whether it depends on the previous load.
    fn generate(&mut self, a: AgentId) -> (WorkOp, u64, bool) {
        let d = &mut self.drive[a as usize];
        let value = d.issued + 1;
        let next = d.source.as_mut().expect("a source per issuing core").next(value, &mut self.rng);
        // the computation starts when the previous operation issued; a time stamp is a floor
        d.next_issue = (d.next_issue + next.gap).max(next.at);
        d.barrier = next.barrier;
        if let Some((instructions, dep)) = next.given {
            return (next.op, instructions, dep);
        }
        let mut dep = false;
        if next.op.kind == OpKind::Load && d.dependent > 0.0 {
            dep = d.dependent >= 1.0 || self.rng.unit() < d.dependent;
        }
        (next.op, d.instructions, dep)
    }

    /// The driver's next environment action for core `a`, if it may start now.
    fn drive_env(&mut self, a: AgentId, acts: &[P::Action]) -> bool {
        let ai = a as usize;
        if self.drive[ai].issued >= self.drive[ai].ops {
            return false;
        }
        let action = match &self.driver {
            Driver::Own => None,
            Driver::Random => {
                let mut env: Vec<P::Action> = acts.iter().copied().filter(|x| self.p.is_environment(x)).collect();
                // the first, in a random order, whose sends fit the channels
                let mut chosen = None;
                while !env.is_empty() {
                    let x = env.swap_remove(self.rng.below(env.len() as u64) as usize);
                    if self.fire(a, x) {
                        chosen = Some(x);
                        break;
                    }
                }
                if chosen.is_none() {
                    return false;
                }
                let now = self.q.now();
                self.count_issue(a, now);
                return true;
            }
            Driver::Workload => unreachable!("workload-driven cores go through drive_core"),
        };
        let Some(action) = action else { return false };
        if !self.fire(a, action) {
            return false;
        }
        let now = self.q.now();
        self.count_issue(a, now);
        true
    }

    /// An operation of core `a` passed the issue stage at `t`.
    fn count_issue(&mut self, a: AgentId, t: Time) {
        let ai = a as usize;
        self.drive[ai].issued += 1;
        self.drive[ai].next_issue = t + self.t.issue_interval;
        if self.drive[ai].issued == self.drive[ai].warmup + 1 {
            self.warm_cores += 1;
            if self.warm_cores == self.roles.iter().filter(|r| **r == Role::Core).count() {
                self.window_start = self.q.now();
                // the links' counters at the window's start: its rows count from here
                self.links_at_start = Some(self.fabric.link_stats().to_vec());
            }
        }
    }

    /// Fire an action; false (and nothing changes) if its sends would overflow a bounded channel.
    fn fire(&mut self, a: AgentId, action: P::Action) -> bool {
        let part = self.prof.enter(Part::Protocol);
        let fired = self.fire_action(a, action);
        self.prof.enter(part);
        fired
    }

    #[inline(always)]
    fn fire_action(&mut self, a: AgentId, action: P::Action) -> bool {
        let ai = a as usize;
        let saved = self.checkpoint(a);
        let now = self.q.now();
        let mut ctx =
            Ctx { me: a, ghost: &mut self.ghost, sends: &mut self.sends, delay: 0, ops: Some(&mut self.ops), now };
        if let Err(v) = self.p.act(&mut self.agents[ai], &mut ctx, action) {
            self.violation(a, v.kind, &v.detail);
        }
        if !self.sends_fit(a) {
            self.discard(a, saved);
            return false;
        }
        let delay = match self.p.action_latency(a, &action) {
            Some(t) => t + self.delay(a, None),
            None => self.delay(a, None),
        };
        self.fire_delay = delay;
        self.finish(a, delay);
        // Anything waiting in the inbox may now be taken.
        self.serve(a);
        true
    }

    /// How far the run is: the cores' operations completed of their total
    /// when a workload sets one, else simulated time against `sim.max_time`.
    fn fraction_done(&self, t: Time) -> f64 {
        let total: u64 = self.drive.iter().map(|d| d.ops).sum();
        let f = if self.driver != Driver::Own && total > 0 {
            self.ops_done.iter().sum::<u64>() as f64 / total as f64
        } else {
            t as f64 / self.max_time as f64
        };
        f.min(1.0)
    }

    /// Profile the run: events by kind and where the wall time goes
    /// (`--profile`, [`crate::sim::profile`]).
    pub fn with_profile(mut self, on: bool) -> Self {
        self.profile = on;
        self
    }

    /// Run (profiled after [`Self::with_profile`]).
    pub fn run(mut self, progress: &mut dyn FnMut(f64) -> bool) -> RunResult {
        let wall = std::time::Instant::now();
        self.prof = Profiler::new(self.profile, EVENT_KINDS.len());
        for a in 0..self.agents.len() {
            self.schedule_step(a as AgentId, 0);
        }
        let (outcome, over) = self.event_loop(progress);
        let (end, over) = self.idle.end(self.q.now(), over);
        let outcome = if over { Outcome::TimeLimit } else { outcome };
        let wall_s = wall.elapsed().as_secs_f64();
        let prof = std::mem::replace(&mut self.prof, Profiler::new(false, 0));
        let mut r = self.result(outcome, wall_s, end);
        r.profile = prof.finish("protocol", &EVENT_KINDS, wall_s);
        r
    }

    /// Handle events until none is left, one is past the time limit (the
    /// bool) or `progress` says stop.
    fn event_loop(&mut self, progress: &mut dyn FnMut(f64) -> bool) -> (Outcome, bool) {
        let profile = self.prof.on;
        let mut outcome = Outcome::Completed;
        let mut tick = 0u32;
        let mut over = false;
        while let Some((t, ev)) = self.q.pop() {
            if profile {
                // counted as popped, like the run's `events` (the one past the limit too)
                self.prof.event(ev.kind(), ev.part());
            }
            if t > self.max_time {
                over = true;
                break;
            }
            match ev {
                Event::Fabric(fe) => {
                    if let Some((node, pkt)) = self.fabric.handle(&mut self.q, fe) {
                        self.deliver(node, pkt);
                    }
                }
                Event::Step(a) => self.step(a),
                Event::Leave(slot) => self.leave(slot),
                Event::Served(a) => {
                    self.serving[a as usize] = false;
                    self.serve(a);
                }
                Event::DramWake(a, ch) => self.dram_wake(a, ch),
                Event::DramDone(a, r) => self.dram_done(a, r),
            }
            if profile {
                self.prof.enter(Part::Queue);
            }
            if self.error.is_some() {
                outcome = Outcome::ProtocolError;
                break;
            }
            tick = tick.wrapping_add(1);
            if tick & 0xFFFF == 0 && !progress(self.fraction_done(t)) {
                outcome = Outcome::Interrupted;
                break;
            }
        }
        if outcome != Outcome::Interrupted {
            progress(1.0);
        }
        (outcome, over)
    }

    /// `end`: the time of the run's last event.
    fn result(self, mut outcome: Outcome, wall_s: f64, end: Time) -> RunResult {
        let busy = self.agents.iter().any(|a| self.p.busy(a));
        let unissued = (0..self.agents.len()).any(|a| self.wants_to_issue(a as AgentId));
        if outcome == Outcome::Completed && (busy || unissued) && self.error.is_none() {
            outcome = Outcome::Deadlock;
        }
        let mut warnings = Vec::new();
        if let Some(e) = &self.error {
            warnings.push(format!("protocol error: {e}"));
        }
        if outcome == Outcome::Deadlock {
            warnings.push("deadlock: no event left while an agent waits or a core has operations left".to_string());
        }
        let sim_time = end;
        let end = end.max(self.window_start + 1);
        let topo = &self.fabric.topo;
        let links = self.fabric.link_rows(self.fabric.link_stats(), self.links_at_start.as_deref());
        let (cp, cb) = self.fabric.class_counts();
        let names = self.p.vc_names();
        let class_packets = names.into_iter().enumerate().map(|(i, name)| (name, cp[i], cb[i])).collect();
        let line = self.t.line_bytes as u64;
        let requesters = (0..self.agents.len())
            .filter(|&a| self.roles[a] == Role::Core)
            .map(|a| RequesterResult {
                name: topo.nodes[self.node_of[a] as usize].name.clone(),
                issued: match self.driver {
                    Driver::Own => self.ops_done[a],
                    _ => self.drive[a].issued,
                },
                completed: self.ops_done[a],
                measured: self.measured[a],
                measured_bytes: self.measured[a] * line,
                finished: self.finished[a],
                latency: self.per_core[a].clone(),
                queueing: Histogram::default(),
            })
            .collect();
        RunResult {
            name: self.name.clone(),
            seed: self.seed,
            outcome,
            sim_time,
            window_start: self.window_start,
            window_end: end,
            events: self.q.dispatched(),
            wall_s,
            in_flight_packets: self.fabric.in_flight(),
            requesters,
            read_latency: self.loads.clone(),
            write_latency: self.stores.clone(),
            op_latency: [("rmw", &self.rmws), ("fence", &self.fences)]
                .into_iter()
                .filter(|(_, h)| h.count > 0)
                .map(|(k, h)| (k, h.clone()))
                .collect(),
            by_hops: Vec::new(),
            links,
            half_duplex: self.fabric.half_duplex_links(),
            class_packets,
            memories: (0..self.agents.len())
                .filter(|&a| self.roles[a] == Role::Home)
                .map(|a| {
                    let name = topo.nodes[self.node_of[a] as usize].name.clone();
                    match &self.dram[a] {
                        Some(d) => MemoryResult {
                            name,
                            served: d.reads + d.writes,
                            busy_ps: d.stats().bus_busy_ps,
                            dram: Some(d.stats()),
                        },
                        None => MemoryResult { name, served: self.mem_accesses[a], busy_ps: 0, dram: None },
                    }
                })
                .collect(),
            vc_levels: self.fabric.routing.levels,
            cdg_acyclic: self.fabric.routing.cdg_acyclic,
            routing: format!("{:?}", self.fabric.routing.algorithm).to_lowercase(),
            spread: self.fabric.routing.spread_used().map(Spread::name),
            warnings,
            protocol_stats: self.p.stats(&self.agents),
            caches: (0..self.agents.len()).flat_map(|a| self.cache_rows(a)).collect(),
            profile: None,
        }
    }

    /// Core `a`'s rows of summary.json `caches`: its levels (with levels),
    /// then the protocol's cache. The protocol's row counts the accesses
    /// that reached it as the driver saw them when there are levels (the
    /// protocol also sees every access the levels served: each is fired
    /// into it), the protocol's own count without; its evictions and
    /// write-backs are the protocol's when it counts them. A core with
    /// neither levels nor a counting protocol has no row.
    fn cache_rows(&self, a: usize) -> Vec<CacheResult> {
        let own = (self.roles[a] == Role::Core).then(|| self.p.cache_counters(&self.agents[a])).flatten();
        let lv = self.drive[a].levels.as_ref();
        if lv.is_none() && own.is_none() {
            return Vec::new();
        }
        let core = self.fabric.topo.nodes[self.node_of[a] as usize].name.clone();
        let row = |level, stats, counted| CacheResult { core: core.clone(), level, stats, counted };
        let mut rows = Vec::with_capacity(3);
        let mut protocol = CacheStats::default();
        if let Some(lv) = lv {
            let late = self.drive[a].core.as_ref().map_or(0, |c| c.stats().late_overruns);
            rows.push(row("l1", CacheStats { late_overruns: late, ..lv.stats[0] }, false));
            if lv.l2.is_some() {
                rows.push(row("l2", lv.stats[1], false));
            }
            protocol = lv.stats[2];
        }
        if let Some(c) = own {
            if lv.is_none() {
                protocol.hits = c.hits;
                // (the protocol's misses are not split)
                protocol.capacity = c.misses;
            }
            protocol.evictions = c.evictions;
            protocol.writebacks = c.writebacks;
        }
        rows.push(row("protocol", protocol, own.is_some()));
        rows
    }

    /// The agents' final states (for tests asserting invariants after a run).
    pub fn agents(&self) -> &[P::Agent] {
        &self.agents
    }
}
