//! PCIe remote memory ordering (RLSQ) as a family of the registry: timed
//! from `[protocol.pcie]`, checked on litmus programs.

use std::sync::Arc;

use super::table::PcieConfig;
use super::{Mmio, Pcie, Variant, MUTANTS, RW_MUTANTS};
use crate::agents::cache::CacheGeometry;
use crate::agents::coherence::core::check_protocol_limits;
use crate::agents::family::{
    find_mutant, CacheUse, CheckSize, Driver, Family, Litmus, LitmusAlias, Machine, ParamError, RunParams, Runs,
};
use crate::engine::Time;
use crate::programs::{Model, Op, Program};

/// The timed PCIe read ordering, as `[protocol.pcie]` resolves.
#[derive(Debug, Clone, Copy)]
pub struct PcieSpec {
    pub variant: Variant,
    pub rlsq_entries: usize,
    pub window: usize,
    /// The last requesters that are host cores.
    pub host_cores: usize,
    pub rc_latency: Option<Time>,
    pub host_latency: Option<Time>,
    /// Lines that start in the host's L2.
    pub host_cached: u64,
    /// The host's L2.
    pub host_l2: CacheGeometry,
    pub mmio: Option<Mmio>,
    pub rob_entries: usize,
    /// P2P: VOQs (or one shared queue), queue pairs to the device, switch entries, device time.
    pub p2p: Option<(bool, usize, usize, Time)>,
}

pub struct PcieFamily;

impl Family for PcieFamily {
    const NAME: &'static str = "pcie";
    const ABOUT: &'static str = "PCIe remote memory ordering (RLSQ): a NIC's queue pairs read host memory through a \
                                 root complex that orders reads at the destination (with MMIO and P2P modes)";
    const MUTANTS: &'static [(&'static str, &'static str)] = &[
        ("acquire-no-block", "rc: an acquire does not hold back the reads after it"),
        ("no-squash", "rc-opt: an Inv is acknowledged but the stale data is kept"),
        ("release-no-wait", "rc: a release write is performed at once, not after the requests before it"),
        ("read-passes-write", "a read is performed before the queue pair's earlier writes (W->R)"),
        ("forget-rc", "the host directory never records the root complex as a sharer"),
        ("rob-no-credit", "MMIO rob: the core sends without a credit"),
        ("rob-on-arrival", "MMIO rob: the root complex posts each write on arrival"),
    ];
    const SIZES: [Option<&'static str>; 4] = [None; 4];
    const SYMMETRY: bool = false;
    const CHECKED_BY: Option<&'static str> = Some(
        "\"pcie\" is checked on litmus programs, not from sizes: fabricsim litmus FILE --protocol pcie --set \
         variant=VARIANT --set nic=T (or --set mmio=MODE)",
    );
    type CheckParams = ();
    type Checked = Pcie;
    type Timed = Pcie;
    type RunTable = super::table::PcieConfig;

    fn resolve(t: &super::table::PcieConfig, m: &Machine) -> Result<RunParams, ParamError> {
        super::table::resolve(t, m).map(RunParams::new)
    }

    const NO_LITMUS: Option<&'static str> = None;
    const LITMUS_KEYS: &'static [&'static str] = &["variant", "mmio", "nic"];

    /// Read ordering: the threads `nic` names are NIC queue pairs, the
    /// others host cores (no read-modify-writes). MMIO (`mmio`): every
    /// thread a host core whose stores are MMIO writes to the NIC's device
    /// (the final state's memory is the device's) through a ROB of 2 entries.
    fn litmus(
        program: Arc<Program>,
        _: Model,
        t: &PcieConfig,
        mutant: Option<&str>,
    ) -> Result<Litmus<Pcie>, ParamError> {
        let name = &program.name;
        let limits = check_protocol_limits(&program).map_err(|e| ParamError::new("program", format!("{name}: {e}")));
        if let Some(mode) = &t.mmio {
            let modes = Mmio::ALL.map(|m| format!("\"{}\"", m.name())).join(", ");
            let mode =
                Mmio::parse(mode).ok_or_else(|| ParamError::new("mmio", format!("{mode:?}: expected {modes}")))?;
            if t.nic.is_some() {
                return Err(ParamError::new("nic", "with mmio every thread is a host core; expected no nic"));
            }
            let mutant = find_mutant(&MUTANTS[RW_MUTANTS..], mutant)?;
            limits?;
            for (i, ops) in program.threads.iter().enumerate() {
                if let Some(op) = ops.iter().find(|op| !matches!(op, Op::Store { .. } | Op::Fence { .. })) {
                    return Err(ParamError::new(
                        "program",
                        format!("{name}: thread P{i} has {op:?}; an MMIO thread only stores (MMIO writes) and fences"),
                    ));
                }
            }
            return Ok(Litmus {
                protocol: Pcie::running_mmio(mode, program).with_mutant(mutant),
                outcome: Pcie::outcome,
            });
        }
        let variants = Variant::ALL.map(|v| format!("\"{}\"", v.name())).join(", ");
        let variant = Variant::parse(&t.variant)
            .ok_or_else(|| ParamError::new("variant", format!("{:?}: expected {variants}", t.variant)))?;
        let threads = program.threads.len();
        let Some(nic) = &t.nic else {
            return Err(ParamError::new(
                "nic",
                "missing: name the threads that are NIC queue pairs (e.g. --set nic=1), or give mmio",
            ));
        };
        let mut qps = Vec::new();
        for &q in nic {
            if q as usize >= threads {
                return Err(ParamError::new("nic", format!("thread {q}: expected a thread 0 to {}", threads - 1)));
            }
            qps.push(q as usize);
        }
        let mutant = find_mutant(&MUTANTS[..RW_MUTANTS], mutant)?;
        limits?;
        if program.locations.len() > 64 {
            return Err(ParamError::new("program", format!("{name}: the host memory tracks at most 64 locations")));
        }
        for (i, ops) in program.threads.iter().enumerate() {
            let qp = qps.contains(&i);
            let bad = |op: &&Op| {
                if qp {
                    !matches!(op, Op::Load { .. } | Op::Store { .. })
                } else {
                    matches!(op, Op::Rmw { .. })
                }
            };
            if let Some(op) = ops.iter().find(bad) {
                return Err(ParamError::new(
                    "program",
                    format!(
                        "{name}: thread P{i} ({}) has {op:?}; a NIC thread only loads and stores (DMA reads and \
                         writes) and a host thread has no read-modify-writes",
                        if qp { "NIC" } else { "host" }
                    ),
                ));
            }
        }
        Ok(Litmus { protocol: Pcie::running(variant, program, &qps).with_mutant(mutant), outcome: Pcie::outcome })
    }

    /// `pcie-VARIANT@nic=T[,T..]` and `pcie-mmio-MODE`.
    fn litmus_alias(base: &str, extra: Option<&str>) -> LitmusAlias {
        let rest = base.strip_prefix("pcie-")?;
        let mut t = toml::Table::new();
        if let Some(mode) = rest.strip_prefix("mmio-") {
            t.insert("mmio".into(), mode.into());
            return Some(match extra {
                None => Ok(t),
                Some(x) => Err(format!("@{x}: MMIO's threads are all host cores; expected nothing after @")),
            });
        }
        t.insert("variant".into(), rest.into());
        if let Some(x) = extra {
            let Some(list) = x.strip_prefix("nic=") else {
                return Some(Err(format!("{x:?}: expected nic=T[,T...] (the threads that are NIC queue pairs)")));
            };
            let mut nic = Vec::new();
            for q in list.split(',') {
                match q.trim().parse::<u32>() {
                    Ok(q) => nic.push(toml::Value::Integer(q.into())),
                    Err(_) => return Some(Err(format!("NIC thread {q:?}: expected a thread number"))),
                }
            }
            t.insert("nic".into(), nic.into());
        }
        Some(Ok(t))
    }

    /// Nothing: `checked` refuses, pcie is checked on litmus programs.
    fn check_params(_: &PcieConfig) -> Result<(), ParamError> {
        Ok(())
    }

    fn checked(_: &CheckSize, _: &(), _: Option<&str>) -> Result<Pcie, ParamError> {
        Err(ParamError::new("protocol", Self::CHECKED_BY.unwrap_or_default()))
    }

    const RUNS: Option<Runs> = Some(Runs {
        drivers: &[Driver::Workload],
        drivers_note: "pcie's timed queue pairs run a workload (litmus programs run in the checker: fabricsim litmus \
                       --protocol pcie --set nic=T)",
        cache: CacheUse::Refused(
            "pcie's host cores' private caches hold every line they touch and its queue pairs have no cache \
             (cache_latency is the NIC's issue time); expected no [protocol.cache]",
        ),
        ..Runs::BASE
    });

    fn check_machine(m: &Machine) -> Result<(), ParamError> {
        if m.cores > 250 {
            return Err(ParamError::new(
                "requester",
                format!("{} queue pairs: pcie's agent ids hold at most 250", m.cores),
            ));
        }
        Ok(())
    }

    fn reads_only(params: &RunParams) -> Option<&'static str> {
        params.get::<PcieSpec>().is_some_and(|p| p.p2p.is_some()).then_some("the P2P switch carries reads only")
    }

    fn timed(m: &Machine) -> Result<Pcie, String> {
        let c: &PcieSpec = m.params();
        // with MMIO every requester is a host core
        let hosts = if c.mmio.is_some() { m.cores } else { c.host_cores };
        let p = Pcie::timed(c.variant, m.cores - hosts, hosts, m.lines, c.rlsq_entries, c.window)
            .with_latencies(c.rc_latency, c.host_latency, c.host_cached)
            .with_host_caches(Some(c.host_l2), None)
            .with_mmio(c.mmio, c.rob_entries);
        Ok(match c.p2p {
            Some((voq, qps, entries, latency)) => p.with_p2p(voq, qps, entries, latency),
            None => p,
        })
    }
}
