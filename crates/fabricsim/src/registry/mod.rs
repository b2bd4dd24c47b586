//! The protocol registry: every protocol family fabricsim has, one line
//! each. The configuration (of a run and of a check), the timing engine's
//! front door, the command line and `fabricsim protocols` know a protocol
//! only through this list; a protocol's name, parameters, mutants and
//! builders live in its own folder (`agents::<x>::family`). It sits below
//! the configuration, above the engines it hands a built protocol to.
//!
//! Adding a protocol: implement [`Family`] in its folder and add its line
//! to [`FAMILIES`].

use std::marker::PhantomData;
use std::sync::Arc;

use crate::agents::family::{CacheUse, CheckSize, Family, LitmusAlias, Machine, NoKeys, ParamError, RunParams, Runs};
use crate::check::explorer::{explore, Options, Report};
use crate::check::litmus_run::{LitmusRun, Runner};
use crate::check::oracle::Limits;
pub use crate::input::{params_of, Param};
use crate::input::{typed, Override};
use crate::programs::{Model, Program};

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
    &Registered::<crate::agents::pcie::family::PcieFamily>(PhantomData),
];

/// A protocol written as a table file: the one family that is a file, not
/// a type (`[protocol] table = "FILE.tables"` in a check, docs/protocol-tables.md).
pub fn is_table(protocol: &str) -> bool {
    protocol.ends_with(".tables")
}

/// What a table file's check found: the report (its trace spelled out by
/// the table's names) and the rows never fired, the states never reached.
pub struct TableCheck {
    pub report: Report,
    pub coverage: crate::agents::table::Coverage,
}

/// Check the table file at `path` (sizes `caches`, `directories`,
/// `values`, `addresses`; `symmetry` over its replicated machines, data
/// values and addresses).
pub fn check_table(
    path: &std::path::Path,
    size: &CheckSize,
    mutant: Option<&str>,
    opts: &Options,
) -> Result<TableCheck, CheckError> {
    use crate::agents::table::{Sizes, Table};
    let t = Table::load(path).map_err(|e| CheckError::Param(ParamError::new("protocol", e.to_string())))?;
    let sizes =
        Sizes { caches: size.caches, directories: size.directories, values: size.values, addresses: size.addresses };
    for (key, v, hi) in [
        ("caches", size.caches, 64),
        ("directories", size.directories, 64),
        ("values", size.values, 255),
        ("addresses", size.addresses, 64),
    ] {
        crate::agents::family::in_range(key, v, 1, hi, "").map_err(CheckError::Param)?;
    }
    let p = t.protocol(sizes, mutant, size.symmetry).map_err(|e| {
        let key = match (e.bad_mutant, e.size) {
            (true, _) => "mutant",
            (false, Some(size)) => size,
            (false, None) => "protocol",
        };
        CheckError::Param(ParamError::new(key, e.to_string()))
    })?;
    if size.symmetry {
        renamings(&p).map_err(CheckError::Param)?;
    }
    let mut report = explore(&p, opts, &mut |_| {});
    readable(&p, &mut report);
    Ok(TableCheck { coverage: p.coverage(&t.lines), report })
}

/// Spell out a report's trace by the table's names (agents and
/// messages print as packed words in the checker's hot path).
fn readable(p: &crate::agents::table::TableProtocol, report: &mut Report) {
    let s = &*p.spec;
    let agent = |t: &str| match t.strip_prefix('#').and_then(|h| u128::from_str_radix(h, 16).ok()) {
        Some(w) => s.show_agent(w),
        None => t.to_string(),
    };
    let msg = |t: &str| {
        // a message of a per-address machine ends `@ADDRESS`
        let (t, addr) = match t.rsplit_once(')') {
            Some((m, a)) if a.starts_with('@') => (&t[..m.len() + 1], format!(" @{}", &a[1..])),
            _ => (t, String::new()),
        };
        let inner = t.strip_prefix('%').and_then(|x| x.strip_suffix(')'));
        let parts: Option<Vec<u8>> = inner.and_then(|x| {
            let (k, f) = x.split_once('(')?;
            std::iter::once(k).chain(f.split(',')).map(|n| n.parse().ok()).collect()
        });
        match parts.as_deref() {
            Some([k, a, b, c]) => s.show_msg(*k, [*a, *b, *c]) + &addr,
            _ => t.to_string(),
        }
    };
    if let Some(v) = &mut report.violation {
        for st in &mut v.steps {
            st.before = agent(&st.before);
            st.after = agent(&st.after);
            st.event = msg(&st.event);
        }
    }
}

/// The family named `name`.
pub fn find(name: &str) -> Option<&'static dyn Entry> {
    FAMILIES.iter().copied().find(|f| f.name() == name)
}

/// Every family's name.
pub fn names() -> Vec<&'static str> {
    FAMILIES.iter().map(|f| f.name()).collect()
}

/// The families with a timed machine.
pub fn timed() -> impl Iterator<Item = &'static dyn Entry> {
    FAMILIES.iter().copied().filter(|f| f.runs().is_some())
}

/// The names of the families whose check reads `[protocol.<name>]` key `key`.
pub fn taking(key: &str) -> Vec<&'static str> {
    FAMILIES.iter().filter(|f| f.params().iter().any(|p| p.key == key)).map(|f| f.name()).collect()
}

/// An old `--protocol` spelling, read: the family, its keys, its mutant.
pub type Alias = (&'static dyn Entry, Result<toml::Table, String>, Option<String>);

/// The family an old `fabricsim litmus --protocol` spelling
/// (`BASE[+MUTANT][@EXTRA]`) names, its keys and its mutant.
pub fn litmus_alias(name: &str) -> Option<Alias> {
    let (head, extra) = match name.split_once('@') {
        Some((h, x)) => (h, Some(x)),
        None => (name, None),
    };
    let (base, mutant) = match head.split_once('+') {
        Some((b, m)) => (b, Some(m.to_string())),
        None => (head, None),
    };
    FAMILIES.iter().find_map(|f| f.litmus_alias(base, extra).map(|keys| (*f, keys, mutant.clone())))
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
            let params: Vec<serde_json::Value> = f.params().into_iter().map(Param::json).collect();
            let mutants: Vec<serde_json::Value> =
                f.mutants().iter().map(|(n, a)| serde_json::json!({"name": n, "breaks": a})).collect();
            // how it is checked when not from sizes: its own words
            let how = (!f.checks()).then(|| f.check_by());
            let run = f.runs().map(|r| {
                let cache = match r.cache {
                    CacheUse::Refused(_) => "none",
                    CacheUse::Optional => "optional",
                    CacheUse::Required(_) => "required",
                };
                serde_json::json!({
                    "drivers": r.drivers.iter().map(|d| d.name()).collect::<Vec<_>>(),
                    "programs": r.programs,
                    "cache": cache,
                    "interleave": r.interleave,
                    "core_front_end": r.front_end,
                    "params": f
                        .run_params()
                        .into_iter()
                        .map(Param::json)
                        .collect::<Vec<_>>(),
                })
            });
            serde_json::json!({
                "name": f.name(),
                "about": f.about(),
                "check": {"sizes": sizes, "symmetry": f.symmetry(), "model": f.check_model(), "params": params, "by": how},
                "run": run,
                "litmus": {"programs": f.litmus_refusal().is_none(), "keys": f.litmus_keys(), "why_not": f.litmus_refusal()},
                "mutants": mutants,
            })
        })
        .collect();
    serde_json::Value::Array(families)
}

/// A family behind the registry: [`Family`] with its types erased.
pub trait Entry: Sync {
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    fn mutants(&self) -> &'static [(&'static str, &'static str)];
    /// What `caches`, `directories`, `addresses` and `values` mean (None: not taken).
    fn sizes(&self) -> [Option<&'static str>; 4];
    fn symmetry(&self) -> bool;
    /// Whether `[check]` builds it from sizes.
    fn checks(&self) -> bool;
    /// How it is checked when not from sizes (its `checked` refusal).
    fn check_by(&self) -> String;
    /// What its timed machine takes (None: it has none).
    fn runs(&self) -> Option<Runs>;
    /// Refuse a machine the family cannot be built on.
    fn check_machine(&self, m: &Machine) -> Result<(), ParamError>;
    /// Whether a run (and a litmus run) reads a `[protocol.<name>]` table
    /// of it (a family checked only has one for `check` alone).
    fn has_table(&self) -> bool;
    /// Read its `[protocol.<name>]` table (None: not given), strict;
    /// errors name `protocol.<name>.KEY` in `source` or the override.
    fn run_table(
        &self,
        raw: Option<toml::Table>,
        source: &str,
        overrides: &[Override],
    ) -> Result<RunTable, crate::error::ConfigError>;
    /// Resolve a table [`Entry::run_table`] read on the machine.
    fn resolve_run(&self, table: &RunTable, m: &Machine) -> Result<RunParams, ParamError>;
    /// [`Family::largest_message`].
    fn largest_message(&self, params: &RunParams) -> (u32, u32);
    /// [`Family::reads_only`].
    fn reads_only(&self, params: &RunParams) -> Option<&'static str>;
    /// The `[protocol.<name>]` keys a check reads (the others of
    /// [`Entry::run_params`] it accepts and does not read).
    fn params(&self) -> Vec<Param>;
    /// Whether a check reads `[protocol] model`.
    fn check_model(&self) -> bool;
    /// The keys of its `[protocol.<name>]` table.
    fn run_params(&self) -> Vec<Param>;
    /// Build the family from its `[protocol.<name>]` table (read by
    /// [`Entry::run_table`]) and explore it; a refused key is named by its
    /// whole path (`protocol.<name>.KEY`, `protocol.model`) or, for a size,
    /// the mutant and symmetry, by its key within `[check]`.
    fn check(
        &self,
        size: &CheckSize,
        table: &RunTable,
        mutant: Option<&str>,
        opts: &Options,
    ) -> Result<Report, CheckError>;
    /// Why its agents cannot run a litmus program (None: they can).
    fn litmus_refusal(&self) -> Option<&'static str>;
    /// The `[protocol.<name>]` keys a litmus run reads.
    fn litmus_keys(&self) -> &'static [&'static str];
    /// An old `--protocol` spelling of this family, read into its keys.
    fn litmus_alias(&self, base: &str, extra: Option<&str>) -> LitmusAlias;
    /// Build the family with cores running `program` (its keys from a
    /// table [`Entry::run_table`] read) and explore every outcome.
    fn litmus(
        &self,
        program: Arc<Program>,
        model: Model,
        table: &RunTable,
        mutant: Option<&str>,
        limits: &Limits,
    ) -> Result<LitmusRun, LitmusError>;
    /// Build the family full size on `spec`'s machine and run it on the
    /// timing engine (Err: the family has no timed machine, or refuses this one).
    fn run(
        &self,
        spec: &crate::spec::SystemSpec,
        ps: &crate::spec::ProtocolSpec,
        profile: bool,
        progress: &mut dyn FnMut(f64) -> bool,
    ) -> Result<crate::sim::RunResult, String>;
}

/// A family's `[protocol.<name>]` table, read.
#[derive(Debug, Clone)]
pub struct RunTable {
    /// The family's table (its `RunTable` type, erased).
    pub table: RunParams,
    /// The table as the resolved configuration records it (null: not given).
    pub resolved: serde_json::Value,
    /// Its cores run the family's own program.
    pub drives_itself: bool,
}

/// Why a check could not start.
#[derive(Debug)]
pub enum CheckError {
    /// A key's value is refused.
    Param(ParamError),
    /// The keys did not deserialize (the error already names the file).
    Config(crate::error::ConfigError),
}

/// Why a litmus run could not finish.
#[derive(Debug)]
pub enum LitmusError {
    /// The family refuses a key, the mutant, the model or the program.
    Param(ParamError),
    /// The memory model's oracle could not run (too large).
    Oracle(String),
}

/// A family in the list (`fn() -> F`: the marker is Sync whatever `F` is).
struct Registered<F>(PhantomData<fn() -> F>);

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
    fn checks(&self) -> bool {
        F::CHECKED_BY.is_none()
    }
    fn check_by(&self) -> String {
        F::CHECKED_BY.unwrap_or_default().to_string()
    }
    fn runs(&self) -> Option<Runs> {
        F::RUNS
    }
    fn check_machine(&self, m: &Machine) -> Result<(), ParamError> {
        F::check_machine(m)
    }
    fn has_table(&self) -> bool {
        // a family checked only reads its table in a check alone (`check_file`)
        F::RUNS.is_some() && std::any::TypeId::of::<F::RunTable>() != std::any::TypeId::of::<NoKeys>()
    }
    fn run_table(
        &self,
        raw: Option<toml::Table>,
        source: &str,
        overrides: &[Override],
    ) -> Result<RunTable, crate::error::ConfigError> {
        let given = raw.is_some();
        let t: F::RunTable = typed(raw.unwrap_or_default(), source, &format!("protocol.{}", F::NAME), overrides)?;
        // as the configuration records it: absent stays absent (null)
        let resolved =
            if given { serde_json::to_value(&t).expect("a table serializes") } else { serde_json::Value::Null };
        Ok(RunTable { drives_itself: F::drives_itself(&t), resolved, table: RunParams::new(t) })
    }
    fn largest_message(&self, params: &RunParams) -> (u32, u32) {
        F::largest_message(params)
    }
    fn reads_only(&self, params: &RunParams) -> Option<&'static str> {
        F::reads_only(params)
    }
    fn resolve_run(&self, table: &RunTable, m: &Machine) -> Result<RunParams, ParamError> {
        let t = table.table.get::<F::RunTable>().expect("read by this family's run_table");
        F::resolve(t, m)
    }
    fn params(&self) -> Vec<Param> {
        self.run_params().into_iter().filter(|p| F::CHECK_KEYS.contains(&p.key.as_str())).collect()
    }
    fn check_model(&self) -> bool {
        F::CHECK_MODEL
    }
    fn run_params(&self) -> Vec<Param> {
        params_of(&serde_json::Value::from(schemars::schema_for!(F::RunTable)))
    }
    fn check(
        &self,
        size: &CheckSize,
        table: &RunTable,
        mutant: Option<&str>,
        opts: &Options,
    ) -> Result<Report, CheckError> {
        let t = table.table.get::<F::RunTable>().expect("read by this family's run_table");
        // a key of the table is named by its path, a size by its key within [check]
        let whole = |e: ParamError| {
            let own = F::CHECK_KEYS.iter().any(|k| e.key == *k || e.key.starts_with(&format!("{k}.")));
            let key = match e.key.as_str() {
                _ if own => format!("protocol.{}.{}", F::NAME, e.key),
                "model" => "protocol.model".to_string(),
                "protocol" => "protocol.name".to_string(),
                k => k.to_string(),
            };
            CheckError::Param(ParamError { key, ..e })
        };
        let params = F::check_params(t).map_err(whole)?;
        let p = F::checked(size, &params, mutant).map_err(whole)?;
        if size.symmetry {
            renamings(&p).map_err(CheckError::Param)?;
        }
        Ok(explore(&p, opts, &mut |_| {}))
    }
    fn litmus_refusal(&self) -> Option<&'static str> {
        F::NO_LITMUS
    }
    fn litmus_keys(&self) -> &'static [&'static str] {
        F::LITMUS_KEYS
    }
    fn litmus_alias(&self, base: &str, extra: Option<&str>) -> LitmusAlias {
        F::litmus_alias(base, extra)
    }
    fn litmus(
        &self,
        program: Arc<Program>,
        model: Model,
        table: &RunTable,
        mutant: Option<&str>,
        limits: &Limits,
    ) -> Result<LitmusRun, LitmusError> {
        let t = table.table.get::<F::RunTable>().expect("read by this family's run_table");
        let run = Runner { program: program.clone(), model, limits };
        F::litmus_with(program, model, t, mutant, run).map_err(LitmusError::Param)?.map_err(LitmusError::Oracle)
    }
    fn run(
        &self,
        spec: &crate::spec::SystemSpec,
        ps: &crate::spec::ProtocolSpec,
        profile: bool,
        progress: &mut dyn FnMut(f64) -> bool,
    ) -> Result<crate::sim::RunResult, String> {
        let p = F::timed(&machine(spec, ps))?;
        let sys = crate::sim::protocol::ProtocolSystem::build(spec, p, ps)?;
        Ok(sys.with_profile(profile).run(progress))
    }
}

/// The machine a validated system gives its protocol family.
fn machine(spec: &crate::spec::SystemSpec, ps: &crate::spec::ProtocolSpec) -> Machine {
    Machine {
        cores: spec.requesters.len(),
        homes: spec.memories.len(),
        lines: ps.locs,
        footprint: crate::spec::footprint(&spec.requesters),
        max_store: crate::spec::max_store(&spec.requesters),
        granule: ps.granule,
        line_bytes: ps.timing.line_bytes,
        model: ps.model,
        driver: ps.driver,
        program: ps.program.clone(),
        cache: ps.cache.map(|c| crate::agents::family::CacheShape { seed: spec.seed, ..c }),
        mshrs: ps.mshrs,
        values: ps.values,
        seed: spec.seed,
        params: ps.params.clone(),
    }
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
        let mut bare = Vec::new();
        for f in FAMILIES {
            for p in f.params() {
                if p.doc.is_empty() {
                    bare.push(format!("{}: [protocol.{}] {} (read by check)", f.name(), f.name(), p.key));
                }
            }
            for p in f.run_params() {
                if p.doc.is_empty() {
                    bare.push(format!("{}: [protocol.{}] {}", f.name(), f.name(), p.key));
                }
            }
        }
        assert!(bare.is_empty(), "keys without a doc comment:\n{}", bare.join("\n"));
    }
}
