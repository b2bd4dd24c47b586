//! Remote stores between hosts (`pattern = "remote_stores"`): CORD's
//! synthetic workload (seed 000, §5.3 and its Table 2 applications as
//! stand-ins). Each sending core loops over *epochs*:
//!
//! 1. compute for `compute` (no operation issues);
//! 2. `release_every / store_size` Relaxed write-through stores of
//!    `store_size` bytes, round-robin over `fanout` other hosts' memories;
//! 3. one Release store of a flag word in the memory of one of those hosts
//!    (the next one each epoch).
//!
//! The cores and the memories are split evenly over `hosts` hosts, in file
//! order (core `c` is on host `c / (cores / hosts)`, memories likewise).
//! Sender `s` on host `h` writes to hosts `h+1 .. h+fanout` (mod `hosts`).
//! Its buffer in host `j` lies in one memory (LLC slice) of `j`: slice
//! `s mod slices-per-host`, so a sender's stores to one host reach one
//! directory (the paper: at fanout 1 CORD sends no notification). This
//! needs memories homed in blocks (`protocol.interleave` = footprint /
//! memories), as the example systems do.
//!
//! Consumers are not modelled: a receiver's Acquire poll of its flag is a
//! read of local memory that no write-through variant changes, so
//! only senders issue (a stated choice). `senders = "one"` runs the
//! paper's microbenchmark (one thread, core 0).
//!
//! A store of more than a line is one message (the paper's store
//! granularity up to 4 KB, "amortizing packetization overheads") at the
//! first of its lines; its lines are consecutive in the buffer.

use crate::agents::protocol::{OpKind, OpOrder, WorkOp};
use crate::engine::Time;

/// A flag is one word.
pub const FLAG_BYTES: u32 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub store_size: u64,
    pub release_every: u64,
    /// Other hosts each sender writes to.
    pub fanout: u32,
    pub hosts: u32,
    /// Picoseconds of computation before each epoch's stores.
    pub compute: Time,
    /// Only core 0 sends.
    pub one_sender: bool,
}

impl Shape {
    /// Lines of one sender's buffer in one host (its data then its flag), or
    /// an error naming what is too small.
    pub fn buffer_lines(&self, cores: u64, memories: u64, lines: u64) -> Result<u64, String> {
        let hosts = self.hosts as u64;
        if hosts < 2 || !cores.is_multiple_of(hosts) || !memories.is_multiple_of(hosts) {
            return Err(format!(
                "{hosts} hosts for {cores} cores and {memories} memories: expected at least 2 hosts, dividing both"
            ));
        }
        if self.fanout == 0 || self.fanout as u64 >= hosts {
            return Err(format!("fanout {}: expected 1 to {} other hosts", self.fanout, hosts - 1));
        }
        let per_slice = lines / memories;
        let buffers = cores.div_ceil(memories / hosts);
        Ok(per_slice / buffers)
    }
}

pub struct RemoteStores {
    shape: Shape,
    active: bool,
    /// Lines per store, lines of a buffer's data.
    store_lines: u64,
    data_lines: u64,
    /// First line of this sender's buffer in each destination host.
    bases: Vec<u64>,
    /// Per destination: next data line (offset in the buffer).
    cursors: Vec<u64>,
    /// Stores per epoch, stores issued in this epoch, epochs done, stores
    /// done (the round-robin runs on across epochs).
    per_epoch: u64,
    issued: u64,
    epoch: u64,
    stores: u64,
}

impl RemoteStores {
    /// Core `index` of `cores`, over `memories` homes and `lines` lines of
    /// `line` bytes. The caller validated the shape (`buffer_lines`).
    pub fn new(shape: Shape, index: u32, cores: u32, memories: u32, lines: u64, line: u64) -> Self {
        let hosts = shape.hosts as u64;
        let (cores, memories, index) = (cores as u64, memories as u64, index as u64);
        let slices = memories / hosts;
        let buf = shape.buffer_lines(cores, memories, lines).unwrap_or(2).max(2);
        let per_slice = lines / memories;
        let host = index / (cores / hosts);
        let bases = (1..=shape.fanout as u64)
            .map(|k| {
                let j = (host + k) % hosts;
                let slice = j * slices + index % slices;
                slice * per_slice + (index / slices) * buf
            })
            .collect();
        let store_lines = shape.store_size.div_ceil(line).max(1);
        RemoteStores {
            active: !shape.one_sender || index == 0,
            store_lines,
            data_lines: (buf - 1).max(store_lines),
            bases,
            cursors: vec![0; shape.fanout as usize],
            per_epoch: (shape.release_every / shape.store_size).max(1),
            issued: 0,
            epoch: 0,
            stores: 0,
            shape,
        }
    }

    /// Whether this core sends at all.
    pub fn active(&self) -> bool {
        self.active
    }

    /// The next operation and the time to wait before issuing it (the
    /// computation, before an epoch's first store).
    pub fn next(&mut self, value: u64) -> (WorkOp, Time) {
        let fanout = self.shape.fanout as u64;
        if self.issued == self.per_epoch {
            let dest = (self.epoch % fanout) as usize;
            self.issued = 0;
            self.epoch += 1;
            let flag = self.bases[dest] + self.data_lines;
            let op = WorkOp { line: flag, kind: OpKind::Store, value, order: OpOrder::Release, bytes: FLAG_BYTES };
            return (op, 0);
        }
        let gap = if self.issued == 0 { self.shape.compute } else { 0 };
        let dest = (self.stores % fanout) as usize;
        self.issued += 1;
        self.stores += 1;
        let c = &mut self.cursors[dest];
        if *c + self.store_lines > self.data_lines {
            *c = 0;
        }
        let line = self.bases[dest] + *c;
        *c += self.store_lines;
        let op = WorkOp {
            line,
            kind: OpKind::Store,
            value,
            order: OpOrder::Relaxed,
            bytes: self.shape.store_size.min(u32::MAX as u64) as u32,
        };
        (op, gap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(fanout: u32) -> Shape {
        Shape { store_size: 64, release_every: 192, fanout, hosts: 4, compute: 7, one_sender: false }
    }

    #[test]
    fn an_epoch_is_stores_round_robin_over_the_hosts_then_a_release_in_one_of_them() {
        // 8 cores, 8 memories (2 per host), 256 lines: 32 per slice, 4 buffers of 8 lines
        let mut g = RemoteStores::new(shape(2), 3, 8, 8, 256, 64);
        // core 3 is on host 1, slice 1 of hosts 2 and 3, buffer 1
        let b2 = (2 * 2 + 1) * 32 + 8;
        let b3 = (3 * 2 + 1) * 32 + 8;
        let ops: Vec<(u64, OpOrder, Time)> = (0..8)
            .map(|_| {
                let (o, gap) = g.next(1);
                (o.line, o.order, gap)
            })
            .collect();
        use OpOrder::*;
        assert_eq!(
            ops,
            vec![
                (b2, Relaxed, 7),
                (b3, Relaxed, 0),
                (b2 + 1, Relaxed, 0),
                (b2 + 7, Release, 0),
                (b3 + 1, Relaxed, 7),
                (b2 + 2, Relaxed, 0),
                (b3 + 2, Relaxed, 0),
                (b3 + 7, Release, 0)
            ]
        );
    }

    #[test]
    fn large_stores_span_lines_and_wrap_inside_the_buffer() {
        let s = Shape { store_size: 192, release_every: 1 << 20, ..shape(1) };
        let mut g = RemoteStores::new(s, 0, 8, 8, 256, 64);
        // core 0 on host 0 writes to host 1, slice 2 (its first), buffer 0
        let base = 2 * 32;
        let lines: Vec<u64> = (0..4).map(|_| g.next(0).0.line).collect();
        // 7 data lines hold two 3-line stores
        assert_eq!(lines, vec![base, base + 3, base, base + 3]);
        assert_eq!(g.next(0).0.bytes, 192);
    }

    #[test]
    fn one_sender_leaves_the_other_cores_idle_and_bad_shapes_are_named() {
        let s = Shape { one_sender: true, ..shape(1) };
        assert!(RemoteStores::new(s, 0, 8, 8, 256, 64).active());
        assert!(!RemoteStores::new(s, 1, 8, 8, 256, 64).active());
        assert!(shape(4).buffer_lines(8, 8, 256).unwrap_err().contains("fanout 4"));
        assert!(Shape { hosts: 3, ..shape(1) }.buffer_lines(8, 8, 256).unwrap_err().contains("3 hosts"));
    }
}
