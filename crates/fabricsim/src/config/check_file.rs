//! `fabricsim check CONFIG`: which protocol to explore, at what size, with
//! which bounds. Strict like every configuration. The protocol is named as
//! `fabricsim run` names it, and its keys are the same `[protocol.<name>]`
//! table `run` and `litmus` read:
//!
//! ```toml
//! [protocol]
//! name = "dcoh"            # a family fabricsim protocols lists as checked from sizes
//! # table = "FILE.tables"  # or a table file (relative to this file), instead of name
//! # model = "tso"          # cord only: its cores' memory model (rc, the default, or tso)
//!
//! [protocol.dcoh]          # the family's keys a check reads (fabricsim protocols lists them)
//! invblk = 2
//!
//! [check]
//! caches = 3               # msi/mesi: caches (cores); german: clients
//! directories = 1          # msi/mesi
//! addresses = 1            # msi/mesi
//! values = 2               # data values (german: DATA_NUM)
//! mutant = "forget-sharer" # optional: a deliberately broken variant
//! max_states = 10000000    # optional bound
//! max_depth = 200          # optional bound
//! deadlock = true
//! symmetry = false         # store one state per symmetry orbit (scalarsets:
//!                          # german's clients and values; msi/mesi's caches,
//!                          # values and addresses; dcoh's requesters)
//! threads = 2              # worker threads (default: one per core); the
//!                          # result is the same for any number
//! disk = "search-dir"      # optional: visited set and frontier on disk,
//!                          # checkpoints; re-running continues (check::disk)
//! memory = "4GiB"          # with disk: fingerprints held in memory before
//!                          # they go to the sorted files (default: 1/4 of
//!                          # the memory the process may use)
//! checkpoint_minutes = 5   # with disk: time between checkpoints
//! ```
//!
//! `[check]` holds the search's keys: the checked system's size (what each
//! size means is the family's: `fabricsim protocols`) and the bounds. The
//! keys of `[protocol.<name>]` that only time or size the timed machine are
//! accepted and not read, so one table serves `run` and `check`.

use serde::Deserialize;
use serde_json::json;

use super::load::{apply_overrides, blame, parse_table, typed, Override};
use super::{ConfigError, Format};
use crate::agents::family::CheckSize;
use crate::check::chart::sequence_svg;
use crate::check::explorer::{Options, Report};
use crate::error::{and_list, or_list};
use crate::registry::{self, CheckError};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    check: CheckConfig,
    protocol: CheckProtocol,
}

/// The size keys, in the order of `Family::SIZES`.
const SIZE_KEYS: [&str; 4] = ["caches", "directories", "addresses", "values"];

/// A check's `[protocol]`: what it explores (its family's own table,
/// `[protocol.<name>]`, is read by the family).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckProtocol {
    /// A family `fabricsim protocols` lists as checked from sizes.
    pub name: Option<String>,
    /// A table file (`FILE.tables`, relative to the configuration), instead of `name`.
    pub table: Option<String>,
    /// The checked cores' memory model, for a family whose cores take one
    /// (cord: `rc`, the default, or `tso`).
    pub model: Option<String>,
}

/// The `[check]` keys: the checked system's size and the search's bounds.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    #[serde(default = "two")]
    pub caches: usize,
    #[serde(default = "one")]
    pub directories: usize,
    #[serde(default = "one")]
    pub addresses: usize,
    #[serde(default = "two")]
    pub values: usize,
    pub mutant: Option<String>,
    pub max_states: Option<u64>,
    pub max_depth: Option<u32>,
    #[serde(default = "yes")]
    pub deadlock: bool,
    /// Symmetry reduction over the protocol's scalarsets.
    #[serde(default)]
    pub symmetry: bool,
    /// Worker threads; absent: one per core.
    pub threads: Option<usize>,
    /// The search directory (visited set and frontier on disk, checkpoints).
    pub disk: Option<String>,
    /// With `disk`: bytes of fingerprints held in memory (a size like "4GiB").
    pub memory: Option<String>,
    /// With `disk`: minutes between checkpoints.
    pub checkpoint_minutes: Option<f64>,
}

impl Default for CheckConfig {
    fn default() -> Self {
        toml::Table::new().try_into().expect("defaults deserialize")
    }
}

/// Keys that bound or place a search without changing what it explores:
/// a checkpoint may be continued with other values of them.
const SEARCH_KEYS: [&str; 7] =
    ["threads", "max_states", "max_depth", "disk", "memory", "checkpoint_minutes", "deadlock"];

fn one() -> usize {
    1
}
fn two() -> usize {
    2
}
fn yes() -> bool {
    true
}

/// The result of a check: the report and, on a violation, its chart.
pub struct CheckResult {
    pub report: Report,
    pub svg: Option<String>,
    /// A table file's rows never fired and states never reached (after a complete search).
    pub coverage: Option<crate::agents::table::Coverage>,
}

impl CheckResult {
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = self.report.to_json();
        v["ok"] = json!(self.report.violation.is_none());
        if let Some(c) = &self.coverage {
            v["coverage"] = json!({
                "unfired": c.unfired.iter().map(|(l, t)| json!({"line": l, "row": t})).collect::<Vec<_>>(),
                "unreached": c.unreached.iter().map(|(m, s)| json!({"machine": m, "state": s})).collect::<Vec<_>>(),
                "text": c.text(),
            });
        }
        v
    }
}

pub fn run(text: &str, source: &str, fmt: Format, overrides: &[String]) -> Result<CheckResult, ConfigError> {
    run_with_stop(text, source, fmt, overrides, crate::check::Stop::default(), false)
}

/// A `[check]` key of the flat vocabulary that moved to `[protocol]` or
/// `[protocol.<name>]`: where it is now, as an error (`name`: the
/// protocol the file names, if any).
fn moved_check_key(key: &str, value: &toml::Value, name: Option<&str>) -> Option<String> {
    let lines = |v: &toml::Value| v.as_integer().map(|n| format!("\"{}B\"", n * 64)).unwrap_or("\"BYTES\"".into());
    Some(match key {
        "protocol" => {
            let v = value.as_str().unwrap_or("NAME");
            if registry::is_table(v) {
                format!("moved to [protocol]: give it as [protocol] table = {v:?}")
            } else {
                format!("moved to [protocol]: give it as [protocol] name = {v:?} (its keys go in [protocol.{v}])")
            }
        }
        "tso" => {
            let m = if value.as_bool() == Some(true) { "tso" } else { "rc" };
            format!("moved to [protocol]: give the cores' memory model as [protocol] model = \"{m}\"")
        }
        "snoop_filter" => format!(
            "moved to [protocol.dcoh.snoop_filter] size, in bytes of 64 B lines (run's unit): {} entries is size = {}",
            value,
            lines(value)
        ),
        "hdm_h" => format!(
            "moved to [protocol.dcoh] hdm_h, in bytes of 64 B lines (run's unit): {value} lines is hdm_h = {}",
            lines(value)
        ),
        _ => {
            let takers = registry::taking(key);
            let owner = takers.iter().find(|t| Some(**t) == name).or(takers.first())?;
            format!("moved to [protocol.{owner}]: give it as protocol.{owner}.{key}")
        }
    })
}

/// [`run`], stopping early (report `interrupted`) when `stop` asks.
pub fn run_with_stop(
    text: &str,
    source: &str,
    fmt: Format,
    overrides: &[String],
    stop: crate::check::Stop,
    progress: bool,
) -> Result<CheckResult, ConfigError> {
    let table = parse_table(text, source, fmt)?;
    let parsed: Vec<Override> = overrides.iter().map(|o| Override::parse(o)).collect::<Result<_, _>>()?;
    let mut table = apply_overrides(table, &parsed)?;
    let table_for_identity = table.clone();
    let err = |k: &str, m: String| {
        let key = if k.starts_with("protocol.") { k.to_string() } else { format!("check.{k}") };
        blame(source, &parsed, key, m)
    };
    if table.get("protocol").is_some_and(|p| !p.is_table()) {
        return Err(blame(source, &parsed, "protocol", "expected a table [protocol]"));
    }
    let name = table.get("protocol").and_then(|p| p.get("name")).and_then(|v| v.as_str()).map(str::to_string);
    let family_name = name.clone().or_else(|| {
        table_for_identity.get("check").and_then(|c| c.get("protocol")).and_then(|v| v.as_str()).map(str::to_string)
    });
    // the flat vocabulary's keys, where they are now
    let mut given: Vec<String> = Vec::new();
    if let Some(toml::Value::Table(t)) = table_for_identity.get("check") {
        // the protocol first: the others' new places name it
        let mut keys: Vec<&String> = t.keys().collect();
        keys.sort_by_key(|k| *k != "protocol");
        for k in keys {
            if let Some(m) = moved_check_key(k, &t[k], family_name.as_deref()) {
                return Err(err(k, m));
            }
            given.push(k.clone());
        }
    }
    let protocol = match table.get_mut("protocol") {
        Some(toml::Value::Table(t)) => t,
        _ => {
            return Err(err(
                "protocol.name",
                "missing: expected a [protocol] table with name = \"NAME\" (fabricsim protocols lists them) or \
                 table = \"FILE.tables\""
                    .into(),
            ))
        }
    };
    // the family's own table is the family's to read
    let own = match &name {
        Some(n) if registry::find(n).is_some() => match protocol.remove(n) {
            None => None,
            Some(toml::Value::Table(t)) => Some(t),
            Some(_) => return Err(err(&format!("protocol.{n}"), "expected a table [protocol.{n}]".into())),
        },
        _ => None,
    };
    for (k, v) in protocol.iter() {
        if !v.is_table() {
            continue;
        }
        let msg = match registry::find(k) {
            Some(_) => format!(
                "a table of protocol {k:?}, not of the one checked ({}); expected [protocol.{}] or none",
                name.as_deref().map_or("none named".to_string(), |n| format!("{n:?}")),
                name.as_deref().unwrap_or("NAME")
            ),
            None => format!(
                "applies to fabricsim run, not to a check; a check's [protocol] takes name, table, model and \
                 the family's table [protocol.{}]",
                name.as_deref().unwrap_or("NAME")
            ),
        };
        return Err(err(&format!("protocol.{k}"), msg));
    }
    // a run's [protocol] keys, as a run with every default records them
    let run: Option<crate::config::schema::ProtocolConfig> =
        toml::Table::from_iter([("name".to_string(), toml::Value::from("msi"))]).try_into().ok();
    let run_keys = run.and_then(|r| serde_json::to_value(r).ok()).unwrap_or_default();
    let check_keys = registry::params_of(&serde_json::Value::from(schemars::schema_for!(CheckProtocol)));
    for k in protocol.keys() {
        if run_keys.get(k).is_some() && !check_keys.iter().any(|p| &p.key == k) {
            return Err(err(
                &format!("protocol.{k}"),
                "applies to fabricsim run, not to a check; a check's [protocol] takes name, table and model".into(),
            ));
        }
    }
    let f: File = typed(table, source, "", &parsed)?;
    let c = f.check;
    let p = f.protocol;
    // a table file is a protocol too: its path is relative to the configuration's
    let (family, table) = match (&p.name, &p.table) {
        (Some(_), Some(_)) => {
            return Err(err("protocol.table", "give name (a family) or table (a table file), not both".into()))
        }
        (None, None) => {
            return Err(err(
                "protocol.name",
                "missing: expected name = \"NAME\" (fabricsim protocols lists them) or table = \"FILE.tables\"".into(),
            ))
        }
        (None, Some(t)) if registry::is_table(t) => (None, Some(table_path(source, t))),
        (None, Some(t)) => return Err(err("protocol.table", format!("{t:?}: expected a table file FILE.tables"))),
        (Some(n), None) if registry::is_table(n) => {
            return Err(err("protocol.name", format!("{n:?}: a table file; give it as [protocol] table = {n:?}")))
        }
        (Some(n), None) => (
            Some(registry::find(n).ok_or_else(|| {
                let names = registry::names();
                let close = crate::error::did_you_mean_name(n, names.iter().copied());
                err(
                    "protocol.name",
                    format!(
                        "{n:?}: no such protocol;{close} expected {} (or [protocol] table = \"FILE.tables\")",
                        or_list(&names)
                    ),
                )
            })?),
            None,
        ),
    };
    let checked = p.name.clone().or(p.table.clone()).unwrap_or_default();
    let label = match &p.name {
        Some(n) => format!("[protocol] name = {n:?}"),
        None => format!("[protocol] table = {checked:?}"),
    };
    let sizes = family.map_or(TABLE_SIZES, |f| f.sizes());
    for (key, meaning) in SIZE_KEYS.iter().zip(sizes) {
        if meaning.is_none() && given.iter().any(|g| g == key) {
            let takes: Vec<String> =
                SIZE_KEYS.iter().zip(sizes).filter_map(|(k, m)| m.map(|m| format!("{k} ({m})"))).collect();
            let takes = if takes.is_empty() { "none".to_string() } else { takes.join(", ") };
            return Err(err(
                key,
                format!("does not apply to {label}; its sizes are {takes} (fabricsim protocols lists its keys)"),
            ));
        }
    }
    if family.is_some_and(|f| !f.symmetry()) && given.iter().any(|g| g == "symmetry") {
        let with: Vec<&str> = registry::FAMILIES.iter().filter(|f| f.symmetry()).map(|f| f.name()).collect();
        return Err(err(
            "symmetry",
            format!("does not apply to {label}, which declares no scalarsets; it applies to {}", and_list(&with)),
        ));
    }
    let model = match &p.model {
        None => None,
        Some(m) if family.is_some_and(|f| f.check_model()) => {
            Some(m.parse::<crate::programs::Model>().map_err(|e| err("protocol.model", format!("{m:?}: {e}")))?)
        }
        Some(m) => {
            let with: Vec<&str> = registry::FAMILIES.iter().filter(|f| f.check_model()).map(|f| f.name()).collect();
            return Err(err(
                "protocol.model",
                format!(
                    "{m:?}: does not apply to a check of {checked:?}, whose checked cores issue any operation at any \
                     time; it applies to {}",
                    or_list(&with)
                ),
            ));
        }
    };
    let own = match family {
        Some(f) => Some(f.run_table(own, source, &parsed)?),
        None => None,
    };
    if c.threads.is_some_and(|t| t == 0 || t > 1024) {
        return Err(err("threads", format!("{}: expected 1 to 1024", c.threads.unwrap_or(0))));
    }
    // The memory the process may still take (read once: it bounds the
    // in-memory table of a search on disk, and the search itself).
    let budget = super::limits::budget().map_err(|m| err("memory", m))?;
    let disk = match &c.disk {
        None => {
            for key in ["memory", "checkpoint_minutes"] {
                if given.iter().any(|g| g == key) {
                    return Err(err(key, "applies only with disk = \"DIR\" (a search on disk)".to_string()));
                }
            }
            None
        }
        Some(d) => {
            let mut identity = table_identity(&table_for_identity);
            if let Some(p) = &table {
                // a search continues only on the same table
                let text = std::fs::read(p).map_err(|e| err("protocol.table", format!("{}: {e}", p.display())))?;
                identity += &format!(" table-fnv {:016x}", fnv(&text));
            }
            Some(disk_options(d, &c, &identity, budget.bytes, &err)?)
        }
    };
    let opts_disk = disk.is_some();
    let opts = Options {
        max_states: c.max_states,
        max_depth: c.max_depth,
        check_deadlock: c.deadlock,
        stop,
        threads: c.threads.unwrap_or(0),
        disk,
        progress,
        // what the process holds now, and what it may still take
        memory_limit: Some(crate::check::explorer::current_rss_kb() * 1024 + budget.bytes),
        ..Options::default()
    };
    let size = CheckSize {
        caches: c.caches,
        directories: c.directories,
        addresses: c.addresses,
        values: c.values,
        symmetry: c.symmetry,
        model,
    };
    let to_config = |e| match e {
        // a table file's own refusal is of the file [protocol] table names
        CheckError::Param(p) if p.key == "protocol" => err("protocol.table", p.message),
        CheckError::Param(p) => err(&p.key, p.message),
        CheckError::Config(e) => e,
    };
    let (report, coverage) = match (family, &table, &own) {
        (Some(f), _, Some(own)) => (f.check(&size, own, c.mutant.as_deref(), &opts).map_err(to_config)?, None),
        (None, Some(path), _) => {
            let t = registry::check_table(path, &size, c.mutant.as_deref(), &opts).map_err(to_config)?;
            (t.report, Some(t.coverage))
        }
        _ => unreachable!("a family and its table, or a table file"),
    };
    if let Some(rss) = report.out_of_memory {
        let hint = if opts_disk {
            "a smaller memory for the in-memory table"
        } else {
            "disk = \"DIR\" (fabricsim check --disk DIR), which keeps the visited set and the frontier on disk"
        };
        return Err(err(
            if opts_disk { "memory" } else { "disk" },
            format!(
                "the search stopped after {} states at depth {}: it uses {} of the {} available under {}; expected {hint}",
                report.states,
                report.depth,
                super::limits::format_bytes(rss),
                super::limits::format_bytes(budget.bytes),
                budget.source
            ),
        ));
    }
    if let Some(e) = &report.disk_error {
        let resume = match report.checkpoint {
            Some(d) => format!("; its checkpoint at depth {d} is kept: run again to continue"),
            None => String::new(),
        };
        return Err(err("disk", format!("{e} (the search stopped at depth {}{resume})", report.depth)));
    }
    let svg = sequence_svg(&report);
    // transitions never fired and states never reached mean something only after a whole search
    let coverage = coverage.filter(|_| report.complete && report.violation.is_none());
    Ok(CheckResult { report, svg, coverage })
}

/// What `[check]`'s size keys mean for a table file.
const TABLE_SIZES: [Option<&str>; 4] = [
    Some("instances of a `machine NAME[caches]`"),
    Some("instances of a `machine NAME[directories]`"),
    Some("lines of a `per address` machine"),
    Some("data values"),
];

/// A table file named by `[protocol] table`, relative to the configuration's folder.
fn table_path(source: &str, protocol: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(protocol);
    match std::path::Path::new(source).parent() {
        Some(dir) if p.is_relative() && std::path::Path::new(source).is_file() => dir.join(p),
        _ => p.to_path_buf(),
    }
}

/// FNV-1a, 64 bits: a table file's identity for a search on disk.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3))
}

/// What a search explores, as text: the `[check]` table without the keys
/// that only bound or place it and the `[protocol]` table (with the
/// family's), in key order, and the version of fabricsim (whose protocols
/// define the states).
fn table_identity(table: &toml::Table) -> String {
    let keys = |name: &str, skip: &[&str]| -> String {
        let mut keys: Vec<String> = match table.get(name) {
            Some(toml::Value::Table(t)) => {
                t.iter().filter(|(k, _)| !skip.contains(&k.as_str())).map(|(k, v)| format!("{k}={v}")).collect()
            }
            _ => Vec::new(),
        };
        keys.sort();
        keys.join(" ")
    };
    format!(
        "fabricsim {} [check] {} [protocol] {}",
        env!("CARGO_PKG_VERSION"),
        keys("check", &SEARCH_KEYS),
        keys("protocol", &[])
    )
}

fn disk_options(
    dir: &str,
    c: &CheckConfig,
    identity: &str,
    budget: u64,
    err: &dyn Fn(&str, String) -> ConfigError,
) -> Result<crate::check::disk::DiskOptions, ConfigError> {
    use crate::engine::units::{Size, SIZE_EXPECTED};
    if dir.is_empty() {
        return Err(err("disk", "\"\": expected a directory".to_string()));
    }
    let memory = match &c.memory {
        None => budget / 4,
        Some(m) => {
            let b = Size::parse(m).map_err(|e| err("memory", format!("{m:?}: {e}; expected {SIZE_EXPECTED}")))?.bytes();
            if !(1 << 20..=budget).contains(&b) {
                return Err(err(
                    "memory",
                    format!(
                        "{m:?}: expected 1MiB to the memory the process may use ({})",
                        super::limits::format_bytes(budget)
                    ),
                ));
            }
            b
        }
    };
    let minutes = c.checkpoint_minutes.unwrap_or(5.0);
    if !(minutes.is_finite() && minutes >= 0.0) {
        return Err(err("checkpoint_minutes", format!("{minutes}: expected 0 or more minutes")));
    }
    Ok(crate::check::disk::DiskOptions {
        dir: dir.into(),
        identity: identity.to_string(),
        memory,
        checkpoint_every: minutes * 60.0,
    })
}
