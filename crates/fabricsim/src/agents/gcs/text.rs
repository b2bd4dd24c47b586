//! GCS's agents in the protocol's own words, for counterexample traces:
//! wait queues and sharer sets as lists of blades, a line's state at a
//! blade as what it holds, who is inside and what waits; no statistics
//! (timing only, zero when checked). Threads are named by their global
//! index (`thread 3` is `t1.1` with two threads a blade).

use std::fmt;

use super::blade::{BLine, Blade, Waiter, Want};
use super::directory::{DEntry, Dir};
use super::messages::Queue;
use super::protocol::Node;
use super::thread::{St, Thread};
use crate::agents::text;

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q: Vec<String> = self.iter().map(|(b, w)| format!("blade{b} {}", if w { "M" } else { "S" })).collect();
        write!(f, "[{}]", q.join(", "))
    }
}

fn blade_set(mask: u16) -> String {
    text::set_of(u64::from(mask), "blade")
}

fn waiter(w: &Waiter) -> String {
    let what = match w.want {
        Want::Lock => "the lock",
        Want::Page => "an access to the page",
        Want::Word => "the lock word (lock)",
        Want::Unlock => "the lock word (unlock)",
    };
    format!("thread {} {} {what}", w.thread, if w.write { "writing" } else { "reading" })
}

impl fmt::Debug for BLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = vec![format!("{:?}", self.perm)];
        if self.perm != super::blade::Perm::I {
            parts[0] += &format!("={}", self.val);
        }
        if self.readers > 0 {
            parts.push(format!("{} reader(s) inside", self.readers));
        }
        if self.writer {
            parts.push("a writer inside".into());
        }
        if self.inv {
            parts.push("recalled".into());
        }
        if self.holder {
            parts.push(format!("holds the queue {:?} ({} forwarded received)", self.queue, self.rcv));
        } else if !self.queue.is_empty() {
            parts.push(format!("queue {:?}", self.queue));
        }
        if self.transferring {
            let keep = if self.keep { ", keeps S" } else { "" };
            parts.push(format!("hand-off out with {} received{keep}", self.sent));
        }
        match self.pending {
            Some(true) => parts.push("asked for M".into()),
            Some(false) => parts.push("asked for S".into()),
            None => {}
        }
        if self.owed {
            parts.push("grant owed to the local acquire".into());
        }
        if !self.waiters.is_empty() {
            let w: Vec<String> = self.waiters.iter().map(waiter).collect();
            parts.push(format!("waiting: {}", w.join(", ")));
        }
        if !self.sleepers.is_empty() {
            let w: Vec<String> = self.sleepers.iter().map(waiter).collect();
            parts.push(format!("asleep: {}", w.join(", ")));
        }
        f.write_str(&parts.join(", "))
    }
}

impl fmt::Debug for Blade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&text::lines(&self.lines, "every line I"))
    }
}

impl fmt::Debug for DEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.state)?;
        if self.sharers != 0 {
            write!(f, ", copies at {}", blade_set(self.sharers))?;
        }
        if let Some(h) = self.holder {
            write!(f, ", queue at blade{h}")?;
        }
        if self.fwd > 0 {
            write!(f, ", {} forwarded", self.fwd)?;
        }
        if self.acks > 0 {
            write!(f, ", {} invalidation acks due", self.acks)?;
        }
        if self.reading != 0 {
            write!(f, ", memory read for {}", blade_set(self.reading))?;
        }
        Ok(())
    }
}

impl fmt::Debug for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&text::lines(&self.lines, "every line I"))
    }
}

impl fmt::Debug for Thread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = if self.write { "write" } else { "read" };
        match self.st {
            St::Idle => f.write_str("idle"),
            St::Wait => write!(f, "waiting for lock {} ({mode})", self.line),
            St::Cs => write!(f, "inside lock {} ({mode})", self.line),
            St::Rel => write!(f, "releasing lock {} ({mode})", self.line),
        }
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Thread(t) => t.fmt(f),
            Node::Blade(b) => b.fmt(f),
            Node::Dir(d) => d.fmt(f),
            Node::Mem(m) => f.write_str(&text::memory(m)),
        }
    }
}
