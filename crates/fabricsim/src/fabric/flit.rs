//! CXL flit modes: what a message costs on the wire when links carry flits.
//!
//! CXL packs messages into 16-byte slots of fixed-size flits: a 68 B flit
//! (CXL 1.1/2.0) carries 4 slots (64 B) with a 2 B protocol ID and a 2 B CRC;
//! a 256 B flit (CXL 3.x, PCIe 6.0) carries 15 slots (240 B) with its flit
//! header, CRC and FEC. Flits are shared by the messages that fill their
//! slots, so a message of `n` bytes costs its `ceil(n / 16)` slots (at least
//! one: a header-only message still takes a slot) at the flit's bytes per
//! slot: 17 B in 68 B mode, 256 / 15 B in 256 B mode (rounded up per
//! message). This is fabricsim's model, not CXL's slot formats (which pack
//! some headers two to a slot): ESF states only header/payload ratios.

use serde::{Deserialize, Serialize};

const SLOT: u64 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum FlitMode {
    #[serde(rename = "68B")]
    Flit68,
    #[serde(rename = "256B")]
    Flit256,
}

impl FlitMode {
    /// Bytes a message of `bytes` occupies on a link.
    pub fn wire_bytes(self, bytes: u32) -> u32 {
        let slots = (bytes as u64).div_ceil(SLOT).max(1);
        let (flit, slots_per_flit) = match self {
            FlitMode::Flit68 => (68, 4),
            FlitMode::Flit256 => (256, 15),
        };
        (slots * flit).div_ceil(slots_per_flit).min(u32::MAX as u64) as u32
    }

    pub fn name(self) -> &'static str {
        match self {
            FlitMode::Flit68 => "68B",
            FlitMode::Flit256 => "256B",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FlitMode::*;

    #[test]
    fn slots_at_the_flits_bytes_per_slot() {
        // A header-only message takes a slot; a 64 B line four; a line with a 16 B header five.
        assert_eq!([0, 16, 64, 80].map(|b| Flit68.wire_bytes(b)), [17, 17, 68, 85]);
        // 256 B flits: 15 slots per 256 B, so 15 slots (240 B of messages) are exactly one flit.
        assert_eq!([0, 64, 240].map(|b| Flit256.wire_bytes(b)), [18, 69, 256]);
    }
}
