//! PCIe transactions between a NIC's queue pairs and the host, and the
//! host's coherence behind the root complex (seed 003, Table 1 as channels).
//!
//! | VC | name      | messages                                   | order               |
//! |----|-----------|--------------------------------------------|---------------------|
//! | 0  | nonposted | MemRd, MemWr (QP -> RC or switch), Fwd     | FIFO per (src, dst) |
//! | 1  | cpl       | Cpl, MmioAck, Nack, Retry, P2pFree         | any                 |
//! | 2  | wc        | MmioWr (host core -> RC)                   | FIFO per (core, RC) |
//! | 3  | posted    | DevWr (RC -> the NIC's device)             | FIFO per (RC, dev)  |
//! | 4  | creq      | GetS, GetM, PutS, PutM (-> the directory)  | any                 |
//! | 5  | cfwd      | FwdGetS, FwdGetM, Inv, PutAck (directory ->) | any               |
//! | 6  | cresp     | Data, InvAck, CopyBack, Unblock            | any                 |
//! | 7  | relaxed   | DevWr to a ROB at the NIC                  | any                 |
//!
//! A QP's reads and DMA writes reach the root complex in the order it
//! issued them (one link, one VC: a posted write is passed by nothing),
//! but the host serves reads in any order (a hit overtakes a miss, L98),
//! so R→R is not kept (Table 1) unless the RLSQ keeps it.
//!
//! Behind the root complex the host is a MESI domain (`host.rs`): host
//! cores' private caches and the root complex are requesters of one
//! blocking directory, on the three unordered virtual networks of
//! `coherence::directory` (`creq`, `cfwd`, `cresp`), carried as
//! [`Msg::Coh`]. The blocking directory serialises each line's
//! transactions, so an Inv for a host write that followed the root
//! complex's read of the line is sent after that read's Data arrived.
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

use crate::agents::coherence::directory;
use crate::agents::protocol::AgentId;
use crate::programs::Value;

pub const NONPOSTED: u8 = 0;
pub const CPL: u8 = 1;
pub const WC: u8 = 2;
pub const POSTED: u8 = 3;
/// The first of the host domain's three virtual networks (requests,
/// forwarded requests, responses: `directory::REQ`, `FWD`, `RESP` from here).
pub const COH: u8 = 4;
pub const RELAXED: u8 = 7;

/// Channel names, by VC (for traffic tables).
pub const CHANNELS: [&str; 8] = ["nonposted", "cpl", "wc", "posted", "creq", "cfwd", "cresp", "relaxed"];

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
    MemRd { tag: Tag, loc: Loc, acq: bool },
    /// A DMA write of one line (posted: no completion); `rel`: the
    /// relaxed-ordering bit read as release (§4.1): it is performed after
    /// every earlier request of the QP. Without `rel` a write may be
    /// performed in any order under the RLSQ; today's PCIe keeps W→W.
    MemWr { tag: Tag, loc: Loc, val: Value, rel: bool },
    /// Its completion with the line's value.
    Cpl { tag: Tag, val: Value },
    /// The host's coherence (host cores' caches, the root complex and the
    /// directory): MESI's messages, on `COH + directory::Msg::vc()`.
    Coh(directory::Msg),
    /// A host core's 64 B MMIO write (a flushed write-combining line), with
    /// its sequence number and virtual network (§5.2: relaxed stores and
    /// releases apart).
    MmioWr { seq: Seq, rel: bool, loc: Loc, val: Value },
    /// The root complex took an MMIO write (fence mode) or let it leave the
    /// ROB (a credit of the write's virtual network: `rel`).
    MmioAck { rel: bool },
    /// The write posted to the device (with its core's sequence number, for
    /// a ROB at the NIC).
    DevWr { core: AgentId, seq: Seq, rel: bool, loc: Loc, val: Value },
    /// P2P: the switch forwards a queue pair's read to its destination.
    Fwd { qp: AgentId, tag: Tag, loc: Loc, acq: bool },
    /// P2P: the switch's queue is full; the queue pair keeps the read and
    /// sends nothing new until the switch invites it back (`Retry`).
    Nack { tag: Tag, loc: Loc, acq: bool },
    /// P2P: the switch holds a place for one refused read of this queue pair.
    Retry,
    /// P2P: that read, sent again into its place.
    Resend { tag: Tag, loc: Loc, acq: bool },
    /// P2P: the device finished a read; the switch may send it the next.
    P2pFree,
}

impl From<directory::Msg> for Msg {
    #[inline]
    fn from(m: directory::Msg) -> Self {
        Msg::Coh(m)
    }
}
