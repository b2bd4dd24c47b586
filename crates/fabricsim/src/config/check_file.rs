//! `fabricsim check CONFIG`: which protocol to explore, at what size, with
//! which bounds. Strict like every configuration:
//!
//! ```toml
//! [check]
//! protocol = "mesi"        # a family fabricsim protocols lists as checked from sizes,
//!                          # or a table file "FILE.tables" (relative to this file)
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
//! The keys above are common to every protocol; each protocol adds its
//! own (`fabricsim protocols` lists them, with what the sizes mean for
//! it), declared in its folder (`agents::<x>::family`) and found through
//! the registry.

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
    check: CheckConfig,
}

/// The size keys, in the order of `Family::SIZES`.
const SIZE_KEYS: [&str; 4] = ["caches", "directories", "addresses", "values"];

/// The `[check]` keys every protocol takes; the rest are the protocol's.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    pub protocol: String,
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
    // the protocol's own keys go to its family; the common ones are read here
    let common: Vec<String> = registry::params_of(&serde_json::Value::from(schemars::schema_for!(CheckConfig)))
        .into_iter()
        .map(|p| p.key)
        .collect();
    let mut own = toml::Table::new();
    let mut given: Vec<String> = Vec::new();
    if let Some(toml::Value::Table(t)) = table.get_mut("check") {
        let keys: Vec<String> = t.keys().cloned().collect();
        for k in keys {
            if common.contains(&k) {
                given.push(k);
            } else if let Some(v) = t.remove(&k) {
                own.insert(k, v);
            }
        }
    }
    let f: File = typed(table, source, "", &parsed)?;
    let c = f.check;
    let err = |k: &str, m: String| blame(source, &parsed, format!("check.{k}"), m);
    // a table file is a protocol too: its path is relative to the configuration's
    let table = registry::is_table(&c.protocol).then(|| table_path(source, &c.protocol));
    let family = match table {
        Some(_) => None,
        None => Some(registry::find(&c.protocol).ok_or_else(|| {
            let names = registry::names();
            let close = crate::error::did_you_mean_name(&c.protocol, names.iter().copied());
            err(
                "protocol",
                format!(
                    "{:?}: no such protocol;{close} expected {} or a table file (FILE.tables)",
                    c.protocol,
                    or_list(&names)
                ),
            )
        })?),
    };
    let sizes = family.map_or(TABLE_SIZES, |f| f.sizes());
    for (key, meaning) in SIZE_KEYS.iter().zip(sizes) {
        if meaning.is_none() && given.iter().any(|g| g == key) {
            let takes: Vec<String> =
                SIZE_KEYS.iter().zip(sizes).filter_map(|(k, m)| m.map(|m| format!("{k} ({m})"))).collect();
            let takes = if takes.is_empty() { "none".to_string() } else { takes.join(", ") };
            return Err(err(
                key,
                format!(
                    "does not apply to protocol = {:?}; its sizes are {takes} (fabricsim protocols lists its keys)",
                    c.protocol
                ),
            ));
        }
    }
    if family.is_some_and(|f| !f.symmetry()) && given.iter().any(|g| g == "symmetry") {
        let with: Vec<&str> = registry::FAMILIES.iter().filter(|f| f.symmetry()).map(|f| f.name()).collect();
        return Err(err(
            "symmetry",
            format!(
                "does not apply to protocol = {:?}, which declares no scalarsets; it applies to {}",
                c.protocol,
                and_list(&with)
            ),
        ));
    }
    let mine: Vec<String> = family.map(|f| f.params().into_iter().map(|p| p.key).collect()).unwrap_or_default();
    for key in own.keys() {
        if mine.contains(key) {
            continue;
        }
        let others = registry::taking(key);
        if !others.is_empty() {
            return Err(err(key, format!("applies to protocol = {} only", or_list(&others))));
        }
        let keys: Vec<&str> = common.iter().chain(&mine).map(|k| k.as_str()).collect();
        // keys are written `key`, as the configuration's errors write them
        let close = crate::error::did_you_mean_name(key, keys.iter().copied()).replace('"', "`");
        return Err(err(
            key,
            format!("unknown key;{close} expected one of {} (protocol = {:?})", keys.join(", "), c.protocol),
        ));
    }
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
                let text = std::fs::read(p).map_err(|e| err("protocol", format!("{}: {e}", p.display())))?;
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
    };
    let to_config = |e| match e {
        CheckError::Param(p) => err(&p.key, p.message),
        CheckError::Config(e) => e,
    };
    let (report, coverage) = match (family, &table) {
        (Some(f), _) => (f.check(&size, own, c.mutant.as_deref(), &opts, source, &parsed).map_err(to_config)?, None),
        (None, Some(path)) => {
            let t = registry::check_table(path, &size, c.mutant.as_deref(), &opts).map_err(to_config)?;
            (t.report, Some(t.coverage))
        }
        (None, None) => unreachable!("a family or a table"),
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
    None,
    Some("data values"),
];

/// A table file named by `[check] protocol`, relative to the configuration's folder.
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
/// that only bound or place it, in key order, and the version of
/// fabricsim (whose protocols define the states).
fn table_identity(table: &toml::Table) -> String {
    let mut keys: Vec<String> = match table.get("check") {
        Some(toml::Value::Table(t)) => {
            t.iter().filter(|(k, _)| !SEARCH_KEYS.contains(&k.as_str())).map(|(k, v)| format!("{k}={v}")).collect()
        }
        _ => Vec::new(),
    };
    keys.sort();
    format!("fabricsim {} [check] {}", env!("CARGO_PKG_VERSION"), keys.join(" "))
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
