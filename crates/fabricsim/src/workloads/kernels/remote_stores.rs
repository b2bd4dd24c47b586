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
//! Receivers are optional (`consume`). Without them only senders issue: a
//! receiver's Acquire poll of its flag is a read of local memory that no
//! write-through variant changes (a stated choice). With them every core
//! also consumes after each Release: it Acquire-loads the flag its
//! partner released to its host in that epoch, then loads every line the
//! `fanout` senders writing to its host stored there in that epoch (its
//! *partners*: the cores of the same index on the `fanout` hosts before
//! its own). A write-back protocol pays for its ownership there.
//! Receivers read once and do not spin: the pattern has the traffic of
//! message passing, not its waiting. `senders = "one"` runs the paper's
//! microbenchmark (one thread, core 0, no receivers).
//!
//! Stores of less than a line fill their lines (a word store shares its
//! line with the next ones and never spans two). A store of more than a
//! line is one message (the paper's store granularity up to 4 KB,
//! "amortizing packetization overheads") at the first of its lines; its
//! lines are consecutive in the buffer.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::producer_consumer::epoch_sizes;
use super::{KernelKeys, Workload};
use crate::agents::protocol::{OpKind, OpOrder, WorkOp};
use crate::engine::rng::Stream;
use crate::engine::units::{Duration, Size};
use crate::engine::Time;
use crate::workloads::source::{Kernel, KernelError, KernelMachine, Next, OpSource, Seat};

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
    /// Every core also reads what its partners sent it.
    pub consume: bool,
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
    line: u64,
    /// Lines per store, bytes a store takes in a buffer, bytes of a
    /// buffer's data.
    store_lines: u64,
    store_bytes: u64,
    data_bytes: u64,
    /// First line of this sender's buffer in each destination host.
    bases: Vec<u64>,
    /// Per destination: next free byte of the buffer's data.
    cursors: Vec<u64>,
    /// Stores per epoch, stores issued in this epoch, epochs done, stores
    /// done (the round-robin runs on across epochs).
    per_epoch: u64,
    issued: u64,
    epoch: u64,
    stores: u64,
    /// `consume`: the partners' streams (replayed to know what they
    /// wrote here), the flag to Acquire, the lines to load and the next.
    partners: Vec<RemoteStores>,
    flag: Option<u64>,
    reads: Vec<u64>,
    read: usize,
}

impl RemoteStores {
    /// Core `index` of `cores`, over `memories` homes and `lines` lines of
    /// `line` bytes. The caller validated the shape (`buffer_lines`).
    pub fn new(shape: Shape, index: u32, cores: u32, memories: u32, lines: u64, line: u64) -> Self {
        let hosts = shape.hosts as u64;
        let (cores64, memories, index64) = (cores as u64, memories as u64, index as u64);
        let slices = memories / hosts;
        let buf = shape.buffer_lines(cores64, memories, lines).unwrap_or(2).max(2);
        let per_slice = lines / memories;
        let per_host = cores64 / hosts;
        let host = index64 / per_host;
        let bases = (1..=shape.fanout as u64)
            .map(|k| {
                let j = (host + k) % hosts;
                let slice = j * slices + index64 % slices;
                slice * per_slice + (index64 / slices) * buf
            })
            .collect();
        let store_lines = shape.store_size.div_ceil(line).max(1);
        let store_bytes = if shape.store_size < line { shape.store_size.max(1) } else { store_lines * line };
        let consume = shape.consume && !shape.one_sender;
        // partner k is on the host k + 1 before this one, and writes here as its destination k
        let partners = if consume {
            let alone = Shape { consume: false, ..shape };
            (0..shape.fanout as u64)
                .map(|k| {
                    let p = (host + hosts - 1 - k) % hosts * per_host + index64 % per_host;
                    RemoteStores::new(alone, p as u32, cores, memories as u32, lines, line)
                })
                .collect()
        } else {
            Vec::new()
        };
        RemoteStores {
            active: !shape.one_sender || index == 0,
            line,
            store_lines,
            store_bytes,
            data_bytes: (buf - 1).max(store_lines) * line,
            bases,
            cursors: vec![0; shape.fanout as usize],
            per_epoch: (shape.release_every / shape.store_size).max(1),
            issued: 0,
            epoch: 0,
            stores: 0,
            partners,
            flag: None,
            reads: Vec::new(),
            read: 0,
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
        let load = |line, order| WorkOp { line, kind: OpKind::Load, value, order, bytes: 0 };
        if let Some(flag) = self.flag.take() {
            return (WorkOp { bytes: FLAG_BYTES, ..load(flag, OpOrder::Acquire) }, 0);
        }
        if self.read < self.reads.len() {
            self.read += 1;
            return (load(self.reads[self.read - 1], OpOrder::Relaxed), 0);
        }
        if self.issued == self.per_epoch {
            let epoch = self.epoch;
            let op =
                WorkOp { line: self.release(), kind: OpKind::Store, value, order: OpOrder::Release, bytes: FLAG_BYTES };
            if !self.partners.is_empty() {
                self.receive(epoch);
            }
            return (op, 0);
        }
        let gap = if self.issued == 0 { self.shape.compute } else { 0 };
        let (_, line) = self.store();
        let op = WorkOp {
            line,
            kind: OpKind::Store,
            value,
            order: OpOrder::Relaxed,
            bytes: self.shape.store_size.min(u32::MAX as u64) as u32,
        };
        (op, gap)
    }

    /// The next store of this epoch: its destination and first line.
    fn store(&mut self) -> (usize, u64) {
        let dest = (self.stores % self.shape.fanout as u64) as usize;
        self.issued += 1;
        self.stores += 1;
        let c = &mut self.cursors[dest];
        // a store of less than a line never spans two
        if *c % self.line + self.store_bytes > self.line && self.store_bytes < self.line {
            *c = c.next_multiple_of(self.line);
        }
        if *c + self.store_bytes > self.data_bytes {
            *c = 0;
        }
        let line = self.bases[dest] + *c / self.line;
        *c += self.store_bytes;
        (dest, line)
    }

    /// End the epoch: the line of its Release's flag.
    fn release(&mut self) -> u64 {
        let dest = (self.epoch % self.shape.fanout as u64) as usize;
        self.issued = 0;
        self.epoch += 1;
        self.bases[dest] + self.data_bytes / self.line
    }

    /// What this core reads after its Release of `epoch`: the flag partner
    /// `epoch mod fanout` released here, then the lines every partner
    /// stored here in that epoch (each line once).
    fn receive(&mut self, epoch: u64) {
        self.reads.clear();
        self.read = 0;
        let fanout = self.shape.fanout as u64;
        for (k, p) in self.partners.iter_mut().enumerate() {
            while p.issued < p.per_epoch {
                let (dest, line) = p.store();
                if dest == k {
                    for l in line..line + p.store_lines {
                        if self.reads.last() != Some(&l) {
                            self.reads.push(l);
                        }
                    }
                }
            }
            let flag = p.release();
            if epoch % fanout == k as u64 {
                self.flag = Some(flag);
            }
        }
    }
}

/// `[workload.remote_stores]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Keys {
    /// Hosts the cores and memories split into (required).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<u32>,
    /// Bytes per store (default: the line; more than a line is one message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_size: Option<Size>,
    /// Bytes a sender stores between releases (default 4 KiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release_every: Option<Size>,
    /// Other hosts each sender writes to (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fanout: Option<u32>,
    /// Computation before each epoch's stores (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute: Option<Duration>,
    /// "all" cores send (default) or "one" (core 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub senders: Option<String>,
    /// Every core also reads what its partners sent it (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consume: Option<bool>,
}

impl KernelKeys for Keys {
    const NAME: &'static str = "remote_stores";
    const ABOUT: &'static str = "senders store to other hosts' memory and release a flag there (protocol cores)";

    fn resolve(self, w: &Workload) -> Result<Arc<dyn Kernel>, KernelError> {
        let (store_size, release_every, fanout) =
            epoch_sizes(self.store_size, self.release_every, self.fanout, w.line, "other hosts per sender")?;
        let err = |key, message| Err(KernelError { key, message });
        if store_size > 1 << 20 {
            return err("store_size", format!("{}: expected at most 1MiB per store", Size(store_size)));
        }
        let Some(hosts) = self.hosts else {
            return err(
                "hosts",
                "missing: pattern = \"remote_stores\" needs the number of hosts the cores and memories split into"
                    .into(),
            );
        };
        let compute = self.compute.map_or(0, |d| d.ps());
        if compute > 1_000_000_000_000 {
            return err("compute", format!("{}: expected at most 1 s per epoch", self.compute.expect("set")));
        }
        let one_sender = match self.senders.as_deref() {
            None | Some("all") => false,
            Some("one") => true,
            Some(x) => return err("senders", format!("{x:?}: expected \"all\" or \"one\"")),
        };
        let consume = self.consume.unwrap_or(false);
        if consume && one_sender {
            return err(
                "consume",
                "true: receivers read what every core sends; expected senders = \"all\" (or consume = false)".into(),
            );
        }
        Ok(Arc::new(Shape { store_size, release_every, fanout, hosts, compute, one_sender, consume }))
    }
}

impl Kernel for Shape {
    fn name(&self) -> &'static str {
        "remote_stores"
    }

    fn source(&self, s: &Seat) -> Option<Box<dyn OpSource>> {
        let r = RemoteStores::new(*self, s.core, s.cores, s.homes, s.lines, s.line);
        r.active.then(|| Box::new(r) as Box<dyn OpSource>)
    }

    fn largest_store(&self) -> Option<(u32, &'static str)> {
        Some((self.store_size as u32, "store_size"))
    }

    fn check(&self, m: &KernelMachine) -> Result<(), KernelError> {
        let buf = self.buffer_lines(m.cores, m.homes, m.lines).map_err(|message| KernelError {
            key: if message.starts_with("fanout") { "fanout" } else { "hosts" },
            message,
        })?;
        if buf < self.store_size.div_ceil(m.line.max(1)) + 1 {
            return Err(KernelError {
                key: "footprint",
                message: format!(
                    "{} lines give each sender {buf} lines per host; expected room for a {} B store and a flag \
                     line (a larger footprint)",
                    m.lines, self.store_size
                ),
            });
        }
        Ok(())
    }
}

impl OpSource for RemoteStores {
    fn next(&mut self, value: u64, _rng: &mut Stream) -> Next {
        let (op, gap) = RemoteStores::next(self, value);
        Next { gap, ..Next::op(op) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(fanout: u32) -> Shape {
        Shape { store_size: 64, release_every: 192, fanout, hosts: 4, compute: 7, one_sender: false, consume: false }
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

    #[test]
    fn word_stores_fill_their_lines_without_spanning_two() {
        let s = Shape { store_size: 24, release_every: 1 << 20, ..shape(1) };
        let mut g = RemoteStores::new(s, 0, 8, 8, 256, 64);
        let base = 2 * 32;
        let lines: Vec<u64> = (0..5).map(|_| g.next(0).0.line - base).collect();
        assert_eq!(lines, vec![0, 0, 1, 1, 2]);
    }

    #[test]
    fn a_consumer_acquires_its_partners_flag_then_loads_what_they_stored_in_its_host() {
        let s = Shape { consume: true, ..shape(2) };
        let mut g = RemoteStores::new(s, 3, 8, 8, 256, 64);
        // core 3 (host 1) has partners core 1 (host 0, destination 0) and core 7 (host 3, destination 1);
        // their buffers in host 1 are in slice 3, buffers 0 and 3
        let (p1, p7) = (3 * 32, 3 * 32 + 3 * 8);
        let ops: Vec<(u64, OpKind, OpOrder)> = (0..16)
            .map(|_| {
                let o = g.next(1).0;
                (o.line, o.kind, o.order)
            })
            .collect();
        use OpKind::*;
        use OpOrder::*;
        let rest: Vec<_> = ops.iter().filter(|o| o.1 == Load).copied().collect();
        assert_eq!(ops[3].2, Release);
        assert_eq!(
            rest,
            vec![
                // epoch 0: core 1 released to host 1 (its destination 0); it stored twice here, core 7 once
                (p1 + 7, Load, Acquire),
                (p1, Load, Relaxed),
                (p1 + 1, Load, Relaxed),
                (p7, Load, Relaxed),
                // epoch 1: core 7's turn to release here
                (p7 + 7, Load, Acquire),
                (p1 + 2, Load, Relaxed),
                (p7 + 1, Load, Relaxed),
                (p7 + 2, Load, Relaxed),
            ]
        );
        assert_eq!(ops.len() - rest.len(), 8, "two epochs of 3 stores and a Release");
    }
}
