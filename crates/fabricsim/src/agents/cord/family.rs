//! CORD (and its SO and MP baselines) as a family of the registry.

use std::sync::Arc;

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

/// What a check reads of `[protocol.cord]`: the ordering, CORD's field
/// widths and table sizes (defaults: the paper's Table 3 and §4.1) and the
/// addresses' homes.
#[derive(Debug)]
pub struct CordCheck {
    pub variant: Variant,
    pub params: Params,
    /// Each address's home directory, by address number (`{ 0 = 1 }`).
    pub homes: Option<std::collections::BTreeMap<String, u8>>,
}

pub struct CordFamily;

/// The `[protocol.cord]` keys that shape the protocol itself, which a check
/// and a litmus run both read (the others time the machine).
const PROTOCOL_KEYS: &[&str] = &[
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
    const CHECK_KEYS: &'static [&'static str] = PROTOCOL_KEYS;
    /// TSO cores (§6): every store is ordered as a Release is; rc (the
    /// default in a check): release consistency.
    const CHECK_MODEL: bool = true;

    fn check_params(t: &CordConfig) -> Result<CordCheck, ParamError> {
        let (variant, params) = super::table::ordering(t)?;
        Ok(CordCheck { variant, params, homes: t.homes.clone() })
    }
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
    const LITMUS_KEYS: &'static [&'static str] = PROTOCOL_KEYS;

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
        let tso = match size.model {
            None | Some(Model::Rc) => false,
            Some(Model::Tso) => true,
            Some(Model::Sc) => {
                return Err(ParamError::new("model", "\"sc\": cord's cores run rc or tso (the paper's models)"))
            }
        };
        let mut homes: Vec<u8> = (0..size.addresses).map(|a| (a % size.directories) as u8).collect();
        for (a, &d) in c.homes.iter().flatten() {
            let i = a.parse::<usize>().ok().filter(|&i| i < size.addresses).ok_or_else(|| {
                ParamError::new(
                    format!("homes.{a}"),
                    format!("no address {a:?}; a check's addresses are numbered 0 to {}", size.addresses - 1),
                )
            })?;
            if d as usize >= size.directories {
                return Err(ParamError::new(
                    format!("homes.{a}"),
                    format!("{d}: expected a directory 0 to {}", size.directories - 1),
                ));
            }
            homes[i] = d;
        }
        let mutant = find_mutant(MUTANTS, mutant)?;
        let mut p = Cord::free(c.variant, size.caches, size.directories, homes, c.params).with_mutant(mutant);
        p.tso = tso;
        p.symmetry = size.symmetry;
        Ok(p)
    }
}
