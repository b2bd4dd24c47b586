//! Write-through coherence across processing units, ordered at the source
//! or at the directory: CORD (Yu, Oswald and Khandelwal, ISCA'25) beside
//! source ordering (SO) and message passing (MP), as one [`Protocol`] —
//! timed on CORD's Table 1 system and checked small from the same agents.
//! (The paper's fourth scheme, source-ordered write-back, is the `mesi`
//! protocol with RC cores.)
//!
//! Agents: cores `0..C` (a processor: its memory-model front end and
//! CORD's processor tables), directories `C..C+D` (an LLC slice with its
//! directory and CORD's directory tables). Line `l`'s home is directory
//! `(l / granule) mod D`, or, for a litmus program, as the check names it.
//!
//! Processor (Algorithm 1; `processor.rs`):
//! - **Relaxed store**: CORD embeds the epoch, counts the store for its
//!   directory and sends RlxST; nothing waits for it. SO asks for an Ack
//!   and counts it outstanding. MP posts it.
//! - **Release store**: SO waits until every earlier store is acked, then
//!   sends RelST and waits for RelAck. CORD records the epoch unacked,
//!   sends RelST with the epoch, the store count for its directory, the
//!   last unacked Release there (`prev`) and the number of *pending*
//!   directories (a Relaxed store this epoch or an unacked Release), sends
//!   each pending directory a ReqNoti, then starts the next epoch. MP
//!   posts it on the ordered channel.
//! - **RelAck**: free the unacked entry. **Ack** (SO): one fewer outstanding.
//! - Loads read the line at its home (Rd/RdData): source-ordered, as §4.4
//!   keeps them. A release/SC fence is an empty Release (CORD) or a wait
//!   for every ack (SO); MP has no global fence.
//!
//! Directory (Algorithm 2; `directory.rs`):
//! - **RlxST**: commit; count it for (core, epoch). SO: Ack.
//! - **RelST**: commit when the count matches, `prev` committed and the
//!   notifications arrived; else keep it and retry (the paper's recycled
//!   Releases, held in the directory's buffer). On commit free the entries,
//!   record the largest committed epoch, RelAck.
//! - **ReqNoti**: when the count matches and `prev` committed, Noti the
//!   Release's directory and free the count; else keep it and retry.
//! - **Noti**: count it for (core, epoch).
//!
//! Bounded tables (§4.3): the processor's store counters (directories per
//! epoch) and unacked epochs, the directory's store and notification
//! counters per core; the core stalls a Release rather than overflow any
//! of them. Counters and epochs have bit widths and wrap.
//!
//! Modelling choices the paper does not make (stated again in the
//! experiment files):
//! - Relaxed stores and loads from one core to one directory arrive in
//!   order (see `messages.rs`); an access to a line with an unacked
//!   Release of the same core waits for its RelAck, which keeps one
//!   address's accesses in program order.
//! - When an epoch would overflow the processor's store-counter table (a
//!   Relaxed store to one directory too many) or a store counter (2^bits
//!   minus one stores to one directory), the core first issues an empty
//!   Release (an *epoch split*) instead of stalling.
//! - The directory's largest committed epoch cannot tell a Release from an
//!   older one to the same directory whose epoch number is equal modulo
//!   2^bits; the core remembers the last epoch it released to each
//!   directory and, in that case only, makes later Releases wait for the
//!   ack of the first (the checker finds the reordering without it).
//! - A release/SC fence sends one empty Release to one pending directory,
//!   notified by the others (its ack means every earlier store committed,
//!   which is what waiting for an empty Release per pending directory
//!   gives).

mod directory;
pub mod family;
pub mod messages;
mod pack;
mod processor;
mod protocol;
pub mod table;
pub mod tables;
mod text;

pub use directory::Dir;
pub use messages::{Loc, Msg, Num, CHANNELS};
pub use processor::{Proc, Unacked};
pub use protocol::{Action, Cord, Ghost, Node};

/// Which write-through ordering the system uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Source ordering: every write-through acked, a Release waits at the core.
    So,
    /// Directory ordering: epochs, store counters, notifications.
    Cord,
    /// Message passing: posted writes, ordered point to point only.
    Mp,
}

impl Variant {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "so" => Some(Variant::So),
            "cord" => Some(Variant::Cord),
            "mp" => Some(Variant::Mp),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Variant::So => "so",
            Variant::Cord => "cord",
            Variant::Mp => "mp",
        }
    }
}

/// Deliberately broken CORDs the checker must catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mutant {
    /// A Release commits without comparing the store counter.
    NoCounterCheck,
    /// A directory with only an unacked Release is not pending: no
    /// notification orders a later Release to another directory after it.
    NotiLost,
    /// Epochs compared as if they never wrapped (no alias wait).
    EpochNoWrap,
    /// Held Releases are retried oldest first only (no recycling).
    NoRecycle,
    /// The core does not stall a Release when a directory table is full.
    NoTableStall,
}

pub const MUTANTS: &[(&str, Mutant)] = &[
    ("no-counter-check", Mutant::NoCounterCheck),
    ("noti-lost", Mutant::NotiLost),
    ("epoch-no-wrap", Mutant::EpochNoWrap),
    ("no-recycle", Mutant::NoRecycle),
    ("no-table-stall", Mutant::NoTableStall),
];

pub fn mutant_by_name(name: &str) -> Option<Mutant> {
    MUTANTS.iter().find(|m| m.0 == name).map(|m| m.1)
}

/// CORD's table sizes and field widths (Table 3 and §4.1 as defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub epoch_bits: u8,
    pub counter_bits: u8,
    /// Processor: directories with Relaxed stores in one epoch.
    pub proc_counters: usize,
    /// Processor: unacked Releases.
    pub proc_unacked: usize,
    /// Directory, per core: store counters (epochs with Relaxed stores here).
    pub dir_counters: usize,
    /// Directory, per core: notification counters (Releases waiting here).
    pub dir_notis: usize,
    /// The SEQ-n ablation (§4.1, Fig 10) when non-zero: every request
    /// carries one `seq_bits`-bit sequence number instead of CORD's epoch
    /// and store counter, and when the numbers run out the core stalls
    /// until every earlier store is ordered (the last number goes on a
    /// Release; its ack restarts the numbering).
    pub seq_bits: u8,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            epoch_bits: 8,
            counter_bits: 32,
            proc_counters: 8,
            proc_unacked: 8,
            dir_counters: 8,
            dir_notis: 16,
            seq_bits: 0,
        }
    }
}

impl Params {
    pub fn epochs(&self) -> u64 {
        1u64 << self.epoch_bits
    }

    pub fn counts(&self) -> u64 {
        1u64 << self.counter_bits
    }

    /// SEQ-n: sequence numbers before the core must drain (0: not SEQ).
    pub fn seq_numbers(&self) -> u64 {
        match self.seq_bits {
            0 => 0,
            b if b >= 64 => u64::MAX,
            b => 1u64 << b,
        }
    }

    /// Why these widths and sizes cannot work, if they cannot: every live
    /// epoch (the unacked ones and the current) needs its own number.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=32).contains(&self.epoch_bits) {
            return Err(format!("epoch_bits = {}: expected 1 to 32", self.epoch_bits));
        }
        if self.seq_bits > 64 {
            return Err(format!("seq_bits = {}: expected 0 (CORD) or 1 to 64 (SEQ-n)", self.seq_bits));
        }
        if !(1..=32).contains(&self.counter_bits) {
            return Err(format!("counter_bits = {}: expected 1 to 32", self.counter_bits));
        }
        for (k, v) in [
            ("proc_counters", self.proc_counters),
            ("proc_unacked", self.proc_unacked),
            ("dir_counters", self.dir_counters),
            ("dir_notis", self.dir_notis),
        ] {
            if v == 0 || v > 4096 {
                return Err(format!("{k} = {v}: expected 1 to 4096 entries"));
            }
        }
        if self.proc_unacked as u64 + 1 > self.epochs() {
            return Err(format!(
                "proc_unacked = {} with epoch_bits = {}: {} unacked epochs and the current one need {} epoch \
                 numbers, but {} bits give {}; expected proc_unacked <= {}",
                self.proc_unacked,
                self.epoch_bits,
                self.proc_unacked,
                self.proc_unacked + 1,
                self.epoch_bits,
                self.epochs(),
                self.epochs() - 1
            ));
        }
        Ok(())
    }
}
