//! The core front end's parameters and their validation.

use std::fmt;

use crate::engine::Time;

/// The memory model the store buffer drains under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Model {
    /// Total store order (x86): stores perform in program order, one at a
    /// time; an RMW is a full fence.
    Tso,
    /// Release consistency: relaxed stores perform in any order; release
    /// stores wait for everything older, acquire loads hold everything
    /// younger.
    Rc,
}

/// Sizes and widths of one core. Every count is at least 1 and at most
/// [`MAX_ENTRIES`]; the core's queues are allocated from them once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Params {
    /// Reorder buffer entries: instructions between the oldest one not
    /// retired and the youngest dispatched. A long miss stops dispatch
    /// `rob` instructions past it.
    pub rob: u32,
    /// Instructions dispatched (and retired) per cycle.
    pub width: u32,
    /// Load queue entries: loads (and RMWs) dispatched and not retired.
    pub load_queue: u32,
    /// Miss-handling entries of the first cache level (fill buffers,
    /// MSHRs): loads, RMWs and stores whose completion is not known at issue.
    pub fill_buffers: u32,
    /// Store buffer entries: stores (and sfences) from dispatch until they
    /// perform.
    pub store_buffer: u32,
    /// Write-combining buffers: non-temporal stores from dispatch until
    /// they perform; an sfence waits for them.
    pub wc_buffers: u32,
    /// Cycle time.
    pub cycle: Time,
    pub model: Model,
}

/// The largest count a parameter may have (a core's queues are allocated
/// from its parameters).
pub const MAX_ENTRIES: u32 = 1 << 20;

/// The longest cycle time accepted (1 µs).
pub const MAX_CYCLE: Time = 1_000_000;

impl Default for Params {
    /// A Skylake-SP core (the machine of BI's evaluation,
    /// docs/design/bi.md). Sources:
    /// - `rob` 224, `load_queue` 72, `store_buffer` 56: Intel 64 and IA-32
    ///   Architectures Optimization Reference Manual, Skylake
    ///   microarchitecture section (the out-of-order engine's buffer sizes).
    /// - `width` 4: the same manual (4 micro-ops allocated and retired per
    ///   cycle).
    /// - `fill_buffers` 10: the L1 fill buffers as the cores before Skylake
    ///   have them; the `skylake-sp` preset (which BI's machine runs) has the
    ///   12 measured on Skylake (docs/cpu-presets.md: the sources disagree).
    ///   Kept at 10 so that runs without a preset keep their timing.
    /// - `wc_buffers` 10: placeholder, equal to the fill buffers (Intel
    ///   cores combine writes in their fill buffers; not checked against a
    ///   measurement).
    /// - `cycle` 400 ps: placeholder, the 2.5 GHz nominal clock of BI's
    ///   machine (docs/design/bi.md).
    fn default() -> Self {
        Params {
            rob: 224,
            width: 4,
            load_queue: 72,
            fill_buffers: 10,
            store_buffer: 56,
            wc_buffers: 10,
            cycle: 400,
            model: Model::Tso,
        }
    }
}

/// A bad parameter: which field and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "core.{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ParamError {}

impl Params {
    /// Every field in range, `width` at most `rob`.
    pub fn validate(&self) -> Result<(), ParamError> {
        let counts = [
            ("rob", self.rob),
            ("width", self.width),
            ("load_queue", self.load_queue),
            ("fill_buffers", self.fill_buffers),
            ("store_buffer", self.store_buffer),
            ("wc_buffers", self.wc_buffers),
        ];
        for (field, n) in counts {
            if n == 0 || n > MAX_ENTRIES {
                return Err(ParamError { field, message: format!("{n}: expected 1 to {MAX_ENTRIES}") });
            }
        }
        if self.width > self.rob {
            return Err(ParamError {
                field: "width",
                message: format!("{}: expected at most rob ({})", self.width, self.rob),
            });
        }
        if self.cycle == 0 || self.cycle > MAX_CYCLE {
            return Err(ParamError { field: "cycle", message: format!("{} ps: expected 1 ps to 1 us", self.cycle) });
        }
        Ok(())
    }
}
