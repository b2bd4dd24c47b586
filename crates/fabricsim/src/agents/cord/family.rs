//! CORD (and its SO and MP baselines) as a family of the registry.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::table::CordConfig;
use super::{Cord, Params, Variant, MUTANTS};
use crate::agents::coherence::core::check_protocol_limits;
use crate::agents::family::{
    find_mutant, in_range, CacheUse, CheckSize, Driver, Family, Litmus, LitmusAlias, Machine, ParamError, RunParams,
    Runs,
};
use crate::programs::{Model, Op, Program};

/// The timed write-through family, as `[protocol.cord]` resolves.
#[derive(Debug, Clone, Copy)]
pub struct CordSpec {
    pub variant: Variant,
    pub params: Params,
    pub store_buffer: usize,
    pub loads: u16,
    /// Interleaving granule over the directories, in lines.
    pub granule: u64,
    /// The largest store a workload issues, in bytes (0: a line or less).
    pub max_store: u32,
}

/// CORD's `[check]` keys: the write-through ordering, the memory model and
/// CORD's field widths and table sizes (defaults: the paper's Table 3 and
/// §4.1).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CordCheck {
    /// The write-through ordering: `cord` (directory ordering), `so`
    /// (source ordering) or `mp` (posted message passing).
    pub variant: String,
    /// TSO cores (§6): every store is ordered as a Release is; false:
    /// release consistency.
    pub tso: bool,
    /// Each address's home directory (default: address i at i mod directories).
    pub homes: Option<Vec<u8>>,
    /// Bits of an epoch number.
    pub epoch_bits: u8,
    /// Bits of a store counter.
    pub counter_bits: u8,
    /// Processor: directories with Relaxed stores in one epoch.
    pub proc_counters: usize,
    /// Processor: unacked Releases.
    pub proc_unacked: usize,
    /// Directory, per core: store counters.
    pub dir_counters: usize,
    /// Directory, per core: notification counters.
    pub dir_notis: usize,
    /// SEQ-n's sequence-number width (0: CORD's epochs and counters).
    pub seq_bits: u8,
}

impl Default for CordCheck {
    fn default() -> Self {
        let d = Params::default();
        CordCheck {
            variant: "cord".to_string(),
            tso: false,
            homes: None,
            epoch_bits: d.epoch_bits,
            counter_bits: d.counter_bits,
            proc_counters: d.proc_counters,
            proc_unacked: d.proc_unacked,
            dir_counters: d.dir_counters,
            dir_notis: d.dir_notis,
            seq_bits: d.seq_bits,
        }
    }
}

pub struct CordFamily;

impl Family for CordFamily {
    const NAME: &'static str = "cord";
    const ABOUT: &'static str = "CORD: write-through stores ordered at the directories by epochs, store counters and \
                                 notifications (with the SO and MP baselines as variants)";
    const MUTANTS: &'static [(&'static str, &'static str)] = &[
        ("no-counter-check", "a Release commits without comparing the store counter"),
        ("noti-lost", "a directory with only an unacked Release sends no notification"),
        ("epoch-no-wrap", "epochs compared as if they never wrapped"),
        ("no-recycle", "held Releases are retried oldest first only"),
        ("no-table-stall", "the core does not stall a Release when a directory table is full"),
    ];
    const SIZES: [Option<&'static str>; 4] = [Some("cores"), Some("directories"), Some("addresses"), None];
    const SYMMETRY: bool = true;
    type CheckParams = CordCheck;
    type Checked = Cord;
    type Timed = Cord;
    type RunTable = super::table::CordConfig;

    fn resolve(t: &super::table::CordConfig, m: &Machine) -> Result<RunParams, ParamError> {
        super::table::resolve(t, m).map(RunParams::new)
    }

    const RUNS: Option<Runs> = Some(Runs {
        drivers: &[Driver::Workload, Driver::Own],
        drivers_note: "cord's cores run a workload or a program",
        programs: true,
        cache: CacheUse::Refused(
            "cord's write-through stores and loads go to the directory's LLC slice; expected no [protocol.cache]",
        ),
        interleave: true,
        wide_stores: true,
        ..Runs::BASE
    });

    fn check_machine(m: &Machine) -> Result<(), ParamError> {
        if m.cores + m.homes > 255 {
            return Err(ParamError::new(
                "requester",
                format!("{} cores and {} directories: cord's agent ids hold at most 255", m.cores, m.homes),
            ));
        }
        if m.homes > 64 {
            return Err(ParamError::new("memory", format!("{} directories: cord's cores track at most 64", m.homes)));
        }
        Ok(())
    }

    fn timed(m: &Machine) -> Result<Cord, String> {
        let c: &CordSpec = m.params();
        let tso = m.model == crate::programs::Model::Tso;
        if let Some(prog) = &m.program {
            let homes = (0..prog.locations.len()).map(|l| ((l as u64 / c.granule) % m.homes as u64) as u8).collect();
            return Ok(Cord {
                params: c.params,
                channel_cap: usize::MAX,
                ..Cord::running(c.variant, prog.clone(), tso, m.homes, homes)
            });
        }
        let p = Cord::timed(
            c.variant,
            tso,
            m.cores,
            m.homes,
            m.lines,
            c.granule,
            c.params,
            c.loads,
            c.store_buffer,
            m.line_bytes,
        );
        Ok(Cord { max_store: c.max_store, ..p })
    }

    const NO_LITMUS: Option<&'static str> = None;
    const LITMUS_KEYS: &'static [&'static str] = &[
        "variant",
        "homes",
        "epoch_bits",
        "counter_bits",
        "proc_counters",
        "proc_unacked",
        "dir_counters",
        "dir_notis",
        "seq_bits",
    ];

    /// One core and one directory per thread (the paper's nodes); TSO runs
    /// the §6 variants.
    fn litmus(
        program: Arc<Program>,
        model: Model,
        table: &CordConfig,
        mutant: Option<&str>,
    ) -> Result<Litmus<Cord>, ParamError> {
        let (variant, params) = super::table::ordering(table)?;
        let mutant = find_mutant(MUTANTS, mutant)?;
        let tso = match model {
            Model::Rc => false,
            Model::Tso => true,
            Model::Sc => {
                return Err(ParamError::new(
                    "model",
                    format!("sc: {} runs under rc or tso (the paper's models)", variant.name()),
                ))
            }
        };
        let name = &program.name;
        check_protocol_limits(&program).map_err(|e| ParamError::new("program", format!("{name}: {e}")))?;
        if program.threads.iter().flatten().any(|op| matches!(op, Op::Rmw { .. })) {
            return Err(ParamError::new(
                "program",
                format!("{name}: {}'s cores have no read-modify-writes", variant.name()),
            ));
        }
        let nodes = program.threads.len();
        let mut home: Vec<u8> = (0..program.locations.len()).map(|l| (l % nodes) as u8).collect();
        for (loc, &d) in table.homes.iter().flatten() {
            let l = program.locations.iter().position(|x| x == loc).ok_or_else(|| {
                ParamError::new(
                    format!("homes.{loc}"),
                    format!("no location {loc:?} in {name}; expected one of {}", program.locations.join(", ")),
                )
            })?;
            if d as usize >= nodes {
                return Err(ParamError::new(
                    format!("homes.{loc}"),
                    format!("{d}: expected a directory 0 to {}", nodes - 1),
                ));
            }
            home[l] = d;
        }
        let mut p = Cord::running(variant, program, tso, nodes, home).with_mutant(mutant);
        if params != p.params {
            p.channel_cap = params.proc_unacked + 1;
            p.params = params;
        }
        Ok(Litmus { protocol: p, outcome: Cord::outcome })
    }

    /// `cord`, `so` or `mp`, and `@x=0,y=1` for the homes.
    fn litmus_alias(base: &str, extra: Option<&str>) -> LitmusAlias {
        let variant = Variant::parse(base)?;
        let mut t = toml::Table::new();
        t.insert("variant".into(), variant.name().into());
        let mut homes = toml::Table::new();
        for part in extra.map(|h| h.split(',').collect::<Vec<_>>()).unwrap_or_default() {
            let Some((loc, d)) = part.split_once('=') else {
                return Some(Err(format!("home {part:?}: expected LOCATION=DIRECTORY")));
            };
            let Ok(d) = d.trim().parse::<u8>() else {
                return Some(Err(format!("home {part:?}: expected a directory number")));
            };
            homes.insert(loc.trim().to_string(), i64::from(d).into());
        }
        if !homes.is_empty() {
            t.insert("homes".into(), homes.into());
        }
        Some(Ok(t))
    }

    fn checked(size: &CheckSize, c: &CordCheck, mutant: Option<&str>) -> Result<Cord, ParamError> {
        in_range("caches", size.caches, 1, 4, "cores")?;
        in_range("directories", size.directories, 1, 4, "directories")?;
        in_range("addresses", size.addresses, 1, 4, "addresses")?;
        let variant = Variant::parse(&c.variant)
            .ok_or_else(|| ParamError::new("variant", format!("{:?}: expected cord, so or mp", c.variant)))?;
        let homes = match &c.homes {
            Some(h) if h.len() != size.addresses => {
                return Err(ParamError::new(
                    "homes",
                    format!("{} homes for {} addresses: expected one per address", h.len(), size.addresses),
                ))
            }
            Some(h) => match h.iter().find(|&&d| d as usize >= size.directories) {
                Some(d) => {
                    return Err(ParamError::new(
                        "homes",
                        format!("directory {d}: expected 0 to {}", size.directories - 1),
                    ))
                }
                None => h.clone(),
            },
            None => (0..size.addresses).map(|a| (a % size.directories) as u8).collect(),
        };
        let params = Params {
            epoch_bits: c.epoch_bits,
            counter_bits: c.counter_bits,
            proc_counters: c.proc_counters,
            proc_unacked: c.proc_unacked,
            dir_counters: c.dir_counters,
            dir_notis: c.dir_notis,
            seq_bits: c.seq_bits,
        };
        params.validate().map_err(|m| {
            let key = m.split(' ').next().unwrap_or("epoch_bits").to_string();
            ParamError::new(&key, m)
        })?;
        if params.seq_bits > 0 && variant != Variant::Cord {
            return Err(ParamError::new(
                "seq_bits",
                format!("{}: SEQ-n replaces CORD's epochs and counters; expected variant = \"cord\"", params.seq_bits),
            ));
        }
        let mutant = find_mutant(MUTANTS, mutant)?;
        let mut p = Cord::free(variant, size.caches, size.directories, homes, params).with_mutant(mutant);
        p.tso = c.tso;
        p.symmetry = size.symmetry;
        Ok(p)
    }
}
