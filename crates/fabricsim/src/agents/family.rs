//! A protocol family as the rest of fabricsim knows it: its name, its
//! parameters (one strict struct, documented key by key), its mutants and
//! how to build it small for the checker.
//!
//! Each protocol's folder implements [`Family`] once (`family.rs` beside
//! its state machine); the registry (`crate::registry`) lists the
//! families, one line each, and the checker, the timing engine, the
//! command line and `fabricsim protocols` reach a protocol only through it.

use std::any::Any;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::cache::{CacheGeometry, VictimPolicy};
use super::protocol::Protocol;
use crate::engine::pack::Pack;
use crate::programs::{Model, Outcome, Program};

/// The size of a checked system: the `[check]` keys every family reads
/// (and `[protocol] model`).
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
    /// `[protocol] model`, for a family whose checked cores take one
    /// ([`Family::CHECK_MODEL`]; None: not given).
    pub model: Option<Model>,
}

/// A parameter the family refuses: the key (a size within `[check]`, or a
/// key within `[protocol.<name>]`) and why, with what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    pub key: String,
    pub message: String,
}

impl ParamError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        ParamError { key: key.into(), message: message.into() }
    }
}

/// A timed family's own resolved parameters (the `[protocol.<name>]`
/// table after validation), handed from the configuration to the family's
/// [`Family::timed`] without anything between them knowing their type.
#[derive(Clone)]
pub struct RunParams(Arc<dyn Any + Send + Sync>);

impl RunParams {
    pub fn new<T: Any + Send + Sync>(params: T) -> Self {
        RunParams(Arc::new(params))
    }

    /// A family with no parameters of its own.
    pub fn none() -> Self {
        Self::new(())
    }

    /// The parameters, if they are a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref::<T>()
    }
}

impl std::fmt::Debug for RunParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunParams(..)")
    }
}

/// A cache with a capacity in front of each core (`[protocol.cache]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheShape {
    pub geometry: CacheGeometry,
    pub policy: VictimPolicy,
    /// Random victims' seed (the run's).
    pub seed: u64,
}

/// What drives the cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// The cores run a program (a litmus file's threads, or the family's own benchmark).
    Own,
    /// A random enabled request each issue interval.
    Random,
    /// Each requester's `[workload]`.
    Workload,
}

impl Driver {
    /// The name `[protocol] driver` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Driver::Own => "program",
            Driver::Random => "random",
            Driver::Workload => "workload",
        }
    }
}

/// The machine a timed family is built for: what the configuration
/// resolved that every family may use.
#[derive(Debug, Clone)]
pub struct Machine {
    /// Cores: one per requester, in placement order.
    pub cores: usize,
    /// Homes: one per memory, in placement order.
    pub homes: usize,
    /// Lines of the address space (the largest workload footprint).
    pub lines: usize,
    /// Bytes of the largest workload footprint.
    pub footprint: u64,
    /// Bytes of the largest store a workload issues (0: none wider than
    /// its access).
    pub max_store: u32,
    /// Address interleaving over the homes, in lines.
    pub granule: u64,
    /// Bytes of a line.
    pub line_bytes: u32,
    /// The memory model of the cores' front end.
    pub model: Model,
    pub driver: Driver,
    /// The litmus program the cores run (driver `Own`).
    pub program: Option<Arc<Program>>,
    /// `[protocol.cache]`, if given.
    pub cache: Option<CacheShape>,
    /// Misses a cache has in flight (`[protocol.cache] mshrs`).
    pub mshrs: u16,
    /// Data values (German).
    pub values: usize,
    pub seed: u64,
    /// The family's own parameters.
    pub params: RunParams,
}

impl Machine {
    /// The family's parameters: `resolve` made them for this family.
    pub fn params<T: Any>(&self) -> &T {
        self.params.get::<T>().expect("the configuration resolved this family's parameters")
    }
}

/// Whether a family's cores have a cache `[protocol.cache]` sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    /// No: why (the error a `[protocol.cache]` gets).
    Refused(&'static str),
    /// Yes, optional: without it a cache holds every line it touches.
    Optional,
    /// Yes, and the family needs its capacity: the error if it is missing.
    Required(&'static str),
}

/// What a timed family takes from `[protocol]`: the configuration checks
/// a run against it before the family builds.
#[derive(Debug, Clone, Copy)]
pub struct Runs {
    /// The drivers its cores take; without a program, the first is the default.
    pub drivers: &'static [Driver],
    /// Said when another driver is asked for (where the family runs otherwise).
    pub drivers_note: &'static str,
    /// Its cores run a litmus program (`[protocol] program`).
    pub programs: bool,
    pub cache: CacheUse,
    /// Lines interleave over its homes by `[protocol] interleave`.
    pub interleave: bool,
    /// Its workload-driven cores are the shared core front end's
    /// (`agents::core`): the TSO store buffer in front of them and
    /// `[protocol.core]`'s private levels.
    pub front_end: bool,
    /// Each cache and home keeps a state per line of the footprint
    /// (the configuration's memory estimate counts them).
    pub line_state: bool,
    /// A workload's store of more than a line is one message.
    pub wide_stores: bool,
    /// Every core and home time is the family's own parameter
    /// (`[protocol] cache_latency` does not apply).
    pub own_latencies: bool,
}

/// A protocol whose cores run a litmus program, and how a final state's
/// outcome (registers and memory) is read from its agents.
pub struct Litmus<P: Protocol> {
    pub protocol: P,
    pub outcome: fn(&P, &[P::Agent]) -> Outcome,
}

/// What receives a family's litmus protocol, whatever its type (the
/// registry's runner): a family whose program cores are another protocol
/// than its checked one (German's beside german.m's clients) hands that one.
pub trait LitmusVisitor {
    type Out;
    fn visit<P>(self, litmus: Litmus<P>) -> Self::Out
    where
        P: Protocol<Agent: Send + Sync + Pack, Msg: Send + Sync + Pack, Ghost: Send + Sync + Pack, Action: Send + Sync>
            + Sync;
}

/// A family's old `fabricsim litmus --protocol` spelling, read: its
/// `[protocol.<name>]` keys.
pub type LitmusAlias = Option<Result<toml::Table, String>>;

/// A family with no keys of its own (no `[protocol.<name>]` table).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoKeys {}

impl Runs {
    /// A machine whose cores run a workload and take none of the optional
    /// parts: what a family's `Runs { .., ..Runs::BASE }` does not say.
    pub const BASE: Runs = Runs {
        drivers: &[Driver::Workload],
        drivers_note: "",
        programs: false,
        cache: CacheUse::Optional,
        interleave: false,
        front_end: false,
        line_state: false,
        wide_stores: false,
        own_latencies: false,
    };
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
    /// How it is checked when `[check]` does not build it from sizes
    /// (None: it does; [`Family::checked`] then refuses with these words).
    const CHECKED_BY: Option<&'static str> = None;

    /// The family's own parameters of a check, read from its
    /// `[protocol.<name>]` table by [`Family::check_params`].
    type CheckParams;
    /// The `[protocol.<name>]` keys a check reads ([`Family::check_params`]);
    /// `fabricsim protocols` lists them from the table's struct. The table's
    /// other keys time or size the timed machine only: a check accepts them
    /// (one table serves `run` and `check`) and does not read them.
    const CHECK_KEYS: &'static [&'static str] = &[];
    /// Whether its checked cores take `[protocol] model` (the others'
    /// cores issue any operation at any time).
    const CHECK_MODEL: bool = false;

    /// Read a check's parameters from the `[protocol.<name>]` table (errors
    /// name the key within the table, converting to the checked system's
    /// units inside the family).
    fn check_params(table: &Self::RunTable) -> Result<Self::CheckParams, ParamError>;
    /// The protocol the checker explores.
    type Checked: Protocol<Agent: Send + Sync + Pack, Msg: Send + Sync + Pack, Ghost: Send + Sync + Pack, Action: Send + Sync>
        + Sync;

    /// Build the protocol small for the checker, refusing sizes and
    /// parameters it cannot take.
    fn checked(size: &CheckSize, params: &Self::CheckParams, mutant: Option<&str>)
        -> Result<Self::Checked, ParamError>;

    /// The protocol the timing engine runs (`Checked` if the family has
    /// no timed machine: [`Family::timed`] then says so).
    type Timed: Protocol;

    /// What its timed machine takes (None: it has none).
    const RUNS: Option<Runs> = None;

    /// Its `[protocol.<name>]` table, strict ([`NoKeys`]: it has none).
    type RunTable: DeserializeOwned + Serialize + JsonSchema + Default + Clone + Send + Sync + 'static;

    /// Its cores run the family's own program, which its table names (a
    /// benchmark): their driver is then `Own` and no other.
    fn drives_itself(table: &Self::RunTable) -> bool {
        let _ = table;
        false
    }

    /// Resolve its table on the machine into the parameters
    /// [`Family::timed`] reads (keys in errors are whole paths:
    /// `protocol.<name>.KEY`, or another table's key the machine broke).
    fn resolve(table: &Self::RunTable, m: &Machine) -> Result<RunParams, ParamError> {
        let _ = (table, m);
        Ok(RunParams::none())
    }

    /// Refuse a machine the family cannot be built on (counts of cores
    /// and homes, data values), naming the configuration key.
    fn check_machine(m: &Machine) -> Result<(), ParamError> {
        let _ = m;
        Ok(())
    }

    /// The widest message its timed machine sends, from its resolved
    /// parameters: (lines of data, bytes of payload beside the control
    /// part), for the fabric's buffer check before the machine is built
    /// (the built protocol's `max_data_lines` and `max_payload_bytes`).
    fn largest_message(params: &RunParams) -> (u32, u32) {
        let _ = params;
        (1, 0)
    }

    /// Why every workload on its machine must only read (a switch that
    /// carries reads only), when its parameters say so.
    fn reads_only(params: &RunParams) -> Option<&'static str> {
        let _ = params;
        None
    }

    /// Build the protocol full size for the timing engine, on a machine
    /// the configuration has validated for it.
    fn timed(m: &Machine) -> Result<Self::Timed, String> {
        let _ = m;
        Err(format!("{} has no timed machine; it is checked only (`fabricsim check`)", Self::NAME))
    }

    /// Why its agents cannot run a litmus program (None: they can, and
    /// [`Family::litmus`] builds them).
    const NO_LITMUS: Option<&'static str> = Some("its agents have no cores that run a program's loads and stores");

    /// The `[protocol.<name>]` keys [`Family::litmus`] reads; the others
    /// size or time the timed machine only, and are refused for litmus.
    const LITMUS_KEYS: &'static [&'static str] = &[];

    /// Build the protocol small for the checker with one core per thread
    /// of `program`, the front end of `model`, the keys of its table and
    /// `mutant` (errors name the key within `[protocol.<name>]`, or
    /// `mutant` or `protocol`).
    fn litmus(
        program: Arc<Program>,
        model: Model,
        table: &Self::RunTable,
        mutant: Option<&str>,
    ) -> Result<Litmus<Self::Checked>, ParamError> {
        let _ = (program, model, table, mutant);
        let why = Self::NO_LITMUS.unwrap_or("it does not build them");
        Err(ParamError::new("protocol", format!("{:?} has no cores for litmus programs: {why}", Self::NAME)))
    }

    /// Build the litmus protocol as [`Family::litmus`] does and hand it to
    /// `v`; a family whose program cores are not its `Checked` protocol
    /// overrides this instead.
    fn litmus_with<V: LitmusVisitor>(
        program: Arc<Program>,
        model: Model,
        table: &Self::RunTable,
        mutant: Option<&str>,
        v: V,
    ) -> Result<V::Out, ParamError> {
        Self::litmus(program, model, table, mutant).map(|l| v.visit(l))
    }

    /// Read an old `--protocol` spelling of this family (`BASE` before a
    /// `+MUTANT`, `EXTRA` after an `@`) into its keys; None: not one.
    fn litmus_alias(base: &str, extra: Option<&str>) -> LitmusAlias {
        let _ = (base, extra);
        None
    }
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
