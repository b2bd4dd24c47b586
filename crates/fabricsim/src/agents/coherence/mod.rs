//! Directory coherence (MSI, MESI) and German's protocol.

pub mod core;
pub mod directory;
pub mod family;
pub mod german;
pub mod german_cores;
pub mod lines;
