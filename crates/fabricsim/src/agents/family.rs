//! A protocol family as the rest of fabricsim knows it: its name, its
//! parameters (one strict struct, documented key by key), its mutants and
//! how to build it small for the checker.
//!
//! Each protocol's folder implements [`Family`] once (`family.rs` beside
//! its state machine); the registry (`crate::registry`) lists the
//! families, one line each, and the checker, the command line and
//! `fabricsim protocols` reach a protocol only through it.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::protocol::Protocol;
use crate::engine::pack::Pack;

/// The size of a checked system: the `[check]` keys every family reads.
#[derive(Debug, Clone)]
pub struct CheckSize {
    /// Caches, cores, clients, requesters or blades: the family says which.
    pub caches: usize,
    /// Directories, homes or devices.
    pub directories: usize,
    /// Addresses, lines or locks.
    pub addresses: usize,
    /// Data values a store may write.
    pub values: usize,
    /// Store one state per symmetry orbit.
    pub symmetry: bool,
}

/// A parameter the family refuses: the key (within `[check]`) and why,
/// with what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    pub key: String,
    pub message: String,
}

impl ParamError {
    pub fn new(key: &str, message: impl Into<String>) -> Self {
        ParamError { key: key.to_string(), message: message.into() }
    }
}

/// A protocol family: one `impl` per protocol, in its folder.
pub trait Family: 'static {
    /// The name configurations and the command line use.
    const NAME: &'static str;
    /// One line: what the protocol is and which paper it comes from.
    const ABOUT: &'static str;
    /// Its deliberately broken variants: name and what each breaks.
    const MUTANTS: &'static [(&'static str, &'static str)];
    /// What the size keys of `[check]` mean for this family
    /// (`caches`, `directories`, `addresses`, `values`), in that order;
    /// None: the family does not take the key.
    const SIZES: [Option<&'static str>; 4];
    /// Whether it declares scalarsets (`symmetry = true` applies).
    const SYMMETRY: bool;

    /// The family's own `[check]` keys, strict (`deny_unknown_fields`),
    /// one doc comment per key: `fabricsim protocols` lists them from it.
    type CheckParams: DeserializeOwned + JsonSchema;
    /// The protocol the checker explores.
    type Checked: Protocol<Agent: Send + Sync + Pack, Msg: Send + Sync + Pack, Ghost: Send + Sync + Pack, Action: Send + Sync>
        + Sync;

    /// Build the protocol small for the checker, refusing sizes and
    /// parameters it cannot take.
    fn checked(size: &CheckSize, params: &Self::CheckParams, mutant: Option<&str>)
        -> Result<Self::Checked, ParamError>;
}

/// `mutant`'s entry of `table`, or an error listing the names.
pub fn find_mutant<M: Copy>(table: &[(&str, M)], mutant: Option<&str>) -> Result<Option<M>, ParamError> {
    match mutant {
        None => Ok(None),
        Some(m) => table.iter().find(|x| x.0 == m).map(|x| Some(x.1)).ok_or_else(|| {
            ParamError::new(
                "mutant",
                format!("{m:?}: expected one of {}", table.iter().map(|x| x.0).collect::<Vec<_>>().join(", ")),
            )
        }),
    }
}

/// Refuse `value` of size key `key` outside `lo..=hi`, naming `what`
/// (may be empty).
pub fn in_range(key: &str, value: usize, lo: usize, hi: usize, what: &str) -> Result<(), ParamError> {
    if (lo..=hi).contains(&value) {
        return Ok(());
    }
    let what = if what.is_empty() { String::new() } else { format!(" {what}") };
    let expected = if hi == lo + 1 { format!("{lo} or {hi}") } else { format!("{lo} to {hi}") };
    Err(ParamError::new(key, format!("{value}: expected {expected}{what}")))
}
