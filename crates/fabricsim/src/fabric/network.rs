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

use std::collections::VecDeque;

use super::packet::{Packet, PacketHeader, PacketId, Slab};
use super::routing::RoutingTable;
use super::topology::{NodeId, PortId, Topology};
use crate::config::schema::{Duplex, RoutingAlgorithm, SwitchQueueing};
use crate::config::units::Bandwidth;
use crate::engine::{EventQueue, Time};

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FabricEvent {
    /// The output port (or half-duplex link) finished serializing a packet.
    TxDone { port: PortId },
    /// A packet is whole at receiving port `port`.
    Arrive { port: PortId, pkt: PacketId },
    /// The head of input buffer (`port`, `vc`) has crossed the switch (input FIFOs).
    HeadReady { port: PortId, vc: u16 },
    /// Packet `pkt` has crossed the switch (virtual output queues).
    Crossed { pkt: PacketId },
    /// Buffer space returns to output port `port`.
    Credit { port: PortId, vc: u16, bytes: u32 },
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

pub struct Fabric<M> {
    pub topo: Topology,
    pub routing: RoutingTable,
    nvc: usize,
    levels: u8,
    voq: bool,
    packets: Slab<Packet<M>>,
    port_node: Vec<NodeId>,
    node_is_switch: Vec<bool>,
    node_latency: Vec<Time>,
    link_bw: Vec<Bandwidth>,
    link_prop: Vec<Time>,
    link_half: Vec<bool>,
    link_turnaround: Vec<Time>,
    /// Direction last used on a half-duplex link (2: never used).
    link_last: Vec<u8>,
    /// Transmitter busy, per port (full duplex) or per link's even port (half).
    tx_busy: Vec<bool>,
    rr: Vec<u16>,
    nonempty: Vec<u64>,
    out_q: Vec<VecDeque<PacketId>>,
    credits: Vec<u32>,
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
    /// that covers each link's credit round trip for `max_packet`.
    pub fn new(
        topo: Topology,
        routing: RoutingTable,
        queueing: SwitchQueueing,
        vc_classes: usize,
        buffer: Option<u32>,
        max_packet: u32,
    ) -> Self {
        let levels = routing.levels;
        let nvc = vc_classes * levels as usize;
        assert!(nvc <= 64, "at most 64 virtual channels per port");
        let np = topo.n_ports();
        let nl = topo.links.len();
        let port_node: Vec<NodeId> = (0..np as PortId).map(|p| topo.port_node(p)).collect();
        let node_is_switch: Vec<bool> = topo.nodes.iter().map(|n| n.kind.is_switch()).collect();
        let node_latency: Vec<Time> = topo.nodes.iter().map(|n| n.latency).collect();
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
        let mut credits = vec![0u32; np * nvc];
        for p in 0..np {
            for v in 0..nvc {
                credits[p * nvc + v] = buffer_bytes[p];
            }
        }
        Self {
            link_bw: topo.links.iter().map(|l| l.bandwidth).collect(),
            link_prop: topo.links.iter().map(|l| l.propagation()).collect(),
            link_half: topo.links.iter().map(|l| l.duplex == Duplex::Half).collect(),
            link_turnaround: topo.links.iter().map(|l| l.turnaround).collect(),
            link_last: vec![2; nl],
            tx_busy: vec![false; np],
            rr: vec![0; np],
            nonempty: vec![0; np],
            out_q: (0..np * nvc).map(|_| VecDeque::new()).collect(),
            credits,
            in_q: (0..np * nvc).map(|_| VecDeque::new()).collect(),
            stats: vec![LinkStats::default(); np],
            class_packets: vec![0; 256],
            class_bytes: vec![0; 256],
            buffer_bytes,
            packets: Slab::with_capacity(1024),
            port_node,
            node_is_switch,
            node_latency,
            nvc,
            levels,
            voq: queueing == SwitchQueueing::Voq,
            topo,
            routing,
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
        &self.packets.get(pkt).msg
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
    pub fn inject<E: From<FabricEvent>>(
        &mut self,
        q: &mut EventQueue<E>,
        node: NodeId,
        hdr: PacketHeader,
        msg: M,
    ) -> PacketId {
        debug_assert_eq!(hdr.src, node);
        self.class_packets[hdr.class as usize] += 1;
        self.class_bytes[hdr.class as usize] += hdr.bytes as u64;
        let now = q.now();
        let pid = self.packets.insert(Packet {
            hdr,
            msg,
            vc: 0,
            out_vc: 0,
            level: 0,
            phase: 0,
            in_port: NONE,
            ready: now,
            enqueued: now,
            wait: 0,
            hops: 0,
        });
        let o = self.route(node, pid);
        self.enqueue(q, o, pid);
        pid
    }

    /// An endpoint's agent takes a delivered packet; its buffer space
    /// returns upstream. Returns the header, the message and the time the
    /// packet spent waiting in queues on its way.
    pub fn consume<E: From<FabricEvent>>(&mut self, q: &mut EventQueue<E>, pkt: PacketId) -> (PacketHeader, M, Time) {
        let p = self.packets.remove(pkt);
        let r = p.in_port;
        q.schedule(
            q.now() + self.link_prop[(r / 2) as usize],
            FabricEvent::Credit { port: r ^ 1, vc: p.vc, bytes: Self::cost(&p.hdr) }.into(),
        );
        (p.hdr, p.msg, p.wait)
    }

    /// Handle one fabric event. Returns a packet delivered to an endpoint
    /// (node, packet), which the caller hands to that endpoint's agent.
    #[inline]
    pub fn handle<E: From<FabricEvent>>(
        &mut self,
        q: &mut EventQueue<E>,
        ev: FabricEvent,
    ) -> Option<(NodeId, PacketId)> {
        match ev {
            FabricEvent::TxDone { port } => {
                let link = (port / 2) as usize;
                if self.link_half[link] {
                    self.tx_busy[port as usize & !1] = false;
                    self.try_send(q, port ^ 1);
                    self.try_send(q, port);
                } else {
                    self.tx_busy[port as usize] = false;
                    self.try_send(q, port);
                }
                None
            }
            FabricEvent::Arrive { port, pkt } => {
                let node = self.port_node[port as usize];
                let p = self.packets.get_mut(pkt);
                p.in_port = port;
                if self.node_is_switch[node as usize] {
                    let ready = q.now() + self.node_latency[node as usize];
                    p.ready = ready;
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
            FabricEvent::HeadReady { port, vc } => {
                let pkt = *self.in_q[port as usize * self.nvc + vc as usize]
                    .front()
                    .expect("head-ready event for an empty buffer");
                let node = self.port_node[port as usize];
                let o = self.route(node, pkt);
                self.enqueue(q, o, pkt);
                None
            }
            FabricEvent::Crossed { pkt } => {
                let node = self.port_node[self.packets.get(pkt).in_port as usize];
                let o = self.route(node, pkt);
                self.enqueue(q, o, pkt);
                None
            }
            FabricEvent::Credit { port, vc, bytes } => {
                self.credits[port as usize * self.nvc + vc as usize] += bytes;
                self.try_send(q, port);
                None
            }
        }
    }

    /// Choose the output port at `node` and set the packet's next VC.
    #[inline]
    fn route(&mut self, node: NodeId, pid: PacketId) -> PortId {
        let p = self.packets.get(pid);
        let (in_port, level, phase, src, dst, vc_class) =
            (p.in_port, p.level, p.phase, p.hdr.src, p.hdr.dst, p.hdr.vc_class);
        let level = if in_port == NONE { 0 } else { level.saturating_add(1) };
        let out_vc = self.vc_of(vc_class, level);
        let o = match self.routing.algorithm {
            RoutingAlgorithm::Adaptive => {
                let c = self.routing.candidates(node, phase, dst);
                let mut best = c[0];
                let mut best_score = i64::MIN;
                for &o in c {
                    let i = o as usize * self.nvc + out_vc as usize;
                    let score = self.credits[i] as i64
                        - 64 * self.out_q[i].len() as i64
                        - if self.tx_busy[o as usize] { 1 } else { 0 };
                    if score > best_score {
                        best = o;
                        best_score = score;
                    }
                }
                best
            }
            _ => self.routing.oblivious(src, node, phase, dst),
        };
        let phase = self.routing.phase_after(o, phase);
        let pm = self.packets.get_mut(pid);
        pm.level = level;
        pm.out_vc = out_vc;
        pm.phase = phase;
        o
    }

    #[inline]
    fn enqueue<E: From<FabricEvent>>(&mut self, q: &mut EventQueue<E>, o: PortId, pid: PacketId) {
        let now = q.now();
        let p = self.packets.get_mut(pid);
        p.enqueued = now;
        let vc = p.out_vc as usize;
        self.out_q[o as usize * self.nvc + vc].push_back(pid);
        self.nonempty[o as usize] |= 1 << vc;
        self.try_send(q, o);
    }

    #[inline]
    fn try_send<E: From<FabricEvent>>(&mut self, q: &mut EventQueue<E>, p: PortId) {
        let pu = p as usize;
        let link = pu / 2;
        let lock = if self.link_half[link] { pu & !1 } else { pu };
        if self.tx_busy[lock] || self.nonempty[pu] == 0 {
            return;
        }
        let nvc = self.nvc;
        let start = self.rr[pu] as u32;
        let mask = self.nonempty[pu];
        // Round-robin: VCs from `start` up, then those below it.
        let high = mask & (u64::MAX << start);
        let low = mask & !(u64::MAX << start);
        for mut m in [high, low] {
            while m != 0 {
                let vc = m.trailing_zeros() as usize;
                m &= m - 1;
                let idx = pu * nvc + vc;
                let pid = *self.out_q[idx].front().expect("nonempty bit set");
                let cost = Self::cost(&self.packets.get(pid).hdr);
                if self.credits[idx] < cost {
                    continue;
                }
                self.out_q[idx].pop_front();
                if self.out_q[idx].is_empty() {
                    self.nonempty[pu] &= !(1 << vc);
                }
                self.credits[idx] -= cost;
                self.rr[pu] = ((vc + 1) % nvc) as u16;
                self.transmit(q, p, lock, pid);
                return;
            }
        }
    }

    #[inline]
    fn transmit<E: From<FabricEvent>>(&mut self, q: &mut EventQueue<E>, p: PortId, lock: usize, pid: PacketId) {
        let now = q.now();
        let pu = p as usize;
        let link = pu / 2;
        let mut start = now;
        let st = &mut self.stats[pu];
        if self.link_half[link] {
            let side = (pu & 1) as u8;
            if self.link_last[link] != side && self.link_last[link] != 2 {
                start += self.link_turnaround[link];
                st.turnaround_ps += self.link_turnaround[link];
            }
            self.link_last[link] = side;
        }
        let pkt = self.packets.get_mut(pid);
        let bw = self.link_bw[link];
        let end = start + bw.serialize(pkt.hdr.bytes as u64);
        self.tx_busy[lock] = true;
        q.schedule(end, FabricEvent::TxDone { port: p }.into());

        let waited = now - pkt.enqueued;
        pkt.wait += waited;
        st.wait_ps += waited;
        st.packets += 1;
        st.bytes += pkt.hdr.bytes as u64;
        st.payload_bytes += pkt.hdr.payload as u64;
        st.busy_ps += end - now;
        st.payload_ps += bw.serialize(pkt.hdr.payload as u64);

        let (in_port, in_vc) = (pkt.in_port, pkt.vc);
        let cost = Self::cost(&pkt.hdr);
        pkt.vc = pkt.out_vc;
        pkt.hops += 1;
        q.schedule(end + self.link_prop[link], FabricEvent::Arrive { port: p ^ 1, pkt: pid }.into());

        if in_port != NONE {
            // Leaving a switch input buffer: its space returns upstream.
            q.schedule(
                end + self.link_prop[(in_port / 2) as usize],
                FabricEvent::Credit { port: in_port ^ 1, vc: in_vc, bytes: cost }.into(),
            );
            if !self.voq {
                // Input FIFO: expose the next head.
                let idx = in_port as usize * self.nvc + in_vc as usize;
                let head = self.in_q[idx].pop_front();
                debug_assert_eq!(head, Some(pid));
                if let Some(&next) = self.in_q[idx].front() {
                    let ready = self.packets.get(next).ready.max(now);
                    q.schedule(ready, FabricEvent::HeadReady { port: in_port, vc: in_vc }.into());
                }
            }
        }
    }
}
