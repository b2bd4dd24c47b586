//! `[protocol.gcs]`: GCS's keys, and their resolution on a machine.

use serde::{Deserialize, Serialize};

use super::family::GcsSpec;
use crate::agents::family::{Machine, ParamError};
use crate::engine::units::{Duration, Size};

/// `[protocol.gcs]`: GCS's scheme and its blades (seed 004). Requesters
/// are threads, blade-major; memories are the blades' cache controllers,
/// then the switch directory, then the memory blade.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GcsConfig {
    /// `gcs`, `no-data` (without combined data), `no-locality` or
    /// `pthread` (the layered baseline: pthread_rwlock on MIND's MSI).
    pub variant: Option<String>,
    /// The bytes of each lock's region (the shared state; default 1 KiB).
    pub region: Option<Size>,
    /// A MIND cache line: a page (default 4 KiB).
    pub page: Option<Size>,
    /// The blade controller's time per message (default: `directory_latency`).
    pub blade_latency: Option<Duration>,
    /// A critical section's length (default 0).
    pub critical_section: Option<Duration>,
    /// A blade NIC's processing unit: its time per network message, one
    /// message at a time (default 0: none).
    pub nic_service: Option<Duration>,
    /// Threads per compute blade: a check's (default 1); a run's are its
    /// requesters over its blades, which this must equal if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blade_threads: Option<u32>,
}

/// The scheme `variant` names (default `gcs`); the error names the key
/// within the table.
pub fn variant(table: &GcsConfig) -> Result<crate::agents::gcs::Variant, ParamError> {
    use crate::agents::gcs::Variant;
    let name = table.variant.as_deref().unwrap_or("gcs");
    Variant::parse(name).ok_or_else(|| {
        ParamError::new(
            "variant",
            format!("{name:?}: expected {}", Variant::ALL.map(|v| format!("\"{}\"", v.name())).join(", ")),
        )
    })
}

/// `[protocol.gcs]`: the scheme; the blades, threads and locks from the system's shape.
pub fn resolve(table: &GcsConfig, m: &Machine) -> Result<GcsSpec, ParamError> {
    let (caches, dirs, lines) = (m.cores, m.homes, m.lines as u64);
    let c = table.clone();
    let variant = variant(table).map_err(|e| ParamError::new("protocol.gcs.variant", e.message))?;
    // the directory numbers a lock's page after every lock
    if lines > (u32::MAX / 2) as u64 {
        return Err(ParamError::new("workload.footprint", format!("{lines} locks: expected at most 2^31")));
    }
    let mut sizes = [0u32; 2];
    for (i, (key, v, default)) in [("region", c.region, 1024), ("page", c.page, 4096)].into_iter().enumerate() {
        let b = v.map_or(default, |s| s.bytes());
        if b > 1 << 20 {
            return Err(ParamError::new(format!("protocol.gcs.{key}"), format!("{b} B: expected at most 1 MiB")));
        }
        sizes[i] = b as u32;
    }
    let blades = dirs - 2;
    if let Some(n) = c.blade_threads.filter(|&n| n as usize != caches / blades) {
        return Err(ParamError::new(
            "protocol.gcs.blade_threads",
            format!(
                "{n}: a run's threads per blade are its requesters over its blades ({caches} / {blades} = {}); \
                 expected that or no blade_threads",
                caches / blades
            ),
        ));
    }
    Ok(GcsSpec {
        variant,
        blades,
        threads: caches / blades,
        locks: lines.max(1) as usize,
        region: sizes[0],
        page: sizes[1],
        blade_latency: c.blade_latency.map(|d| d.ps()),
        critical_section: c.critical_section.map_or(0, |d| d.ps()),
        nic_service: c.nic_service.map_or(0, |d| d.ps()),
    })
}
