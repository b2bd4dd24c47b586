//! fabricsim: a simulator and model checker for memory coherence, memory
//! ordering and interconnect fabrics.
//!
//! Layers (docs/architecture.md): [`engine`] (time and events), [`fabric`]
//! (topology, links, switches, routing, credits), [`agents`] (what packets
//! mean), [`workloads`] (what requesters do), [`stats`] (outputs),
//! [`config`] (strict configuration) and [`sim`] (the timing engine that
//! puts them together).

pub mod agents;
pub mod bench;
pub mod check;
pub mod config;
pub mod engine;
pub mod error;
pub mod fabric;
pub mod input;
pub mod programs;
pub mod registry;
pub mod sim;
pub mod spec;
pub mod stats;
pub mod workloads;

pub use config::{ConfigError, Format};
pub use sim::{Outcome, RunResult, System};
pub use spec::SystemSpec;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Validate a configuration and run it.
pub fn run_text(
    text: &str,
    source: &str,
    fmt: Format,
    overrides: &[String],
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunResult, ConfigError> {
    let spec = config::resolve(text, source, fmt, overrides, seed)?;
    Ok(run_spec(&spec, progress))
}

/// Run a validated system: a coherence protocol if it names one, else its
/// request/response workload.
pub fn run_spec(spec: &SystemSpec, progress: &mut dyn FnMut(f64) -> bool) -> RunResult {
    run_spec_with(spec, false, progress)
}

/// `run_spec`, profiled or not (`--profile`: the result's `profile` has the
/// events by kind and where the wall time went, [`sim::profile`]; the
/// simulated results are the same).
pub fn run_spec_with(spec: &SystemSpec, profile: bool, progress: &mut dyn FnMut(f64) -> bool) -> RunResult {
    let mut r = match &spec.protocol {
        Some(p) => run_protocol(spec, p, profile, progress),
        None => System::build(spec).with_profile(profile).run(progress),
    };
    // the configuration's warnings first: they may explain the run's
    r.warnings.splice(0..0, spec.warnings.iter().cloned());
    r
}

/// `run_spec` with `--profile`.
pub fn run_spec_profiled(spec: &SystemSpec, progress: &mut dyn FnMut(f64) -> bool) -> RunResult {
    run_spec_with(spec, true, progress)
}

/// The protocol a `[protocol]` table names, built by its family in the
/// registry and run on the generic timing engine.
fn run_protocol(
    spec: &SystemSpec,
    ps: &spec::ProtocolSpec,
    profile: bool,
    progress: &mut dyn FnMut(f64) -> bool,
) -> RunResult {
    let family = registry::find(&ps.name).expect("resolve() checked the protocol's name");
    let mut r = family.run(spec, ps, profile, progress).expect("resolve() validated the machine for its family");
    if r.outcome == Outcome::TimeLimit {
        // The event past the limit was not handled: the run ended at the limit.
        r.sim_time = r.sim_time.min(spec.max_time);
        r.window_end = r.window_end.min(spec.max_time).max(r.window_start + 1);
    }
    r
}
