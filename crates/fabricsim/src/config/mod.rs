//! Configuration: schema, units, loading, overrides and validation.
//!
//! A configuration is strict: unknown keys are errors, values carry units,
//! and everything is validated before a run starts. Every error names the
//! file, the key path, the bad value and what was expected.

mod error;
pub mod limits;
pub mod load;
pub mod resolve;
pub mod schema;
pub mod units;

pub use error::ConfigError;
pub use load::Format;
pub use resolve::{resolve, SystemSpec};
