//! The fabric at run time: output queues, input buffers, credits, link
//! serialization and switch traversal.
//!
//! Model (per link direction, store-and-forward):
//! - A sender's output port holds one FIFO per virtual channel. It sends
//!   one packet at a time, picking VCs round-robin among those whose head
//!   has enough credit for the receiver's input buffer.
//! - Serialization takes `bytes / bandwidth`; the packet is whole at the
//!   other end `propagation` later (bus time plus two port crossings).
//! - A half-duplex link carries one direction at a time and pays
//!   `turnaround` to reverse; when both directions wait, they alternate.
//! - A switch holds arriving packets in per-(port, VC) input buffers whose
//!   space is the upstream sender's credit. After the switch latency a
//!   packet is routed and joins its output port's queue for its next VC.
//!   With virtual output queues (the default) every packet does so on its
//!   own; with input FIFOs only the head of each input buffer does, and the
//!   packets behind it wait (head-of-line blocking). The buffer space
//!   returns upstream when the packet's tail leaves the switch, one
//!   propagation delay later.
//! - Endpoints get packets delivered and return credit when their agent
//!   consumes them, so a busy endpoint back-pressures the fabric.
//!
//! Events (fewer per hop than one per step of the model; the timing is the
//! same to the picosecond):
//! - A packet crossing a link into a switch with virtual output queues is
//!   scheduled once, at the time it has crossed the switch (arrival plus
//!   switch latency); into an endpoint or an input FIFO, at its arrival.
//! - Returned buffer space is not an event: it is written, with the time it
//!   reaches the sender, into the sender's list of pending credits, which
//!   the sender reads when it next picks a packet. Only a sender blocked
//!   for want of credit schedules a wake-up at the earliest return.
//! - A full-duplex transmitter that finishes with nothing queued schedules
//!   nothing: a packet joining its queue later either leaves at once or
//!   schedules one wake-up for when the transmitter is free. A half-duplex
//!   link (whose two directions share one transmitter) keeps its
//!   end-of-serialization event.

use std::collections::VecDeque;

use super::flit::FlitMode;
use super::packet::{Packet, PacketHeader, PacketId, Slab};
use super::routing::RoutingTable;
use super::topology::{NodeId, PortId, Topology};
use crate::engine::units::Bandwidth;
use crate::engine::{EventQueue, Time};
use crate::fabric::kinds::{Duplex, RoutingAlgorithm, SwitchQueueing};

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FabricEvent {
    /// A half-duplex link finished serializing a packet from `port`.
    TxDone { port: PortId },
    /// Output port `port` may be able to send: its transmitter is free or
    /// credit it waited for has returned.
    Wake { port: PortId },
    /// A packet is whole at receiving port `port`.
    Arrive { port: PortId, pkt: PacketId },
    /// The head of input buffer (`port`, `vc`) has crossed the switch (input FIFOs).
    HeadReady { port: PortId, vc: u16 },
    /// Packet `pkt` has crossed the switch (virtual output queues).
    Crossed { pkt: PacketId },
}

impl FabricEvent {
    /// The kinds' names (`--profile` counts events by kind), by [`FabricEvent::kind`].
    pub const KINDS: [&'static str; 5] =
        ["fabric.tx_done", "fabric.wake", "fabric.arrive", "fabric.head_ready", "fabric.crossed"];

    #[inline]
    pub fn kind(&self) -> usize {
        match self {
            FabricEvent::TxDone { .. } => 0,
            FabricEvent::Wake { .. } => 1,
            FabricEvent::Arrive { .. } => 2,
            FabricEvent::HeadReady { .. } => 3,
            FabricEvent::Crossed { .. } => 4,
        }
    }
}

/// Counters of one link direction (indexed by the sending port).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub packets: u64,
    pub bytes: u64,
    pub payload_bytes: u64,
    /// Time spent serializing plus reversing direction.
    pub busy_ps: u64,
    /// Time the payload bytes alone would take.
    pub payload_ps: u64,
    pub turnaround_ps: u64,
    /// Sum of the time packets waited in this output queue.
    pub wait_ps: u64,
}

impl LinkStats {
    pub fn minus(&self, o: &LinkStats) -> LinkStats {
        LinkStats {
            packets: self.packets - o.packets,
            bytes: self.bytes - o.bytes,
            payload_bytes: self.payload_bytes - o.payload_bytes,
            busy_ps: self.busy_ps - o.busy_ps,
            payload_ps: self.payload_ps - o.payload_ps,
            turnaround_ps: self.turnaround_ps - o.turnaround_ps,
            wait_ps: self.wait_ps - o.wait_ps,
        }
    }
}

/// Per output port (the sending end of a link direction): what picking
/// and sending a packet reads, together, in one cache line.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct OutPort {
    /// Full duplex: the event key (time, reserved sequence) at which the
    /// transmitter is free again: the place of the end-of-serialization
    /// event the model no longer schedules unless needed.
    busy_until: u128,
    /// The key of the earliest pending `Wake` (u128::MAX: none).
    wake_at: u128,
    /// Bit per VC: its output queue is not empty.
    nonempty: u64,
    /// Link propagation (bus time plus two port crossings).
    prop: Time,
    /// Time from arriving at the far end to having crossed it, if the far
    /// end is a switch with virtual output queues (NO_CROSS otherwise).
    cross: Time,
    /// Start of the link's bandwidth in `ser_table`.
    ser_base: u32,
    /// Round-robin position among the VCs.
    rr: u16,
    /// The link is half duplex.
    half: bool,
}

const NO_CROSS: Time = Time::MAX;

/// Packets up to this size serialize by table look-up (per distinct link
/// bandwidth); the exact division is 128-bit.
const SER_TABLE: usize = 1024;

/// Per (port, VC): its output queue (a list threaded through the packets),
/// its credit and the credit on its way back, in one cache line.
#[derive(Debug, Clone)]
#[repr(align(64))]
struct VcState {
    /// The smallest key in `pending` (u128::MAX: none). Credit is folded
    /// in lazily, only when a sender lacks it, so this may lie in the past.
    pending_min: u128,
    /// Buffer space on its way back: (the key of the moment it arrives, bytes).
    pending: Vec<(u128, u32)>,
    head: PacketId,
    tail: PacketId,
    credits: u32,
}

pub struct Fabric<M> {
    pub topo: Topology,
    pub routing: RoutingTable,
    /// CXL flit mode of the links, if any.
    flit: Option<FlitMode>,
    nvc: usize,
    levels: u8,
    voq: bool,
    dor: bool,
    adaptive: bool,
    packets: Slab<Packet>,
    /// The agents' messages, by packet id (apart from the fabric's
    /// per-hop state, which they would only dilute).
    msgs: Vec<M>,
    port_node: Vec<NodeId>,
    node_is_switch: Vec<bool>,
    node_latency: Vec<Time>,
    link_bw: Vec<Bandwidth>,
    /// Per distinct link bandwidth, serialization times of 0..SER_TABLE bytes.
    ser_table: Vec<Time>,
    link_prop: Vec<Time>,
    link_half: Vec<bool>,
    link_turnaround: Vec<Time>,
    /// Direction last used on a half-duplex link (2: never used).
    link_last: Vec<u8>,
    /// Half duplex: the link's transmitter busy, at the link's even port.
    tx_busy: Vec<bool>,
    ports: Vec<OutPort>,
    vcs: Vec<VcState>,
    /// Bit per port: its transmitter was free but no head packet had credit.
    blocked: Vec<u64>,
    in_q: Vec<VecDeque<PacketId>>,
    stats: Vec<LinkStats>,
    class_packets: Vec<u64>,
    class_bytes: Vec<u64>,
    /// Buffer bytes per VC at the receiving end of each link direction.
    pub buffer_bytes: Vec<u32>,
}

impl<M: Copy> Fabric<M> {
    /// `vc_classes`: virtual-channel classes the agents use; `buffer`:
    /// input-buffer bytes per VC per port, or None for the automatic size
    /// that covers each link's credit round trip for `max_packet` (a
    /// message's bytes; with CXL flits, `flit`, what it costs on a link).
    pub fn new(
        topo: Topology,
        routing: RoutingTable,
        queueing: SwitchQueueing,
        vc_classes: usize,
        buffer: Option<u32>,
        max_packet: u32,
        flit: Option<FlitMode>,
    ) -> Self {
        let max_packet = flit.map_or(max_packet, |f| f.wire_bytes(max_packet));
        let levels = routing.levels;
        let nvc = vc_classes * levels as usize;
        assert!(nvc <= 64, "at most 64 virtual channels per port");
        let np = topo.n_ports();
        let nl = topo.links.len();
        let port_node: Vec<NodeId> = (0..np as PortId).map(|p| topo.port_node(p)).collect();
        let node_is_switch: Vec<bool> = topo.nodes.iter().map(|n| n.kind.is_switch()).collect();
        let node_latency: Vec<Time> = topo.nodes.iter().map(|n| n.latency).collect();
        let voq = queueing == SwitchQueueing::Voq;
        let mut buffer_bytes = vec![0u32; np];
        for p in 0..np {
            let l = &topo.links[p / 2];
            buffer_bytes[p] = match buffer {
                Some(b) => b,
                None => {
                    let max_sw = node_latency[port_node[p] as usize].max(node_latency[port_node[p ^ 1] as usize]);
                    let rtt = 2 * l.propagation() + max_sw + 2 * l.bandwidth.serialize(max_packet as u64);
                    let bw_bytes = (l.bandwidth.bytes_per_s() * rtt as f64 / 1e12).ceil() as u64;
                    (bw_bytes + 2 * max_packet as u64).min(u32::MAX as u64 / 2) as u32
                }
            };
        }
        let mut vcs = Vec::with_capacity(np * nvc);
        for &b in &buffer_bytes {
            for _ in 0..nvc {
                vcs.push(VcState { pending_min: u128::MAX, pending: Vec::new(), head: NONE, tail: NONE, credits: b });
            }
        }
        let mut bws: Vec<Bandwidth> = Vec::new();
        let mut ser_table = Vec::new();
        let link_ser: Vec<u32> = topo
            .links
            .iter()
            .map(|l| {
                let i = bws.iter().position(|b| *b == l.bandwidth).unwrap_or_else(|| {
                    bws.push(l.bandwidth);
                    ser_table.extend((0..SER_TABLE as u64).map(|n| l.bandwidth.serialize(n)));
                    bws.len() - 1
                });
                (i * SER_TABLE) as u32
            })
            .collect();
        let ports = (0..np)
            .map(|p| {
                let l = &topo.links[p / 2];
                let far = port_node[p ^ 1] as usize;
                OutPort {
                    busy_until: 0,
                    wake_at: u128::MAX,
                    nonempty: 0,
                    prop: l.propagation(),
                    ser_base: link_ser[p / 2],
                    cross: if voq && node_is_switch[far] { l.propagation() + node_latency[far] } else { NO_CROSS },
                    rr: 0,
                    half: l.duplex == Duplex::Half,
                }
            })
            .collect();
        Self {
            link_bw: topo.links.iter().map(|l| l.bandwidth).collect(),
            ser_table,
            link_prop: topo.links.iter().map(|l| l.propagation()).collect(),
            link_half: topo.links.iter().map(|l| l.duplex == Duplex::Half).collect(),
            link_turnaround: topo.links.iter().map(|l| l.turnaround).collect(),
            link_last: vec![2; nl],
            tx_busy: vec![false; np],
            ports,
            vcs,
            blocked: vec![0; np.div_ceil(64)],
            in_q: if voq { Vec::new() } else { (0..np * nvc).map(|_| VecDeque::new()).collect() },
            stats: vec![LinkStats::default(); np],
            class_packets: vec![0; 256],
            class_bytes: vec![0; 256],
            buffer_bytes,
            packets: Slab::with_capacity(1024),
            msgs: Vec::with_capacity(1024),
            port_node,
            node_is_switch,
            node_latency,
            nvc,
            levels,
            voq,
            dor: routing.algorithm == RoutingAlgorithm::Dor,
            adaptive: routing.algorithm == RoutingAlgorithm::Adaptive,
            topo,
            routing,
            flit,
        }
    }

    pub fn virtual_channels(&self) -> usize {
        self.nvc
    }

    /// Packets inside the fabric, including ones delivered but not yet consumed.
    pub fn in_flight(&self) -> usize {
        self.packets.live()
    }

    pub fn link_stats(&self) -> &[LinkStats] {
        &self.stats
    }

    /// One row per link direction, (link, from, to, GB/s, stats), with
    /// `stats` taken since `since` (a snapshot of `link_stats`) if given.
    pub fn link_rows(
        &self,
        stats: &[LinkStats],
        since: Option<&[LinkStats]>,
    ) -> Vec<(usize, String, String, f64, LinkStats)> {
        stats
            .iter()
            .enumerate()
            .map(|(p, s)| {
                let l = &self.topo.links[p / 2];
                let (from, to) = if p % 2 == 0 { (l.a, l.b) } else { (l.b, l.a) };
                let s = match since {
                    Some(snap) => s.minus(&snap[p]),
                    None => *s,
                };
                (
                    p / 2,
                    self.topo.nodes[from as usize].name.clone(),
                    self.topo.nodes[to as usize].name.clone(),
                    l.bandwidth.gb_per_s(),
                    s,
                )
            })
            .collect()
    }

    /// Per link: whether it is half duplex.
    pub fn half_duplex_links(&self) -> Vec<bool> {
        self.link_half.clone()
    }

    pub fn class_counts(&self) -> (&[u64], &[u64]) {
        (&self.class_packets, &self.class_bytes)
    }

    #[inline]
    pub fn header(&self, pkt: PacketId) -> &PacketHeader {
        &self.packets.get(pkt).hdr
    }

    #[inline]
    pub fn message(&self, pkt: PacketId) -> &M {
        &self.msgs[pkt as usize]
    }

    #[inline]
    fn vc_of(&self, vc_class: u8, level: u8) -> u16 {
        (vc_class as u16) * self.levels as u16 + level.min(self.levels - 1) as u16
    }

    #[inline]
    fn cost(hdr: &PacketHeader) -> u32 {
        hdr.bytes.max(1)
    }

    /// Hand a packet to the fabric at endpoint `node`.
    pub fn inject<E: From<FabricEvent> + Copy>(
        &mut self,
        q: &mut EventQueue<E>,
        node: NodeId,
        hdr: PacketHeader,
        msg: M,
    ) -> PacketId {
        debug_assert_eq!(hdr.src, node);
        let hdr = match self.flit {
            Some(f) => PacketHeader { bytes: f.wire_bytes(hdr.bytes), ..hdr },
            None => hdr,
        };
        self.class_packets[hdr.class as usize] += 1;
        self.class_bytes[hdr.class as usize] += hdr.bytes as u64;
        let now = q.now();
        let pid = self.packets.insert(Packet {
            hdr,
            next: NONE,
            in_port: NONE,
            group: self.routing.dst_group(hdr.dst),
            vc: 0,
            out_vc: 0,
            level: 0,
            phase: 0,
            since: now,
            wait: 0,
            flow: self.routing.flow_hash(hdr.src, hdr.dst),
        });
        if pid as usize == self.msgs.len() {
            self.msgs.push(msg);
        } else {
            self.msgs[pid as usize] = msg;
        }
        let o = self.route(q, node, pid);
        self.enqueue(q, o, pid);
        pid
    }

    /// An endpoint's agent takes a delivered packet; its buffer space
    /// returns upstream. Returns the header, the message and the time the
    /// packet spent waiting in queues on its way.
    pub fn consume<E: From<FabricEvent> + Copy>(
        &mut self,
        q: &mut EventQueue<E>,
        pkt: PacketId,
    ) -> (PacketHeader, M, Time) {
        let p = self.packets.remove(pkt);
        let r = p.in_port;
        let at = q.now() + self.link_prop[(r / 2) as usize];
        let key = EventQueue::<E>::key(at, q.reserve());
        self.return_credit(q, r ^ 1, p.vc, Self::cost(&p.hdr), key);
        (p.hdr, self.msgs[pkt as usize], p.wait)
    }

    /// Handle one fabric event. Returns a packet delivered to an endpoint
    /// (node, packet), which the caller hands to that endpoint's agent.
    #[inline]
    pub fn handle<E: From<FabricEvent> + Copy>(
        &mut self,
        q: &mut EventQueue<E>,
        ev: FabricEvent,
    ) -> Option<(NodeId, PacketId)> {
        match ev {
            FabricEvent::Crossed { pkt } => {
                let node = self.port_node[self.packets.get(pkt).in_port as usize];
                let o = self.route(q, node, pkt);
                self.enqueue(q, o, pkt);
                None
            }
            FabricEvent::Wake { port } => {
                let op = &mut self.ports[port as usize];
                if op.wake_at == q.current() {
                    op.wake_at = u128::MAX;
                }
                self.try_send(q, port);
                None
            }
            FabricEvent::Arrive { port, pkt } => {
                let node = self.port_node[port as usize];
                let p = self.packets.get_mut(pkt);
                p.in_port = port;
                if self.node_is_switch[node as usize] {
                    let ready = q.now() + self.node_latency[node as usize];
                    p.since = ready;
                    if self.voq {
                        q.schedule(ready, FabricEvent::Crossed { pkt }.into());
                        return None;
                    }
                    let vc = p.vc;
                    let b = &mut self.in_q[port as usize * self.nvc + vc as usize];
                    b.push_back(pkt);
                    if b.len() == 1 {
                        q.schedule(ready, FabricEvent::HeadReady { port, vc }.into());
                    }
                    None
                } else {
                    Some((node, pkt))
                }
            }
            FabricEvent::TxDone { port } => {
                self.tx_busy[port as usize & !1] = false;
                self.try_send(q, port ^ 1);
                self.try_send(q, port);
                None
            }
            FabricEvent::HeadReady { port, vc } => {
                let pkt = *self.in_q[port as usize * self.nvc + vc as usize]
                    .front()
                    .expect("head-ready event for an empty buffer");
                let node = self.port_node[port as usize];
                let o = self.route(q, node, pkt);
                self.enqueue(q, o, pkt);
                None
            }
        }
    }

    /// Buffer space of `bytes` returns to (`port`, `vc`) at event key `at`.
    #[inline]
    fn return_credit<E: From<FabricEvent> + Copy>(
        &mut self,
        q: &mut EventQueue<E>,
        port: PortId,
        vc: u16,
        bytes: u32,
        at: u128,
    ) {
        let idx = port as usize * self.nvc + vc as usize;
        let v = &mut self.vcs[idx];
        v.pending.push((at, bytes));
        if at < v.pending_min {
            v.pending_min = at;
        }
        if self.is_blocked(port as usize) {
            self.wake(q, port, at);
        }
    }

    /// Credit of (`idx` = port * nvc + vc) that has returned by the event
    /// being handled: returned credit folded in.
    #[inline]
    fn credit<E: From<FabricEvent> + Copy>(&mut self, q: &EventQueue<E>, idx: usize) -> u32 {
        // A credit whose (reserved) key is the current event's has arrived:
        // the current event stands in its place.
        let now = q.current();
        if self.vcs[idx].pending_min <= now {
            self.fold_credit(now, idx);
        }
        self.vcs[idx].credits
    }

    #[cold]
    #[inline(never)]
    fn fold_credit(&mut self, now: u128, idx: usize) {
        let mut min = u128::MAX;
        let mut got = 0;
        let v = &mut self.vcs[idx];
        v.pending.retain(|&(t, b)| {
            if t <= now {
                got += b;
                false
            } else {
                min = min.min(t);
                true
            }
        });
        v.credits += got;
        v.pending_min = min;
    }

    #[inline]
    fn is_blocked(&self, p: usize) -> bool {
        self.blocked[p / 64] >> (p % 64) & 1 == 1
    }

    #[inline]
    fn set_blocked(&mut self, p: usize, b: bool) {
        let w = &mut self.blocked[p / 64];
        *w = (*w & !(1 << (p % 64))) | (b as u64) << (p % 64);
    }

    /// Make sure `port` is woken at event key `at` or earlier.
    #[inline]
    fn wake<E: From<FabricEvent> + Copy>(&mut self, q: &mut EventQueue<E>, port: PortId, at: u128) {
        let op = &mut self.ports[port as usize];
        if at < op.wake_at {
            op.wake_at = at;
            q.schedule_reserved(at, FabricEvent::Wake { port }.into());
        }
    }

    /// Whether port `o`'s transmitter is busy.
    #[inline]
    fn tx_is_busy<E: From<FabricEvent> + Copy>(&self, q: &EventQueue<E>, o: PortId) -> bool {
        let op = &self.ports[o as usize];
        if op.half {
            self.tx_busy[o as usize & !1]
        } else {
            op.busy_until > q.current()
        }
    }

    /// Time to serialize `bytes` from port `p` (`Bandwidth::serialize`,
    /// looked up for small packets).
    #[inline]
    fn serialize(&self, p: usize, bytes: u32) -> Time {
        if (bytes as usize) < SER_TABLE {
            return self.ser_table[self.ports[p].ser_base as usize + bytes as usize];
        }
        self.link_bw[p / 2].serialize(bytes as u64)
    }

    /// Choose the output port at `node` and set the packet's next VC.
    #[inline]
    fn route<E: From<FabricEvent> + Copy>(&mut self, q: &EventQueue<E>, node: NodeId, pid: PacketId) -> PortId {
        let p = self.packets.get(pid);
        let (in_port, level, phase, dst, vc_class) = (p.in_port, p.level, p.phase, p.hdr.dst, p.hdr.vc_class);
        if self.dor {
            let state = if in_port == NONE { 0 } else { phase };
            let (o, state, level) = self.routing.dor_route(node, state, dst);
            let out_vc = self.vc_of(vc_class, level);
            let pm = self.packets.get_mut(pid);
            pm.level = level;
            pm.out_vc = out_vc;
            pm.phase = state;
            return o;
        }
        let level = if in_port == NONE { 0 } else { level.saturating_add(1) };
        let out_vc = self.vc_of(vc_class, level);
        let o = if self.adaptive {
            let c = self.routing.candidate_range(node, phase, dst);
            let mut best = self.routing.candidate(c, 0);
            let mut best_score = i64::MIN;
            for k in 0..c.len {
                let o = self.routing.candidate(c, k);
                let i = o as usize * self.nvc + out_vc as usize;
                let score = self.credit(q, i) as i64
                    - 64 * self.queue_len(i) as i64
                    - if self.tx_is_busy(q, o) { 1 } else { 0 };
                if score > best_score {
                    best = o;
                    best_score = score;
                }
            }
            best
        } else {
            self.routing.next_hop(p.flow, p.group, node, phase, dst)
        };
        let phase = self.routing.phase_after(o, phase);
        let pm = self.packets.get_mut(pid);
        pm.level = level;
        pm.out_vc = out_vc;
        pm.phase = phase;
        o
    }

    /// Packets in output queue `idx` (adaptive routing's score; walks the list).
    fn queue_len(&self, idx: usize) -> usize {
        let mut n = 0;
        let mut p = self.vcs[idx].head;
        while p != NONE {
            n += 1;
            p = self.packets.get(p).next;
        }
        n
    }

    #[inline]
    fn enqueue<E: From<FabricEvent> + Copy>(&mut self, q: &mut EventQueue<E>, o: PortId, pid: PacketId) {
        let now = q.now();
        let p = self.packets.get_mut(pid);
        p.since = now;
        p.next = NONE;
        let vc = p.out_vc as usize;
        let v = &mut self.vcs[o as usize * self.nvc + vc];
        let tail = v.tail;
        v.tail = pid;
        if tail == NONE {
            v.head = pid;
        } else {
            self.packets.get_mut(tail).next = pid;
        }
        self.ports[o as usize].nonempty |= 1 << vc;
        self.try_send(q, o);
    }

    #[inline]
    fn try_send<E: From<FabricEvent> + Copy>(&mut self, q: &mut EventQueue<E>, p: PortId) {
        let pu = p as usize;
        let op = &self.ports[pu];
        if op.nonempty == 0 {
            return;
        }
        let half = op.half;
        let lock = if half { pu & !1 } else { pu };
        if half {
            // The link's TxDone tries both directions.
            if self.tx_busy[lock] {
                return;
            }
        } else if op.busy_until > q.current() {
            let t = op.busy_until;
            self.wake(q, p, t);
            return;
        }
        let nvc = self.nvc;
        let start = op.rr as u32;
        // Round-robin: VCs from `start` up, then those below it (bits above
        // the last VC are clear, so a rotation gives that order).
        let mut m = op.nonempty.rotate_right(start);
        let mut retry = u128::MAX;
        while m != 0 {
            let vc = ((m.trailing_zeros() + start) & 63) as usize;
            m &= m - 1;
            let idx = pu * nvc + vc;
            let pid = self.vcs[idx].head;
            debug_assert!(pid != NONE, "nonempty bit set");
            let cost = Self::cost(&self.packets.get(pid).hdr);
            // Enough credit without what is on its way back needs no
            // look at the pending list.
            if self.vcs[idx].credits < cost && self.credit(q, idx) < cost {
                retry = retry.min(self.vcs[idx].pending_min);
                continue;
            }
            let next = self.packets.get(pid).next;
            let v = &mut self.vcs[idx];
            v.head = next;
            v.credits -= cost;
            let op = &mut self.ports[pu];
            if next == NONE {
                v.tail = NONE;
                op.nonempty &= !(1 << vc);
            }
            op.rr = if vc + 1 == nvc { 0 } else { vc as u16 + 1 };
            self.set_blocked(pu, false);
            self.transmit(q, p, lock, pid);
            return;
        }
        // Every head waits for credit: wake when the first returns (or,
        // if none is on its way yet, when one is sent back).
        self.set_blocked(pu, true);
        if retry != u128::MAX {
            self.wake(q, p, retry);
        }
    }

    #[inline]
    fn transmit<E: From<FabricEvent> + Copy>(&mut self, q: &mut EventQueue<E>, p: PortId, lock: usize, pid: PacketId) {
        let now = q.now();
        let pu = p as usize;
        let link = pu / 2;
        let mut start = now;
        let (bytes, payload) = {
            let h = &self.packets.get(pid).hdr;
            (h.bytes, h.payload)
        };
        let ser = self.serialize(pu, bytes);
        let payload_ser = self.serialize(pu, payload);
        let half = self.ports[pu].half;
        let st = &mut self.stats[pu];
        if half {
            let side = (pu & 1) as u8;
            if self.link_last[link] != side && self.link_last[link] != 2 {
                start += self.link_turnaround[link];
                st.turnaround_ps += self.link_turnaround[link];
            }
            self.link_last[link] = side;
        }
        let end = start + ser;
        if half {
            self.tx_busy[lock] = true;
            q.schedule(end, FabricEvent::TxDone { port: p }.into());
        } else {
            // The end-of-serialization event's place in the tie order.
            self.ports[pu].busy_until = EventQueue::<E>::key(end, q.reserve());
        }

        let pkt = self.packets.get_mut(pid);
        let waited = now - pkt.since;
        pkt.wait += waited;
        st.wait_ps += waited;
        st.packets += 1;
        st.bytes += bytes as u64;
        st.payload_bytes += payload as u64;
        st.busy_ps += end - now;
        st.payload_ps += payload_ser;

        let (in_port, in_vc) = (pkt.in_port, pkt.vc);
        let cost = bytes.max(1);
        pkt.vc = pkt.out_vc;
        let op = &self.ports[pu];
        if op.cross != NO_CROSS {
            // Nothing happens to the packet between arriving and crossing
            // the switch: one event, when it has crossed.
            pkt.in_port = p ^ 1;
            q.schedule(end + op.cross, FabricEvent::Crossed { pkt: pid }.into());
        } else {
            q.schedule(end + op.prop, FabricEvent::Arrive { port: p ^ 1, pkt: pid }.into());
        }

        if in_port != NONE {
            // Leaving a switch input buffer: its space returns upstream.
            let at = end + self.link_prop[(in_port / 2) as usize];
            let key = EventQueue::<E>::key(at, q.reserve());
            self.return_credit(q, in_port ^ 1, in_vc, cost, key);
            if !self.voq {
                // Input FIFO: expose the next head.
                let idx = in_port as usize * self.nvc + in_vc as usize;
                let head = self.in_q[idx].pop_front();
                debug_assert_eq!(head, Some(pid));
                if let Some(&next) = self.in_q[idx].front() {
                    let ready = self.packets.get(next).since.max(now);
                    q.schedule(ready, FabricEvent::HeadReady { port: in_port, vc: in_vc }.into());
                }
            }
        }
        let op = &self.ports[pu];
        if !half && op.nonempty != 0 {
            // More is queued: try again when the transmitter is free.
            let t = op.busy_until;
            self.wake(q, p, t);
        }
    }
}
