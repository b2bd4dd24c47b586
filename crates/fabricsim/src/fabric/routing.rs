//! Port-based routing (PBR) tables, filled from the topology.
//!
//! A table answers ESF's question: for a packet from `source` that entered
//! this switch on `ingress` and goes to `destination`, which egress port?
//! The answer set depends on the node, the destination and the `phase`
//! (whether an up*/down* route has already turned down: the only thing the
//! ingress port changes), and the source picks among equal-cost candidates.
//! How oblivious routing picks is `[fabric] spread`: a hash of (source,
//! destination, node) like ECMP, destination-mod-k (the static routing of
//! fat trees), or always the first candidate (one shortest-path tree).
//!
//! Size: destinations attached to the same neighbours (every endpoint of
//! one leaf switch, say) are one *destination group*: every switch sees them
//! at the same distance over the same next hops, except on the last hop,
//! which is looked up per destination among the ports that lead to it. So
//! the tables hold distances and candidate lists per (switch, group), not
//! per (node, destination): a spine-leaf fabric with 4096 edge ports on 128
//! leaves keeps 128 groups. Dimension-order routing (`dor`, meshes and
//! tori) keeps no table at all; its next hop is computed from coordinates.
//!
//! Deadlock freedom is checked, not assumed: the channel dependency graph
//! (Dally and Seitz) of every route the traffic can take is built and
//! tested for a cycle. If it has one, packets climb one virtual channel per
//! hop ("hop-indexed" VCs), which makes the graph acyclic for any minimal
//! routing (Günther 1981, Gopal 1985). Dimension-order routing on a torus
//! uses two VCs per dimension instead, switching at the dateline (the
//! wrap-around link), which makes each ring acyclic (Dally and Seitz 1987).
//! Channels into endpoints and out of them cannot lie on a cycle (endpoints
//! do not forward), so the graph holds only switch-to-switch channels.

use std::collections::{HashMap, VecDeque};

use super::topology::{Grid, NodeId, PortId, Topology};
use crate::engine::rng::mix;
use crate::fabric::kinds::{DeadlockAvoidance, RoutingAlgorithm, Spread};

const UNREACHABLE: u32 = u32::MAX;

/// SplitMix64's finaliser, as in `engine::rng::mix`.
#[inline]
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
const NONE: u32 = u32::MAX;

/// Dimension-order routing on a generated mesh or torus.
struct Dor {
    grid: Grid,
    /// Per switch: ports towards +x (east), -x, +y (south), -y; NONE where absent.
    dirs: Vec<[PortId; 4]>,
    /// Per port: whether its link is a wrap-around link (torus).
    wrap: Vec<bool>,
    /// Two VCs per dimension, switched at the dateline.
    dateline: bool,
    /// Per port: 1 for an X link, 2 for a Y link, 0 otherwise.
    dim: Vec<u8>,
    /// Per node: the switch it hangs off (itself for a switch).
    home: Vec<NodeId>,
}

pub struct RoutingTable {
    pub algorithm: RoutingAlgorithm,
    /// The oblivious choice among equal-cost candidates.
    pub spread: Spread,
    /// Per node: its dense index among endpoints (node order), for
    /// destination-mod-k; `u32::MAX` for switches.
    endpoint_index: Vec<u32>,
    is_switch: Vec<bool>,
    /// Per node: its switch index (NONE for endpoints).
    sw_index: Vec<u32>,
    n_sw: usize,
    /// Per node: its row in `index` (switches and endpoints with more than
    /// one port; NONE for others).
    row: Vec<u32>,
    n_rows: usize,
    /// Phases stored: 2 for up*/down*, else 1 (both phases route alike).
    phases: usize,
    /// Per endpoint: its destination group (NONE for switches).
    group: Vec<u32>,
    n_groups: usize,
    /// Per (group, switch, phase): hops to the group's endpoints.
    dist: Vec<u32>,
    /// Per (group, row, phase): (start, len) into `ports` of the next hops
    /// where the group is two or more hops away (len 0 elsewhere).
    index: Vec<(u32, u32)>,
    ports: Vec<PortId>,
    /// Per node: (start, len) into `by_peer`, its ports sorted by (peer, port).
    node_ports: Vec<(u32, u32)>,
    by_peer: Vec<(NodeId, PortId)>,
    /// Per port: the node at its other end.
    peer: Vec<NodeId>,
    /// Per port: the node it belongs to.
    port_node: Vec<NodeId>,
    /// Per node: its only port if it is an endpoint with one port (NONE
    /// otherwise): a fast path for the first and the last hop.
    only_port: Vec<PortId>,
    /// Up*/down*: whether moving from a port's node across it goes down.
    down: Vec<bool>,
    dor: Option<Dor>,
    /// Virtual-channel levels per message class (1 without hop-indexed or
    /// dateline VCs).
    pub levels: u8,
    /// Whether the channel dependency graph of the routes used is acyclic.
    pub cdg_acyclic: bool,
    pub max_hops: u32,
}

/// What building the tables of a topology costs: bytes held and steps taken.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Estimate {
    pub bytes: u64,
    pub steps: u64,
}

/// The sizes an estimate needs, from a topology or a generator's formula.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shape {
    pub switches: u64,
    /// Ports of switches (switch-to-switch links count two, endpoint links one).
    pub switch_ports: u64,
    /// Sum over switches of (ports to other switches) squared.
    pub switch_degree_sq: u64,
    /// Destination groups (distinct sets of neighbours of the endpoints).
    pub groups: u64,
    /// Endpoints with more than one port.
    pub multi_port_endpoints: u64,
    /// Diameter bound, for the route walks of the deadlock check.
    pub hops: u64,
}

impl RoutingTable {
    /// Bytes and steps of `build` for a topology of `shape` with `flows`
    /// (source, destination) pairs. Validation refuses a system whose
    /// estimate exceeds the memory budget or the step limit.
    pub fn estimate(algorithm: RoutingAlgorithm, shape: &Shape, flows: u64) -> Estimate {
        let phases = if algorithm == RoutingAlgorithm::Updown { 2 } else { 1 };
        let s = shape;
        let cdg_bytes = s.switch_degree_sq.saturating_mul(if algorithm == RoutingAlgorithm::Dor { 4 } else { 1 }) / 8;
        let walks = flows.saturating_mul(s.hops.max(1));
        if algorithm == RoutingAlgorithm::Dor {
            return Estimate { bytes: cdg_bytes, steps: walks };
        }
        let g = s.groups.saturating_mul(phases);
        let dist = g.saturating_mul(s.switches).saturating_mul(4);
        let index = g.saturating_mul(s.switches + s.multi_port_endpoints).saturating_mul(8);
        let ports = g.saturating_mul(s.switch_ports).saturating_mul(4);
        let bfs = g.saturating_mul(s.switch_ports + s.switches).saturating_mul(2);
        let cdg = if algorithm == RoutingAlgorithm::Adaptive {
            g.saturating_mul(s.switch_degree_sq + s.switch_ports)
        } else {
            walks
        };
        Estimate {
            bytes: dist.saturating_add(index).saturating_add(ports).saturating_add(cdg_bytes),
            steps: bfs.saturating_add(cdg),
        }
    }

    /// The sizes of `topo` for `estimate`.
    pub fn shape_of(topo: &Topology) -> Shape {
        let mut sh = Shape::default();
        let mut groups: HashMap<Vec<(NodeId, bool)>, ()> = HashMap::new();
        for node in &topo.nodes {
            if node.kind.is_switch() {
                sh.switches += 1;
                sh.switch_ports += node.ports.len() as u64;
                let d = node.ports.iter().filter(|&&p| topo.nodes[topo.peer(p) as usize].kind.is_switch()).count();
                sh.switch_degree_sq += (d * d) as u64;
            } else {
                if node.ports.len() > 1 {
                    sh.multi_port_endpoints += 1;
                }
                let mut key: Vec<(NodeId, bool)> = node.ports.iter().map(|&p| (topo.peer(p), false)).collect();
                key.sort_unstable();
                key.dedup();
                groups.insert(key, ());
            }
        }
        sh.groups = groups.len() as u64;
        sh.hops = (sh.switches + 2).min(64);
        sh
    }

    /// Build tables for every endpoint destination. `flows` are the
    /// (source, destination) pairs traffic uses, grouped by message class;
    /// they decide which dependencies the deadlock check sees.
    pub fn build(
        topo: &Topology,
        algorithm: RoutingAlgorithm,
        spread: Spread,
        avoidance: DeadlockAvoidance,
        flows: &[Vec<(NodeId, NodeId)>],
    ) -> Self {
        let n = topo.nodes.len();
        let np = topo.n_ports();
        let mut endpoints = 0u32;
        let endpoint_index: Vec<u32> = topo
            .nodes
            .iter()
            .map(|node| {
                if node.kind.is_switch() {
                    u32::MAX
                } else {
                    endpoints += 1;
                    endpoints - 1
                }
            })
            .collect();
        let is_switch: Vec<bool> = topo.nodes.iter().map(|x| x.kind.is_switch()).collect();
        let mut sw_index = vec![NONE; n];
        let mut row = vec![NONE; n];
        let (mut n_sw, mut n_rows) = (0usize, 0usize);
        for (i, node) in topo.nodes.iter().enumerate() {
            if is_switch[i] {
                sw_index[i] = n_sw as u32;
                n_sw += 1;
            }
            if is_switch[i] || node.ports.len() > 1 {
                row[i] = n_rows as u32;
                n_rows += 1;
            }
        }
        let port_node: Vec<NodeId> = (0..np as PortId).map(|p| topo.port_node(p)).collect();
        let peer: Vec<NodeId> = (0..np as PortId).map(|p| port_node[(p ^ 1) as usize]).collect();
        let mut node_ports = Vec::with_capacity(n);
        let mut by_peer = Vec::with_capacity(np);
        for node in &topo.nodes {
            let start = by_peer.len() as u32;
            let mut v: Vec<(NodeId, PortId)> = node.ports.iter().map(|&p| (peer[p as usize], p)).collect();
            v.sort_unstable();
            by_peer.extend(v);
            node_ports.push((start, node.ports.len() as u32));
        }
        let only_port: Vec<PortId> = topo
            .nodes
            .iter()
            .enumerate()
            .map(|(i, x)| if !is_switch[i] && x.ports.len() == 1 { x.ports[0] } else { NONE })
            .collect();
        let phases = if algorithm == RoutingAlgorithm::Updown { 2 } else { 1 };
        let down = if algorithm == RoutingAlgorithm::Updown { updown_directions(topo) } else { vec![true; np] };

        // Destination groups: endpoints with the same neighbours, reached
        // over links of the same direction (up*/down*).
        let mut group = vec![NONE; n];
        let mut keys: Vec<Vec<(NodeId, bool)>> = Vec::new();
        let mut key_of: HashMap<Vec<(NodeId, bool)>, u32> = HashMap::new();
        for (e, node) in topo.nodes.iter().enumerate() {
            if is_switch[e] {
                continue;
            }
            let mut key: Vec<(NodeId, bool)> =
                node.ports.iter().map(|&p| (peer[p as usize], down[(p ^ 1) as usize])).collect();
            key.sort_unstable();
            key.dedup();
            let next = keys.len() as u32;
            let g = *key_of.entry(key.clone()).or_insert_with(|| {
                keys.push(key);
                next
            });
            group[e] = g;
        }
        let n_groups = keys.len();

        let dor = if algorithm == RoutingAlgorithm::Dor {
            let grid = topo.grid.expect("dimension-order routing needs a generated mesh or torus");
            Some(Dor::new(topo, grid, &peer, &port_node, avoidance != DeadlockAvoidance::None))
        } else {
            None
        };

        let mut t = RoutingTable {
            algorithm,
            spread,
            endpoint_index,
            is_switch,
            sw_index,
            n_sw,
            row,
            n_rows,
            phases,
            group,
            n_groups,
            dist: Vec::new(),
            index: Vec::new(),
            ports: Vec::new(),
            node_ports,
            by_peer,
            peer,
            port_node,
            only_port,
            down,
            dor,
            levels: 1,
            cdg_acyclic: true,
            max_hops: 0,
        };
        if t.dor.is_none() {
            t.fill(topo, &keys);
        }
        let (acyclic, max_hops) = t.check_dependencies(topo, flows);
        t.cdg_acyclic = acyclic;
        t.max_hops = max_hops;
        if let Some(d) = &t.dor {
            // Dateline VCs, not hop-indexed ones.
            t.levels = if d.dateline { 2 } else { 1 };
            return t;
        }
        let use_hop_vcs = match avoidance {
            DeadlockAvoidance::Auto => !acyclic,
            DeadlockAvoidance::HopVcs => true,
            DeadlockAvoidance::None => false,
        };
        if use_hop_vcs {
            t.levels = max_hops.clamp(1, 32) as u8;
        }
        t
    }

    /// Distances per (group, switch, phase) by breadth-first search from
    /// each group's neighbours, then the candidate lists per (group, row, phase).
    fn fill(&mut self, topo: &Topology, keys: &[Vec<(NodeId, bool)>]) {
        let (n_sw, ph_n) = (self.n_sw, self.phases);
        let mut dist = vec![UNREACHABLE; self.n_groups * n_sw * ph_n];
        let mut q: VecDeque<(NodeId, usize)> = VecDeque::new();
        for (g, key) in keys.iter().enumerate() {
            let d = &mut dist[g * n_sw * ph_n..(g + 1) * n_sw * ph_n];
            for &(v, is_down) in key {
                if !self.is_switch[v as usize] {
                    continue;
                }
                let sv = self.sw_index[v as usize] as usize;
                for ph in 0..ph_n {
                    // The last hop: down is always legal, up only before turning down.
                    if (ph_n == 1 || is_down || ph == 0) && d[sv * ph_n + ph] == UNREACHABLE {
                        d[sv * ph_n + ph] = 1;
                        q.push_back((v, ph));
                    }
                }
            }
            while let Some((w, ph2)) = q.pop_front() {
                let dw = d[self.sw_index[w as usize] as usize * ph_n + ph2];
                for &pw in &topo.nodes[w as usize].ports {
                    // The port at v whose packets arrive at w through this link.
                    let pv = pw ^ 1;
                    let v = self.port_node[pv as usize];
                    if !self.is_switch[v as usize] {
                        continue;
                    }
                    let sv = self.sw_index[v as usize] as usize;
                    for ph in 0..ph_n {
                        if self.next_phase(pv, ph) == Some(ph2) && d[sv * ph_n + ph] == UNREACHABLE {
                            d[sv * ph_n + ph] = dw + 1;
                            q.push_back((v, ph));
                        }
                    }
                }
            }
        }
        self.dist = dist;
        let mut index = vec![(0u32, 0u32); self.n_groups * self.n_rows * ph_n];
        let mut ports = Vec::new();
        for g in 0..self.n_groups {
            for (x, node) in topo.nodes.iter().enumerate() {
                let r = self.row[x];
                if r == NONE {
                    continue;
                }
                for ph in 0..ph_n {
                    let d = self.group_distance(x as NodeId, ph, g);
                    if d == UNREACHABLE || d < 2 {
                        continue;
                    }
                    let start = ports.len() as u32;
                    for &p in &node.ports {
                        let w = self.peer[p as usize];
                        if !self.is_switch[w as usize] {
                            continue;
                        }
                        let Some(ph2) = self.next_phase(p, ph) else { continue };
                        if self.dist[(g * n_sw + self.sw_index[w as usize] as usize) * ph_n + ph2] == d - 1 {
                            ports.push(p);
                        }
                    }
                    index[(g * self.n_rows + r as usize) * ph_n + ph] = (start, ports.len() as u32 - start);
                }
            }
        }
        self.index = index;
        self.ports = ports;
    }

    /// Hops from `x` (a switch, or an endpoint through its switches) to
    /// the endpoints of group `g`, not counting a direct link to them.
    fn group_distance(&self, x: NodeId, ph: usize, g: usize) -> u32 {
        let ph_n = self.phases;
        if self.is_switch[x as usize] {
            return self.dist[(g * self.n_sw + self.sw_index[x as usize] as usize) * ph_n + ph.min(ph_n - 1)];
        }
        let (s, l) = self.node_ports[x as usize];
        let mut best = UNREACHABLE;
        for &(w, p) in &self.by_peer[s as usize..(s + l) as usize] {
            if !self.is_switch[w as usize] {
                continue;
            }
            let Some(ph2) = self.next_phase(p, ph.min(ph_n - 1)) else { continue };
            let d = self.dist[(g * self.n_sw + self.sw_index[w as usize] as usize) * ph_n + ph2];
            if d != UNREACHABLE {
                best = best.min(d + 1);
            }
        }
        best
    }

    /// The ports of `x` whose link leads straight to `y`, in port order.
    #[inline]
    fn to_peer(&self, x: NodeId, y: NodeId) -> &[(NodeId, PortId)] {
        let (s, l) = self.node_ports[x as usize];
        let seg = &self.by_peer[s as usize..(s + l) as usize];
        let lo = seg.partition_point(|&(w, _)| w < y);
        let hi = lo + seg[lo..].partition_point(|&(w, _)| w == y);
        &seg[lo..hi]
    }

    /// Hops from `node` (in `phase`) to `dst`, or None if unreachable.
    pub fn distance(&self, node: NodeId, phase: u8, dst: NodeId) -> Option<u32> {
        if node == dst {
            return Some(0);
        }
        if let Some(d) = &self.dor {
            return Some(d.distance(self, node, dst));
        }
        let ph = phase as usize;
        let direct = self.to_peer(node, dst);
        if let Some(&(_, p)) = direct.first() {
            if self.next_phase(p, ph.min(self.phases - 1)).is_some() {
                return Some(1);
            }
        }
        let d = self.group_distance(node, ph, self.group[dst as usize] as usize);
        (d != UNREACHABLE).then_some(d)
    }

    /// Equal-cost egress ports at `node` towards `dst`, as a range for
    /// `candidate` (so a caller may read them while changing other state).
    #[inline]
    pub fn candidate_range(&self, node: NodeId, phase: u8, dst: NodeId) -> Candidates {
        let r = self.row[node as usize];
        if r != NONE {
            let g = self.group[dst as usize] as usize;
            let ph = (phase as usize).min(self.phases - 1);
            let (s, l) = self.index[(g * self.n_rows + r as usize) * self.phases + ph];
            if l > 0 {
                return Candidates { table: true, start: s, len: l };
            }
        }
        // The last hop (or an endpoint's only port).
        let direct = self.to_peer(node, dst);
        let (s, _) = self.node_ports[node as usize];
        if let Some(&(_, p)) = direct.first() {
            if self.next_phase(p, (phase as usize).min(self.phases - 1)).is_some() {
                let off = direct.as_ptr() as usize - self.by_peer.as_ptr() as usize;
                let start = (off / std::mem::size_of::<(NodeId, PortId)>()) as u32;
                return Candidates { table: false, start, len: direct.len() as u32 };
            }
        }
        if r == NONE {
            // A one-port endpoint: its port, if the destination is reachable.
            let reachable = self.group_distance(node, phase as usize, self.group[dst as usize] as usize) != UNREACHABLE;
            return Candidates { table: false, start: s, len: reachable as u32 };
        }
        Candidates { table: true, start: 0, len: 0 }
    }

    /// The `k`-th port of a candidate range.
    #[inline]
    pub fn candidate(&self, c: Candidates, k: u32) -> PortId {
        if c.table {
            self.ports[(c.start + k) as usize]
        } else {
            self.by_peer[(c.start + k) as usize].1
        }
    }

    /// Equal-cost egress ports at `node` towards `dst` (a copy; for tests
    /// and the deadlock check, not the hot path).
    pub fn candidates(&self, node: NodeId, phase: u8, dst: NodeId) -> Vec<PortId> {
        if let Some(d) = &self.dor {
            return if node == dst { vec![] } else { vec![d.next(self, node, dst)] };
        }
        let c = self.candidate_range(node, phase, dst);
        (0..c.len).map(|k| self.candidate(c, k)).collect()
    }

    /// The oblivious choice: fixed per (source, destination) at each node,
    /// spread over equal-cost paths as `[fabric] spread` says.
    #[inline]
    pub fn oblivious(&self, src: NodeId, node: NodeId, phase: u8, dst: NodeId) -> PortId {
        if let Some(d) = &self.dor {
            return d.next(self, node, dst);
        }
        // Fast paths, the same answers as the general one: a one-port
        // endpoint sends through its port (the destination being
        // reachable, as validation ensured); a switch attached to a
        // one-port destination by a legal link sends over that link (the
        // destination's group is then one hop away and has no table entry).
        let own = self.only_port[node as usize];
        if own != NONE {
            return own;
        }
        if let Some(p) = self.last_hop(node, phase, dst) {
            return p;
        }
        let c = self.candidate_range(node, phase, dst);
        if c.len == 1 {
            return self.candidate(c, 0);
        }
        let k = c.len as u64;
        let i = match self.spread {
            Spread::Hash => mix(src as u64, dst as u64, node as u64) % k,
            Spread::Dmodk => self.endpoint_index[dst as usize] as u64 % k,
            Spread::First => 0,
        };
        self.candidate(c, i as u32)
    }

    /// The port of switch `node` that leads straight to `dst`, if `dst` is a
    /// one-port endpoint attached to `node` and the link is legal in `phase`.
    #[inline]
    fn last_hop(&self, node: NodeId, phase: u8, dst: NodeId) -> Option<PortId> {
        let q = self.only_port[dst as usize];
        if q == NONE {
            return None;
        }
        let p = q ^ 1;
        if self.port_node[p as usize] != node || !self.is_switch[node as usize] {
            return None;
        }
        self.next_phase(p, (phase as usize).min(self.phases - 1)).map(|_| p)
    }

    /// The part of the hash spread's mix that depends only on the flow:
    /// `mix(src, dst, node) == splitmix64(flow_hash(src, dst) ^ node)`, so
    /// a packet computes it once instead of at every hop.
    #[inline]
    pub fn flow_hash(&self, src: NodeId, dst: NodeId) -> u64 {
        splitmix64(splitmix64(src as u64) ^ dst as u64)
    }

    /// The destination group of endpoint `dst` (a packet looks it up once).
    #[inline]
    pub fn dst_group(&self, dst: NodeId) -> u32 {
        self.group[dst as usize]
    }

    /// `oblivious(src, node, phase, dst)` for a packet that carries its
    /// flow hash (`flow_hash`) and its destination's group (`dst_group`):
    /// the same port, with fewer look-ups.
    #[inline]
    pub fn next_hop(&self, flow: u64, group: u32, node: NodeId, phase: u8, dst: NodeId) -> PortId {
        if let Some(d) = &self.dor {
            return d.next(self, node, dst);
        }
        let own = self.only_port[node as usize];
        if own != NONE {
            return own;
        }
        if let Some(p) = self.last_hop(node, phase, dst) {
            return p;
        }
        let r = self.row[node as usize];
        if r != NONE {
            let ph = (phase as usize).min(self.phases - 1);
            let (s, l) = self.index[(group as usize * self.n_rows + r as usize) * self.phases + ph];
            if l == 1 {
                return self.ports[s as usize];
            }
            if l > 1 {
                return self.ports[(s + self.pick(flow, node, dst, l)) as usize];
            }
        }
        let c = self.candidate_range(node, phase, dst);
        if c.len == 1 {
            return self.candidate(c, 0);
        }
        self.candidate(c, self.pick(flow, node, dst, c.len))
    }

    /// Which of `k` equal-cost candidates the spread picks.
    #[inline]
    fn pick(&self, flow: u64, node: NodeId, dst: NodeId, k: u32) -> u32 {
        let k = k as u64;
        (match self.spread {
            Spread::Hash => {
                let h = splitmix64(flow ^ node as u64);
                if k.is_power_of_two() {
                    h & (k - 1)
                } else {
                    h % k
                }
            }
            Spread::Dmodk => self.endpoint_index[dst as usize] as u64 % k,
            Spread::First => 0,
        }) as u32
    }

    /// Dimension-order routing: the port at `node` towards `dst`, the
    /// packet's new dimension state (from `state`) and the VC level of the
    /// next link (the dateline VC on a torus).
    #[inline]
    pub fn dor_route(&self, node: NodeId, state: u8, dst: NodeId) -> (PortId, u8, u8) {
        let d = self.dor.as_ref().expect("dimension-order routing");
        let o = d.next(self, node, dst);
        let dim = d.dimension(self, o);
        let crossed = if dim == (state >> 1) && dim != 0 { state & 1 } else { 0 };
        let crossed = crossed | d.wrap[o as usize] as u8;
        let level = if d.dateline { crossed } else { 0 };
        (o, dim << 1 | crossed, level)
    }

    /// The spread oblivious choices use, or None for adaptive routing
    /// (which picks by free credit and ignores it) and dimension-order routing.
    pub fn spread_used(&self) -> Option<Spread> {
        (!matches!(self.algorithm, RoutingAlgorithm::Adaptive | RoutingAlgorithm::Dor)).then_some(self.spread)
    }

    /// Phase after leaving through port `p`.
    #[inline]
    pub fn phase_after(&self, p: PortId, phase: u8) -> u8 {
        if self.algorithm != RoutingAlgorithm::Updown {
            return 0;
        }
        self.next_phase(p, phase as usize).unwrap_or(1) as u8
    }

    #[inline]
    fn next_phase(&self, p: PortId, phase: usize) -> Option<usize> {
        if self.algorithm != RoutingAlgorithm::Updown {
            return Some(0);
        }
        match (self.down[p as usize], phase) {
            (false, 0) => Some(0), // up while still allowed
            (false, _) => None,    // up after a down: illegal
            (true, _) => Some(1),
        }
    }

    /// Follow every route the algorithm may take for `flows`; return whether
    /// the channel dependency graph is acyclic and the longest route in hops.
    fn check_dependencies(&self, topo: &Topology, flows: &[Vec<(NodeId, NodeId)>]) -> (bool, u32) {
        let mut acyclic = true;
        let mut max_hops = 0;
        let levels = if self.dor.as_ref().is_some_and(|d| d.dateline) { 2 } else { 1 };
        let mut cdg = Cdg::new(topo, &self.peer, &self.is_switch, levels);
        for class in flows {
            cdg.clear();
            for &(src, dst) in class {
                if let Some(d) = self.distance(src, 0, dst) {
                    max_hops = max_hops.max(d);
                }
            }
            match self.algorithm {
                RoutingAlgorithm::Adaptive => self.adaptive_dependencies(&mut cdg, class),
                _ => {
                    for &(src, dst) in class {
                        self.walk(&mut cdg, src, dst);
                    }
                }
            }
            if cdg.has_cycle(&self.peer) {
                acyclic = false;
            }
        }
        (acyclic, max_hops)
    }

    /// The one route of an oblivious (or dimension-order) flow.
    fn walk(&self, cdg: &mut Cdg, src: NodeId, dst: NodeId) {
        if self.distance(src, 0, dst).is_none() {
            return;
        }
        let (mut node, mut ph, mut inp, mut lvl) = (src, 0u8, NONE, 0u8);
        while node != dst {
            let (o, ph2, l2) = if self.dor.is_some() {
                let (o, st, l) = self.dor_route(node, ph, dst);
                (o, st, l)
            } else {
                let o = self.oblivious(src, node, ph, dst);
                (o, self.phase_after(o, ph), 0)
            };
            if inp != NONE {
                cdg.add(inp, lvl, o, l2);
            }
            node = self.peer[o as usize];
            inp = o ^ 1;
            ph = ph2;
            lvl = l2;
        }
    }

    /// Every minimal route of adaptive flows, per destination group (the
    /// next hops of a switch depend on the group only, until the last hop,
    /// whose channel leads into an endpoint and is no part of a cycle).
    fn adaptive_dependencies(&self, cdg: &mut Cdg, class: &[(NodeId, NodeId)]) {
        let mut sources: Vec<Vec<NodeId>> = vec![Vec::new(); self.n_groups];
        let mut sample: Vec<NodeId> = vec![NONE; self.n_groups];
        for &(src, dst) in class {
            let g = self.group[dst as usize] as usize;
            sources[g].push(src);
            sample[g] = dst;
        }
        let mut seen = vec![false; self.peer.len() * self.phases];
        let mut touched: Vec<usize> = Vec::new();
        let mut stack: Vec<(NodeId, u8, PortId)> = Vec::new();
        for g in 0..self.n_groups {
            let dst = sample[g];
            if dst == NONE {
                continue;
            }
            let srcs = &mut sources[g];
            srcs.sort_unstable();
            srcs.dedup();
            for &src in srcs.iter() {
                if src == dst || self.distance(src, 0, dst).is_none() {
                    continue;
                }
                for o in self.candidates(src, 0, dst) {
                    let w = self.peer[o as usize];
                    if self.is_switch[w as usize] {
                        stack.push((w, self.phase_after(o, 0), o ^ 1));
                    }
                }
            }
            while let Some((node, ph, inp)) = stack.pop() {
                let key = inp as usize * self.phases + (ph as usize).min(self.phases - 1);
                if seen[key] {
                    continue;
                }
                seen[key] = true;
                touched.push(key);
                let ph_s = (ph as usize).min(self.phases - 1);
                if self.group_distance(node, ph_s, g) < 2 {
                    continue; // the last hop: into an endpoint
                }
                let c = self.candidate_range(node, ph, dst);
                for k in 0..c.len {
                    let o = self.candidate(c, k);
                    cdg.add(inp, 0, o, 0);
                    let w = self.peer[o as usize];
                    if self.is_switch[w as usize] {
                        stack.push((w, self.phase_after(o, ph), o ^ 1));
                    }
                }
            }
            for k in touched.drain(..) {
                seen[k] = false;
            }
        }
    }
}

/// A range of candidate ports (see `RoutingTable::candidate_range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidates {
    table: bool,
    start: u32,
    pub len: u32,
}

impl Dor {
    fn new(topo: &Topology, grid: Grid, peer: &[NodeId], port_node: &[NodeId], dateline: bool) -> Self {
        let (rows, cols) = (grid.rows as usize, grid.cols as usize);
        let mut dirs = vec![[NONE; 4]; rows * cols];
        let mut wrap = vec![false; peer.len()];
        for (s, dir_s) in dirs.iter_mut().enumerate() {
            let (r, c) = (s / cols, s % cols);
            for &p in &topo.nodes[s].ports {
                let w = peer[p as usize] as usize;
                if w >= rows * cols || !topo.nodes[w].kind.is_switch() {
                    continue;
                }
                let (rw, cw) = (w / cols, w % cols);
                let dir = if rw == r && cw == (c + 1) % cols {
                    0
                } else if rw == r && (cw + 1) % cols == c {
                    1
                } else if cw == c && rw == (r + 1) % rows {
                    2
                } else if cw == c && (rw + 1) % rows == r {
                    3
                } else {
                    continue;
                };
                if dir_s[dir] == NONE {
                    dir_s[dir] = p;
                    wrap[p as usize] = if dir < 2 { r == rw && c.abs_diff(cw) > 1 } else { r.abs_diff(rw) > 1 };
                }
            }
        }
        let mut dim = vec![0u8; peer.len()];
        for d in &dirs {
            for (k, &p) in d.iter().enumerate() {
                if p != NONE {
                    dim[p as usize] = if k < 2 { 1 } else { 2 };
                }
            }
        }
        // An endpoint's home is its first port's peer (the lowest-numbered
        // peer, as `by_peer` sorts them).
        let home = topo
            .nodes
            .iter()
            .enumerate()
            .map(|(x, n)| {
                if n.kind.is_switch() {
                    x as NodeId
                } else {
                    n.ports.iter().map(|&p| port_node[(p ^ 1) as usize]).min().unwrap_or(x as NodeId)
                }
            })
            .collect();
        Dor { grid, dirs, wrap, dateline: dateline && grid.wrap, dim, home }
    }

    /// The switch an endpoint hangs off (its first port's peer).
    #[inline]
    fn home(&self, _t: &RoutingTable, x: NodeId) -> NodeId {
        self.home[x as usize]
    }

    /// Steps along one ring or line from `a` to `b` of `n`: (direction 0 = +, 1 = -, hops).
    #[inline]
    fn steps(&self, a: usize, b: usize, n: usize) -> (usize, usize) {
        if self.grid.wrap {
            let fwd = (b + n - a) % n;
            if fwd <= n - fwd {
                (0, fwd)
            } else {
                (1, n - fwd)
            }
        } else if b >= a {
            (0, b - a)
        } else {
            (1, a - b)
        }
    }

    fn distance(&self, t: &RoutingTable, node: NodeId, dst: NodeId) -> u32 {
        let cols = self.grid.cols as usize;
        let (s, h) = (self.home(t, node) as usize, self.home(t, dst) as usize);
        let x = self.steps(s % cols, h % cols, cols).1;
        let y = self.steps(s / cols, h / cols, self.grid.rows as usize).1;
        (x + y) as u32 + 1 + !t.is_switch[node as usize] as u32
    }

    /// X first, then Y, then the port to the destination.
    #[inline]
    fn next(&self, t: &RoutingTable, node: NodeId, dst: NodeId) -> PortId {
        if !t.is_switch[node as usize] {
            let own = t.only_port[node as usize];
            if own != NONE {
                return own;
            }
            let (s, _) = t.node_ports[node as usize];
            return t.by_peer[s as usize].1;
        }
        let cols = self.grid.cols as usize;
        let s = node as usize;
        let h = self.home(t, dst) as usize;
        if s == h {
            if let Some(p) = t.last_hop(node, 0, dst) {
                return p;
            }
            return t.to_peer(node, dst)[0].1;
        }
        let (c, ch) = (s % cols, h % cols);
        if c != ch {
            let (dir, _) = self.steps(c, ch, cols);
            return self.dirs[s][dir];
        }
        let (dir, _) = self.steps(s / cols, h / cols, self.grid.rows as usize);
        self.dirs[s][2 + dir]
    }

    /// 1 for an X link, 2 for a Y link, 0 for a link to an endpoint.
    #[inline]
    fn dimension(&self, _t: &RoutingTable, p: PortId) -> u8 {
        self.dim[p as usize]
    }
}

/// The channel dependency graph over switch-to-switch channels (a
/// channel: the sending port of a link direction and a VC level), kept as
/// one bit matrix per switch: which of its in-channels feed which out-channels.
struct Cdg {
    levels: usize,
    /// Per port: its index among its node's switch-facing ports (NONE if
    /// the link leads to an endpoint or the node is an endpoint).
    local: Vec<u32>,
    /// Per node: bit offset of its matrix and its switch-facing ports.
    base: Vec<usize>,
    sw_ports: Vec<Vec<PortId>>,
    /// Per port: the node it belongs to.
    port_owner: Vec<NodeId>,
    bits: Vec<u64>,
}

impl Cdg {
    fn new(topo: &Topology, peer: &[NodeId], is_switch: &[bool], levels: usize) -> Self {
        let mut local = vec![NONE; peer.len()];
        let mut base = Vec::with_capacity(topo.nodes.len());
        let mut sw_ports = Vec::with_capacity(topo.nodes.len());
        let mut total = 0usize;
        for (x, node) in topo.nodes.iter().enumerate() {
            base.push(total);
            let mut list = Vec::new();
            if is_switch[x] {
                for &p in &node.ports {
                    if is_switch[peer[p as usize] as usize] {
                        local[p as usize] = list.len() as u32;
                        list.push(p);
                    }
                }
            }
            let w = list.len() * levels;
            total += w * w;
            sw_ports.push(list);
        }
        let port_owner = (0..peer.len() as PortId).map(|p| peer[(p ^ 1) as usize]).collect();
        Cdg { levels, local, base, sw_ports, port_owner, bits: vec![0; total.div_ceil(64)] }
    }

    fn clear(&mut self) {
        self.bits.iter_mut().for_each(|b| *b = 0);
    }

    /// A packet that arrived on port `inp` (at this switch) on level `li`
    /// leaves through port `out` on level `lo`.
    #[inline]
    fn add(&mut self, inp: PortId, li: u8, out: PortId, lo: u8) {
        let (a, b) = (self.local[inp as usize], self.local[out as usize]);
        if a == NONE || b == NONE {
            return;
        }
        let node = self.node_of(out);
        let w = self.sw_ports[node].len() * self.levels;
        let bit =
            self.base[node] + (a as usize * self.levels + li as usize) * w + b as usize * self.levels + lo as usize;
        self.bits[bit / 64] |= 1 << (bit % 64);
    }

    #[inline]
    fn node_of(&self, p: PortId) -> usize {
        self.port_owner[p as usize] as usize
    }

    /// Whether the graph has a cycle (iterative depth-first search).
    fn has_cycle(&self, peer: &[NodeId]) -> bool {
        let l = self.levels;
        // Channel id: sending port * levels + level; only switch-to-switch ports.
        let n = peer.len() * l;
        let mut color = vec![0u8; n]; // 0 new, 1 on stack, 2 done
        let mut stack: Vec<(usize, usize)> = Vec::new(); // (channel, next successor index)
        for start in 0..n {
            let p = start / l;
            if self.local[p] == NONE || color[start] != 0 {
                continue;
            }
            color[start] = 1;
            stack.push((start, 0));
            while let Some(&mut (ch, ref mut next)) = stack.last_mut() {
                // Successors: out-channels at the node this channel enters.
                let p = (ch / l) as PortId;
                let node = peer[p as usize] as usize;
                let arr = self.local[(p ^ 1) as usize];
                let w = self.sw_ports[node].len() * l;
                let row = self.base[node] + (arr as usize * l + ch % l) * w;
                let mut found = None;
                while *next < w {
                    let k = *next;
                    *next += 1;
                    let bit = row + k;
                    if self.bits[bit / 64] >> (bit % 64) & 1 == 1 {
                        let succ = self.sw_ports[node][k / l] as usize * l + k % l;
                        match color[succ] {
                            1 => return true,
                            0 => {
                                found = Some(succ);
                                break;
                            }
                            _ => {}
                        }
                    }
                }
                match found {
                    Some(s) => {
                        color[s] = 1;
                        stack.push((s, 0));
                    }
                    None => {
                        color[ch] = 2;
                        stack.pop();
                    }
                }
            }
        }
        false
    }
}

/// Orient every link for up*/down*: BFS levels from a root switch (the one
/// of highest degree, lowest index on ties); a move goes up if it reaches a
/// lower (level, id).
fn updown_directions(topo: &Topology) -> Vec<bool> {
    let n = topo.nodes.len();
    let root = (0..n)
        .filter(|&i| topo.nodes[i].kind.is_switch())
        .max_by_key(|&i| (topo.nodes[i].ports.len(), std::cmp::Reverse(i)))
        .unwrap_or(0);
    let mut level = vec![u32::MAX; n];
    level[root] = 0;
    let mut q = VecDeque::from([root]);
    while let Some(u) = q.pop_front() {
        if u != root && !topo.nodes[u].kind.is_switch() {
            continue;
        }
        for &p in &topo.nodes[u].ports {
            let w = topo.peer(p) as usize;
            if level[w] == u32::MAX {
                level[w] = level[u] + 1;
                q.push_back(w);
            }
        }
    }
    (0..topo.n_ports() as PortId)
        .map(|p| {
            let u = topo.port_node(p) as usize;
            let w = topo.peer(p) as usize;
            (level[w], w) > (level[u], u)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::units::Bandwidth;
    use crate::fabric::kinds::{Duplex, TopologyKind};
    use crate::fabric::topology::{generate, Link, NodeKind, ShapeParams};

    fn link(a: NodeId, b: NodeId) -> Link {
        Link { a, b, bandwidth: Bandwidth::gbps(1), latency: 0, port_delay: 0, duplex: Duplex::Full, turnaround: 0 }
    }

    /// Switches `sw0..` joined in a ring; switch i is node i.
    fn ring_switches(n: u32) -> Topology {
        let shape = generate(TopologyKind::Ring, &ShapeParams { switches: Some(n), ..Default::default() }).unwrap();
        let mut t = Topology::default();
        for i in 0..shape.switches {
            t.add_node(format!("sw{i}"), NodeKind::Switch, 0);
        }
        for &(a, b) in &shape.edges {
            t.add_link(link(a as NodeId, b as NodeId));
        }
        t
    }

    /// A ring with one endpoint `e{i}` on each switch.
    fn ring(n: u32) -> (Topology, Vec<NodeId>) {
        let mut t = ring_switches(n);
        let eps: Vec<_> = (0..n)
            .map(|i| {
                let e = t.add_node(format!("e{i}"), NodeKind::Memory, 0);
                t.add_link(link(e, i));
                e
            })
            .collect();
        (t, eps)
    }

    fn all_pairs(eps: &[NodeId]) -> Vec<Vec<(NodeId, NodeId)>> {
        vec![eps.iter().flat_map(|&a| eps.iter().filter(move |&&b| b != a).map(move |&b| (a, b))).collect()]
    }

    #[test]
    fn flow_hash_composes_to_mix() {
        for (a, b, c) in [(0u32, 1u32, 2u32), (77, 5, 1000), (u32::MAX, 3, 9)] {
            let t = RoutingTable::build(
                &ring_switches(3),
                RoutingAlgorithm::Oblivious,
                Spread::Hash,
                DeadlockAvoidance::Auto,
                &[],
            );
            assert_eq!(splitmix64(t.flow_hash(a, b) ^ c as u64), mix(a as u64, b as u64, c as u64));
        }
    }

    #[test]
    fn minimal_routing_on_a_ring_has_a_cyclic_cdg_and_gets_hop_vcs() {
        let (t, eps) = ring(6);
        let r = RoutingTable::build(
            &t,
            RoutingAlgorithm::Oblivious,
            Spread::Hash,
            DeadlockAvoidance::Auto,
            &all_pairs(&eps),
        );
        assert!(!r.cdg_acyclic);
        assert!(r.levels > 1);
        // endpoint -> switch, 3 ring hops, switch -> endpoint
        assert_eq!(r.max_hops, 5);
    }

    #[test]
    fn updown_on_a_ring_is_acyclic_with_one_vc() {
        let (t, eps) = ring(6);
        let r =
            RoutingTable::build(&t, RoutingAlgorithm::Updown, Spread::Hash, DeadlockAvoidance::Auto, &all_pairs(&eps));
        assert!(r.cdg_acyclic);
        assert_eq!(r.levels, 1);
        for &a in &eps {
            for &b in &eps {
                if a != b {
                    assert!(r.distance(a, 0, b).is_some());
                }
            }
        }
    }

    #[test]
    fn distances_are_shortest() {
        let (t, eps) = ring(6);
        let r = RoutingTable::build(
            &t,
            RoutingAlgorithm::Oblivious,
            Spread::Hash,
            DeadlockAvoidance::None,
            &all_pairs(&eps),
        );
        assert_eq!(r.distance(eps[0], 0, eps[3]), Some(5));
        assert_eq!(r.distance(eps[0], 0, eps[1]), Some(3));
        assert_eq!(r.levels, 1);
    }

    /// A ring of 4 whose flows all join opposite switches, so each has two
    /// shortest paths. The endpoints' node order makes destination-mod-k
    /// send every flow clockwise: the four routes close a cycle of channel
    /// dependencies. `first` sends sw1-sw3's flows counter-clockwise, which
    /// leaves no cycle. The deadlock check must follow the spread's routes.
    #[test]
    fn the_deadlock_check_follows_the_spread() {
        let mut t = ring_switches(4);
        // Dense endpoint indices: x 0, e0 1, e2 2, e1 3, y 4, e3 5.
        let mut e = [0; 4];
        for (name, sw) in [("x", 0), ("e0", 0), ("e2", 2), ("e1", 1), ("y", 0), ("e3", 3)] {
            let n = t.add_node(name.into(), NodeKind::Memory, 0);
            t.add_link(link(n, sw));
            if let Some(i) = name.strip_prefix('e') {
                e[i.parse::<usize>().unwrap()] = n;
            }
        }
        let flows = vec![(0..4).map(|i| (e[i], e[(i + 2) % 4])).collect::<Vec<_>>()];
        let build =
            |spread| RoutingTable::build(&t, RoutingAlgorithm::Oblivious, spread, DeadlockAvoidance::Auto, &flows);
        let dmodk = build(Spread::Dmodk);
        assert!(!dmodk.cdg_acyclic);
        assert!(dmodk.levels > 1);
        let first = build(Spread::First);
        assert!(first.cdg_acyclic);
        assert_eq!(first.levels, 1);
        // Clockwise from sw0 is its first port (the link to sw1).
        assert_eq!(first.oblivious(e[0], 0, 0, e[2]), t.nodes[0].ports[0]);
        assert_eq!(dmodk.oblivious(e[0], 0, 0, e[2]), t.nodes[0].ports[0]);
        assert_eq!(first.oblivious(e[1], 1, 0, e[3]), t.nodes[1].ports[0]);
        assert_eq!(dmodk.oblivious(e[1], 1, 0, e[3]), t.nodes[1].ports[1]);
    }
}
