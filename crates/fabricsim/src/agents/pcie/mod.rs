//! Remote memory ordering for PCIe (seed 003): a NIC's queue pairs read
//! host memory through the root complex, whose RLSQ orders the reads at
//! the destination instead of at the NIC — as one [`Protocol`], timed on
//! the fabric and checked small from the same agents.
//!
//! Agents: cores `0..C`, each a NIC queue pair (QP) or a host core (a
//! litmus program names the QP threads), then the root complex (RC, agent
//! `C`) and the host memory (agent `C + 1`).
//!
//! - **QP** (`nic.rs`): issues DMA reads of one line, `MemRd` with the
//!   acquire bit (§4.1), and takes their `Cpl`s in any order. Under the
//!   `nic` variant (today's way to order reads) a read waits for the
//!   completion of every earlier acquire read: the NIC stops and waits.
//! - **Root complex** (`rc.rs`): the RLSQ, in arrival order, at most
//!   `rlsq_entries` (a full RLSQ leaves a read in its channel). Each entry
//!   reads memory (`Rd`/`Data`) and completes to its QP (§5.1):
//!   - `unordered` and `nic`: every entry reads at once and completes when
//!     its data returns (R→R not kept, Table 1);
//!   - `rc` (Release-Acquire): an entry reads only when no earlier acquire
//!     is still in the RLSQ, and completes when its data returns;
//!   - `thread` (thread-specific, §5.1): as `rc`, but an acquire holds back
//!     only the later reads of its own queue pair (the TLP's thread ID);
//!   - `rc-opt` (speculative): every entry reads at once; an entry
//!     completes when it has its data and no earlier acquire is still in
//!     the RLSQ. The RC is a sharer of what it read: a host write to such
//!     a line invalidates it (`Inv`) and every entry of that line holding
//!     data reads again — the squash, only of the conflicting reads.
//! - **Host memory** (`memory.rs`): serves reads in any order (a hit
//!   overtakes a miss), applies host cores' stores, and invalidates the
//!   RC's copies on a write to a line it read since the last `Inv`. Timed,
//!   a line a host core wrote stays in the host's cache: reading it costs
//!   no `memory_latency`, so it overtakes earlier misses (L98).
//! - **Host core** (`nic.rs`): a program thread whose stores and loads
//!   reach memory in program order.
//!
//! - **MMIO** (`nic.rs`, `rc.rs`, `dev.rs`; `mmio` mode): host cores'
//!   stores are MMIO writes; their write-combining lines leave in any
//!   order; the root complex posts them to the NIC's device (agent `C + 2`)
//!   on arrival (`fence`: the core's sfence waits for the root complex's
//!   answers; `unordered`) or in sequence-number order from its ROB
//!   (`rob`, with credits).
//! - **P2P** (`switch.rs`; `p2p` mode): the QPs' reads cross a switch
//!   (agent `C + 2`), with one shared queue or VOQs, to the root complex or
//!   a slow P2P device (agent `C + 3`); a full queue refuses a read and
//!   invites it back when a place frees.
//!
//! Modelling choices the paper does not make, stated here and in the
//! experiment files:
//! - The host is one memory agent: host cores write it in program order
//!   (a TSO or SC host's stores reach the coherence point in order); the
//!   RC's coherent access is one read of that memory (`Rd`), and the RC's
//!   sharer state is one bit per line at the memory. Timed, it is the
//!   host's L2 (`host_latency`) in front of DRAM (`memory_latency` more on
//!   a miss); MESI caches and a directory behind the root complex are not
//!   modelled.
//! - The RC's 17 ns (Table 2) is paid once per request from the PCIe bus
//!   (`rc_latency`); its other handlers cost nothing.
//! - QPs read only (DMA writes from the NIC are not modelled; the host's
//!   W→W order to the NIC is MMIO's).

mod dev;
mod memory;
pub mod messages;
mod nic;
mod pack;
mod protocol;
mod rc;
mod rob;
mod switch;

pub use messages::{Loc, Msg, Tag, CHANNELS};
pub use protocol::{Action, Ghost, Kind, Node, Pcie};

/// Where reads of one QP are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Today's PCIe: no acquire, reads in any order.
    Unordered,
    /// The NIC waits for an acquire read's completion (source ordering).
    Nic,
    /// The RLSQ issues nothing after an acquire until it completes.
    Rc,
    /// As `Rc`, per queue pair (thread ID).
    Thread,
    /// The RLSQ issues everything, completes in order, squashes on Inv.
    RcOpt,
}

impl Variant {
    pub const ALL: [Variant; 5] = [Variant::Unordered, Variant::Nic, Variant::Rc, Variant::Thread, Variant::RcOpt];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Variant::Unordered => "unordered",
            Variant::Nic => "nic",
            Variant::Rc => "rc",
            Variant::Thread => "thread",
            Variant::RcOpt => "rc-opt",
        }
    }
}

/// How a host core's MMIO writes reach the device in order (§5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mmio {
    /// Today's way: an `sfence` after each message waits until the root
    /// complex answered every write before it.
    Fence,
    /// Sequence numbers and a reorder buffer at the root complex: no
    /// stall; a write needs a credit (a free ROB entry).
    Rob,
    /// The same ROB at the NIC (§5.2: "ROBs at device endpoints"): the root
    /// complex and the bus may reorder; credits return from the NIC.
    RobNic,
    /// No fence and no order (incorrect: the lower bound on cost).
    Unordered,
}

impl Mmio {
    pub const ALL: [Mmio; 4] = [Mmio::Fence, Mmio::Rob, Mmio::RobNic, Mmio::Unordered];

    /// Ordered by sequence numbers in a ROB (the root complex's or the NIC's).
    pub fn rob(self) -> bool {
        matches!(self, Mmio::Rob | Mmio::RobNic)
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Mmio::Fence => "fence",
            Mmio::Rob => "rob",
            Mmio::RobNic => "rob-nic",
            Mmio::Unordered => "unordered",
        }
    }
}

/// Deliberately broken root complexes the checker must catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mutant {
    /// `rc`: an acquire does not hold back the reads after it.
    AcquireNoBlock,
    /// `rc-opt`: an Inv is acknowledged but the stale data is kept.
    NoSquash,
    /// MMIO `rob`: the core sends without a credit; a full ROB can wait for
    /// a write stuck behind the one it refuses.
    RobNoCredit,
    /// MMIO `rob`: the root complex posts each write on arrival.
    RobOnArrival,
    /// `rc`: a release write is performed at once, not after the requests
    /// before it.
    ReleaseNoWait,
    /// Every variant: a read is performed before the QP's earlier writes
    /// (W→R, kept by PCIe, broken).
    ReadPassesWrite,
}

/// The read and write mutants (`pcie-VARIANT+M@nic=T`), then the MMIO ones
/// (`pcie-mmio-rob+M`).
pub const MUTANTS: [(&str, Mutant); 6] = [
    ("acquire-no-block", Mutant::AcquireNoBlock),
    ("no-squash", Mutant::NoSquash),
    ("release-no-wait", Mutant::ReleaseNoWait),
    ("read-passes-write", Mutant::ReadPassesWrite),
    ("rob-no-credit", Mutant::RobNoCredit),
    ("rob-on-arrival", Mutant::RobOnArrival),
];

/// How many of [`MUTANTS`] are read and write mutants (the rest are MMIO's).
pub const RW_MUTANTS: usize = 4;
