//! The root complex and its RLSQ (seed 003, §5.1): one handler per
//! message, and the rule that decides which entries read and which
//! complete.

use smallvec::SmallVec;

use super::messages::{Loc, Msg, Tag, CPL, RD};
use super::protocol::{Ghost, Pcie};
use super::{Mutant, Variant};
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
            Msg::MemRd { tag, loc, acq } => {
                if rc.rlsq.len() >= self.rlsq_entries {
                    return Ok(Step::Stall);
                }
                rc.rlsq.push(Entry { qp: from, tag, loc, acq, st: St::Waiting });
                if self.driven {
                    rc.stats.rlsq_high = rc.stats.rlsq_high.max(rc.rlsq.len() as u32);
                }
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
            _ => return Err(Violation::unexpected("root complex", msg)),
        }
        self.pump(rc, ctx);
        Ok(Step::Done)
    }

    /// Read what may read and complete what may complete, in RLSQ order.
    fn pump(&self, rc: &mut Rc, ctx: &mut Ctx<Msg, Ghost>) {
        let mem = self.mem_agent();
        // the QPs (thread IDs) with an earlier acquire still in the RLSQ (read or not)
        let mut acq_of: SmallVec<[AgentId; 4]> = SmallVec::new();
        let mut i = 0;
        while i < rc.rlsq.len() {
            let e = rc.rlsq[i];
            let held = match self.variant {
                Variant::Rc => !acq_of.is_empty(),
                Variant::Thread => acq_of.contains(&e.qp),
                _ => false,
            };
            let hold_read = held && !self.is(Mutant::AcquireNoBlock);
            if e.st == St::Waiting && !hold_read {
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
