//! The fabric's kinds that configurations name: link duplex, topology
//! shapes, routing, deadlock avoidance, equal-cost spreading and switch
//! queueing (`config::schema` re-exports them).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RoutingAlgorithm {
    /// Minimal paths, fixed per (source, destination): ESF's "Oblivious".
    Oblivious,
    /// Minimal paths, next hop chosen by downstream free credits: ESF's "Adaptive".
    Adaptive,
    /// Shortest legal up*/down* paths over a BFS spanning tree; deadlock-free
    /// on any graph with one virtual channel per message class.
    Updown,
    /// Dimension-order routing (XY, e-cube) on a generated mesh or torus:
    /// all the way along X, then along Y; on a torus two VCs per class,
    /// switched at the dateline (the wrap-around link).
    Dor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeadlockAvoidance {
    /// Check the channel dependency graph; add hop-indexed virtual channels
    /// only if it has a cycle.
    Auto,
    /// Always use hop-indexed virtual channels.
    HopVcs,
    /// Do nothing (a cyclic topology may deadlock; the run reports it).
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spread {
    /// A hash of (source, destination, node), like ECMP.
    Hash,
    /// Destination-mod-k (Zahavi et al.): of k candidates, index d mod k,
    /// d the destination's dense index among endpoints.
    Dmodk,
    /// Always the first candidate (lowest port id): one shortest-path tree.
    First,
}

impl Spread {
    pub fn name(self) -> &'static str {
        match self {
            Spread::Hash => "hash",
            Spread::Dmodk => "dmodk",
            Spread::First => "first",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchQueueing {
    /// Virtual output queues: each packet joins its output's queue as soon
    /// as it has crossed the switch; no head-of-line blocking.
    Voq,
    /// One FIFO per input port and VC: a head packet waiting for a busy
    /// output blocks the packets behind it (head-of-line blocking).
    InputFifo,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Duplex {
    Full,
    Half,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    Chain,
    Ring,
    Tree,
    SpineLeaf,
    FullyConnected,
    Mesh,
    Torus,
}
