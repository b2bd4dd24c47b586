//! Litmus tests run on a coherence protocol, exhaustively: every outcome
//! the protocol (with a core front end for the model) can produce must be
//! one the memory model allows.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::json;

use super::explorer::{explore, Options, Report};
use super::oracle::{allowed_outcomes, outcome_strings, verdict_of, Model};
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
    if program.threads.len() > crate::agents::coherence::directory::MAX_PROCS
        || program.locations.len() > crate::agents::coherence::directory::MAX_LOCS
    {
        return Err(format!(
            "{}: at most {} threads and {} locations on a protocol",
            program.name,
            crate::agents::coherence::directory::MAX_PROCS,
            crate::agents::coherence::directory::MAX_LOCS
        ));
    }
    Ok(Directory::running(variant, program, fe, 1).with_mutant(mutant))
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

pub fn run_on_protocol(program: Arc<Program>, model: Model, protocol: &str) -> Result<LitmusRun, String> {
    let p = directory_protocol(protocol, program.clone(), model)?;
    let mut observed = BTreeSet::new();
    let report = explore(&p, &Options { check_deadlock: true, ..Default::default() }, &mut |w| {
        observed.insert(p.outcome(&w.agents));
    });
    Ok(LitmusRun { allowed: allowed_outcomes(&program, model), observed, report })
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
        "states": run.report.states,
        "transitions": run.report.transitions,
        "seconds": run.report.seconds,
        "violation": run.report.violation.as_ref().map(|v| json!({"kind": v.kind, "detail": v.detail})),
    })
}
