//! GCS (the GPU-cluster lock scheme of MIND-style blades) as a family of the registry.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Gcs, Variant, MUTANTS};
use crate::agents::family::{find_mutant, in_range, CheckSize, Family, ParamError};

/// GCS's `[check]` keys.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct GcsCheck {
    /// The scheme: `gcs`, `no-data`, `no-locality` or `pthread`.
    pub variant: String,
    /// Threads per compute blade.
    pub blade_threads: usize,
}

impl Default for GcsCheck {
    fn default() -> Self {
        GcsCheck { variant: "gcs".to_string(), blade_threads: 1 }
    }
}

pub struct GcsFamily;

impl Family for GcsFamily {
    const NAME: &'static str = "gcs";
    const ABOUT: &'static str = "GCS: reader-writer locks with their data granted together and kept on the blade, on \
                                 disaggregated memory with an in-switch directory (and its pthread baseline)";
    const MUTANTS: &'static [(&'static str, &'static str)] = &[
        ("no-version-check", "the switch hands a queue off without comparing forwarded and received counts"),
        ("grant-without-data", "the grant of a handed-off lock carries no data"),
        ("early-inv-ack", "a reader blade acknowledges an invalidation with readers still inside"),
    ];
    const SIZES: [Option<&'static str>; 4] = [Some("compute blades"), None, Some("locks"), None];
    const SYMMETRY: bool = false;
    type CheckParams = GcsCheck;
    type Checked = Gcs;

    fn checked(size: &CheckSize, c: &GcsCheck, mutant: Option<&str>) -> Result<Gcs, ParamError> {
        in_range("caches", size.caches, 2, 4, "blades")?;
        in_range("addresses", size.addresses, 1, 2, "locks")?;
        in_range("blade_threads", c.blade_threads, 1, 2, "threads per blade")?;
        let v = Variant::parse(&c.variant).ok_or_else(|| {
            ParamError::new(
                "variant",
                format!("{:?}: expected {}", c.variant, Variant::ALL.map(|v| format!("\"{}\"", v.name())).join(", ")),
            )
        })?;
        let mutant = find_mutant(&MUTANTS, mutant)?;
        Ok(Gcs::checking(v, size.caches, c.blade_threads, size.addresses, (true, true)).with_mutant(mutant))
    }
}
