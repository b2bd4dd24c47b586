//! Litmus tests run on a coherence protocol, exhaustively: every outcome
//! the protocol (with a core front end for the model) can produce must be
//! one the memory model allows.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::json;

use super::explorer::{explore, Options, Report};
use super::oracle::{outcome_strings, try_allowed_outcomes, verdict_of, Limits, Model};
use crate::agents::coherence::core::FrontEnd;
use crate::agents::coherence::directory::{mutant_by_name, Directory, Variant, MUTANTS};
use crate::workloads::program::{Outcome, Program};

/// Protocols `--protocol` accepts: a name, optionally `+mutant`.
pub fn protocol_names() -> Vec<String> {
    let mut v = vec!["msi".to_string(), "mesi".to_string()];
    for (m, _) in MUTANTS {
        v.push(format!("msi+{m}"));
        v.push(format!("mesi+{m}"));
    }
    v
}

pub fn directory_protocol(name: &str, program: Arc<Program>, model: Model) -> Result<Directory, String> {
    let (base, mutant) = match name.split_once('+') {
        Some((b, m)) => (b, Some(m)),
        None => (name, None),
    };
    let variant = match base {
        "msi" => Variant::Msi,
        "mesi" => Variant::Mesi,
        _ => {
            return Err(format!(
                "unknown protocol {name:?}; expected msi or mesi, optionally with +MUTANT ({})",
                MUTANTS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")
            ))
        }
    };
    let mutant = match mutant {
        None => None,
        Some(m) => Some(mutant_by_name(m).ok_or_else(|| {
            format!(
                "unknown mutant {m:?}; expected one of {}",
                MUTANTS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")
            )
        })?),
    };
    let fe = match model {
        Model::Sc => FrontEnd::Sc,
        Model::Tso => FrontEnd::Tso,
        Model::Rc => FrontEnd::Rc,
    };
    check_protocol_limits(&program).map_err(|e| format!("{}: {e}", program.name))?;
    Ok(Directory::running(variant, program, fe, 1).with_mutant(mutant))
}

/// Operations per thread a core can run: `Core::done` and `Core::inflight`
/// are `u32` bitmasks with one bit per operation.
pub const MAX_OPS: usize = u32::BITS as usize;

/// The fixed sizes of a program run on a directory protocol (threads,
/// locations, registers per thread, operations per thread), checked before
/// the protocol is built. The message names the limit, the value and where.
pub fn check_protocol_limits(program: &Program) -> Result<(), String> {
    use crate::agents::coherence::{core::MAX_REGS, directory::MAX_LOCS, directory::MAX_PROCS};
    let threads = program.threads.len();
    if threads > MAX_PROCS {
        return Err(format!("{threads} threads: a protocol runs at most {MAX_PROCS} threads (MAX_PROCS)"));
    }
    let locs = program.locations.len();
    if locs > MAX_LOCS {
        return Err(format!(
            "{locs} locations ({}): a protocol runs at most {MAX_LOCS} locations (MAX_LOCS)",
            program.locations.join(", ")
        ));
    }
    for (t, regs) in program.registers.iter().enumerate() {
        if regs.len() > MAX_REGS {
            return Err(format!(
                "thread P{t} uses {} registers ({}): a protocol core has at most {MAX_REGS} registers per thread (MAX_REGS)",
                regs.len(),
                regs.join(", ")
            ));
        }
    }
    for (t, ops) in program.threads.iter().enumerate() {
        if ops.len() > MAX_OPS {
            return Err(format!(
                "thread P{t} has {} operations: a protocol core runs at most {MAX_OPS} operations per thread (MAX_OPS)",
                ops.len()
            ));
        }
    }
    Ok(())
}

pub struct LitmusRun {
    pub allowed: BTreeSet<Outcome>,
    pub observed: BTreeSet<Outcome>,
    pub report: Report,
}

impl LitmusRun {
    /// Observed outcomes the model does not allow.
    pub fn forbidden_observed(&self) -> Vec<&Outcome> {
        self.observed.iter().filter(|o| !self.allowed.contains(o)).collect()
    }

    pub fn ok(&self) -> bool {
        self.report.violation.is_none() && self.report.complete && self.forbidden_observed().is_empty()
    }
}

/// States the protocol explorer visits for one litmus test before it gives
/// up (the run is then incomplete, not ok): about 1 GB.
pub const PROTOCOL_MAX_STATES: u64 = 20_000_000;

pub fn run_on_protocol(program: Arc<Program>, model: Model, protocol: &str) -> Result<LitmusRun, String> {
    run_on_protocol_with(program, model, protocol, &Limits::default())
}

/// [`run_on_protocol`] within `limits` (the oracle's, and its `stop` for
/// the protocol's exploration too). An interrupted run returns what it
/// explored with `report.interrupted`; an oracle that is too large is an
/// error.
pub fn run_on_protocol_with(
    program: Arc<Program>,
    model: Model,
    protocol: &str,
    limits: &Limits,
) -> Result<LitmusRun, String> {
    let p = directory_protocol(protocol, program.clone(), model)?;
    let allowed = match try_allowed_outcomes(&program, model, limits) {
        Ok(a) => a,
        Err(e) if e.interrupted => {
            let mut report = explore(&p, &Options { max_states: Some(0), ..Default::default() }, &mut |_| {});
            report.interrupted = true;
            report.complete = false;
            report.states = 0;
            return Ok(LitmusRun { allowed: BTreeSet::new(), observed: BTreeSet::new(), report });
        }
        Err(e) => return Err(e.message),
    };
    let mut observed = BTreeSet::new();
    let opts = Options {
        check_deadlock: true,
        max_states: Some(PROTOCOL_MAX_STATES),
        stop: limits.stop.clone(),
        ..Default::default()
    };
    let report = explore(&p, &opts, &mut |w| {
        observed.insert(p.outcome(&w.agents));
    });
    Ok(LitmusRun { allowed, observed, report })
}

/// The `fabricsim litmus --protocol` JSON object.
pub fn run_json(program: &Program, model: Model, protocol: &str, run: &LitmusRun) -> serde_json::Value {
    let v = verdict_of(program, &run.allowed);
    json!({
        "test": program.name,
        "model": model.name(),
        "protocol": protocol,
        "verdict": v.as_str(),
        "allowed": outcome_strings(program, &run.allowed),
        "observed": outcome_strings(program, &run.observed),
        "forbidden_observed": outcome_strings(program, run.forbidden_observed()),
        "ok": run.ok(),
        "complete": run.report.complete,
        "interrupted": run.report.interrupted,
        "too_large": !run.report.complete && !run.report.interrupted && run.report.violation.is_none(),
        "states": run.report.states,
        "transitions": run.report.transitions,
        "seconds": run.report.seconds,
        "violation": run.report.violation.as_ref().map(|v| json!({"kind": v.kind, "detail": v.detail})),
    })
}
