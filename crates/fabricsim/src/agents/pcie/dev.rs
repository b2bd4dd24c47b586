//! The NIC's device side of MMIO (§5.2): it takes the writes the root
//! complex posts, in the order they arrive; its registers are what a
//! litmus test's final state reads (the last write to each wins).

use super::messages::Msg;
use super::protocol::{Ghost, Pcie};
use crate::agents::protocol::{Ctx, Step, Violation};
use crate::workloads::program::Value;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Dev {
    /// Values per location (checking; timing keeps none).
    pub mem: Vec<Value>,
}

impl Pcie {
    pub(super) fn dev_message(&self, d: &mut Dev, _ctx: &mut Ctx<Msg, Ghost>, msg: Msg) -> Result<Step, Violation> {
        match msg {
            Msg::DevWr { loc, val } => {
                if let Some(x) = d.mem.get_mut(loc as usize) {
                    *x = val;
                }
                Ok(Step::Done)
            }
            _ => Err(Violation::unexpected("device", msg)),
        }
    }
}
