//! `[protocol.dcoh]`: DCOH's run keys (the devices' snoop filters, InvBlk,
//! HDM-H), and their resolution on a machine.

use serde::{Deserialize, Serialize};

use super::family::DcohSpec;
use crate::agents::family::{Machine, ParamError};
use crate::engine::units::Size;

/// `[protocol.dcoh]`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DcohConfig {
    /// Each device's snoop filter (`[protocol.dcoh.snoop_filter]`);
    /// default: the size of a requester's cache, fully associative, FIFO
    /// (a check: one entry of a 64 B line).
    pub snoop_filter: Option<SnoopFilterParams>,
    /// The longest block one BISnp invalidates (InvBlk, 2 to 4; 1: plain
    /// BISnp). Above 1 the snoop filter picks victims by block length.
    pub invblk: Option<u8>,
    /// Bytes at the start of each device's memory that are HDM-H
    /// (host-managed: no snoop filter, no back-invalidation); the rest is
    /// HDM-DB. Default 0: all HDM-DB.
    pub hdm_h: Option<Size>,
}

/// `[protocol.dcoh.snoop_filter]`: a DCOH's inclusive snoop filter.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnoopFilterParams {
    /// Entries × line size.
    pub size: Size,
    /// Default: fully associative.
    #[serde(default = "full_ways")]
    pub ways: crate::agents::cache::Ways,
    /// Default: fifo.
    #[serde(default = "fifo")]
    pub policy: crate::agents::cache::VictimPolicy,
}

fn full_ways() -> crate::agents::cache::Ways {
    crate::agents::cache::Ways::Full
}
fn fifo() -> crate::agents::cache::VictimPolicy {
    crate::agents::cache::VictimPolicy::Fifo
}

/// `[protocol.dcoh]`: the snoop filter (default: a requester
/// cache's size, fully associative, FIFO), InvBlk and interleaving.
pub fn resolve(c: &DcohConfig, m: &Machine) -> Result<DcohSpec, ParamError> {
    let (line, lines, devices) = (m.line_bytes as u64, m.lines as u64, m.homes);
    use crate::agents::cache::{CacheGeometry, VictimPolicy, Ways};
    let cache_size = m.cache.map_or(0, |c| c.geometry.size_bytes());
    let (size, ways, sf_policy) = match &c.snoop_filter {
        Some(p) => (p.size.bytes(), p.ways, p.policy),
        None => (cache_size, Ways::Full, VictimPolicy::Fifo),
    };
    let ways = match ways {
        Ways::Count(w) => w,
        Ways::Full => (size / line.max(1)).clamp(1, u32::MAX as u64) as u32,
    };
    let sf = CacheGeometry::new(size, line, ways)
        .map_err(|e| ParamError::new(format!("protocol.dcoh.snoop_filter.{}", e.key()), e.to_string()))?;
    let max_block = c.invblk.unwrap_or(1);
    if !(1..=crate::agents::cxl::dcoh::MAX_BLOCK).contains(&max_block) {
        return Err(ParamError::new(
            "protocol.dcoh.invblk",
            format!("{max_block}: expected 1 (plain BISnp) to 4 lines"),
        ));
    }
    if max_block > 1 && !sf.is_fully_associative() {
        return Err(ParamError::new(
            "protocol.dcoh.invblk",
            format!(
                "{max_block}: InvBlk's block-length victim policy needs a fully associative snoop filter; \
                 expected ways = \"full\" in [protocol.dcoh.snoop_filter]"
            ),
        ));
    }
    let granule = m.granule;
    if lines > u32::MAX as u64 {
        return Err(ParamError::new("workload.footprint", format!("{lines} lines: expected at most 2^32")));
    }
    let per_device = lines.div_ceil(devices.max(1) as u64);
    let hdm_h = match c.hdm_h {
        None => 0,
        Some(h) if h.bytes().is_multiple_of(line) && h.bytes() / line <= per_device => h.bytes() / line,
        Some(h) => {
            return Err(ParamError::new(
                "protocol.dcoh.hdm_h",
                format!(
                    "{} B: expected a multiple of the line ({line} B) up to a device's share of the footprint \
                     ({} B)",
                    h.bytes(),
                    per_device * line
                ),
            ))
        }
    };
    Ok(DcohSpec { sf, sf_policy, max_block, granule, hdm_h })
}
