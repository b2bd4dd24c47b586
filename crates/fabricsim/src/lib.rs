//! fabricsim: a simulator and model checker for memory coherence, memory
//! ordering and interconnect fabrics.
//!
//! Layers (see DESIGN.md): [`engine`] (time and events), [`fabric`]
//! (topology, links, switches, routing, credits), [`agents`] (what packets
//! mean), [`workloads`] (what requesters do), [`stats`] (outputs),
//! [`config`] (strict configuration) and [`sim`] (the timing engine that
//! puts them together).

pub mod agents;
pub mod bench;
pub mod check;
pub mod config;
pub mod engine;
pub mod fabric;
pub mod sim;
pub mod stats;
pub mod workloads;

pub use config::{ConfigError, Format, SystemSpec};
pub use sim::{Outcome, RunResult, System};

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
    match &spec.protocol {
        Some(p) => sim::protocol::ProtocolSystem::build(spec, p).run(progress),
        None => System::build(spec).run(progress),
    }
}
