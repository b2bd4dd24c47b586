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
    /// A kernel's (`workloads::kernels`): its own operations drive the
    /// cores of a protocol; named by the kernel, never in a configuration.
    #[serde(skip)]
    Kernel,
}

impl Pattern {
    /// The generic patterns' names, as configurations give them.
    pub const NAMES: [&'static str; 7] = ["stream", "uniform", "hotspot", "permutation", "zipf", "own_line", "trace"];

    /// The generic pattern named `name`.
    pub fn parse(name: &str) -> Option<Pattern> {
        use serde::de::value::{Error, StrDeserializer};
        Self::NAMES.contains(&name).then(|| Pattern::deserialize(StrDeserializer::<Error>::new(name)).ok()).flatten()
    }
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
