//! Counters and histograms. A run's outputs (JSON summary, CSV tables,
//! the terminal table) are rendered by `sim::report`, beside the results
//! they render.

pub mod histogram;

pub use histogram::Histogram;
