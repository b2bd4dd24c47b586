//! The workload kinds that configurations name: access patterns,
//! injection and arrival processes (`config::schema` re-exports them).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Sequential lines, each requester in its own region.
    Stream,
    /// Uniformly random lines over the footprint.
    Uniform,
    /// `hot_probability` of accesses to the first `hot_fraction` of the footprint.
    Hotspot,
    /// Each requester talks to one memory, a fixed random permutation.
    Permutation,
    /// YCSB's scrambled Zipfian (θ = 0.99) over the footprint's lines.
    Zipf,
    /// Requester `i` accesses line `i` modulo the footprint's lines, every
    /// time (GCS's microbenchmark: thread `i` of every blade uses lock `i`).
    OwnLine,
    /// Replay of a trace file (see docs/trace-format.md).
    Trace,
    /// Producers store and release, consumers acquire and load (protocol cores).
    ProducerConsumer,
    /// Senders store to other hosts' memory and release a flag there (protocol cores).
    RemoteStores,
    /// A NIC's DMA reads of consecutive lines, ordered or not (protocol cores).
    DmaReads,
    /// A NIC's key-value GETs over RDMA READs, in batches (protocol cores).
    KvsGets,
    /// A host core's MMIO writes to a NIC, in messages (protocol cores).
    MmioWrites,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Injection {
    /// A window of outstanding requests; a new one issues when one completes.
    Closed,
    /// Requests issue at a rate regardless of completions.
    Open,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    Poisson,
    Periodic,
}
