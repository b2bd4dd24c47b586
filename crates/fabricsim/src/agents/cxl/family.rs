//! DCOH (ESF's device-managed coherence) as a family of the registry.

use schemars::JsonSchema;
use serde::Deserialize;

use super::dcoh::{Dcoh, MAX_BLOCK, MUTANTS};
use crate::agents::family::{find_mutant, in_range, CheckSize, Family, ParamError};

/// DCOH's `[check]` keys.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DcohCheck {
    /// Snoop-filter entries per device (an entry tracks one line).
    pub snoop_filter: usize,
    /// Longest block of lines one BISnp invalidates (InvBlk; 1: none).
    pub invblk: u8,
    /// Lines at the start of each device that are HDM-H: host-managed,
    /// not tracked by the snoop filter.
    pub hdm_h: u8,
}

impl Default for DcohCheck {
    fn default() -> Self {
        DcohCheck { snoop_filter: 1, invblk: 1, hdm_h: 0 }
    }
}

pub struct DcohFamily;

impl Family for DcohFamily {
    const NAME: &'static str = "dcoh";
    const ABOUT: &'static str =
        "CXL device-managed coherence (ESF): an inclusive snoop filter per device, BISnp/BIRsp \
                                 back-invalidation, InvBlk blocks";
    const MUTANTS: &'static [(&'static str, &'static str)] = &[
        ("free-before-all-birsp", "the device frees the entry at the first BIRsp instead of the last"),
        ("drop-dirty-birsp", "the device loses the dirty data a BIRsp carries"),
        ("bisnp-waits-for-request", "a requester holds a BISnp behind its own request on the line"),
        ("invblk-one-too-many", "InvBlk names one line more than the block being freed"),
        (
            "stale-writeback-in-birsp",
            "a BISnp during a write-back is answered with the stale write-back data (issue 38)",
        ),
    ];
    const SIZES: [Option<&'static str>; 4] =
        [Some("requesters"), Some("memory devices"), Some("lines"), Some("data values")];
    const SYMMETRY: bool = true;
    type CheckParams = DcohCheck;
    type Checked = Dcoh;

    fn checked(size: &CheckSize, p: &DcohCheck, mutant: Option<&str>) -> Result<Dcoh, ParamError> {
        in_range("caches", size.caches, 1, 4, "requesters")?;
        in_range("directories", size.directories, 1, 2, "devices")?;
        in_range("addresses", size.addresses, 1, 6, "lines")?;
        in_range("values", size.values, 1, 4, "")?;
        in_range("snoop_filter", p.snoop_filter, 1, 4, "entries")?;
        in_range("invblk", p.invblk as usize, 1, MAX_BLOCK as usize, "")?;
        let mutant = find_mutant(&MUTANTS, mutant)?;
        let hdm_h = p.hdm_h as u64;
        if hdm_h > (size.addresses as u64).div_ceil(size.directories as u64) {
            return Err(ParamError::new("hdm_h", format!("{hdm_h}: expected at most a device's lines")));
        }
        Ok(Dcoh::checked(
            size.caches,
            size.directories,
            size.addresses as u64,
            p.snoop_filter,
            p.invblk,
            size.values as u8,
        )
        .with_mutant(mutant)
        .with_hdm_h(hdm_h)
        .with_symmetry(size.symmetry))
    }
}
