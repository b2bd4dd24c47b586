//! The `[... cache]` configuration table.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use super::{CacheGeometry, VictimPolicy};
use crate::engine::units::{Duration, Size};
use crate::error::ConfigError;

/// Associativity: a number of ways, or `"full"` (one set holding every line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ways {
    Count(u32),
    Full,
}

const WAYS_EXPECTED: &str = "a positive number of ways, or 'full'";

impl<'de> Deserialize<'de> for Ways {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Ways;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(WAYS_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Ways, E> {
                if s == "full" {
                    Ok(Ways::Full)
                } else {
                    Err(E::custom(format!("{s:?}: expected {WAYS_EXPECTED}")))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Ways, E> {
                u32::try_from(v).map(Ways::Count).map_err(|_| E::custom(format!("{v}: expected {WAYS_EXPECTED}")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Ways, E> {
                u32::try_from(v).map(Ways::Count).map_err(|_| E::custom(format!("{v}: expected {WAYS_EXPECTED}")))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Ways {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Ways::Count(n) => s.serialize_u32(*n),
            Ways::Full => s.serialize_str("full"),
        }
    }
}

/// A cache's parameters as a configuration table gives them, e.g.
///
/// ```toml
/// size = "32KiB"      # required
/// line = "64B"        # default 64B
/// ways = 8            # default 8; "full" = fully associative
/// hit_latency = "1ns" # default 1ns
/// mshrs = 16          # outstanding misses; default 16
/// policy = "lru"      # lru | fifo | lifo | mru | lfi | random; default lru
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CacheParams {
    pub size: Size,
    #[serde(default = "default_line")]
    pub line: Size,
    #[serde(default = "default_ways")]
    pub ways: Ways,
    #[serde(default = "default_hit_latency")]
    pub hit_latency: Duration,
    #[serde(default = "default_mshrs")]
    pub mshrs: u32,
    #[serde(default)]
    pub policy: VictimPolicy,
}

fn default_line() -> Size {
    Size(64)
}
fn default_ways() -> Ways {
    Ways::Count(8)
}
fn default_hit_latency() -> Duration {
    Duration(crate::engine::NS)
}
fn default_mshrs() -> u32 {
    16
}

impl CacheParams {
    /// Parameters with the defaults above and the given size.
    pub fn with_size(size: u64) -> Self {
        Self {
            size: Size(size),
            line: default_line(),
            ways: default_ways(),
            hit_latency: default_hit_latency(),
            mshrs: default_mshrs(),
            policy: VictimPolicy::default(),
        }
    }

    /// Check the parameters and build the geometry. `source` is the file (or
    /// override) and `key` the table's key path (e.g. `requester[0].cache`);
    /// an error names `key.size`, `key.line`, `key.ways` or `key.mshrs`.
    pub fn validate(&self, source: &str, key: &str) -> Result<CacheGeometry, ConfigError> {
        let k = |field: &str| if key.is_empty() { field.to_string() } else { format!("{key}.{field}") };
        let (size, line) = (self.size.bytes(), self.line.bytes());
        let ways = match self.ways {
            Ways::Count(w) => w,
            Ways::Full => {
                if line == 0 || size == 0 || !size.is_multiple_of(line) || size / line > u32::MAX as u64 {
                    // Let the geometry name the size or line problem.
                    1
                } else {
                    (size / line) as u32
                }
            }
        };
        let geom =
            CacheGeometry::new(size, line, ways).map_err(|e| ConfigError::new(source, k(e.key()), e.to_string()))?;
        if self.mshrs == 0 {
            return Err(ConfigError::new(source, k("mshrs"), "0: expected at least 1 outstanding miss"));
        }
        Ok(geom)
    }
}
