//! The fabric: topology, links, switches, routing and credit-based flow
//! control. It moves packets of a size, a class and a virtual channel, and
//! knows nothing of what a packet means.

pub mod flit;
pub mod kinds;
pub mod network;
pub mod packet;
pub mod params;
pub mod routing;
pub mod topology;

pub use flit::FlitMode;
pub use network::{Fabric, FabricEvent, LinkStats};
pub use packet::{PacketHeader, PacketId};
pub use topology::{NodeId, NodeKind, PortId, Topology};
