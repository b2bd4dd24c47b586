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

/// A number of ways or `"full"` (`fabricsim protocols` lists keys by type).
impl schemars::JsonSchema for Ways {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Ways".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": ["integer", "string"]})
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

/// What looks like a slip in a valid cache geometry, as warnings naming
/// `key.size`: a size that is a whole number of kilobytes (10^3) but not
/// of KiB (2^10), and a set count that is not a power of two (real caches
/// index sets with address bits).
pub fn geometry_warnings(geom: &CacheGeometry, key: &str) -> Vec<String> {
    let size = geom.lines() * geom.line_bytes() as u64;
    let mut out = Vec::new();
    if size.is_multiple_of(1000) && !size.is_multiple_of(1024) {
        out.push(format!(
            "{key}.size: {size} B is a decimal size (KB, MB = 10^3, 10^6 B); a cache of {} KiB is written \"{}KiB\"",
            size / 1000,
            size / 1000
        ));
    }
    let sets = geom.sets();
    if !sets.is_power_of_two() {
        out.push(format!(
            "{key}.size: {sets} sets ({size} B / {} ways / {} B lines) is not a power of two; sets are indexed \
             with a modulo, which no real cache does",
            geom.ways(),
            geom.line_bytes()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(size: &str, ways: u32) -> Vec<String> {
        let p = CacheParams { ways: Ways::Count(ways), ..CacheParams::with_size(Size::parse(size).unwrap().bytes()) };
        geometry_warnings(&p.validate("t.toml", "protocol.cache").unwrap(), "protocol.cache")
    }

    #[test]
    fn a_decimal_size_and_a_set_count_not_a_power_of_two_are_warned() {
        assert!(warnings("64KiB", 8).is_empty());
        let w = warnings("64KB", 8);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("protocol.cache.size: 64000 B is a decimal size") && w[0].contains("\"64KiB\""), "{w:?}");
        assert!(w[1].contains("125 sets"), "{w:?}");
        // 3 MiB over 12 ways: 4096 sets, fine; over 16 ways a non-power-of-two set count
        assert!(warnings("3MiB", 12).is_empty());
        let w = warnings("3MiB", 16);
        assert!(w.len() == 1 && w[0].contains("3072 sets"), "{w:?}");
    }
}
