//! The checking engine: the memory-model oracle and (issue 4) the
//! exhaustive explorer of protocol state machines.

pub mod oracle;
