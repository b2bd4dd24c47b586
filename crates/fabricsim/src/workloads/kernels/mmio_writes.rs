//! MMIO writes from a host core (`pattern = "mmio_writes"`): seed 003's
//! transmit path (§5.2, Fig 10). The core writes messages of
//! `message_size` bytes to the NIC as 64 B write-combining stores to
//! consecutive lines (the address encodes the sequence number), the last
//! one a release (the doorbell), then a fence: an `sfence` under today's
//! ordering, a sequence-number tag and no stall with the root complex's
//! ROB (the protocol decides, `protocol.pcie.mmio`).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{KernelKeys, Workload};
use crate::agents::protocol::{OpKind, OpOrder, WorkOp};
use crate::engine::rng::Stream;
use crate::engine::units::Size;
use crate::workloads::source::{Kernel, KernelError, Next, OpSource, Seat};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Lines per message.
    pub message_lines: u64,
}

pub struct MmioWrites {
    shape: Shape,
    first: u64,
    share: u64,
    /// Lines written so far, and the place in the current message (its
    /// lines, then the fence).
    line: u64,
    at: u64,
}

impl MmioWrites {
    /// Core `index` of `cores` over `lines` lines of device space.
    pub fn new(shape: Shape, index: u32, cores: u32, lines: u64) -> Self {
        let share = (lines / cores.max(1) as u64).max(1);
        MmioWrites { shape, first: (index as u64 * share) % lines.max(1), share, line: 0, at: 0 }
    }

    pub fn next(&mut self, value: u64) -> WorkOp {
        let lines = self.shape.message_lines.max(1);
        let at = self.at;
        self.at = (self.at + 1) % (lines + 1);
        if at == lines {
            return WorkOp { line: 0, kind: OpKind::Fence, value, order: OpOrder::Release, bytes: 0 };
        }
        let line = self.first + self.line % self.share;
        self.line += 1;
        let order = if at + 1 == lines { OpOrder::Release } else { OpOrder::Relaxed };
        WorkOp { line, kind: OpKind::Store, value, order, bytes: 0 }
    }
}

/// `[workload.mmio_writes]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Keys {
    /// Bytes per message, a multiple of the line (default: the line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_size: Option<Size>,
}

impl KernelKeys for Keys {
    const NAME: &'static str = "mmio_writes";
    const ABOUT: &'static str = "a host core's MMIO writes to a NIC, in messages (protocol cores)";

    fn resolve(self, w: &Workload) -> Result<Arc<dyn Kernel>, KernelError> {
        let line = w.line.max(1);
        let size = self.message_size.map_or(line, |s| s.bytes());
        if size == 0 || !size.is_multiple_of(line) || size > 1 << 30 {
            return Err(KernelError {
                key: "message_size",
                message: format!("{size} B: expected a positive multiple of the {line} B line, at most 1GiB"),
            });
        }
        Ok(Arc::new(Shape { message_lines: size / line }))
    }
}

impl Kernel for Shape {
    fn name(&self) -> &'static str {
        "mmio_writes"
    }

    fn source(&self, s: &Seat) -> Option<Box<dyn OpSource>> {
        Some(Box::new(MmioWrites::new(*self, s.core, s.cores, s.lines)))
    }
}

impl OpSource for MmioWrites {
    fn next(&mut self, value: u64, _rng: &mut Stream) -> Next {
        Next::op(MmioWrites::next(self, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_of_consecutive_lines_end_in_a_release_and_a_fence() {
        let mut g = MmioWrites::new(Shape { message_lines: 2 }, 1, 2, 8);
        let ops: Vec<(OpKind, u64, OpOrder)> = (0..6).map(|i| g.next(i)).map(|o| (o.kind, o.line, o.order)).collect();
        use OpKind::*;
        use OpOrder::*;
        assert_eq!(
            ops,
            vec![
                (Store, 4, Relaxed),
                (Store, 5, Release),
                (Fence, 0, Release),
                (Store, 6, Relaxed),
                (Store, 7, Release),
                (Fence, 0, Release)
            ]
        );
    }
}
