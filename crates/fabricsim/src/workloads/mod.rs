//! What requesters do: synthetic address patterns, injection processes and
//! trace replay.

pub mod bonsai;
pub mod graph;
pub mod kernels;
pub mod kinds;
pub mod pattern;
pub mod source;
pub mod trace;
pub mod zipf;

use crate::engine::Time;
use crate::workloads::kinds::{Arrival, Injection, Pattern};

/// A request as a workload produces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub write: bool,
    pub addr: u64,
    pub bytes: u32,
}

/// One requester's workload, resolved and validated.
#[derive(Debug, Clone)]
pub struct WorkloadSpec {
    pub pattern: Pattern,
    pub requests: u64,
    pub warmup: u64,
    pub read_fraction: f64,
    pub line: u32,
    /// Size of a message without data (ESF header overhead × line).
    pub header_bytes: u32,
    /// Header bytes added to a message with data.
    pub data_header: u32,
    pub injection: Injection,
    pub window: u32,
    /// Open loop: mean picoseconds between issues.
    pub interval: Time,
    pub arrival: Arrival,
    pub footprint: u64,
    pub interleave: u64,
    pub hot_fraction: f64,
    pub hot_probability: f64,
    /// Indices into the system's memory list.
    pub targets: Vec<u32>,
    pub trace: Option<std::sync::Arc<Vec<trace::TraceRecord>>>,
    /// A kernel's pattern (protocol cores only): what builds each core's
    /// operation source.
    pub kernel: Option<std::sync::Arc<dyn source::Kernel>>,
    /// Writes are posted: no acknowledgement (see `WorkloadConfig::posted_writes`).
    pub posted_writes: bool,
    /// Protocol cores: instructions before each operation that are not
    /// memory operations (computation).
    pub instructions: u64,
    /// Protocol cores: the fraction of loads that depend on the previous load.
    pub dependent: f64,
}

impl WorkloadSpec {
    /// Total requests this requester issues (warm-up included).
    pub fn total(&self) -> u64 {
        match &self.trace {
            Some(t) => t.len() as u64,
            None => self.warmup + self.requests,
        }
    }

    /// Largest packet this workload produces, for buffer sizing.
    pub fn max_packet(&self) -> u32 {
        let data = match &self.trace {
            Some(t) => t.iter().map(|r| r.bytes).max().unwrap_or(self.line),
            None => self.line,
        };
        (data + self.data_header).max(self.header_bytes).max(1)
    }
}
