//! Agents give packets meaning: requesters, memory endpoints and, in later
//! layers, caches, directories, snoop filters, root complexes and NICs.
//! Agents talk only through messages carried by the fabric.

pub mod bi;
pub mod cache;
pub mod coherence;
pub mod cord;
pub mod core;
pub mod cxl;
pub mod family;
pub mod gcs;
pub mod memory;
pub mod pcie;
pub mod protocol;
pub mod table;
pub mod text;
