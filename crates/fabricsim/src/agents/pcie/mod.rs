//! Remote memory ordering for PCIe (seed 003): a NIC's queue pairs read
//! host memory through the root complex, whose RLSQ orders the reads at
//! the destination instead of at the NIC — as one [`Protocol`], timed on
//! the fabric and checked small from the same agents.
//!
//! Agents: cores `0..C`, each a NIC queue pair (QP) or a host core (a
//! litmus program names the QP threads), then the root complex (RC, agent
//! `C`) and the host's home (agent `C + 1`: its directory, L2 and DRAM).
//!
//! - **QP** (`nic.rs`): issues DMA reads of one line, `MemRd` with the
//!   acquire bit (§4.1), and takes their `Cpl`s in any order; and DMA
//!   writes, `MemWr` (posted) with the release bit. Under the `nic`
//!   variant (today's way to order reads) a read waits for the completion
//!   of every earlier acquire read: the NIC stops and waits.
//! - **Root complex** (`rc.rs`): the RLSQ, in arrival order, at most
//!   `rlsq_entries` (a full RLSQ leaves a request in its channel). Each
//!   read entry reads the line coherently (`GetS` to the host directory)
//!   and completes to its QP (§5.1):
//!   - `unordered` and `nic`: every entry reads at once and completes when
//!     its data returns (R→R not kept, Table 1);
//!   - `rc` (Release-Acquire): an entry reads only when no earlier acquire
//!     is still in the RLSQ, and completes when its data returns;
//!   - `thread` (thread-specific, §5.1): as `rc`, but an acquire holds back
//!     only the later reads of its own queue pair (the TLP's thread ID);
//!   - `rc-opt` (speculative): every entry reads at once; an entry
//!     completes when it has its data and no earlier acquire is still in
//!     the RLSQ. The RC is a sharer of what it read: a host core's write
//!     to such a line reaches the directory, whose `Inv` makes every entry
//!     of that line holding data read again — the squash, only of the
//!     conflicting reads.
//!
//!   A write entry asks for ownership (`GetM`), collects the invalidation
//!   acks, commits its value when the ordering rules let it (`Unblock`,
//!   `PutM`: today in order among writes, W→W) and leaves at the `PutAck`.
//! - **Host** (`host.rs`): MESI (Sorin, Hill and Wood's Primer, the
//!   blocking directory of `coherence::directory`, whose handlers run it
//!   unchanged): each host core has a private write-back cache and runs
//!   its program in order (SC) or a workload; the home is the directory
//!   with the memory behind it. Timed, the home's L2 (Table 2: 256 KiB, 8
//!   ways) decides a read's cost: `host_latency` for a line on chip,
//!   `memory_latency` more from DRAM; a host core's fill and every
//!   write-back allocate, the RC's reads do not, and `host_cached` lines
//!   start there. A line a host core holds in M is served from its cache
//!   (`FwdGetS`).
//!
//! - **MMIO** (`nic.rs`, `rc.rs`, `dev.rs`; `mmio` mode): host cores'
//!   stores are MMIO writes; their write-combining lines leave in any
//!   order; the root complex posts them to the NIC's device (agent `C + 2`)
//!   on arrival (`fence`: the core's sfence waits for the root complex's
//!   answers; `unordered`) or in sequence-number order from its ROB
//!   (`rob`, with credits). The host's memory is idle.
//! - **P2P** (`switch.rs`; `p2p` mode): the QPs' reads cross a switch
//!   (agent `C + 2`), with one shared queue or VOQs, to the root complex or
//!   a slow P2P device (agent `C + 3`); a full queue refuses a read and
//!   invites it back when a place frees.
//!
//! Modelling choices the paper does not make, stated here and in the
//! experiment files:
//! - The RC is a coherent requester of the host directory, reusing MESI's
//!   messages and the directory's handlers as they are (the directory is
//!   `Directory::domain`: sharer bits from the first host core, the RC
//!   included; the RC never granted Exclusive). The RC's own side is not
//!   MESI's cache: an RLSQ entry is not a cache line (several entries may
//!   read one line, a squashed entry reads again, a write commits in
//!   RLSQ order), so `rc.rs` handles the same messages for its entries.
//!   The RC is a sharer of a line from its read until the directory
//!   invalidates it: it keeps no data once an entry completes (a later
//!   read asks the directory again, so reads cost what they cost before
//!   the host had caches), and an `Inv` finding no entry of the line is
//!   acknowledged at once — the directory's sharer set over-approximates
//!   the RLSQ's lines, as with caches that drop clean lines silently.
//! - One request per line is out from the RC at a time (as a cache's one
//!   MSHR per line): a later entry of the line waits for the earlier one's
//!   data (read) or `PutAck` (write). A read after its QP's write waits
//!   for that write's commit (W→R).
//! - A write holds its line at the directory from ownership to commit (the
//!   RC sends `Unblock` with its `PutM`), so no request reaches an RC that
//!   owns a line it has not written yet; a committed write answers a
//!   forwarded request with its value until the `PutAck`. Committing a
//!   write squashes the RC's own reads of the line that hold data.
//! - Host cores' caches hold every line they touch (no capacity); the
//!   directory is a full map over the footprint (`host_cores` ≤ 63: one
//!   sharer bit each and one for the RC); the L2 is non-inclusive and
//!   keeps no dirty state (a line's value lives in the directory's memory).
//! - The RC's 17 ns (Table 2) is paid once per request from the PCIe bus
//!   (`rc_latency`); its other handlers cost nothing. The home pays
//!   `host_latency` per message it handles.

mod dev;
pub mod family;
mod host;
pub mod messages;
mod nic;
mod pack;
mod protocol;
mod rc;
mod rob;
mod switch;
pub mod table;

pub use host::{Home, HostCore};
pub use messages::{Loc, Msg, Tag, CHANNELS};
pub use protocol::{Action, Ghost, Kind, Node, Pcie};
pub use rc::{Entry, Rc, St};

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
    /// The host directory never records the root complex as a sharer: a
    /// host write does not invalidate the RLSQ's copies.
    ForgetRc,
}

/// The read and write mutants (`pcie-VARIANT+M@nic=T`), then the MMIO ones
/// (`pcie-mmio-rob+M`).
pub const MUTANTS: [(&str, Mutant); 7] = [
    ("acquire-no-block", Mutant::AcquireNoBlock),
    ("no-squash", Mutant::NoSquash),
    ("release-no-wait", Mutant::ReleaseNoWait),
    ("read-passes-write", Mutant::ReadPassesWrite),
    ("forget-rc", Mutant::ForgetRc),
    ("rob-no-credit", Mutant::RobNoCredit),
    ("rob-on-arrival", Mutant::RobOnArrival),
];

/// How many of [`MUTANTS`] are read and write mutants (the rest are MMIO's).
pub const RW_MUTANTS: usize = 5;
