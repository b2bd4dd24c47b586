//! CXL.mem-style request/response agents (ESF's device layer): requesters
//! that issue reads and writes, and memory endpoints that serve them.

pub mod memory_endpoint;
pub mod messages;
pub mod requester;

pub use memory_endpoint::MemoryEndpoint;
pub use messages::{MemMsg, MsgKind};
pub use requester::Requester;
