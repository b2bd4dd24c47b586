//! The host memory behind the root complex: the coherence point of this
//! slice (see `mod.rs`), one handler per message.

use super::messages::{Msg, COH, CPL};
use super::protocol::{Ghost, Pcie};
use crate::agents::protocol::{AgentId, Ctx, Step, Violation};
use crate::workloads::program::Value;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Mem {
    /// Values per location (checking; timing keeps none: reads return 0).
    pub mem: Vec<Value>,
    /// Locations the root complex read since their last Inv (bit per
    /// location; checking).
    pub shared: u64,
}

impl Pcie {
    pub(super) fn mem_message(
        &self,
        m: &mut Mem,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        match msg {
            Msg::Rd { qp, tag, loc } => {
                ctx.memory_read(loc as u64);
                let val = m.mem.get(loc as usize).copied().unwrap_or(0);
                if !self.driven {
                    m.shared |= 1u64 << loc;
                }
                ctx.send(from, COH, Msg::Data { qp, tag, val });
            }
            Msg::HostWr { loc, val } => {
                if let Some(x) = m.mem.get_mut(loc as usize) {
                    *x = val;
                }
                if m.shared >> loc & 1 == 1 {
                    m.shared &= !(1u64 << loc);
                    ctx.send(self.rc_agent(), COH, Msg::Inv { loc });
                }
            }
            Msg::HostRd { loc } => {
                ctx.memory_read(loc as u64);
                let val = m.mem.get(loc as usize).copied().unwrap_or(0);
                ctx.send(from, CPL, Msg::HostData { val });
            }
            _ => return Err(Violation::unexpected("host memory", msg)),
        }
        Ok(Step::Done)
    }
}
