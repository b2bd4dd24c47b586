//! Coherent mode (`coherent = true`): the machine the paper runs its
//! baselines on (U-RCU, stock PowerGraph: "Hardware cache coherency is
//! enabled when running U-RCU experiments, and is disabled for BI").
//!
//! A hierarchical directory. Each domain's LLC directory (protocol.rs)
//! stays the directory of its cores and becomes a client of a machine-wide
//! home directory kept at the line's global memory ([`Home`]): per line,
//! the owning domain (M: it may write, its copy may be dirty) or the
//! domains that share it (S). Blocking, one transaction per line, in the
//! style of the Primer's directory (`coherence::directory`), one level up.
//!
//! - An LLC miss asks its home for S (`MemRd`) or M (`MemRdX`); a store to
//!   a line the domain holds only S is an upgrade (`MemRdX` too). The home
//!   reads the line and its directory entry (Intel keeps the directory in
//!   DRAM with the line: one memory read), then snoops: a `GetS` downgrades
//!   the owner (`Snoop{inv: false}`), a `GetM` invalidates the owner and
//!   every sharer domain (`Snoop{inv: true}`). A snooped LLC recalls the
//!   line from its own cores (as on its own evictions: back-invalidation)
//!   and answers `SnoopAck{data}` (dirty data, or none). The home writes the
//!   data to memory and sends `Grant{val, excl}` (the data goes through the
//!   home: a cross-domain dirty hit is four hops). The LLC answers
//!   `MemDone`, and only then does the home take the line's next request,
//!   so a snoop never overtakes the grant it follows.
//! - A `GetS` with no other holder is granted M (exclusive, clean), as
//!   MESI's E; the domain may then write without asking.
//! - Evictions: a dirty L3 victim is written back (`MemWr`); the home
//!   takes it only from the owner (then the line has none) and ignores it
//!   from a domain that lost the line to a snoop meanwhile (the snoop's
//!   answer carried the data). A clean victim leaves **silently**: the home
//!   tolerates stale sharers and a stale owner. A snoop to a domain that
//!   holds nothing is answered at once with no data (the memory is then
//!   current: only a clean line leaves silently), and a request from a
//!   domain the home still records as owner clears the record. This costs
//!   a needless snoop now and then, and saves an eviction message, its ack
//!   and the race of a notice with the domain's next request.
//! - Flushes (clflush, clflushopt, clwb) act on the whole machine, the
//!   coherence domain of x86 semantics now: the issuing LLC takes the
//!   issuer's dirty data and sends `MemFlush{inv}` to the home, which
//!   snoops every domain holding the line (the issuer's too): to invalidate
//!   (clflush, clflushopt) or to downgrade the owner (clwb: the dirty line
//!   is written back and every copy stays, shared and clean). The home
//!   writes the data and answers `MemFlushAck`; the LLC then acks its core.
//!   The home knows the holders, so nothing is broadcast
//!   (`broadcast_on_miss` does not apply).
//!
//! Races. A snoop reaching an LLC busy with its own transaction on the line
//! waits only when that transaction completes without the home: a recall
//! from its cores (`Collect`, an eviction's recall), or a write-back the
//! home acks at once (`MemWr` never waits at the home). It is served at
//! once when the LLC waits for the home: an upgrade (the domain's S copies
//! go; the grant brings the data), a miss (nothing to give), a flush at the
//! home, an eviction's write-back in flight (its data answers). Channels:
//! the domain's `req`/`down`/`resp`, then `mem_req` (LLC to home requests;
//! a request waits while its line is busy at the home, a write-back never
//! does), `mem_resp` (grants and acks), `snoop` (home to LLC) and
//! `home_resp` (snoop acks and `MemDone`, which the home always takes), so
//! an answer the home waits for is never behind a request that waits for
//! it. The checker finds no deadlock (docs/design/bi.md §7).

use std::collections::BTreeMap;

use super::protocol::{Bi, Busy, Ghost, LLine, Line, Llc, Mp, Msg, Node, Val, GHOST_LINES, HRESP, MREQ, MRESP, SNOOP};
use super::Mutant;
use crate::agents::protocol::{AgentId, Ctx, Step, Violation};

/// What the home does for a domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HKind {
    GetS,
    GetM,
    Flush { inv: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HBusy {
    None,
    /// Waiting for `acks` snoop acks, then finishing `kind` for domain
    /// `req`; `data`: the dirty data a snoop returned.
    Snoop {
        req: u8,
        kind: HKind,
        acks: u8,
        data: Option<Val>,
    },
    /// Granted to domain `req`: waiting for its `MemDone`.
    Grant {
        req: u8,
    },
}

/// The home directory's entry of a line (Debug: `text.rs`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HLine {
    /// The domain with M permission (possibly stale: see the module doc).
    pub owner: Option<u8>,
    /// Domains with S permission (possibly stale).
    pub sharers: u64,
    pub busy: HBusy,
}

impl HLine {
    pub(super) const FREE: HLine = HLine { owner: None, sharers: 0, busy: HBusy::None };
}

/// A global memory with its home directory (Debug: `text.rs`).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Home {
    /// The values written to it (kept when checking).
    pub mem: BTreeMap<Line, Val>,
    pub dir: BTreeMap<Line, HLine>,
}

impl Home {
    pub fn busy(&self) -> bool {
        self.dir.values().any(|h| h.busy != HBusy::None)
    }
}

impl HKind {
    /// Whether its snoops invalidate (else they downgrade the owner).
    fn inv(self) -> bool {
        !matches!(self, HKind::GetS | HKind::Flush { inv: false })
    }
}

impl Bi {
    fn dbit(d: u8) -> u64 {
        1u64 << d
    }

    // ------------------------------------------------------------ home

    pub(super) fn home_message(
        &self,
        h: &mut Home,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        let d = (from as usize).wrapping_sub(self.core_count()) as u8;
        let line = msg.line();
        let mut e = h.dir.get(&line).copied().unwrap_or(HLine::FREE);
        match msg {
            Msg::MemRd { .. } | Msg::MemRdX { .. } | Msg::MemFlush { .. } => {
                if e.busy != HBusy::None {
                    return Ok(Step::Stall);
                }
                let kind = match msg {
                    Msg::MemRd { .. } => HKind::GetS,
                    Msg::MemRdX { .. } => HKind::GetM,
                    Msg::MemFlush { inv, .. } => HKind::Flush { inv },
                    _ => unreachable!(),
                };
                if e.owner == Some(d) && matches!(kind, HKind::GetS | HKind::GetM) {
                    // the domain asks again: its exclusive copy left silently (clean)
                    e.owner = None;
                }
                let owner = e.owner.map_or(0, Self::dbit);
                let targets = match kind {
                    HKind::Flush { .. } if self.mutant == Some(Mutant::FlushBroadcast) => {
                        u64::MAX >> (64 - self.domains)
                    }
                    HKind::GetS => owner & !Self::dbit(d),
                    HKind::GetM if self.mutant == Some(Mutant::HomeForgetsSharer) => owner & !Self::dbit(d),
                    HKind::GetM => (owner | e.sharers) & !Self::dbit(d),
                    HKind::Flush { inv: true } => owner | e.sharers,
                    HKind::Flush { inv: false } => owner,
                };
                let mut acks = 0;
                let mut mask = targets;
                while mask != 0 {
                    let t = mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    ctx.send(self.llc_agent(t), SNOOP, Msg::Snoop { line, inv: kind.inv() });
                    acks += 1;
                }
                if acks > 0 {
                    e.busy = HBusy::Snoop { req: d, kind, acks, data: None };
                } else {
                    self.home_finish(h, &mut e, ctx, line, d, kind, None);
                }
            }
            Msg::SnoopAck { data, .. } => {
                let HBusy::Snoop { req, kind, acks, data: got } = e.busy else {
                    return Err(Violation::unexpected(e.busy, msg));
                };
                if let Some(v) = data {
                    if self.keeps_values() {
                        h.mem.insert(line, v);
                    }
                }
                if kind.inv() {
                    e.sharers &= !Self::dbit(d);
                    if e.owner == Some(d) {
                        e.owner = None;
                    }
                } else if e.owner == Some(d) {
                    e.owner = None;
                    e.sharers |= Self::dbit(d);
                }
                let data = data.or(got);
                if acks > 1 {
                    e.busy = HBusy::Snoop { req, kind, acks: acks - 1, data };
                } else {
                    self.home_finish(h, &mut e, ctx, line, req, kind, data);
                }
            }
            Msg::MemDone { .. } => {
                if e.busy != (HBusy::Grant { req: d }) {
                    return Err(Violation::unexpected(e.busy, msg));
                }
                e.busy = HBusy::None;
            }
            Msg::MemWr { val, .. } => {
                // never waits: a snooped domain may be waiting for this ack
                if e.owner == Some(d) {
                    if self.keeps_values() {
                        h.mem.insert(line, val);
                    }
                    e.owner = None;
                }
                ctx.send(from, MRESP, Msg::MemWrAck { line });
            }
            _ => return Err(Violation::unexpected("home", msg)),
        }
        if e == HLine::FREE {
            h.dir.remove(&line);
        } else {
            h.dir.insert(line, e);
        }
        Ok(Step::Done)
    }

    /// Every snoop answered: grant the line to domain `d`, or ack its flush.
    #[allow(clippy::too_many_arguments)]
    fn home_finish(
        &self,
        h: &Home,
        e: &mut HLine,
        ctx: &mut Ctx<Msg, Ghost>,
        line: Line,
        d: u8,
        kind: HKind,
        data: Option<Val>,
    ) {
        let to = self.llc_agent(d as usize);
        let excl = match kind {
            HKind::Flush { .. } => {
                e.busy = HBusy::None;
                if data.is_some() {
                    // the dirty line is written back before the flush completes
                    ctx.delay = self.params.memory_write;
                }
                ctx.send(to, MRESP, Msg::MemFlushAck { line });
                ctx.delay = 0;
                return;
            }
            HKind::GetS => e.owner.is_none() && e.sharers & !Self::dbit(d) == 0,
            HKind::GetM => true,
        };
        if excl {
            e.owner = Some(d);
            e.sharers = 0;
        } else {
            e.sharers |= Self::dbit(d);
        }
        let val = data.unwrap_or_else(|| h.mem.get(&line).copied().unwrap_or(0));
        e.busy = HBusy::Grant { req: d };
        ctx.send(to, MRESP, Msg::Grant { line, val, excl });
    }

    // ------------------------------------------------------------ LLC

    /// The LLC's messages that only the coherent mode has, and its flushes
    /// (a request already waited while its line was busy).
    pub(super) fn llc_coherent(
        &self,
        l: &mut Llc,
        ctx: &mut Ctx<Msg, Ghost>,
        d: usize,
        k: u8,
        msg: Msg,
    ) -> Result<Step, Violation> {
        let line = msg.line();
        let home = self.home(line);
        let pending = l.pend.iter().position(|p| p.line == line);
        match msg {
            Msg::Flush { inv, data, .. } => {
                match l.lines.get_mut(line) {
                    Some(e) => {
                        // An owner's flush without data: its clean E copy left silently,
                        // or its dirty copy is in a PutM this flush overtook. It stays the
                        // owner, so that the home's snoop recalls the data from its
                        // write-back buffer (the PutM waits while the line is busy).
                        if let (Some(v), true) = (data, e.owner == Some(k)) {
                            e.val = v;
                            e.dirty = true;
                            if inv {
                                e.owner = None;
                            }
                        }
                        if inv {
                            e.sharers &= !Self::bit(k);
                        }
                        e.busy = Busy::Home { req: k };
                    }
                    // waiting for the home: no recall, no write-back
                    None => l.pend.push(super::protocol::Pend {
                        line,
                        acks: 0,
                        dirty: false,
                        val: 0,
                        flush_req: Some(k),
                        writing: false,
                    }),
                }
                ctx.send(home, MREQ, Msg::MemFlush { line, inv });
            }
            Msg::MemFlushAck { .. } => {
                if let Some(i) = pending {
                    let Some(r) = l.pend[i].flush_req else { return Err(Violation::unexpected(l.pend[i], msg)) };
                    ctx.send(self.core_id(d, r), super::protocol::DOWN, Msg::FlushAck { line });
                    l.pend.swap_remove(i);
                    return Ok(Step::Done);
                }
                let Some(e) = l.lines.get_mut(line) else { return Err(Violation::unexpected("no line", msg)) };
                let Busy::Home { req } = e.busy else { return Err(Violation::unexpected(e.busy, msg)) };
                e.busy = Busy::None;
                ctx.send(self.core_id(d, req), super::protocol::DOWN, Msg::FlushAck { line });
                if e.mp == Mp::I && e.snoop.is_none() {
                    l.lines.remove(line);
                }
            }
            Msg::Snoop { inv, .. } => {
                if let Some(i) = pending {
                    let p = l.pend[i];
                    if p.acks > 0 {
                        // an eviction recalling the line from the cores: they answer
                        return Ok(Step::Stall);
                    }
                    // an eviction's write-back in flight carries the data; a flush at the home has none
                    let data = p.writing.then_some(p.val);
                    ctx.send(home, HRESP, Msg::SnoopAck { line, data });
                    return Ok(Step::Done);
                }
                let Some(e) = l.lines.get_mut(line) else {
                    ctx.send(home, HRESP, Msg::SnoopAck { line, data: None });
                    return Ok(Step::Done);
                };
                if matches!(e.busy, Busy::Collect { .. } | Busy::Wb { .. }) {
                    return Ok(Step::Stall);
                }
                if e.snoop.is_some() {
                    return Err(Violation::unexpected(e.snoop, msg));
                }
                if e.mp == Mp::I {
                    // a miss in flight, or a line a snoop took already
                    ctx.send(home, HRESP, Msg::SnoopAck { line, data: None });
                    return Ok(Step::Done);
                }
                let acks = if inv {
                    let holders = e.sharers | e.owner.map_or(0, Self::bit);
                    self.inv_all(ctx, d, holders, line, false)
                } else {
                    match e.owner {
                        Some(o) => self.inv_all(ctx, d, Self::bit(o), line, true),
                        None => 0,
                    }
                };
                if acks > 0 {
                    e.snoop = Some(super::protocol::Snp { acks, inv });
                } else if self.snoop_done(e, ctx, line, inv) {
                    l.lines.remove(line);
                }
            }
            Msg::Grant { val, excl, .. } => {
                let Some(e) = l.lines.get_mut(line) else { return Err(Violation::unexpected("no line", msg)) };
                let Busy::Mem { req, write } = e.busy else { return Err(Violation::unexpected(e.busy, msg)) };
                if write && !excl {
                    return Err(Violation { kind: "GetM granted S", detail: format!("{msg:?}") });
                }
                e.val = val;
                e.dirty = false;
                e.mp = if excl { Mp::M } else { Mp::S };
                e.busy = Busy::None;
                ctx.send(home, HRESP, Msg::MemDone { line });
                self.serve(e, ctx, d, req, line, write);
            }
            _ => return Err(Violation::unexpected("llc", msg)),
        }
        Ok(Step::Done)
    }

    /// A core's ack to a snoop's recall; whether the line goes.
    pub(super) fn snoop_ack(
        &self,
        e: &mut LLine,
        ctx: &mut Ctx<Msg, Ghost>,
        line: Line,
        k: u8,
        data: Option<Val>,
        kept: bool,
    ) -> bool {
        e.record_ack(k, data, kept);
        let Some(s) = &mut e.snoop else { return false };
        s.acks -= 1;
        if s.acks > 0 {
            return false;
        }
        let inv = s.inv;
        e.snoop = None;
        self.snoop_done(e, ctx, line, inv)
    }

    /// The domain's cores answered: answer the home; whether the line goes.
    fn snoop_done(&self, e: &mut LLine, ctx: &mut Ctx<Msg, Ghost>, line: Line, inv: bool) -> bool {
        let data = e.dirty.then_some(e.val);
        ctx.send(self.home(line), HRESP, Msg::SnoopAck { line, data });
        e.dirty = false;
        if inv {
            e.sharers = 0;
            e.owner = None;
            e.mp = Mp::I;
            e.busy == Busy::None
        } else {
            if e.mp == Mp::M {
                e.mp = Mp::S;
            }
            false
        }
    }

    // ------------------------------------------------------------ checking

    /// Machine-wide: at most one core with E or M, and then no other with
    /// S, in any domain; every core's copy holds the last value written.
    pub(super) fn coherent_swmr(&self, agents: &[Node], ghost: &Ghost) -> Result<(), (String, String)> {
        let mut seen: BTreeMap<Line, (u32, u32)> = BTreeMap::new();
        for (i, a) in agents[..self.core_count()].iter().enumerate() {
            let Node::Core(c) = a else { continue };
            for (line, pl) in c.l2.held() {
                let e = seen.entry(line).or_default();
                if pl.st == super::protocol::P::S {
                    e.0 += 1;
                } else {
                    e.1 += 1;
                }
                if self.shapes.is_none() && (line as usize) < GHOST_LINES && pl.val != ghost.last[line as usize] {
                    return Err((
                        "stale".into(),
                        format!(
                            "{}, line {line}: holds {} ({:?}), the last value written is {}",
                            self.agent_name_of(i),
                            pl.val,
                            pl.st,
                            ghost.last[line as usize]
                        ),
                    ));
                }
            }
        }
        for (line, (r, w)) in seen {
            if w > 1 || (w == 1 && r > 0) {
                return Err((
                    "swmr".into(),
                    format!("line {line}: {w} cores of the machine hold it E/M and {r} hold it S"),
                ));
            }
        }
        Ok(())
    }

    fn agent_name_of(&self, i: usize) -> String {
        format!("core{}.{}", i / self.cores, i % self.cores)
    }
}
