//! Litmus tests run on a coherence protocol, exhaustively: every outcome
//! the protocol (with a core front end for the model) can produce must be
//! one the memory model allows. Which protocol, and how its cores run the
//! program, is the protocol family's (`Family::litmus`, reached through the
//! registry); this module only explores.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::json;

use super::chart::sequence_svg;
use super::explorer::{explore, explore_to, Checkable, Options, Report};
use super::oracle::{outcome_strings, try_allowed_outcomes, verdict_of, Limits};
use crate::agents::family::{Litmus, LitmusVisitor};
use crate::programs::Model;
use crate::programs::{Outcome, Program};

pub struct LitmusRun {
    pub allowed: BTreeSet<Outcome>,
    pub observed: BTreeSet<Outcome>,
    pub report: Report,
    /// With a forbidden outcome observed: a second search that stopped at
    /// the first final state with one, so its violation is the shortest
    /// interleaving that produces it.
    pub witness: Option<Report>,
}

impl LitmusRun {
    /// Observed outcomes the model does not allow.
    pub fn forbidden_observed(&self) -> Vec<&Outcome> {
        self.observed.iter().filter(|o| !self.allowed.contains(o)).collect()
    }

    pub fn ok(&self) -> bool {
        self.report.violation.is_none() && self.report.complete && self.forbidden_observed().is_empty()
    }

    /// The search whose violation is the shortest failing interleaving: the
    /// protocol's own (an invariant, a deadlock), else a forbidden outcome's.
    pub fn counterexample(&self) -> Option<&Report> {
        match &self.report.violation {
            Some(_) => Some(&self.report),
            None => self.witness.as_ref().filter(|w| w.violation.is_some()),
        }
    }
}

/// States the protocol explorer visits for one litmus test before it gives
/// up (the run is then incomplete, not ok): about 1 GB.
pub const PROTOCOL_MAX_STATES: u64 = 20_000_000;

/// Explore `p`, a protocol whose cores run `program`, within `limits` (the
/// oracle's, and its `stop` for the protocol's exploration too), reading
/// each final state's outcome with `outcome`. An interrupted run returns
/// what it explored with `report.interrupted`; an oracle that is too large
/// is an error.
pub fn run_litmus<P: Checkable>(
    p: &P,
    outcome: impl Fn(&[P::Agent]) -> Outcome,
    program: Arc<Program>,
    model: Model,
    limits: &Limits,
) -> Result<LitmusRun, String> {
    let allowed = match try_allowed_outcomes(&program, model, limits) {
        Ok(a) => a,
        Err(e) if e.interrupted => {
            let mut report = explore(p, &Options { max_states: Some(0), ..Default::default() }, &mut |_| {});
            report.interrupted = true;
            report.complete = false;
            report.states = 0;
            return Ok(LitmusRun { allowed: BTreeSet::new(), observed: BTreeSet::new(), report, witness: None });
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
    let hidden = program.registers.iter().flatten().any(|r| r.starts_with('%'));
    let seen = |o: Outcome| if hidden { program.project(o) } else { o };
    let report = explore(p, &opts, &mut |w| {
        observed.insert(seen(outcome(&w.agents)));
    });
    let mut run = LitmusRun { allowed, observed, report, witness: None };
    if run.report.violation.is_none() && !run.forbidden_observed().is_empty() {
        // Searched again rather than kept from the first search: that one
        // must see every outcome, this one stops at the first forbidden.
        let witness = explore_to(p, &opts, &mut |w| {
            let o = seen(outcome(&w.agents));
            (!run.allowed.contains(&o)).then(|| {
                let shown = o.display(&program).to_string();
                let shown = shown.trim_end_matches([';', ' ']);
                ("forbidden outcome".to_string(), format!("{shown} ({} does not allow it)", model.name()))
            })
        });
        run.witness = Some(witness);
    }
    Ok(run)
}

/// [`run_litmus`] on whichever protocol a family builds for `program`.
pub struct Runner<'a> {
    pub program: Arc<Program>,
    pub model: Model,
    pub limits: &'a Limits,
}

impl LitmusVisitor for Runner<'_> {
    type Out = Result<LitmusRun, String>;
    fn visit<P: Checkable>(self, l: Litmus<P>) -> Self::Out {
        let outcome = |a: &[P::Agent]| (l.outcome)(&l.protocol, a);
        run_litmus(&l.protocol, outcome, self.program, self.model, self.limits)
    }
}

/// The `fabricsim litmus --protocol` JSON object (`protocol`: as the
/// command line named it).
pub fn run_json(program: &Program, model: Model, protocol: &str, run: &LitmusRun) -> serde_json::Value {
    let v = verdict_of(program, &run.allowed);
    let cx = run.counterexample();
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
        "trace_text": cx.map(|r| r.trace_text()),
        "chart": cx.and_then(sequence_svg),
    })
}
