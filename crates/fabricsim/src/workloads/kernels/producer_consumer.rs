//! Producer–consumer traffic for protocol cores (`pattern =
//! "producer_consumer"`): the message-passing pattern CORD's applications
//! are made of, as a stream of operations with release/acquire marks.
//!
//! Cores form groups of one producer and `fanout` consumers (core `i` is in
//! group `i / (fanout + 1)`, the first of a group produces). Each group owns
//! an equal share of the footprint's lines: a data region and, in its last
//! line, a flag. An *epoch* moves `release_every` bytes:
//!
//! - the producer stores them, `store_size` bytes per store, to consecutive
//!   addresses of the region (wrapping), then stores the flag with release;
//! - a consumer loads the flag with acquire, then loads the same bytes.
//!
//! A store or load never spans lines: a `store_size` above the line size is
//! issued as line-sized operations. Consumers do not spin on the flag; they
//! read it once per epoch, so the pattern has the traffic of message
//! passing, not its waiting (a modelling choice, stated in the docs).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{KernelKeys, Workload};
use crate::agents::protocol::{OpKind, OpOrder, WorkOp};
use crate::engine::rng::Stream;
use crate::engine::units::Size;
use crate::workloads::source::{Kernel, KernelError, KernelMachine, Next, OpSource, Seat};

/// A flag is one word.
pub const FLAG_BYTES: u32 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub store_size: u64,
    pub release_every: u64,
    pub fanout: u32,
}

pub struct ProducerConsumer {
    producer: bool,
    line: u64,
    step: u64,
    epoch: u64,
    /// First byte of the data region and its size.
    base: u64,
    data: u64,
    flag_line: u64,
    /// Next byte of the region (offset), bytes moved in this epoch.
    cursor: u64,
    moved: u64,
    /// Consumer: the flag of this epoch was read.
    acquired: bool,
}

impl ProducerConsumer {
    /// Core `index` of `cores`, over `lines` lines of `line` bytes. The
    /// caller validated that groups divide the cores and each group has a
    /// data line and a flag.
    pub fn new(shape: Shape, index: u32, cores: u32, lines: u64, line: u64) -> Self {
        let size = shape.fanout as u64 + 1;
        let groups = (cores as u64 / size).max(1);
        let group = index as u64 / size;
        let share = lines / groups;
        let first = group * share;
        ProducerConsumer {
            producer: (index as u64).is_multiple_of(size),
            line,
            step: shape.store_size.min(line).max(1),
            epoch: shape.release_every.max(1),
            base: first * line,
            data: (share - 1) * line,
            flag_line: first + share - 1,
            cursor: 0,
            moved: 0,
            acquired: false,
        }
    }

    pub fn next(&mut self, value: u64) -> WorkOp {
        let kind = if self.producer { OpKind::Store } else { OpKind::Load };
        if self.moved >= self.epoch {
            // the epoch ends: the producer releases the flag; the consumer reads the next one
            self.moved = 0;
            if self.producer {
                return WorkOp { line: self.flag_line, kind, value, order: OpOrder::Release, bytes: FLAG_BYTES };
            }
            self.acquired = false;
        }
        if !self.producer && !self.acquired {
            self.acquired = true;
            return WorkOp { line: self.flag_line, kind, value, order: OpOrder::Acquire, bytes: FLAG_BYTES };
        }
        let addr = self.base + self.cursor;
        // never across a line: the last piece of a line may be shorter
        let n = self.step.min(self.line - self.cursor % self.line);
        self.cursor = (self.cursor + n) % self.data;
        self.moved += n;
        WorkOp { line: addr / self.line, kind, value, order: OpOrder::Relaxed, bytes: n as u32 }
    }
}

/// `[workload.producer_consumer]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Keys {
    /// Bytes per store (default: the line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_size: Option<Size>,
    /// Bytes a producer moves between releases (default 4 KiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release_every: Option<Size>,
    /// Consumers per producer (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fanout: Option<u32>,
}

impl KernelKeys for Keys {
    const NAME: &'static str = "producer_consumer";
    const ABOUT: &'static str = "producers store and release a flag, consumers acquire it and load (protocol cores)";

    fn resolve(self, w: &Workload) -> Result<Arc<dyn Kernel>, KernelError> {
        let (store_size, release_every, fanout) =
            epoch_sizes(self.store_size, self.release_every, self.fanout, w.line, "consumers per producer")?;
        Ok(Arc::new(Shape { store_size, release_every, fanout }))
    }
}

/// A synchronising kernel's store and epoch sizes and its fanout, with
/// their defaults (the line, 4 KiB, 1); `what` names the fanout's unit.
pub(super) fn epoch_sizes(
    store_size: Option<Size>,
    release_every: Option<Size>,
    fanout: Option<u32>,
    line: u64,
    what: &str,
) -> Result<(u64, u64, u32), KernelError> {
    let size = |v: Option<Size>, key: &'static str, default: u64| match v {
        None => Ok(default),
        Some(s) if s.bytes() == 0 || s.bytes() > 1 << 40 => {
            Err(KernelError { key, message: format!("{s}: expected a size between 1B and 1TiB") })
        }
        Some(s) => Ok(s.bytes()),
    };
    let fanout = fanout.unwrap_or(1);
    if fanout > 255 {
        return Err(KernelError { key: "fanout", message: format!("{fanout}: expected 0 to 255 {what}") });
    }
    Ok((size(store_size, "store_size", line)?, size(release_every, "release_every", 4096)?, fanout))
}

impl Kernel for Shape {
    fn name(&self) -> &'static str {
        "producer_consumer"
    }

    fn source(&self, s: &Seat) -> Option<Box<dyn OpSource>> {
        Some(Box::new(ProducerConsumer::new(*self, s.core, s.cores, s.lines, s.line)))
    }

    fn check(&self, m: &KernelMachine) -> Result<(), KernelError> {
        let (cores, group) = (m.cores, self.fanout as u64 + 1);
        if !cores.is_multiple_of(group) {
            return Err(KernelError {
                key: "fanout",
                message: format!(
                    "{}: groups of one producer and {} consumers do not divide the {cores} cores; expected a \
                     fanout + 1 that divides {cores}",
                    self.fanout, self.fanout
                ),
            });
        }
        if m.lines / (cores / group) < 2 {
            return Err(KernelError {
                key: "footprint",
                message: format!(
                    "{} lines for {} groups: expected at least 2 lines per group (data and a flag)",
                    m.lines,
                    cores / group
                ),
            });
        }
        Ok(())
    }
}

impl OpSource for ProducerConsumer {
    fn next(&mut self, value: u64, _rng: &mut Stream) -> Next {
        Next::op(ProducerConsumer::next(self, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(shape: Shape, index: u32, n: usize) -> Vec<(u64, OpKind, OpOrder)> {
        let mut g = ProducerConsumer::new(shape, index, 4, 16, 64);
        (0..n).map(|i| g.next(i as u64)).map(|o| (o.line, o.kind, o.order)).collect()
    }

    #[test]
    fn a_producer_stores_an_epoch_then_releases_and_its_consumer_mirrors_it() {
        // 4 cores, fanout 1: groups {0,1} and {2,3}; 16 lines: 8 per group, flag = last line
        let s = Shape { store_size: 32, release_every: 128, fanout: 1 };
        let p = ops(s, 2, 6);
        use OpKind::*;
        use OpOrder::*;
        assert_eq!(
            p,
            vec![
                (8, Store, Relaxed),
                (8, Store, Relaxed),
                (9, Store, Relaxed),
                (9, Store, Relaxed),
                (15, Store, Release),
                (10, Store, Relaxed)
            ]
        );
        let c = ops(s, 3, 6);
        assert_eq!(
            c,
            vec![
                (15, Load, Acquire),
                (8, Load, Relaxed),
                (8, Load, Relaxed),
                (9, Load, Relaxed),
                (9, Load, Relaxed),
                (15, Load, Acquire)
            ]
        );
    }

    #[test]
    fn stores_larger_than_a_line_are_line_sized_and_the_region_wraps() {
        let s = Shape { store_size: 256, release_every: 1 << 20, fanout: 1 };
        let lines: Vec<u64> = ops(s, 0, 9).iter().map(|o| o.0).collect();
        // 7 data lines (0..7) then back to 0; the flag (line 7) only at a release
        assert_eq!(lines, vec![0, 1, 2, 3, 4, 5, 6, 0, 1]);
    }
}
