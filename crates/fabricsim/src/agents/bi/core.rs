//! A BI core: its private L1/L2 (MESI), the explicit cache operations it
//! issues, and its answers to its LLC.

use super::protocol::{Action, Bi, Core, Ghost, Level, Line, Msg, PLine, Tag, Val, Wait, P, REQ, RESP};
use super::runtime::MicroOp;
use super::store_buffer::Entry;
use super::{FlushOp, Mutant};
use crate::agents::protocol::{AgentId, Ctx, OpKind, Protocol, Violation};
use crate::engine::Time;

impl Bi {
    pub(super) fn install(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>, line: Line, pl: PLine) {
        if let Some(old) = c.l2.get_mut(line) {
            *old = pl;
            c.l2.touch(line);
        } else if let Some((v, vl)) = c.l2.insert(line, pl) {
            if let Some(l1) = &mut c.l1 {
                l1.remove(v);
            }
            if vl.st == P::M {
                push_wb(c, v, vl.val);
                let llc = self.llc_agent(self.domain_of(ctx.me));
                ctx.send(llc, REQ, Msg::PutM { line: v, val: vl.val });
            }
        }
        if let Some(l1) = &mut c.l1 {
            l1.insert(line, Tag);
        }
    }

    pub(super) fn core_message(
        &self,
        c: &mut Core,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<(), Violation> {
        let llc = self.llc_agent(self.domain_of(ctx.me));
        if self.bench.is_some() {
            // a message steps the core now, unless a step is due later already
            c.run.clock = c.run.clock.max(ctx.now);
        }
        if let Some(p) = c.prog.as_mut() {
            p.front.0.at(ctx.now);
        }
        match msg {
            Msg::Data { line, val, excl } if c.loads.iter().any(|l| l.0 == line) => {
                let i = c.loads.iter().position(|l| l.0 == line).expect("pending");
                let (_, id) = c.loads.swap_remove(i);
                c.last = Some((line, val));
                self.install(c, ctx, line, PLine { st: if excl { P::E } else { P::S }, val });
                c.run.t_end = ctx.now;
                ctx.done(id);
                if let Some(p) = c.prog.as_mut() {
                    // a load the thread went past: its fill buffer frees
                    p.front.0.arrived(line, ctx.now);
                }
            }
            Msg::Data { line, val, excl } if Self::sb_awaits(c, line) => {
                if !excl {
                    return Err(Violation { kind: "store granted S", detail: format!("{msg:?}") });
                }
                self.sb_granted(c, ctx, line, val);
            }
            Msg::Data { line, val, excl } => {
                let Wait::Miss { line: l, store, id } = c.wait else { return Err(Violation::unexpected(c.wait, msg)) };
                if l != line {
                    return Err(Violation::unexpected(c.wait, msg));
                }
                let pl = match store {
                    Some(_) if c.prog.is_some() => PLine { st: P::M, val: self.prog_store(c, ctx, val) },
                    Some(v) => PLine { st: P::M, val: v },
                    None => {
                        c.last = Some((line, val));
                        PLine { st: if excl { P::E } else { P::S }, val }
                    }
                };
                if store.is_some() && !excl {
                    return Err(Violation { kind: "store granted S", detail: format!("{msg:?}") });
                }
                if let Some(v) = store {
                    self.wrote(ctx, line, v);
                }
                self.install(c, ctx, line, pl);
                c.wait = Wait::None;
                c.run.t_end = ctx.now;
                ctx.done(id);
                if let Some(p) = c.prog.as_mut() {
                    p.front.0.arrived(line, ctx.now);
                    let w = p.swapped.take();
                    let w = if store.is_none() { Some(self.prog_loaded(c, ctx, val)) } else { w };
                    self.prog_next(c, ctx, w, ctx.now)?;
                }
            }
            Msg::Inv { line, keep } => {
                let wb = c.wb.iter().find(|w| w.0 == line).map(|w| w.1);
                let (data, kept) = match c.l2.get(line).copied() {
                    Some(pl) => {
                        let data = if pl.st == P::M { Some(pl.val) } else { wb };
                        if keep {
                            c.l2.get_mut(line).expect("held").st = P::S;
                        } else {
                            c.l2.remove(line);
                            if let Some(l1) = &mut c.l1 {
                                l1.remove(line);
                            }
                        }
                        (data, keep)
                    }
                    None => (wb, false),
                };
                ctx.send(llc, RESP, Msg::Ack { line, data, kept });
            }
            Msg::PutAck { line } => pop_wb(c, line),
            Msg::FlushAck { line } => {
                let Some(i) = c.flushing.iter().position(|f| f.0 == line) else {
                    return Err(Violation::unexpected("no flush of the line", msg));
                };
                let (_, carried) = c.flushing.swap_remove(i);
                if carried {
                    pop_wb(c, line);
                }
                if c.wait == (Wait::Clflush { line }) {
                    c.wait = Wait::None;
                }
            }
            Msg::Delegate { .. } | Msg::Delegated { .. } => self.prog_deliver(c, ctx, from, msg)?,
            _ => return Err(Violation::unexpected("core", msg)),
        }
        if c.prog.as_ref().is_some_and(|p| !p.sb.is_empty()) {
            // an ack, a grant or an invalidation may let the buffer's head go
            self.sb_drain(c, ctx);
        }
        Ok(())
    }

    pub(super) fn core_act(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>, action: Action) -> Result<(), Violation> {
        let llc = self.llc_agent(self.domain_of(ctx.me));
        if let Some(p) = c.prog.as_mut() {
            p.front.0.at(ctx.now);
        }
        // (a load the thread goes past is performed as any other; `went` tells them apart)
        let body = match action {
            Action::LoadAhead { line, level } => Action::Load { line, level },
            a => a,
        };
        match body {
            Action::Load { line, .. } if self.forwards(c, line).is_some() => {
                let w = self.forwards(c, line);
                let id = c.ids;
                c.ids += 1;
                ctx.issued(id, OpKind::Load);
                ctx.done(id);
                let at = self.went(c, ctx.now, Some(self.params.l1_latency), line);
                self.prog_next(c, ctx, w, at)?;
            }
            Action::Load { line, .. } => {
                let id = c.ids;
                // (checked states stay finite: operations are numbered when timed only)
                c.ids += self.shapes.is_some() as u64;
                ctx.issued(id, OpKind::Load);
                match self.level(c, line) {
                    Level::L1 | Level::L2 => {
                        let lvl = self.level(c, line);
                        c.l2.touch(line);
                        if let Some(l1) = &mut c.l1 {
                            l1.insert(line, Tag);
                        }
                        c.last = c.l2.get(line).map(|l| (line, l.val));
                        c.run.t_end = ctx.now + self.hit_latency(lvl);
                        ctx.done(id);
                        if let (true, Some((_, v))) = (c.prog.is_some(), c.last) {
                            let w = self.prog_loaded(c, ctx, v);
                            let at = self.went(c, ctx.now, Some(self.hit_latency(lvl)), line);
                            self.prog_next(c, ctx, Some(w), at)?;
                        }
                    }
                    Level::Miss => {
                        // an out-of-order core goes on past a load whose word it does not wait for
                        let ahead = match c.prog.as_ref() {
                            Some(p) => !p.front.0.used(),
                            None => self.loads_ahead(),
                        };
                        if ahead {
                            c.loads.push((line, id));
                        } else {
                            c.wait = Wait::Miss { line, store: None, id };
                        }
                        ctx.send(llc, REQ, Msg::GetS { line });
                        if c.prog.is_some() {
                            let at = self.went(c, ctx.now, None, line);
                            if ahead {
                                self.prog_next(c, ctx, None, at)?;
                            }
                        }
                    }
                }
            }
            Action::Store { line, .. }
                if self.buffers(c) && matches!(c.prog.as_ref().and_then(|p| p.op), Some(MicroOp::Store { .. })) =>
            {
                let id = c.ids;
                c.ids += 1;
                ctx.issued(id, OpKind::Store);
                ctx.done(id);
                let p = c.prog.as_mut().expect("a program core");
                let Some(MicroOp::Store { word, val, .. }) = p.op else { unreachable!("only stores are buffered") };
                self.sb_push(c, ctx, Entry::Store { line, word, val });
                let at = self.went(c, ctx.now, Some(0), line);
                self.prog_next(c, ctx, None, at)?;
            }
            Action::Store { line, val, .. } => {
                let id = c.ids;
                // (checked states stay finite: operations are numbered when timed only)
                c.ids += self.shapes.is_some() as u64;
                ctx.issued(id, OpKind::Store);
                let lvl = self.level(c, line);
                let val = match (c.prog.is_some(), c.l2.get(line).copied()) {
                    (true, Some(pl)) if pl.st != P::S => self.prog_store(c, ctx, pl.val),
                    _ => val,
                };
                match c.l2.get_mut(line) {
                    Some(pl) if pl.st != P::S => {
                        pl.st = P::M;
                        pl.val = val;
                        self.wrote(ctx, line, val);
                        c.l2.touch(line);
                        if let Some(l1) = &mut c.l1 {
                            l1.insert(line, Tag);
                        }
                        c.run.t_end = ctx.now + self.hit_latency(lvl);
                        ctx.done(id);
                        if let Some(p) = c.prog.as_mut() {
                            let w = p.swapped.take();
                            let at = self.went(c, ctx.now, Some(self.hit_latency(lvl)), line);
                            self.prog_next(c, ctx, w, at)?;
                        }
                    }
                    _ => {
                        c.wait = Wait::Miss { line, store: Some(val), id };
                        ctx.send(llc, REQ, Msg::GetM { line });
                        if c.prog.is_some() {
                            self.went(c, ctx.now, None, line);
                        }
                    }
                }
            }
            Action::Flush { line, op } if self.buffers(c) && c.prog.as_ref().is_some_and(|p| !p.sb.is_empty()) => {
                self.sb_push(c, ctx, Entry::Flush { line, op });
            }
            Action::Flush { line, op } => {
                self.flush(c, ctx, line, op);
                if let Some(p) = c.prog.as_mut().filter(|_| self.buffered()) {
                    // a flush with no store ahead of it went at once: its store-buffer entry frees
                    p.front.0.performed(ctx.now);
                }
            }
            Action::Fence => {}
            Action::Evict { line } => {
                if let Some(pl) = c.l2.remove(line) {
                    if let Some(l1) = &mut c.l1 {
                        l1.remove(line);
                    }
                    if pl.st == P::M {
                        push_wb(c, line, pl.val);
                        ctx.send(llc, REQ, Msg::PutM { line, val: pl.val });
                    }
                }
            }
            Action::LlcEvict { .. } => unreachable!("an LLC's action"),
            Action::Wait { .. } | Action::Stall { .. } => {}
            Action::LoadAhead { .. } => unreachable!("performed as a load"),
        }
        if self.bench.is_some() {
            c.run.clock = ctx.now + self.busy_time(&action);
        }
        if self.bench_core(ctx.me) {
            self.bench_advance(c, ctx.now, action);
        }
        if c.prog.is_some() && matches!(action, Action::Flush { .. } | Action::Fence | Action::Wait { .. }) {
            // an mfence and a flush cost their time before the next micro-op
            // (a clflush's wait for its ack keeps the core from it too)
            let (latency, line) = match action {
                Action::Fence => (self.params.fence, 0),
                Action::Flush { line, .. } => (self.params.flush_issue, line),
                _ => (0, 0),
            };
            let at = self.went(c, ctx.now, Some(latency), line);
            self.prog_next(c, ctx, None, at)?;
        }
        if let Some(p) = c.prog.as_mut() {
            // (the core's own clock: the engine steps it then, and an untimed driver's time stands still)
            p.front.0.now += self.prog_busy(&action);
        }
        Ok(())
    }

    /// Program core `c`'s current micro-op went at `now`: a hit of
    /// `latency` (None: a miss of `line`). The thread's next micro-op goes
    /// no earlier than the returned time: when the word it waits for is
    /// there, or at once past a load whose word it does not read.
    fn went(&self, c: &mut Core, now: Time, latency: Option<Time>, line: Line) -> Time {
        let f = &mut c.prog.as_mut().expect("a program core").front.0;
        let now = now.max(f.now);
        let wait = if f.used() { latency.unwrap_or(0) } else { 0 };
        f.issue(now, latency, line);
        now + wait
    }

    /// How long an action keeps a program core from its next step: the
    /// least time before the next micro-op may go (`went`), so that the
    /// core is not stepped only to be told to stall. The front end times
    /// the rest (`Action::Stall`).
    pub(super) fn prog_busy(&self, action: &Action) -> Time {
        match *action {
            Action::Wait { dur } | Action::Stall { dur } => dur,
            Action::Fence => self.params.fence,
            Action::Flush { .. } => self.params.flush_issue,
            // a hit whose word the thread waits for
            Action::Load { level: lvl @ (Level::L1 | Level::L2), .. } => self.hit_latency(lvl),
            // an in-order store waits for its hit (or longer, for its line)
            Action::Store { level: lvl @ (Level::L1 | Level::L2), .. } if !self.buffered() => self.hit_latency(lvl),
            _ => 0,
        }
    }

    /// Issue a flush of `line` (it may go: `may_flush`).
    pub(super) fn flush(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>, line: Line, op: FlushOp) {
        let llc = self.llc_agent(self.domain_of(ctx.me));
        let mut inv = op != FlushOp::Clwb || self.params.clwb_invalidates;
        if op != FlushOp::Clwb && self.is(Mutant::FlushKeepsLine) {
            inv = false;
        }
        let mut data = None;
        if let Some(pl) = c.l2.get(line).copied() {
            let skip = op == FlushOp::Clwb && self.is(Mutant::ClwbNoWriteback);
            if pl.st == P::M && !skip {
                data = Some(pl.val);
                push_wb(c, line, pl.val);
            }
            if inv {
                c.l2.remove(line);
                if let Some(l1) = &mut c.l1 {
                    l1.remove(line);
                }
            } else if data.is_some() {
                c.l2.get_mut(line).expect("held").st = P::E;
            }
        } else if let Some(&(_, val, _)) = c.wb.iter().find(|w| w.0 == line) {
            // the line left with an eviction whose PutM may still be on its way: the flush
            // can overtake it, and the LLC, which still counts this core the owner, would
            // drop the PutM that follows, so the flush carries the data too
            if !(op == FlushOp::Clwb && self.is(Mutant::ClwbNoWriteback)) {
                data = Some(val);
                push_wb(c, line, val);
            }
        }
        c.flushing.push((line, data.is_some()));
        if op == FlushOp::Clflush {
            c.wait = Wait::Clflush { line };
        }
        ctx.send(llc, REQ, Msg::Flush { line, inv, data });
    }

    /// The value a program core's load of `line` takes from its store buffer.
    fn forwards(&self, c: &Core, line: Line) -> Option<super::runtime::Word> {
        let p = c.prog.as_ref()?;
        match p.op? {
            MicroOp::Load { line: l, word } if l == line => p.sb.forward((line, word)),
            _ => None,
        }
    }

    /// Whether program core `c` retires its stores into a store buffer.
    fn buffers(&self, c: &Core) -> bool {
        c.prog.is_some() && self.buffered()
    }

    /// How long an action keeps its core from the next (an in-order core waits for its hit).
    pub(super) fn busy_time(&self, action: &Action) -> Time {
        match action {
            Action::Wait { dur } | Action::Stall { dur } => *dur,
            a => self.action_latency(0, a).unwrap_or(0),
        }
    }

    pub(super) fn hit_latency(&self, lvl: Level) -> Time {
        match lvl {
            Level::L1 => self.params.l1_latency,
            _ => self.params.l2_latency,
        }
    }
}

/// A dirty line leaves the core: keep its latest value until every ack owed for it.
pub(super) fn push_wb(c: &mut Core, line: Line, val: Val) {
    match c.wb.iter_mut().find(|w| w.0 == line) {
        Some(w) => {
            w.1 = val;
            w.2 += 1;
        }
        None => c.wb.push((line, val, 1)),
    }
}

pub(super) fn pop_wb(c: &mut Core, line: Line) {
    if let Some(i) = c.wb.iter().position(|w| w.0 == line) {
        c.wb[i].2 -= 1;
        if c.wb[i].2 == 0 {
            c.wb.swap_remove(i);
        }
    }
}
