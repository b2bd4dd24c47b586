//! Values with units, as written in configuration files: times (`150ns`),
//! sizes (`4KiB`) and bandwidths (`64GB/s`, `PCIe5x16`).
//!
//! Decimal values are parsed exactly (as integer mantissa and power of ten)
//! so that `38.4GB/s` and `1.5ns` never pick up binary rounding.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::engine::Time;

/// An exact non-negative decimal: `mantissa / 10^scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Decimal {
    mantissa: u128,
    scale: u32,
}

/// Why a number did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NumErr {
    /// Not a number at all (or not a whole number of the unit's quantum).
    Invalid,
    /// A number, but too large to represent.
    Range,
}

/// `digits[.digits][e[+-]digits]`, non-negative.
fn parse_decimal(s: &str) -> Result<Decimal, NumErr> {
    let s = s.trim();
    if s.is_empty() || s.starts_with('-') || s.starts_with('+') {
        return Err(NumErr::Invalid);
    }
    let (s, exp) = match s.split_once(['e', 'E']) {
        Some((m, e)) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                return Err(NumErr::Invalid);
            }
            let v: i64 = if digits.len() > 6 { 1_000_000 } else { digits.parse().map_err(|_| NumErr::Invalid)? };
            (m, if e.starts_with('-') { -v } else { v })
        }
        None => (s, 0),
    };
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return Err(NumErr::Invalid);
    }
    if !int.chars().all(|c| c.is_ascii_digit()) || !frac.chars().all(|c| c.is_ascii_digit()) {
        return Err(NumErr::Invalid);
    }
    // Trailing fractional zeros and leading zeros carry no value.
    let frac = frac.trim_end_matches('0');
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(Decimal { mantissa: 0, scale: 0 });
    }
    if digits.len() > 36 {
        return Err(NumErr::Range);
    }
    let mut mantissa: u128 = digits.parse().map_err(|_| NumErr::Range)?;
    let mut scale = frac.len() as i64 - exp;
    while scale < 0 {
        mantissa = mantissa.checked_mul(10).ok_or(NumErr::Range)?;
        scale += 1;
    }
    if scale > 36 {
        // Far smaller than any quantum (1 ps, 1 byte, 1 B/s): keep a value
        // that is still smaller than it, so the caller says why.
        return Ok(Decimal { mantissa: 1, scale: 38 });
    }
    Ok(Decimal { mantissa, scale: scale as u32 })
}

/// Split "150ns" / "1.5 GB/s" / "1e3ns" into ("150", "ns").
fn split_number(s: &str) -> (&str, &str) {
    let s = s.trim();
    let b = s.as_bytes();
    let mut end = 0;
    while end < b.len() {
        let c = b[end];
        let exponent = (c == b'e' || c == b'E')
            && end > 0
            && (b[end - 1].is_ascii_digit() || b[end - 1] == b'.')
            && match b.get(end + 1) {
                Some(d) if d.is_ascii_digit() => true,
                Some(b'+' | b'-') => b.get(end + 2).is_some_and(|d| d.is_ascii_digit()),
                _ => false,
            };
        if c.is_ascii_digit() || c == b'.' || c == b'-' || c == b'+' || exponent {
            end += 1;
        } else {
            break;
        }
    }
    (s[..end].trim(), s[end..].trim())
}

/// Multiply a decimal by an integer factor, requiring an exact integer
/// result (`Invalid` if it is not whole, `Range` if it is too large).
fn exact(d: Decimal, factor: u128) -> Result<u128, NumErr> {
    if d.mantissa == 0 {
        return Ok(0);
    }
    let v = d.mantissa.checked_mul(factor).ok_or(NumErr::Range)?;
    let div = 10u128.checked_pow(d.scale).ok_or(NumErr::Invalid)?;
    if v % div != 0 {
        return Err(NumErr::Invalid);
    }
    Ok(v / div)
}

// ---------------------------------------------------------------- time

/// A duration, stored in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Duration(pub Time);

pub const TIME_EXPECTED: &str = "a time with a unit, like '150ns', '1.5us' or '0'";

impl Duration {
    pub fn ps(self) -> Time {
        self.0
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        let (num, unit) = split_number(s);
        let d = parse_decimal(num).map_err(|e| match e {
            NumErr::Range => format!("invalid time {s:?}: out of range; expected at most about 213 days (2^64 ps)"),
            NumErr::Invalid => format!("invalid time {s:?}: expected {TIME_EXPECTED}"),
        })?;
        let factor: u128 = match unit {
            "ps" => 1,
            "ns" => 1_000,
            "us" | "µs" => 1_000_000,
            "ms" => 1_000_000_000,
            "s" => 1_000_000_000_000,
            "" if d.mantissa == 0 => 1,
            "" => return Err(format!("invalid time {s:?}: missing unit; expected {TIME_EXPECTED}")),
            _ => return Err(format!("invalid time {s:?}: unknown unit {unit:?}; expected one of ps, ns, us, ms, s")),
        };
        let ps = exact(d, factor).map_err(|e| match e {
            NumErr::Range => format!("invalid time {s:?}: out of range; expected at most about 213 days (2^64 ps)"),
            NumErr::Invalid => format!("invalid time {s:?}: not a whole number of picoseconds (the time resolution)"),
        })?;
        u64::try_from(ps)
            .map(Duration)
            .map_err(|_| format!("invalid time {s:?}: out of range; expected at most about 213 days (2^64 ps)"))
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps == 0 {
            write!(f, "0ns")
        } else if ps.is_multiple_of(1_000) {
            write!(f, "{}ns", ps / 1_000)
        } else {
            write!(f, "{ps}ps")
        }
    }
}

// ---------------------------------------------------------------- size

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Size(pub u64);

pub const SIZE_EXPECTED: &str = "a size with a unit, like '64B', '4KiB' or '1GiB'";

impl Size {
    pub fn bytes(self) -> u64 {
        self.0
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        let (num, unit) = split_number(s);
        let d = parse_decimal(num).map_err(|e| match e {
            NumErr::Range => format!("invalid size {s:?}: out of range; expected at most 2^64 bytes"),
            NumErr::Invalid => format!("invalid size {s:?}: expected {SIZE_EXPECTED}"),
        })?;
        let factor: u128 = match unit {
            "B" => 1,
            "KB" | "kB" => 1_000,
            "MB" => 1_000_000,
            "GB" => 1_000_000_000,
            "TB" => 1_000_000_000_000,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            "TiB" => 1 << 40,
            "" if d.mantissa == 0 => 1,
            "" => return Err(format!("invalid size {s:?}: missing unit; expected {SIZE_EXPECTED}")),
            _ => {
                return Err(format!(
                    "invalid size {s:?}: unknown unit {unit:?}; expected one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB"
                ))
            }
        };
        let b = exact(d, factor).map_err(|e| match e {
            NumErr::Range => format!("invalid size {s:?}: out of range; expected at most 2^64 bytes"),
            NumErr::Invalid => format!("invalid size {s:?}: not a whole number of bytes"),
        })?;
        u64::try_from(b).map(Size).map_err(|_| format!("invalid size {s:?}: out of range; expected at most 2^64 bytes"))
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b >= 1 << 30 && b.is_multiple_of(1 << 30) {
            write!(f, "{}GiB", b >> 30)
        } else if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
            write!(f, "{}MiB", b >> 20)
        } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
            write!(f, "{}KiB", b >> 10)
        } else {
            write!(f, "{b}B")
        }
    }
}

// ---------------------------------------------------------------- bandwidth

/// A bandwidth in bytes per second, kept as an exact fraction `num / den`
/// so PCIe's 128b/130b encoding gives exact serialization times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bandwidth {
    /// Bytes per second, numerator. Zero means unlimited (`inf`).
    num: u128,
    den: u128,
    text_kind: BwKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BwKind {
    Plain,
    Pcie { gen: u8, lanes: u8 },
    Infinite,
}

pub const BANDWIDTH_EXPECTED: &str =
    "a positive bandwidth like '64GB/s', '38.4GB/s', '256Gb/s' or a PCIe link like 'PCIe5x16' (generations 1-6, lanes 1, 2, 4, 8, 16)";

/// PCIe signalling rate per lane (GT/s) and line-encoding efficiency.
/// Gen1-2: 8b/10b; Gen3-5: 128b/130b; Gen6: PAM4 FLIT mode, 242 of each
/// 256-byte FLIT carry TLP and DLLP bytes (the rest is CRC and FEC).
pub fn pcie_generation(gen: u8) -> Option<(u128, u128, u128)> {
    // (GT/s, encoding numerator, encoding denominator)
    match gen {
        1 => Some((25, 8, 10 * 10)), // 2.5 GT/s: written as 25/10
        2 => Some((5, 8, 10)),
        3 => Some((8, 128, 130)),
        4 => Some((16, 128, 130)),
        5 => Some((32, 128, 130)),
        6 => Some((64, 242, 256)),
        _ => None,
    }
}

impl Bandwidth {
    pub fn infinite() -> Self {
        Self { num: 0, den: 1, text_kind: BwKind::Infinite }
    }

    pub fn gbps(gb_per_s: u64) -> Self {
        Self { num: gb_per_s as u128 * 1_000_000_000, den: 1, text_kind: BwKind::Plain }
    }

    pub fn is_infinite(&self) -> bool {
        self.num == 0
    }

    /// Bytes per second as a float (for reports only; timing uses exact math).
    pub fn bytes_per_s(&self) -> f64 {
        if self.is_infinite() {
            f64::INFINITY
        } else {
            self.num as f64 / self.den as f64
        }
    }

    pub fn gb_per_s(&self) -> f64 {
        self.bytes_per_s() / 1e9
    }

    /// Time to serialize `bytes`, rounded up to a whole picosecond.
    #[inline]
    pub fn serialize(&self, bytes: u64) -> Time {
        if self.num == 0 {
            return 0;
        }
        let n = bytes as u128 * 1_000_000_000_000u128 * self.den;
        n.div_ceil(self.num) as Time
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("inf") || t.eq_ignore_ascii_case("infinite") {
            return Ok(Self::infinite());
        }
        if let Some(rest) = t.strip_prefix("PCIe").or_else(|| t.strip_prefix("pcie")) {
            let rest = rest.trim_start_matches(['G', 'g', 'e', 'n']).trim();
            let (g, l) = rest
                .split_once(['x', 'X'])
                .ok_or_else(|| format!("invalid bandwidth {s:?}: expected {BANDWIDTH_EXPECTED}"))?;
            let gen: u8 =
                g.trim().parse().map_err(|_| format!("invalid bandwidth {s:?}: expected {BANDWIDTH_EXPECTED}"))?;
            let lanes: u8 =
                l.trim().parse().map_err(|_| format!("invalid bandwidth {s:?}: expected {BANDWIDTH_EXPECTED}"))?;
            let (gt, en, ed) = pcie_generation(gen)
                .ok_or_else(|| format!("invalid bandwidth {s:?}: unknown PCIe generation {gen}; expected 1-6"))?;
            if ![1u8, 2, 4, 8, 16].contains(&lanes) {
                return Err(format!("invalid bandwidth {s:?}: {lanes} lanes; expected 1, 2, 4, 8 or 16"));
            }
            // bytes/s = GT/s * 1e9 * lanes / 8 bits * encoding
            let (num, den) = if gen == 1 {
                (gt * 100_000_000 * lanes as u128 * en, 8 * ed / 10)
            } else {
                (gt * 1_000_000_000 * lanes as u128 * en, 8 * ed)
            };
            return Ok(Self { num, den, text_kind: BwKind::Pcie { gen, lanes } });
        }
        let (num, unit) = split_number(t);
        if num.starts_with('-') {
            return Err(format!("invalid bandwidth {s:?}: negative; expected {BANDWIDTH_EXPECTED}"));
        }
        let range = || format!("invalid bandwidth {s:?}: out of range; expected 1B/s to 1000TB/s");
        let d = parse_decimal(num).map_err(|e| match e {
            NumErr::Range => range(),
            NumErr::Invalid => format!("invalid bandwidth {s:?}: expected {BANDWIDTH_EXPECTED}"),
        })?;
        let (factor, bits): (u128, bool) = match unit {
            "B/s" => (1, false),
            "KB/s" | "kB/s" => (1_000, false),
            "MB/s" => (1_000_000, false),
            "GB/s" => (1_000_000_000, false),
            "TB/s" => (1_000_000_000_000, false),
            "Kb/s" | "kb/s" => (1_000, true),
            "Mb/s" => (1_000_000, true),
            "Gb/s" => (1_000_000_000, true),
            "Tb/s" => (1_000_000_000_000, true),
            "" => return Err(format!("invalid bandwidth {s:?}: missing unit; expected {BANDWIDTH_EXPECTED}")),
            _ => {
                return Err(format!(
                    "invalid bandwidth {s:?}: unknown unit {unit:?}; expected B/s, KB/s, MB/s, GB/s, TB/s or Kb/s, Mb/s, Gb/s, Tb/s"
                ))
            }
        };
        if d.mantissa == 0 {
            return Err(format!("invalid bandwidth {s:?}: zero; expected {BANDWIDTH_EXPECTED}"));
        }
        let num = d.mantissa.checked_mul(factor).ok_or_else(range)?;
        let den = 10u128.checked_pow(d.scale).ok_or_else(range)? * if bits { 8 } else { 1 };
        // Keep serialization times exact and finite: 1 B/s to 10^15 B/s.
        if num < den || num / den > 1_000_000_000_000_000 {
            return Err(range());
        }
        // Reduce the fraction so serialize() stays far from overflow.
        let g = gcd(num, den);
        Ok(Self { num: num / g, den: den / g, text_kind: BwKind::Plain })
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.text_kind {
            BwKind::Infinite => write!(f, "inf"),
            BwKind::Pcie { gen, lanes } => write!(f, "PCIe{gen}x{lanes}"),
            BwKind::Plain => {
                let g = self.gb_per_s();
                write!(f, "{}GB/s", trim_float(g))
            }
        }
    }
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

// ---------------------------------------------------------------- serde

macro_rules! unit_serde {
    ($t:ty, $what:expr) => {
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$t, E> {
                        <$t>::parse(s).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$t, E> {
                        if v == 0 {
                            <$t>::parse("0").map_err(E::custom)
                        } else {
                            Err(E::custom(format!("invalid value {v}: missing unit; expected {}", $what)))
                        }
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$t, E> {
                        self.visit_i64(v as i64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$t, E> {
                        Err(E::custom(format!("invalid value {v}: missing unit; expected {}", $what)))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
        /// A string with its unit (`fabricsim protocols` lists keys by type).
        impl schemars::JsonSchema for $t {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($t).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({"type": "string", "format": stringify!($t)})
            }
        }
    };
}

unit_serde!(Duration, TIME_EXPECTED);
unit_serde!(Size, SIZE_EXPECTED);
unit_serde!(Bandwidth, BANDWIDTH_EXPECTED);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(Duration::parse("150ns").unwrap().ps(), 150_000);
        assert_eq!(Duration::parse("1.5us").unwrap().ps(), 1_500_000);
        assert_eq!(Duration::parse("2 ps").unwrap().ps(), 2);
        assert_eq!(Duration::parse("0").unwrap().ps(), 0);
        assert!(Duration::parse("150").unwrap_err().contains("missing unit"));
        assert!(Duration::parse("1.5ps").unwrap_err().contains("picosecond"));
        assert!(Duration::parse("-3ns").is_err());
        assert!(Duration::parse("3 parsecs").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn sizes() {
        assert_eq!(Size::parse("64B").unwrap().bytes(), 64);
        assert_eq!(Size::parse("4KiB").unwrap().bytes(), 4096);
        assert_eq!(Size::parse("1.5KB").unwrap().bytes(), 1500);
        assert!(Size::parse("0.5B").is_err());
        assert_eq!(Size::parse("1.5e3B").unwrap().bytes(), 1500);
        assert_eq!(Size::parse("2E+1B").unwrap().bytes(), 20);
        assert!(Size::parse("1e400B").unwrap_err().contains("out of range"));
        assert!(Size::parse("1e-400B").unwrap_err().contains("whole number"));
        assert!(Size::parse("1e9999999999GiB").unwrap_err().contains("out of range"));
        assert!(Duration::parse("1e30s").unwrap_err().contains("out of range"));
        assert_eq!(Duration::parse("1e3ns").unwrap().ps(), 1_000_000);
    }

    #[test]
    fn bandwidths() {
        let b = Bandwidth::parse("64GB/s").unwrap();
        assert_eq!(b.serialize(64), 1_000);
        let b = Bandwidth::parse("38.4GB/s").unwrap();
        assert_eq!(b.serialize(384), 10_000);
        let b = Bandwidth::parse("8Gb/s").unwrap();
        assert_eq!(b.serialize(1), 1_000);
        assert!(Bandwidth::parse("-3GB/s").unwrap_err().contains("negative"));
        assert!(Bandwidth::parse("0GB/s").unwrap_err().contains("zero"));
        assert!(Bandwidth::parse("3GHz").unwrap_err().contains("unknown unit"));
        assert_eq!(Bandwidth::parse("1e3GB/s").unwrap().gb_per_s(), 1000.0);
        assert!(Bandwidth::parse("1e400GB/s").unwrap_err().contains("out of range"));
        assert!(Bandwidth::parse("99999999999999999999.999999999999999999TB/s").unwrap_err().contains("out of range"));
        assert!(Bandwidth::parse("0.1B/s").unwrap_err().contains("out of range"));
    }

    #[test]
    fn pcie_generations_include_encoding() {
        // Gen5 x16: 32 GT/s * 16 lanes / 8 * 128/130 = 63.0154 GB/s
        let b = Bandwidth::parse("PCIe5x16").unwrap();
        assert!((b.gb_per_s() - 63.015_384_6).abs() < 1e-6);
        assert_eq!(b.to_string(), "PCIe5x16");
        // Gen3 x8: 8 GT/s * 8 / 8 * 128/130
        assert!((Bandwidth::parse("PCIe3x8").unwrap().gb_per_s() - 7.876_923).abs() < 1e-5);
        // Gen6 x16: 64 * 16 / 8 * 242/256
        assert!((Bandwidth::parse("PCIe6x16").unwrap().gb_per_s() - 121.0).abs() < 1e-9);
        // Gen1 x1: 2.5 GT/s 8b/10b = 0.25 GB/s
        assert!((Bandwidth::parse("PCIe1x1").unwrap().gb_per_s() - 0.25).abs() < 1e-12);
        assert!(Bandwidth::parse("PCIe7x16").unwrap_err().contains("generation"));
        assert!(Bandwidth::parse("PCIe5x3").unwrap_err().contains("lanes"));
    }
}
