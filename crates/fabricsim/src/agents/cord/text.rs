//! CORD's agents in the protocol's own words, for counterexample traces:
//! a core's epoch, counters, unacknowledged Releases and buffers, a
//! directory's memory and tables as maps keyed by core and epoch; parts in
//! their initial state are left out, and so are statistics (timing only,
//! zero when checked).

use std::fmt;

use super::directory::Dir;
use super::processor::Proc;
use super::protocol::Node;
use super::tables::EpochTable;
use crate::agents::coherence::core::Core;

/// `{dir0: 1, dir1: 2}` for (directory, number) pairs.
fn per_dir(pairs: &[(u8, u32)], what: &str) -> String {
    let items: Vec<String> = pairs.iter().map(|(d, n)| format!("dir{d}: {what}{n}")).collect();
    format!("{{{}}}", items.join(", "))
}

/// A litmus program's core: where it is, its registers and store buffer.
pub(super) fn program(core: &Core) -> Option<String> {
    if core.len == 0 {
        return None;
    }
    let mut s = format!("program at op {} of {}, regs {:?}", core.pc, core.len, core.regs);
    if core.done != 0 || core.inflight != 0 {
        s += &format!(", done {:#b}, in flight {:#b}", core.done, core.inflight);
    }
    if !core.sb.is_empty() {
        let sb: Vec<String> = core.sb.iter().map(|(l, v)| format!("loc {l}={v}")).collect();
        s += &format!(", store buffer [{}]", sb.join(", "));
    }
    if core.waiting {
        s += ", waiting for a miss";
    }
    Some(s)
}

impl fmt::Debug for Proc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = vec![format!("epoch {}", self.ep)];
        if !self.counters.is_empty() {
            parts.push(format!("relaxed stores this epoch {}", per_dir(&self.counters, "")));
        }
        if !self.unacked.is_empty() {
            let u: Vec<String> = self
                .unacked
                .iter()
                .map(|u| {
                    let what = match u.loc {
                        Some(l) => format!("loc {l}"),
                        None => "empty".to_string(),
                    };
                    let alias = if u.alias { ", aliased" } else { "" };
                    format!("ep {} to dir{} ({what}{alias})", u.ep, u.dst)
                })
                .collect();
            parts.push(format!("unacked releases [{}]", u.join(", ")));
        }
        if !self.last_rel.is_empty() {
            parts.push(format!("last released {}", per_dir(&self.last_rel, "ep ")));
        }
        if self.acks > 0 {
            parts.push(format!("{} stores awaiting acks", self.acks));
        }
        if self.seq > 0 {
            parts.push(format!("sequence numbers used {}", self.seq));
        }
        if !self.loads.is_empty() {
            let l: Vec<String> = self.loads.iter().map(|(loc, _)| format!("loc {loc}")).collect();
            let acq = if self.acquiring { " (an acquire: nothing later issues)" } else { "" };
            parts.push(format!("loads out [{}]{acq}", l.join(", ")));
        }
        if !self.sb.is_empty() {
            let sb: Vec<String> =
                self.sb.iter().map(|b| format!("loc {}{}", b.loc, if b.release { " (release)" } else { "" })).collect();
            parts.push(format!("store buffer [{}]", sb.join(", ")));
        }
        parts.extend(program(&self.core));
        f.write_str(&parts.join("; "))
    }
}

impl fmt::Debug for EpochTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self.iter().map(|(pid, ep, n)| format!("core{pid} ep {ep}: {n}")).collect();
        write!(f, "{{{}}}", items.join(", "))
    }
}

impl fmt::Debug for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if !self.mem.is_empty() {
            let m: Vec<String> = self.mem.iter().enumerate().map(|(l, v)| format!("loc {l}={v}")).collect();
            parts.push(format!("memory [{}]", m.join(", ")));
        }
        if !self.cnt.is_empty() {
            parts.push(format!("relaxed stores counted {:?}", self.cnt));
        }
        if !self.noti.is_empty() {
            parts.push(format!("notifications {:?}", self.noti));
        }
        if !self.largest.is_empty() {
            let l: Vec<String> = self.largest.iter().map(|(p, ep)| format!("core{p}: ep {ep}")).collect();
            parts.push(format!("largest committed {{{}}}", l.join(", ")));
        }
        if !self.held.is_empty() {
            let h: Vec<String> = self.held.iter().map(|(p, m)| format!("{m:?} from core{p}")).collect();
            parts.push(format!("held [{}]", h.join(", ")));
        }
        if parts.is_empty() {
            f.write_str("idle")
        } else {
            f.write_str(&parts.join("; "))
        }
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Proc(p) => p.fmt(f),
            Node::Dir(d) => d.fmt(f),
        }
    }
}
