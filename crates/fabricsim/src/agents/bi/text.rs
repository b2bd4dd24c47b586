//! BI's agents in the protocol's own words, for counterexample traces: a
//! core's private lines as `line: state=value`, the LLC's directory with its
//! sharers as a set of the domain's cores, the home's directory with
//! domains; parts in their initial state are left out, and so is a
//! micro-benchmark's timing state (zero when checked).

use std::fmt;

use super::home::{HBusy, HLine, Home};
use super::protocol::{Busy, Core, LLine, Llc, Mp, Node, Pend, Wait};
use crate::agents::text;

/// `{0, 2}` for a bit set.
fn set(bits: u64) -> String {
    text::set_of(bits, "")
}

impl fmt::Debug for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = self.l2.held();
        let mut parts = Vec::new();
        if lines.is_empty() {
            parts.push("no lines".to_string());
        } else {
            let l: Vec<String> = lines.iter().map(|(l, p)| format!("line {l} {:?}={}", p.st, p.val)).collect();
            parts.push(l.join(", "));
        }
        if let Some(l1) = &self.l1 {
            parts.push(format!("L1 tags {:?}", l1.held().iter().map(|e| e.0).collect::<Vec<_>>()));
        }
        if !self.wb.is_empty() {
            let w: Vec<String> =
                self.wb.iter().map(|(l, v, acks)| format!("line {l}={v} ({acks} acks owed)")).collect();
            parts.push(format!("written back [{}]", w.join(", ")));
        }
        if !self.flushing.is_empty() {
            let w: Vec<String> = self
                .flushing
                .iter()
                .map(|(l, data)| format!("line {l}{}", if *data { " with data" } else { "" }))
                .collect();
            parts.push(format!("flushes out [{}]", w.join(", ")));
        }
        if !self.loads.is_empty() {
            let w: Vec<String> = self.loads.iter().map(|(l, _)| format!("line {l}")).collect();
            parts.push(format!("load misses out [{}]", w.join(", ")));
        }
        match self.wait {
            Wait::None => {}
            Wait::Miss { line, store: None, .. } => parts.push(format!("waiting for a load miss of line {line}")),
            Wait::Miss { line, store: Some(v), .. } => {
                parts.push(format!("waiting for a store miss of line {line} (storing {v})"))
            }
            Wait::Clflush { line } => parts.push(format!("waiting for the clflush of line {line}")),
        }
        if self.run != Default::default() {
            parts.push(format!("benchmark phase {:?}, op {}", self.run.phase, self.run.i));
        }
        if let Some(p) = &self.prog {
            parts.push(format!("runs a program; store buffer {:?}", p.sb));
        }
        f.write_str(&parts.join("; "))
    }
}

fn busy(b: Busy) -> Option<String> {
    Some(match b {
        Busy::None => return None,
        Busy::Mem { req, write } => format!("reading memory for core {req} ({})", if write { "GetM" } else { "GetS" }),
        Busy::Collect { req, kind, acks } => format!("collecting {acks} acks for core {req}'s {kind:?}"),
        Busy::Wb { req, inv } => {
            format!("writing back for core {req}'s {}", if inv { "clflush" } else { "clwb" })
        }
        Busy::Home { req } => format!("core {req}'s flush at the home"),
    })
}

impl fmt::Debug for LLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.owner {
            Some(o) => write!(f, "owner core {o}")?,
            None if self.sharers != 0 => write!(f, "sharers cores {}", set(self.sharers))?,
            None => f.write_str("no private copy")?,
        }
        write!(f, ", {}={}", if self.dirty { "dirty" } else { "clean" }, self.val)?;
        if self.mp != Mp::M {
            write!(f, ", domain holds {:?}", self.mp)?;
        }
        if let Some(b) = busy(self.busy) {
            write!(f, ", {b}")?;
        }
        if let Some(s) = self.snoop {
            write!(f, ", home's {} waits for {} acks", if s.inv { "invalidation" } else { "snoop" }, s.acks)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Pend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {} acks owed", self.line, self.acks)?;
        if self.dirty {
            write!(f, ", dirty={}", self.val)?;
        }
        if let Some(r) = self.flush_req {
            write!(f, ", core {r}'s flush")?;
        }
        if self.writing {
            f.write_str(", writing back")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Llc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = self.lines.held();
        if lines.is_empty() {
            f.write_str("no lines")?;
        } else {
            let l: Vec<String> = lines.iter().map(|(l, e)| format!("line {l}: {e:?}")).collect();
            f.write_str(&l.join("; "))?;
        }
        if !self.pend.is_empty() {
            write!(f, "; no longer held but pending {:?}", self.pend)?;
        }
        Ok(())
    }
}

impl fmt::Debug for HLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.owner {
            Some(o) => write!(f, "M at llc{o}")?,
            None if self.sharers != 0 => write!(f, "S at llcs {}", set(self.sharers))?,
            None => f.write_str("uncached")?,
        }
        match self.busy {
            HBusy::None => Ok(()),
            HBusy::Snoop { req, kind, acks, data } => {
                write!(f, ", snooping for llc{req}'s {kind:?}: {acks} acks owed")?;
                match data {
                    Some(v) => write!(f, ", dirty data {v}"),
                    None => Ok(()),
                }
            }
            HBusy::Grant { req } => write!(f, ", granted to llc{req}, awaiting MemDone"),
        }
    }
}

impl fmt::Debug for Home {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m: Vec<String> = self.mem.iter().map(|(l, v)| format!("line {l}={v}")).collect();
        let d: Vec<String> = self.dir.iter().map(|(l, h)| format!("line {l}: {h:?}")).collect();
        write!(f, "memory [{}]; directory [{}]", m.join(", "), d.join("; "))
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Core(c) => c.fmt(f),
            Node::Llc(l) => l.fmt(f),
            Node::Mem(m) => f.write_str(&text::memory(m)),
            Node::Home(h) => h.fmt(f),
        }
    }
}
