//! Named cores: one per machine the reproduced papers name, every value
//! from a source cited in docs/cpu-presets.md (values no opened source
//! states are marked unverified there).

use super::params::{Model, Params};
use crate::engine::Time;

/// A private cache level of a preset: geometry, hit latency in core
/// cycles, and miss entries (MSHRs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    pub size: u64,
    pub ways: u32,
    pub latency_cycles: u32,
    pub mshrs: u32,
}

impl Level {
    /// The hit latency at the preset's clock.
    pub fn latency(&self, cycle: Time) -> Time {
        self.latency_cycles as Time * cycle
    }
}

/// A machine's core front end and private levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    /// The machine and the paper that names it.
    pub machine: &'static str,
    /// The front end (its `model` is the configuration's, not the preset's).
    pub core: Params,
    pub l1: Level,
    pub l2: Level,
}

const KIB: u64 = 1024;

/// BI's Xeon Platinum 8180 (Skylake-SP), named on its own because BI's
/// machine (`agents/bi`) builds constants from it (`FILL_BUFFERS` sizes an
/// array): one definition, so BI cannot drift from the preset.
pub const SKYLAKE_SP: Preset = Preset {
    name: "skylake-sp",
    machine: "Intel Xeon Platinum 8180 at 2.5 GHz (Bounded Incoherence's HPE Superdome Flex)",
    core: Params {
        rob: 224,
        width: 4,
        load_queue: 72,
        fill_buffers: 12,
        store_buffer: 56,
        wc_buffers: 12,
        cycle: 400,
        model: Model::Tso,
    },
    l1: Level { size: 32 * KIB, ways: 8, latency_cycles: 4, mshrs: 12 },
    l2: Level { size: 1024 * KIB, ways: 16, latency_cycles: 14, mshrs: 16 },
};

/// Every preset. A cycle time is whole picoseconds: 3 GHz is 333 ps
/// (0.1 % slow), 2.2 GHz 455 ps (0.1 % slow).
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "gem5-o3-2ghz",
        machine: "gem5 O3 core at 2 GHz with CORD's Table 1 caches (core model and clock assumed)",
        core: Params {
            rob: 192,
            width: 8,
            load_queue: 32,
            fill_buffers: 16,
            store_buffer: 32,
            wc_buffers: 16,
            cycle: 500,
            model: Model::Tso,
        },
        l1: Level { size: 64 * KIB, ways: 2, latency_cycles: 2, mshrs: 16 },
        l2: Level { size: 64 * KIB, ways: 8, latency_cycles: 4, mshrs: 16 },
    },
    Preset {
        name: "gem5-o3-3ghz",
        machine: "gem5 O3 core at 3 GHz with RLSQ's Table 2 caches (RLSQ Table 3's MMIO host)",
        core: Params {
            rob: 192,
            width: 8,
            load_queue: 32,
            fill_buffers: 4,
            store_buffer: 32,
            wc_buffers: 4,
            cycle: 333,
            model: Model::Tso,
        },
        l1: Level { size: 64 * KIB, ways: 2, latency_cycles: 2, mshrs: 4 },
        l2: Level { size: 256 * KIB, ways: 8, latency_cycles: 20, mshrs: 20 },
    },
    SKYLAKE_SP,
    Preset {
        name: "sapphire-rapids",
        machine: "Intel Xeon Gold 6416H at 2.2 GHz (ESF's validation host)",
        core: Params {
            rob: 512,
            width: 6,
            load_queue: 192,
            fill_buffers: 16,
            store_buffer: 114,
            wc_buffers: 16,
            cycle: 455,
            model: Model::Tso,
        },
        l1: Level { size: 48 * KIB, ways: 12, latency_cycles: 5, mshrs: 16 },
        l2: Level { size: 2048 * KIB, ways: 16, latency_cycles: 16, mshrs: 48 },
    },
];

/// The preset called `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_a_valid_core_with_levels_that_grow() {
        for p in PRESETS {
            p.core.validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(p.l1.size <= p.l2.size && p.l1.latency_cycles < p.l2.latency_cycles, "{}", p.name);
            assert_eq!(p.l1.size % (p.l1.ways as u64 * 64), 0, "{}: L1 sets", p.name);
            assert_eq!(p.l2.size % (p.l2.ways as u64 * 64), 0, "{}: L2 sets", p.name);
            assert_eq!(find(p.name), Some(p));
        }
        assert_eq!(find("skylake"), None);
    }
}
