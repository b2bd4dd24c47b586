//! The fabric's parameters (`[fabric]`): routing, deadlock avoidance,
//! buffers, switch queueing, spreading and flit mode.

use serde::{Deserialize, Serialize};

use super::kinds::{DeadlockAvoidance, RoutingAlgorithm, Spread, SwitchQueueing};
use crate::engine::units::Size;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BufferSize {
    /// Enough bytes to cover the link's credit round trip at full bandwidth.
    Auto,
    Bytes(Size),
}

impl BufferSize {
    /// Bytes per VC, or None for the automatic size.
    pub fn bytes(self) -> Option<u32> {
        match self {
            BufferSize::Auto => None,
            BufferSize::Bytes(s) => Some(s.bytes().min(u32::MAX as u64 / 2) as u32),
        }
    }
}

impl<'de> Deserialize<'de> for BufferSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = toml::Value::deserialize(d)?;
        match v {
            toml::Value::String(s) if s == "auto" => Ok(BufferSize::Auto),
            toml::Value::String(s) => {
                Size::parse(&s).map(BufferSize::Bytes).map_err(|e| serde::de::Error::custom(format!("{e}, or 'auto'")))
            }
            other => {
                Err(serde::de::Error::custom(format!("invalid buffer {other}: expected 'auto' or a size like '16KiB'")))
            }
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FabricConfig {
    #[serde(default = "default_routing")]
    pub routing: RoutingAlgorithm,
    #[serde(default = "default_deadlock")]
    pub deadlock_avoidance: DeadlockAvoidance,
    /// Input buffer per virtual channel per port.
    #[serde(default = "default_buffer")]
    pub buffer: BufferSize,
    /// How a switch queues packets between its input and output ports.
    #[serde(default = "default_switch_queueing")]
    pub switch_queueing: SwitchQueueing,
    /// How oblivious (and up*/down*) routing picks among equal-cost next hops.
    #[serde(default = "default_spread")]
    pub spread: Spread,
    /// CXL flit mode of every link (`"68B"`, `"256B"`); none: messages cost
    /// their bytes. Left out of the resolved configuration when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flit: Option<crate::fabric::FlitMode>,
}

fn default_spread() -> Spread {
    Spread::Hash
}

fn default_switch_queueing() -> SwitchQueueing {
    SwitchQueueing::Voq
}

impl Default for FabricConfig {
    fn default() -> Self {
        Self {
            routing: default_routing(),
            deadlock_avoidance: default_deadlock(),
            buffer: default_buffer(),
            switch_queueing: default_switch_queueing(),
            spread: default_spread(),
            flit: None,
        }
    }
}

fn default_routing() -> RoutingAlgorithm {
    RoutingAlgorithm::Oblivious
}
fn default_deadlock() -> DeadlockAvoidance {
    DeadlockAvoidance::Auto
}
fn default_buffer() -> BufferSize {
    BufferSize::Auto
}
