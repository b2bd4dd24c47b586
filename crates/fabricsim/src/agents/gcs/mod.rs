//! GCS (seed 004): reader-writer locks folded into MIND's directory MSI on
//! disaggregated memory — compute blades with page caches, one switch
//! holding the directory, a memory blade — as one [`Protocol`], timed on
//! the fabric and checked small from the same agents.
//!
//! Agents: threads `0..B*T` (thread `t` runs on blade `t / T`), then the
//! blades' cache controllers, the switch directory and the memory blade.
//!
//! - **Thread** (`thread.rs`): acquires one lock at a time, for reading
//!   (a request for S) or writing (M); in its critical section it reads
//!   the region the lock protects (and a writer writes it), then releases.
//! - **Blade** (`blade.rs`): the in-kernel cache controller. Per line it
//!   keeps the permission, the local readers and writer in their critical
//!   sections, the wait queue when it is the line's *queue holder* (§4.2),
//!   and the count of forwarded requests it received. A lock whose line it
//!   holds is acquired locally (locality, §3.3); a conflicting request from
//!   another blade waits in the holder's queue until the holder releases
//!   (temporal generalization, §3.1.1), and an invalidation of a line with
//!   readers inside waits for them.
//! - **Switch directory** (`directory.rs`): per line the state (I, S, M),
//!   the sharers, the queue holder, and the count of requests forwarded to
//!   it. A request meets no queue when no blade holds one (I→S, S→S, I→M,
//!   and S→M, which makes the requester the holder and invalidates the
//!   readers, case iii); otherwise it is forwarded to the holder. A queue
//!   hand-off (`Transfer`) is approved only if the holder received every
//!   request forwarded to it (the versioning of §4.2), else denied.
//! - **Memory blade** (`Node::Mem` in `protocol.rs`): the lines' data, read over RDMA.
//!
//! Each lock protects one region (`region` bytes, §4.3's single (m, s)
//! tuple) carried in the grant with the lock (combined data, §3.3). MIND's
//! own MSI is the same machine with a critical section of one access:
//! without combined data, the region sits on its own page-sized line that
//! the blade acquires after the lock and releases at once.
//!
//! Modelling choices the paper does not make (stated in the experiment
//! files too):
//! - The queue order is FIFO (the paper leaves it open); readers at the
//!   head of the queue are granted together, with the old writer keeping S
//!   (locality) and the first writer after them holding the rest.
//! - Memory data travels through the switch (the directory answers every
//!   request; MIND's switch is on every path), and the directory serves a
//!   line that waits for memory one request at a time.
//! - A page (MIND's MSI, without combined data) moves from its writer to
//!   the next through the memory blade: written back, then read; a lock's
//!   region moves straight from holder to holder in the grant.
//! - The blade's local lock queue is FIFO, and while its line's queue
//!   holds requests of other blades, a local acquire waits for the
//!   hand-off (no local barging).

mod blade;
mod directory;
pub mod family;
pub mod messages;
mod pack;
mod protocol;
pub mod table;
mod text;
mod thread;

pub use messages::{Msg, Queue, CHANNELS};
pub use protocol::{Action, Gcs, Ghost, Node};

/// Which of the paper's three schemes (§5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// GCS with both optimizations.
    Gcs,
    /// Without combined data: the grant carries the lock only; the region
    /// is a page fetched by MIND's MSI afterwards.
    NoData,
    /// Without locality: the lock and its data leave the blade at release.
    NoLocality,
    /// The layered baseline: glibc's `pthread_rwlock` on MIND's MSI. The
    /// lock word is a line of its own that every lock and unlock (a read
    /// lock too) writes, then the region's page is read or written.
    Pthread,
}

impl Variant {
    pub const ALL: [Variant; 4] = [Variant::Gcs, Variant::NoData, Variant::NoLocality, Variant::Pthread];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Variant::Gcs => "gcs",
            Variant::NoData => "no-data",
            Variant::NoLocality => "no-locality",
            Variant::Pthread => "pthread",
        }
    }
}

/// Deliberately broken GCS the checker must catch (issue: "at least three").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mutant {
    /// The switch approves a queue hand-off without comparing the
    /// forwarded and received counts: a request in flight to the old
    /// holder is lost.
    NoVersionCheck,
    /// The grant of a handed-off lock carries no data: the new holder
    /// reads its stale copy.
    GrantWithoutData,
    /// A reader blade acknowledges an invalidation at once, with readers
    /// still inside their critical sections.
    EarlyInvAck,
}

pub const MUTANTS: [(&str, Mutant); 3] = [
    ("no-version-check", Mutant::NoVersionCheck),
    ("grant-without-data", Mutant::GrantWithoutData),
    ("early-inv-ack", Mutant::EarlyInvAck),
];

/// Blades a queue can name (see [`Queue`]).
pub const MAX_BLADES: usize = 12;
