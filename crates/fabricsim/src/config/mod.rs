//! Configuration: schema, units, loading, overrides and validation.
//!
//! A configuration is strict: unknown keys are errors, values carry units,
//! and everything is validated before a run starts. Every error names the
//! file, the key path, the bad value and what was expected.

pub mod check_file;
pub mod limits;
pub mod litmus;
pub mod load;
pub mod resolve;
pub mod schema;

// Units and the input-error type live below every layer that parses
// values (fabric, agents, workloads); these keep their config paths.
pub use crate::engine::units;
pub use crate::error::ConfigError;
pub use load::Format;
pub use resolve::resolve;
