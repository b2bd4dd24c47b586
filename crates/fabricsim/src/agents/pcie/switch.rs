//! Peer-to-peer (§6.6): the crossbar switch between the NIC and its two
//! destinations, the root complex and a slow P2P device, and that device.
//!
//! The switch holds the NIC's reads in one shared queue of
//! `switch_entries` (P2P-noVOQ: only its head may leave, so a read for the
//! busy device blocks the reads behind it) or in one queue of that size per
//! destination (P2P-VOQ). A read that finds its queue full is refused
//! (`Nack`): its queue pair keeps it and stops issuing. When a place frees,
//! the switch holds it for the oldest refused read that fits there and
//! invites its queue pair (`Retry`), which sends it again (`Resend`): the
//! refused reads of both threads take turns, as gem5's port retries. The
//! P2P device serves one read at a time (`p2p_latency`, 100 ns); the
//! switch sends it the next when it says it is free.

use smallvec::SmallVec;

use super::messages::{Loc, Msg, Tag, CPL, NONPOSTED};
use super::protocol::{Ghost, Pcie};
use crate::agents::protocol::{AgentId, Ctx, Step, Violation};

/// A read waiting in the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Waiting {
    pub qp: AgentId,
    pub tag: Tag,
    pub loc: Loc,
    pub acq: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Switch {
    /// Reads in arrival order (the VOQs are this list filtered by destination).
    pub queue: SmallVec<[Waiting; 4]>,
    /// The P2P device has a read.
    pub p2p_busy: bool,
    /// Queue pairs owed a place, one entry per refused read, oldest first.
    pub waiting: SmallVec<[AgentId; 2]>,
    /// Places held for invited reads: for the root complex, for the device.
    pub invited: (u16, u16),
    /// Reads refused (timing statistics).
    pub nacks: u64,
}

impl Switch {
    fn held_for(&self, p2p: bool) -> u16 {
        if p2p {
            self.invited.1
        } else {
            self.invited.0
        }
    }
}

impl Pcie {
    /// Where a queue pair's reads go: the last `p2p_qps` read the P2P device.
    pub(super) fn to_p2p(&self, qp: AgentId) -> bool {
        self.p2p && (qp as usize) + self.p2p_qps >= self.kinds.len()
    }

    pub(super) fn switch_message(
        &self,
        s: &mut Switch,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        match msg {
            Msg::MemRd { tag, loc, acq } => {
                if self.room(s, self.to_p2p(from)) {
                    s.queue.push(Waiting { qp: from, tag, loc, acq });
                } else {
                    ctx.send(from, CPL, Msg::Nack { tag, loc, acq });
                    s.waiting.push(from);
                    if self.driven {
                        s.nacks += 1;
                    }
                }
            }
            Msg::Resend { tag, loc, acq } => {
                let held = if self.to_p2p(from) { &mut s.invited.1 } else { &mut s.invited.0 };
                *held = held.checked_sub(1).ok_or_else(|| Violation::unexpected("no place held", msg))?;
                s.queue.push(Waiting { qp: from, tag, loc, acq });
            }
            Msg::P2pFree => s.p2p_busy = false,
            _ => return Err(Violation::unexpected("switch", msg)),
        }
        self.forward(s, ctx);
        Ok(Step::Done)
    }

    /// Whether a read for the P2P device (or the root complex) finds a
    /// place: the reads held and the places promised in its queue.
    fn room(&self, s: &Switch, p2p: bool) -> bool {
        let used = match self.voq {
            true => s.queue.iter().filter(|w| self.to_p2p(w.qp) == p2p).count() + s.held_for(p2p) as usize,
            false => s.queue.len() + (s.invited.0 + s.invited.1) as usize,
        };
        used < self.switch_entries
    }

    /// Invite refused reads, oldest first, into the places that freed.
    fn invite(&self, s: &mut Switch, ctx: &mut Ctx<Msg, Ghost>) {
        let mut i = 0;
        while i < s.waiting.len() {
            let qp = s.waiting[i];
            let p2p = self.to_p2p(qp);
            if !self.room(s, p2p) {
                if !self.voq {
                    return;
                }
                i += 1;
                continue;
            }
            if p2p {
                s.invited.1 += 1;
            } else {
                s.invited.0 += 1;
            }
            s.waiting.remove(i);
            ctx.send(qp, CPL, Msg::Retry);
        }
    }

    /// Send on what may leave: in a shared queue the head while its
    /// destination takes it; with VOQs every read for the root complex and
    /// the P2P queue's head when the device is free.
    fn forward(&self, s: &mut Switch, ctx: &mut Ctx<Msg, Ghost>) {
        let mut i = 0;
        while i < s.queue.len() {
            let w = s.queue[i];
            let p2p = self.to_p2p(w.qp);
            if p2p && s.p2p_busy {
                if !self.voq {
                    break;
                }
                i += 1;
                continue;
            }
            s.p2p_busy |= p2p;
            let to = if p2p { self.p2p_agent() } else { self.rc_agent() };
            ctx.send(to, NONPOSTED, Msg::Fwd { qp: w.qp, tag: w.tag, loc: w.loc, acq: w.acq });
            s.queue.remove(i);
        }
        self.invite(s, ctx);
    }

    /// The P2P device: one read at a time, answered after `p2p_latency`.
    pub(super) fn p2p_message(&self, ctx: &mut Ctx<Msg, Ghost>, from: AgentId, msg: Msg) -> Result<Step, Violation> {
        match msg {
            Msg::Fwd { qp, tag, .. } => {
                ctx.send(qp, CPL, Msg::Cpl { tag, val: 0 });
                ctx.send(from, CPL, Msg::P2pFree);
                Ok(Step::Done)
            }
            _ => Err(Violation::unexpected("P2P device", msg)),
        }
    }
}
