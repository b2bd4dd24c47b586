//! A reusable set-associative store with victim policies, for every
//! protocol's caches and for snoop filters (fully associative: one set).
//!
//! - [`CacheGeometry`]: sets × ways × line bytes, built with checked errors.
//! - [`VictimPolicy`]: `lru`, `fifo`, `lifo`, `mru`, `lfi`, `random`.
//! - [`SetAssoc`]: the preallocated table of (line address, value) slots.
//! - [`CacheParams`]: the `[... cache]` configuration table.
//! - [`CacheCounters`]: what a protocol's cache counts in a timed run.
//!
//! Keys are *line addresses* (byte address / line size, see
//! [`CacheGeometry::line_of`]); line `a` lives in set `a mod sets`.
//! See docs/cache.md for the exact policy definitions.

mod counters;
mod params;
mod store;

use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

pub use counters::{Beside, CacheCounters};
pub use params::{geometry_warnings, CacheParams, Ways};
pub use store::{LineHasher, SetAssoc};

// ---------------------------------------------------------------- geometry

/// Sets × ways of lines of `line_bytes`. Any positive set count is allowed
/// (a power of two is indexed with a mask, any other count with a modulo).
/// `ways == lines` is fully associative (one set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheGeometry {
    sets: u32,
    ways: u32,
    line_bytes: u32,
}

/// Why a (size, line, ways) triple is not a cache geometry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GeometryError {
    /// The line size is 0 or larger than 4 GiB − 1.
    BadLine { line: u64 },
    /// The size is 0.
    ZeroSize,
    /// The size is not a whole number of lines.
    SizeNotMultipleOfLine { size: u64, line: u64 },
    /// There are more than `u32::MAX` lines.
    TooManyLines { lines: u64 },
    /// `ways` is 0.
    ZeroWays,
    /// `ways` is larger than the number of lines.
    WaysExceedLines { ways: u32, lines: u64 },
    /// The number of lines is not a multiple of `ways`.
    LinesNotMultipleOfWays { lines: u64, ways: u32 },
}

impl GeometryError {
    /// The configuration key the error is about: `size`, `line` or `ways`.
    pub fn key(&self) -> &'static str {
        match self {
            GeometryError::BadLine { .. } => "line",
            GeometryError::ZeroSize
            | GeometryError::SizeNotMultipleOfLine { .. }
            | GeometryError::TooManyLines { .. } => "size",
            GeometryError::ZeroWays
            | GeometryError::WaysExceedLines { .. }
            | GeometryError::LinesNotMultipleOfWays { .. } => "ways",
        }
    }
}

impl fmt::Display for GeometryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GeometryError::BadLine { line } => write!(f, "{line}B: expected a line size from 1B to below 4GiB"),
            GeometryError::ZeroSize => write!(f, "0B: expected a positive size, a whole number of lines"),
            GeometryError::SizeNotMultipleOfLine { size, line } => {
                write!(f, "{size}B: expected a positive multiple of the line size ({line}B)")
            }
            GeometryError::TooManyLines { lines } => {
                write!(f, "{lines} lines: expected at most {} lines", u32::MAX)
            }
            GeometryError::ZeroWays => write!(f, "0: expected at least 1 way, or 'full'"),
            GeometryError::WaysExceedLines { ways, lines } => {
                write!(f, "{ways}: expected at most the number of lines ({lines})")
            }
            GeometryError::LinesNotMultipleOfWays { lines, ways } => {
                write!(f, "{ways}: the cache has {lines} lines, not a multiple of {ways} ways (sets = lines / ways)")
            }
        }
    }
}

impl std::error::Error for GeometryError {}

impl CacheGeometry {
    /// A geometry from a size and a line size in bytes and an associativity.
    /// `ways == size / line_bytes` gives a fully associative store.
    pub fn new(size_bytes: u64, line_bytes: u64, ways: u32) -> Result<Self, GeometryError> {
        if line_bytes == 0 || line_bytes > u32::MAX as u64 {
            return Err(GeometryError::BadLine { line: line_bytes });
        }
        if size_bytes == 0 {
            return Err(GeometryError::ZeroSize);
        }
        if !size_bytes.is_multiple_of(line_bytes) {
            return Err(GeometryError::SizeNotMultipleOfLine { size: size_bytes, line: line_bytes });
        }
        let lines = size_bytes / line_bytes;
        if lines > u32::MAX as u64 {
            return Err(GeometryError::TooManyLines { lines });
        }
        if ways == 0 {
            return Err(GeometryError::ZeroWays);
        }
        if ways as u64 > lines {
            return Err(GeometryError::WaysExceedLines { ways, lines });
        }
        if !lines.is_multiple_of(ways as u64) {
            return Err(GeometryError::LinesNotMultipleOfWays { lines, ways });
        }
        Ok(Self { sets: (lines / ways as u64) as u32, ways, line_bytes: line_bytes as u32 })
    }

    /// A fully associative store of `lines` lines (one set).
    pub fn fully_associative(lines: u32, line_bytes: u64) -> Result<Self, GeometryError> {
        Self::new(lines as u64 * line_bytes, line_bytes, lines)
    }

    pub fn sets(&self) -> u32 {
        self.sets
    }

    pub fn ways(&self) -> u32 {
        self.ways
    }

    pub fn line_bytes(&self) -> u32 {
        self.line_bytes
    }

    /// Number of lines (sets × ways).
    pub fn lines(&self) -> u64 {
        self.sets as u64 * self.ways as u64
    }

    pub fn size_bytes(&self) -> u64 {
        self.lines() * self.line_bytes as u64
    }

    pub fn is_fully_associative(&self) -> bool {
        self.sets == 1
    }

    /// The line address of a byte address.
    #[inline]
    pub fn line_of(&self, byte_addr: u64) -> u64 {
        byte_addr / self.line_bytes as u64
    }

    /// The set a line address maps to: `line mod sets`.
    #[inline]
    pub fn set_of(&self, line: u64) -> usize {
        let sets = self.sets as u64;
        if sets.is_power_of_two() {
            (line & (sets - 1)) as usize
        } else {
            (line % sets) as usize
        }
    }
}

// ---------------------------------------------------------------- policies

/// Which resident line of a full set an insertion evicts.
///
/// - `lru`: the least recently *used* (inserted or touched).
/// - `mru`: the most recently used.
/// - `fifo`: the oldest inserted (touches are ignored).
/// - `lifo`: the newest inserted (touches are ignored).
/// - `lfi`: least frequently inserted (ESF): every line has an insertion
///   counter that survives its evictions; evict the resident line with the
///   fewest insertions, ties to the oldest inserted (FIFO).
/// - `random`: uniform over the candidates, from a seeded PCG stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum VictimPolicy {
    #[default]
    Lru,
    Fifo,
    Lifo,
    Mru,
    Lfi,
    Random,
}

pub const POLICY_EXPECTED: &str = "one of lru, fifo, lifo, mru, lfi, random";

impl VictimPolicy {
    pub const ALL: [VictimPolicy; 6] = [
        VictimPolicy::Lru,
        VictimPolicy::Fifo,
        VictimPolicy::Lifo,
        VictimPolicy::Mru,
        VictimPolicy::Lfi,
        VictimPolicy::Random,
    ];

    /// The configuration name.
    pub fn name(self) -> &'static str {
        match self {
            VictimPolicy::Lru => "lru",
            VictimPolicy::Fifo => "fifo",
            VictimPolicy::Lifo => "lifo",
            VictimPolicy::Mru => "mru",
            VictimPolicy::Lfi => "lfi",
            VictimPolicy::Random => "random",
        }
    }

    /// From a configuration name (exact, lower case).
    pub fn parse(s: &str) -> Result<Self, String> {
        VictimPolicy::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("{s:?}: unknown victim policy; expected {POLICY_EXPECTED}"))
    }
}

impl fmt::Display for VictimPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for VictimPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::parse(s)
    }
}

impl<'de> Deserialize<'de> for VictimPolicy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = VictimPolicy;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a victim policy, {POLICY_EXPECTED}")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<VictimPolicy, E> {
                VictimPolicy::parse(s).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

/// A policy's name (`fabricsim protocols` lists keys by type).
impl schemars::JsonSchema for VictimPolicy {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "VictimPolicy".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string"})
    }
}

impl Serialize for VictimPolicy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}
