//! A protocol core's operation source: what the timing engine's driver asks
//! for the core's next operation. The engine holds sources, never a
//! workload's own type: the generic generators (`pattern.rs`), trace
//! replay (`trace.rs`) and the seeds' kernels (`kernels/`) are sources
//! alike, so a new kernel is a file and a line in `kernels::KERNELS`.

use std::fmt::Debug;

use crate::agents::protocol::WorkOp;
use crate::engine::rng::Stream;
use crate::engine::Time;

/// The next operation of a core and what comes before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next {
    pub op: WorkOp,
    /// Computation before it, counted from when the previous operation
    /// passed the issue stage (a kernel's compute phase).
    pub gap: Time,
    /// Not before this time (a trace's time stamp).
    pub at: Time,
    /// It starts a batch: it waits until every earlier operation completed,
    /// then this long.
    pub barrier: Option<Time>,
    /// Instructions before it and whether it depends on the previous load,
    /// when the source says (a trace's fields); else the workload's
    /// `instructions` and `dependent` keys decide.
    pub given: Option<(u64, bool)>,
}

impl Next {
    /// An operation with nothing before it but the workload's compute.
    pub fn op(op: WorkOp) -> Self {
        Next { op, gap: 0, at: 0, barrier: None, given: None }
    }
}

/// A core's stream of operations. `value` is the value a store writes (the
/// operation's number, from 1); `rng` the run's driver stream, which a
/// source draws from in a fixed order so that a run is deterministic.
pub trait OpSource: Send {
    fn next(&mut self, value: u64, rng: &mut Stream) -> Next;
}

/// Where a core sits, for a kernel building its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seat {
    /// This core's index among the workload-driven cores, and their number.
    pub core: u32,
    pub cores: u32,
    /// The protocol's homes (memories, directories, LLC slices).
    pub homes: u32,
    /// Lines of the workload's footprint, and bytes per line.
    pub lines: u64,
    pub line: u64,
}

/// What a kernel is checked against before a run: the machine's counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelMachine {
    pub cores: u64,
    pub homes: u64,
    pub lines: u64,
    pub line: u64,
}

/// A kernel's refusal of a machine: the workload key at fault and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelError {
    pub key: &'static str,
    pub message: String,
}

/// A workload pattern that drives a protocol's cores with operations of its
/// own (stores and releases, acquires, fences, batches): a seed's kernel.
/// Resolved once from the configuration; builds each core's source.
pub trait Kernel: Debug + Send + Sync {
    /// The pattern's name (`[workload] pattern`).
    fn name(&self) -> &'static str;
    /// The source of core `seat.core`, or `None` when that core issues
    /// nothing under this kernel.
    fn source(&self, seat: &Seat) -> Option<Box<dyn OpSource>>;
    /// The widest store it issues, in bytes, and the key that sets it
    /// (`None`: no store wider than its access).
    fn largest_store(&self) -> Option<(u32, &'static str)> {
        None
    }
    /// Whether it only reads (a switch that carries reads only may serve it).
    fn reads_only(&self) -> bool {
        false
    }
    /// Refuse a machine the kernel cannot lay its data out on.
    fn check(&self, _m: &KernelMachine) -> Result<(), KernelError> {
        Ok(())
    }
}
