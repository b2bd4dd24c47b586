//! The cores: a NIC's queue pair (DMA reads through the root complex) or
//! a host core (a program thread whose accesses reach memory in order).

use smallvec::SmallVec;

use super::messages::{Loc, Msg, Tag, HOST, NONPOSTED};
use super::protocol::{Ghost, Kind, Pcie};
use super::Variant;
use crate::agents::coherence::core::MAX_REGS;
use crate::agents::protocol::{Ctx, OpKind, Violation};
use crate::workloads::program::{Op, Value};

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Thread {
    /// Program: the next operation.
    pub pc: u8,
    pub regs: [Value; MAX_REGS],
    /// Reads in flight, with their acquire bits (a host core: its one load).
    pub out: SmallVec<[(Tag, bool); 4]>,
    /// Workload: the next read's tag.
    pub next_tag: Tag,
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
}

impl Pcie {
    /// May this core start a read now? A QP under `nic` waits for every
    /// earlier acquire's completion; a host core does one load at a time.
    pub(super) fn may_read(&self, t: &Thread, kind: Kind) -> bool {
        match kind {
            Kind::Host => t.out.is_empty(),
            Kind::Qp => t.out.len() < self.window && (self.variant != Variant::Nic || !t.out.iter().any(|o| o.1)),
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
                ctx.send(self.rc_agent(), NONPOSTED, Msg::MemRd { tag: pc as Tag, loc: loc as Loc, acq });
            }
            (Kind::Host, Op::Load { loc, .. }) => {
                t.out.push((pc as Tag, false));
                ctx.send(self.mem_agent(), HOST, Msg::HostRd { loc: loc as Loc });
            }
            (Kind::Host, Op::Store { loc, value, .. }) => {
                ctx.send(self.mem_agent(), HOST, Msg::HostWr { loc: loc as Loc, val: value });
                ctx.done(pc as u64);
            }
            // a host core's accesses are already in order; programs are checked for what a QP runs
            _ => ctx.done(pc as u64),
        }
        t.pc += 1;
    }

    /// A workload read of `loc` (a QP driven by the timing engine).
    pub(super) fn read(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>, loc: Loc, acq: bool) {
        let tag = t.take_tag();
        ctx.issued(tag as u64, OpKind::Load);
        t.out.push((tag, acq));
        ctx.send(self.rc_agent(), NONPOSTED, Msg::MemRd { tag, loc, acq });
    }

    /// A host core's workload store: posted, done when sent.
    pub(super) fn host_store(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>, loc: Loc) {
        let tag = t.take_tag();
        ctx.issued(tag as u64, OpKind::Store);
        ctx.send(self.mem_agent(), HOST, Msg::HostWr { loc, val: 1 });
        ctx.done(tag as u64);
    }

    /// A host core's workload load: one at a time.
    pub(super) fn host_load(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>, loc: Loc) {
        let tag = t.take_tag();
        ctx.issued(tag as u64, OpKind::Load);
        t.out.push((tag, false));
        ctx.send(self.mem_agent(), HOST, Msg::HostRd { loc });
    }

    pub(super) fn core_message(
        &self,
        t: &mut Thread,
        ctx: &mut Ctx<Msg, Ghost>,
        me: usize,
        msg: Msg,
    ) -> Result<(), Violation> {
        let (tag, val) = match msg {
            Msg::Cpl { tag, val } => (tag, val),
            Msg::HostData { val } => (t.out.first().map_or(0, |o| o.0), val),
            _ => return Err(Violation::unexpected("core", msg)),
        };
        let i = t.out.iter().position(|o| o.0 == tag).ok_or_else(|| Violation::unexpected("no read out", msg))?;
        t.out.remove(i);
        if let Some(reg) = self.program.as_ref().and_then(|p| p.threads[me][tag as usize].reg()) {
            t.regs[reg as usize] = val;
        }
        ctx.done(tag as u64);
        Ok(())
    }
}
