//! ESF's device layer: CXL.mem-style request/response agents (requesters
//! that issue reads and writes, memory endpoints that serve them), and
//! device-managed coherence ([`dcoh`]: the DCOH's inclusive snoop filter,
//! BISnp/BIRsp, InvBlk) as a protocol.

pub mod dcoh;
pub mod dcoh_cores;
mod dcoh_text;
pub mod family;
pub mod line_store;
pub mod memory_endpoint;
pub mod messages;
pub mod requester;
pub mod snoop_filter;
pub mod table;

pub use memory_endpoint::MemoryEndpoint;
pub use messages::{MemMsg, MsgKind};
pub use requester::Requester;
