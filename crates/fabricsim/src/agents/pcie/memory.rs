//! The host memory behind the root complex: the coherence point (see
//! `mod.rs`), one handler per message.

use smallvec::SmallVec;

use super::messages::{Loc, Msg, COH, CPL};
use super::protocol::{Ghost, Pcie};
use crate::agents::protocol::{AgentId, Ctx, Step, Violation};
use crate::workloads::program::Value;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Mem {
    /// Values per location (checking; timing keeps none: reads return 0).
    pub mem: Vec<Value>,
    /// Locations the root complex read since their last Inv (bit per
    /// location; none kept in a timed run without host cores).
    pub shared: SmallVec<[u64; 1]>,
    /// Timing: lines in the host's cache (those a host core wrote, and the
    /// first `host_cached` lines): a read of one hits (no
    /// `memory_latency`) and overtakes earlier misses (L98). Not kept when
    /// checking (reads are served in any order there).
    pub cached: Vec<u64>,
}

fn bit(loc: Loc) -> u64 {
    1 << (loc % 64)
}

impl Mem {
    fn hit(&self, loc: Loc) -> bool {
        self.cached.get(loc as usize / 64).is_some_and(|w| w & bit(loc) != 0)
    }
}

impl Pcie {
    /// A store reaches the coherence point: the line is in the host's
    /// cache now, and the root complex's speculative copies of it are stale.
    fn store(&self, m: &mut Mem, ctx: &mut Ctx<Msg, Ghost>, loc: Loc, val: Value) {
        if let Some(x) = m.mem.get_mut(loc as usize) {
            *x = val;
        }
        if let Some(w) = m.cached.get_mut(loc as usize / 64) {
            *w |= bit(loc);
        }
        if let Some(w) = m.shared.get_mut(loc as usize / 64).filter(|w| **w & bit(loc) != 0) {
            *w &= !bit(loc);
            ctx.send(self.rc_agent(), COH, Msg::Inv { loc });
        }
    }

    pub(super) fn mem_message(
        &self,
        m: &mut Mem,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        match msg {
            Msg::Rd { qp, tag, loc } => {
                if !m.hit(loc) {
                    ctx.memory_read(loc as u64);
                }
                let val = m.mem.get(loc as usize).copied().unwrap_or(0);
                if let Some(w) = m.shared.get_mut(loc as usize / 64) {
                    *w |= bit(loc);
                }
                ctx.send(from, COH, Msg::Data { qp, tag, val });
            }
            Msg::Wr { qp, tag, loc, val } => {
                self.store(m, ctx, loc, val);
                ctx.send(from, COH, Msg::WrAck { qp, tag });
            }
            Msg::HostWr { loc, val } => self.store(m, ctx, loc, val),
            Msg::HostRd { loc } => {
                if !m.hit(loc) {
                    ctx.memory_read(loc as u64);
                }
                let val = m.mem.get(loc as usize).copied().unwrap_or(0);
                ctx.send(from, CPL, Msg::HostData { val });
            }
            _ => return Err(Violation::unexpected("host memory", msg)),
        }
        Ok(Step::Done)
    }
}
