//! The timing engine for coherence protocols: the same agents the checker
//! explores, with their messages carried by the fabric. Caches sit on the
//! requester nodes, directories on the memory nodes. A cache lookup costs
//! `cache_latency`; a directory's reply leaves `directory_latency` after
//! the request arrived, plus `memory_latency` when it carries memory data.
//! Each core runs its thread of a litmus program through its front end,
//! issuing at most one operation per `issue_interval`.
//!
//! An operation's latency runs from its issue to its completion: a hit
//! completes one cache latency after issue; a miss completes one cache
//! latency (the fill) after the message that gives the line its
//! permission arrives.

use std::collections::VecDeque;

use crate::agents::coherence::core::FrontEnd;
use crate::agents::coherence::directory::{Action, Directory, Ghost, Msg, Node, Variant};
use crate::agents::protocol::{AgentId, Ctx, Protocol, Send, Step};
use crate::check::oracle::Model;
use crate::config::resolve::ProtocolSpec;
use crate::config::schema::Spread;
use crate::config::SystemSpec;
use crate::engine::{EventQueue, Time};
use crate::fabric::routing::RoutingTable;
use crate::fabric::{Fabric, FabricEvent, NodeId, PacketHeader, PacketId};
use crate::sim::system::{Outcome, RequesterResult, RunResult};
use crate::stats::Histogram;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Fabric(FabricEvent),
    /// A core may fire its next action.
    Core(AgentId),
    /// A send leaves its agent (after the agent's processing delay).
    Leave(u32),
}

impl From<FabricEvent> for Event {
    fn from(e: FabricEvent) -> Self {
        Event::Fabric(e)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wire {
    from: AgentId,
    msg: Msg,
}

pub struct ProtocolSystem {
    p: Directory,
    spec: ProtocolSpec,
    agents: Vec<Node>,
    ghost: Ghost,
    node_of: Vec<NodeId>,
    agent_of_node: Vec<Option<AgentId>>,
    q: EventQueue<Event>,
    fabric: Fabric<Wire>,
    leaving: Vec<Option<(AgentId, Send<Msg>)>>,
    free_slots: Vec<u32>,
    stalled: Vec<VecDeque<PacketId>>,
    core_scheduled: Vec<bool>,
    /// Per core: issue time of each operation.
    issued_at: Vec<Vec<Option<Time>>>,
    progress: Vec<(u8, u32)>,
    loads: Histogram,
    stores: Histogram,
    per_core: Vec<Histogram>,
    ops_done: Vec<u64>,
    name: String,
    seed: u64,
    max_time: Time,
    error: Option<String>,
}

impl ProtocolSystem {
    pub fn build(system: &SystemSpec, spec: &ProtocolSpec) -> Self {
        let variant = if spec.name == "msi" { Variant::Msi } else { Variant::Mesi };
        let fe = match spec.model {
            Model::Sc => FrontEnd::Sc,
            Model::Tso => FrontEnd::Tso,
            Model::Rc => FrontEnd::Rc,
        };
        let p = Directory::running(variant, spec.program.clone(), fe, system.memories.len());
        let (agents, ghost) = p.initial().remove(0);
        let mut node_of: Vec<NodeId> = system.requesters.iter().map(|r| r.node).collect();
        node_of.extend(system.memories.iter().map(|m| m.node));
        let mut agent_of_node = vec![None; system.topology.nodes.len()];
        for (a, &n) in node_of.iter().enumerate() {
            agent_of_node[n as usize] = Some(a as AgentId);
        }
        // Every agent may talk to every other: the deadlock check sees all flows.
        let flows: Vec<(NodeId, NodeId)> =
            node_of.iter().flat_map(|&a| node_of.iter().filter(move |&&b| b != a).map(move |&b| (a, b))).collect();
        let routing = RoutingTable::build(
            &system.topology,
            system.fabric.routing,
            system.fabric.spread,
            system.fabric.deadlock_avoidance,
            &[flows.clone(), flows.clone(), flows],
        );
        let buffer = system.fabric.buffer.bytes();
        let fabric =
            Fabric::new(system.topology.clone(), routing, system.fabric.switch_queueing, 3, buffer, spec.data_bytes);
        let threads = spec.program.threads.len();
        ProtocolSystem {
            issued_at: spec.program.threads.iter().map(|t| vec![None; t.len()]).collect(),
            progress: vec![(0, 0); threads],
            per_core: vec![Histogram::default(); threads],
            ops_done: vec![0; threads],
            stalled: vec![VecDeque::new(); agents.len()],
            core_scheduled: vec![false; threads],
            p,
            spec: spec.clone(),
            agents,
            ghost,
            node_of,
            agent_of_node,
            q: EventQueue::with_capacity(1024),
            fabric,
            leaving: Vec::new(),
            free_slots: Vec::new(),
            loads: Histogram::default(),
            stores: Histogram::default(),
            name: system.name.clone(),
            seed: system.seed,
            max_time: system.max_time,
            error: None,
        }
    }

    fn caches(&self) -> usize {
        self.spec.program.threads.len()
    }

    fn schedule_core(&mut self, c: AgentId, at: Time) {
        if !self.core_scheduled[c as usize] {
            self.core_scheduled[c as usize] = true;
            self.q.schedule(at, Event::Core(c));
        }
    }

    /// Queue the sends of a handler: each leaves after `delay`.
    fn post(&mut self, from: AgentId, sends: &[Send<Msg>]) {
        for s in sends {
            let slot = match self.free_slots.pop() {
                Some(i) => {
                    self.leaving[i as usize] = Some((from, *s));
                    i
                }
                None => {
                    self.leaving.push(Some((from, *s)));
                    (self.leaving.len() - 1) as u32
                }
            };
            self.q.schedule(self.q.now() + s.delay, Event::Leave(slot));
        }
    }

    fn leave(&mut self, slot: u32) {
        let (from, s) = self.leaving[slot as usize].take().expect("a send waits in this slot");
        self.free_slots.push(slot);
        let data = s.msg.carries_data();
        let hdr = PacketHeader {
            src: self.node_of[from as usize],
            dst: self.node_of[s.to as usize],
            bytes: if data { self.spec.data_bytes } else { self.spec.control_bytes },
            payload: if data { 64.min(self.spec.data_bytes) } else { 0 },
            class: s.vc,
            vc_class: s.vc,
        };
        self.fabric.inject(&mut self.q, hdr.src, hdr, Wire { from, msg: s.msg });
    }

    /// Processing delay of agent `a` before the sends of one handler leave:
    /// a cache lookup; a directory access, plus a memory read when the
    /// directory answers with data.
    fn delay_for(&self, a: AgentId, sends: &[Send<Msg>]) -> Time {
        if (a as usize) < self.caches() {
            self.spec.cache_latency
        } else if sends.iter().any(|s| matches!(s.msg, Msg::Data { .. })) {
            self.spec.directory_latency + self.spec.memory_latency
        } else {
            self.spec.directory_latency
        }
    }

    /// Record operations that completed at this agent (at `done_at`).
    fn note_progress(&mut self, c: usize, done_at: Time) {
        let Node::Cache { core, .. } = &self.agents[c] else { return };
        let prog = &self.spec.program.threads[c];
        let (old_pc, old_done) = self.progress[c];
        let mut completed = Vec::new();
        for i in old_pc as usize..core.pc as usize {
            completed.push(i);
        }
        let newly = core.done & !old_done;
        for (i, _) in prog.iter().enumerate() {
            if newly >> i & 1 == 1 {
                completed.push(i);
            }
        }
        self.progress[c] = (core.pc, core.done);
        for i in completed {
            if let Some(t) = self.issued_at[c][i] {
                let lat = done_at.saturating_sub(t);
                self.per_core[c].record(lat);
                match prog[i] {
                    crate::workloads::program::Op::Load { .. } => self.loads.record(lat),
                    crate::workloads::program::Op::Store { .. } | crate::workloads::program::Op::Rmw { .. } => {
                        self.stores.record(lat)
                    }
                    _ => {}
                }
                self.ops_done[c] += 1;
            }
        }
    }

    fn core_step(&mut self, c: AgentId) {
        self.core_scheduled[c as usize] = false;
        let mut acts = Vec::new();
        self.p.actions(&self.agents[c as usize], c, &self.ghost, &mut acts);
        let Some(&action) = acts.first() else { return };
        let now = self.q.now();
        if let Node::Cache { core, .. } = &self.agents[c as usize] {
            let op = match action {
                Action::Step => Some(core.pc as usize),
                Action::Perform(j) => Some(j as usize),
                _ => None,
            };
            if let Some(i) = op {
                self.issued_at[c as usize][i] = Some(now);
            }
        }
        let mut sends = Vec::new();
        let mut ctx = Ctx { me: c, ghost: &mut self.ghost, sends: &mut sends, delay: self.spec.cache_latency };
        if let Err(v) = self.p.act(&mut self.agents[c as usize], &mut ctx, action) {
            self.error.get_or_insert(format!("{}: {}", v.kind, v.detail));
        }
        self.post(c, &sends);
        self.note_progress(c as usize, now + self.spec.cache_latency);
        self.schedule_core(c, now + self.spec.issue_interval);
    }

    fn deliver(&mut self, node: NodeId, pkt: PacketId) {
        let a = self.agent_of_node[node as usize].expect("an agent on every endpoint");
        self.stalled[a as usize].push_back(pkt);
        self.drain_stalled(a);
    }

    /// Offer the agent its waiting messages, oldest first, until none is taken.
    fn drain_stalled(&mut self, a: AgentId) {
        let mut progress = true;
        while progress {
            progress = false;
            for k in 0..self.stalled[a as usize].len() {
                let pkt = self.stalled[a as usize][k];
                let wire = *self.fabric.message(pkt);
                let mut sends = Vec::new();
                let mut ctx = Ctx { me: a, ghost: &mut self.ghost, sends: &mut sends, delay: 0 };
                let mut agent = self.agents[a as usize].clone();
                match self.p.on_message(&mut agent, &mut ctx, wire.from, wire.msg) {
                    Ok(Step::Stall) => continue,
                    Ok(Step::Done) => {
                        let delay = self.delay_for(a, &sends);
                        for s in &mut sends {
                            s.delay = delay;
                        }
                        self.agents[a as usize] = agent;
                        self.stalled[a as usize].remove(k);
                        self.fabric.consume(&mut self.q, pkt);
                        self.post(a, &sends);
                        if (a as usize) < self.caches() {
                            let now = self.q.now();
                            self.note_progress(a as usize, now + self.spec.cache_latency);
                            self.schedule_core(a, now + self.spec.cache_latency);
                        }
                        progress = true;
                        break;
                    }
                    Err(v) => {
                        self.error.get_or_insert(format!("{}: {}", v.kind, v.detail));
                        self.stalled[a as usize].remove(k);
                        self.fabric.consume(&mut self.q, pkt);
                        progress = true;
                        break;
                    }
                }
            }
        }
    }

    pub fn run(mut self, progress: &mut dyn FnMut(f64) -> bool) -> RunResult {
        let wall = std::time::Instant::now();
        for c in 0..self.caches() {
            self.schedule_core(c as AgentId, 0);
        }
        let mut outcome = Outcome::Completed;
        let mut tick = 0u32;
        while let Some((t, ev)) = self.q.pop() {
            if t > self.max_time {
                outcome = Outcome::TimeLimit;
                break;
            }
            match ev {
                Event::Fabric(fe) => {
                    if let Some((node, pkt)) = self.fabric.handle(&mut self.q, fe) {
                        self.deliver(node, pkt);
                    }
                }
                Event::Core(c) => self.core_step(c),
                Event::Leave(slot) => self.leave(slot),
            }
            tick = tick.wrapping_add(1);
            if tick & 0xFFFF == 0 && !progress(t as f64 / self.max_time as f64) {
                outcome = Outcome::Interrupted;
                break;
            }
        }
        let busy = self.agents.iter().any(|a| self.p.busy(a));
        if outcome == Outcome::Completed && busy {
            outcome = Outcome::Deadlock;
        }
        let mut warnings = Vec::new();
        if let Some(e) = &self.error {
            warnings.push(format!("protocol error: {e}"));
        }
        if outcome == Outcome::Deadlock {
            warnings.push("deadlock: no event left while a core or a directory waits".to_string());
        }
        let end = self.q.now().max(1);
        let topo = &self.fabric.topo;
        let links = self.fabric.link_rows(self.fabric.link_stats(), None);
        let (cp, cb) = self.fabric.class_counts();
        let class_packets =
            ["request", "forward", "response"].iter().enumerate().map(|(i, n)| (n.to_string(), cp[i], cb[i])).collect();
        RunResult {
            name: self.name.clone(),
            seed: self.seed,
            outcome,
            sim_time: self.q.now(),
            window_start: 0,
            window_end: end,
            events: self.q.dispatched(),
            wall_s: wall.elapsed().as_secs_f64(),
            in_flight_packets: self.fabric.in_flight(),
            requesters: (0..self.caches())
                .map(|c| RequesterResult {
                    name: topo.nodes[self.node_of[c] as usize].name.clone(),
                    issued: self.spec.program.threads[c].len() as u64,
                    completed: self.ops_done[c],
                    measured: self.ops_done[c],
                    measured_bytes: 0,
                    latency: self.per_core[c].clone(),
                    queueing: Histogram::default(),
                })
                .collect(),
            read_latency: self.loads.clone(),
            write_latency: self.stores.clone(),
            links,
            half_duplex: self.fabric.half_duplex_links(),
            class_packets,
            memories: Vec::new(),
            vc_levels: self.fabric.routing.levels,
            cdg_acyclic: self.fabric.routing.cdg_acyclic,
            routing: format!("{:?}", self.fabric.routing.algorithm).to_lowercase(),
            spread: self.fabric.routing.spread_used().map(Spread::name),
            warnings,
        }
    }
}
