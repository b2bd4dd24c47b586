//! Counters, histograms and the run's outputs (JSON summary, CSV tables,
//! the terminal table).

pub mod histogram;
pub mod report;

pub use histogram::Histogram;
