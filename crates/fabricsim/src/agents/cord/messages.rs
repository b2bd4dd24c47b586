//! CORD's messages (Algorithms 1 and 2) and the write-through family's
//! channels.
//!
//! | VC | name  | messages                    | order                  |
//! |----|-------|-----------------------------|------------------------|
//! | 0  | wt    | RlxST, Rd (core -> dir)     | FIFO per (core, dir)   |
//! | 1  | rel   | RelST (core -> dir)         | any                    |
//! | 2  | ack   | Ack, RelAck (dir -> core)   | any                    |
//! | 3  | noti  | ReqNoti (core -> dir), Noti (dir -> dir) | any       |
//! | 4  | data  | RdData (dir -> core)        | any                    |
//!
//! Relaxed write-throughs and reads from one core to one directory keep
//! their order (one path through the fabric per pair), which keeps a
//! core's stores and loads to one address in program order without acks.
//! Releases travel apart and may overtake them: that is what CORD's store
//! counters are for (the paper's Fig 4 shows a Release arriving first).

use crate::agents::protocol::AgentId;
use crate::programs::Value;

pub const WT: u8 = 0;
pub const REL: u8 = 1;
pub const ACK: u8 = 2;
pub const NOTI: u8 = 3;
pub const DATA: u8 = 4;

/// Channel names, by VC (for traffic tables).
pub const CHANNELS: [&str; 5] = ["wt", "rel", "ack", "noti", "data"];

/// A line (timing) or a program location (checking).
pub type Loc = u32;
/// An epoch or a store count, already reduced to its bit width.
pub type Num = u32;

/// What a Release writes: a line and value, or nothing (an "empty"
/// Release: a barrier, an epoch split).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Write {
    pub loc: Loc,
    pub val: Value,
    /// Payload bytes (timing: the store's size).
    pub bytes: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    /// Relaxed write-through store. CORD: `ep` is the core's epoch; SO
    /// asks for an `Ack` (`acked`); MP posts it (a Release too, on the same
    /// ordered channel).
    RlxST {
        w: Write,
        ep: Num,
        acked: bool,
        op: u8,
    },
    /// Release store (or an empty Release). CORD: commit when the
    /// directory counted `cnt` Relaxed stores of epoch `ep`, the core's
    /// previous Release here (`prev`) committed, and `noti` notifications
    /// arrived. SO: commit at once (the core waited for its acks).
    RelST {
        w: Option<Write>,
        ep: Num,
        cnt: Num,
        prev: Option<Num>,
        noti: u8,
    },
    /// Request for notification: once this directory counted `cnt` Relaxed
    /// stores of epoch `ep` and `prev` committed, notify directory `dst`.
    ReqNoti {
        ep: Num,
        cnt: Num,
        prev: Option<Num>,
        dst: u8,
    },
    /// One pending directory is done with core `pid`'s epoch `ep`.
    Noti {
        pid: AgentId,
        ep: Num,
    },
    /// SO: a Relaxed store committed (`op`: the program operation).
    Ack {
        op: u8,
    },
    /// A Release of epoch `ep` committed.
    RelAck {
        ep: Num,
    },
    /// Read a line at its home (loads are not cached: source-ordered).
    Rd {
        loc: Loc,
        op: u8,
    },
    RdData {
        loc: Loc,
        val: Value,
        op: u8,
    },
}

impl Msg {
    /// Payload bytes the message carries (its data), for its size on the wire.
    pub fn payload(&self, line: u32) -> u32 {
        match self {
            Msg::RlxST { w, .. } | Msg::RelST { w: Some(w), .. } => w.bytes,
            Msg::RdData { .. } => line,
            _ => 0,
        }
    }
}
