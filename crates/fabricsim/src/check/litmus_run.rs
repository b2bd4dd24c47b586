//! Litmus tests run on a coherence protocol, exhaustively: every outcome
//! the protocol (with a core front end for the model) can produce must be
//! one the memory model allows.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::json;

use super::explorer::{explore, Checkable, Options, Report};
use super::oracle::{outcome_strings, try_allowed_outcomes, verdict_of, Limits};
use crate::agents::coherence::core::{check_protocol_limits, FrontEnd};
use crate::agents::coherence::directory::{mutant_by_name, Directory, Variant, MUTANTS};
use crate::agents::cord::{self, Cord, Variant as CordVariant};
use crate::agents::pcie::{self, Pcie, Variant as PcieVariant};
use crate::programs::Model;
use crate::programs::{Outcome, Program};

/// Protocols `--protocol` accepts: a name, optionally `+mutant`.
pub fn protocol_names() -> Vec<String> {
    let mut v = vec!["msi".to_string(), "mesi".to_string()];
    for (m, _) in MUTANTS {
        v.push(format!("msi+{m}"));
        v.push(format!("mesi+{m}"));
    }
    v.extend(["cord", "so", "mp"].map(String::from));
    v.extend(cord::MUTANTS.iter().map(|(m, _)| format!("cord+{m}")));
    v.extend(PcieVariant::ALL.map(|x| format!("pcie-{}@nic=1", x.name())));
    v.extend(pcie::MUTANTS[..pcie::RW_MUTANTS].iter().map(|(m, _)| format!("pcie-rc-opt+{m}@nic=1")));
    v.extend(pcie::Mmio::ALL.map(|x| format!("pcie-mmio-{}", x.name())));
    v.extend(pcie::MUTANTS[pcie::RW_MUTANTS..].iter().map(|(m, _)| format!("pcie-mmio-rob+{m}")));
    v
}

/// The names `--protocol` takes, as families (mutants are listed by
/// `fabricsim protocols`).
const LITMUS_FAMILIES: &str =
    "msi, mesi, cord, so, mp, pcie-VARIANT@nic=T[,T...] or pcie-mmio-MODE, each optionally +MUTANT";

/// An unknown `--protocol` name, with the nearest one it may have meant.
fn unknown_protocol(name: &str) -> String {
    let names = protocol_names();
    let close = crate::error::did_you_mean_name(name, names.iter().map(|n| n.as_str()));
    format!("unknown protocol {name:?};{close} expected {LITMUS_FAMILIES}")
}

pub fn directory_protocol(name: &str, program: Arc<Program>, model: Model) -> Result<Directory, String> {
    let (base, mutant) = match name.split_once('+') {
        Some((b, m)) => (b, Some(m)),
        None => (name, None),
    };
    let variant = match base {
        "msi" => Variant::Msi,
        "mesi" => Variant::Mesi,
        _ => return Err(unknown_protocol(name)),
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
    let base = protocol.split(['+', '@']).next().unwrap_or("");
    if ["cord", "so", "mp"].contains(&base) {
        let p = cord_protocol(protocol, program.clone(), model)?;
        return run_litmus(&p, |w| p.outcome(w), program, model, limits);
    }
    if base.starts_with("pcie-") {
        let p = pcie_protocol(protocol, program.clone())?;
        return run_litmus(&p, |w| p.outcome(w), program, model, limits);
    }
    let p = directory_protocol(protocol, program.clone(), model)?;
    run_litmus(&p, |w| p.outcome(w), program, model, limits)
}

/// The write-through family on a litmus program: `cord`, `so` or `mp`,
/// optionally `+MUTANT` (CORD's) and `@x=2,y=1` (each location's home
/// directory; default location i at directory i mod threads). One core and
/// one directory per thread (the paper's nodes); TSO runs the §6 variants.
pub fn cord_protocol(name: &str, program: Arc<Program>, model: Model) -> Result<Cord, String> {
    let (name, homes) = match name.split_once('@') {
        Some((n, h)) => (n, Some(h)),
        None => (name, None),
    };
    let (base, mutant) = match name.split_once('+') {
        Some((b, m)) => (b, Some(m)),
        None => (name, None),
    };
    let variant =
        CordVariant::parse(base).ok_or_else(|| format!("unknown protocol {base:?}; expected cord, so or mp"))?;
    let mutant = match mutant {
        None => None,
        Some(m) => Some(cord::mutant_by_name(m).ok_or_else(|| {
            format!(
                "unknown mutant {m:?}; expected one of {}",
                cord::MUTANTS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")
            )
        })?),
    };
    let tso = match model {
        Model::Rc => false,
        Model::Tso => true,
        Model::Sc => return Err(format!("{base} runs under rc or tso (the paper's models), not sc")),
    };
    check_protocol_limits(&program).map_err(|e| format!("{}: {e}", program.name))?;
    if program.threads.iter().flatten().any(|op| matches!(op, crate::programs::Op::Rmw { .. })) {
        return Err(format!("{}: {base}'s cores have no read-modify-writes", program.name));
    }
    let nodes = program.threads.len();
    let mut home: Vec<u8> = (0..program.locations.len()).map(|l| (l % nodes) as u8).collect();
    for part in homes.map(|h| h.split(',').collect::<Vec<_>>()).unwrap_or_default() {
        let (loc, d) = part.split_once('=').ok_or_else(|| format!("home {part:?}: expected LOCATION=DIRECTORY"))?;
        let l = program
            .locations
            .iter()
            .position(|x| x == loc.trim())
            .ok_or_else(|| format!("home {part:?}: no location {loc:?} in {}", program.name))?;
        home[l] = d
            .trim()
            .parse::<u8>()
            .ok()
            .filter(|&d| (d as usize) < nodes)
            .ok_or_else(|| format!("home {part:?}: expected a directory 0 to {}", nodes - 1))?;
    }
    Ok(Cord::running(variant, program, tso, nodes, home).with_mutant(mutant))
}

/// MMIO on a litmus program: `pcie-mmio-MODE[+MUTANT]`, every thread a
/// host core whose stores are MMIO writes to the NIC's device (the final
/// state's memory is the device's) through a ROB of 2 entries.
fn mmio_protocol(rest: &str, program: Arc<Program>) -> Result<Pcie, String> {
    use crate::agents::pcie::Mmio;
    use crate::programs::Op;
    let (mode, mutant) = match rest.split_once('+') {
        Some((b, m)) => (b, Some(m)),
        None => (rest, None),
    };
    let modes = || Mmio::ALL.map(|m| m.name()).join(", ");
    let mode = Mmio::parse(mode).ok_or_else(|| format!("unknown MMIO mode {mode:?}; expected {}", modes()))?;
    let mutants = &pcie::MUTANTS[pcie::RW_MUTANTS..];
    let mutant = match mutant {
        None => None,
        Some(m) => Some(mutants.iter().find(|x| x.0 == m).map(|x| x.1).ok_or_else(|| {
            format!(
                "unknown MMIO mutant {m:?}; expected one of {}",
                mutants.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")
            )
        })?),
    };
    check_protocol_limits(&program).map_err(|e| format!("{}: {e}", program.name))?;
    for (t, ops) in program.threads.iter().enumerate() {
        if let Some(op) = ops.iter().find(|op| !matches!(op, Op::Store { .. } | Op::Fence { .. })) {
            return Err(format!(
                "{}: thread P{t} has {op:?}; an MMIO thread only stores (MMIO writes) and fences",
                program.name
            ));
        }
    }
    Ok(Pcie::running_mmio(mode, program).with_mutant(mutant))
}

/// PCIe read ordering on a litmus program: `pcie-VARIANT[+MUTANT]@nic=T[,T..]`,
/// the named threads being NIC queue pairs (they only load) and the others
/// host cores (no read-modify-writes).
pub fn pcie_protocol(name: &str, program: Arc<Program>) -> Result<Pcie, String> {
    use crate::programs::Op;
    if let Some(rest) = name.strip_prefix("pcie-mmio-") {
        return mmio_protocol(rest, program);
    }
    let (name, qps) =
        name.split_once('@').ok_or_else(|| format!("{name:?}: name the NIC's threads, e.g. {name}@nic=1"))?;
    let qps = qps
        .strip_prefix("nic=")
        .ok_or_else(|| format!("{qps:?}: expected nic=T[,T...] (the threads that are NIC queue pairs)"))?;
    let threads = program.threads.len();
    let qps: Vec<usize> = qps
        .split(',')
        .map(|t| {
            t.trim()
                .parse::<usize>()
                .ok()
                .filter(|&t| t < threads)
                .ok_or_else(|| format!("NIC thread {t:?}: expected a thread 0 to {}", threads.saturating_sub(1)))
        })
        .collect::<Result<_, _>>()?;
    let base = name.strip_prefix("pcie-").unwrap_or(name);
    let (base, mutant) = match base.split_once('+') {
        Some((b, m)) => (b, Some(m)),
        None => (base, None),
    };
    let names = || PcieVariant::ALL.map(|v| v.name()).join(", ");
    let variant =
        PcieVariant::parse(base).ok_or_else(|| format!("unknown pcie variant {base:?}; expected {}", names()))?;
    let rw = &pcie::MUTANTS[..pcie::RW_MUTANTS];
    let mutant = match mutant {
        None => None,
        Some(m) => Some(rw.iter().find(|x| x.0 == m).map(|x| x.1).ok_or_else(|| {
            format!("unknown mutant {m:?}; expected one of {}", rw.iter().map(|m| m.0).collect::<Vec<_>>().join(", "))
        })?),
    };
    check_protocol_limits(&program).map_err(|e| format!("{}: {e}", program.name))?;
    if program.locations.len() > 64 {
        return Err(format!("{}: the host memory tracks at most 64 locations", program.name));
    }
    for (t, ops) in program.threads.iter().enumerate() {
        let qp = qps.contains(&t);
        if let Some(op) = ops.iter().find(|op| {
            if qp {
                !matches!(op, Op::Load { .. } | Op::Store { .. })
            } else {
                matches!(op, Op::Rmw { .. })
            }
        }) {
            return Err(format!(
                "{}: thread P{t} ({}) has {op:?}; a NIC thread only loads and stores (DMA reads and writes) and a \
                 host thread has no read-modify-writes",
                program.name,
                if qp { "NIC" } else { "host" }
            ));
        }
    }
    Ok(Pcie::running(variant, program, &qps).with_mutant(mutant))
}

fn run_litmus<P: Checkable>(
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
    let hidden = program.registers.iter().flatten().any(|r| r.starts_with('%'));
    let report = explore(p, &opts, &mut |w| {
        let o = outcome(&w.agents);
        observed.insert(if hidden { program.project(o) } else { o });
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
