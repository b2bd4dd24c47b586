//! The switch directory (MIND's, with GCS's changes, §4.2): per line the
//! MSI state and sharers, the queue holder and the count of requests
//! forwarded to it — one handler per message.

use std::collections::BTreeMap;

use super::blade::Perm;
use super::messages::{Blade, Line, Msg, Queue, FWD, MEM};
use super::protocol::{Gcs, Ghost};
use super::Mutant;
use crate::agents::protocol::{AgentId, Ctx, Step, Violation};
use crate::programs::Value;

/// (Debug: `text.rs`.)
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct DEntry {
    pub state: Perm,
    /// Blades with a copy (a bit each).
    pub sharers: u16,
    /// The blade holding the line's wait queue (the writer, or the next one).
    pub holder: Option<Blade>,
    /// Requests forwarded to the holder since it took the queue.
    pub fwd: u8,
    /// Invalidation acknowledgements the holder's M still waits for.
    pub acks: u8,
    /// Blades whose S waits for the memory read out (later readers join
    /// it; a request for M waits until it returns, so no invalidation can
    /// overtake a grant).
    pub reading: u16,
}

/// (Debug: `text.rs`.)
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Dir {
    pub lines: BTreeMap<Line, DEntry>,
    /// Timing only (zero when checking).
    pub stats: DirStats,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DirStats {
    pub forwards: u64,
    pub transfers: u64,
    pub denials: u64,
    pub memory_reads: u64,
}

fn bit(b: Blade) -> u16 {
    1 << b
}

fn blades(mask: u16) -> impl Iterator<Item = Blade> {
    (0..16).filter(move |b| mask & (1 << b) != 0)
}

impl Gcs {
    /// The data a grant of `line` carries: none for a lock without combined
    /// data (pthread's lock is a word, whose page it carries).
    fn grant_data(&self, line: Line, val: Value) -> Option<Value> {
        (self.combined() || self.layered() || !self.is_lock(line)).then_some(val)
    }

    fn to_blade(&self, ctx: &mut Ctx<Msg, Ghost>, b: Blade, msg: Msg) {
        ctx.send(self.blade_agent(b), FWD, msg);
    }

    /// Invalidate every sharer but the holder, which then waits for their acks (case iii).
    fn invalidate(&self, e: &mut DEntry, ctx: &mut Ctx<Msg, Ghost>, line: Line, holder: Blade) {
        let others = e.sharers & !bit(holder);
        for o in blades(others) {
            self.to_blade(ctx, o, Msg::Inv { line });
        }
        e.acks = others.count_ones() as u8;
        if e.acks == 0 {
            self.grant_m(e, ctx, line, holder);
        }
    }

    /// The holder's M: its data comes from memory through the switch.
    fn grant_m(&self, e: &mut DEntry, ctx: &mut Ctx<Msg, Ghost>, line: Line, holder: Blade) {
        e.state = Perm::M;
        e.sharers = bit(holder);
        ctx.send(self.mem_agent(), MEM, Msg::Read { line, to: holder, write: true });
    }

    pub(super) fn dir_message(
        &self,
        d: &mut Dir,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        let line = msg.line();
        let b = from.wrapping_sub(self.thread_count() as AgentId) as Blade;
        if ctx.ops.is_some() {
            let s = &mut d.stats;
            match msg {
                Msg::Transfer { .. } => s.transfers += 1,
                Msg::MemData { .. } => s.memory_reads += 1,
                _ => {}
            }
        }
        let e = d.lines.entry(line).or_default();
        match msg {
            Msg::ReqS { .. } | Msg::ReqM { .. } => {
                let write = matches!(msg, Msg::ReqM { .. });
                match e.holder {
                    Some(h) if h == b => {
                        return Err(Violation::unexpected(format!("blade {b} holds line {line}'s queue"), msg))
                    }
                    Some(h) => {
                        e.fwd += 1;
                        if ctx.ops.is_some() {
                            d.stats.forwards += 1;
                        }
                        self.to_blade(ctx, h, Msg::Fwd { line, from: b, write });
                    }
                    None if !write => {
                        // I->S and S->S: no queue, the data from memory (one read for the readers meanwhile)
                        e.sharers |= bit(b);
                        e.state = Perm::S;
                        if e.reading == 0 {
                            ctx.send(self.mem_agent(), MEM, Msg::Read { line, to: b, write: false });
                        }
                        e.reading |= bit(b);
                    }
                    None if e.reading != 0 => return Ok(Step::Stall),
                    None => {
                        // I->M, or S->M: the requester holds the queue while the readers finish
                        // (told at once: forwarded requests may come before its grant)
                        e.holder = Some(b);
                        e.fwd = 0;
                        self.to_blade(ctx, b, Msg::Holder { line, queue: Queue::default() });
                        self.invalidate(e, ctx, line, b);
                    }
                }
            }
            Msg::PutS { .. } => {
                if e.sharers & bit(b) != 0 {
                    e.sharers &= !bit(b);
                    // its invalidation is in flight: the drop stands for the ack
                    if e.acks > 0 {
                        self.acked(e, ctx, line);
                    }
                }
                if e.sharers == 0 && e.holder.is_none() {
                    e.state = Perm::I;
                }
            }
            Msg::InvAck { .. } => {
                e.sharers &= !bit(b);
                if e.acks == 0 {
                    return Err(Violation::unexpected("no invalidation out", msg));
                }
                self.acked(e, ctx, line);
            }
            Msg::Transfer { rcv, readers, writer, rest, val, keep, .. } => {
                if e.holder != Some(b) {
                    return Err(Violation::unexpected(format!("holder {:?}", e.holder), msg));
                }
                if rcv != e.fwd && !self.is(Mutant::NoVersionCheck) {
                    // a forwarded request has not reached the holder yet: it hands off later
                    if ctx.ops.is_some() {
                        d.stats.denials += 1;
                    }
                    self.to_blade(ctx, b, Msg::Deny { line });
                } else {
                    self.transfer(e, ctx, line, b, (readers, writer, rest), val, keep);
                }
            }
            Msg::MemData { to, write, val, .. } => {
                let val = self.grant_data(line, val);
                let grant = Msg::Grant { line, write, val, queue: Queue::default() };
                if write {
                    self.to_blade(ctx, to, grant);
                } else {
                    for r in blades(std::mem::take(&mut e.reading)) {
                        self.to_blade(ctx, r, grant);
                    }
                }
            }
            _ => return Err(Violation::unexpected("switch", msg)),
        }
        if *e == DEntry::default() {
            d.lines.remove(&line);
        }
        Ok(Step::Done)
    }

    fn acked(&self, e: &mut DEntry, ctx: &mut Ctx<Msg, Ghost>, line: Line) {
        e.acks -= 1;
        if e.acks == 0 {
            let holder = e.holder.expect("acks are collected for a holder");
            self.grant_m(e, ctx, line, holder);
        }
    }

    /// An approved hand-off from blade `from`.
    #[allow(clippy::too_many_arguments)]
    fn transfer(
        &self,
        e: &mut DEntry,
        ctx: &mut Ctx<Msg, Ghost>,
        line: Line,
        from: Blade,
        (readers, writer, rest): (u16, Option<Blade>, Queue),
        val: Value,
        keep: bool,
    ) {
        e.fwd = 0;
        let data = if self.is(Mutant::GrantWithoutData) { None } else { self.grant_data(line, val) };
        self.to_blade(ctx, from, Msg::Approved { line });
        if readers == 0 {
            match writer {
                // M -> M, a lock: line, data and queue go straight to the next writer
                Some(w) if self.is_lock(line) && !self.layered() => {
                    e.holder = Some(w);
                    e.state = Perm::M;
                    e.sharers = bit(w);
                    self.to_blade(ctx, w, Msg::Grant { line, write: true, val: data, queue: rest });
                }
                // M -> M, a page (MIND's MSI; pthread's lock word is on one): the owner's page goes back to the
                // memory blade, and the next writer's comes from there
                Some(w) => {
                    e.holder = Some(w);
                    self.to_blade(ctx, w, Msg::Holder { line, queue: rest });
                    ctx.send(self.mem_agent(), MEM, Msg::Wb { line, val });
                    self.grant_m(e, ctx, line, w);
                }
                // given up: memory takes the data back
                None => {
                    *e = DEntry::default();
                    ctx.send(self.mem_agent(), MEM, Msg::Wb { line, val });
                }
            }
            return;
        }
        // M -> S: the readers at the head of the queue share the line; memory is brought up to date
        e.state = Perm::S;
        e.sharers = readers | if keep { bit(from) } else { 0 };
        ctx.send(self.mem_agent(), MEM, Msg::Wb { line, val });
        for r in blades(readers) {
            self.to_blade(ctx, r, Msg::Grant { line, write: false, val: data, queue: Queue::default() });
        }
        e.holder = writer;
        if let Some(w) = writer {
            // the next writer holds the rest of the queue and waits for the readers (case iii)
            self.to_blade(ctx, w, Msg::Holder { line, queue: rest });
            self.invalidate(e, ctx, line, w);
        }
    }
}
