use std::collections::VecDeque;

use crate::agents::cxl::messages::VC_CLASSES;
use crate::agents::cxl::{MemMsg, MemoryEndpoint, MsgKind, Requester};
use crate::agents::memory::DramStats;
use crate::engine::rng::Stream;
use crate::engine::{EventQueue, Time};
use crate::fabric::kinds::Spread;
use crate::fabric::routing::RoutingTable;
use crate::fabric::{Fabric, FabricEvent, LinkStats, NodeId, PacketHeader, PacketId};
use crate::sim::profile::{Part, Profile, Profiler};
use crate::spec::SystemSpec;
use crate::stats::Histogram;
use crate::workloads::kinds::{Injection, Pattern};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Fabric(FabricEvent),
    /// Requester creates a request and hands it to the fabric.
    Issue(u32),
    /// The oldest response of a memory is ready to leave.
    MemReady(u32),
    /// A response finished its cache access at the requester.
    Complete(u32),
    /// A DRAM memory's channel may issue a command: (memory, channel).
    DramWake(u32, u32),
    /// A DRAM memory's response in a slot is ready to leave: (memory, slot).
    DramDone(u32, u32),
}

impl From<FabricEvent> for Event {
    fn from(e: FabricEvent) -> Self {
        Event::Fabric(e)
    }
}

/// The event kinds' names (`--profile`), by [`Event::kind`].
const EVENT_KINDS: [&str; 10] = crate::sim::profile::event_kinds(["issue", "mem_ready", "complete"]);

impl Event {
    #[inline]
    fn kind(&self) -> usize {
        match self {
            Event::Fabric(fe) => fe.kind(),
            Event::Issue(_) => 5,
            Event::MemReady(_) => 6,
            Event::Complete(_) => 7,
            Event::DramWake(..) => 8,
            Event::DramDone(..) => 9,
        }
    }

    /// The part of the simulator an event's handler starts in (`--profile`):
    /// requesters are the driver; a fixed-latency memory's handling is its
    /// endpoint's protocol.
    #[inline]
    fn part(&self) -> Part {
        match self {
            Event::Fabric(_) => Part::Fabric,
            Event::Issue(_) | Event::Complete(_) => Part::Driver,
            Event::MemReady(_) => Part::Protocol,
            Event::DramWake(..) | Event::DramDone(..) => Part::Dram,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Agent {
    Requester(u32),
    Memory(u32),
    None,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every request completed.
    Completed,
    /// `sim.max_time` reached with work left.
    TimeLimit,
    /// No event left while requests were outstanding.
    Deadlock,
    /// Stopped from outside (Ctrl-C).
    Interrupted,
    /// A protocol's handler or invariant failed: the run stopped at the
    /// first violation (its warning says which), since nothing after it
    /// is the protocol's behaviour.
    ProtocolError,
}

/// Per-memory results.
pub struct MemoryResult {
    pub name: String,
    /// Requests answered.
    pub served: u64,
    /// Media busy time (fixed: data path; DRAM: data bus, over all channels).
    pub busy_ps: Time,
    /// DRAM counters (`model = "dram"`).
    pub dram: Option<DramStats>,
}

/// Per-requester results.
pub struct RequesterResult {
    pub name: String,
    pub issued: u64,
    pub completed: u64,
    pub measured: u64,
    /// Payload bytes of every completion inside the measurement window.
    pub measured_bytes: u64,
    /// When its last request completed.
    pub finished: Time,
    pub latency: Histogram,
    pub queueing: Histogram,
}

/// Measured requests that crossed the same number of links from requester
/// to memory (ESF Figs 11/12 group latency by it): their latency and where
/// they waited.
#[derive(Clone, Default)]
pub struct HopClass {
    /// Links on the request's route (the response's route is as long).
    pub hops: u32,
    pub latency: Histogram,
    /// Total time these requests (and their responses) waited in fabric queues.
    pub fabric_wait_ps: u128,
    /// Total time they waited for a memory's media (queue, bank, bus).
    pub memory_wait_ps: u128,
}

pub struct RunResult {
    pub name: String,
    pub seed: u64,
    pub outcome: Outcome,
    pub sim_time: Time,
    pub window_start: Time,
    pub window_end: Time,
    pub events: u64,
    pub wall_s: f64,
    pub in_flight_packets: usize,
    pub requesters: Vec<RequesterResult>,
    pub read_latency: Histogram,
    pub write_latency: Histogram,
    /// Protocol runs: latency of other operation kinds ("rmw", "fence"),
    /// those the run had (RMWs also count in `write_latency`).
    pub op_latency: Vec<(&'static str, Histogram)>,
    /// Measured requests by hop count, in increasing hops (request/response
    /// systems; empty for protocol runs).
    pub by_hops: Vec<HopClass>,
    /// Link directions: (link index, from node name, to node name, bandwidth GB/s, stats over the window).
    pub links: Vec<(usize, String, String, f64, LinkStats)>,
    /// Per link: whether it is half duplex.
    pub half_duplex: Vec<bool>,
    pub class_packets: Vec<(String, u64, u64)>,
    pub memories: Vec<MemoryResult>,
    pub vc_levels: u8,
    pub cdg_acyclic: bool,
    pub routing: String,
    /// `[fabric] spread` if the routing uses it (not adaptive routing).
    pub spread: Option<&'static str>,
    pub warnings: Vec<String>,
    /// Protocol-specific counters (`Protocol::stats`; empty without a protocol).
    pub protocol_stats: Vec<(String, f64)>,
    /// Workload-driven cores with `[protocol.core]` levels: per core, its
    /// levels and its protocol cache (empty otherwise).
    pub caches: Vec<CacheResult>,
    /// `--profile`: events by kind and where the wall time went (None
    /// unless asked; [`super::profile`]).
    pub profile: Option<Profile>,
}

/// The counters of one cache of one core (docs/core.md): a private level
/// (`l1`, `l2`) or the protocol's cache (`protocol`), whose hits and misses
/// are the accesses that reached it (with levels: those that missed them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    /// Tag absent: cold, capacity or conflict misses (the protocol's
    /// cache: every miss, not split).
    pub capacity: u64,
    /// Tag present but the protocol had lost the line (or lacked the
    /// permission): the tag is dropped.
    pub coherence: u64,
    /// Lines evicted to make room (an L1 also loses the lines its L2 evicts).
    pub evictions: u64,
    /// Of those, the ones written since they were filled (dirty).
    pub writebacks: u64,
    /// Accesses that waited because every miss entry of the level was in
    /// use (each counted once however long it waited), and their wait.
    pub mshr_stalls: u64,
    pub mshr_stall_ps: u64,
    /// The L1: misses found after issue while every fill buffer was in use
    /// (they took one past the bound; the front end's `late_overruns`).
    pub late_overruns: u64,
}

impl CacheStats {
    pub fn misses(&self) -> u64 {
        self.capacity + self.coherence
    }

    pub fn accesses(&self) -> u64 {
        self.hits + self.misses()
    }
}

impl std::ops::AddAssign for CacheStats {
    fn add_assign(&mut self, o: Self) {
        self.hits += o.hits;
        self.capacity += o.capacity;
        self.coherence += o.coherence;
        self.evictions += o.evictions;
        self.writebacks += o.writebacks;
        self.mshr_stalls += o.mshr_stalls;
        self.mshr_stall_ps += o.mshr_stall_ps;
        self.late_overruns += o.late_overruns;
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheResult {
    /// The core's requester.
    pub core: String,
    /// `l1`, `l2` or `protocol`.
    pub level: &'static str,
    pub stats: CacheStats,
    /// The protocol's cache only: its evictions and write-backs are the
    /// protocol's own counts (false: the protocol does not count them, and
    /// the driver cannot see them: reported empty).
    pub counted: bool,
}

impl CacheResult {
    /// Whether the row has counter `column` (a caches.csv column; the
    /// others are empty there and absent from summary.json): a private
    /// level has all but the protocol's, the protocol's cache its accesses
    /// and, when it counts them, its evictions and write-backs.
    pub fn has(&self, column: &str) -> bool {
        match (self.level, column) {
            (_, "hits" | "misses") => true,
            ("l1", _) => true,
            ("l2", c) => c != "late_overruns",
            (_, "evictions" | "writebacks") => self.counted,
            _ => false,
        }
    }
}

pub struct System {
    spec_name: String,
    seed: u64,
    max_time: Time,
    q: EventQueue<Event>,
    fabric: Fabric<MemMsg>,
    agent_of: Vec<Agent>,
    requesters: Vec<Requester>,
    req_node: Vec<NodeId>,
    /// Per requester: target position -> memory index.
    req_targets: Vec<Vec<u32>>,
    /// Scheduled Issue events not yet run (closed loop).
    req_pending: Vec<u32>,
    /// Trace with a window: blocked until a completion.
    req_blocked: Vec<bool>,
    /// Per requester, which requests have been answered (conservation):
    /// memory in proportion to the requests in flight, not to all requests.
    responded: Vec<Answered>,
    memories: Vec<MemoryEndpoint>,
    mem_node: Vec<NodeId>,
    mem_inflight: Vec<VecDeque<MemMsg>>,
    // statistics
    lat: Vec<Histogram>,
    queueing: Vec<Histogram>,
    read_lat: Histogram,
    write_lat: Histogram,
    /// Indexed by hop count; a class exists once a request with it completes.
    by_hops: Vec<HopClass>,
    measured: Vec<(u64, u64)>,
    /// Per requester: when its last request completed.
    finished: Vec<Time>,
    started_measuring: Vec<bool>,
    n_started: usize,
    window_start: Time,
    window_end: Time,
    snapshot: Vec<LinkStats>,
    /// When the first requester issued its last request: the end of steady state.
    steady_end: Option<Time>,
    snapshot_end: Vec<LinkStats>,
    /// Per requester: payload bytes completed inside [window_start, steady_end].
    steady_bytes: Vec<u64>,
    done: usize,
    /// Posted writes in the fabric or at a memory, not yet performed: the
    /// run goes on until there are none.
    posted_out: u64,
    routing_name: String,
    /// `--profile` (off unless the run asks).
    prof: Profiler,
    /// Profile the run (`--profile`).
    profile: bool,
}

impl System {
    pub fn build(spec: &SystemSpec) -> Self {
        let topo = spec.topology.clone();
        // Flows the deadlock check must see: requests and responses.
        let mut req_flows = Vec::new();
        let mut resp_flows = Vec::new();
        for r in &spec.requesters {
            for &t in &r.workload.targets {
                let m = spec.memories[t as usize].node;
                req_flows.push((r.node, m));
                resp_flows.push((m, r.node));
            }
        }
        let routing = RoutingTable::build(
            &topo,
            spec.fabric.routing,
            spec.fabric.spread,
            spec.fabric.deadlock_avoidance,
            &[req_flows, resp_flows],
        );
        let max_packet = spec.requesters.iter().map(|r| r.workload.max_packet()).max().unwrap_or(64);
        let buffer = spec.fabric.buffer.bytes();
        let fabric =
            Fabric::new(topo, routing, spec.fabric.switch_queueing, VC_CLASSES, buffer, max_packet, spec.fabric.flit);

        let mut agent_of = vec![Agent::None; spec.topology.nodes.len()];
        let count = spec.requesters.len() as u32;
        // Permutation pattern: one shared random permutation of the memories.
        let mut perm: Vec<u32> = (0..spec.memories.len() as u32).collect();
        let mut prng = Stream::new(spec.seed, u64::MAX);
        for i in (1..perm.len()).rev() {
            let j = prng.below(i as u64 + 1) as usize;
            perm.swap(i, j);
        }
        let requesters: Vec<Requester> = spec
            .requesters
            .iter()
            .enumerate()
            .map(|(i, r)| {
                agent_of[r.node as usize] = Agent::Requester(i as u32);
                let local_perm: Vec<u32> = if r.workload.pattern == Pattern::Permutation {
                    perm.iter()
                        .filter_map(|m| r.workload.targets.iter().position(|t| t == m).map(|p| p as u32))
                        .collect()
                } else {
                    Vec::new()
                };
                Requester::new(
                    i as u32,
                    count,
                    r.issue_latency,
                    r.cache_latency,
                    r.workload.clone(),
                    spec.seed,
                    &local_perm,
                )
            })
            .collect();
        for (i, m) in spec.memories.iter().enumerate() {
            agent_of[m.node as usize] = Agent::Memory(i as u32);
        }
        let nr = requesters.len();
        let warmup_free = requesters.iter().filter(|r| r.workload.warmup == 0 || r.total() == 0).count();
        System {
            spec_name: spec.name.clone(),
            seed: spec.seed,
            max_time: spec.max_time,
            q: EventQueue::with_capacity(4096),
            agent_of,
            req_node: spec.requesters.iter().map(|r| r.node).collect(),
            req_targets: spec.requesters.iter().map(|r| r.workload.targets.clone()).collect(),
            req_pending: vec![0; nr],
            req_blocked: vec![false; nr],
            responded: vec![Answered::default(); nr],
            memories: spec
                .memories
                .iter()
                .map(|m| match &m.dram {
                    None => MemoryEndpoint::new(m.latency, m.bandwidth, m.queue),
                    Some(p) => MemoryEndpoint::with_dram(m.latency, m.queue, p.clone()),
                })
                .collect(),
            mem_node: spec.memories.iter().map(|m| m.node).collect(),
            mem_inflight: spec.memories.iter().map(|_| VecDeque::new()).collect(),
            lat: vec![Histogram::default(); nr],
            queueing: vec![Histogram::default(); nr],
            read_lat: Histogram::default(),
            write_lat: Histogram::default(),
            by_hops: Vec::new(),
            measured: vec![(0, 0); nr],
            finished: vec![0; nr],
            started_measuring: requesters.iter().map(|r| r.workload.warmup == 0 || r.total() == 0).collect(),
            n_started: warmup_free,
            window_start: 0,
            window_end: 0,
            snapshot: Vec::new(),
            steady_end: None,
            snapshot_end: Vec::new(),
            steady_bytes: vec![0; nr],
            done: requesters.iter().filter(|r| r.total() == 0).count(),
            posted_out: 0,
            routing_name: format!("{:?}", spec.fabric.routing).to_lowercase(),
            prof: Profiler::new(false, 0),
            profile: false,
            requesters,
            fabric,
        }
    }

    /// Run to completion (or the time limit). `progress` is called every
    /// few thousand events with the fraction done; returning false stops
    /// the run (reported as interrupted).
    pub fn run(self, progress: &mut dyn FnMut(f64) -> bool) -> RunResult {
        self.run_counting(progress).0
    }

    /// Profile the run: events by kind and where the wall time goes
    /// (`--profile`, [`crate::sim::profile`]).
    pub fn with_profile(mut self, on: bool) -> Self {
        self.profile = on;
        self
    }

    /// `run`, also returning the packet-hops (link traversals) of the whole
    /// run, the figure benchmarks divide by the whole run's wall time (the
    /// result's link statistics cover only the measurement window).
    /// Profiled after [`Self::with_profile`].
    pub fn run_counting(mut self, progress: &mut dyn FnMut(f64) -> bool) -> (RunResult, u64) {
        let wall = std::time::Instant::now();
        self.prof = Profiler::new(self.profile, EVENT_KINDS.len());
        if self.n_started == self.requesters.len() {
            self.snapshot = self.fabric.link_stats().to_vec();
        }
        for r in 0..self.requesters.len() {
            self.start_requester(r);
        }
        let outcome = self.event_loop(progress);
        if self.window_end == 0 || outcome != Outcome::Completed {
            self.window_end = self.q.now().max(self.window_end);
        }
        if outcome == Outcome::TimeLimit {
            // The event past the limit was not handled: the run ended at the limit.
            self.window_end = self.window_end.min(self.max_time);
        }
        progress(1.0);
        let wall_s = wall.elapsed().as_secs_f64();
        let hops = self.fabric.link_stats().iter().map(|s| s.packets).sum();
        let prof = std::mem::replace(&mut self.prof, Profiler::new(false, 0));
        let mut r = self.finish(outcome, wall_s);
        r.profile = prof.finish("request_response", &EVENT_KINDS, wall_s);
        (r, hops)
    }

    /// Handle events until every request completed, none is left, one is
    /// past the time limit or `progress` says stop.
    fn event_loop(&mut self, progress: &mut dyn FnMut(f64) -> bool) -> Outcome {
        let profile = self.prof.on;
        let total: u64 = self.requesters.iter().map(|r| r.total()).sum::<u64>().max(1);
        let mut completed_total: u64 = 0;
        let mut outcome = Outcome::Completed;
        let mut tick: u32 = 0;
        while self.done < self.requesters.len() || self.posted_out > 0 {
            let Some((t, ev)) = self.q.pop() else {
                outcome = Outcome::Deadlock;
                break;
            };
            if profile {
                // counted as popped, like the run's `events` (the one past the limit too)
                self.prof.event(ev.kind(), ev.part());
            }
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
                Event::Issue(r) => self.issue(r as usize),
                Event::MemReady(m) => self.mem_ready(m as usize),
                Event::DramWake(m, ch) => self.dram_wake(m as usize, ch),
                Event::DramDone(m, slot) => self.dram_done(m as usize, slot),
                Event::Complete(r) => {
                    completed_total += 1;
                    self.complete(r as usize)
                }
            }
            if profile {
                self.prof.enter(Part::Queue);
            }
            tick = tick.wrapping_add(1);
            if tick & 0xFFFF == 0 {
                let frac = (completed_total as f64 / total as f64).max(t as f64 / self.max_time as f64);
                if !progress(frac.min(1.0)) {
                    outcome = Outcome::Interrupted;
                    break;
                }
            }
        }
        outcome
    }

    fn start_requester(&mut self, r: usize) {
        let req = &mut self.requesters[r];
        if req.total() == 0 {
            return;
        }
        let lat = req.issue_latency;
        match (req.workload.injection, req.workload.trace.is_some()) {
            (Injection::Closed, false) => {
                let n = (req.workload.window as u64).min(req.total()) as u32;
                self.req_pending[r] = n;
                for _ in 0..n {
                    self.q.schedule(lat, Event::Issue(r as u32));
                }
            }
            _ => {
                let t = req.first_issue();
                self.q.schedule(t + lat, Event::Issue(r as u32));
            }
        }
    }

    fn issue(&mut self, r: usize) {
        let now = self.q.now();
        let n_requesters = self.requesters.len();
        let req = &mut self.requesters[r];
        let timed = req.workload.injection == Injection::Open || req.workload.trace.is_some();
        if timed && req.workload.injection == Injection::Closed && req.outstanding >= req.workload.window {
            self.req_blocked[r] = true;
            return;
        }
        if !timed {
            self.req_pending[r] -= 1;
        }
        let created = now - req.issue_latency;
        let (mut msg, target) = req.create(now);
        msg.created = created;
        if !self.started_measuring[r] && req.measured(msg.tag) {
            self.started_measuring[r] = true;
            self.n_started += 1;
            if self.n_started == n_requesters {
                self.window_start = created;
                self.snapshot = self.fabric.link_stats().to_vec();
            }
        }
        if req.issued == req.total()
            && self.steady_end.is_none()
            && self.n_started == n_requesters
            && created > self.window_start
        {
            // From here on some requester is draining: steady state is over.
            self.steady_end = Some(created);
            self.snapshot_end = self.fabric.link_stats().to_vec();
        }
        if timed {
            if let Some(next) = req.advance_schedule(created) {
                let lat = req.issue_latency;
                self.q.schedule(next + lat, Event::Issue(r as u32));
            }
        }
        let wl = &req.workload;
        let mem = self.req_targets[r][target as usize];
        let bytes = if msg.kind.carries_data() { msg.bytes + wl.data_header } else { wl.header_bytes };
        let payload = if msg.kind.carries_data() { msg.bytes } else { 0 };
        let hdr = PacketHeader {
            src: self.req_node[r],
            dst: self.mem_node[mem as usize],
            bytes,
            payload,
            class: msg.kind as u8,
            vc_class: msg.kind.vc_class(),
        };
        let part = self.prof.enter(Part::Fabric);
        self.fabric.inject(&mut self.q, self.req_node[r], hdr, msg);
        self.prof.enter(part);
        if msg.kind == MsgKind::PostedWrite {
            // Posted: complete at the source once handed to the fabric (a
            // zero-latency completion); the memory performs it later and
            // sends nothing back.
            self.posted_out += 1;
            self.q.schedule(now, Event::Complete(r as u32));
        }
    }

    fn deliver(&mut self, node: NodeId, pkt: PacketId) {
        // (the receiver's part is looked up only when profiling)
        let part = self.prof.on.then(|| {
            self.prof.enter(match self.agent_of[node as usize] {
                Agent::Memory(m) if self.memories[m as usize].dram.is_some() => Part::Dram,
                Agent::Memory(_) => Part::Protocol,
                _ => Part::Driver,
            })
        });
        self.deliver_to(node, pkt);
        if let Some(part) = part {
            self.prof.enter(part);
        }
    }

    #[inline(always)]
    fn deliver_to(&mut self, node: NodeId, pkt: PacketId) {
        match self.agent_of[node as usize] {
            Agent::Memory(m) if self.memories[m as usize].dram.is_some() => {
                let m = m as usize;
                let msg = self.fabric.message(pkt);
                let (addr, write) = (self.media_addr(msg), msg.kind != MsgKind::ReadReq);
                let mem = &mut self.memories[m];
                if mem.waiting.is_empty() && mem.dram_has_room(addr, write) {
                    self.dram_accept(m, pkt);
                } else {
                    mem.waiting.push_back(pkt);
                }
            }
            Agent::Memory(m) => {
                let m = m as usize;
                let mem = &mut self.memories[m];
                if mem.has_room() && mem.waiting.is_empty() {
                    self.accept(m, pkt);
                } else {
                    mem.waiting.push_back(pkt);
                }
            }
            Agent::Requester(r) => self.response(r as usize, pkt),
            Agent::None => unreachable!("packet delivered to a switch"),
        }
    }

    fn accept(&mut self, m: usize, pkt: PacketId) {
        let (_, msg, wait) = self.fabric.consume(&mut self.q, pkt);
        let now = self.q.now();
        let msg = MemMsg { queued: msg.queued + wait, fabric_wait: msg.fabric_wait + wait, ..msg };
        let (resp, ready) = self.memories[m].accept(now, msg);
        self.mem_inflight[m].push_back(resp);
        self.q.schedule(ready, Event::MemReady(m as u32));
    }

    /// Memory `m` sends a response to its requester (fixed and DRAM models
    /// alike), or, for a posted write, records that it was performed.
    fn respond(&mut self, m: usize, resp: MemMsg) {
        let r = resp.requester as usize;
        if resp.kind == MsgKind::PostedWrite {
            self.performed(r, m, resp);
            return;
        }
        let wl = &self.requesters[r].workload;
        let data = resp.kind.carries_data();
        let hdr = PacketHeader {
            src: self.mem_node[m],
            dst: self.req_node[r],
            bytes: if data { resp.bytes + wl.data_header } else { wl.header_bytes },
            payload: if data { resp.bytes } else { 0 },
            class: resp.kind as u8,
            vc_class: resp.kind.vc_class(),
        };
        let part = self.prof.enter(Part::Fabric);
        self.fabric.inject(&mut self.q, self.mem_node[m], hdr, resp);
        self.prof.enter(part);
    }

    fn mem_ready(&mut self, m: usize) {
        let resp = self.mem_inflight[m].pop_front().expect("a response is in service");
        self.respond(m, resp);
        self.memories[m].release();
        while self.memories[m].has_room() {
            let Some(next) = self.memories[m].waiting.pop_front() else {
                break;
            };
            self.accept(m, next);
        }
    }

    /// The address a memory's media sees: the request's address with the
    /// digit that chose the memory removed (requests interleave over their
    /// targets every `interleave` bytes), so a memory's banks and rows see
    /// a dense address space.
    fn media_addr(&self, msg: &MemMsg) -> u64 {
        let wl = &self.requesters[msg.requester as usize].workload;
        let n = wl.targets.len() as u64;
        if wl.pattern == Pattern::Permutation || n <= 1 {
            return msg.addr;
        }
        let g = wl.interleave.max(1);
        msg.addr / (g * n) * g + msg.addr % g
    }

    fn dram_accept(&mut self, m: usize, pkt: PacketId) {
        let (_, msg, wait) = self.fabric.consume(&mut self.q, pkt);
        let now = self.q.now();
        let addr = self.media_addr(&msg);
        let msg = MemMsg { queued: msg.queued + wait, fabric_wait: msg.fabric_wait + wait, ..msg };
        let ch = self.memories[m].dram_accept(now, msg, addr);
        self.dram_step(m, ch);
    }

    /// Let channel `ch` of DRAM memory `m` issue what it can now; schedule
    /// the response of a column command and the channel's next step.
    /// Returns whether a request left the channel's queue.
    fn dram_step(&mut self, m: usize, ch: u32) -> bool {
        let now = self.q.now();
        let mem = &mut self.memories[m];
        let (issued, wake) = mem.dram.as_mut().expect("a DRAM endpoint").dram.advance(now, ch);
        if let Some(t) = wake {
            self.q.schedule(t, Event::DramWake(m as u32, ch));
        }
        match issued {
            Some(i) => {
                let (slot, ready) = mem.dram_issued(i);
                self.q.schedule(ready, Event::DramDone(m as u32, slot));
                true
            }
            None => false,
        }
    }

    fn dram_wake(&mut self, m: usize, ch: u32) {
        let now = self.q.now();
        let d = &mut self.memories[m].dram.as_mut().expect("a DRAM endpoint").dram;
        if d.take_wake(ch, now) && self.dram_step(m, ch) {
            self.dram_admit(m);
        }
    }

    /// Accept waiting requests, in arrival order, while the first fits.
    fn dram_admit(&mut self, m: usize) {
        while let Some(&pkt) = self.memories[m].waiting.front() {
            let msg = self.fabric.message(pkt);
            let (addr, write) = (self.media_addr(msg), msg.kind != MsgKind::ReadReq);
            if !self.memories[m].dram_has_room(addr, write) {
                break;
            }
            self.memories[m].waiting.pop_front();
            self.dram_accept(m, pkt);
        }
    }

    fn dram_done(&mut self, m: usize, slot: u32) {
        let resp = self.memories[m].dram_respond(slot);
        self.respond(m, resp);
        self.dram_admit(m);
    }

    fn response(&mut self, r: usize, pkt: PacketId) {
        let (hdr, msg, wait) = self.fabric.consume(&mut self.q, pkt);
        assert_eq!(msg.requester as usize, r, "response delivered to the wrong requester");
        assert!(matches!(msg.kind, MsgKind::ReadResp | MsgKind::WriteAck), "requester received a {:?}", msg.kind);
        assert!(self.responded[r].mark(msg.tag), "request {} of requester {r} answered twice", msg.tag);
        let req = &self.requesters[r];
        let done_at = self.q.now() + req.cache_latency;
        if req.measured(msg.tag) {
            let latency = done_at - msg.created;
            self.lat[r].record(latency);
            self.queueing[r].record(msg.queued + wait);
            self.record_hops(r, hdr.src, latency, msg.fabric_wait + wait, msg.queued + wait);
            if msg.kind == MsgKind::ReadResp {
                self.read_lat.record(latency);
            } else {
                self.write_lat.record(latency);
            }
            self.measured[r].0 += 1;
            self.window_end = self.window_end.max(done_at);
        }
        // Throughput counts every completion inside the measurement window,
        // warm-up requests included, so the window is steady state from its
        // first picosecond (no pipeline-fill gap at its start).
        if self.n_started == self.requesters.len() && done_at >= self.window_start {
            self.measured[r].1 += msg.bytes as u64;
            if self.steady_end.is_none() {
                self.steady_bytes[r] += msg.bytes as u64;
            }
        }
        self.q.schedule(done_at, Event::Complete(r as u32));
    }

    /// A posted write of requester `r` was performed at its memory now:
    /// its latency is one way, from creation to performed.
    fn performed(&mut self, r: usize, m: usize, msg: MemMsg) {
        assert!(self.responded[r].mark(msg.tag), "posted write {} of requester {r} performed twice", msg.tag);
        self.posted_out -= 1;
        let now = self.q.now();
        if self.requesters[r].measured(msg.tag) {
            let latency = now - msg.created;
            self.lat[r].record(latency);
            self.queueing[r].record(msg.queued);
            self.record_hops(r, self.mem_node[m], latency, msg.fabric_wait, msg.queued);
            self.write_lat.record(latency);
            self.measured[r].0 += 1;
            self.window_end = self.window_end.max(now);
        }
        if self.n_started == self.requesters.len() && now >= self.window_start {
            self.measured[r].1 += msg.bytes as u64;
            if self.steady_end.is_none() {
                self.steady_bytes[r] += msg.bytes as u64;
            }
        }
    }

    /// File a measured request of requester `r` to memory node `mem` under
    /// its route's hop count. `queued` is all its waiting, `fabric` the part
    /// in fabric queues.
    fn record_hops(&mut self, r: usize, mem: NodeId, latency: Time, fabric: Time, queued: Time) {
        let hops = self.fabric.routing.distance(self.req_node[r], 0, mem).expect("a memory the requester reached");
        let h = hops as usize;
        if self.by_hops.len() <= h {
            // Grows to the fabric's diameter once, then never again.
            self.by_hops.resize_with(h + 1, HopClass::default);
        }
        let c = &mut self.by_hops[h];
        c.hops = hops;
        c.latency.record(latency);
        c.fabric_wait_ps += u128::from(fabric);
        c.memory_wait_ps += u128::from(queued - fabric);
    }

    fn complete(&mut self, r: usize) {
        let now = self.q.now();
        self.finished[r] = now;
        let req = &mut self.requesters[r];
        req.complete();
        if req.done() {
            self.done += 1;
            return;
        }
        let timed = req.workload.injection == Injection::Open || req.workload.trace.is_some();
        if timed {
            if self.req_blocked[r] {
                self.req_blocked[r] = false;
                self.q.schedule(now + req.issue_latency, Event::Issue(r as u32));
            }
        } else if req.issued + (self.req_pending[r] as u64) < req.total() {
            self.req_pending[r] += 1;
            self.q.schedule(now + req.issue_latency, Event::Issue(r as u32));
        }
    }

    fn finish(mut self, outcome: Outcome, wall_s: f64) -> RunResult {
        // Measure steady state, [window_start, steady_end], when there was one;
        // otherwise up to the last measured completion (drain included).
        let final_stats = self.fabric.link_stats().to_vec();
        let stats: &[LinkStats] = match self.steady_end {
            Some(t1) if outcome == Outcome::Completed && t1 > self.window_start => {
                self.window_end = t1;
                for (m, b) in self.measured.iter_mut().zip(&self.steady_bytes) {
                    m.1 = *b;
                }
                &self.snapshot_end
            }
            _ => &final_stats,
        };
        let topo = &self.fabric.topo;
        let links = self.fabric.link_rows(stats, (!self.snapshot.is_empty()).then_some(self.snapshot.as_slice()));
        let (cp, cb) = self.fabric.class_counts();
        // (posted writes get a row only when there were some: outputs of
        // runs without them stay as they were)
        let class_packets = MsgKind::ALL
            .iter()
            .filter(|k| **k != MsgKind::PostedWrite || cp[**k as usize] > 0)
            .map(|k| (k.name().to_string(), cp[*k as usize], cb[*k as usize]))
            .collect();
        let mut warnings = Vec::new();
        match outcome {
            Outcome::TimeLimit => warnings.push(format!(
                "stopped at sim.max_time with {} requests outstanding and {} packets in flight",
                self.requesters.iter().map(|r| r.issued - r.completed).sum::<u64>(),
                self.fabric.in_flight()
            )),
            Outcome::Deadlock => warnings.push(format!(
                "deadlock: no event left with {} requests outstanding and {} packets stuck in the fabric",
                self.requesters.iter().map(|r| r.issued - r.completed).sum::<u64>(),
                self.fabric.in_flight()
            )),
            Outcome::Interrupted => warnings.push("interrupted before completion".to_string()),
            // request-response runs have no protocol agents
            Outcome::Completed | Outcome::ProtocolError => {}
        }
        RunResult {
            name: self.spec_name.clone(),
            seed: self.seed,
            outcome,
            sim_time: if outcome == Outcome::TimeLimit { self.q.now().min(self.max_time) } else { self.q.now() },
            window_start: self.window_start,
            window_end: self.window_end,
            events: self.q.dispatched(),
            wall_s,
            in_flight_packets: self.fabric.in_flight(),
            requesters: self
                .requesters
                .iter()
                .enumerate()
                .map(|(i, r)| RequesterResult {
                    name: topo.nodes[self.req_node[i] as usize].name.clone(),
                    issued: r.issued,
                    completed: r.completed,
                    measured: self.measured[i].0,
                    measured_bytes: self.measured[i].1,
                    finished: self.finished[i],
                    latency: self.lat[i].clone(),
                    queueing: self.queueing[i].clone(),
                })
                .collect(),
            read_latency: self.read_lat.clone(),
            write_latency: self.write_lat.clone(),
            op_latency: Vec::new(),
            by_hops: self.by_hops.iter().filter(|c| c.latency.count > 0).cloned().collect(),
            links,
            half_duplex: self.fabric.half_duplex_links(),
            class_packets,
            memories: self
                .memories
                .iter()
                .enumerate()
                .map(|(i, m)| MemoryResult {
                    name: topo.nodes[self.mem_node[i] as usize].name.clone(),
                    served: m.served,
                    busy_ps: m.busy_ps,
                    dram: m.dram.as_ref().map(|d| d.dram.stats),
                })
                .collect(),
            vc_levels: self.fabric.routing.levels,
            cdg_acyclic: self.fabric.routing.cdg_acyclic,
            routing: self.routing_name.clone(),
            spread: self.fabric.routing.spread_used().map(Spread::name),
            warnings,
            protocol_stats: Vec::new(),
            caches: Vec::new(),
            profile: None,
        }
    }
}

#[cfg(test)]
mod size_tests {
    #[test]
    fn event_is_small() {
        assert!(std::mem::size_of::<super::Event>() <= 16);
    }
}

/// The set of answered request tags of one requester (tags are issued
/// 0, 1, 2, ...): every tag below `base` is answered; bit `i` of the window
/// says whether `base + i` is. The window slides as the oldest requests are
/// answered, so it spans only the requests in flight.
#[derive(Clone, Default)]
struct Answered {
    base: u64,
    words: VecDeque<u64>,
}

impl Answered {
    /// Mark `tag` answered; false if it already was.
    fn mark(&mut self, tag: u64) -> bool {
        if tag < self.base {
            return false;
        }
        let off = tag - self.base;
        let (w, b) = ((off / 64) as usize, off % 64);
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        if self.words[w] >> b & 1 == 1 {
            return false;
        }
        self.words[w] |= 1 << b;
        while self.words.front() == Some(&u64::MAX) {
            self.words.pop_front();
            self.base += 64;
        }
        true
    }
}

#[cfg(test)]
mod answered_tests {
    use super::Answered;

    #[test]
    fn marks_each_tag_once_in_any_order_and_slides() {
        let mut a = Answered::default();
        for t in (0..1000u64).rev() {
            assert!(a.mark(t));
        }
        assert_eq!(a.base, 960);
        assert!(!a.mark(5) && !a.mark(999));
        assert!(a.mark(1000));
    }
}
