//! `[protocol.cord]`: CORD's keys, and their resolution on a machine.

use serde::{Deserialize, Serialize};

use super::family::CordSpec;
use crate::agents::family::{Machine, ParamError};

/// `[protocol.cord]`: write-through stores ordered at the source (`so`),
/// at the directory (`cord`) or point to point (`mp`); CORD's field widths
/// and table sizes default to the paper's (8-bit epochs, 32-bit counters,
/// Table 3's entries).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CordConfig {
    /// `cord` (directory-ordered), `so` (source-ordered: every write-through
    /// acked) or `mp` (posted writes ordered point to point).
    #[serde(default = "cord_variant")]
    pub variant: String,
    /// Bits of a Release's epoch number (default 8).
    pub epoch_bits: Option<u8>,
    /// Bits of a store counter (default 32).
    pub counter_bits: Option<u8>,
    /// Entries of a processor's counter table (default 8).
    pub proc_counters: Option<u32>,
    /// A processor's unacknowledged Releases (default 8).
    pub proc_unacked: Option<u32>,
    /// A directory's counter entries per core (default 8).
    pub dir_counters: Option<u32>,
    /// A directory's pending notifications per core (default 16).
    pub dir_notis: Option<u32>,
    /// SEQ-n (§4.1, Fig 10): one n-bit sequence number per request instead
    /// of epochs and store counters (0 or absent: CORD).
    pub seq_bits: Option<u8>,
    /// Stores a core buffers before it stops issuing (the write-through buffer).
    #[serde(default = "cord_buffer")]
    pub store_buffer: u32,
    /// Loads a core has outstanding at most.
    #[serde(default = "cord_buffer")]
    pub loads: u32,
    /// Litmus programs and checks: each location's home directory, by
    /// name (`{ x = 0, y = 1 }`; a check's addresses by number, `{ 0 = 1 }`;
    /// default: location i at directory i mod threads, or mod directories).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homes: Option<std::collections::BTreeMap<String, u8>>,
}

fn cord_variant() -> String {
    "cord".into()
}
fn cord_buffer() -> u32 {
    16
}

impl Default for CordConfig {
    fn default() -> Self {
        toml::Table::new().try_into().expect("defaults deserialize")
    }
}

/// `[protocol.cord]`: the variant, CORD's widths and tables (checked
/// against each other), the cores' buffers, the interleaving.
pub fn resolve(table: &CordConfig, m: &Machine) -> Result<CordSpec, ParamError> {
    let model = m.model;
    use crate::programs::Model;
    if model == Model::Sc {
        return Err(ParamError::new("protocol.model", "\"sc\": cord's cores run rc or tso (the paper's models)"));
    }
    if table.homes.is_some() {
        return Err(ParamError::new(
            "protocol.cord.homes",
            "applies to litmus programs only (fabricsim litmus); a run's lines interleave over the directories by \
             [protocol] interleave",
        ));
    }
    let (variant, params) =
        ordering(table).map_err(|e| ParamError::new(format!("protocol.cord.{}", e.key), e.message))?;
    let c = table.clone();
    for (key, v) in [("store_buffer", c.store_buffer), ("loads", c.loads)] {
        if v == 0 || v > 4096 {
            return Err(ParamError::new(format!("protocol.cord.{key}"), format!("{v}: expected 1 to 4096")));
        }
    }
    let granule = m.granule;
    Ok(CordSpec {
        variant,
        params,
        store_buffer: c.store_buffer as usize,
        loads: c.loads as u16,
        granule,
        max_store: m.max_store,
    })
}

/// The variant and CORD's widths and table sizes (defaults: the paper's);
/// errors name the key within the table.
pub fn ordering(table: &CordConfig) -> Result<(crate::agents::cord::Variant, crate::agents::cord::Params), ParamError> {
    use crate::agents::cord::{Params, Variant};
    let c = table;
    let variant = Variant::parse(&c.variant)
        .ok_or_else(|| ParamError::new("variant", format!("{:?}: expected \"cord\", \"so\" or \"mp\"", c.variant)))?;
    let d = Params::default();
    let size = |v: Option<u32>, dflt: usize| v.map_or(dflt, |v| v as usize);
    let params = Params {
        epoch_bits: c.epoch_bits.unwrap_or(d.epoch_bits),
        counter_bits: c.counter_bits.unwrap_or(d.counter_bits),
        proc_counters: size(c.proc_counters, d.proc_counters),
        proc_unacked: size(c.proc_unacked, d.proc_unacked),
        dir_counters: size(c.dir_counters, d.dir_counters),
        dir_notis: size(c.dir_notis, d.dir_notis),
        seq_bits: c.seq_bits.unwrap_or(0),
    };
    if params.seq_bits > 0 && variant != Variant::Cord {
        return Err(ParamError::new(
            "seq_bits",
            format!("{}: SEQ-n replaces CORD's epochs and counters; expected variant = \"cord\"", params.seq_bits),
        ));
    }
    params.validate().map_err(|m| {
        let key = m.split(' ').next().unwrap_or("epoch_bits");
        ParamError::new(key, m.clone())
    })?;
    Ok((variant, params))
}
