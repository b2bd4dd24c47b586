use crate::engine::Time;

/// Message kinds of the request/response protocol. The discriminant is the
/// fabric's message class, so traffic is counted per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum MsgKind {
    ReadReq = 0,
    WriteReq = 1,
    ReadResp = 2,
    WriteAck = 3,
    /// A write without acknowledgement (PCIe's posted write, CORD's MP).
    PostedWrite = 4,
}

impl MsgKind {
    pub const ALL: [MsgKind; 5] =
        [MsgKind::ReadReq, MsgKind::WriteReq, MsgKind::ReadResp, MsgKind::WriteAck, MsgKind::PostedWrite];

    pub fn name(self) -> &'static str {
        match self {
            MsgKind::ReadReq => "read_req",
            MsgKind::WriteReq => "write_req",
            MsgKind::ReadResp => "read_resp",
            MsgKind::WriteAck => "write_ack",
            MsgKind::PostedWrite => "posted_write",
        }
    }

    /// Requests and responses use separate virtual-channel classes so a
    /// response can never wait behind a request (protocol deadlock).
    pub fn vc_class(self) -> u8 {
        match self {
            MsgKind::ReadReq | MsgKind::WriteReq | MsgKind::PostedWrite => 0,
            MsgKind::ReadResp | MsgKind::WriteAck => 1,
        }
    }

    pub fn carries_data(self) -> bool {
        matches!(self, MsgKind::WriteReq | MsgKind::ReadResp | MsgKind::PostedWrite)
    }
}

pub const VC_CLASSES: usize = 2;

/// A request or its response as it travels the fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemMsg {
    pub kind: MsgKind,
    /// Index of the requester (not its node).
    pub requester: u32,
    /// The requester's sequence number of this request.
    pub tag: u64,
    pub addr: u64,
    /// Payload bytes the request moves.
    pub bytes: u32,
    /// When the requester created the request.
    pub created: Time,
    /// Queueing delay accumulated so far (fabric queues, memory queue).
    pub queued: Time,
    /// The fabric-queue part of `queued` (so a memory's queue can be told
    /// apart from the switches' in the per-hop breakdown).
    pub fabric_wait: Time,
}
