//! A domain's LLC: the inclusive L3 and the blocking MESI directory over
//! its cores; its flushes, evictions and memory traffic.

use super::protocol::{Bi, Busy, Ghost, Kind, LLine, Line, Llc, Mp, Msg, Pend, Val, DOWN, GHOST_LINES, MREQ};
use super::Mutant;
use crate::agents::protocol::{AgentId, Ctx, Step, Violation};

impl Bi {
    pub(super) fn bit(k: u8) -> u64 {
        1u64 << k
    }

    pub(super) fn core_id(&self, d: usize, k: u8) -> AgentId {
        (d * self.cores + k as usize) as AgentId
    }

    /// Send `Inv` to every core in `mask` of domain `d`; how many.
    pub(super) fn inv_all(&self, ctx: &mut Ctx<Msg, Ghost>, d: usize, mut mask: u64, line: Line, keep: bool) -> u8 {
        let mut n = 0;
        while mask != 0 {
            let k = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            ctx.send(self.core_id(d, k), DOWN, Msg::Inv { line, keep });
            n += 1;
        }
        n
    }

    /// A core's request on a line the domain may serve: recall what
    /// conflicts from the domain's cores, or grant now.
    pub(super) fn serve(&self, e: &mut LLine, ctx: &mut Ctx<Msg, Ghost>, d: usize, k: u8, line: Line, write: bool) {
        if e.owner == Some(k) {
            // a clean E line the core dropped silently
            e.owner = None;
        }
        let acks = match (e.owner, write) {
            (Some(o), false) => self.inv_all(ctx, d, Self::bit(o), line, true),
            (o, true) => {
                let mask = (e.sharers | o.map_or(0, Self::bit)) & !Self::bit(k);
                self.inv_all(ctx, d, mask, line, false)
            }
            (None, false) => 0,
        };
        if acks > 0 {
            let kind = if write { Kind::GetM } else { Kind::GetS };
            e.busy = Busy::Collect { req: k, kind, acks };
        } else {
            self.grant(e, ctx, d, k, line, write);
        }
    }

    /// No transaction and no snoop on the line.
    pub(super) fn idle(e: &LLine) -> bool {
        e.busy == Busy::None && e.snoop.is_none()
    }

    /// Checking, coherent mode: follow the last value stored to a line.
    pub(super) fn wrote(&self, ctx: &mut Ctx<Msg, Ghost>, line: Line, val: Val) {
        if self.coherent && self.shapes.is_none() && (line as usize) < GHOST_LINES {
            ctx.ghost.last[line as usize] = val;
        }
    }

    pub(super) fn grant(&self, e: &mut LLine, ctx: &mut Ctx<Msg, Ghost>, d: usize, k: u8, line: Line, write: bool) {
        let excl = write || (e.mp == Mp::M && e.owner.is_none() && e.sharers & !Self::bit(k) == 0);
        if excl {
            e.owner = Some(k);
            e.sharers = 0;
        } else {
            e.sharers |= Self::bit(k);
        }
        e.busy = Busy::None;
        ctx.send(self.core_id(d, k), DOWN, Msg::Data { line, val: e.val, excl });
    }

    /// The flush's domain is clean of the line: write it back if dirty, then ack.
    /// Returns whether the entry goes (an invalidating flush that is done).
    pub(super) fn finish_flush(
        &self,
        e: &mut LLine,
        ctx: &mut Ctx<Msg, Ghost>,
        d: usize,
        k: u8,
        line: Line,
        inv: bool,
    ) -> bool {
        if e.dirty {
            e.dirty = false;
            e.busy = Busy::Wb { req: k, inv };
            ctx.send(self.home(line), MREQ, Msg::MemWr { line, val: e.val });
            false
        } else {
            e.busy = Busy::None;
            ctx.send(self.core_id(d, k), DOWN, Msg::FlushAck { line });
            inv
        }
    }

    /// Drop `line` from the L3: recall it from the domain's cores, then write it back if dirty.
    pub(super) fn evict(&self, l: &mut Llc, ctx: &mut Ctx<Msg, Ghost>, d: usize, line: Line) {
        let Some(e) = l.lines.remove(line) else { return };
        let holders = e.sharers | e.owner.map_or(0, Self::bit);
        let acks = self.inv_all(ctx, d, holders, line, false);
        if acks > 0 {
            l.pend.push(Pend { line, acks, dirty: e.dirty, val: e.val, flush_req: None, writing: false });
        } else if e.dirty {
            ctx.send(self.home(line), MREQ, Msg::MemWr { line, val: e.val });
            l.pend.push(Pend { line, acks: 0, dirty: false, val: e.val, flush_req: None, writing: true });
        }
    }

    pub(super) fn llc_message(
        &self,
        l: &mut Llc,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        let d = ctx.me as usize - self.core_count();
        let k = (from as usize).wrapping_sub(d * self.cores) as u8;
        let line = msg.line();
        let pending = l.pend.iter().position(|p| p.line == line);
        let busy = l.lines.get(line).is_some_and(|e| !Self::idle(e));
        if matches!(msg, Msg::GetS { .. } | Msg::GetM { .. } | Msg::PutM { .. } | Msg::Flush { .. })
            && (pending.is_some() || busy)
        {
            return Ok(Step::Stall);
        }
        if self.coherent
            && matches!(msg, Msg::Flush { .. } | Msg::Snoop { .. } | Msg::Grant { .. } | Msg::MemFlushAck { .. })
        {
            return self.llc_coherent(l, ctx, d, k, msg);
        }
        match msg {
            Msg::GetS { .. } | Msg::GetM { .. } => {
                let write = matches!(msg, Msg::GetM { .. });
                if l.lines.get(line).is_none() {
                    if l.lines.full(line) {
                        let Some(v) = l.lines.victim_where(line, |_, e| Self::idle(e)) else {
                            return Ok(Step::Stall);
                        };
                        self.evict(l, ctx, d, v);
                    }
                    let e = LLine {
                        sharers: 0,
                        owner: None,
                        dirty: false,
                        val: 0,
                        busy: Busy::Mem { req: k, write },
                        mp: Mp::I,
                        snoop: None,
                    };
                    l.lines.insert(line, e);
                    let rd = if self.coherent && write { Msg::MemRdX { line } } else { Msg::MemRd { line } };
                    ctx.send(self.home(line), MREQ, rd);
                    return Ok(Step::Done);
                }
                l.lines.touch(line);
                let e = l.lines.get_mut(line).expect("held");
                if write && e.mp != Mp::M {
                    // coherent: the domain holds the line shared; the home upgrades it first
                    e.busy = Busy::Mem { req: k, write };
                    ctx.send(self.home(line), MREQ, Msg::MemRdX { line });
                    return Ok(Step::Done);
                }
                self.serve(e, ctx, d, k, line, write);
            }
            Msg::PutM { val, .. } => {
                if let Some(e) = l.lines.get_mut(line) {
                    if e.owner == Some(k) {
                        e.val = val;
                        e.dirty = true;
                        e.owner = None;
                    }
                }
                ctx.send(from, DOWN, Msg::PutAck { line });
            }
            Msg::Flush { inv, data, .. } => {
                let local = self.is(Mutant::FlushCoreLocal);
                let Some(e) = l.lines.get_mut(line) else {
                    // the domain holds no copy (a dirty one went with an eviction already)
                    if self.params.broadcast_on_miss && !local {
                        ctx.delay = self.params.broadcast;
                        let others = (u64::MAX >> (64 - self.cores)) & !Self::bit(k);
                        let acks = if self.cores > 1 { self.inv_all(ctx, d, others, line, false) } else { 0 };
                        if acks > 0 {
                            l.pend.push(Pend { line, acks, dirty: false, val: 0, flush_req: Some(k), writing: false });
                        } else {
                            ctx.send(from, DOWN, Msg::FlushAck { line });
                        }
                        ctx.delay = 0;
                    } else {
                        ctx.send(from, DOWN, Msg::FlushAck { line });
                    }
                    return Ok(Step::Done);
                };
                if e.owner == Some(k) {
                    if let Some(v) = data {
                        e.val = v;
                        e.dirty = true;
                    }
                    if inv {
                        e.owner = None;
                    }
                }
                if inv {
                    e.sharers &= !Self::bit(k);
                }
                let acks = if inv && local {
                    0
                } else if inv {
                    let mask = (e.sharers | e.owner.map_or(0, Self::bit)) & !Self::bit(k);
                    self.inv_all(ctx, d, mask, line, false)
                } else {
                    match e.owner {
                        Some(o) if o != k => self.inv_all(ctx, d, Self::bit(o), line, true),
                        _ => 0,
                    }
                };
                if acks > 0 {
                    e.busy = Busy::Collect { req: k, kind: Kind::Flush { inv }, acks };
                } else if self.finish_flush(e, ctx, d, k, line, inv && !local) {
                    l.lines.remove(line);
                }
            }
            Msg::Ack { data, kept, .. } => {
                if let Some(i) = pending {
                    let p = &mut l.pend[i];
                    p.acks -= 1;
                    if let Some(v) = data {
                        p.val = v;
                        p.dirty = true;
                    }
                    if p.acks == 0 {
                        if p.dirty {
                            p.writing = true;
                            ctx.send(self.home(line), MREQ, Msg::MemWr { line, val: p.val });
                        } else {
                            if let Some(r) = p.flush_req {
                                ctx.send(self.core_id(d, r), DOWN, Msg::FlushAck { line });
                            }
                            l.pend.swap_remove(i);
                        }
                    }
                    return Ok(Step::Done);
                }
                let Some(e) = l.lines.get_mut(line) else { return Err(Violation::unexpected("no line", msg)) };
                if e.snoop.is_some() {
                    if self.snoop_ack(e, ctx, line, k, data, kept) {
                        l.lines.remove(line);
                    }
                    return Ok(Step::Done);
                }
                let Busy::Collect { req, kind, acks } = e.busy else { return Err(Violation::unexpected(e.busy, msg)) };
                e.record_ack(k, data, kept);
                if acks > 1 {
                    e.busy = Busy::Collect { req, kind, acks: acks - 1 };
                    return Ok(Step::Done);
                }
                match kind {
                    Kind::GetS => self.grant(e, ctx, d, req, line, false),
                    Kind::GetM => self.grant(e, ctx, d, req, line, true),
                    Kind::Flush { inv } => {
                        if self.finish_flush(e, ctx, d, req, line, inv) {
                            l.lines.remove(line);
                        }
                    }
                }
            }
            Msg::MemData { val, .. } => {
                let Some(e) = l.lines.get_mut(line) else { return Err(Violation::unexpected("no line", msg)) };
                let Busy::Mem { req, write } = e.busy else { return Err(Violation::unexpected(e.busy, msg)) };
                e.val = val;
                e.dirty = false;
                e.mp = Mp::M;
                self.grant(e, ctx, d, req, line, write);
            }
            Msg::MemWrAck { .. } => {
                if let Some(i) = pending {
                    if let Some(r) = l.pend[i].flush_req {
                        ctx.send(self.core_id(d, r), DOWN, Msg::FlushAck { line });
                    }
                    l.pend.swap_remove(i);
                    return Ok(Step::Done);
                }
                let Some(e) = l.lines.get_mut(line) else { return Err(Violation::unexpected("no line", msg)) };
                let Busy::Wb { req, inv } = e.busy else { return Err(Violation::unexpected(e.busy, msg)) };
                e.busy = Busy::None;
                ctx.send(self.core_id(d, req), DOWN, Msg::FlushAck { line });
                if inv && e.sharers == 0 && e.owner.is_none() {
                    l.lines.remove(line);
                }
            }
            _ => return Err(Violation::unexpected("llc", msg)),
        }
        Ok(Step::Done)
    }
}
