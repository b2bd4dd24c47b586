/// Simulated time in integer picoseconds. `u64` covers 213 days of
/// simulated time, far beyond any run, and integer time makes results
/// exact and identical on every machine.
pub type Time = u64;

pub const PS: Time = 1;
pub const NS: Time = 1_000;
pub const US: Time = 1_000_000;
pub const MS: Time = 1_000_000_000;
pub const S: Time = 1_000_000_000_000;
