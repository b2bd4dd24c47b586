//! The checking engine: the exhaustive explorer of protocol state machines,
//! its state representation, the memory-model oracle, and counterexample
//! output (text and sequence charts).

pub mod chart;
pub mod disk;
pub mod explorer;
pub mod litmus_run;
pub mod oracle;
pub mod stop;
pub mod store;
pub mod symmetry;
pub mod world;

// The state hasher lives in the engine, so agents may use it without
// depending on the checker; `check::fingerprint` keeps its old path.
pub use crate::engine::fingerprint;
pub use explorer::{explore, Options, Report};
pub use stop::Stop;
