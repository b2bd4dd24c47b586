//! The NIC's device side of MMIO (§5.2): it takes the writes the root
//! complex posts, in the order they arrive or, with its own ROB
//! (`rob-nic`), in sequence-number order, answering each core's write as
//! it leaves the ROB (its credit); its registers are what a litmus test's
//! final state reads (the last write to each wins).

use super::messages::{Msg, CPL};
use super::protocol::{Ghost, Pcie};
use super::rob::{Held, Rob};
use super::{Mmio, Mutant};
use crate::agents::protocol::{Ctx, Step, Violation};
use crate::programs::Value;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Dev {
    /// Values per location (checking; timing keeps none).
    pub mem: Vec<Value>,
    /// MMIO `rob-nic`: the reorder buffer.
    pub rob: Rob,
}

impl Pcie {
    pub(super) fn dev_message(&self, d: &mut Dev, ctx: &mut Ctx<Msg, Ghost>, msg: Msg) -> Result<Step, Violation> {
        let Msg::DevWr { core, seq, rel, loc, val } = msg else { return Err(Violation::unexpected("device", msg)) };
        let w = Held { core, seq, rel, loc, val };
        let apply = |mem: &mut Vec<Value>, ctx: &mut Ctx<Msg, Ghost>, w: Held, ack: bool| {
            if let Some(x) = mem.get_mut(w.loc as usize) {
                *x = w.val;
            }
            if ack {
                ctx.send(w.core, CPL, Msg::MmioAck { rel: w.rel });
            }
        };
        match self.mmio {
            Some(Mmio::RobNic) if self.is(Mutant::RobOnArrival) => apply(&mut d.mem, ctx, w, true),
            Some(Mmio::RobNic) => {
                let mem = &mut d.mem;
                if !d.rob.accept(w, self.rob_entries, |h| apply(mem, ctx, h, true)) {
                    return Ok(Step::Stall);
                }
            }
            _ => apply(&mut d.mem, ctx, w, false),
        }
        Ok(Step::Done)
    }
}
