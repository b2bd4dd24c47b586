//! The root complex: its RLSQ (seed 003, §5.1), one handler per message,
//! and the rule that decides which entries read and which complete; and
//! its MMIO reorder buffer (§5.2).

use smallvec::SmallVec;

use super::messages::{Loc, Msg, Tag, CPL, POSTED, RD, RELAXED, WR};
use super::protocol::{Ghost, Pcie};
use super::rob::{Held, Rob};
use super::{Mmio, Mutant, Variant};
use crate::agents::protocol::{AgentId, Ctx, Step, Violation};
use crate::workloads::program::Value;

/// Where an RLSQ entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum St {
    /// Not read yet.
    #[default]
    Waiting,
    /// Its `Rd` is out.
    Reading,
    /// Its data arrived; not completed to the QP yet.
    Data(Value),
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
            Msg::WrAck { qp, tag } => {
                let i = rc
                    .rlsq
                    .iter()
                    .position(|e| e.qp == qp && e.tag == tag && e.wr.is_some() && e.st == St::Reading)
                    .ok_or_else(|| Violation::unexpected("no entry writing", msg))?;
                rc.rlsq.remove(i);
            }
            Msg::Data { qp, tag, val } => {
                let e = rc
                    .rlsq
                    .iter_mut()
                    .find(|e| e.qp == qp && e.tag == tag && e.st == St::Reading)
                    .ok_or_else(|| Violation::unexpected("no entry reading", msg))?;
                e.st = St::Data(val);
            }
            Msg::Inv { loc } => {
                if !self.is(Mutant::NoSquash) {
                    let mut squashed = 0;
                    for e in rc.rlsq.iter_mut().filter(|e| e.loc == loc && matches!(e.st, St::Data(_))) {
                        e.st = St::Waiting;
                        squashed += 1;
                    }
                    if self.driven {
                        rc.stats.squashes += squashed;
                    }
                }
            }
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

    /// Perform what may be performed and complete what may complete, in
    /// RLSQ order (§5.1):
    /// - a read waits for an earlier acquire (`rc`: anyone's, `thread`: its
    ///   QP's) and for its QP's earlier writes (W→R, kept by PCIe);
    /// - a write under today's PCIe (`unordered`, `nic`) goes at once, in
    ///   order (W→W); under the RLSQ a plain write goes at once in any
    ///   order, after an earlier acquire (writes are not speculated), and a
    ///   release write only when every earlier request (`thread`: of its QP)
    ///   has left the RLSQ.
    fn pump(&self, rc: &mut Rc, ctx: &mut Ctx<Msg, Ghost>) {
        let mem = self.mem_agent();
        let today = matches!(self.variant, Variant::Unordered | Variant::Nic);
        // the QPs (thread IDs) with an earlier acquire or write still in the RLSQ
        let mut acq_of: SmallVec<[AgentId; 4]> = SmallVec::new();
        let mut wr_of: SmallVec<[AgentId; 4]> = SmallVec::new();
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
                    if today || !(by_acquire || after_acquire || release) {
                        rc.rlsq[i].st = St::Reading;
                        let vc = if today { WR } else { RD };
                        ctx.send(mem, vc, Msg::Wr { qp: e.qp, tag: e.tag, loc: e.loc, val });
                    }
                }
                mark(&mut wr_of);
                i += 1;
                continue;
            }
            let after_write = wr_of.contains(&e.qp) && !self.is(Mutant::ReadPassesWrite);
            if e.st == St::Waiting && !by_acquire && !after_write {
                rc.rlsq[i].st = St::Reading;
                ctx.send(mem, RD, Msg::Rd { qp: e.qp, tag: e.tag, loc: e.loc });
            }
            if let St::Data(val) = rc.rlsq[i].st {
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
