//! `fabricsim check CONFIG`: which protocol to explore, at what size, with
//! which bounds. Strict like every configuration:
//!
//! ```toml
//! [check]
//! protocol = "mesi"        # msi | mesi | german
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
//! `protocol = "bi"` (seed 001): `domains` coherence domains (1 or 2) of
//! `caches` cores each (1 or 2), `addresses` lines (1 or 2), `values`
//! store values (1 or 2); the single-writer invariant inside each domain.
//! With `coherent = true`, the machine coherent across domains (a home
//! directory at the memory): the single-writer invariant over the whole
//! machine, and every cached copy holds the last value written; `mutant =
//! "home-forgets-sharer"` breaks it.
//!
//! `protocol = "bi_runtime"` (seed 001): the BI runtime of Figs 7–9 on two
//! non-coherent domains (a writer in one, a reader in the other; see
//! `agents::bi::check`): `slots` object slots (2 to 4), `skew` the largest
//! clock offset in ticks (0 to 3; every pair of offsets is an initial
//! state and `D = skew`), `period` the quiescence period (2 to 6 ticks),
//! `horizon` the last tick explored (0 to 8), `allocs` the objects the
//! writer allocates (1 to 8), `same_tick = true` lets a reader enter in
//! the tick it left (equal clock stamps), `writer_ticks = true` lets ticks
//! fall inside `bi_reclaim` (a writer delayed between its clock read and
//! its loads of the timing record), `engine_thread = true` runs
//! reader_engine on a separate quiescence thread of the reader's domain,
//! `flush_before_writeback = true` has reader_engine write the timing
//! record back after its log invalidations (Fig 8 line 42 writes it first),
//! `ghost = false` leaves out the ghost invariant on `bi_reclaim`'s snapshot
//! of the timing record (on by default),
//! `mutant` one of `enter-before-exit`,
//! `no-free-mark-check`, `no-period-subtraction`, `skew-ignored`.
//!
//! `protocol = "gcs"` (seed 004): `caches` are the compute blades (2 to
//! 4), `addresses` the locks (1 or 2), `blade_threads` the threads per
//! blade (1 or 2), `variant` one of `gcs`, `no-data`, `no-locality`,
//! `pthread`, and `mutant` one of GCS's broken variants.
//!
//! `protocol = "dcoh"` (ESF's device-managed coherence): `caches` are the
//! requesters, `directories` the memory devices, `addresses` the lines,
//! and three more keys apply: `snoop_filter = 2` (entries per device),
//! `invblk = 2` (longest block one BISnp invalidates, 1 to 4) and
//! `hdm_h = 1` (lines at the start of each device that are HDM-H:
//! host-managed, untracked by the snoop filter).

use serde::Deserialize;
use serde_json::json;

use super::chart::sequence_svg;
use super::explorer::{explore, Options, Report};
use crate::agents::coherence::directory::{mutant_by_name, Directory, Variant, MAX_LOCS, MAX_PROCS, MUTANTS};
use crate::agents::coherence::german::{self, German};
use crate::agents::cord::{self, Cord};
use crate::agents::cxl::dcoh::{self, Dcoh};
use crate::config::load::{apply_overrides, blame, parse_table, typed, Override};
use crate::config::{ConfigError, Format};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    check: CheckConfig,
}

#[derive(Debug, Deserialize)]
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
    /// dcoh: snoop-filter entries per device.
    pub snoop_filter: Option<usize>,
    /// dcoh: longest InvBlk block.
    pub invblk: Option<u8>,
    /// dcoh: lines at the start of each device that are HDM-H (host-managed).
    pub hdm_h: Option<u8>,
    /// cord: the write-through ordering (`cord`, `so` or `mp`) and memory model.
    pub variant: Option<String>,
    pub tso: Option<bool>,
    /// cord: each address's home directory (default: address i at i mod directories).
    pub homes: Option<Vec<u8>>,
    /// cord: CORD's field widths and table sizes (defaults: Table 3, §4.1).
    pub epoch_bits: Option<u8>,
    pub counter_bits: Option<u8>,
    pub proc_counters: Option<usize>,
    pub proc_unacked: Option<usize>,
    pub dir_counters: Option<usize>,
    pub dir_notis: Option<usize>,
    /// cord: SEQ-n's sequence number width (0: CORD's epochs and counters).
    pub seq_bits: Option<u8>,
    /// gcs: threads per blade.
    pub blade_threads: Option<usize>,
    /// bi: coherence domains (then `caches` are the cores of each).
    pub domains: Option<usize>,
    /// bi: coherent across domains (a home directory at the memory).
    pub coherent: Option<bool>,
    /// bi_runtime: object slots, largest clock offset, period and horizon (ticks).
    pub slots: Option<usize>,
    pub skew: Option<u8>,
    pub period: Option<u8>,
    pub horizon: Option<u8>,
    pub allocs: Option<u8>,
    /// bi_runtime: a reader may enter in the tick it left (equal stamps).
    pub same_tick: Option<bool>,
    /// bi_runtime: ticks may fall inside bi_reclaim (a delayed writer).
    pub writer_ticks: Option<bool>,
    /// bi_runtime: reader_engine on a separate quiescence thread of the reader's domain.
    pub engine_thread: Option<bool>,
    /// bi_runtime: reader_engine writes the timing record back after its log invalidations.
    pub flush_before_writeback: Option<bool>,
    /// bi_runtime: the ghost invariant on the writer's snapshot of the timing record (default on).
    pub ghost: Option<bool>,
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

/// `[check]` keys that only `protocol = "bi_runtime"` takes.
const BI_RUNTIME_KEYS: [&str; 10] = [
    "slots",
    "skew",
    "period",
    "horizon",
    "allocs",
    "same_tick",
    "writer_ticks",
    "engine_thread",
    "flush_before_writeback",
    "ghost",
];

/// `[check]` keys `protocol = "bi_runtime"` does not take (its machine is fixed: two domains, one writer, one reader).
const NOT_BI_RUNTIME_KEYS: [&str; 5] = ["caches", "directories", "addresses", "values", "symmetry"];

/// `[check]` keys that only `protocol = "cord"` takes.
const CORD_KEYS: [&str; 10] = [
    "variant",
    "tso",
    "homes",
    "epoch_bits",
    "counter_bits",
    "proc_counters",
    "proc_unacked",
    "dir_counters",
    "dir_notis",
    "seq_bits",
];

fn one() -> usize {
    1
}
fn two() -> usize {
    2
}
fn yes() -> bool {
    true
}

/// Symmetry reduction tries every renaming of the scalarsets that are not
/// sorted by key (data values, addresses): refuse more than this many.
const MAX_RENAMINGS: usize = 5040;

fn renamings<P: crate::agents::protocol::Protocol>(p: &P) -> Result<(), String> {
    let mut n = 1usize;
    for s in p.scalarsets().iter().filter(|s| !s.keyed) {
        n = n.saturating_mul((1..=s.size).product());
        if n > MAX_RENAMINGS {
            return Err(format!(
                "true: {} {} would each be renamed in every order ({n} or more renamings per state); \
                 expected at most {MAX_RENAMINGS}: use fewer values or addresses, or symmetry = false",
                s.size,
                s.name.to_lowercase()
            ));
        }
    }
    Ok(())
}

/// The result of a check: the report and, on a violation, its chart.
pub struct CheckResult {
    pub report: Report,
    pub svg: Option<String>,
}

impl CheckResult {
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = self.report.to_json();
        v["ok"] = json!(self.report.violation.is_none());
        v
    }
}

pub fn run(text: &str, source: &str, fmt: Format, overrides: &[String]) -> Result<CheckResult, ConfigError> {
    run_with_stop(text, source, fmt, overrides, super::Stop::default(), false)
}

/// [`run`], stopping early (report `interrupted`) when `stop` asks.
pub fn run_with_stop(
    text: &str,
    source: &str,
    fmt: Format,
    overrides: &[String],
    stop: super::Stop,
    progress: bool,
) -> Result<CheckResult, ConfigError> {
    let table = parse_table(text, source, fmt)?;
    let parsed: Vec<Override> = overrides.iter().map(|o| Override::parse(o)).collect::<Result<_, _>>()?;
    let table = apply_overrides(table, &parsed)?;
    let given: Vec<String> = match table.get("check") {
        Some(toml::Value::Table(t)) => t.keys().cloned().collect(),
        _ => Vec::new(),
    };
    let table_for_identity = table.clone();
    let f: File = typed(table, source, "", &parsed)?;
    let c = f.check;
    let err = |k: &str, m: String| blame(source, &parsed, format!("check.{k}"), m);
    if c.protocol == "german" {
        // German has one home and one address.
        for key in ["directories", "addresses"] {
            if given.iter().any(|g| g == key) {
                return Err(err(key, "does not apply to protocol = \"german\"; it is for msi and mesi".to_string()));
            }
        }
    }
    if c.protocol != "dcoh" {
        for key in ["snoop_filter", "invblk", "hdm_h"] {
            if given.iter().any(|g| g == key) {
                return Err(err(key, "applies to protocol = \"dcoh\" only".to_string()));
            }
        }
    }
    for key in ["domains", "coherent"] {
        if c.protocol != "bi" && given.iter().any(|g| g == key) {
            return Err(err(key, "applies to protocol = \"bi\" only".to_string()));
        }
    }
    if c.protocol != "bi_runtime" {
        for key in BI_RUNTIME_KEYS {
            if given.iter().any(|g| g == key) {
                return Err(err(key, "applies to protocol = \"bi_runtime\" only".to_string()));
            }
        }
    } else {
        for key in NOT_BI_RUNTIME_KEYS {
            if given.iter().any(|g| g == key) {
                return Err(err(
                    key,
                    "does not apply to protocol = \"bi_runtime\" (two domains, one writer, one reader); \
                     its keys are slots, skew, period, horizon, allocs, same_tick, writer_ticks, \
                     engine_thread, flush_before_writeback, ghost and mutant"
                        .to_string(),
                ));
            }
        }
    }
    if matches!(c.protocol.as_str(), "gcs" | "bi") && given.iter().any(|g| g == "symmetry") {
        return Err(err(
            "symmetry",
            format!(
                "does not apply to protocol = {:?}, which declares no scalarsets; \
                 it applies to msi, mesi, german, dcoh and cord",
                c.protocol
            ),
        ));
    }
    if c.protocol != "gcs" && given.iter().any(|g| g == "blade_threads") {
        return Err(err("blade_threads", "applies to protocol = \"gcs\" only".to_string()));
    }
    if c.protocol != "cord" {
        for key in CORD_KEYS {
            // gcs names its scheme with `variant` too
            if given.iter().any(|g| g == key) && !(c.protocol == "gcs" && key == "variant") {
                return Err(err(key, "applies to protocol = \"cord\" only".to_string()));
            }
        }
    }
    if c.threads.is_some_and(|t| t == 0 || t > 1024) {
        return Err(err("threads", format!("{}: expected 1 to 1024", c.threads.unwrap_or(0))));
    }
    // The memory the process may still take (read once: it bounds the
    // in-memory table of a search on disk, and the search itself).
    let budget = crate::config::limits::budget().map_err(|m| err("memory", m))?;
    let disk = match &c.disk {
        None => {
            for key in ["memory", "checkpoint_minutes"] {
                if given.iter().any(|g| g == key) {
                    return Err(err(key, "applies only with disk = \"DIR\" (a search on disk)".to_string()));
                }
            }
            None
        }
        Some(d) => Some(disk_options(d, &c, &table_identity(&table_for_identity), budget.bytes, &err)?),
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
        memory_limit: Some(super::explorer::current_rss_kb() * 1024 + budget.bytes),
        ..Options::default()
    };
    let report = match c.protocol.as_str() {
        "msi" | "mesi" => {
            if c.caches == 0 || c.caches > MAX_PROCS {
                return Err(err("caches", format!("{}: expected 1 to {MAX_PROCS}", c.caches)));
            }
            if c.addresses == 0 || c.addresses > MAX_LOCS {
                return Err(err("addresses", format!("{}: expected 1 to {MAX_LOCS}", c.addresses)));
            }
            if c.directories == 0 || c.directories > c.addresses {
                return Err(err("directories", format!("{}: expected 1 to the number of addresses", c.directories)));
            }
            if c.values == 0 || c.values > 8 {
                return Err(err("values", format!("{}: expected 1 to 8", c.values)));
            }
            let mutant = match &c.mutant {
                None => None,
                Some(m) => Some(mutant_by_name(m).ok_or_else(|| {
                    err(
                        "mutant",
                        format!(
                            "{m:?}: expected one of {}",
                            MUTANTS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?),
            };
            let v = if c.protocol == "msi" { Variant::Msi } else { Variant::Mesi };
            let p = Directory::free(v, c.caches, c.directories, c.addresses, c.values)
                .with_mutant(mutant)
                .with_symmetry(c.symmetry);
            renamings(&p).map_err(|m| err("symmetry", m))?;
            explore(&p, &opts, &mut |_| {})
        }
        "german" => {
            if c.caches == 0 || c.caches > 8 {
                return Err(err("caches", format!("{}: expected 1 to 8 clients", c.caches)));
            }
            if c.values == 0 || c.values > 8 {
                return Err(err("values", format!("{}: expected 1 to 8", c.values)));
            }
            let p = German::with_mutant(c.caches, c.values, c.mutant.as_deref())
                .map_err(|e| err("mutant", format!("{e}; expected one of {}", german::MUTANTS.join(", "))))?
                .with_symmetry(c.symmetry);
            renamings(&p).map_err(|m| err("symmetry", m))?;
            explore(&p, &opts, &mut |_| {})
        }
        "dcoh" => {
            if c.caches == 0 || c.caches > 4 {
                return Err(err("caches", format!("{}: expected 1 to 4 requesters", c.caches)));
            }
            if c.directories == 0 || c.directories > 2 {
                return Err(err("directories", format!("{}: expected 1 or 2 devices", c.directories)));
            }
            if c.addresses == 0 || c.addresses > 6 {
                return Err(err("addresses", format!("{}: expected 1 to 6 lines", c.addresses)));
            }
            if c.values == 0 || c.values > 4 {
                return Err(err("values", format!("{}: expected 1 to 4", c.values)));
            }
            let sf = c.snoop_filter.unwrap_or(1);
            if sf == 0 || sf > 4 {
                return Err(err("snoop_filter", format!("{sf}: expected 1 to 4 entries")));
            }
            let blk = c.invblk.unwrap_or(1);
            if blk == 0 || blk > dcoh::MAX_BLOCK {
                return Err(err("invblk", format!("{blk}: expected 1 to {}", dcoh::MAX_BLOCK)));
            }
            let mutant = match &c.mutant {
                None => None,
                Some(m) => Some(dcoh::mutant_by_name(m).ok_or_else(|| {
                    err(
                        "mutant",
                        format!(
                            "{m:?}: expected one of {}",
                            dcoh::MUTANTS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?),
            };
            let hdm_h = c.hdm_h.unwrap_or(0) as u64;
            if hdm_h > (c.addresses as u64).div_ceil(c.directories as u64) {
                return Err(err("hdm_h", format!("{hdm_h}: expected at most a device's lines")));
            }
            let p = Dcoh::checked(c.caches, c.directories, c.addresses as u64, sf, blk, c.values as u8)
                .with_mutant(mutant)
                .with_hdm_h(hdm_h)
                .with_symmetry(c.symmetry);
            explore(&p, &opts, &mut |_| {})
        }
        "cord" => {
            let p = cord_check(&c, &err)?;
            explore(&p, &opts, &mut |_| {})
        }
        "gcs" => {
            use crate::agents::gcs::{Gcs, Variant as G, MUTANTS as GM};
            if !(2..=4).contains(&c.caches) {
                return Err(err("caches", format!("{}: expected 2 to 4 blades", c.caches)));
            }
            if !(1..=2).contains(&c.addresses) {
                return Err(err("addresses", format!("{}: expected 1 or 2 locks", c.addresses)));
            }
            let threads = c.blade_threads.unwrap_or(1);
            if !(1..=2).contains(&threads) {
                return Err(err("blade_threads", format!("{threads}: expected 1 or 2 threads per blade")));
            }
            let name = c.variant.as_deref().unwrap_or("gcs");
            let v = G::parse(name).ok_or_else(|| {
                err("variant", format!("{name:?}: expected {}", G::ALL.map(|v| format!("\"{}\"", v.name())).join(", ")))
            })?;
            let mutant = match &c.mutant {
                None => None,
                Some(m) => Some(GM.iter().find(|x| x.0 == m).map(|x| x.1).ok_or_else(|| {
                    err(
                        "mutant",
                        format!("{m:?}: expected one of {}", GM.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")),
                    )
                })?),
            };
            let p = Gcs::checking(v, c.caches, threads, c.addresses, (true, true)).with_mutant(mutant);
            explore(&p, &opts, &mut |_| {})
        }
        "bi" => {
            use crate::agents::bi::Bi;
            let domains = c.domains.unwrap_or(2);
            if !(1..=2).contains(&domains) {
                return Err(err("domains", format!("{domains}: expected 1 or 2 coherence domains")));
            }
            if !(1..=2).contains(&c.caches) {
                return Err(err("caches", format!("{}: expected 1 or 2 cores per domain", c.caches)));
            }
            if !(1..=2).contains(&c.addresses) {
                return Err(err("addresses", format!("{}: expected 1 or 2 lines", c.addresses)));
            }
            if !(1..=2).contains(&c.values) {
                return Err(err("values", format!("{}: expected 1 or 2 store values", c.values)));
            }
            let coherent = c.coherent.unwrap_or(false);
            let mutant = match &c.mutant {
                None => None,
                // the one mutant the checker can tell from the machine: the timed ones change only costs
                Some(m) if m == "home-forgets-sharer" && coherent => Some(crate::agents::bi::Mutant::HomeForgetsSharer),
                Some(m) => {
                    return Err(err(
                        "mutant",
                        format!("{m:?}: bi's checker has one mutant, \"home-forgets-sharer\" (with coherent = true)"),
                    ))
                }
            };
            let p = Bi::checking(domains, c.caches, c.addresses as u64, c.values as u32)
                .with_coherent(coherent)
                .with_mutant(mutant);
            explore(&p, &opts, &mut |_| {})
        }
        "bi_runtime" => {
            let p = bi_runtime_check(&c, &err)?;
            explore(&p, &opts, &mut |_| {})
        }
        other => {
            const PROTOCOLS: [&str; 8] = ["msi", "mesi", "german", "dcoh", "cord", "gcs", "bi", "bi_runtime"];
            let close = crate::config::load::did_you_mean_name(other, PROTOCOLS);
            return Err(err(
                "protocol",
                format!(
                    "{other:?}: no such protocol;{close} expected msi, mesi, german, dcoh, cord, gcs, bi or bi_runtime"
                ),
            ));
        }
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
                crate::config::limits::format_bytes(rss),
                crate::config::limits::format_bytes(budget.bytes),
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
    Ok(CheckResult { report, svg })
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
) -> Result<super::disk::DiskOptions, ConfigError> {
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
                        crate::config::limits::format_bytes(budget)
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
    Ok(super::disk::DiskOptions {
        dir: dir.into(),
        identity: identity.to_string(),
        memory,
        checkpoint_every: minutes * 60.0,
    })
}

/// `protocol = "bi_runtime"`: the BI runtime on two non-coherent domains
/// (`agents::bi::check`), sized by its keys.
fn bi_runtime_check(
    c: &CheckConfig,
    err: &dyn Fn(&str, String) -> ConfigError,
) -> Result<crate::agents::bi::check::BiRuntimeCheck, ConfigError> {
    use crate::agents::bi::check::{mutant_by_name, BiRuntimeCheck, Mutant, MAX_SLOTS, MUTANTS};
    let slots = c.slots.unwrap_or(2);
    if !(2..=MAX_SLOTS).contains(&slots) {
        return Err(err("slots", format!("{slots}: expected 2 to {MAX_SLOTS} object slots")));
    }
    let skew = c.skew.unwrap_or(0);
    if skew > 3 {
        return Err(err("skew", format!("{skew}: expected 0 to 3 ticks of clock offset")));
    }
    let period = c.period.unwrap_or(2);
    if !(2..=6).contains(&period) {
        return Err(err(
            "period",
            format!(
                "{period}: expected 2 to 6 ticks (a reader finishes a quiescence that began less than `period` \
                 ticks ago; 1 would need one to begin in the future)"
            ),
        ));
    }
    let horizon = c.horizon.unwrap_or(2);
    if horizon > 8 {
        return Err(err("horizon", format!("{horizon}: expected 0 to 8 ticks")));
    }
    let allocs = c.allocs.unwrap_or(3);
    if !(1..=8).contains(&allocs) {
        return Err(err("allocs", format!("{allocs}: expected 1 to 8 allocations")));
    }
    let mutant = match &c.mutant {
        None => None,
        Some(m) => Some(mutant_by_name(m).ok_or_else(|| {
            err(
                "mutant",
                format!("{m:?}: expected one of {}", MUTANTS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")),
            )
        })?),
    };
    if mutant == Some(Mutant::SkewIgnored) && skew == 0 {
        return Err(err("skew", "0: skew-ignored needs clocks that differ; expected 1 to 3".to_string()));
    }
    Ok(BiRuntimeCheck::new(slots, skew, period, horizon, mutant)
        .with_allocs(allocs)
        .with_same_tick(c.same_tick.unwrap_or(false))
        .with_writer_ticks(c.writer_ticks.unwrap_or(false))
        .with_engine_thread(c.engine_thread.unwrap_or(false))
        .with_flush_before_writeback(c.flush_before_writeback.unwrap_or(false))
        .with_ghost(c.ghost.unwrap_or(true)))
}

/// `protocol = "cord"`: free cores storing to any address, Relaxed or
/// Release, with CORD's tables and widths as given.
fn cord_check(c: &CheckConfig, err: &dyn Fn(&str, String) -> ConfigError) -> Result<Cord, ConfigError> {
    if c.caches == 0 || c.caches > 4 {
        return Err(err("caches", format!("{}: expected 1 to 4 cores", c.caches)));
    }
    if c.directories == 0 || c.directories > 4 {
        return Err(err("directories", format!("{}: expected 1 to 4 directories", c.directories)));
    }
    if c.addresses == 0 || c.addresses > 4 {
        return Err(err("addresses", format!("{}: expected 1 to 4 addresses", c.addresses)));
    }
    let name = c.variant.as_deref().unwrap_or("cord");
    let variant =
        cord::Variant::parse(name).ok_or_else(|| err("variant", format!("{name:?}: expected cord, so or mp")))?;
    let homes = match &c.homes {
        Some(h) if h.len() != c.addresses => {
            return Err(err(
                "homes",
                format!("{} homes for {} addresses: expected one per address", h.len(), c.addresses),
            ))
        }
        Some(h) => match h.iter().find(|&&d| d as usize >= c.directories) {
            Some(d) => return Err(err("homes", format!("directory {d}: expected 0 to {}", c.directories - 1))),
            None => h.clone(),
        },
        None => (0..c.addresses).map(|a| (a % c.directories) as u8).collect(),
    };
    let d = cord::Params::default();
    let params = cord::Params {
        epoch_bits: c.epoch_bits.unwrap_or(d.epoch_bits),
        counter_bits: c.counter_bits.unwrap_or(d.counter_bits),
        proc_counters: c.proc_counters.unwrap_or(d.proc_counters),
        proc_unacked: c.proc_unacked.unwrap_or(d.proc_unacked),
        dir_counters: c.dir_counters.unwrap_or(d.dir_counters),
        dir_notis: c.dir_notis.unwrap_or(d.dir_notis),
        seq_bits: c.seq_bits.unwrap_or(0),
    };
    params.validate().map_err(|m| {
        let key = m.split(' ').next().unwrap_or("epoch_bits").to_string();
        err(&key, m)
    })?;
    if params.seq_bits > 0 && variant != cord::Variant::Cord {
        return Err(err(
            "seq_bits",
            format!("{}: SEQ-n replaces CORD's epochs and counters; expected variant = \"cord\"", params.seq_bits),
        ));
    }
    let mutant = match &c.mutant {
        None => None,
        Some(m) => Some(cord::mutant_by_name(m).ok_or_else(|| {
            err(
                "mutant",
                format!("{m:?}: expected one of {}", cord::MUTANTS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")),
            )
        })?),
    };
    let mut p = Cord::free(variant, c.caches, c.directories, homes, params).with_mutant(mutant);
    p.tso = c.tso.unwrap_or(false);
    p.symmetry = c.symmetry;
    Ok(p)
}
