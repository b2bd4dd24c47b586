//! The checker's state of a whole system: every agent, the messages in
//! flight and the ghost state, in a canonical form (so two orders of
//! reaching the same situation give equal states), and its transitions.

use std::fmt;
use std::hash::{Hash, Hasher};

pub use crate::agents::protocol::Envelope;
use crate::agents::protocol::{AgentId, ChannelOrder, Ctx, Protocol, Send, Step, Violation};
use crate::engine::pack::{get_varint, Pack};

/// One step of an execution.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Label<M, A> {
    Deliver(Envelope<M>),
    Act { agent: AgentId, action: A },
}

impl<M: fmt::Debug, A: fmt::Debug> fmt::Debug for Label<M, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Deliver(e) => write!(f, "{} -> {}: {:?}", e.from, e.to, e.msg),
            Label::Act { agent, action } => write!(f, "{agent}: {action:?}"),
        }
    }
}

pub struct World<P: Protocol> {
    pub agents: Vec<P::Agent>,
    pub ghost: P::Ghost,
    /// Sorted by (to, vc, from); within that, send order on FIFO channels
    /// and message order on unordered ones.
    pub mail: Vec<Envelope<P::Msg>>,
}

impl<P: Protocol> Clone for World<P> {
    fn clone(&self) -> Self {
        World { agents: self.agents.clone(), ghost: self.ghost.clone(), mail: self.mail.clone() }
    }
    /// Reuses `self`'s buffers (the explorer's scratch state).
    fn clone_from(&mut self, o: &Self) {
        self.agents.clone_from(&o.agents);
        self.ghost.clone_from(&o.ghost);
        self.mail.clone_from(&o.mail);
    }
}
impl<P: Protocol> PartialEq for World<P> {
    fn eq(&self, o: &Self) -> bool {
        self.agents == o.agents && self.ghost == o.ghost && self.mail == o.mail
    }
}
impl<P: Protocol> Eq for World<P> {}
impl<P: Protocol> Hash for World<P> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.agents.hash(h);
        self.ghost.hash(h);
        self.mail.hash(h);
    }
}
impl<P: Protocol> fmt::Debug for World<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("World")
            .field("agents", &self.agents)
            .field("ghost", &self.ghost)
            .field("mail", &self.mail)
            .finish()
    }
}

/// Why a transition could not be taken.
pub enum Outcome<P: Protocol> {
    Next(World<P>),
    /// Not enabled (a stall, or a send into a full channel).
    Disabled,
    Error(Violation),
}

impl<P: Protocol> World<P> {
    pub fn new(agents: Vec<P::Agent>, ghost: P::Ghost) -> Self {
        World { agents, ghost, mail: Vec::new() }
    }

    /// Whether nothing is in flight and no agent waits.
    pub fn quiescent(&self, p: &P) -> bool {
        self.mail.is_empty() && !self.agents.iter().any(|a| p.busy(a))
    }

    /// Add sends in canonical position; false if a channel would overflow.
    fn post(&mut self, p: &P, from: AgentId, sends: &[Send<P::Msg>]) -> bool {
        let cap = p.capacity();
        let orders = p.vc_orders();
        // (to, vc, from) packed so that integer order is tuple order.
        let chan = |e: &Envelope<P::Msg>| (e.to as u32) << 16 | (e.vc as u32) << 8 | e.from as u32;
        for s in sends {
            let key = (s.to as u32) << 16 | (s.vc as u32) << 8 | from as u32;
            // The channel's messages are mail[start..end]. Mail is short,
            // so scan it; search it when it is not.
            let (start, end) = if self.mail.len() <= 32 {
                let start = self.mail.iter().position(|e| chan(e) >= key).unwrap_or(self.mail.len());
                let end = start + self.mail[start..].iter().take_while(|e| chan(e) == key).count();
                (start, end)
            } else {
                let start = self.mail.partition_point(|e| chan(e) < key);
                (start, start + self.mail[start..].partition_point(|e| chan(e) <= key))
            };
            if end - start >= cap {
                return false;
            }
            let env = Envelope { to: s.to, vc: s.vc, from, msg: s.msg };
            let at = match orders[s.vc as usize] {
                ChannelOrder::Fifo => end,
                ChannelOrder::Unordered => start + self.mail[start..end].partition_point(|e| e.msg <= s.msg),
            };
            self.mail.insert(at, env);
        }
        true
    }

    /// Indices of the messages that may be delivered next: the head of each
    /// FIFO channel, and each distinct message of an unordered one.
    pub fn deliverable(&self, p: &P, out: &mut Vec<usize>) {
        let orders = p.vc_orders();
        for i in 0..self.mail.len() {
            let e = &self.mail[i];
            let first_of_group = i == 0 || {
                let d = &self.mail[i - 1];
                (d.to, d.vc, d.from) != (e.to, e.vc, e.from)
            };
            let ok = match orders[e.vc as usize] {
                ChannelOrder::Fifo => first_of_group,
                ChannelOrder::Unordered => first_of_group || self.mail[i - 1].msg != e.msg,
            };
            if ok {
                out.push(i);
            }
        }
    }

    /// Deliver message `i`.
    pub fn deliver(&self, p: &P, i: usize, sends: &mut Vec<Send<P::Msg>>) -> Outcome<P> {
        let mut next = self.clone();
        match next.deliver_here(p, i, sends) {
            Ok(true) => Outcome::Next(next),
            Ok(false) => Outcome::Disabled,
            Err(v) => Outcome::Error(v),
        }
    }

    /// Fire `action` of agent `a`.
    pub fn act(&self, p: &P, a: AgentId, action: P::Action, sends: &mut Vec<Send<P::Msg>>) -> Outcome<P> {
        let mut next = self.clone();
        match next.act_here(p, a, action, sends) {
            Ok(true) => Outcome::Next(next),
            Ok(false) => Outcome::Disabled,
            Err(v) => Outcome::Error(v),
        }
    }

    /// [`World::deliver`] into `next`, reusing its buffers: `Ok(true)` if
    /// `next` is the successor, `Ok(false)` if the transition is disabled
    /// (`next` then holds junk).
    pub fn deliver_into(
        &self,
        p: &P,
        i: usize,
        sends: &mut Vec<Send<P::Msg>>,
        next: &mut World<P>,
    ) -> Result<bool, Violation> {
        next.clone_from(self);
        next.deliver_here(p, i, sends)
    }

    /// [`World::act`] into `next`, reusing its buffers (as `deliver_into`).
    pub fn act_into(
        &self,
        p: &P,
        a: AgentId,
        action: P::Action,
        sends: &mut Vec<Send<P::Msg>>,
        next: &mut World<P>,
    ) -> Result<bool, Violation> {
        next.clone_from(self);
        next.act_here(p, a, action, sends)
    }

    /// Deliver message `i` of this state, changing it in place: `Ok(true)`
    /// if `self` is now the successor, `Ok(false)` if the transition is
    /// disabled (`self` then holds junk). Only the receiver, the ghost and
    /// the mail change: [`World::restore`] undoes it.
    pub fn deliver_here(&mut self, p: &P, i: usize, sends: &mut Vec<Send<P::Msg>>) -> Result<bool, Violation> {
        let env = self.mail.remove(i);
        sends.clear();
        let mut ctx = Ctx::new(env.to, &mut self.ghost, sends);
        match p.on_message(&mut self.agents[env.to as usize], &mut ctx, env.from, env.msg)? {
            Step::Stall => Ok(false),
            Step::Done => Ok(self.post(p, env.to, sends)),
        }
    }

    /// Fire an action in place (as [`World::deliver_here`]; only agent
    /// `a`, the ghost and the mail change).
    pub fn act_here(
        &mut self,
        p: &P,
        a: AgentId,
        action: P::Action,
        sends: &mut Vec<Send<P::Msg>>,
    ) -> Result<bool, Violation> {
        sends.clear();
        let mut ctx = Ctx::new(a, &mut self.ghost, sends);
        p.act(&mut self.agents[a as usize], &mut ctx, action)?;
        Ok(self.post(p, a, sends))
    }

    /// Make `self` equal to `parent` again after a transition of agent `a`
    /// taken in place (copying only what it may have changed).
    #[inline]
    pub fn restore(&mut self, parent: &World<P>, a: AgentId) {
        self.agents[a as usize].clone_from(&parent.agents[a as usize]);
        self.ghost.clone_from(&parent.ghost);
        self.mail.clone_from(&parent.mail);
    }

    /// Take a transition given by its label (for replaying a trace).
    pub fn replay(&self, p: &P, label: &Label<P::Msg, P::Action>) -> Option<World<P>> {
        let mut sends = Vec::new();
        let out = match label {
            Label::Deliver(e) => {
                let i = self.mail.iter().position(|m| m == e)?;
                self.deliver(p, i, &mut sends)
            }
            Label::Act { agent, action } => self.act(p, *agent, *action, &mut sends),
        };
        match out {
            Outcome::Next(w) => Some(w),
            _ => None,
        }
    }
}

impl<P: Protocol> World<P>
where
    P::Agent: Pack,
    P::Ghost: Pack,
    P::Msg: Pack,
{
    /// Append this state's encoding (`engine::pack`) to `out`: the
    /// explorer's frontier holds states so, and fingerprints their bytes.
    #[inline]
    pub fn pack(&self, out: &mut Vec<u8>) {
        self.agents.pack(out);
        self.ghost.pack(out);
        self.mail.pack(out);
    }

    /// Read the state packed at the front of `src` into `self` (reusing
    /// its buffers), and move `src` past it.
    #[inline]
    pub fn unpack_from(&mut self, src: &mut &[u8]) {
        self.agents.unpack_into(src);
        self.ghost.unpack_into(src);
        self.mail.unpack_into(src);
    }

    /// [`World::unpack_from`], noting where each agent's bytes start
    /// (`at[i]`, from the state's first byte; `at[n]` is where the ghost
    /// starts), for [`World::pack_after`].
    #[inline]
    pub fn unpack_noting(&mut self, src: &mut &[u8], at: &mut Vec<u32>) {
        let whole = src.len();
        let n = get_varint(src) as usize;
        self.agents.truncate(n);
        at.clear();
        for i in 0..n {
            at.push((whole - src.len()) as u32);
            match self.agents.get_mut(i) {
                Some(a) => a.unpack_into(src),
                None => self.agents.push(P::Agent::unpack(src)),
            }
        }
        at.push((whole - src.len()) as u32);
        self.ghost.unpack_into(src);
        self.mail.unpack_into(src);
    }

    /// Pack this state, a successor of `parent` (packed, with the agent
    /// offsets `at` of [`World::unpack_noting`]) that differs from it at
    /// most in agent `a`, the ghost and the mail: the other agents' bytes
    /// are the parent's. The same bytes as [`World::pack`].
    #[inline]
    pub fn pack_after(&self, a: AgentId, parent: &[u8], at: &[u32], out: &mut Vec<u8>) {
        let a = a as usize;
        out.extend_from_slice(&parent[..at[a] as usize]);
        self.agents[a].pack(out);
        out.extend_from_slice(&parent[at[a + 1] as usize..at[self.agents.len()] as usize]);
        self.ghost.pack(out);
        self.mail.pack(out);
    }
}

impl<P: Protocol> World<P> {
    /// Put the messages in canonical order (after a renaming): by channel,
    /// keeping send order on FIFO channels and message order on unordered
    /// ones.
    pub fn sort_mail(&mut self, p: &P) {
        let orders = p.vc_orders();
        self.mail.sort_by(|a, b| {
            (a.to, a.vc, a.from).cmp(&(b.to, b.vc, b.from)).then_with(|| match orders[a.vc as usize] {
                ChannelOrder::Fifo => std::cmp::Ordering::Equal,
                ChannelOrder::Unordered => a.msg.cmp(&b.msg),
            })
        });
    }
}
