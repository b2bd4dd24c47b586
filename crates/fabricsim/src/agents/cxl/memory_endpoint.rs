//! A memory endpoint: a device controller with a fixed processing latency
//! in front of a media data path of fixed bandwidth, serving requests in
//! arrival order. Requests beyond its queue wait in the fabric, which
//! back-pressures the senders through credits.

use std::collections::VecDeque;

use super::messages::{MemMsg, MsgKind};
use crate::config::units::Bandwidth;
use crate::engine::Time;
use crate::fabric::PacketId;

pub struct MemoryEndpoint {
    pub latency: Time,
    pub bandwidth: Bandwidth,
    pub queue: u32,
    /// Requests accepted and not yet answered.
    pub holding: u32,
    /// Time the media data path is free again.
    busy_until: Time,
    /// Delivered packets that did not fit in the queue yet.
    pub waiting: VecDeque<PacketId>,
    pub served: u64,
    pub busy_ps: Time,
}

impl MemoryEndpoint {
    pub fn new(latency: Time, bandwidth: Bandwidth, queue: u32) -> Self {
        Self { latency, bandwidth, queue, holding: 0, busy_until: 0, waiting: VecDeque::new(), served: 0, busy_ps: 0 }
    }

    pub fn has_room(&self) -> bool {
        self.holding < self.queue
    }

    /// Accept a request at `now`; returns the response and when it is
    /// ready to leave, with the time the request queued for the media.
    pub fn accept(&mut self, now: Time, req: MemMsg) -> (MemMsg, Time) {
        self.holding += 1;
        let start = now.max(self.busy_until);
        let service = self.bandwidth.serialize(req.bytes as u64);
        self.busy_until = start + service;
        self.busy_ps += service;
        let kind = match req.kind {
            MsgKind::ReadReq => MsgKind::ReadResp,
            MsgKind::WriteReq => MsgKind::WriteAck,
            other => unreachable!("memory endpoint received a {other:?}"),
        };
        let resp = MemMsg { kind, queued: req.queued + (start - now), ..req };
        (resp, start + service + self.latency)
    }

    /// The response left: room for one more request.
    pub fn release(&mut self) {
        self.holding -= 1;
        self.served += 1;
    }
}
