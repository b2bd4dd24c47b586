//! A compute blade's cache controller (MIND's in-kernel controller with
//! GCS's changes, §4.2): local lock grants, the wait queue it holds, the
//! hand-off at release, deferred invalidations — one handler per message.

use std::collections::BTreeMap;

use smallvec::SmallVec;

use super::messages::{Line, Msg, Queue, LOCAL, REQ, RESP};
use super::protocol::{Gcs, Ghost};
use super::Mutant;
use crate::agents::protocol::{AgentId, Ctx, Violation};
use crate::workloads::program::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Perm {
    #[default]
    I,
    S,
    M,
}

/// A local acquire waiting for its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Waiter {
    pub thread: AgentId,
    pub write: bool,
    /// Without combined data: the blade's own access to the page of the
    /// lock `thread` was just granted (a critical section of one access).
    pub data: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct BLine {
    pub perm: Perm,
    /// Local threads inside their critical sections.
    pub readers: u8,
    pub writer: bool,
    /// The switch asked for the line back; the readers inside finish first.
    pub inv: bool,
    /// This blade holds the line's wait queue (§4.2), with the requests
    /// forwarded to it, and counts what it received (`rcv`).
    pub holder: bool,
    pub queue: Queue,
    pub rcv: u8,
    /// A hand-off is out (`Transfer`); after approval the blade keeps S if `keep`.
    pub transferring: bool,
    pub keep: bool,
    /// A request to the switch is out: for M (`Some(true)`) or S.
    pub pending: Option<bool>,
    /// Its grant came: the local acquire it was made for goes first, even
    /// before the requests queued behind it (else a busy line would be
    /// handed on for ever without its requester using it).
    pub owed: bool,
    /// The region's data (0 while invalid).
    pub val: Value,
    pub waiters: SmallVec<[Waiter; 2]>,
}

impl BLine {
    pub fn busy(&self) -> bool {
        self.pending.is_some() || self.transferring || !self.waiters.is_empty()
    }

    fn drop_copy(&mut self) {
        self.perm = Perm::I;
        self.val = 0;
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Blade {
    /// Lines not in their initial state (invalid and idle).
    pub lines: BTreeMap<Line, BLine>,
}

impl Gcs {
    pub(super) fn blade_message(
        &self,
        b: &mut Blade,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<(), Violation> {
        let line = msg.line();
        match msg {
            Msg::Acquire { write, .. } => {
                b.lines.entry(line).or_default().waiters.push(Waiter { thread: from, write, data: false });
            }
            Msg::Release { write, val, .. } => {
                let l = b.lines.get_mut(&line).ok_or_else(|| Violation::unexpected("no line", msg))?;
                if write {
                    l.writer = false;
                    if self.combined() {
                        l.val = val;
                    } else {
                        let page = b.lines.entry(self.data_line(line)).or_default();
                        if page.perm != Perm::M {
                            return Err(Violation {
                                kind: "write without M",
                                detail: format!("lock {line}'s page is {:?} at its writer's release", page.perm),
                            });
                        }
                        page.val = val;
                    }
                } else {
                    l.readers -= 1;
                }
                ctx.send(from, LOCAL, Msg::Released { line });
                if !self.locality() && !self.combined() {
                    let page = self.data_line(line);
                    self.evict(b, ctx, page);
                    self.settle(b, ctx, page);
                }
            }
            Msg::Grant { write, val, queue, .. } => {
                let l = b.lines.entry(line).or_default();
                l.perm = if write { Perm::M } else { Perm::S };
                l.owed = l.pending.take().is_some();
                if let Some(v) = val {
                    l.val = v;
                }
                if write {
                    l.holder = true;
                    l.queue.append(queue);
                }
            }
            Msg::Holder { queue, .. } => {
                let l = b.lines.entry(line).or_default();
                l.holder = true;
                l.queue.append(queue);
            }
            Msg::Fwd { from: req, write, .. } => {
                let l = b.lines.entry(line).or_default();
                if !l.holder {
                    return Err(Violation {
                        kind: "lost request",
                        detail: format!("blade {req}'s request for line {line} reached a blade that holds no queue"),
                    });
                }
                l.rcv += 1;
                l.queue.push(req, write);
            }
            Msg::Inv { .. } => {
                let l = b.lines.entry(line).or_default();
                if l.perm != Perm::I {
                    if l.readers > 0 && !self.is(Mutant::EarlyInvAck) {
                        l.inv = true;
                    } else {
                        l.drop_copy();
                        ctx.send(self.dir_agent(), RESP, Msg::InvAck { line });
                    }
                }
                // invalid: it dropped the copy (PutS), which the switch counts as the ack
            }
            Msg::Approved { .. } => {
                let l = b.lines.get_mut(&line).ok_or_else(|| Violation::unexpected("no line", msg))?;
                l.transferring = false;
                l.holder = false;
                l.queue = Queue::default();
                l.rcv = 0;
                if l.keep {
                    l.perm = Perm::S;
                } else {
                    l.drop_copy();
                }
                l.keep = false;
            }
            Msg::Deny { .. } => {
                let l = b.lines.get_mut(&line).ok_or_else(|| Violation::unexpected("no line", msg))?;
                l.transferring = false;
                l.keep = false;
            }
            _ => return Err(Violation::unexpected("blade", msg)),
        }
        self.settle(b, ctx, line);
        Ok(())
    }

    /// After a change to `line`: acknowledge a deferred invalidation, hand
    /// the line on, give it up (without locality), and grant what waits.
    fn settle(&self, b: &mut Blade, ctx: &mut Ctx<Msg, Ghost>, line: Line) {
        let mut evict = false;
        if let Some(l) = b.lines.get_mut(&line) {
            if l.readers == 0 && !l.writer {
                if l.inv {
                    l.inv = false;
                    l.drop_copy();
                    ctx.send(self.dir_agent(), RESP, Msg::InvAck { line });
                } else if l.holder && l.perm == Perm::M && !l.transferring && !l.queue.is_empty() && !l.owed {
                    self.hand_off(l, ctx, line);
                } else {
                    evict = !self.locality() && self.is_lock(line) && l.waiters.is_empty();
                }
            }
        }
        if evict {
            self.evict(b, ctx, line);
        }
        self.serve(b, ctx, line);
        if let Some(l) = b.lines.get(&line) {
            if *l == BLine::default() {
                b.lines.remove(&line);
            }
        }
    }

    /// The holder passes a free line on (§3.1.1, §4.2): to the readers at
    /// the head of its queue and the first writer, with the rest of the
    /// queue; the switch approves it if no forwarded request is in flight.
    fn hand_off(&self, l: &mut BLine, ctx: &mut Ctx<Msg, Ghost>, line: Line) {
        let (readers, writer, rest) = l.queue.split();
        let keep = readers != 0 && self.locality();
        l.transferring = true;
        l.keep = keep;
        let msg = Msg::Transfer { line, rcv: l.rcv, readers, writer, rest, val: l.val, keep };
        ctx.send(self.dir_agent(), RESP, msg);
    }

    /// Without locality: give a free line up at release.
    fn evict(&self, b: &mut Blade, ctx: &mut Ctx<Msg, Ghost>, line: Line) {
        let Some(l) = b.lines.get_mut(&line) else { return };
        if l.transferring || l.pending.is_some() || l.readers > 0 || l.writer || l.inv {
            return;
        }
        match (l.perm, l.holder) {
            (Perm::M, true) => self.hand_off(l, ctx, line),
            (Perm::S, false) => {
                l.drop_copy();
                ctx.send(self.dir_agent(), REQ, Msg::PutS { line });
            }
            _ => {}
        }
    }

    /// Grant the local acquires at the head of `line`'s waiters (FIFO), or
    /// ask the switch for what the first of them needs.
    fn serve(&self, b: &mut Blade, ctx: &mut Ctx<Msg, Ghost>, line: Line) {
        let mut data_for = SmallVec::<[Waiter; 2]>::new();
        let mut one_access = false;
        if let Some(l) = b.lines.get_mut(&line) {
            while let Some(&w) = l.waiters.first() {
                // while other blades' requests wait in its queue, the line goes to them first
                let blocked = l.transferring || (l.holder && !l.queue.is_empty() && !l.owed);
                let ok = !blocked
                    && match w.write {
                        true => l.perm == Perm::M && l.readers == 0 && !l.writer,
                        false => l.perm != Perm::I && !l.writer && !l.inv,
                    };
                if !ok {
                    let need = if w.write { l.perm != Perm::M } else { l.perm == Perm::I || l.inv };
                    if need && l.pending.is_none() && !l.holder && !l.transferring {
                        l.pending = Some(w.write);
                        let req = if w.write { Msg::ReqM { line } } else { Msg::ReqS { line } };
                        ctx.send(self.dir_agent(), REQ, req);
                    }
                    break;
                }
                l.waiters.remove(0);
                l.owed = false;
                if w.data {
                    // the page of a granted lock: one access, then free again
                    ctx.send(w.thread, LOCAL, Msg::Granted { line: line - self.locks as Line, val: l.val });
                    one_access = true;
                    continue;
                }
                if w.write {
                    l.writer = true;
                } else {
                    l.readers += 1;
                }
                if self.combined() {
                    ctx.send(w.thread, LOCAL, Msg::Granted { line, val: l.val });
                } else {
                    data_for.push(Waiter { data: true, ..w });
                }
            }
        }
        if one_access {
            // a request queued behind that access may take the page now
            if let Some(l) = b.lines.get_mut(&line) {
                if l.holder && l.perm == Perm::M && !l.transferring && !l.queue.is_empty() {
                    self.hand_off(l, ctx, line);
                }
            }
        }
        if !data_for.is_empty() {
            let page = self.data_line(line);
            b.lines.entry(page).or_default().waiters.extend(data_for);
            self.settle(b, ctx, page);
        }
    }
}
