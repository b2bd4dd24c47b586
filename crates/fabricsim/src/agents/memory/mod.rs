//! Memory media behind a controller: the DRAM model (docs/dram.md).

pub mod dram;

pub use dram::{Dram, DramParams, DramStats, Page, Preset};
