//! A compute blade's cache controller (MIND's in-kernel controller with
//! GCS's changes, §4.2): local lock grants, the wait queue it holds, the
//! hand-off at release, deferred invalidations — one handler per message.

use std::collections::BTreeMap;

use smallvec::SmallVec;

use super::messages::{Line, Msg, Queue, LOCAL, REQ, RESP, WAKE};
use super::protocol::{Gcs, Ghost};
use super::Mutant;
use crate::agents::protocol::{AgentId, Ctx, Violation};
use crate::programs::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Perm {
    #[default]
    I,
    S,
    M,
}

/// What a waiter wants of its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Want {
    /// GCS: the lock itself, for `thread`'s critical section.
    Lock,
    /// One access to the page of the lock `thread` now holds (MIND's MSI:
    /// a critical section of one access).
    Page,
    /// pthread: the read-modify-write of the lock word (M, one access)
    /// that locks, or unlocks (`Unlock`).
    Word,
    Unlock,
}

/// A local request waiting for its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Waiter {
    pub thread: AgentId,
    pub write: bool,
    pub want: Want,
}

impl Waiter {
    /// Whether it needs the line in M.
    fn needs_m(self) -> bool {
        self.write || matches!(self.want, Want::Word | Want::Unlock)
    }
}

/// pthread's lock word (glibc's rwlock, reduced): readers inside, a writer
/// inside, and the blades with threads asleep on it (a futex-style queue:
/// each blade's kernel keeps its sleepers, the word says whom to wake).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Word {
    readers: u8,
    writer: bool,
    sleeping: u16,
}

impl Word {
    fn of(v: Value) -> Self {
        Word { readers: v as u8, writer: v >> 8 & 1 == 1, sleeping: (v >> 9) as u16 }
    }

    fn value(self) -> Value {
        self.readers as Value | (self.writer as Value) << 8 | (self.sleeping as Value) << 9
    }
}

/// (Debug: `text.rs`.)
#[derive(Clone, PartialEq, Eq, Hash, Default)]
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
    /// A hand-off is out (`Transfer`, with `sent` of the requests received);
    /// after approval the blade keeps S if `keep`.
    pub transferring: bool,
    pub keep: bool,
    pub sent: u8,
    /// A request to the switch is out: for M (`Some(true)`) or S.
    pub pending: Option<bool>,
    /// Its grant came: the local acquire it was made for goes first, even
    /// before the requests queued behind it (else a busy line would be
    /// handed on for ever without its requester using it).
    pub owed: bool,
    /// The region's data (0 while invalid).
    pub val: Value,
    pub waiters: SmallVec<[Waiter; 2]>,
    /// pthread: local threads asleep until the lock word's holder wakes this blade.
    pub sleepers: SmallVec<[Waiter; 1]>,
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

/// (Debug: `text.rs`.)
#[derive(Clone, PartialEq, Eq, Hash, Default)]
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
                let want = if self.layered() { Want::Word } else { Want::Lock };
                b.lines.entry(line).or_default().waiters.push(Waiter { thread: from, write, want });
            }
            Msg::Release { write, val, .. } => {
                let l = b.lines.entry(line).or_default();
                if self.layered() {
                    // unlock: another read-modify-write of the word
                    l.waiters.push(Waiter { thread: from, write, want: Want::Unlock });
                }
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
                } else if !self.layered() {
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
                if l.rcv != l.sent {
                    return Err(Violation {
                        kind: "lost request",
                        detail: format!(
                            "line {line}'s hand-off was approved with {} forwarded request(s) received after it left",
                            l.rcv - l.sent
                        ),
                    });
                }
                l.sent = 0;
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
            Msg::Wake { .. } => {
                // the lock word changed: the sleepers try again
                let l = b.lines.entry(line).or_default();
                let woken = std::mem::take(&mut l.sleepers);
                l.waiters.extend(woken.into_iter().map(|w| Waiter { want: Want::Word, ..w }));
            }
            Msg::Deny { .. } => {
                let l = b.lines.get_mut(&line).ok_or_else(|| Violation::unexpected("no line", msg))?;
                l.transferring = false;
                l.keep = false;
                l.sent = 0;
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
        // the old writer reads on with the readers, unless a writer follows (it would be invalidated at once,
        // and its local readers must not slip in before that writer)
        let keep = readers != 0 && writer.is_none() && self.locality();
        l.transferring = true;
        l.keep = keep;
        l.sent = l.rcv;
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

    /// Grant the local requests at the head of `line`'s waiters (FIFO), or
    /// ask the switch for what the first of them needs.
    fn serve(&self, b: &mut Blade, ctx: &mut Ctx<Msg, Ghost>, line: Line) {
        let me = (ctx.me as usize - self.thread_count()) as u8;
        let mut pages = SmallVec::<[Waiter; 2]>::new();
        let mut one_access = false;
        if let Some(l) = b.lines.get_mut(&line) {
            while let Some(&w) = l.waiters.first() {
                // while other blades' requests wait in its queue, the line goes to them first
                let blocked = l.transferring || (l.holder && !l.queue.is_empty() && !l.owed);
                let ok = !blocked
                    && match w.needs_m() {
                        true => l.perm == Perm::M && l.readers == 0 && !l.writer,
                        false => l.perm != Perm::I && !l.writer && !l.inv,
                    };
                if !ok {
                    let need = if w.needs_m() { l.perm != Perm::M } else { l.perm == Perm::I || l.inv };
                    if need && l.pending.is_none() && !l.holder && !l.transferring {
                        l.pending = Some(w.needs_m());
                        let req = if w.needs_m() { Msg::ReqM { line } } else { Msg::ReqS { line } };
                        ctx.send(self.dir_agent(), REQ, req);
                    }
                    break;
                }
                l.waiters.remove(0);
                l.owed = false;
                match w.want {
                    Want::Lock => {
                        if w.write {
                            l.writer = true;
                        } else {
                            l.readers += 1;
                        }
                        if self.combined() {
                            ctx.send(w.thread, LOCAL, Msg::Granted { line, val: l.val });
                        } else {
                            pages.push(Waiter { want: Want::Page, ..w });
                        }
                        continue;
                    }
                    // the page of a granted lock: one access, then free again
                    Want::Page => {
                        ctx.send(w.thread, LOCAL, Msg::Granted { line: line - self.locks as Line, val: l.val });
                    }
                    Want::Word => {
                        let mut word = Word::of(l.val);
                        if word.writer || (w.write && word.readers > 0) {
                            // taken: sleep until its holder wakes this blade
                            word.sleeping |= 1 << me;
                            l.sleepers.push(w);
                        } else {
                            if w.write {
                                word.writer = true;
                            } else {
                                word.readers += 1;
                            }
                            pages.push(Waiter { want: Want::Page, ..w });
                        }
                        l.val = word.value();
                    }
                    Want::Unlock => {
                        let mut word = Word::of(l.val);
                        if w.write {
                            word.writer = false;
                        } else {
                            word.readers = word.readers.wrapping_sub(1);
                        }
                        for s in (0..16u8).filter(|s| word.sleeping & (1 << s) != 0) {
                            ctx.send(self.blade_agent(s), WAKE, Msg::Wake { line });
                        }
                        word.sleeping = 0;
                        l.val = word.value();
                    }
                }
                one_access = true;
            }
        }
        if one_access {
            // a request queued behind that access may take the line now
            if let Some(l) = b.lines.get_mut(&line) {
                if l.holder && l.perm == Perm::M && !l.transferring && !l.queue.is_empty() && !l.owed {
                    self.hand_off(l, ctx, line);
                }
            }
        }
        if !pages.is_empty() {
            let page = self.data_line(line);
            b.lines.entry(page).or_default().waiters.extend(pages);
            self.settle(b, ctx, page);
        }
    }
}
