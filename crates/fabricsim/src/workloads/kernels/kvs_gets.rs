//! Key-value GETs over RDMA READs (`pattern = "kvs_gets"`): seed 003's
//! KVS experiments (§6.3, Figs 6 and 8). A client (a NIC queue pair)
//! issues `batch` GETs back to back, waits for all of them, then for
//! `batch_gap` (1 µs: the halo3d/sweep3d gap of [15]), then the next
//! batch. Each GET reads one object, at a uniformly random key of the
//! table (the footprint, shared by all clients), line by line, as the
//! paper's NIC splits a READ into 64 B reads:
//!
//! - **Validation** (Cell [26]): READ1 = the header version and the item,
//!   READ2 = the header again; the object is an 8 B header then the item;
//! - **Single Read**: one READ of header, item and footer (8 B each side);
//! - **FaRM**: one READ; every line holds 56 B of item and its version;
//!   with `copy_rate` the client copies the item out (stripping the
//!   versions) before its next READ;
//! - **Pessimistic**: an RDMA fetch-and-add on the item's header (the
//!   reader count and the writer's lock bit) pipelined with one READ of
//!   header and item, then an asynchronous fetch-and-add back.
//!
//! With `serial_reads`, a READ starts only when the client's previous one
//! completed, as a real NIC issues a QP's READs (Fig 8, §6.4).
//!
//! Validation and Single Read need their lines read in order (§6.3): every
//! line goes with the acquire bit, as Fig 5's ordered DMA; FaRM's lines
//! need no order (each carries its version); Pessimistic's READ follows
//! its fetch-and-add (an acquire), its lines in any order (the lock
//! excludes writers).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{KernelKeys, Workload};
use crate::agents::protocol::{OpKind, OpOrder, WorkOp};
use crate::engine::rng::Stream;
use crate::engine::units::{Bandwidth, Duration, Size};
use crate::engine::Time;
use crate::workloads::source::{Kernel, KernelError, Next, OpSource, Seat};

/// Version field, bytes.
const VERSION: u64 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Get {
    Validation,
    SingleRead,
    Farm,
    Pessimistic,
}

impl Get {
    pub const ALL: [Get; 4] = [Get::Validation, Get::SingleRead, Get::Farm, Get::Pessimistic];

    pub fn name(self) -> &'static str {
        match self {
            Get::Validation => "validation",
            Get::SingleRead => "single_read",
            Get::Farm => "farm",
            Get::Pessimistic => "pessimistic",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|g| g.name() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub get: Get,
    /// Bytes of item per object.
    pub object_bytes: u64,
    /// GETs per batch.
    pub batch: u32,
    /// Between a batch's last completion and the next batch.
    pub gap: Time,
    pub line: u64,
    /// A READ waits for the previous READ's completion.
    pub serial: bool,
    /// FaRM: the client's copy of an item, before its next READ.
    pub copy: Time,
}

impl Shape {
    /// Lines one object takes in the table.
    pub fn object_lines(&self) -> u64 {
        let line = self.line.max(1);
        match self.get {
            Get::Validation | Get::Pessimistic => (self.object_bytes + VERSION).div_ceil(line),
            Get::SingleRead => (self.object_bytes + 2 * VERSION).div_ceil(line),
            Get::Farm => self.object_bytes.div_ceil(line.saturating_sub(VERSION).max(1)),
        }
        .max(1)
    }

    /// Operations one GET makes: its line reads (Validation's READ2 reads
    /// the header again) and Pessimistic's two fetch-and-adds.
    pub fn reads_per_get(&self) -> u64 {
        self.object_lines()
            + match self.get {
                Get::Validation => 1,
                Get::Pessimistic => 2,
                _ => 0,
            }
    }
}

pub struct KvsGets {
    shape: Shape,
    objects: u64,
    /// The current GET's object (first line) and its next read.
    base: u64,
    read: u64,
    in_batch: u32,
}

impl KvsGets {
    /// A client of a table of `lines` lines.
    pub fn new(shape: Shape, lines: u64) -> Self {
        let objects = (lines / shape.object_lines()).max(1);
        KvsGets { shape, objects, base: 0, read: 0, in_batch: 0 }
    }

    /// The next line read, and the gap to wait for after every read so far
    /// completes when it starts a new batch.
    pub fn next(&mut self, value: u64, rng: &mut Stream) -> (WorkOp, Option<Time>) {
        let starts_read =
            self.read == 0 || (self.shape.get == Get::Validation && self.read == self.shape.object_lines());
        let mut barrier =
            (self.shape.serial && starts_read).then_some(if self.read == 0 { self.shape.copy } else { 0 });
        if self.read == 0 {
            if self.in_batch == self.shape.batch.max(1) {
                self.in_batch = 0;
                barrier = Some(self.shape.gap);
            }
            self.in_batch += 1;
            self.base = rng.below(self.objects) * self.shape.object_lines();
        }
        let lines = self.shape.object_lines();
        let at = self.read;
        self.read = (self.read + 1) % self.shape.reads_per_get();
        let (offset, kind, order) = match self.shape.get {
            Get::Farm => (at, OpKind::Load, OpOrder::Relaxed),
            // the header's fetch-and-add (an acquire), the READ, the asynchronous fetch-and-add back
            Get::Pessimistic if at == 0 => (0, OpKind::Rmw, OpOrder::Acquire),
            Get::Pessimistic if at == lines + 1 => (0, OpKind::Rmw, OpOrder::Relaxed),
            Get::Pessimistic => (at - 1, OpKind::Load, OpOrder::Relaxed),
            _ if at == lines => (0, OpKind::Load, OpOrder::Acquire),
            _ => (at, OpKind::Load, OpOrder::Acquire),
        };
        (WorkOp { line: self.base + offset, kind, value, order, bytes: 0 }, barrier)
    }
}

/// `[workload.kvs_gets]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Keys {
    /// The GET protocol: "validation" (default), "single_read", "farm" or "pessimistic".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub get: Option<String>,
    /// Bytes of item per object, 1 B to 1 MiB (default 64 B).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_size: Option<Size>,
    /// GETs per batch (default 100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<u32>,
    /// Between a batch's last completion and the next batch (default 1 µs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_gap: Option<Duration>,
    /// A READ waits for the previous one's completion (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial_reads: Option<bool>,
    /// FaRM with serial_reads: the client's copy rate (none: no copy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_rate: Option<Bandwidth>,
}

impl KernelKeys for Keys {
    const NAME: &'static str = "kvs_gets";
    const ABOUT: &'static str = "a NIC's key-value GETs over RDMA READs, in batches (protocol cores)";

    fn resolve(self, w: &Workload) -> Result<Arc<dyn Kernel>, KernelError> {
        let err = |key, message| Err(KernelError { key, message });
        let get = match self.get.as_deref() {
            None => Get::Validation,
            Some(g) => match Get::parse(g) {
                Some(g) => g,
                None => {
                    return err(
                        "get",
                        format!("{g:?}: expected {}", Get::ALL.map(|g| format!("\"{}\"", g.name())).join(", ")),
                    )
                }
            },
        };
        let object_bytes = self.object_size.map_or(64, |s| s.bytes());
        if object_bytes == 0 || object_bytes > 1 << 20 {
            return err("object_size", format!("{object_bytes} B: expected 1 B to 1 MiB"));
        }
        let batch = self.batch.unwrap_or(100);
        if batch == 0 {
            return err("batch", "0: expected at least one GET per batch".into());
        }
        let mut shape = Shape {
            get,
            object_bytes,
            batch,
            gap: self.batch_gap.map_or(crate::engine::NS * 1000, |d| d.0),
            line: w.line.max(1),
            serial: self.serial_reads.unwrap_or(false),
            copy: 0,
        };
        if let Some(rate) = &self.copy_rate {
            if get != Get::Farm || !shape.serial || rate.is_infinite() {
                return err(
                    "copy_rate",
                    "applies to get = \"farm\" with serial_reads = true (the client copies between its READs); \
                     expected a finite rate"
                        .into(),
                );
            }
            shape.copy = rate.serialize(object_bytes);
        }
        if shape.object_lines() * w.line.max(1) > w.footprint {
            return err(
                "object_size",
                format!(
                    "{object_bytes} B: a {} object takes {} lines; expected the footprint ({} B) to hold one",
                    get.name(),
                    shape.object_lines(),
                    w.footprint
                ),
            );
        }
        Ok(Arc::new(shape))
    }
}

impl Kernel for Shape {
    fn name(&self) -> &'static str {
        "kvs_gets"
    }

    fn source(&self, s: &Seat) -> Option<Box<dyn OpSource>> {
        Some(Box::new(KvsGets::new(*self, s.lines)))
    }

    /// Pessimistic GETs lock with fetch-and-adds.
    fn reads_only(&self) -> bool {
        self.get != Get::Pessimistic
    }
}

impl OpSource for KvsGets {
    fn next(&mut self, value: u64, rng: &mut Stream) -> Next {
        let (op, barrier) = KvsGets::next(self, value, rng);
        Next { barrier, ..Next::op(op) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(get: Get, bytes: u64) -> Shape {
        Shape { get, object_bytes: bytes, batch: 2, gap: 1000, line: 64, serial: false, copy: 0 }
    }

    #[test]
    fn object_layouts_follow_the_get_protocols() {
        // 64 B of item: Validation's header spills it onto a second line, read twice; FaRM needs 2 lines of 56 B
        assert_eq!((shape(Get::Validation, 64).object_lines(), shape(Get::Validation, 64).reads_per_get()), (2, 3));
        assert_eq!((shape(Get::SingleRead, 64).object_lines(), shape(Get::SingleRead, 64).reads_per_get()), (2, 2));
        assert_eq!(shape(Get::SingleRead, 48).reads_per_get(), 1);
        assert_eq!((shape(Get::Farm, 56).object_lines(), shape(Get::Farm, 64).object_lines()), (1, 2));
        assert_eq!(shape(Get::Validation, 8192).reads_per_get(), 130);
        assert_eq!((shape(Get::Pessimistic, 64).object_lines(), shape(Get::Pessimistic, 64).reads_per_get()), (2, 4));
    }

    #[test]
    fn a_validation_get_reads_header_item_header_and_batches_wait() {
        let mut rng = Stream::new(1, 0);
        let mut g = KvsGets::new(shape(Get::Validation, 64), 64);
        let ops: Vec<(WorkOp, Option<Time>)> = (0..9).map(|i| g.next(i, &mut rng)).collect();
        for get in ops.chunks(3) {
            let b = get[0].0.line;
            assert_eq!(b % 2, 0, "objects are 2 lines");
            assert_eq!(get.iter().map(|o| o.0.line).collect::<Vec<_>>(), vec![b, b + 1, b]);
            assert!(get.iter().all(|o| o.0.order == OpOrder::Acquire));
        }
        // a batch of 2 GETs: the third GET's first read waits for the gap, no other read does
        let gaps: Vec<usize> = ops.iter().enumerate().filter(|(_, o)| o.1.is_some()).map(|(i, _)| i).collect();
        assert_eq!(gaps, vec![6]);
        assert_eq!(ops[6].1, Some(1000));
        let mut f = KvsGets::new(shape(Get::Farm, 64), 64);
        assert_eq!(f.next(0, &mut rng).0.order, OpOrder::Relaxed);
        // serial READs: READ1 and READ2 each wait for what was issued before them
        let mut s = KvsGets::new(Shape { serial: true, ..shape(Get::Validation, 64) }, 64);
        let waits: Vec<Option<Time>> = (0..9).map(|i| s.next(i, &mut rng).1).collect();
        let zero = Some(0);
        assert_eq!(waits, vec![zero, None, zero, zero, None, zero, Some(1000), None, zero]);
        // Pessimistic: fetch-and-add, the READ's lines, fetch-and-add back; FaRM's copy before each next GET
        let mut p = KvsGets::new(Shape { serial: true, ..shape(Get::Pessimistic, 64) }, 64);
        let ops: Vec<(OpKind, OpOrder, Option<Time>)> =
            (0..4).map(|i| p.next(i, &mut rng)).map(|(o, b)| (o.kind, o.order, b)).collect();
        use OpKind::*;
        use OpOrder::*;
        assert_eq!(ops, vec![(Rmw, Acquire, zero), (Load, Relaxed, None), (Load, Relaxed, None), (Rmw, Relaxed, None)]);
        let mut f = KvsGets::new(Shape { serial: true, copy: 7, ..shape(Get::Farm, 64) }, 64);
        let waits: Vec<Option<Time>> = (0..4).map(|i| f.next(i, &mut rng).1).collect();
        assert_eq!(waits, vec![Some(7), None, Some(7), None]);
    }
}
