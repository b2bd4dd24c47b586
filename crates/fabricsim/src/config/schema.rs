//! The configuration file's structure. Every table denies unknown keys, and
//! every optional key has its default written here, next to its name, so
//! the schema is the documentation (see docs/config.md).

use serde::{Deserialize, Serialize};

use super::units::{Bandwidth, Duration, Size};
// The kinds a layer below config acts on are defined there; a config names them.
pub use crate::fabric::kinds::{DeadlockAvoidance, Duplex, RoutingAlgorithm, Spread, SwitchQueueing, TopologyKind};
pub use crate::fabric::params::{BufferSize, FabricConfig};
pub use crate::workloads::kinds::{Arrival, Injection, Pattern};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default = "default_name")]
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub sim: SimConfig,
    #[serde(default)]
    pub fabric: FabricConfig,
    #[serde(default)]
    pub defaults: Defaults,
    pub topology: Option<TopologyConfig>,
    #[serde(default)]
    pub switch: Vec<SwitchConfig>,
    #[serde(default)]
    pub requester: Vec<RequesterConfig>,
    #[serde(default)]
    pub memory: Vec<MemoryConfig>,
    #[serde(default)]
    pub link: Vec<LinkConfig>,
    #[serde(default)]
    pub workload: WorkloadConfig,
    /// Run a coherence protocol on the fabric instead of request/response
    /// traffic: caches are the requesters, directories the memories.
    pub protocol: Option<ProtocolConfig>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProtocolConfig {
    /// A registered protocol family (`fabricsim protocols` lists them).
    pub name: String,
    /// A litmus file whose threads the cores run (relative to this file).
    pub program: Option<String>,
    /// What the cores do: `program` (the litmus file's threads), `workload`
    /// (the `[workload]` pattern) or `random` (a random enabled request
    /// each issue interval). Default: `program` with a program, else the
    /// family's first driver (`fabricsim protocols` lists each family's).
    pub driver: Option<String>,
    /// Core front end: `sc`, `tso` or `rc`.
    #[serde(default = "default_model")]
    pub model: String,
    #[serde(default = "default_cache_latency")]
    pub cache_latency: Duration,
    #[serde(default = "default_directory_latency")]
    pub directory_latency: Duration,
    /// A home's memory read on a memory node with `model = "fixed"` (default
    /// 40 ns); a `model = "dram"` node times it with its DRAM instead.
    pub memory_latency: Option<Duration>,
    /// Placement: the requester that hosts each core and the memory that
    /// hosts each home, in the protocol's agent order (default: in order).
    pub cores: Option<Vec<String>>,
    pub homes: Option<Vec<String>>,
    /// Size of a message without data, and of one with a line of data.
    #[serde(default = "default_control_bytes")]
    pub control_bytes: Size,
    #[serde(default = "default_data_bytes")]
    pub data_bytes: Size,
    /// Time between two operations a core issues (an in-order issue
    /// stage). Default 1 ns; none (0) when `[protocol.core]` gives a
    /// `preset` or a `clock`: its dispatch width and cycle pace the core.
    pub issue_interval: Option<Duration>,
    /// Workload-driven cores: instructions the core front end dispatches
    /// per `issue_interval` (default 1).
    pub width: Option<u32>,
    /// A home's occupancy per message it handles (0: none).
    #[serde(default = "default_directory_service")]
    pub directory_service: Duration,
    /// Messages a home holds per virtual channel; more wait in the fabric.
    #[serde(default = "default_directory_queue")]
    pub directory_queue: u32,
    /// German: data values (DATA_NUM).
    #[serde(default = "default_values")]
    pub values: u32,
    /// Check the protocol's invariants after every handler (slower).
    #[serde(default)]
    pub assert_invariants: bool,
    /// Workload-driven caches with a capacity (`[protocol.cache]`: size,
    /// line, ways, hit_latency, mshrs, policy); without it a cache holds
    /// every line it touches, as when checked.
    pub cache: Option<crate::agents::cache::CacheParams>,
    /// Moved to `[protocol.dcoh]` (read only to say so).
    #[serde(default, skip_serializing)]
    pub snoop_filter: Option<toml::Value>,
    /// Moved to `[protocol.dcoh]` (read only to say so).
    #[serde(default, skip_serializing)]
    pub invblk: Option<toml::Value>,
    /// dcoh, cord, msi, mesi: address interleaving granule over the
    /// devices or directories (default: one line).
    pub interleave: Option<Size>,
    /// Workload-driven cores under `model = "tso"` (not cord, which has
    /// its own): entries of each core's FIFO store buffer (default 16).
    pub store_buffer: Option<u32>,
    /// Moved to `[protocol.dcoh]` (read only to say so).
    #[serde(default, skip_serializing)]
    pub hdm_h: Option<toml::Value>,
    // `[protocol.<name>]`, the family's own table, is its family's to read
    // (`Family::RunTable`, in the family's folder): `load_config` sets it
    // aside before this struct is read.
    /// Workload-driven cores: the core front end's sizes and private cache
    /// levels in front of the protocol's cache (`[protocol.core]`,
    /// docs/core.md).
    pub core: Option<CoreConfig>,
}

/// `[protocol.core]`: a workload-driven core's front end. Every key is
/// optional; an absent one keeps the driver's stand-in (docs/config.md).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CoreConfig {
    /// A named core (docs/cpu-presets.md): its front end and, for
    /// protocols whose core agent is a cache, its L1 and L2; the other keys
    /// override single values of it.
    pub preset: Option<String>,
    /// Reorder buffer entries.
    pub rob: Option<u32>,
    /// Instructions dispatched per cycle (as `protocol.width`).
    pub width: Option<u32>,
    /// Load queue entries.
    pub load_queue: Option<u32>,
    /// Fill buffers: operations that miss the first level at once.
    pub fill_buffers: Option<u32>,
    /// TSO store buffer entries (as `protocol.store_buffer`).
    pub store_buffer: Option<u32>,
    /// Write-combining buffers.
    pub wc_buffers: Option<u32>,
    /// The core's cycle time (a Duration, e.g. "400ps" for 2.5 GHz).
    pub clock: Option<Duration>,
    /// Private levels in front of the protocol's cache, tags only.
    pub l1: Option<LevelConfig>,
    pub l2: Option<LevelConfig>,
}

/// `[protocol.core.l1]`, `[protocol.core.l2]`: a private cache level.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LevelConfig {
    /// Capacity (required), a whole number of the protocol's lines.
    pub size: Size,
    /// Associativity (default 8; "full": one set).
    pub ways: Option<crate::agents::cache::Ways>,
    /// Load-to-use latency of a hit in this level, from issue (required).
    pub latency: Duration,
    /// Miss entries: accesses that missed this level at once (l1: the
    /// front end's fill buffers; l2: default 16).
    pub mshrs: Option<u32>,
    /// Victim policy (default lru).
    #[serde(default)]
    pub policy: crate::agents::cache::VictimPolicy,
}

fn default_directory_service() -> Duration {
    Duration(0)
}
fn default_directory_queue() -> u32 {
    16
}
fn default_values() -> u32 {
    2
}
fn default_model() -> String {
    "sc".into()
}
fn default_directory_latency() -> Duration {
    Duration(10 * crate::engine::NS)
}
fn default_control_bytes() -> Size {
    Size(16)
}
fn default_data_bytes() -> Size {
    Size(80)
}

fn default_name() -> String {
    "unnamed".to_string()
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Seed of every random stream in the run.
    #[serde(default = "one")]
    pub seed: u64,
    /// Simulated time at which the run stops even if work remains.
    #[serde(default = "default_max_time")]
    pub max_time: Duration,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self { seed: 1, max_time: default_max_time() }
    }
}

fn one() -> u64 {
    1
}
fn default_max_time() -> Duration {
    Duration(crate::engine::S)
}

/// Defaults for every component of a kind; each explicit component may
/// override any of them. Latencies default to ESF's Table III.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    #[serde(default)]
    pub link: LinkParams,
    #[serde(default)]
    pub switch: SwitchParams,
    #[serde(default)]
    pub requester: RequesterParams,
    #[serde(default)]
    pub memory: MemoryParams,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkParams {
    #[serde(default = "default_link_bw")]
    pub bandwidth: Bandwidth,
    /// Bus time (ESF Table III: 1 ns).
    #[serde(default = "default_bus_time")]
    pub latency: Duration,
    /// Delay of each PCIe port crossed; a traversal crosses two (ESF Table III: 25 ns).
    #[serde(default = "default_port_delay")]
    pub port_delay: Duration,
    #[serde(default = "default_duplex")]
    pub duplex: Duplex,
    /// Time to reverse a half-duplex link's direction.
    #[serde(default)]
    pub turnaround: Duration,
}

impl Default for LinkParams {
    fn default() -> Self {
        Self {
            bandwidth: default_link_bw(),
            latency: default_bus_time(),
            port_delay: default_port_delay(),
            duplex: default_duplex(),
            turnaround: Duration(0),
        }
    }
}

fn default_link_bw() -> Bandwidth {
    Bandwidth::parse("PCIe5x16").expect("valid literal")
}
fn default_bus_time() -> Duration {
    Duration(crate::engine::NS)
}
fn default_port_delay() -> Duration {
    Duration(25 * crate::engine::NS)
}
fn default_duplex() -> Duplex {
    Duplex::Full
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchParams {
    /// Switching time from ingress to egress (ESF Table III: 20 ns).
    #[serde(default = "default_switch_latency")]
    pub latency: Duration,
}

impl Default for SwitchParams {
    fn default() -> Self {
        Self { latency: default_switch_latency() }
    }
}

fn default_switch_latency() -> Duration {
    Duration(20 * crate::engine::NS)
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RequesterParams {
    /// Requester processing before a request enters the fabric (ESF Table III: 10 ns).
    #[serde(default = "default_issue_latency")]
    pub issue_latency: Duration,
    /// Cache access when a response returns (ESF Table III: 12 ns).
    #[serde(default = "default_cache_latency")]
    pub cache_latency: Duration,
}

impl Default for RequesterParams {
    fn default() -> Self {
        Self { issue_latency: default_issue_latency(), cache_latency: default_cache_latency() }
    }
}

fn default_issue_latency() -> Duration {
    Duration(10 * crate::engine::NS)
}
fn default_cache_latency() -> Duration {
    Duration(12 * crate::engine::NS)
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryParams {
    /// Device controller processing (ESF Table III: 40 ns).
    #[serde(default = "default_memory_latency")]
    pub latency: Duration,
    /// Data-path bandwidth of the media behind the controller (one DDR5-4800 channel by default).
    #[serde(default = "default_memory_bw")]
    pub bandwidth: Bandwidth,
    /// Requests the controller holds at once; more wait in the fabric (back-pressure).
    #[serde(default = "default_memory_queue")]
    pub queue: u32,
    /// Media model: `fixed` (latency + bandwidth, the default) or `dram`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<MemoryModel>,
    // DRAM keys (model = "dram" only; see docs/dram.md).
    /// Preset: `DDR4-2400`, `DDR4-3200` or `DDR5-4800` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    /// Banks per rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub banks: Option<u32>,
    /// Row buffer of one rank on one channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_size: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<PagePolicy>,
    /// Address fields, most significant first, e.g. `row:rank:bank:column:channel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping: Option<String>,
    /// Requests each channel's scheduler holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_queue: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trcd: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcl: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trp: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tras: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tburst: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trfc: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trefi: Option<Duration>,
    /// Bank groups per rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_groups: Option<u32>,
    /// Writes each channel's write queue holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_queue: Option<u32>,
    /// Writes queued at which a drain starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_high: Option<u32>,
    /// Writes queued at which a drain stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_low: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tck: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcwl: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tccd_s: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tccd_l: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trrd_s: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trrd_l: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tfaw: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twr: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twtr_s: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twtr_l: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trtp: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trtrs: Option<Duration>,
    /// Controller clocks between a request's arrival and its first command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontend: Option<u32>,
}

impl Default for MemoryParams {
    fn default() -> Self {
        toml::Table::new().try_into().expect("defaults deserialize")
    }
}

/// The media model of a memory endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryModel {
    /// A controller latency in front of a data path of fixed bandwidth.
    Fixed,
    /// Channels, ranks, banks, row buffers, JEDEC timings, FR-FCFS.
    Dram,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PagePolicy {
    Open,
    Closed,
}

/// The DRAM keys of `[defaults.memory]` and `[[memory]]`, by name, for
/// checks that treat them alike.
pub const DRAM_KEYS: [&str; 32] = [
    "dram",
    "channels",
    "ranks",
    "banks",
    "row_size",
    "page",
    "mapping",
    "channel_queue",
    "trcd",
    "tcl",
    "trp",
    "tras",
    "tburst",
    "trfc",
    "trefi",
    "bank_groups",
    "write_queue",
    "write_high",
    "write_low",
    "tck",
    "tcwl",
    "tccd_s",
    "tccd_l",
    "trrd_s",
    "trrd_l",
    "tfaw",
    "twr",
    "twtr_s",
    "twtr_l",
    "trtp",
    "trtrs",
    "frontend",
];

fn default_memory_latency() -> Duration {
    Duration(40 * crate::engine::NS)
}
fn default_memory_bw() -> Bandwidth {
    Bandwidth::parse("38.4GB/s").expect("valid literal")
}
fn default_memory_queue() -> u32 {
    64
}

/// A generated fabric: switches joined in a shape, with requesters and
/// memories attached to its edge switches in turn.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyConfig {
    pub kind: TopologyKind,
    /// Switches of a chain, ring or fully-connected fabric.
    pub switches: Option<u32>,
    /// Tree: children per switch, and levels below the root.
    pub arity: Option<u32>,
    pub depth: Option<u32>,
    /// Spine-leaf.
    pub spines: Option<u32>,
    pub leaves: Option<u32>,
    /// Mesh and torus.
    pub rows: Option<u32>,
    pub cols: Option<u32>,
    /// Requesters (`req0`, `req1`, ...) and memories (`mem0`, ...) to attach.
    #[serde(default)]
    pub requesters: u32,
    #[serde(default)]
    pub memories: u32,
    /// How endpoints spread over the edge switches.
    #[serde(default = "default_attach")]
    pub attach: Attach,
    /// Bandwidth of the generated switch-to-switch links; endpoint links
    /// keep `[defaults.link]`'s (ESF Fig 12's iso-bisection systems widen
    /// or narrow the fabric, not the edge ports). Left out of the resolved
    /// configuration when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch_link_bandwidth: Option<Bandwidth>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Attach {
    /// Requester i and memory i both go to edge switch i mod E.
    Interleave,
    /// Requesters fill the first half of the edge switches, memories the
    /// second half, so requester-to-memory traffic crosses the fabric.
    Split,
}

fn default_attach() -> Attach {
    Attach::Interleave
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    pub name: String,
    pub latency: Option<Duration>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RequesterConfig {
    pub name: String,
    pub issue_latency: Option<Duration>,
    pub cache_latency: Option<Duration>,
    /// Keys of `[workload]` to override for this requester only.
    pub workload: Option<toml::Table>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    pub name: String,
    pub latency: Option<Duration>,
    pub bandwidth: Option<Bandwidth>,
    pub queue: Option<u32>,
    /// Media model: `fixed` (latency + bandwidth, the default) or `dram`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<MemoryModel>,
    // DRAM keys (model = "dram" only; see docs/dram.md).
    /// Preset: `DDR4-2400`, `DDR4-3200` or `DDR5-4800` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    /// Banks per rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub banks: Option<u32>,
    /// Row buffer of one rank on one channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_size: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<PagePolicy>,
    /// Address fields, most significant first, e.g. `row:rank:bank:column:channel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping: Option<String>,
    /// Requests each channel's scheduler holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_queue: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trcd: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcl: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trp: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tras: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tburst: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trfc: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trefi: Option<Duration>,
    /// Bank groups per rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_groups: Option<u32>,
    /// Writes each channel's write queue holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_queue: Option<u32>,
    /// Writes queued at which a drain starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_high: Option<u32>,
    /// Writes queued at which a drain stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_low: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tck: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcwl: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tccd_s: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tccd_l: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trrd_s: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trrd_l: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tfaw: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twr: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twtr_s: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twtr_l: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trtp: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trtrs: Option<Duration>,
    /// Controller clocks between a request's arrival and its first command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontend: Option<u32>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub a: String,
    pub b: String,
    pub bandwidth: Option<Bandwidth>,
    pub latency: Option<Duration>,
    pub port_delay: Option<Duration>,
    pub duplex: Option<Duplex>,
    pub turnaround: Option<Duration>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// A generic pattern or a kernel's (`workloads::kernels`), whose keys
    /// are in `[workload.<pattern>]`.
    #[serde(default = "default_pattern")]
    pub pattern: String,
    /// Measured requests per requester (trace: ignored, the trace decides).
    #[serde(default = "default_requests")]
    pub requests: u64,
    /// Requests per requester issued before measurement starts.
    #[serde(default)]
    pub warmup: u64,
    /// Fraction of requests that are reads.
    #[serde(default = "default_read_fraction")]
    pub read_fraction: f64,
    /// Payload of a data message (a cache line).
    #[serde(default = "default_line")]
    pub line: Size,
    /// ESF's header overhead: a message without payload (read request,
    /// write acknowledgement) is this fraction of `line`.
    #[serde(default)]
    pub header_overhead: f64,
    /// Extra header bytes on messages that carry data.
    #[serde(default)]
    pub data_header: Size,
    #[serde(default = "default_injection")]
    pub injection: Injection,
    /// Closed loop: outstanding requests per requester.
    #[serde(default = "default_window")]
    pub window: u32,
    /// Open loop: mean time between issues (or give `rate`).
    pub interval: Option<Duration>,
    /// Open loop: offered payload bandwidth per requester (or give `interval`).
    pub rate: Option<Bandwidth>,
    #[serde(default = "default_arrival")]
    pub arrival: Arrival,
    /// Address range the requests cover.
    #[serde(default = "default_footprint")]
    pub footprint: Size,
    /// Granularity of address interleaving across memories.
    #[serde(default = "default_interleave")]
    pub interleave: Size,
    #[serde(default = "default_hot_fraction")]
    pub hot_fraction: f64,
    #[serde(default = "default_hot_probability")]
    pub hot_probability: f64,
    /// Memories the requests go to (default: all).
    pub targets: Option<Vec<String>>,
    /// Trace file, relative to the configuration file.
    pub trace: Option<String>,
    /// Writes are posted (PCIe's posted writes, CORD's MP): the memory
    /// performs them and sends no acknowledgement; the requester's window
    /// slot frees when the write enters the fabric.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub posted_writes: bool,
    /// Protocol workload-driven cores: instructions that are not memory
    /// operations before each operation (default 0), dispatched at the
    /// core's `[protocol] width` per `issue_interval`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
    /// Protocol workload-driven cores: the fraction of loads whose address
    /// comes from the previous load (a pointer chase at 1; default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependent: Option<f64>,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        toml::Table::new().try_into().expect("defaults deserialize")
    }
}

fn default_pattern() -> String {
    "uniform".into()
}
fn default_requests() -> u64 {
    1000
}
fn default_read_fraction() -> f64 {
    1.0
}
fn default_line() -> Size {
    Size(64)
}
fn default_injection() -> Injection {
    Injection::Closed
}
fn default_window() -> u32 {
    16
}
fn default_arrival() -> Arrival {
    Arrival::Poisson
}
fn default_footprint() -> Size {
    Size(1 << 30)
}
fn default_interleave() -> Size {
    Size(4096)
}
fn default_hot_fraction() -> f64 {
    0.1
}
fn default_hot_probability() -> f64 {
    0.9
}
