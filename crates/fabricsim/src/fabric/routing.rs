//! Port-based routing (PBR) tables, filled from the topology.
//!
//! A table answers ESF's question: for a packet from `source` that entered
//! this switch on `ingress` and goes to `destination`, which egress port?
//! The answer set is stored per (node, phase, destination): `phase` is the
//! only thing the ingress port changes (whether an up*/down* route has
//! already turned down), and the source picks among equal-cost candidates.
//! How oblivious routing picks is `[fabric] spread`: a hash of (source,
//! destination, node) like ECMP, destination-mod-k (the static routing of
//! fat trees), or always the first candidate (one shortest-path tree).
//!
//! Deadlock freedom is checked, not assumed: the channel dependency graph
//! (Dally and Seitz) of every route the traffic can take is built and
//! tested for a cycle. If it has one, packets climb one virtual channel per
//! hop ("hop-indexed" VCs), which makes the graph acyclic for any minimal
//! routing (Günther 1981, Gopal 1985).

use std::collections::VecDeque;

use petgraph::algo::is_cyclic_directed;
use petgraph::graphmap::DiGraphMap;

use super::topology::{NodeId, PortId, Topology};
use crate::config::schema::{DeadlockAvoidance, RoutingAlgorithm, Spread};
use crate::workloads::rng::mix;

const UNREACHABLE: u32 = u32::MAX;

pub struct RoutingTable {
    pub algorithm: RoutingAlgorithm,
    /// The oblivious choice among equal-cost candidates.
    pub spread: Spread,
    n_nodes: usize,
    /// Per node: its dense index among endpoints (node order), for
    /// destination-mod-k; `u32::MAX` for switches.
    endpoint_index: Vec<u32>,
    /// (start, len) into `ports` for each (node, phase, destination).
    index: Vec<(u32, u16)>,
    ports: Vec<PortId>,
    /// Per (destination, node, phase): hops to the destination.
    pub dist: Vec<u32>,
    /// Up*/down*: whether moving from a port's node across it goes down.
    down: Vec<bool>,
    /// Virtual-channel levels per message class (1 without hop-indexed VCs).
    pub levels: u8,
    /// Whether the channel dependency graph of the routes used is acyclic.
    pub cdg_acyclic: bool,
    pub max_hops: u32,
}

impl RoutingTable {
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
        let phases = 2;
        let down =
            if algorithm == RoutingAlgorithm::Updown { updown_directions(topo) } else { vec![true; topo.n_ports()] };
        let mut dist = vec![UNREACHABLE; n * n * phases];
        for dst in 0..n {
            if topo.nodes[dst].kind.is_switch() {
                continue;
            }
            bfs_to(topo, algorithm, &down, dst as NodeId, &mut dist[dst * n * phases..(dst + 1) * n * phases]);
        }
        let mut index = vec![(0u32, 0u16); n * phases * n];
        let mut ports = Vec::new();
        for node in 0..n {
            for ph in 0..phases {
                for dst in 0..n {
                    let d = dist[(dst * n + node) * phases + ph];
                    if d == UNREACHABLE || d == 0 {
                        continue;
                    }
                    let start = ports.len() as u32;
                    for &p in &topo.nodes[node].ports {
                        let w = topo.peer(p) as usize;
                        if !(w == dst || topo.nodes[w].kind.is_switch()) {
                            continue;
                        }
                        let Some(ph2) = next_phase(algorithm, &down, p, ph) else {
                            continue;
                        };
                        if dist[(dst * n + w) * phases + ph2] == d - 1 {
                            ports.push(p);
                        }
                    }
                    index[(node * phases + ph) * n + dst] = (start, (ports.len() as u32 - start) as u16);
                }
            }
        }
        let mut t = RoutingTable {
            algorithm,
            spread,
            n_nodes: n,
            endpoint_index,
            index,
            ports,
            dist,
            down,
            levels: 1,
            cdg_acyclic: true,
            max_hops: 0,
        };
        let (acyclic, max_hops) = t.check_dependencies(topo, flows);
        t.cdg_acyclic = acyclic;
        t.max_hops = max_hops;
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

    /// Bytes `build` certainly touches for `nodes` nodes: the dense table
    /// of hop distances per (destination, node, phase). A lower bound that
    /// validation checks before anything is allocated.
    pub fn bytes_for(nodes: u64) -> u64 {
        nodes.saturating_mul(nodes).saturating_mul(2).saturating_mul(std::mem::size_of::<u32>() as u64)
    }

    /// Hops from `node` (in `phase`) to `dst`, or None if unreachable.
    pub fn distance(&self, node: NodeId, phase: u8, dst: NodeId) -> Option<u32> {
        let d = self.dist[(dst as usize * self.n_nodes + node as usize) * 2 + phase as usize];
        (d != UNREACHABLE).then_some(d)
    }

    /// Equal-cost egress ports at `node` towards `dst`.
    #[inline]
    pub fn candidates(&self, node: NodeId, phase: u8, dst: NodeId) -> &[PortId] {
        let (s, l) = self.index[(node as usize * 2 + phase as usize) * self.n_nodes + dst as usize];
        &self.ports[s as usize..s as usize + l as usize]
    }

    /// The oblivious choice: fixed per (source, destination) at each node,
    /// spread over equal-cost paths as `[fabric] spread` says.
    #[inline]
    pub fn oblivious(&self, src: NodeId, node: NodeId, phase: u8, dst: NodeId) -> PortId {
        let c = self.candidates(node, phase, dst);
        if c.len() == 1 {
            return c[0];
        }
        let k = c.len() as u64;
        let i = match self.spread {
            Spread::Hash => mix(src as u64, dst as u64, node as u64) % k,
            Spread::Dmodk => self.endpoint_index[dst as usize] as u64 % k,
            Spread::First => 0,
        };
        c[i as usize]
    }

    /// The spread oblivious choices use, or None for adaptive routing
    /// (which picks by free credit and ignores it).
    pub fn spread_used(&self) -> Option<Spread> {
        (self.algorithm != RoutingAlgorithm::Adaptive).then_some(self.spread)
    }

    /// Phase after leaving through port `p`.
    #[inline]
    pub fn phase_after(&self, p: PortId, phase: u8) -> u8 {
        next_phase(self.algorithm, &self.down, p, phase as usize).unwrap_or(1) as u8
    }

    /// Follow every route the algorithm may take for `flows`; return whether
    /// the channel dependency graph is acyclic and the longest route in hops.
    fn check_dependencies(&self, topo: &Topology, flows: &[Vec<(NodeId, NodeId)>]) -> (bool, u32) {
        let mut acyclic = true;
        let mut max_hops = 0;
        for class in flows {
            let mut g: DiGraphMap<PortId, ()> = DiGraphMap::new();
            let mut seen = std::collections::HashSet::new();
            for &(src, dst) in class {
                // (node, phase, the port we arrived on)
                let mut stack: Vec<(NodeId, u8, Option<PortId>, u32)> = vec![(src, 0, None, 0)];
                while let Some((node, ph, inp, hops)) = stack.pop() {
                    if node == dst {
                        max_hops = max_hops.max(hops);
                        continue;
                    }
                    if !seen.insert((node, ph, inp, dst, src)) {
                        continue;
                    }
                    let choices: Vec<PortId> = match self.algorithm {
                        RoutingAlgorithm::Adaptive => self.candidates(node, ph, dst).to_vec(),
                        _ => {
                            if self.candidates(node, ph, dst).is_empty() {
                                vec![]
                            } else {
                                vec![self.oblivious(src, node, ph, dst)]
                            }
                        }
                    };
                    for p in choices {
                        if let Some(i) = inp {
                            g.add_edge(i, p, ());
                        }
                        stack.push((topo.peer(p), self.phase_after(p, ph), Some(p), hops + 1));
                    }
                }
            }
            if is_cyclic_directed(&g) {
                acyclic = false;
            }
        }
        (acyclic, max_hops)
    }
}

fn next_phase(algorithm: RoutingAlgorithm, down: &[bool], p: PortId, phase: usize) -> Option<usize> {
    if algorithm != RoutingAlgorithm::Updown {
        return Some(0);
    }
    match (down[p as usize], phase) {
        (false, 0) => Some(0), // up while still allowed
        (false, _) => None,    // up after a down: illegal
        (true, _) => Some(1),
    }
}

/// Breadth-first distances to `dst` over (node, phase) states; only
/// switches forward, so only they (and `dst`) are expanded.
fn bfs_to(topo: &Topology, algorithm: RoutingAlgorithm, down: &[bool], dst: NodeId, out: &mut [u32]) {
    let mut q = VecDeque::new();
    for ph in 0..2 {
        out[dst as usize * 2 + ph] = 0;
        q.push_back((dst, ph));
    }
    while let Some((w, ph2)) = q.pop_front() {
        if w != dst && !topo.nodes[w as usize].kind.is_switch() {
            continue;
        }
        let dw = out[w as usize * 2 + ph2];
        for &pw in &topo.nodes[w as usize].ports {
            // The port at v whose packets arrive at w through this link.
            let pv = pw ^ 1;
            let v = topo.port_node(pv);
            for ph in 0..2 {
                if next_phase(algorithm, down, pv, ph) == Some(ph2) && out[v as usize * 2 + ph] == UNREACHABLE {
                    out[v as usize * 2 + ph] = dw + 1;
                    q.push_back((v, ph));
                }
            }
        }
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
    use crate::config::schema::{Duplex, TopologyKind};
    use crate::config::units::Bandwidth;
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
