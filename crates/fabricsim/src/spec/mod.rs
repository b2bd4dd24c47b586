//! The validated system the engines share: what the configuration
//! resolves into (`config::resolve`) and the timing engine (`sim`) builds
//! and runs. Below both, so neither imports the other.

use std::sync::Arc;

use crate::agents::cache::{CacheGeometry, VictimPolicy};
use crate::agents::core as front;
use crate::agents::memory::dram::DramParams;
use crate::engine::Time;
use crate::fabric::params::FabricConfig;
use crate::fabric::topology::{NodeId, Topology};
use crate::workloads::WorkloadSpec;

#[derive(Debug, Clone)]
pub struct RequesterSpec {
    pub node: NodeId,
    pub issue_latency: Time,
    pub cache_latency: Time,
    pub workload: WorkloadSpec,
}

#[derive(Debug, Clone)]
pub struct MemorySpec {
    pub node: NodeId,
    /// Controller processing (for a DRAM: the controller overhead per access).
    pub latency: Time,
    pub bandwidth: crate::engine::units::Bandwidth,
    pub queue: u32,
    /// `model = "dram"`: the DRAM behind the controller (else the fixed data path).
    pub dram: Option<DramParams>,
}

/// The largest workload footprint of `requesters`, in bytes.
pub fn footprint(requesters: &[RequesterSpec]) -> u64 {
    requesters.iter().map(|r| r.workload.footprint).max().unwrap_or(0)
}

/// The largest store a workload of `requesters` issues, in bytes (0: none
/// wider than its access).
pub fn max_store(requesters: &[RequesterSpec]) -> u32 {
    requesters.iter().filter_map(|r| r.workload.kernel.as_ref()?.largest_store()).map(|(b, _)| b).max().unwrap_or(0)
}

/// A validated system, ready to build and run.
#[derive(Debug, Clone)]
pub struct SystemSpec {
    pub name: String,
    pub seed: u64,
    pub max_time: Time,
    pub fabric: FabricConfig,
    pub topology: Topology,
    pub requesters: Vec<RequesterSpec>,
    pub memories: Vec<MemorySpec>,
    /// The configuration after overrides, with defaults filled in (for records).
    pub resolved: serde_json::Value,
    /// A coherence protocol to run instead of the request/response workload.
    pub protocol: Option<ProtocolSpec>,
    /// What looks like a slip in a valid configuration (a cache size in
    /// decimal units, a set count that is not a power of two); a run
    /// reports them with its own warnings.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct ProtocolSpec {
    /// The family's name in the registry.
    pub name: String,
    pub program: Option<Arc<crate::programs::Program>>,
    pub model: crate::programs::Model,
    pub timing: Timing,
    pub driver: Driver,
    /// German: data values.
    pub values: usize,
    pub assert_invariants: bool,
    /// Workload-driven msi/mesi: lines in the address space.
    pub locs: usize,
    /// `protocol.interleave` in lines (msi, mesi; cord and dcoh keep theirs).
    pub granule: u64,
    pub cache: Option<crate::agents::coherence::directory::CacheShape>,
    pub mshrs: u16,
    /// Placement: per core, its index in the system's requesters; per home, in its memories.
    pub cores: Vec<usize>,
    pub homes: Vec<usize>,
    /// The family's own parameters (`[protocol.<name>]`, resolved), for
    /// its timed builder (`Family::timed`).
    pub params: crate::agents::family::RunParams,
}

/// Timing parameters every protocol's agents share.
#[derive(Debug, Clone)]
pub struct Timing {
    pub cache_latency: Time,
    pub directory_latency: Time,
    pub memory_latency: Time,
    pub control_bytes: u32,
    pub data_bytes: u32,
    /// Payload bytes of a data message (the line).
    pub line_bytes: u32,
    pub issue_interval: Time,
    /// Workload-driven cores: instructions the core front end dispatches
    /// per `issue_interval` (its cycle).
    pub width: u32,
    /// Home occupancy per handled message (0: none).
    pub service: Time,
    /// Messages a home holds per virtual channel.
    pub queue: usize,
    /// Entries of a workload-driven core's TSO store buffer (0: none; the
    /// protocol's own front end orders the stores): the store buffer of the
    /// shared core front end ([`crate::agents::core`]).
    pub store_buffer: usize,
    /// `[protocol.core]`: the front end's parameters and private levels
    /// (None: the driver's stand-ins, [`crate::sim::protocol::driver_front`], and no levels).
    pub core: Option<CoreSpec>,
}

/// A workload-driven core's front end and its private cache levels
/// (`[protocol.core]`, docs/core.md).
#[derive(Debug, Clone, PartialEq)]
pub struct CoreSpec {
    pub front: front::Params,
    /// L1, then L2 (an L2 only with an L1).
    pub l1: Option<LevelSpec>,
    pub l2: Option<LevelSpec>,
}

/// A private cache level: tags only, inclusive in the protocol's cache.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelSpec {
    pub geometry: CacheGeometry,
    pub policy: VictimPolicy,
    /// Load-to-use latency of a hit, from issue.
    pub latency: Time,
    /// Accesses that missed this level at once (L1: the front end's fill
    /// buffers, which `front.fill_buffers` holds).
    pub mshrs: u32,
}

impl Timing {
    /// Bytes on the wire of a message carrying `lines` lines of data: the
    /// control part once, a data part per line.
    pub fn message_bytes(&self, lines: u32) -> u32 {
        self.control_bytes + lines * self.data_bytes.saturating_sub(self.control_bytes)
    }
}

/// What drives the cores (defined with the families, which build on it).
pub use crate::agents::family::Driver;
