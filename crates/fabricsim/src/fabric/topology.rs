//! The fabric's graph: nodes (endpoints and switches) joined by links, and
//! generators for the common shapes.

use crate::engine::units::Bandwidth;
use crate::engine::Time;
use crate::fabric::kinds::{Duplex, TopologyKind};

pub type NodeId = u32;
/// One end of a link: `2 * link + side`, side 0 at `a`, side 1 at `b`.
/// A packet sent from port `p` arrives at port `p ^ 1`.
pub type PortId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Requester,
    Memory,
    Switch,
}

impl NodeKind {
    pub fn is_switch(self) -> bool {
        self == NodeKind::Switch
    }
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Requester => "requester",
            NodeKind::Memory => "memory",
            NodeKind::Switch => "switch",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Switch traversal latency (switches only).
    pub latency: Time,
    /// Ports of this node, in link order.
    pub ports: Vec<PortId>,
}

#[derive(Debug, Clone)]
pub struct Link {
    pub a: NodeId,
    pub b: NodeId,
    pub bandwidth: Bandwidth,
    /// Bus time.
    pub latency: Time,
    /// Delay of one port crossing; a traversal crosses two.
    pub port_delay: Time,
    pub duplex: Duplex,
    pub turnaround: Time,
}

impl Link {
    /// Time from the tail of a packet leaving one end to it being whole at the other.
    pub fn propagation(&self) -> Time {
        self.latency + 2 * self.port_delay
    }
}

#[derive(Debug, Clone, Default)]
pub struct Topology {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    /// A generated mesh or torus: its switches are nodes `0..rows * cols`,
    /// row-major (what dimension-order routing needs).
    pub grid: Option<Grid>,
}

/// The coordinates of a generated mesh or torus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub rows: u32,
    pub cols: u32,
    /// Torus: wrap-around links close each row and column into a ring.
    pub wrap: bool,
}

impl Topology {
    pub fn add_node(&mut self, name: String, kind: NodeKind, latency: Time) -> NodeId {
        self.nodes.push(Node { name, kind, latency, ports: Vec::new() });
        (self.nodes.len() - 1) as NodeId
    }

    pub fn add_link(&mut self, link: Link) -> usize {
        let l = self.links.len() as u32;
        self.nodes[link.a as usize].ports.push(2 * l);
        self.nodes[link.b as usize].ports.push(2 * l + 1);
        self.links.push(link);
        l as usize
    }

    #[inline]
    pub fn port_node(&self, p: PortId) -> NodeId {
        let l = &self.links[(p / 2) as usize];
        if p.is_multiple_of(2) {
            l.a
        } else {
            l.b
        }
    }

    /// The node at the other end of port `p`.
    #[inline]
    pub fn peer(&self, p: PortId) -> NodeId {
        self.port_node(p ^ 1)
    }

    pub fn n_ports(&self) -> usize {
        2 * self.links.len()
    }

    pub fn find(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name).map(|i| i as NodeId)
    }

    /// Which nodes can reach which when only switches forward, in
    /// O(nodes + ports): components of the switch graph.
    pub fn reachability(&self) -> Reachability {
        let mut comp = vec![u32::MAX; self.nodes.len()];
        let mut next = 0;
        for s in 0..self.nodes.len() {
            if !self.nodes[s].kind.is_switch() || comp[s] != u32::MAX {
                continue;
            }
            comp[s] = next;
            let mut stack = vec![s];
            while let Some(u) = stack.pop() {
                for &p in &self.nodes[u].ports {
                    let w = self.peer(p) as usize;
                    if self.nodes[w].kind.is_switch() && comp[w] == u32::MAX {
                        comp[w] = next;
                        stack.push(w);
                    }
                }
            }
            next += 1;
        }
        Reachability { comp }
    }

    /// Nodes reachable from `from` when only switches forward.
    pub fn reachable(&self, from: NodeId) -> Vec<bool> {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![from];
        seen[from as usize] = true;
        while let Some(u) = stack.pop() {
            if u != from && !self.nodes[u as usize].kind.is_switch() {
                continue;
            }
            for &p in &self.nodes[u as usize].ports {
                let w = self.peer(p);
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    stack.push(w);
                }
            }
        }
        seen
    }
}

/// Switch components (see `Topology::reachability`).
pub struct Reachability {
    comp: Vec<u32>,
}

impl Reachability {
    /// Whether endpoint `a` reaches `b`: a direct link, or switches of one
    /// component next to each.
    pub fn connected(&self, topo: &Topology, a: NodeId, b: NodeId) -> bool {
        let na = &topo.nodes[a as usize];
        na.ports.iter().any(|&p| {
            let w = topo.peer(p);
            w == b
                || (topo.nodes[w as usize].kind.is_switch()
                    && topo.nodes[b as usize].ports.iter().any(|&q| {
                        let v = topo.peer(q) as usize;
                        topo.nodes[v].kind.is_switch() && self.comp[v] == self.comp[w as usize]
                    }))
        })
    }
}

/// A generated switch graph: switch count, switch-to-switch edges and the
/// switches endpoints attach to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub switches: usize,
    pub edges: Vec<(usize, usize)>,
    pub edge_switches: Vec<usize>,
}

/// Parameters a generator reads; which are required depends on the kind.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShapeParams {
    pub switches: Option<u32>,
    pub arity: Option<u32>,
    pub depth: Option<u32>,
    pub spines: Option<u32>,
    pub leaves: Option<u32>,
    pub rows: Option<u32>,
    pub cols: Option<u32>,
}

/// Build a shape, or say which parameter is missing or out of range.
pub fn generate(kind: TopologyKind, p: &ShapeParams) -> Result<Shape, (String, String)> {
    let need = |v: Option<u32>, key: &str, min: u32| -> Result<usize, (String, String)> {
        match v {
            None => Err((key.to_string(), format!("missing; a {kind:?} topology needs it").to_lowercase())),
            Some(x) if x < min => Err((key.to_string(), format!("{x} is too small; expected at least {min}"))),
            Some(x) if x > 4096 => Err((key.to_string(), format!("{x} is too large; expected at most 4096"))),
            Some(x) => Ok(x as usize),
        }
    };
    Ok(match kind {
        TopologyKind::Chain => {
            let n = need(p.switches, "switches", 1)?;
            Shape { switches: n, edges: (1..n).map(|i| (i - 1, i)).collect(), edge_switches: (0..n).collect() }
        }
        TopologyKind::Ring => {
            let n = need(p.switches, "switches", 3)?;
            let mut edges: Vec<_> = (1..n).map(|i| (i - 1, i)).collect();
            edges.push((n - 1, 0));
            Shape { switches: n, edges, edge_switches: (0..n).collect() }
        }
        TopologyKind::FullyConnected => {
            let n = need(p.switches, "switches", 1)?;
            let mut edges = Vec::new();
            for i in 0..n {
                for j in i + 1..n {
                    edges.push((i, j));
                }
            }
            Shape { switches: n, edges, edge_switches: (0..n).collect() }
        }
        TopologyKind::Tree => {
            let arity = need(p.arity, "arity", 1)?;
            let depth = need(p.depth, "depth", 0)?;
            let mut edges = Vec::new();
            let mut level = vec![0usize];
            let mut next_id = 1;
            for _ in 0..depth {
                let mut next = Vec::new();
                for &parent in &level {
                    for _ in 0..arity {
                        edges.push((parent, next_id));
                        next.push(next_id);
                        next_id += 1;
                        if next_id > 4096 {
                            return Err(("depth".into(), "tree has more than 4096 switches".into()));
                        }
                    }
                }
                level = next;
            }
            Shape { switches: next_id, edges, edge_switches: level }
        }
        TopologyKind::SpineLeaf => {
            let spines = need(p.spines, "spines", 1)?;
            let leaves = need(p.leaves, "leaves", 1)?;
            let mut edges = Vec::new();
            for l in 0..leaves {
                for s in 0..spines {
                    edges.push((spines + l, s));
                }
            }
            Shape { switches: spines + leaves, edges, edge_switches: (spines..spines + leaves).collect() }
        }
        TopologyKind::Mesh | TopologyKind::Torus => {
            let wrap = kind == TopologyKind::Torus;
            let min = if wrap { 3 } else { 1 };
            let rows = need(p.rows, "rows", min)?;
            let cols = need(p.cols, "cols", min)?;
            let id = |r: usize, c: usize| r * cols + c;
            let mut edges = Vec::new();
            // Horizontal links first, so each switch's first ports are its X ports.
            for r in 0..rows {
                for c in 0..cols {
                    if c + 1 < cols {
                        edges.push((id(r, c), id(r, c + 1)));
                    } else if wrap {
                        edges.push((id(r, c), id(r, 0)));
                    }
                }
            }
            for r in 0..rows {
                for c in 0..cols {
                    if r + 1 < rows {
                        edges.push((id(r, c), id(r + 1, c)));
                    } else if wrap {
                        edges.push((id(r, c), id(0, c)));
                    }
                }
            }
            Shape { switches: rows * cols, edges, edge_switches: (0..rows * cols).collect() }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> ShapeParams {
        ShapeParams::default()
    }

    #[test]
    fn shapes_have_expected_edge_counts() {
        let s = generate(TopologyKind::Ring, &ShapeParams { switches: Some(5), ..p() }).unwrap();
        assert_eq!(s.edges.len(), 5);
        let s = generate(TopologyKind::FullyConnected, &ShapeParams { switches: Some(5), ..p() }).unwrap();
        assert_eq!(s.edges.len(), 10);
        let s = generate(TopologyKind::Tree, &ShapeParams { arity: Some(2), depth: Some(2), ..p() }).unwrap();
        assert_eq!((s.switches, s.edges.len(), s.edge_switches.len()), (7, 6, 4));
        let s = generate(TopologyKind::SpineLeaf, &ShapeParams { spines: Some(2), leaves: Some(4), ..p() }).unwrap();
        assert_eq!((s.switches, s.edges.len(), s.edge_switches.len()), (6, 8, 4));
        let s = generate(TopologyKind::Mesh, &ShapeParams { rows: Some(3), cols: Some(4), ..p() }).unwrap();
        assert_eq!(s.edges.len(), 3 * 3 + 2 * 4);
        let s = generate(TopologyKind::Torus, &ShapeParams { rows: Some(3), cols: Some(4), ..p() }).unwrap();
        assert_eq!(s.edges.len(), 2 * 12);
    }

    #[test]
    fn missing_parameter_is_named() {
        let e = generate(TopologyKind::Mesh, &ShapeParams { rows: Some(2), ..p() }).unwrap_err();
        assert_eq!(e.0, "cols");
        let e = generate(TopologyKind::Ring, &ShapeParams { switches: Some(2), ..p() }).unwrap_err();
        assert!(e.1.contains("at least 3"));
    }
}
