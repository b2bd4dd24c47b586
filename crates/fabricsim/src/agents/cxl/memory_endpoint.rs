//! A memory endpoint: a device controller with a fixed processing latency
//! in front of its media. The media is either a data path of fixed
//! bandwidth serving requests in arrival order (`model = "fixed"`, the
//! default), or a DRAM with channels, banks, row buffers and an FR-FCFS
//! scheduler per channel (`model = "dram"`, see [`crate::agents::memory::dram`]).
//! Requests beyond its queue (or, for a DRAM, beyond their channel's
//! queue) wait in the fabric, which back-pressures the senders through
//! credits.

use std::collections::VecDeque;

use super::messages::{MemMsg, MsgKind};
use crate::agents::memory::dram::{Dram, DramParams, Issued};
use crate::engine::units::Bandwidth;
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
    /// The DRAM media (`model = "dram"`), with the requests it holds.
    pub dram: Option<DramMedia>,
}

/// A DRAM behind the controller and the requests it holds, in slots
/// allocated up front (one per request the endpoint may hold).
pub struct DramMedia {
    pub dram: Dram,
    slots: Vec<MemMsg>,
    free: Vec<u32>,
}

impl MemoryEndpoint {
    pub fn new(latency: Time, bandwidth: Bandwidth, queue: u32) -> Self {
        Self {
            latency,
            bandwidth,
            queue,
            holding: 0,
            busy_until: 0,
            waiting: VecDeque::new(),
            served: 0,
            busy_ps: 0,
            dram: None,
        }
    }

    /// An endpoint whose media is a DRAM; `latency` is the controller
    /// overhead added to every access, `queue` the requests it holds in all.
    pub fn with_dram(latency: Time, queue: u32, params: DramParams) -> Self {
        let mut m = Self::new(latency, Bandwidth::parse("inf").expect("valid literal"), queue);
        let blank = MemMsg {
            kind: MsgKind::ReadReq,
            requester: 0,
            tag: 0,
            addr: 0,
            bytes: 0,
            created: 0,
            queued: 0,
            fabric_wait: 0,
        };
        m.dram = Some(DramMedia {
            dram: Dram::new(params),
            slots: vec![blank; queue as usize],
            free: (0..queue).rev().collect(),
        });
        m
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
            // Performed, not answered: the caller sends nothing back.
            MsgKind::PostedWrite => MsgKind::PostedWrite,
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

    /// DRAM: whether a request whose media address is `addr` fits now (the
    /// endpoint's queue and its channel's read queue, or write queue for a
    /// write, have room).
    pub fn dram_has_room(&self, addr: u64, write: bool) -> bool {
        let d = self.dram.as_ref().expect("a DRAM endpoint");
        self.holding < self.queue && d.dram.has_room(d.dram.channel_of(addr), write)
    }

    /// DRAM: accept a request at `now` (media address `addr`); returns its
    /// channel, which the caller must step at `now`.
    pub fn dram_accept(&mut self, now: Time, req: MemMsg, addr: u64) -> u32 {
        assert!(
            matches!(req.kind, MsgKind::ReadReq | MsgKind::WriteReq | MsgKind::PostedWrite),
            "memory endpoint received a {:?}",
            req.kind
        );
        self.holding += 1;
        let d = self.dram.as_mut().expect("a DRAM endpoint");
        let slot = d.free.pop().expect("a free slot while holding < queue");
        d.slots[slot as usize] = req;
        d.dram.enqueue(now, slot, addr, req.bytes, req.kind != MsgKind::ReadReq)
    }

    /// DRAM: the column command of a request issued; returns the request's
    /// slot and when its response is ready to leave (the last data beat
    /// plus the controller overhead).
    pub fn dram_issued(&mut self, i: Issued) -> (u32, Time) {
        let d = self.dram.as_mut().expect("a DRAM endpoint");
        d.slots[i.id as usize].queued += i.queued;
        (i.id, i.done + self.latency)
    }

    /// DRAM: the response of slot `slot` leaves; frees its slot.
    pub fn dram_respond(&mut self, slot: u32) -> MemMsg {
        let d = self.dram.as_mut().expect("a DRAM endpoint");
        let req = d.slots[slot as usize];
        d.free.push(slot);
        self.busy_ps = d.dram.stats.bus_busy_ps;
        self.release();
        let kind = match req.kind {
            MsgKind::ReadReq => MsgKind::ReadResp,
            MsgKind::PostedWrite => MsgKind::PostedWrite,
            _ => MsgKind::WriteAck,
        };
        MemMsg { kind, ..req }
    }
}
