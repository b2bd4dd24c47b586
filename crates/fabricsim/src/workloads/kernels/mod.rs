//! The seeds' kernels: workload patterns that drive a protocol's cores
//! with operations of their own (releases, acquires, fences, batches), as
//! the papers' microbenchmarks do. Each is a [`Kernel`] that builds one
//! [`OpSource`] per core; the timing engine sees only those traits.
//!
//! [`Kernel`]: super::source::Kernel
//! [`OpSource`]: super::source::OpSource

pub mod dma_reads;
pub mod kvs_gets;
pub mod mmio_writes;
pub mod producer_consumer;
pub mod remote_stores;
