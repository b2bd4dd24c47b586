//! The protocol registry: every protocol family fabricsim has, one line
//! each. The checker's configuration, the command line and `fabricsim
//! protocols` know a protocol only through this list; a protocol's name,
//! parameters and mutants live in its own folder (`agents::<x>::family`).
//!
//! Adding a protocol: implement [`Family`] in its folder and add its line
//! to [`FAMILIES`].

use std::marker::PhantomData;

use serde::Deserialize;

use crate::agents::family::{CheckSize, Family, ParamError};
use crate::check::explorer::{explore, Options, Report};
use crate::config::load::{typed, Override};

pub mod check_file;

/// The families, in the order `fabricsim protocols` lists them.
pub static FAMILIES: &[&dyn Entry] = &[
    &Registered::<crate::agents::coherence::family::Msi>(PhantomData),
    &Registered::<crate::agents::coherence::family::Mesi>(PhantomData),
    &Registered::<crate::agents::coherence::family::GermanFamily>(PhantomData),
    &Registered::<crate::agents::cxl::family::DcohFamily>(PhantomData),
    &Registered::<crate::agents::cord::family::CordFamily>(PhantomData),
    &Registered::<crate::agents::gcs::family::GcsFamily>(PhantomData),
    &Registered::<crate::agents::bi::family::BiFamily>(PhantomData),
    &Registered::<crate::agents::bi::family::BiRuntimeFamily>(PhantomData),
];

/// The family named `name`.
pub fn find(name: &str) -> Option<&'static dyn Entry> {
    FAMILIES.iter().copied().find(|f| f.name() == name)
}

/// Every family's name.
pub fn names() -> Vec<&'static str> {
    FAMILIES.iter().map(|f| f.name()).collect()
}

/// The names of the families that take `[check]` key `key` of their own.
pub fn taking(key: &str) -> Vec<&'static str> {
    FAMILIES.iter().filter(|f| f.params().iter().any(|p| p.key == key)).map(|f| f.name()).collect()
}

/// Every family as `fabricsim protocols` shows it (JSON: name, about, what
/// the sizes mean, symmetry, parameters with type, default and doc,
/// mutants with what each breaks).
pub fn describe() -> serde_json::Value {
    let families: Vec<serde_json::Value> = FAMILIES
        .iter()
        .map(|f| {
            // a list, so the sizes keep their order
            let sizes: Vec<serde_json::Value> = ["caches", "directories", "addresses", "values"]
                .iter()
                .zip(f.sizes())
                .filter_map(|(k, m)| m.map(|m| serde_json::json!({"key": k, "means": m})))
                .collect();
            let params: Vec<serde_json::Value> = f
                .params()
                .into_iter()
                .map(|p| serde_json::json!({"key": p.key, "type": p.kind, "default": p.default, "doc": p.doc}))
                .collect();
            let mutants: Vec<serde_json::Value> =
                f.mutants().iter().map(|(n, a)| serde_json::json!({"name": n, "breaks": a})).collect();
            serde_json::json!({
                "name": f.name(),
                "about": f.about(),
                "check": {"sizes": sizes, "symmetry": f.symmetry(), "params": params},
                "mutants": mutants,
            })
        })
        .collect();
    serde_json::Value::Array(families)
}

/// One parameter, as `fabricsim protocols` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub key: String,
    /// The JSON-schema type ("integer", "boolean", "string", "array"...).
    pub kind: String,
    /// The default, as TOML would write it (empty: none).
    pub default: String,
    pub doc: String,
}

/// A family behind the registry: [`Family`] with its types erased.
pub trait Entry: Sync {
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    fn mutants(&self) -> &'static [(&'static str, &'static str)];
    /// What `caches`, `directories`, `addresses` and `values` mean (None: not taken).
    fn sizes(&self) -> [Option<&'static str>; 4];
    fn symmetry(&self) -> bool;
    /// The family's own `[check]` keys.
    fn params(&self) -> Vec<Param>;
    /// Build the family from its keys (`table`: the `[check]` keys that
    /// are not the common ones; `source` and `overrides` name where a bad
    /// one came from) and explore it.
    fn check(
        &self,
        size: &CheckSize,
        table: toml::Table,
        mutant: Option<&str>,
        opts: &Options,
        source: &str,
        overrides: &[Override],
    ) -> Result<Report, CheckError>;
}

/// Why a check could not start.
#[derive(Debug)]
pub enum CheckError {
    /// A key's value is refused.
    Param(ParamError),
    /// The keys did not deserialize (the error already names the file).
    Config(crate::config::ConfigError),
}

/// A family in the list (`fn() -> F`: the marker is Sync whatever `F` is).
struct Registered<F>(PhantomData<fn() -> F>);

/// The family's keys under `[check]`, so errors name `check.KEY`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wrap<T> {
    check: T,
}

/// Symmetry reduction tries every renaming of the scalarsets that are not
/// sorted by key (data values, addresses): refuse more than this many.
const MAX_RENAMINGS: usize = 5040;

fn renamings<P: crate::agents::protocol::Protocol>(p: &P) -> Result<(), ParamError> {
    let mut n = 1usize;
    for s in p.scalarsets().iter().filter(|s| !s.keyed) {
        n = n.saturating_mul((1..=s.size).product());
        if n > MAX_RENAMINGS {
            return Err(ParamError::new(
                "symmetry",
                format!(
                    "true: {} {} would each be renamed in every order ({n} or more renamings per state); \
                     expected at most {MAX_RENAMINGS}: use fewer values or addresses, or symmetry = false",
                    s.size,
                    s.name.to_lowercase()
                ),
            ));
        }
    }
    Ok(())
}

impl<F: Family> Entry for Registered<F> {
    fn name(&self) -> &'static str {
        F::NAME
    }
    fn about(&self) -> &'static str {
        F::ABOUT
    }
    fn mutants(&self) -> &'static [(&'static str, &'static str)] {
        F::MUTANTS
    }
    fn sizes(&self) -> [Option<&'static str>; 4] {
        F::SIZES
    }
    fn symmetry(&self) -> bool {
        F::SYMMETRY
    }
    fn params(&self) -> Vec<Param> {
        params_of(&serde_json::Value::from(schemars::schema_for!(F::CheckParams)))
    }
    fn check(
        &self,
        size: &CheckSize,
        table: toml::Table,
        mutant: Option<&str>,
        opts: &Options,
        source: &str,
        overrides: &[Override],
    ) -> Result<Report, CheckError> {
        let keys = toml::Table::from_iter([("check".to_string(), toml::Value::Table(table))]);
        let w: Wrap<F::CheckParams> = typed(keys, source, "", overrides).map_err(CheckError::Config)?;
        let p = F::checked(size, &w.check, mutant).map_err(CheckError::Param)?;
        if size.symmetry {
            renamings(&p).map_err(CheckError::Param)?;
        }
        Ok(explore(&p, opts, &mut |_| {}))
    }
}

/// The parameters a struct's JSON schema describes, in declaration order.
fn params_of(schema: &serde_json::Value) -> Vec<Param> {
    let Some(props) = schema.get("properties").and_then(|p| p.as_object()) else { return Vec::new() };
    props
        .iter()
        .map(|(key, p)| {
            let kind = match p.get("type") {
                Some(serde_json::Value::String(s)) => s.clone(),
                // Option<T>: ["T", "null"]
                Some(serde_json::Value::Array(a)) => {
                    a.iter().filter_map(|t| t.as_str()).find(|t| *t != "null").unwrap_or("").to_string()
                }
                _ => String::new(),
            };
            let default = match p.get("default") {
                None | Some(serde_json::Value::Null) => String::new(),
                Some(v) => v.to_string(),
            };
            let doc = p.get("description").and_then(|d| d.as_str()).unwrap_or("").replace('\n', " ");
            Param { key: key.clone(), kind, default, doc }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut n = names();
        n.sort();
        n.dedup();
        assert_eq!(n.len(), FAMILIES.len());
    }

    #[test]
    fn every_key_is_documented() {
        for f in FAMILIES {
            for p in f.params() {
                assert!(!p.doc.is_empty(), "{}: {} has no doc comment", f.name(), p.key);
            }
        }
    }
}
