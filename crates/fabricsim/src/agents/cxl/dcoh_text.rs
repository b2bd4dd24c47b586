//! DCOH's agents in the protocol's own words, for counterexample traces:
//! lines with their states, the snoop filter's owners as a set of
//! requesters, the requests the device holds; no statistics (they are
//! timing only, and zero when checked).

use std::fmt;

use super::dcoh::{Agent, Device, Pend, Requester, St};

/// `{req0, req1}` for a bit set of requesters.
fn owners(bits: u64) -> String {
    crate::agents::text::set_of(bits, "req")
}

impl fmt::Debug for Requester {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self
            .lines
            .iter()
            .map(|(l, c)| {
                let st = match c.st {
                    St::I => "I".to_string(),
                    s => format!("{s:?}={}", c.data),
                };
                match c.pend {
                    Pend::None => format!("line {l} {st}"),
                    Pend::Load => format!("line {l} {st} (load waiting)"),
                    Pend::Store(v) => format!("line {l} {st} (store of {v} waiting)"),
                }
            })
            .collect();
        if lines.is_empty() {
            f.write_str("no lines")?;
        } else {
            f.write_str(&lines.join(", "))?;
        }
        if !self.wbs.is_empty() {
            let wbs: Vec<String> = self.wbs.iter().map(|(l, v)| format!("line {l}={v}")).collect();
            write!(f, "; write-backs awaiting Cmp: {}", wbs.join(", "))?;
        }
        for s in &self.snoops {
            write!(f, "; BISnp of lines {}..{} deferred", s.base, s.base + s.len as u64 - 1)?;
            if s.acked {
                write!(f, " (BIConflictAck served={:#b})", s.served)?;
            }
            if s.awaiting != 0 {
                write!(f, " (awaiting data {:#b})", s.awaiting)?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries: Vec<String> = self
            .sf
            .iter()
            .map(|(l, e)| {
                let mut s = format!("line {l}: {} {}", owners(e.owners), if e.excl { "E/M" } else { "S" });
                if e.wait != 0 {
                    s += &format!(", BIRsp awaited from {}", owners(e.wait));
                }
                if e.evicting {
                    s += &format!(", evicted for line {}", e.for_line);
                }
                s
            })
            .collect();
        write!(f, "snoop filter [{}]", entries.join("; "))?;
        if !self.mem.is_empty() {
            write!(f, "; memory {:?}", self.mem)?;
        }
        if !self.trackers.is_empty() {
            let t: Vec<String> = self
                .trackers
                .iter()
                .map(|t| {
                    format!(
                        "req{} {} line {}{}",
                        t.from,
                        if t.excl { "MemRdE" } else { "MemRdS" },
                        t.line,
                        if t.room { " (a victim is being freed)" } else { "" }
                    )
                })
                .collect();
            write!(f, "; held: {}", t.join(", "))?;
        }
        Ok(())
    }
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Agent::Requester(r) => r.fmt(f),
            Agent::Device(d) => d.fmt(f),
        }
    }
}
