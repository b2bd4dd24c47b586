//! The root complex: its RLSQ (seed 003, §5.1), one handler per message,
//! and the rule that decides which entries read and which complete; and
//! its MMIO reorder buffer (§5.2).
//!
//! The root complex is a requester of the host's MESI directory (`host.rs`):
//! an entry reads with `GetS` (the directory never grants it Exclusive) and
//! writes with `GetM` then `PutM`. It is a sharer of a line from its read
//! until the directory invalidates it: it keeps no data once the entry
//! completes (a later read asks the directory again), and an `Inv` that
//! finds no entry of the line is simply acknowledged — the directory's
//! sharer set over-approximates the RLSQ's lines, as a directory whose
//! caches drop clean lines silently. An `Inv` squashes the entries of the
//! line that hold data (only RC-opt keeps data while waiting).

use smallvec::SmallVec;

use super::messages::{Loc, Msg, Tag, COH, CPL, POSTED, RELAXED};
use super::protocol::{Ghost, Pcie};
use super::rob::{Held, Rob};
use super::{Mmio, Mutant, Variant};
use crate::agents::coherence::directory::{self, REQ, RESP};
use crate::agents::protocol::{AgentId, Ctx, Step, Violation};
use crate::programs::Value;

/// Where an RLSQ entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum St {
    /// Not issued yet.
    #[default]
    Waiting,
    /// A read's `GetS` is out.
    Reading,
    /// Its data arrived; not completed to the QP yet.
    Data(Value),
    /// Data kept after the root complex acknowledged an `Inv` for its line
    /// (the no-squash mutant only): no longer a coherent copy.
    Stale(Value),
    /// A write's `GetM` is out: whether its `Data` arrived, the acks it
    /// needs (known from the `Data`) and the `InvAck`s that arrived.
    Owning { data: bool, need: u8, got: u8 },
    /// A write owns its line (M; the directory waits for its `Unblock`):
    /// it commits when the ordering rules let it.
    Owned,
    /// Committed: its value is the line's (`Unblock` and `PutM` sent); it
    /// answers a forwarded request with it until the `PutAck`.
    Committed,
}

impl St {
    /// A request of the entry's is with the directory (one per line at a time).
    fn outstanding(self) -> bool {
        matches!(self, St::Reading | St::Owning { .. } | St::Owned | St::Committed)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Entry {
    pub qp: AgentId,
    pub tag: Tag,
    pub loc: Loc,
    pub acq: bool,
    /// A DMA write: its value and release bit (`Reading` then means its
    /// `Wr` is out).
    pub wr: Option<(Value, bool)>,
    pub st: St,
}

/// Timing statistics (kept at zero when checking).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RcStats {
    pub squashes: u64,
    pub rlsq_high: u32,
    /// Invalidations the directory sent the root complex.
    pub invs: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Rc {
    /// The RLSQ, in arrival order.
    pub rlsq: SmallVec<[Entry; 4]>,
    pub stats: RcStats,
    /// MMIO `rob`: the reorder buffer.
    pub rob: Rob,
}

impl Pcie {
    pub(super) fn rc_message(
        &self,
        rc: &mut Rc,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        match msg {
            Msg::MemRd { .. } | Msg::Fwd { .. } => {
                let (qp, tag, loc, acq) = match msg {
                    Msg::Fwd { qp, tag, loc, acq } => (qp, tag, loc, acq),
                    Msg::MemRd { tag, loc, acq } => (from, tag, loc, acq),
                    _ => unreachable!("matched above"),
                };
                if rc.rlsq.len() >= self.rlsq_entries {
                    return Ok(Step::Stall);
                }
                rc.rlsq.push(Entry { qp, tag, loc, acq, wr: None, st: St::Waiting });
                if self.driven {
                    rc.stats.rlsq_high = rc.stats.rlsq_high.max(rc.rlsq.len() as u32);
                }
            }
            Msg::MemWr { tag, loc, val, rel } => {
                if rc.rlsq.len() >= self.rlsq_entries {
                    return Ok(Step::Stall);
                }
                rc.rlsq.push(Entry { qp: from, tag, loc, acq: false, wr: Some((val, rel)), st: St::Waiting });
            }
            Msg::Coh(m) => self.rc_coherence(rc, ctx, m)?,
            Msg::MmioWr { seq, rel, loc, val } => {
                return Ok(self.rc_mmio(rc, ctx, Held { core: from, seq, rel, loc, val }));
            }
            _ => return Err(Violation::unexpected("root complex", msg)),
        }
        self.pump(rc, ctx);
        Ok(Step::Done)
    }

    /// An MMIO write arrives: posted to the device now (`fence`,
    /// `unordered`) or when every earlier write of its core was (`rob`);
    /// the core hears back when it leaves (an `sfence` waits for that, and
    /// it returns a ROB credit). A full ROB refuses writes, even the one
    /// it waits for: the core's credits keep that from happening.
    fn rc_mmio(&self, rc: &mut Rc, ctx: &mut Ctx<Msg, Ghost>, w: Held) -> Step {
        let dev = self.dev_agent();
        let post = |ctx: &mut Ctx<Msg, Ghost>, w: Held, vc: u8, ack: bool| {
            ctx.send(dev, vc, Msg::DevWr { core: w.core, seq: w.seq, rel: w.rel, loc: w.loc, val: w.val });
            if ack {
                ctx.send(w.core, CPL, Msg::MmioAck { rel: w.rel });
            }
        };
        match self.mmio {
            Some(Mmio::Rob) if !self.is(Mutant::RobOnArrival) => {
                if !rc.rob.accept(w, self.rob_entries, |h| post(ctx, h, POSTED, true)) {
                    return Step::Stall;
                }
            }
            // the NIC's ROB orders and answers
            Some(Mmio::RobNic) => post(ctx, w, RELAXED, false),
            mode => post(ctx, w, POSTED, mode != Some(Mmio::Unordered)),
        }
        Step::Done
    }

    /// The host directory's answers and requests.
    fn rc_coherence(&self, rc: &mut Rc, ctx: &mut Ctx<Msg, Ghost>, m: directory::Msg) -> Result<(), Violation> {
        use directory::Msg as D;
        let home = self.mem_agent();
        // the entry whose request is with the directory for `loc` (one per line)
        let out = |rc: &mut Rc, loc: Loc| rc.rlsq.iter().position(|e| e.loc == loc && e.st.outstanding());
        match m {
            D::Data { loc, data, acks, .. } => {
                let i = out(rc, loc).ok_or_else(|| Violation::unexpected("no RLSQ entry reading", m))?;
                let e = &mut rc.rlsq[i];
                match e.st {
                    St::Reading => {
                        e.st = St::Data(data);
                        ctx.send(home, COH + RESP, D::Unblock { loc }.into());
                    }
                    St::Owning { data: false, got, .. } => {
                        e.st = if got == acks { St::Owned } else { St::Owning { data: true, need: acks, got } }
                    }
                    _ => return Err(Violation::unexpected("an RLSQ entry not waiting for data", m)),
                }
            }
            D::InvAck { loc } => {
                let i = out(rc, loc).ok_or_else(|| Violation::unexpected("no RLSQ entry writing", m))?;
                let e = &mut rc.rlsq[i];
                let St::Owning { data, need, got } = e.st else {
                    return Err(Violation::unexpected("an RLSQ entry not collecting acks", m));
                };
                e.st = if data && got + 1 == need { St::Owned } else { St::Owning { data, need, got: got + 1 } };
            }
            D::Inv { loc, req } => {
                // the RLSQ as a sharer (§5.1): a host write squashes the reads of the line holding data
                let squashed = self.squash(rc, loc);
                if self.driven {
                    rc.stats.invs += 1;
                    rc.stats.squashes += squashed;
                }
                ctx.send(req, COH + RESP, D::InvAck { loc }.into());
            }
            D::FwdGetS { loc, req } | D::FwdGetM { loc, req } => {
                // only a committed write is ever the line's owner at the directory
                let e = rc
                    .rlsq
                    .iter()
                    .find(|e| e.loc == loc && e.st == St::Committed)
                    .ok_or_else(|| Violation::unexpected("no committed RLSQ write", m))?;
                let val = e.wr.map_or(0, |w| w.0);
                ctx.send(req, COH + RESP, D::Data { loc, data: val, acks: 0, excl: false }.into());
                if matches!(m, D::FwdGetS { .. }) {
                    ctx.send(home, COH + RESP, D::CopyBack { loc, data: val }.into());
                }
            }
            D::PutAck { loc } => {
                let i = rc
                    .rlsq
                    .iter()
                    .position(|e| e.loc == loc && e.st == St::Committed)
                    .ok_or_else(|| Violation::unexpected("no committed RLSQ write", m))?;
                rc.rlsq.remove(i);
            }
            _ => return Err(Violation::unexpected("root complex", m)),
        }
        Ok(())
    }

    /// The root complex stops being a sharer of `loc`: the reads of it that
    /// hold data read again (the no-squash mutant keeps their stale data).
    fn squash(&self, rc: &mut Rc, loc: Loc) -> u64 {
        let mut squashed = 0;
        for e in rc.rlsq.iter_mut().filter(|e| e.loc == loc && e.wr.is_none()) {
            if let St::Data(v) = e.st {
                e.st = if self.is(Mutant::NoSquash) { St::Stale(v) } else { St::Waiting };
                squashed += !self.is(Mutant::NoSquash) as u64;
            }
        }
        squashed
    }

    /// May entry `i` send its request to the directory? One request per
    /// line at a time, and a line's writes in RLSQ order.
    fn line_free(rlsq: &[Entry], i: usize) -> bool {
        let loc = rlsq[i].loc;
        !rlsq
            .iter()
            .enumerate()
            .any(|(j, e)| j != i && e.loc == loc && (e.st.outstanding() || (j < i && e.wr.is_some())))
    }

    /// Perform what may be performed and complete what may complete, in
    /// RLSQ order (§5.1):
    /// - an entry sends its request to the directory only when no other
    ///   entry of its line has one out, and a line's writes go in order;
    /// - a read waits for an earlier acquire (`rc`: anyone's, `thread`: its
    ///   QP's) and for its QP's earlier writes to be performed (W→R, kept by
    ///   PCIe): committed, the root complex owning the line with the value;
    /// - a write asks for ownership (`GetM`) at once under today's PCIe
    ///   (`unordered`, `nic`) and commits (`Unblock`, `PutM`) in order among
    ///   writes (W→W: ownership in parallel, data in order, as §5.1's
    ///   baseline RLSQ); under the RLSQ a plain write asks at once, after an
    ///   earlier acquire (writes are not speculated), and a release only
    ///   when every earlier request (`thread`: of its QP) has left the RLSQ;
    ///   both commit once they own the line. A committed write leaves at
    ///   the directory's `PutAck`.
    fn pump(&self, rc: &mut Rc, ctx: &mut Ctx<Msg, Ghost>) {
        use directory::Msg as D;
        let home = self.mem_agent();
        let today = matches!(self.variant, Variant::Unordered | Variant::Nic);
        // the QPs (thread IDs) with an earlier acquire or write still in the RLSQ
        let mut acq_of: SmallVec<[AgentId; 4]> = SmallVec::new();
        let mut wr_of: SmallVec<[AgentId; 4]> = SmallVec::new();
        // an earlier write not committed yet (today's W→W: writes commit in order)
        let mut uncommitted = false;
        let mut i = 0;
        while i < rc.rlsq.len() {
            let e = rc.rlsq[i];
            let by_acquire = !self.is(Mutant::AcquireNoBlock)
                && match self.variant {
                    Variant::Rc => !acq_of.is_empty(),
                    Variant::Thread => acq_of.contains(&e.qp),
                    _ => false,
                };
            let mark = |list: &mut SmallVec<[AgentId; 4]>| {
                if !list.contains(&e.qp) {
                    list.push(e.qp);
                }
            };
            if let Some((val, rel)) = e.wr {
                if e.st == St::Waiting {
                    let after_acquire = self.variant == Variant::RcOpt && !acq_of.is_empty();
                    let before = match self.variant {
                        Variant::Thread => rc.rlsq[..i].iter().any(|x| x.qp == e.qp),
                        _ => i > 0,
                    };
                    let release = rel && before && !self.is(Mutant::ReleaseNoWait);
                    // the ownership request goes as soon as the write may be performed
                    if (today || !(by_acquire || after_acquire || release)) && Self::line_free(&rc.rlsq, i) {
                        rc.rlsq[i].st = St::Owning { data: false, need: 0, got: 0 };
                        ctx.send(home, COH + REQ, D::GetM { loc: e.loc }.into());
                    }
                }
                // performed: today in RLSQ order among writes, under the RLSQ once owned
                if rc.rlsq[i].st == St::Owned && !(today && uncommitted) {
                    rc.rlsq[i].st = St::Committed;
                    if let Some(x) = ctx.ghost.coh.last.get_mut(e.loc as usize) {
                        *x = val;
                    }
                    ctx.send(home, COH + RESP, D::Unblock { loc: e.loc }.into());
                    ctx.send(home, COH + REQ, D::PutM { loc: e.loc, data: val }.into());
                    // the root complex gives the line up: its reads of it holding data are no longer covered
                    let squashed = self.squash(rc, e.loc);
                    if self.driven {
                        rc.stats.squashes += squashed;
                    }
                }
                // a committed write is performed (its value is the line's): later reads of other lines may go
                if rc.rlsq[i].st != St::Committed {
                    uncommitted = true;
                    mark(&mut wr_of);
                }
                i += 1;
                continue;
            }
            let after_write = wr_of.contains(&e.qp) && !self.is(Mutant::ReadPassesWrite);
            if e.st == St::Waiting && !by_acquire && !after_write && Self::line_free(&rc.rlsq, i) {
                rc.rlsq[i].st = St::Reading;
                ctx.send(home, COH + REQ, D::GetS { loc: e.loc }.into());
            }
            if let St::Data(val) | St::Stale(val) = rc.rlsq[i].st {
                if self.variant != Variant::RcOpt || acq_of.is_empty() {
                    rc.rlsq.remove(i);
                    ctx.send(e.qp, CPL, Msg::Cpl { tag: e.tag, val });
                    continue;
                }
            }
            if e.acq && self.variant != Variant::Unordered && !acq_of.contains(&e.qp) {
                acq_of.push(e.qp);
            }
            i += 1;
        }
    }
}
