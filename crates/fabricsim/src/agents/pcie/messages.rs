//! PCIe transactions between a NIC's queue pairs and the host, and the
//! host side behind the root complex (seed 003, Table 1 as channels).
//!
//! | VC | name      | messages                              | order                |
//! |----|-----------|---------------------------------------|----------------------|
//! | 0  | host      | HostWr, HostRd (host core -> memory)  | FIFO per (core, mem) |
//! | 1  | nonposted | MemRd (QP -> RC or switch), Fwd       | FIFO per (src, dst)  |
//! | 2  | cpl       | Cpl, HostData, MmioAck, Nack, P2pFree | any                  |
//! | 3  | rd        | Rd (RC -> memory)                     | any                  |
//! | 4  | coh       | Data, Inv (memory -> RC)              | FIFO per (mem, RC)   |
//! | 5  | wc        | MmioWr (host core -> RC)              | FIFO per (core, RC)  |
//! | 6  | posted    | DevWr (RC -> the NIC's device)        | FIFO per (RC, dev)   |
//! | 7  | wr        | Wr, ordered (RC -> memory)            | FIFO per (RC, mem)   |
//! | 8  | relaxed   | DevWr to a ROB at the NIC             | any                  |
//!
//! A QP's reads and DMA writes reach the root complex in the order it
//! issued them (one link, one VC: a posted write is passed by nothing),
//! but the host serves reads in any order (a hit overtakes
//! a miss, L98), so R→R is not kept (Table 1) unless the RLSQ keeps it. A
//! host core's accesses reach memory in program order (its stores and
//! loads share one ordered channel: the host side is kept simple here, see
//! `mod.rs`). Memory answers the root complex and invalidates its
//! speculative copies on one ordered channel, so an Inv for a write that
//! followed a read arrives after that read's Data.
//!
//! MMIO (§5.2): a host core's write-combining buffers drain in any order
//! (the core picks the line to flush), then the lines travel in order to
//! the root complex (`wc`), which posts them to the device in order
//! (`posted`: W→W kept, Table 1) and answers the core (`MmioAck` on
//! `cpl`: what an `sfence` waits for, and a ROB credit).
//!
//! P2P (§6.6): the NIC's reads cross a switch (`Fwd`) to the root complex
//! or to a slow P2P device; a full switch queue answers `Nack` and the
//! queue pair sends it again (`Resend`) when the switch has a place for it
//! (`Retry`).

use crate::agents::protocol::AgentId;
use crate::workloads::program::Value;

pub const HOST: u8 = 0;
pub const NONPOSTED: u8 = 1;
pub const CPL: u8 = 2;
pub const RD: u8 = 3;
pub const COH: u8 = 4;
pub const WC: u8 = 5;
pub const POSTED: u8 = 6;
pub const WR: u8 = 7;
pub const RELAXED: u8 = 8;

/// Channel names, by VC (for traffic tables).
pub const CHANNELS: [&str; 9] = ["host", "nonposted", "cpl", "rd", "coh", "wc", "posted", "wr", "relaxed"];

/// An MMIO write's sequence number (per core).
pub type Seq = u16;

/// A line (timing) or a program location (checking).
pub type Loc = u32;
/// A read's tag, unique among its QP's outstanding reads.
pub type Tag = u16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    /// A DMA read of one line; `acq`: the acquire bit (§4.1): later reads
    /// observe memory at or after it.
    MemRd {
        tag: Tag,
        loc: Loc,
        acq: bool,
    },
    /// A DMA write of one line (posted: no completion); `rel`: the
    /// relaxed-ordering bit read as release (§4.1): it is performed after
    /// every earlier request of the QP. Without `rel` a write may be
    /// performed in any order under the RLSQ; today's PCIe keeps W→W.
    MemWr {
        tag: Tag,
        loc: Loc,
        val: Value,
        rel: bool,
    },
    /// Its completion with the line's value.
    Cpl {
        tag: Tag,
        val: Value,
    },
    /// The root complex reads a line for an RLSQ entry (`qp`, `tag`).
    Rd {
        qp: AgentId,
        tag: Tag,
        loc: Loc,
    },
    /// The root complex performs an RLSQ entry's write (on `wr` in order
    /// under today's PCIe, on `rd` in any order under the RLSQ).
    Wr {
        qp: AgentId,
        tag: Tag,
        loc: Loc,
        val: Value,
    },
    /// Memory applied it.
    WrAck {
        qp: AgentId,
        tag: Tag,
    },
    /// Memory's answer to `Rd`.
    Data {
        qp: AgentId,
        tag: Tag,
        val: Value,
    },
    /// A host write to a line the root complex read since the last Inv:
    /// its speculative copies are stale (the RLSQ as a sharer, §5.1).
    Inv {
        loc: Loc,
    },
    /// A host core's store (posted) and load.
    HostWr {
        loc: Loc,
        val: Value,
    },
    HostRd {
        loc: Loc,
    },
    HostData {
        val: Value,
    },
    /// A host core's 64 B MMIO write (a flushed write-combining line), with
    /// its sequence number and virtual network (§5.2: relaxed stores and
    /// releases apart).
    MmioWr {
        seq: Seq,
        rel: bool,
        loc: Loc,
        val: Value,
    },
    /// The root complex took an MMIO write (fence mode) or let it leave the
    /// ROB (a credit of the write's virtual network: `rel`).
    MmioAck {
        rel: bool,
    },
    /// The write posted to the device (with its core's sequence number, for
    /// a ROB at the NIC).
    DevWr {
        core: AgentId,
        seq: Seq,
        rel: bool,
        loc: Loc,
        val: Value,
    },
    /// P2P: the switch forwards a queue pair's read to its destination.
    Fwd {
        qp: AgentId,
        tag: Tag,
        loc: Loc,
        acq: bool,
    },
    /// P2P: the switch's queue is full; the queue pair keeps the read and
    /// sends nothing new until the switch invites it back (`Retry`).
    Nack {
        tag: Tag,
        loc: Loc,
        acq: bool,
    },
    /// P2P: the switch holds a place for one refused read of this queue pair.
    Retry,
    /// P2P: that read, sent again into its place.
    Resend {
        tag: Tag,
        loc: Loc,
        acq: bool,
    },
    /// P2P: the device finished a read; the switch may send it the next.
    P2pFree,
}
