//! GCS (the GPU-cluster lock scheme of MIND-style blades) as a family of the registry.

use super::{Gcs, Variant, MUTANTS};
use crate::agents::family::{
    find_mutant, in_range, CacheUse, CheckSize, Driver, Family, Machine, ParamError, RunParams, Runs,
};
use crate::engine::Time;

/// The timed GCS system, as `[protocol.gcs]` resolves.
#[derive(Debug, Clone, Copy)]
pub struct GcsSpec {
    pub variant: Variant,
    pub blades: usize,
    pub threads: usize,
    pub locks: usize,
    pub region: u32,
    pub page: u32,
    pub blade_latency: Option<Time>,
    pub critical_section: Time,
    pub nic_service: Time,
}

/// What a check reads of `[protocol.gcs]`.
#[derive(Debug)]
pub struct GcsCheck {
    pub variant: Variant,
    /// Threads per compute blade (default 1).
    pub blade_threads: usize,
}

pub struct GcsFamily;

impl Family for GcsFamily {
    const NAME: &'static str = "gcs";
    const ABOUT: &'static str = "GCS: reader-writer locks with their data granted together and kept on the blade, on \
                                 disaggregated memory with an in-switch directory (and its pthread baseline)";
    const MUTANTS: &'static [(&'static str, &'static str)] = &[
        ("no-version-check", "the switch hands a queue off without comparing forwarded and received counts"),
        ("grant-without-data", "the grant of a handed-off lock carries no data"),
        ("early-inv-ack", "a reader blade acknowledges an invalidation with readers still inside"),
    ];
    const SIZES: [Option<&'static str>; 4] = [Some("compute blades"), None, Some("locks"), None];
    const NO_LITMUS: Option<&'static str> = Some(
        "its threads acquire and release reader-writer locks and access a lock's region only inside its critical \
         section, so a litmus program's racing loads and stores have no counterpart (a program whose every access \
         held a lock would be data-race-free, sequentially consistent by construction, and test only the locks, \
         which fabricsim check explores: mutual exclusion, the data value, deadlock freedom)",
    );
    const SYMMETRY: bool = false;
    type CheckParams = GcsCheck;
    const CHECK_KEYS: &'static [&'static str] = &["variant", "blade_threads"];

    fn check_params(t: &super::table::GcsConfig) -> Result<GcsCheck, ParamError> {
        let variant = super::table::variant(t)?;
        Ok(GcsCheck { variant, blade_threads: t.blade_threads.map_or(1, |n| n as usize) })
    }
    type Checked = Gcs;
    type Timed = Gcs;
    type RunTable = super::table::GcsConfig;

    fn resolve(t: &super::table::GcsConfig, m: &Machine) -> Result<RunParams, ParamError> {
        super::table::resolve(t, m).map(RunParams::new)
    }

    const RUNS: Option<Runs> = Some(Runs {
        drivers: &[Driver::Workload],
        drivers_note: "gcs's timed threads run a workload (the checker explores it small: fabricsim check with [protocol] name = \"gcs\")",
        cache: CacheUse::Refused(
            "gcs's blades cache every page they are granted (MIND's DRAM cache holds the working set); expected no \
             [protocol.cache]",
        ),
        ..Runs::BASE
    });

    fn check_machine(m: &Machine) -> Result<(), ParamError> {
        use super::MAX_BLADES;
        let dirs = m.homes;
        if dirs < 3 || dirs - 2 > MAX_BLADES {
            return Err(ParamError::new(
                "memory",
                format!(
                    "{dirs} memories: gcs's homes are the blades' controllers, then the switch, then the memory \
                     blade; expected 3 to {}",
                    MAX_BLADES + 2
                ),
            ));
        }
        if !m.cores.is_multiple_of(dirs - 2) || m.cores / (dirs - 2) > 64 {
            return Err(ParamError::new(
                "requester",
                format!(
                    "{} requesters: gcs's requesters are the threads, the same number on each of the {} blades (at \
                     most 64 each); expected a multiple of {}",
                    m.cores,
                    dirs - 2,
                    dirs - 2
                ),
            ));
        }
        Ok(())
    }

    /// A grant carries the region (or the page).
    fn largest_message(params: &RunParams) -> (u32, u32) {
        params.get::<GcsSpec>().map_or((1, 0), |g| (1, g.region.max(g.page)))
    }

    fn timed(m: &Machine) -> Result<Gcs, String> {
        let g: &GcsSpec = m.params();
        Ok(Gcs {
            region_bytes: g.region,
            page_bytes: g.page,
            blade_latency: g.blade_latency,
            cs: g.critical_section,
            nic_service: g.nic_service,
            ..Gcs::timed(g.variant, g.blades, g.threads, g.locks)
        })
    }

    fn checked(size: &CheckSize, c: &GcsCheck, mutant: Option<&str>) -> Result<Gcs, ParamError> {
        in_range("caches", size.caches, 2, 4, "blades")?;
        in_range("addresses", size.addresses, 1, 2, "locks")?;
        in_range("blade_threads", c.blade_threads, 1, 2, "threads per blade")?;
        let mutant = find_mutant(&MUTANTS, mutant)?;
        Ok(Gcs::checking(c.variant, size.caches, c.blade_threads, size.addresses, (true, true)).with_mutant(mutant))
    }
}
