//! Trace replay. The format (docs/trace-format.md), one request per line:
//!
//! ```text
//! # time      requester  op  address     size
//! 0ns         host0      R   0x1000      64
//! 12.5ns      host0      W   0x2040      64
//! ```
//!
//! `time` is the earliest issue time (a time with a unit, or a bare number
//! of nanoseconds); `requester` a requester's name or index; `op` `R`/`W`
//! (`read`/`write`); `address` decimal or `0x` hex; `size` bytes. Blank
//! lines and `#` comments are ignored. Times must not decrease per requester.

use crate::engine::rng::Stream;
use crate::engine::units::Duration;
use crate::engine::{Time, NS};
use crate::error::ConfigError;
use crate::workloads::pattern::plain_op;
use crate::workloads::source::{Next, OpSource};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    pub time: Time,
    pub requester: u32,
    pub write: bool,
    pub addr: u64,
    pub bytes: u32,
    /// Instructions before it that are not memory operations (protocol
    /// cores; optional field `instructions=N`).
    pub instructions: u64,
    /// A read whose address comes from the previous read (protocol cores;
    /// optional field `dep`).
    pub dep: bool,
}

/// A trace's records as a protocol core's source: each at its time or
/// later, with its own instructions and dependence.
pub struct Replay {
    pub records: std::sync::Arc<Vec<TraceRecord>>,
    /// The protocol's line, in bytes.
    pub line: u64,
}

impl OpSource for Replay {
    /// Operation `value` is record `value - 1` (the driver numbers them from 1).
    fn next(&mut self, value: u64, _rng: &mut Stream) -> Next {
        let r = self.records[(value - 1) as usize];
        Next {
            at: r.time,
            given: Some((r.instructions, r.dep)),
            ..Next::op(plain_op(r.addr, r.write, self.line, value))
        }
    }
}

/// Parse trace text; `requesters` are the system's requester names.
pub fn parse(text: &str, source: &str, requesters: &[String]) -> Result<Vec<TraceRecord>, ConfigError> {
    let mut out = Vec::new();
    let mut last = vec![0 as Time; requesters.len()];
    // A UTF-8 byte order mark (some Windows editors write one) is not content.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = format!("{source}:{}", i + 1);
        let err = |m: String| ConfigError::new(&at, "", m);
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 {
            return Err(err(format!(
                "expected 5 fields 'time requester op address size' (then optionally instructions=N and dep), \
                 found {} in {line:?}",
                f.len()
            )));
        }
        let (mut instructions, mut dep) = (0u64, false);
        for x in &f[5..] {
            match x.split_once('=') {
                None if *x == "dep" && !dep => dep = true,
                Some(("instructions", n)) => {
                    instructions = n.parse().ok().filter(|&n: &u64| n <= 1 << 32).ok_or_else(|| {
                        err(format!("instructions {n:?}: expected a number of instructions from 0 to 4294967296"))
                    })?
                }
                _ => {
                    return Err(err(format!(
                        "field {x:?} after the size: expected instructions=N or dep (each at most once)"
                    )))
                }
            }
        }
        let time = if f[0].chars().all(|c| c.is_ascii_digit() || c == '.') {
            Duration::parse(&format!("{}ns", f[0])).map(|d| d.ps())
        } else {
            Duration::parse(f[0]).map(|d| d.ps())
        }
        .map_err(|e| err(format!("time: {e}")))?;
        let requester = match requesters.iter().position(|n| n == f[1]) {
            Some(r) => r as u32,
            None => match f[1].parse::<usize>() {
                Ok(r) if r < requesters.len() => r as u32,
                _ => {
                    return Err(err(format!(
                        "requester {:?} is not a requester of this system; expected a name ({}) or an index below {}",
                        f[1],
                        requesters.join(", "),
                        requesters.len()
                    )))
                }
            },
        };
        let write = match f[2] {
            "R" | "r" | "read" | "READ" => false,
            "W" | "w" | "write" | "WRITE" => true,
            other => return Err(err(format!("op {other:?}: expected R or W"))),
        };
        let addr = if let Some(h) = f[3].strip_prefix("0x").or_else(|| f[3].strip_prefix("0X")) {
            u64::from_str_radix(h, 16)
        } else {
            f[3].parse()
        }
        .map_err(|_| err(format!("address {:?}: expected a decimal or 0x-hex number", f[3])))?;
        let bytes: u32 = f[4]
            .parse()
            .ok()
            .filter(|&b| b > 0 && b <= 1 << 20)
            .ok_or_else(|| err(format!("size {:?}: expected a number of bytes from 1 to 1048576 (1MiB)", f[4])))?;
        let r = requester as usize;
        if time < last[r] {
            return Err(err(format!(
                "time {} goes back in time for requester {} (previous {}ns); times must not decrease",
                f[0],
                requesters[r],
                last[r] as f64 / NS as f64
            )));
        }
        last[r] = time;
        if dep && write {
            return Err(err("dep on a write: only a read depends on the previous read".to_string()));
        }
        out.push(TraceRecord { time, requester, write, addr, bytes, instructions, dep });
    }
    if out.is_empty() {
        return Err(ConfigError::new(source, "", "the trace has no requests".to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["host0".into(), "host1".into()]
    }

    #[test]
    fn parses_lines() {
        let t = parse("# c\n0 host0 R 0x40 64\n\n1.5ns 1 W 128 32 # x\n", "t.trace", &names()).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(
            t[1],
            TraceRecord { time: 1500, requester: 1, write: true, addr: 128, bytes: 32, instructions: 0, dep: false }
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("0 host0 R 0x40 64\n5 host9 R 0 64\n", "t.trace", &names()).unwrap_err();
        assert!(e.to_string().starts_with("t.trace:2:"), "{e}");
        assert!(e.to_string().contains("host9"));
        let e = parse("5 host0 R 0 64\n1 host0 R 0 64\n", "t.trace", &names()).unwrap_err();
        assert!(e.to_string().contains("back in time"));
        let e = parse("0 host0 X 0 64\n", "t.trace", &names()).unwrap_err();
        assert!(e.to_string().contains("expected R or W"));
    }
}
