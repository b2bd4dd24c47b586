//! The DRAM behind a protocol's home agent (`model = "dram"` on the
//! home's memory node).
//!
//! A home handler that reads memory (`Ctx::memory_read`) holds its sends
//! until the read completes: they leave at the later of the DRAM's last
//! data beat plus the controller overhead and the directory's own latency
//! (the directory lookup and the memory read overlap, as a home agent that
//! reads memory speculatively does). A write-back (`Ctx::memory_write`)
//! occupies the DRAM and holds nothing.
//!
//! Requests wait in front of a full channel queue in arrival order. That
//! queue is not bounded here: what can reach it is bounded by the cores'
//! outstanding misses and the home's `directory_queue`.

use std::collections::VecDeque;

use crate::agents::memory::{Dram, DramParams, DramStats};
use crate::engine::Time;

pub struct HomeDram {
    pub dram: Dram,
    /// Controller overhead per access, after the last data beat.
    pub controller: Time,
    line_bytes: u32,
    /// Per request: the leave slots its read holds (kept to reuse their capacity).
    held: Vec<Vec<u32>>,
    /// Per request: the earliest time its sends may leave.
    earliest: Vec<Time>,
    /// Per request: a write-back (else a read).
    write: Vec<bool>,
    free: Vec<u32>,
    /// Requests waiting for room in their channel's queue: (request, address).
    waiting: VecDeque<(u32, u64)>,
    pub reads: u64,
    pub writes: u64,
}

impl HomeDram {
    pub fn new(params: DramParams, controller: Time, line_bytes: u32) -> Self {
        HomeDram {
            dram: Dram::new(params),
            controller,
            line_bytes: line_bytes.max(1),
            held: Vec::new(),
            earliest: Vec::new(),
            write: Vec::new(),
            free: Vec::new(),
            waiting: VecDeque::new(),
            reads: 0,
            writes: 0,
        }
    }

    /// Open a request for `line`; the caller fills its held sends with
    /// [`HomeDram::hold`], then calls [`HomeDram::submit`].
    pub fn open(&mut self, earliest: Time, read: bool) -> u32 {
        if read {
            self.reads += 1;
        } else {
            self.writes += 1;
        }
        let r = match self.free.pop() {
            Some(r) => r,
            None => {
                self.held.push(Vec::new());
                self.earliest.push(0);
                self.write.push(false);
                (self.held.len() - 1) as u32
            }
        };
        self.held[r as usize].clear();
        self.earliest[r as usize] = earliest;
        self.write[r as usize] = !read;
        r
    }

    pub fn hold(&mut self, r: u32, leave_slot: u32) {
        self.held[r as usize].push(leave_slot);
    }

    /// Queue request `r` for `line` at `now`: returns the channel to step,
    /// or None if it waits for room (a channel ahead of it is full).
    pub fn submit(&mut self, now: Time, r: u32, line: u64) -> Option<u32> {
        let addr = line * self.line_bytes as u64;
        let write = self.write[r as usize];
        if self.waiting.is_empty() && self.dram.has_room(self.dram.channel_of(addr), write) {
            Some(self.dram.enqueue(now, r, addr, self.line_bytes, write))
        } else {
            self.waiting.push_back((r, addr));
            None
        }
    }

    /// Move waiting requests into their channels while the first fits;
    /// returns the channels to step.
    pub fn admit(&mut self, now: Time, channels: &mut Vec<u32>) {
        while let Some(&(r, addr)) = self.waiting.front() {
            let write = self.write[r as usize];
            if !self.dram.has_room(self.dram.channel_of(addr), write) {
                break;
            }
            self.waiting.pop_front();
            channels.push(self.dram.enqueue(now, r, addr, self.line_bytes, write));
        }
    }

    /// Request `r` completed at `now`: when its held sends leave. The
    /// caller reads them with [`HomeDram::held`] and frees the request
    /// with [`HomeDram::close`].
    pub fn leave_at(&self, r: u32, now: Time) -> Time {
        now.max(self.earliest[r as usize])
    }

    pub fn held(&self, r: u32) -> &[u32] {
        &self.held[r as usize]
    }

    pub fn close(&mut self, r: u32) {
        self.free.push(r);
    }

    pub fn stats(&self) -> DramStats {
        self.dram.stats
    }
}
