//! Simulated time and the deterministic event queue.
//!
//! The engine knows nothing about fabrics or agents: a simulation owns an
//! [`EventQueue`] of its own event type and runs its own dispatch loop, so
//! events are plain enums dispatched by `match` (no boxing, no allocation
//! per event once the heap has grown to its working size).

pub mod fingerprint;
pub mod pack;
pub mod process;
mod queue;
pub mod rng;
mod time;
pub mod units;

pub use queue::EventQueue;
pub use time::{Time, MS, NS, PS, S, US};
