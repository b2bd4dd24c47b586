//! PCIe remote memory ordering (RLSQ) as a family of the registry: timed
//! from `[protocol.pcie]`, checked on litmus programs.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Mmio, Pcie, Variant};
use crate::agents::cache::CacheGeometry;
use crate::agents::family::{CacheUse, CheckSize, Driver, Family, Machine, ParamError, RunParams, Runs};
use crate::engine::Time;

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

/// PCIe takes no `[check]` keys: its checker runs litmus programs.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PcieCheck {}

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
        "\"pcie\" is checked on litmus programs, not from sizes: fabricsim litmus FILE --protocol \
             pcie-VARIANT@nic=T (or pcie-mmio-MODE)",
    );
    type CheckParams = PcieCheck;
    type Checked = Pcie;
    type Timed = Pcie;
    type RunTable = super::table::PcieConfig;

    fn resolve(t: &super::table::PcieConfig, m: &Machine) -> Result<RunParams, ParamError> {
        super::table::resolve(t, m).map(RunParams::new)
    }

    fn checked(_: &CheckSize, _: &PcieCheck, _: Option<&str>) -> Result<Pcie, ParamError> {
        Err(ParamError::new("protocol", Self::CHECKED_BY.unwrap_or_default()))
    }

    const RUNS: Option<Runs> = Some(Runs {
        drivers: &[Driver::Workload],
        drivers_note: "pcie's timed queue pairs run a workload (litmus programs run in the checker: fabricsim litmus \
                       --protocol pcie-VARIANT@nic=T)",
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
