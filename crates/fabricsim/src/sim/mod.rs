//! The timing engine for request/response systems: builds the fabric and
//! the agents from a validated spec and runs the event loop.

pub mod home_memory;
mod levels;
pub mod profile;
pub mod protocol;
pub mod report;
pub mod system;

pub use system::{CacheResult, CacheStats, Outcome, RunResult, System};
