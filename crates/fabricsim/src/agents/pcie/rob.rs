//! The MMIO reorder buffer (§5.2), at the root complex or at the NIC: it
//! holds writes that arrived before their turn and releases each core's
//! writes in sequence-number order ("the highest sequence number for which
//! all preceding sequence numbers have also been received").

use smallvec::SmallVec;

use super::messages::{Loc, Seq};
use crate::agents::protocol::AgentId;
use crate::programs::Value;

/// An MMIO write waiting in the ROB for the writes before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Held {
    pub core: AgentId,
    pub seq: Seq,
    /// Its virtual network: a release (or a relaxed store).
    pub rel: bool,
    pub loc: Loc,
    pub val: Value,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Rob {
    /// Writes that arrived before their turn.
    pub held: SmallVec<[Held; 2]>,
    /// Each core's next sequence number to release.
    pub next: SmallVec<[(AgentId, Seq); 1]>,
}

impl Rob {
    /// Take `w` if one of the `entries` of its virtual network is free
    /// (false: refused, it waits in its channel), then release, in order,
    /// every write whose turn came.
    pub fn accept(&mut self, w: Held, entries: usize, mut release: impl FnMut(Held)) -> bool {
        if self.held.iter().filter(|h| h.rel == w.rel).count() >= entries {
            return false;
        }
        self.held.push(w);
        loop {
            let turn = |rob: &Rob, core| rob.next.iter().find(|n| n.0 == core).map_or(0, |n| n.1);
            let Some(i) = self.held.iter().position(|h| h.seq == turn(self, h.core)) else { break };
            let h = self.held.remove(i);
            match self.next.iter_mut().find(|n| n.0 == h.core) {
                Some(n) => n.1 = n.1.wrapping_add(1),
                None => self.next.push((h.core, 1)),
            }
            release(h);
        }
        true
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}
