//! Bounded Incoherence's machine and its runtime as families of the registry.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::check::{BiRuntimeCheck, Mutant as RuntimeMutant, MAX_SLOTS, MUTANTS as RUNTIME_MUTANTS};
use super::{Bi, Mutant};
use crate::agents::family::{
    find_mutant, in_range, CacheUse, CheckSize, Driver, Family, Machine, ParamError, RunParams, Runs,
};

/// The timed BI machine, as `[protocol.bi]` resolves.
#[derive(Debug, Clone, Copy)]
pub struct BiSpec {
    pub domains: usize,
    pub params: super::Params,
    pub shapes: super::Shapes,
    /// Interleaving over the global memories, in lines.
    pub interleave: u64,
    pub bench: Option<super::Bench>,
    pub bench_home: Option<usize>,
    pub mutant: Option<Mutant>,
    /// Coherent across domains (the baselines' machine).
    pub coherent: bool,
    /// BI Table 1's tree benchmark.
    pub tree: Option<super::tree::TreeBench>,
}

/// What a check reads of `[protocol.bi]`.
#[derive(Debug)]
pub struct BiCheck {
    /// Coherence domains (default 1, as a run's); `caches` are then the
    /// cores of each.
    pub domains: usize,
    /// Coherent across domains: a home directory at the memory (the
    /// single-writer invariant over the whole machine).
    pub coherent: bool,
}

pub struct BiFamily;

impl Family for BiFamily {
    const NAME: &'static str = "bi";
    const ABOUT: &'static str = "Bounded Incoherence's machine: coherence domains of cores with private caches and an \
                                 L3 each, not coherent with each other (or coherent through a home directory)";
    const MUTANTS: &'static [(&'static str, &'static str)] =
        &[("home-forgets-sharer", "coherent mode: the home grants M without invalidating the sharing domains")];
    const SIZES: [Option<&'static str>; 4] = [Some("cores per domain"), None, Some("lines"), Some("store values")];
    const NO_LITMUS: Option<&'static str> = Some(
        "its cores run the BI runtime's calls (a benchmark's or U-RCU's), not a litmus program's loads and stores",
    );
    const SYMMETRY: bool = false;
    type CheckParams = BiCheck;
    const CHECK_KEYS: &'static [&'static str] = &["domains", "coherent"];

    /// The timed machine's caches, times and benchmarks are not read; its
    /// mutant is refused, a check's being `[check] mutant`.
    fn check_params(t: &super::table::BiConfig) -> Result<BiCheck, ParamError> {
        if let Some(m) = &t.mutant {
            return Err(ParamError::new(
                "protocol.bi.mutant",
                format!("{m:?}: breaks the timed machine only; a check's mutant is [check] mutant"),
            ));
        }
        Ok(BiCheck { domains: t.domains.map_or(1, |d| d as usize), coherent: t.coherent.unwrap_or(false) })
    }
    type Checked = Bi;
    type Timed = Bi;
    type RunTable = super::table::BiConfig;

    fn drives_itself(t: &super::table::BiConfig) -> bool {
        t.bench.is_some() || t.tree.is_some()
    }

    fn resolve(t: &super::table::BiConfig, m: &Machine) -> Result<RunParams, ParamError> {
        super::table::resolve(t, m).map(RunParams::new)
    }

    const RUNS: Option<Runs> = Some(Runs {
        drivers: &[Driver::Workload, Driver::Own],
        drivers_note: "bi's cores run a workload or [protocol.bi.bench]",
        cache: CacheUse::Refused(
            "bi's caches are [protocol.bi]'s l1_size, l2_size and l3_size; expected no [protocol.cache]",
        ),
        own_latencies: true,
        ..Runs::BASE
    });

    fn timed(m: &Machine) -> Result<Bi, String> {
        let b: &BiSpec = m.params();
        let p = Bi {
            domains: b.domains,
            cores: m.cores / b.domains,
            mems: m.homes - b.domains,
            interleave: b.interleave,
            params: b.params,
            shapes: Some(b.shapes),
            bench: b.bench,
            bench_home: b.bench_home,
            mutant: b.mutant,
            lines: 0,
            values: 0,
            keep_values: false,
            seed: m.seed,
            coherent: b.coherent,
            program: None,
            tree: b.tree,
        };
        Ok(match b.tree {
            Some(t) => {
                let prog = super::tree::program(&t, &p, m.seed);
                Bi { program: Some(std::sync::Arc::new(prog)), ..p }
            }
            None => p,
        })
    }

    fn checked(size: &CheckSize, c: &BiCheck, mutant: Option<&str>) -> Result<Bi, ParamError> {
        in_range("domains", c.domains, 1, 2, "coherence domains")?;
        in_range("caches", size.caches, 1, 2, "cores per domain")?;
        in_range("addresses", size.addresses, 1, 2, "lines")?;
        in_range("values", size.values, 1, 2, "store values")?;
        let mutant = match mutant {
            None => None,
            // the one mutant the checker can tell from the machine: the timed ones change only costs
            Some("home-forgets-sharer") if c.coherent => Some(Mutant::HomeForgetsSharer),
            Some(m) => {
                return Err(ParamError::new(
                    "mutant",
                    format!("{m:?}: bi's checker has one mutant, \"home-forgets-sharer\" (with coherent = true)"),
                ))
            }
        };
        Ok(Bi::checking(c.domains, size.caches, size.addresses as u64, size.values as u32)
            .with_coherent(c.coherent)
            .with_mutant(mutant))
    }
}

/// `[protocol.bi_runtime]`: the BI runtime's checked system (two domains,
/// one writer, one reader).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BiRuntimeParams {
    /// Object slots.
    pub slots: usize,
    /// The largest clock offset between the domains, in ticks (every pair
    /// of offsets is an initial state, and D = skew).
    pub skew: u8,
    /// The quiescence period, in ticks.
    pub period: u8,
    /// The last tick explored.
    pub horizon: u8,
    /// Objects the writer allocates.
    pub allocs: u8,
    /// A reader may enter in the tick it left (equal clock stamps).
    pub same_tick: bool,
    /// Ticks may fall inside bi_reclaim (a writer delayed between its clock
    /// read and its loads of the timing record).
    pub writer_ticks: bool,
    /// reader_engine runs on a separate quiescence thread of the reader's domain.
    pub engine_thread: bool,
    /// reader_engine writes the timing record back after its log
    /// invalidations (Fig 8 line 42 writes it first).
    pub flush_before_writeback: bool,
    /// The ghost invariant on bi_reclaim's snapshot of the timing record.
    pub ghost: bool,
}

impl Default for BiRuntimeParams {
    fn default() -> Self {
        BiRuntimeParams {
            slots: 2,
            skew: 0,
            period: 2,
            horizon: 2,
            allocs: 3,
            same_tick: false,
            writer_ticks: false,
            engine_thread: false,
            flush_before_writeback: false,
            ghost: true,
        }
    }
}

pub struct BiRuntimeFamily;

impl Family for BiRuntimeFamily {
    const NAME: &'static str = "bi_runtime";
    const ABOUT: &'static str =
        "Bounded Incoherence's runtime (Figs 7-9): time-based quiescence and reclamation on two \
                                 non-coherent domains, a writer in one and a reader in the other";
    const MUTANTS: &'static [(&'static str, &'static str)] = &[
        ("enter-before-exit", "time_quiescence loads enter before exit"),
        ("no-free-mark-check", "bi_dereference without the free_mark check"),
        ("no-period-subtraction", "cache_quiescence(t) = t"),
        ("skew-ignored", "D = 0 while the domains' offsets differ"),
    ];
    const SIZES: [Option<&'static str>; 4] = [None; 4];
    const NO_LITMUS: Option<&'static str> =
        Some("its two threads run the BI runtime's quiescence and reclamation (Figs 7-9), not a litmus program");
    const SYMMETRY: bool = false;
    type CheckParams = BiRuntimeParams;
    type Checked = BiRuntimeCheck;
    type Timed = BiRuntimeCheck;
    type RunTable = BiRuntimeParams;
    const CHECK_KEYS: &'static [&'static str] = &[
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

    fn check_params(t: &BiRuntimeParams) -> Result<BiRuntimeParams, ParamError> {
        Ok(t.clone())
    }

    fn checked(_: &CheckSize, c: &BiRuntimeParams, mutant: Option<&str>) -> Result<BiRuntimeCheck, ParamError> {
        in_range("slots", c.slots, 2, MAX_SLOTS, "object slots")?;
        in_range("skew", c.skew as usize, 0, 3, "ticks of clock offset")?;
        if !(2..=6).contains(&c.period) {
            return Err(ParamError::new(
                "period",
                format!(
                    "{}: expected 2 to 6 ticks (a reader finishes a quiescence that began less than `period` \
                     ticks ago; 1 would need one to begin in the future)",
                    c.period
                ),
            ));
        }
        in_range("horizon", c.horizon as usize, 0, 8, "ticks")?;
        in_range("allocs", c.allocs as usize, 1, 8, "allocations")?;
        let mutant = find_mutant(&RUNTIME_MUTANTS, mutant)?;
        if mutant == Some(RuntimeMutant::SkewIgnored) && c.skew == 0 {
            return Err(ParamError::new("skew", "0: skew-ignored needs clocks that differ; expected 1 to 3"));
        }
        Ok(BiRuntimeCheck::new(c.slots, c.skew, c.period, c.horizon, mutant)
            .with_allocs(c.allocs)
            .with_same_tick(c.same_tick)
            .with_writer_ticks(c.writer_ticks)
            .with_engine_thread(c.engine_thread)
            .with_flush_before_writeback(c.flush_before_writeback)
            .with_ghost(c.ghost))
    }
}
