//! Bounded Incoherence (seed 001, issue 16): the machine the paper runs on,
//! coherence domains (sockets) that are coherent inside and **not** across,
//! sharing a global memory, with the explicit cache operations (clflush,
//! clflushopt, clwb, mfence) as messages with their costs. The BI runtime
//! of Figs 7–9 is a protocol-independent state machine (`runtime.rs`,
//! slice 3 of docs/design/bi.md), checked exhaustively by `check.rs`
//! (`fabricsim check` with protocol = "bi_runtime", slice 4), and run by
//! the timed cores (`program.rs`: a line's value is a version of its
//! words): BI Table 1's tree (`tree.rs`) and its U-RCU baseline on the
//! coherent machine (`urcu.rs`).
//!
//! Agents: cores `0..D*C` (domain-major: core `k` of domain `d` is
//! `d*C + k`), then one LLC per domain, then the global memories.
//!
//! `protocol.rs` holds the messages, the agents' states and the `Protocol`
//! impl; each agent's handlers are in its own file.
//!
//! - **Core** (`core.rs`; its micro-benchmarks in `bench.rs`): an in-order core with a private
//!   L1 (tags only, for its hit time) inside a private L2 that holds the
//!   line's MESI state and data (L1 ⊂ L2: an L2 victim leaves the L1
//!   too). Every miss a core has in flight (a load's, a store's or an
//!   exchange's ownership request, a flush or write-back) holds one of its
//!   L1 fill buffers (`fill_buffers`, the preset's; `front.rs`). A benchmark
//!   core's loads go one at a time except Fig 12's loader's, which are
//!   independent and overlap up to the fill buffers; a load or store that
//!   hits costs the level's latency. A program
//!   core asks the shared core front end (`front.rs`, the `skylake-sp`
//!   preset's window, width, load queue and fill buffers) when each
//!   micro-op may go; its stores may retire into a store buffer
//!   (`store_buffer.rs`). A dirty L2 victim is written back (`PutM`) and waits in a
//!   write-back buffer for its `PutAck`, which answers any recall
//!   meanwhile. Clean victims leave silently.
//! - **LLC** (`llc.rs`): the domain's shared L3 and its MESI directory in one
//!   inclusive, blocking structure: per line the sharers or the owner, the
//!   data and whether it is dirty, and at most one transaction (later
//!   requests on the line wait in their channel). An L3 victim with
//!   holders in the domain is recalled from them before it is written back
//!   (back-invalidation); the line's requests wait meanwhile. A miss reads
//!   the line's home memory: **no other domain is snooped**, so a line
//!   cached in a domain stays readable however stale it is, until a flush
//!   or an eviction drops it.
//! - **Memory** (`protocol.rs`): a non-coherent global-memory home (one per socket; lines
//!   are interleaved over them in ranges of `interleave` lines, default
//!   1 GiB: each socket's memory is a contiguous range, as a NUMA node's).
//!   It keeps no sharer state: `MemRd` → `MemData`, `MemWr` → `MemWrAck`.
//!   (docs/design/bi.md proposed 4 KiB pages; with the caches indexing
//!   their sets by line address, one socket's lines would then fall in
//!   1/8 of the sets of an 8-socket machine's caches, a conflict-miss
//!   artifact the real machine's address hashing does not have.)
//!
//! **Coherent mode** (`coherent = true`, `home.rs`): the machine the paper
//! runs its baselines on (U-RCU, stock PowerGraph), coherent across
//! domains. Each global memory is also the **home directory** of its
//! lines (per line: the owning domain, or the sharer domains), and each
//! LLC's directory is its client: an LLC miss asks the home for S
//! (`MemRd`) or M (`MemRdX`), a store to a line the domain holds S is an
//! upgrade, the home snoops the owner (downgrade) or every sharer domain
//! (invalidate), a snooped LLC recalls the line from its cores before it
//! answers, and the data goes through the home (`Grant`, then `MemDone`).
//! Clean L3 victims leave silently (the home tolerates stale records);
//! flushes act on every domain. Channels `snoop` and `home_resp` are added
//! (the non-coherent machine keeps its five). The user front ends of the
//! baselines (U-RCU, MPI-like rings) are not here yet.
//!
//! Explicit cache operations (§2.2, §7.1 of the paper):
//! - `clflush(line)`: the core drops its copy (a dirty one goes with the
//!   request and waits in the write-back buffer), and sends `Flush{inv}` to
//!   its LLC, which invalidates the line in **every cache of the domain**
//!   (sharers ack; an owner returns its data), writes a dirty line to its
//!   home memory (`MemWr`, acked by the memory) and answers `FlushAck`. A
//!   line the domain does not hold is **broadcast** to every other core of
//!   the domain, and costs `broadcast` more ("the current core is not able
//!   to ascertain other cores' cache-line status, it has to broadcast",
//!   §2.2). Serialising: the core issues nothing until its `FlushAck`.
//! - `clflushopt(line)`: the same transaction, pipelined: each in flight
//!   holds a fill buffer (`fill_buffers`, shared with the core's other
//!   misses); the core goes on after `flush_issue`.
//! - `clwb(line)`: `Flush{inv: false}`: a dirty line is written back and
//!   every copy stays, clean (`clwb_invalidates` makes it a clflushopt, as
//!   Intel allows).
//! - `mfence`: waits for every flush in flight, then costs `fence`.
//!
//! Why the MSI/MESI directory of `coherence::directory` is not reused as
//! is: its home *is* the memory (a miss never leaves the directory), its
//! caches have one level, and it has no flush transaction. Here the
//! directory lives in the LLC, which is itself a client of a non-coherent
//! global memory, must recall private copies on its own evictions, and
//! must invalidate a domain on a flush, including lines it has no record
//! of. The same Primer-style blocking directory is written again for that
//! shape; its stable states are the same MESI states, and the checker
//! checks the same single-writer invariant inside each domain.
//!
//! In coherent mode a flush acts on the whole machine (x86: every cache of
//! the coherence domain): the LLC sends it to the line's home, which snoops
//! every domain holding the line (`home.rs`); nothing is broadcast.
//!
//! Modelling choices (also in the experiments' notes):
//! - The LLC is inclusive of the private caches (Skylake-SP's L3 is not,
//!   but its snoop filter is; here the L3 is both), and the L2 is
//!   inclusive of the L1.
//! - A core issues a load or store of a line only when no flush of that
//!   line is in flight (x86 orders a clflushopt with later accesses to the
//!   same line).
//! - A write-back is complete when the memory has accepted it
//!   (`memory_write`), and a memory accepts one line at a time
//!   (`writeback_service`): the bandwidth of one stream of write-backs.
//! - Fabric bandwidth is that of the system's links; the latencies of a
//!   load are the protocol's parameters plus the links' latencies (the
//!   Superdome Flex system of the experiments puts the remote premium on
//!   the socket and enclosure links).

mod bench;
pub mod check;
mod core;
pub mod family;
mod front;
mod home;
mod lines;
mod llc;
mod pack;
pub mod program;
mod protocol;
pub mod runtime;
mod store_buffer;
pub mod table;
mod text;
pub mod tree;
pub mod urcu;

pub use home::{HLine, Home};
pub use lines::Lines;
pub use protocol::{Action, Bi, Core, Ghost, LLine, Level, Llc, Mp, Msg, Node, Shapes, CHANNELS};

use crate::agents::core::presets::{self, Preset};
use crate::engine::{Time, NS};

/// Cores one domain's directory can name (its sharer set is a 64-bit mask).
pub const MAX_DOMAIN_CORES: usize = 64;

/// The machine's core: the `skylake-sp` preset (docs/cpu-presets.md cites
/// each value). BI's L1 and L2 hit times, its fill buffers (which every
/// miss of a core holds: loads, ownership requests, flushes), its program
/// cores' store buffer and its clock come from it, so BI and the preset
/// cannot disagree.
pub const CORE: &Preset = &presets::SKYLAKE_SP;

/// The core's cycle time (2.5 GHz, BI §7).
pub const CYCLE: Time = CORE.core.cycle;

/// Calibrated costs (docs/design/bi.md §4; none is in the paper, which
/// gives only the cache sizes and the 2.5 GHz clock). Each is a key of
/// `[protocol.bi]`. The core's own (L1, L2, `fill_buffers`) are the
/// preset's ([`CORE`]); the others are BI's, cited here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// L1 hit: the preset's L1 latency at its clock.
    pub l1_latency: Time,
    /// L2 hit: the preset's L2 latency at its clock.
    pub l2_latency: Time,
    /// L3 hit: 22 ns (AnandTech, "Intel Skylake-EP vs AMD EPYC 7000",
    /// memory latency table, lmbench on Skylake-SP: 16-32 MB "25-27 ns",
    /// 4-8 MB "54-56" cycles ≈ 22 ns).
    pub l3_latency: Time,
    /// A load from the socket's own memory, idle: 90 ns (same table:
    /// "89-91 ns", DDR4-2666; qdpma.com: "89ns for local").
    pub memory_latency: Time,
    /// A memory accepting a written-back line, from the LLC's request to
    /// its ack: 30 ns (an estimate: the mesh to the memory controller and
    /// back, about a third of a read's uncore time; confidence L).
    pub memory_write: Time,
    /// A memory's time per line written back, one at a time: 10 ns
    /// (6.4 GB/s, about one core's write-back stream on Skylake-SP;
    /// confidence L). Makes clflushopt of modified lines the dearest (§7.1).
    pub writeback_service: Time,
    /// The core's time to issue one clflushopt or clwb: 1 ns (the
    /// clflushopt throughput of 44717 MiB/s ≈ 1.4 ns/line in
    /// tanakamura's gist a3728e0b; confidence M).
    pub flush_issue: Time,
    /// Misses in flight per core: the preset's L1 fill buffers. Every miss
    /// holds one until its data or ack arrives: a load's, a store's or an
    /// exchange's ownership request (RFO), a clflush/clflushopt/clwb. On
    /// Intel cores an L1D miss of a load or a store allocates a line fill
    /// buffer, and lines leaving L1D (write-backs) go through them too
    /// (stackoverflow.com/q/49959963, "Where is the Write-Combining Buffer
    /// located?", Peter Cordes' answer); that a flush holds one as an
    /// eviction does is this model's reading (confidence M). Intel
    /// Optimization Manual §7.4.7: clflushopt's throughput is about 9×
    /// clflush's.
    pub fill_buffers: u16,
    /// A flush of a line its domain does not hold: 40 ns more for the
    /// broadcast and every core's answer (isec-tugraz/flush_flush#13:
    /// "flushing data that is not in the cache takes 100 more cycles";
    /// the paper's §2.2 explanation).
    pub broadcast: Time,
    /// mfence once the flushes it waits for are done: 33 cycles of the
    /// core's clock = 13.2 ns (Agner Fog's instruction tables, Skylake:
    /// MFENCE reciprocal throughput ≈ 33; confidence L).
    pub fence: Time,
    /// clwb invalidates like clflushopt (Intel: "may retain … may invalidate").
    pub clwb_invalidates: bool,
    /// A flush of a line the domain does not hold is broadcast (§2.2).
    pub broadcast_on_miss: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            l1_latency: CORE.l1.latency(CYCLE),
            l2_latency: CORE.l2.latency(CYCLE),
            l3_latency: 22 * NS,
            memory_latency: 90 * NS,
            memory_write: 30 * NS,
            writeback_service: 10 * NS,
            flush_issue: NS,
            fill_buffers: CORE.core.fill_buffers as u16,
            broadcast: 40 * NS,
            fence: 33 * CYCLE,
            clwb_invalidates: false,
            broadcast_on_miss: true,
        }
    }
}

/// The explicit cache operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlushOp {
    Clflush,
    Clflushopt,
    Clwb,
}

impl FlushOp {
    pub const ALL: [FlushOp; 3] = [FlushOp::Clflush, FlushOp::Clflushopt, FlushOp::Clwb];

    pub fn name(self) -> &'static str {
        match self {
            FlushOp::Clflush => "clflush",
            FlushOp::Clflushopt => "clflushopt",
            FlushOp::Clwb => "clwb",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.name() == s)
    }
}

/// The state a flush benchmark leaves its lines in before the measured
/// operations (Fig 3B, Fig 11): read (r), modified (m), or not cached (i).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineState {
    Read,
    Modified,
    Invalid,
}

impl LineState {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "r" => Some(LineState::Read),
            "m" => Some(LineState::Modified),
            "i" => Some(LineState::Invalid),
            _ => None,
        }
    }
}

/// A micro-benchmark domain 0's first core runs on its own (with, for
/// Fig 12B, domain 0's second core as the flusher; `[protocol.bi.bench]`;
/// timing only). The others stay idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bench {
    /// `ops` loads of lines `0..lines` (random, or in order), each preceded
    /// by a clflush of its line when `flush`. With `warm`, the caches start
    /// holding the lines as an earlier pass over them leaves them.
    Read { lines: u64, ops: u64, flush: bool, sequential: bool, warm: bool },
    /// `reps` times: leave `lines` lines in `state`, then measure `op` on
    /// each and one mfence (and, with `reread`, a load of each after).
    Flush { op: FlushOp, state: LineState, lines: u64, reps: u64, reread: bool },
    /// Fig 12: random loads over lines `0..lines` by domain 0's first core
    /// for `periods` periods of `period`, with every line of the working
    /// set invalidated (`op` on each, then mfence) at the start of each
    /// period, by the loading core or by domain 0's second core (`mode`).
    /// With `settle` > 0,
    /// a loader that has made `settle` loads since the last invalidation
    /// (its refills are over) idles to the next one: the time it idles is
    /// reported, and the figure counts it at the steady load rate. The
    /// first `skip` periods are not measured (they bring the caches to the
    /// state the periodic invalidation keeps them in). The loader's loads
    /// are independent (their addresses come from a generator, not from
    /// the data): they overlap up to the core's fill buffers (`fill_buffers`,
    /// shared with its flushes), unless `dependent` (a pointer chase: one
    /// at a time). The other benchmarks' loads are a chain (Fig 3A's
    /// latency walk) and go one at a time.
    Periodic {
        lines: u64,
        mode: FlushMode,
        op: FlushOp,
        period: Time,
        periods: u64,
        skip: u64,
        settle: u64,
        dependent: bool,
        warm: bool,
    },
}

/// Who invalidates the working set, and when (BI Fig 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlushMode {
    /// No invalidation: the steady load rate.
    NoFlush,
    /// Every period, on the loading core (12A: its time is taken from the loads).
    Same,
    /// Every period, on another core of the domain (12B).
    Other,
    /// Each line right after its load, by the loading core (a flush then an mfence).
    Aggressive,
}

impl FlushMode {
    pub const ALL: [FlushMode; 4] = [FlushMode::NoFlush, FlushMode::Same, FlushMode::Other, FlushMode::Aggressive];

    pub fn name(self) -> &'static str {
        match self {
            FlushMode::NoFlush => "noflush",
            FlushMode::Same => "same",
            FlushMode::Other => "other",
            FlushMode::Aggressive => "aggressive",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// Deliberately broken machines the reproduction tests run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mutant {
    /// clflush and clflushopt write back but do not invalidate.
    FlushKeepsLine,
    /// clwb leaves a modified line dirty (nothing is written back).
    ClwbNoWriteback,
    /// The private caches and the L3 have no capacity: every line a core
    /// touched stays in its L1.
    NoCapacity,
    /// Coherent mode: the home grants M without invalidating the domains
    /// that share the line (it still recalls an owner's).
    HomeForgetsSharer,
    /// A flush invalidates (and writes back) the issuing core's private
    /// copy only: the domain's other cores and its L3 keep theirs (BI Fig
    /// 12B's loss comes from the other cores' copies going).
    FlushCoreLocal,
    /// Coherent mode: the home snoops every domain on a flush, whether it
    /// holds the line or not (a machine without a directory), so a flush
    /// leaves its socket (BI Fig 11's "limited only to their own socket").
    FlushBroadcast,
}

pub const MUTANTS: [(&str, Mutant); 6] = [
    ("flush-keeps-line", Mutant::FlushKeepsLine),
    ("clwb-no-writeback", Mutant::ClwbNoWriteback),
    ("no-capacity", Mutant::NoCapacity),
    ("home-forgets-sharer", Mutant::HomeForgetsSharer),
    ("flush-core-local", Mutant::FlushCoreLocal),
    ("flush-broadcast-machine-wide", Mutant::FlushBroadcast),
];

#[cfg(test)]
mod tests;
