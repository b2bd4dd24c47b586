//! DMA reads from a NIC (`pattern = "dma_reads"`): seed 003's ordered-read
//! microbenchmark (§6.2): "a NIC that issues DMA read requests from a
//! trace of increasing addresses". Each DMA reads `dma_size` bytes of
//! consecutive lines; every line is read with the acquire bit when the
//! reads are `ordered` (the lines of a DMA in address order, and one QP's
//! DMAs one after another), none otherwise. Each core reads its own share
//! of the footprint: DMA after DMA from its start, wrapping, or each DMA
//! at a random DMA-aligned place of it (`dma_start = "random"`: RDMA
//! READs of scattered objects).

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
    /// Lines per DMA.
    pub dma_lines: u64,
    /// Every line read with acquire.
    pub ordered: bool,
    /// Each DMA at a random DMA-aligned place of the core's share.
    pub random: bool,
}

pub struct DmaReads {
    shape: Shape,
    first: u64,
    share: u64,
    next: u64,
}

impl DmaReads {
    /// Core `index` of `cores` over `lines` lines.
    pub fn new(shape: Shape, index: u32, cores: u32, lines: u64) -> Self {
        let share = (lines / cores.max(1) as u64).max(1);
        DmaReads { shape, first: (index as u64 * share) % lines.max(1), share, next: 0 }
    }

    pub fn next(&mut self, value: u64, rng: &mut Stream) -> WorkOp {
        let lines = self.shape.dma_lines.max(1);
        if self.shape.random && self.next.is_multiple_of(lines) {
            // a new DMA: a random DMA-aligned place
            let dmas = (self.share / lines).max(1);
            self.next = rng.below(dmas) * lines % self.share;
        }
        let line = self.first + self.next;
        self.next = (self.next + 1) % self.share;
        let order = if self.shape.ordered { OpOrder::Acquire } else { OpOrder::Relaxed };
        WorkOp { line, kind: OpKind::Load, value, order, bytes: 0 }
    }

    /// Lines per DMA (the unit the throughput is counted in).
    pub fn dma_lines(&self) -> u64 {
        self.shape.dma_lines
    }
}

/// `[workload.dma_reads]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Keys {
    /// Bytes per DMA, a multiple of the line (default: the line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dma_size: Option<Size>,
    /// Every line read with acquire, in address order (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ordered: Option<bool>,
    /// "sequential" DMA starts (default) or "random" DMA-aligned ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dma_start: Option<String>,
}

impl KernelKeys for Keys {
    const NAME: &'static str = "dma_reads";
    const ABOUT: &'static str = "a NIC's DMA reads of consecutive lines, ordered or not (protocol cores)";

    fn resolve(self, w: &Workload) -> Result<Arc<dyn Kernel>, KernelError> {
        let line = w.line.max(1);
        let size = self.dma_size.map_or(line, |s| s.bytes());
        if size == 0 || !size.is_multiple_of(line) || size > 1 << 30 {
            return Err(KernelError {
                key: "dma_size",
                message: format!("{size} B: expected a positive multiple of the {line} B line, at most 1GiB"),
            });
        }
        let random = match self.dma_start.as_deref() {
            None | Some("sequential") => false,
            Some("random") => true,
            Some(x) => {
                return Err(KernelError {
                    key: "dma_start",
                    message: format!("{x:?}: expected \"sequential\" or \"random\""),
                })
            }
        };
        Ok(Arc::new(Shape { dma_lines: size / line, ordered: self.ordered.unwrap_or(true), random }))
    }
}

impl Kernel for Shape {
    fn name(&self) -> &'static str {
        "dma_reads"
    }

    fn source(&self, s: &Seat) -> Option<Box<dyn OpSource>> {
        Some(Box::new(DmaReads::new(*self, s.core, s.cores, s.lines)))
    }

    fn reads_only(&self) -> bool {
        true
    }
}

impl OpSource for DmaReads {
    fn next(&mut self, value: u64, rng: &mut Stream) -> Next {
        Next::op(DmaReads::next(self, value, rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_core_reads_its_share_in_address_order_with_acquire_when_ordered() {
        let mut rng = Stream::new(1, 0);
        let mut g = DmaReads::new(Shape { dma_lines: 2, ordered: true, random: false }, 1, 2, 6);
        let ops: Vec<(u64, OpOrder)> = (0..4).map(|i| g.next(i, &mut rng)).map(|o| (o.line, o.order)).collect();
        assert_eq!(
            ops,
            vec![(3, OpOrder::Acquire), (4, OpOrder::Acquire), (5, OpOrder::Acquire), (3, OpOrder::Acquire)]
        );
        let mut u = DmaReads::new(Shape { dma_lines: 1, ordered: false, random: false }, 0, 2, 6);
        assert_eq!(u.next(0, &mut rng).order, OpOrder::Relaxed);
        // random DMAs of 4 lines over a share of 64: each starts at a multiple of 4, its lines consecutive
        let mut r = DmaReads::new(Shape { dma_lines: 4, ordered: true, random: true }, 0, 1, 64);
        let lines: Vec<u64> = (0..40).map(|i| r.next(i, &mut rng).line).collect();
        for dma in lines.chunks(4) {
            assert!(dma[0] % 4 == 0 && dma.windows(2).all(|w| w[1] == w[0] + 1), "{dma:?}");
        }
        assert!(lines.chunks(4).any(|d| d[0] != lines[0]), "the DMAs move");
    }
}
