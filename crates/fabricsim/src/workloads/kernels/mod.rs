//! The seeds' kernels: workload patterns that drive a protocol's cores
//! with operations of their own (releases, acquires, fences, batches), as
//! the papers' microbenchmarks do. Each is a [`Kernel`] that builds one
//! [`OpSource`] per core; the timing engine sees only those traits.
//!
//! A kernel registers once, in [`KERNELS`]: its pattern name and its keys,
//! one `deny_unknown_fields` struct read from `[workload.<pattern>]`.
//! The configuration knows kernels only through this list.
//!
//! [`OpSource`]: super::source::OpSource

pub mod dma_reads;
pub mod kvs_gets;
pub mod mmio_writes;
pub mod producer_consumer;
pub mod remote_stores;

use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::source::{Kernel, KernelError};
use crate::error::ConfigError;
use crate::input::{blame, params_of, typed, Override, Param};

/// What a kernel's keys resolve against: the workload's line and footprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    pub line: u64,
    pub footprint: u64,
}

/// A kernel's `[workload.<pattern>]` keys.
pub trait KernelKeys: DeserializeOwned + Serialize + schemars::JsonSchema + Default + 'static {
    /// The pattern's name (`[workload] pattern`).
    const NAME: &'static str;
    /// One line on what it does.
    const ABOUT: &'static str;
    /// Validate the keys and build the kernel; an error names its key.
    fn resolve(self, w: &Workload) -> Result<Arc<dyn Kernel>, KernelError>;
}

/// A registered kernel, as the configuration uses it.
pub trait Entry: Sync {
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    /// Build the kernel from its table (absent: every key's default);
    /// errors name `prefix.<pattern>.KEY`.
    fn build(
        &self,
        table: Option<toml::Table>,
        source: &str,
        prefix: &str,
        overrides: &[Override],
        w: &Workload,
    ) -> Result<(Arc<dyn Kernel>, serde_json::Value), ConfigError>;
    /// The keys, with type, default and doc (for listings).
    fn params(&self) -> Vec<Param>;
}

struct Registered<K>(PhantomData<fn() -> K>);

impl<K: KernelKeys> Entry for Registered<K> {
    fn name(&self) -> &'static str {
        K::NAME
    }
    fn about(&self) -> &'static str {
        K::ABOUT
    }
    fn build(
        &self,
        table: Option<toml::Table>,
        source: &str,
        prefix: &str,
        overrides: &[Override],
        w: &Workload,
    ) -> Result<(Arc<dyn Kernel>, serde_json::Value), ConfigError> {
        let at = format!("{prefix}.{}", K::NAME);
        let keys: K = typed(table.unwrap_or_default(), source, &at, overrides)?;
        let resolved = serde_json::to_value(&keys).expect("a table serializes");
        let kernel = keys.resolve(w).map_err(|e| blame(source, overrides, format!("{at}.{}", e.key), e.message))?;
        Ok((kernel, resolved))
    }
    fn params(&self) -> Vec<Param> {
        params_of(&serde_json::Value::from(schemars::schema_for!(K)))
    }
}

/// Every kernel, by pattern name: one line each.
pub static KERNELS: &[&dyn Entry] = &[
    &Registered::<producer_consumer::Keys>(PhantomData),
    &Registered::<remote_stores::Keys>(PhantomData),
    &Registered::<dma_reads::Keys>(PhantomData),
    &Registered::<kvs_gets::Keys>(PhantomData),
    &Registered::<mmio_writes::Keys>(PhantomData),
];

/// The kernel of pattern `name`.
pub fn find(name: &str) -> Option<&'static dyn Entry> {
    KERNELS.iter().copied().find(|k| k.name() == name)
}

/// The kernels that have a key `key` (in [`KERNELS`]' order). The key
/// names are read from the schemas once: a configuration asks per
/// requester.
pub fn owners(key: &str) -> impl Iterator<Item = &'static str> + '_ {
    static KEYS: OnceLock<Vec<Vec<String>>> = OnceLock::new();
    let keys = KEYS.get_or_init(|| KERNELS.iter().map(|k| k.params().into_iter().map(|p| p.key).collect()).collect());
    KERNELS.iter().zip(keys).filter(move |(_, ks)| ks.iter().any(|k| k == key)).map(|(k, _)| k.name())
}
