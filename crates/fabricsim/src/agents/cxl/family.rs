//! DCOH (ESF's device-managed coherence) as a family of the registry.

use super::dcoh::{Dcoh, DcohTiming, MAX_BLOCK, MUTANTS};
use super::dcoh_cores::DcohCores;
use crate::agents::cache::{CacheGeometry, VictimPolicy, Ways};
use crate::agents::coherence::core::{check_protocol_limits, FrontEnd};
use crate::agents::family::{
    find_mutant, in_range, CacheUse, CheckSize, Driver, Family, Litmus, LitmusVisitor, Machine, ParamError, RunParams,
    Runs,
};
use crate::programs::{Model, Program};
use std::sync::Arc;

/// The timed DCOH's snoop filter, InvBlk length and interleaving, as
/// `[protocol]` resolves them.
#[derive(Debug, Clone, Copy)]
pub struct DcohSpec {
    pub sf: CacheGeometry,
    pub sf_policy: VictimPolicy,
    pub max_block: u8,
    /// Interleaving granule, in lines.
    pub granule: u64,
    /// Device-local lines of each device's HDM-H region.
    pub hdm_h: u64,
}

/// A checked system's line: run's default (`[workload] line`), which
/// turns `[protocol.dcoh]`'s sizes in bytes into the lines a check counts.
pub const CHECK_LINE: u64 = 64;

/// What a check reads of `[protocol.dcoh]`, in lines.
#[derive(Debug)]
pub struct DcohCheck {
    /// Snoop-filter entries per device (an entry tracks one line).
    pub snoop_filter: usize,
    /// Longest block of lines one BISnp invalidates (InvBlk; 1: none).
    pub invblk: u8,
    /// Lines at the start of each device that are HDM-H.
    pub hdm_h: u64,
}

/// `[protocol.dcoh]` for a check: the snoop filter's size in entries of
/// [`CHECK_LINE`] (default 1 entry: a check has no requester cache to
/// size it by), fully associative; its policy is not read, since the
/// checker frees every possible victim. `hdm_h` in bytes, a multiple of
/// the line.
fn read_check(t: &super::table::DcohConfig) -> Result<DcohCheck, ParamError> {
    let lines = |key: &str, bytes: u64| {
        if bytes.is_multiple_of(CHECK_LINE) {
            Ok(bytes / CHECK_LINE)
        } else {
            Err(ParamError::new(key, format!("{bytes} B: expected a multiple of a checked line ({CHECK_LINE} B)")))
        }
    };
    let snoop_filter = match &t.snoop_filter {
        None => 1,
        Some(sf) => {
            let n = lines("snoop_filter.size", sf.size.bytes())?;
            if !(1..=4).contains(&n) {
                return Err(ParamError::new(
                    "snoop_filter.size",
                    format!(
                        "{} B: expected {CHECK_LINE} B to {} B (1 to 4 entries of a checked {CHECK_LINE} B line)",
                        sf.size.bytes(),
                        4 * CHECK_LINE
                    ),
                ));
            }
            if let Ways::Count(w) = sf.ways {
                if u64::from(w) != n {
                    return Err(ParamError::new(
                        "snoop_filter.ways",
                        format!("{w}: a checked snoop filter is fully associative; expected \"full\" (or {n})"),
                    ));
                }
            }
            n as usize
        }
    };
    let hdm_h = t.hdm_h.map_or(Ok(0), |h| lines("hdm_h", h.bytes()))?;
    Ok(DcohCheck { snoop_filter, invblk: t.invblk.unwrap_or(1), hdm_h })
}

pub struct DcohFamily;

impl Family for DcohFamily {
    const NAME: &'static str = "dcoh";
    const ABOUT: &'static str =
        "CXL device-managed coherence (ESF): an inclusive snoop filter per device, BISnp/BIRsp \
                                 back-invalidation, InvBlk blocks";
    const MUTANTS: &'static [(&'static str, &'static str)] = &[
        ("free-before-all-birsp", "the device frees the entry at the first BIRsp instead of the last"),
        ("drop-dirty-birsp", "the device loses the dirty data a BIRsp carries"),
        ("bisnp-waits-for-request", "a requester holds a BISnp behind its own request on the line"),
        ("invblk-one-too-many", "InvBlk names one line more than the block being freed"),
        (
            "stale-writeback-in-birsp",
            "a BISnp during a write-back is answered with the stale write-back data (issue 38)",
        ),
    ];
    const SIZES: [Option<&'static str>; 4] =
        [Some("requesters"), Some("memory devices"), Some("lines"), Some("data values")];
    const NO_LITMUS: Option<&'static str> = None;
    const LITMUS_KEYS: &'static [&'static str] = &["invblk"];
    const CHECK_KEYS: &'static [&'static str] = &["snoop_filter", "invblk", "hdm_h"];

    fn check_params(t: &super::table::DcohConfig) -> Result<DcohCheck, ParamError> {
        read_check(t)
    }

    /// A host requester per thread whose core runs it, one device with a
    /// one-entry snoop filter ([`DcohCores`]).
    fn litmus_with<V: LitmusVisitor>(
        program: Arc<Program>,
        model: Model,
        table: &super::table::DcohConfig,
        mutant: Option<&str>,
        v: V,
    ) -> Result<V::Out, ParamError> {
        let name = &program.name;
        check_protocol_limits(&program).map_err(|e| ParamError::new("program", format!("{name}: {e}")))?;
        let invblk = table.invblk.unwrap_or(1);
        in_range("invblk", invblk as usize, 1, MAX_BLOCK as usize, "lines")?;
        let mutant = find_mutant(&MUTANTS, mutant)?;
        let p = DcohCores::new(program.clone(), FrontEnd::of(model), invblk, mutant)
            .map_err(|e| ParamError::new("program", format!("{name}: {e}")))?;
        Ok(v.visit(Litmus { protocol: p, outcome: DcohCores::outcome }))
    }
    const SYMMETRY: bool = true;
    type CheckParams = DcohCheck;
    type Checked = Dcoh;
    type Timed = Dcoh;
    type RunTable = super::table::DcohConfig;

    fn resolve(t: &super::table::DcohConfig, m: &Machine) -> Result<RunParams, ParamError> {
        super::table::resolve(t, m).map(RunParams::new)
    }

    const RUNS: Option<Runs> = Some(Runs {
        drivers: &[Driver::Workload],
        drivers_note: "dcoh's requesters run the workload",
        cache: CacheUse::Required("dcoh's requesters need a cache with a capacity: expected a [protocol.cache] table"),
        interleave: true,
        front_end: true,
        ..Runs::BASE
    });

    fn check_machine(m: &Machine) -> Result<(), ParamError> {
        if m.cores > 64 {
            return Err(ParamError::new(
                "requester",
                format!("{} requesters: dcoh's owner lists hold at most 64", m.cores),
            ));
        }
        Ok(())
    }

    /// A BIRsp carries a line per line of its InvBlk.
    fn largest_message(params: &RunParams) -> (u32, u32) {
        params.get::<DcohSpec>().map_or((1, 0), |d| (u32::from(d.max_block), 0))
    }

    fn timed(m: &Machine) -> Result<Dcoh, String> {
        let d: &DcohSpec = m.params();
        let c = m.cache.ok_or("dcoh's requesters need a cache with a capacity ([protocol.cache])")?;
        let t =
            DcohTiming { cache: c.geometry, cache_policy: c.policy, sf: d.sf, sf_policy: d.sf_policy, seed: m.seed };
        let mut p =
            Dcoh::timed(m.cores, m.homes, m.lines as u64, d.granule, m.mshrs, d.max_block, t).with_hdm_h(d.hdm_h);
        p.sc = m.model == crate::programs::Model::Sc;
        Ok(p)
    }

    fn checked(size: &CheckSize, p: &DcohCheck, mutant: Option<&str>) -> Result<Dcoh, ParamError> {
        in_range("caches", size.caches, 1, 4, "requesters")?;
        in_range("directories", size.directories, 1, 2, "devices")?;
        in_range("addresses", size.addresses, 1, 6, "lines")?;
        in_range("values", size.values, 1, 4, "")?;
        in_range("invblk", p.invblk as usize, 1, MAX_BLOCK as usize, "lines")?;
        let mutant = find_mutant(&MUTANTS, mutant)?;
        let hdm_h = p.hdm_h;
        let per_device = (size.addresses as u64).div_ceil(size.directories as u64);
        if hdm_h > per_device {
            return Err(ParamError::new(
                "hdm_h",
                format!(
                    "{} B ({hdm_h} lines of {CHECK_LINE} B): expected at most a device's lines ({} B)",
                    hdm_h * CHECK_LINE,
                    per_device * CHECK_LINE
                ),
            ));
        }
        Ok(Dcoh::checked(
            size.caches,
            size.directories,
            size.addresses as u64,
            p.snoop_filter,
            p.invblk,
            size.values as u8,
        )
        .with_mutant(mutant)
        .with_hdm_h(hdm_h)
        .with_symmetry(size.symmetry))
    }
}
