//! `[protocol.pcie]`: the root complex's keys, and their resolution on a machine.

use serde::{Deserialize, Serialize};

use super::family::PcieSpec;
use crate::agents::family::{Machine, ParamError};
use crate::engine::units::{Duration, Size};

/// `[protocol.pcie]`: where a NIC's reads are ordered (seed 003).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PcieConfig {
    /// `unordered`, `nic`, `rc` or `rc-opt`.
    #[serde(default = "default_pcie_variant")]
    pub variant: String,
    /// RLSQ entries (Table 2: 256).
    #[serde(default = "default_rlsq")]
    pub rlsq_entries: u32,
    /// Reads a queue pair may have in flight.
    #[serde(default = "default_rlsq")]
    pub window: u32,
    /// The last this many requesters are host cores (stores and loads
    /// straight to host memory), the others queue pairs.
    #[serde(default)]
    pub host_cores: u32,
    /// The root complex's time for a request from the PCIe link (its other
    /// handlers cost nothing); default: `directory_latency` for every handler.
    pub rc_latency: Option<Duration>,
    /// The home's time per message: the host directory and its L2 (a read
    /// that misses the L2 adds `memory_latency`); default:
    /// `directory_latency`.
    pub host_latency: Option<Duration>,
    /// Bytes of the footprint, from its start, that sit in the host's L2
    /// from the beginning (a table the host wrote before the run).
    pub host_cached: Option<Size>,
    /// The host's L2 at the home, 8 ways (default 256 KiB, Table 2).
    pub host_l2: Option<Size>,
    /// MMIO mode: every requester is a host core whose stores are MMIO
    /// writes to the NIC (the third memory), ordered by `"fence"`, `"rob"`
    /// or not at all (`"unordered"`).
    pub mmio: Option<String>,
    /// The MMIO reorder buffer's entries per virtual network (default 16:
    /// §5.2's 32 entries, 16 for relaxed stores and 16 for releases).
    pub rob_entries: Option<u32>,
    /// P2P mode: the NIC's reads cross a switch (the third memory) with one
    /// `"shared"` queue or virtual output queues (`"voq"`) to the root
    /// complex or a P2P device (the fourth memory).
    pub p2p: Option<String>,
    /// The last this many queue pairs read the P2P device (default 1).
    pub p2p_qps: Option<u32>,
    /// Entries of the switch's queue, or of each VOQ (default 32).
    pub switch_entries: Option<u32>,
    /// The P2P device's time per read, one at a time (default 100 ns).
    pub p2p_latency: Option<Duration>,
    /// Litmus programs only: the threads that are NIC queue pairs (they
    /// load and store: DMA reads and writes), a number or a list; the
    /// others are host cores. Not with `mmio`, whose threads are all host cores.
    #[serde(default, deserialize_with = "threads", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<u32>>")]
    pub nic: Option<Vec<u32>>,
}

/// A thread number, or a list of them.
fn threads<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<u32>>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Vec<u32>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a thread number or a list of them")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Vec<u32>, E> {
            u32::try_from(v).map(|v| vec![v]).map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Vec<u32>, E> {
            u32::try_from(v).map(|v| vec![v]).map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Vec<u32>, A::Error> {
            let mut out = Vec::new();
            while let Some(t) = a.next_element::<u32>()? {
                out.push(t);
            }
            Ok(out)
        }
    }
    d.deserialize_any(V).map(Some)
}

fn default_pcie_variant() -> String {
    "rc-opt".into()
}

fn default_rlsq() -> u32 {
    256
}

impl Default for PcieConfig {
    fn default() -> Self {
        toml::Table::new().try_into().expect("defaults deserialize")
    }
}

/// `[protocol.pcie]`: the variant, the RLSQ's size and the host's latencies.
pub fn resolve(table: &PcieConfig, m: &Machine) -> Result<PcieSpec, ParamError> {
    let (line, footprint) = (m.line_bytes as u64, m.footprint);
    let (dirs, caches) = (m.homes, m.cores);
    let (has_mmio, has_p2p) = (table.mmio.is_some(), table.p2p.is_some());
    if dirs != if has_p2p { 4 } else { 2 + has_mmio as usize } {
        return Err(ParamError::new(
            "memory",
            if has_p2p {
                format!("{dirs} memories: pcie's homes with p2p are the root complex, the host memory, the switch, then the P2P device; expected 4")
            } else if has_mmio {
                format!("{dirs} memories: pcie's homes with mmio are the root complex, the host memory, then the NIC's device; expected 3")
            } else {
                format!("{dirs} memories: pcie's homes are the root complex, then the host memory; expected 2")
            },
        ));
    }
    if table.nic.is_some() {
        return Err(ParamError::new(
            "protocol.pcie.nic",
            "applies to litmus programs only (fabricsim litmus); a run's queue pairs are the requesters before \
             host_cores",
        ));
    }
    use crate::agents::pcie::Variant;
    let c = table.clone();
    let variant = Variant::parse(&c.variant).ok_or_else(|| {
        ParamError::new(
            "protocol.pcie.variant",
            format!("{:?}: expected {}", c.variant, Variant::ALL.map(|v| format!("\"{}\"", v.name())).join(", ")),
        )
    })?;
    for (key, v) in [("rlsq_entries", c.rlsq_entries), ("window", c.window)] {
        if v == 0 || v > 65_536 {
            return Err(ParamError::new(format!("protocol.pcie.{key}"), format!("{v}: expected 1 to 65536")));
        }
    }
    let host_cached = c.host_cached.map_or(0, |s| s.bytes());
    if !host_cached.is_multiple_of(line) || host_cached > footprint {
        return Err(ParamError::new(
            "protocol.pcie.host_cached",
            format!("{host_cached} B: expected a multiple of the line ({line} B) up to the footprint ({footprint} B)"),
        ));
    }
    let l2_bytes = c.host_l2.map_or(256 << 10, |s| s.bytes());
    let host_l2 = crate::agents::cache::CacheGeometry::new(l2_bytes, line, 8)
        .map_err(|e| ParamError::new("protocol.pcie.host_l2", format!("{e} (the L2 has 8 ways of {line} B lines)")))?;
    if host_cached > l2_bytes {
        return Err(ParamError::new(
            "protocol.pcie.host_cached",
            format!("{host_cached} B: expected at most the host's L2 (protocol.pcie.host_l2, {l2_bytes} B)"),
        ));
    }
    // the host directory's sharer set: a bit per host core and one for the root complex
    if c.host_cores > 63 {
        return Err(ParamError::new(
            "protocol.pcie.host_cores",
            format!(
                "{}: the host directory's sharer set holds 63 host cores and the root complex; expected 0 to 63",
                c.host_cores
            ),
        ));
    }
    use crate::agents::pcie::Mmio;
    let mmio = match c.mmio.as_deref() {
        None => None,
        Some(m) => Some(Mmio::parse(m).ok_or_else(|| {
            ParamError::new(
                "protocol.pcie.mmio",
                format!("{m:?}: expected {}", Mmio::ALL.map(|v| format!("\"{}\"", v.name())).join(", ")),
            )
        })?),
    };
    let rob_entries = c.rob_entries.unwrap_or(16);
    if rob_entries == 0 || rob_entries > 4096 {
        return Err(ParamError::new("protocol.pcie.rob_entries", format!("{rob_entries}: expected 1 to 4096")));
    }
    if c.rob_entries.is_some() && mmio.is_none() {
        return Err(ParamError::new("protocol.pcie.rob_entries", "applies with protocol.pcie.mmio only"));
    }
    if mmio.is_some() && c.host_cores > 0 {
        return Err(ParamError::new(
            "protocol.pcie.host_cores",
            "with mmio every requester is a host core making MMIO writes; expected no host_cores",
        ));
    }
    let p2p_keys = [
        ("p2p_qps", c.p2p_qps.is_some()),
        ("switch_entries", c.switch_entries.is_some()),
        ("p2p_latency", c.p2p_latency.is_some()),
    ];
    let p2p = match c.p2p.as_deref() {
        None => {
            if let Some((key, _)) = p2p_keys.iter().find(|k| k.1) {
                return Err(ParamError::new(format!("protocol.pcie.{key}"), "applies with protocol.pcie.p2p only"));
            }
            None
        }
        Some(q) => {
            let voq = match q {
                "voq" => true,
                "shared" => false,
                _ => {
                    return Err(ParamError::new("protocol.pcie.p2p", format!("{q:?}: expected \"shared\" or \"voq\"")))
                }
            };
            if mmio.is_some() {
                return Err(ParamError::new(
                    "protocol.pcie.p2p",
                    "P2P reads and MMIO writes are separate systems; expected one of p2p and mmio",
                ));
            }
            let entries = c.switch_entries.unwrap_or(32);
            if entries == 0 || entries > 4096 {
                return Err(ParamError::new("protocol.pcie.switch_entries", format!("{entries}: expected 1 to 4096")));
            }
            let qps = c.p2p_qps.unwrap_or(1) as usize;
            Some((voq, qps, entries as usize, c.p2p_latency.map_or(100 * crate::engine::NS, |d| d.0)))
        }
    };
    let spec = PcieSpec {
        p2p,
        mmio,
        rob_entries: rob_entries as usize,
        variant,
        rlsq_entries: c.rlsq_entries as usize,
        window: c.window as usize,
        host_cores: c.host_cores as usize,
        rc_latency: c.rc_latency.map(|d| d.0),
        host_latency: c.host_latency.map(|d| d.0),
        host_cached: host_cached / line,
        host_l2,
    };
    if let Some((_, qps, _, _)) = spec.p2p {
        if spec.host_cores > 0 {
            return Err(ParamError::new(
                "protocol.pcie.host_cores",
                "the P2P system has queue pairs only; expected no host_cores",
            ));
        }
        if qps == 0 || qps >= caches {
            return Err(ParamError::new(
                "protocol.pcie.p2p_qps",
                format!(
                    "{qps}: the last queue pairs read the P2P device; expected 1 to {} (at least one of the {caches} \
                     reads the host)",
                    caches.saturating_sub(1)
                ),
            ));
        }
    }
    if spec.mmio.is_none() && spec.host_cores >= caches {
        return Err(ParamError::new(
            "protocol.pcie.host_cores",
            format!(
                "{}: the last requesters are host cores; expected fewer than the {caches} requesters (at least one \
                 queue pair)",
                spec.host_cores
            ),
        ));
    }
    Ok(spec)
}
