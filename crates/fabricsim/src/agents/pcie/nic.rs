//! The cores without a cache: a NIC's queue pair (DMA reads and writes
//! through the root complex) or, in MMIO mode, a host core whose stores are
//! MMIO writes to the NIC's device. (A coherent host core is a
//! `directory` cache: `host.rs`.)

use smallvec::SmallVec;

use super::messages::{Loc, Msg, Seq, Tag, NONPOSTED, WC};
use super::protocol::{Ghost, Kind, Pcie};
use super::{Mmio, Mutant, Variant};
use crate::agents::coherence::core::MAX_REGS;
use crate::agents::protocol::{Ctx, OpKind, Violation};
use crate::programs::{Op, Value};

/// An MMIO write in a write-combining buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct WcLine {
    pub seq: Seq,
    pub rel: bool,
    pub loc: Loc,
    pub val: Value,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Thread {
    /// Program: the next operation.
    pub pc: u8,
    pub regs: [Value; MAX_REGS],
    /// Reads in flight, with their acquire bits.
    pub out: SmallVec<[(Tag, bool); 4]>,
    /// Workload: the next read's tag.
    pub next_tag: Tag,
    /// MMIO: write-combining lines not flushed yet (checking; a timed core
    /// flushes each line at once, in order), the next sequence number, and
    /// the writes the root complex has not answered.
    pub wc: SmallVec<[WcLine; 2]>,
    pub seq: Seq,
    pub unacked: u16,
    /// Of those, releases (the ROB's second virtual network).
    pub unacked_rel: u16,
    /// P2P: reads the switch refused, in order; while any is left the queue
    /// pair sends nothing new.
    pub refused: SmallVec<[(Tag, (Loc, bool)); 1]>,
    /// Timing: fetch-and-adds whose read is out; the NIC writes the line
    /// back when it completes (an RDMA atomic executed by the NIC).
    pub faa: SmallVec<[(Tag, Loc); 1]>,
}

impl Thread {
    /// Workload: a tag for the next operation.
    fn take_tag(&mut self) -> Tag {
        let tag = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1);
        tag
    }

    pub fn finished(&self, len: usize) -> bool {
        self.pc as usize == len && self.out.is_empty()
    }

    /// Waiting for something: a read, an unflushed line, an answer or a
    /// place at the switch.
    pub fn busy(&self) -> bool {
        !self.out.is_empty() || !self.wc.is_empty() || self.unacked > 0 || !self.refused.is_empty()
    }
}

impl Pcie {
    /// May this core start a read now? A QP under `nic` waits for every
    /// earlier acquire's completion.
    pub(super) fn may_read(&self, t: &Thread, kind: Kind) -> bool {
        match kind {
            Kind::Host => t.out.is_empty(),
            Kind::Qp => {
                t.out.len() < self.window
                    && t.refused.is_empty()
                    && (self.variant != Variant::Nic || !t.out.iter().any(|o| o.1))
            }
        }
    }

    /// A program thread performs its next operation.
    pub(super) fn step(&self, t: &mut Thread, kind: Kind, ctx: &mut Ctx<Msg, Ghost>, op: Op) {
        let pc = t.pc;
        ctx.issued(pc as u64, OpKind::Other);
        match (kind, op) {
            (Kind::Qp, Op::Load { loc, order, .. }) => {
                let acq = order.is_acquire();
                t.out.push((pc as Tag, acq));
                ctx.send(self.first_hop(), NONPOSTED, Msg::MemRd { tag: pc as Tag, loc: loc as Loc, acq });
            }
            (Kind::Host, Op::Store { loc, value, order }) if self.mmio.is_some() => {
                self.mmio_store(t, ctx, loc as Loc, value, order.is_release());
                ctx.done(pc as u64);
            }
            (Kind::Qp, Op::Store { loc, value, order }) => {
                let rel = order.is_release() && self.variant != Variant::Unordered;
                ctx.send(self.first_hop(), NONPOSTED, Msg::MemWr { tag: pc as Tag, loc: loc as Loc, val: value, rel });
                ctx.done(pc as u64);
            }
            // an MMIO core's fence (its stalls are `may_fence`'s) and what a QP does not run
            _ => ctx.done(pc as u64),
        }
        t.pc += 1;
    }

    /// A workload read of `loc` (a QP driven by the timing engine).
    pub(super) fn read(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>, loc: Loc, acq: bool) {
        let tag = t.take_tag();
        ctx.issued(tag as u64, OpKind::Load);
        t.out.push((tag, acq));
        ctx.send(self.first_hop(), NONPOSTED, Msg::MemRd { tag, loc, acq });
    }

    /// May a QP make a DMA write now? Under `nic` it waits for its acquire
    /// reads' completions, as a read does; a QP the switch refused waits.
    pub(super) fn may_write(&self, t: &Thread) -> bool {
        t.refused.is_empty() && (self.variant != Variant::Nic || !t.out.iter().any(|o| o.1))
    }

    /// An RDMA fetch-and-add (timing): the NIC reads the line, then writes
    /// it back; done when the read completes.
    pub(super) fn fetch_add(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>, loc: Loc, acq: bool) {
        let tag = t.take_tag();
        ctx.issued(tag as u64, OpKind::Rmw);
        t.out.push((tag, acq));
        t.faa.push((tag, loc));
        ctx.send(self.first_hop(), NONPOSTED, Msg::MemRd { tag, loc, acq });
    }

    /// A DMA write: posted, done when sent.
    pub(super) fn write(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>, loc: Loc, rel: bool) {
        let tag = t.take_tag();
        ctx.issued(tag as u64, OpKind::Store);
        ctx.send(self.first_hop(), NONPOSTED, Msg::MemWr { tag, loc, val: 1, rel });
        ctx.done(tag as u64);
    }

    /// May a host core make an MMIO write (a release: `rel`) now? Under
    /// `rob` it needs a credit of its virtual network: fewer of its writes
    /// unanswered than the ROB has entries for it.
    pub(super) fn may_mmio_store(&self, t: &Thread, rel: bool) -> bool {
        let out = if rel { t.unacked_rel } else { t.unacked - t.unacked_rel };
        !self.mmio.is_some_and(Mmio::rob) || self.is(Mutant::RobNoCredit) || (out as usize) < self.rob_entries
    }

    /// May a host core pass a fence now? Under `fence` (an `sfence`) only
    /// once its lines are flushed and the root complex answered them all;
    /// otherwise a fence costs nothing (the sequence numbers order, §4.2).
    pub(super) fn may_fence(&self, t: &Thread) -> bool {
        self.mmio != Some(Mmio::Fence) || (t.wc.is_empty() && t.unacked == 0)
    }

    /// An MMIO write: into the write-combining buffers when checking (they
    /// drain in any order), straight out when timed. Posted: done when made.
    pub(super) fn mmio_store(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>, loc: Loc, val: Value, rel: bool) {
        let seq = t.seq;
        t.seq = t.seq.wrapping_add(1);
        if self.mmio != Some(Mmio::Unordered) {
            t.unacked += 1;
            t.unacked_rel += rel as u16;
        }
        if self.driven {
            ctx.send(self.rc_agent(), WC, Msg::MmioWr { seq, rel, loc, val });
        } else {
            t.wc.push(WcLine { seq, rel, loc, val });
        }
    }

    /// A write-combining buffer flushes its line (any of them: the order
    /// they leave the core in is not program order).
    pub(super) fn flush(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>, i: usize) {
        let WcLine { seq, rel, loc, val } = t.wc.remove(i);
        ctx.send(self.rc_agent(), WC, Msg::MmioWr { seq, rel, loc, val });
    }

    /// A host core's workload MMIO write and fence (timed).
    pub(super) fn workload_mmio(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>, store: Option<(Loc, bool)>) {
        let tag = t.take_tag();
        match store {
            Some((loc, rel)) => {
                ctx.issued(tag as u64, OpKind::Store);
                self.mmio_store(t, ctx, loc, 1, rel);
            }
            None => ctx.issued(tag as u64, OpKind::Fence),
        }
        ctx.done(tag as u64);
    }

    pub(super) fn core_message(
        &self,
        t: &mut Thread,
        ctx: &mut Ctx<Msg, Ghost>,
        me: usize,
        msg: Msg,
    ) -> Result<(), Violation> {
        let (tag, val) = match msg {
            Msg::Nack { tag, loc, acq } => {
                t.refused.push((tag, (loc, acq)));
                return Ok(());
            }
            Msg::Retry => {
                if t.refused.is_empty() {
                    return Err(Violation::unexpected("no read refused", msg));
                }
                let (tag, (loc, acq)) = t.refused.remove(0);
                ctx.send(self.first_hop(), NONPOSTED, Msg::Resend { tag, loc, acq });
                return Ok(());
            }
            Msg::MmioAck { rel } => {
                t.unacked = t.unacked.checked_sub(1).ok_or_else(|| Violation::unexpected("no MMIO write out", msg))?;
                if rel {
                    t.unacked_rel = t
                        .unacked_rel
                        .checked_sub(1)
                        .ok_or_else(|| Violation::unexpected("no MMIO release out", msg))?;
                }
                return Ok(());
            }
            Msg::Cpl { tag, val } => (tag, val),
            _ => return Err(Violation::unexpected("core", msg)),
        };
        let i = t.out.iter().position(|o| o.0 == tag).ok_or_else(|| Violation::unexpected("no read out", msg))?;
        t.out.remove(i);
        if let Some(j) = t.faa.iter().position(|f| f.0 == tag) {
            let (_, loc) = t.faa.remove(j);
            let wtag = t.take_tag();
            ctx.send(self.first_hop(), NONPOSTED, Msg::MemWr { tag: wtag, loc, val: val + 1, rel: false });
        }
        if let Some(reg) = self.program.as_ref().and_then(|p| p.threads[me][tag as usize].reg()) {
            t.regs[reg as usize] = val;
        }
        ctx.done(tag as u64);
        Ok(())
    }
}
