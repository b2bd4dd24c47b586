//! The protocol API shared by both engines.
//!
//! A protocol is a set of deterministic state machines (agents) that talk
//! only through messages. Each agent kind has one handler per message kind
//! (`on_message`) and a list of spontaneous actions (`actions`/`act`: a core
//! issuing its next instruction, a cache evicting a line, a home sending
//! the next grant). The *timing engine* delivers messages through the
//! fabric and charges each handler's processing delay; the *checking
//! engine* (`check::explorer`) delivers them in every order the channels
//! allow and fires every enabled action, so one model is both timed and
//! exhaustively checked.
//!
//! Channels: a message goes from one agent to another on a virtual channel
//! (VC). Each VC declares its ordering: point-to-point FIFO (per source,
//! destination and VC) or unordered. A protocol may bound the messages in
//! flight per (source, destination, VC); a transition whose sends exceed
//! the bound is not enabled (how Murphi-style single-slot channels are
//! written).

use std::fmt::Debug;
use std::hash::Hash;

use crate::agents::cache::CacheCounters;
use crate::engine::pack::{get_byte, Pack};
use crate::engine::Time;

/// An agent's index in its system.
pub type AgentId = u8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelOrder {
    /// Messages from one source to one destination on this VC arrive in
    /// the order they were sent.
    Fifo,
    /// Any message in flight may arrive next.
    Unordered,
}

/// What a handler did with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Consumed.
    Done,
    /// Not now: the message stays in its channel until the agent's state
    /// changes (a blocking directory's queued request, a recycled message).
    Stall,
}

/// A protocol error found while handling a message or an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub kind: &'static str,
    pub detail: String,
}

impl Violation {
    pub fn unexpected(state: impl Debug, msg: impl Debug) -> Self {
        Violation { kind: "unexpected message", detail: format!("{msg:?} in state {state:?}") }
    }
}

/// A message being sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Send<M> {
    pub to: AgentId,
    pub vc: u8,
    pub msg: M,
    /// Local processing before the message leaves (timing engine only).
    pub delay: Time,
}

/// Where the timing engine places an agent: cores (caches, clients,
/// requesters) on the fabric's requester nodes in order, homes
/// (directories, home agents, memory-side agents) on its memory nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Core,
    Home,
}

/// The kind of a memory operation, for latency statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Load,
    Store,
    Rmw,
    Fence,
    Other,
}

/// What a handler reports to the timing engine (the checker ignores it):
/// an operation's life, reported by the agent that performs it (latency
/// runs from `Issued` to `Done`, same agent, same id), and a home's
/// accesses to its memory, which the engine times with the memory model of
/// the home's fabric node (fixed latency or DRAM).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpEvent {
    Issued {
        id: u64,
        kind: OpKind,
    },
    Done {
        id: u64,
    },
    /// The handler's sends need this line from memory: they leave when the read completes.
    MemoryRead {
        line: u64,
    },
    /// The handler wrote this line to memory (occupies the memory; nothing waits for it).
    MemoryWrite {
        line: u64,
    },
}

/// The ordering a workload operation asks for (release consistency's
/// marks; a protocol whose cores are SC may ignore them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpOrder {
    Relaxed,
    /// Later operations wait for this one.
    Acquire,
    /// This one waits for every earlier operation.
    Release,
}

/// An operation a workload asks a core to perform (timing engine): the
/// protocol turns it into one of its environment actions
/// ([`Protocol::workload_action`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkOp {
    /// Line index (address / line size).
    pub line: u64,
    pub kind: OpKind,
    pub value: u64,
    pub order: OpOrder,
    /// Bytes the operation moves (0: a whole line); a protocol whose
    /// messages carry partial lines sizes them by it.
    pub bytes: u32,
}

/// What a handler may touch besides its own agent: the sends it makes, the
/// system's ghost state (checker-only bookkeeping such as the last value
/// written to each address), and the values loads return (observations).
pub struct Ctx<'a, M, G> {
    pub me: AgentId,
    pub ghost: &'a mut G,
    pub sends: &'a mut Vec<Send<M>>,
    /// Extra processing delay charged to the sends that follow, on top of
    /// the handler's (timing engine): a cost that depends on the agent's
    /// state, which `handler_latency` cannot see.
    pub delay: Time,
    /// Operation events (timing engine); None when checking.
    pub ops: Option<&'a mut Vec<OpEvent>>,
    /// Simulated time (timing engine; 0 when checking, so a state never
    /// depends on it there).
    pub now: Time,
}

impl<'a, M, G> Ctx<'a, M, G> {
    pub fn new(me: AgentId, ghost: &'a mut G, sends: &'a mut Vec<Send<M>>) -> Self {
        Ctx { me, ghost, sends, delay: 0, ops: None, now: 0 }
    }

    #[inline]
    pub fn send(&mut self, to: AgentId, vc: u8, msg: M) {
        self.sends.push(Send { to, vc, msg, delay: self.delay });
    }

    /// An operation started (timing statistics only).
    #[inline]
    pub fn issued(&mut self, id: u64, kind: OpKind) {
        if let Some(ops) = self.ops.as_deref_mut() {
            ops.push(OpEvent::Issued { id, kind });
        }
    }

    /// An operation completed (timing statistics only).
    #[inline]
    pub fn done(&mut self, id: u64) {
        if let Some(ops) = self.ops.as_deref_mut() {
            ops.push(OpEvent::Done { id });
        }
    }

    /// A home reads `line` (its index in this home's memory) for the sends
    /// of this handler (timing only).
    #[inline]
    pub fn memory_read(&mut self, line: u64) {
        if let Some(ops) = self.ops.as_deref_mut() {
            ops.push(OpEvent::MemoryRead { line });
        }
    }

    /// The memory reads this handler reported are not made after all (a
    /// home that found the line in its own cache): its sends do not wait
    /// for memory (timing only).
    #[inline]
    pub fn forget_memory_reads(&mut self) {
        if let Some(ops) = self.ops.as_deref_mut() {
            ops.retain(|o| !matches!(o, OpEvent::MemoryRead { .. }));
        }
    }

    /// A home writes `line` back to its memory (timing only).
    #[inline]
    pub fn memory_write(&mut self, line: u64) {
        if let Some(ops) = self.ops.as_deref_mut() {
            ops.push(OpEvent::MemoryWrite { line });
        }
    }
}

/// A message in flight (the checker's state holds these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Envelope<M> {
    pub to: AgentId,
    pub vc: u8,
    pub from: AgentId,
    pub msg: M,
}

/// The channel in one write (the checker hashes every state it reaches).
impl<M: Hash> Hash for Envelope<M> {
    #[inline(always)]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u32(self.to as u32 | (self.vc as u32) << 8 | (self.from as u32) << 16);
        self.msg.hash(h);
    }
}

/// Packed (for the checker's frontier) in two bytes and the message's own
/// encoding: `to` and `vc` share the first byte when `to < 32` and
/// `vc < 7`, the common case; otherwise 0xFF and the three bytes.
impl<M: Pack> Pack for Envelope<M> {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        if self.to < 32 && self.vc < 7 {
            out.extend_from_slice(&[self.to | self.vc << 5, self.from]);
        } else {
            out.extend_from_slice(&[0xFF, self.to, self.vc, self.from]);
        }
        self.msg.pack(out);
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let b = get_byte(src);
        let (to, vc) = if b == 0xFF { (get_byte(src), get_byte(src)) } else { (b & 31, b >> 5) };
        let from = get_byte(src);
        Envelope { to, vc, from, msg: M::unpack(src) }
    }
}

/// Scalarsets per protocol, at most.
pub const MAX_SCALARSETS: usize = 4;
/// Elements per scalarset, at most.
pub const MAX_SCALARSET: usize = 64;

/// A scalarset (Ip and Dill, "Better verification through symmetry"): a
/// set of identities the protocol treats alike, so that renaming them maps
/// reachable states to reachable states with the same verdicts. Declared
/// once per protocol ([`Protocol::scalarsets`]); the checker derives the
/// canonical form from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scalarset {
    pub name: &'static str,
    pub size: usize,
    /// The protocol gives each element a key ([`Protocol::element_keys`]):
    /// elements are sorted by key and only equal keys are permuted, instead
    /// of trying all `size!` renamings. Unkeyed sets (small ones: data
    /// values, addresses) have every permutation tried.
    pub keyed: bool,
    /// Keyed only: an element's key determines everything the state says
    /// about it, so elements with equal keys are interchangeable and one
    /// order of them suffices.
    pub complete: bool,
}

/// A renaming of every scalarset: `of(set, x)` is the new name of element
/// `x` of scalarset `set`.
#[derive(Clone, PartialEq, Eq)]
pub struct Renaming {
    map: [[u8; MAX_SCALARSET]; MAX_SCALARSETS],
}

impl Default for Renaming {
    fn default() -> Self {
        let mut map = [[0u8; MAX_SCALARSET]; MAX_SCALARSETS];
        for m in map.iter_mut() {
            for (i, x) in m.iter_mut().enumerate() {
                *x = i as u8;
            }
        }
        Renaming { map }
    }
}

impl std::fmt::Debug for Renaming {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.map.iter().map(|m| &m[..8])).finish()
    }
}

impl Renaming {
    /// The new name of element `x` of scalarset `set`.
    #[inline(always)]
    pub fn of(&self, set: usize, x: u8) -> u8 {
        self.map[set][x as usize]
    }

    /// Name element `x` of scalarset `set` `y`.
    #[inline]
    pub fn set(&mut self, set: usize, x: u8, y: u8) {
        self.map[set][x as usize] = y;
    }

    /// The renamed bit mask of a set of elements of scalarset `set`.
    #[inline]
    pub fn mask(&self, set: usize, mut m: u64) -> u64 {
        let mut out = 0;
        while m != 0 {
            out |= 1u64 << self.of(set, m.trailing_zeros() as u8);
            m &= m - 1;
        }
        out
    }
}

/// A protocol: its agents, messages, channels, invariants.
pub trait Protocol {
    /// All agent kinds of the protocol, as one enum (compact, hashable).
    type Agent: Clone + Eq + Hash + Debug;
    /// All message kinds, with their fields.
    type Msg: Copy + Eq + Ord + Hash + Debug;
    /// Global bookkeeping that is part of the state but of no agent.
    type Ghost: Clone + Eq + Hash + Debug;
    /// A spontaneous action of an agent.
    type Action: Copy + Eq + Debug;

    fn name(&self) -> String;
    /// Ordering of each virtual channel.
    fn vc_orders(&self) -> &[ChannelOrder];
    /// Most messages in flight per (source, destination, VC).
    fn capacity(&self) -> usize {
        usize::MAX
    }
    /// The initial states (several when a parameter is left free).
    fn initial(&self) -> Vec<(Vec<Self::Agent>, Self::Ghost)>;
    fn on_message(
        &self,
        agent: &mut Self::Agent,
        ctx: &mut Ctx<Self::Msg, Self::Ghost>,
        from: AgentId,
        msg: Self::Msg,
    ) -> Result<Step, Violation>;
    /// Spontaneous actions enabled for `agent` (id `me`).
    fn actions(&self, agent: &Self::Agent, me: AgentId, ghost: &Self::Ghost, out: &mut Vec<Self::Action>);
    fn act(
        &self,
        agent: &mut Self::Agent,
        ctx: &mut Ctx<Self::Msg, Self::Ghost>,
        action: Self::Action,
    ) -> Result<(), Violation>;
    /// Environment actions (new requests from outside the protocol) do not
    /// count as progress when looking for deadlocks.
    fn is_environment(&self, _action: &Self::Action) -> bool {
        false
    }
    /// Invariants over the whole state; `Err(name: detail)` on a violation.
    fn invariant(&self, agents: &[Self::Agent], ghost: &Self::Ghost) -> Result<(), (String, String)>;
    /// Protocol-specific counters of a timed run (summary.json `protocol`).
    fn stats(&self, _agents: &[Self::Agent]) -> Vec<(String, f64)> {
        Vec::new()
    }
    /// The counters of a core agent's own cache in a timed run (summary.json
    /// `caches`, its `protocol` row). None: the agent has no cache with a
    /// capacity, or the protocol does not count. Counters stay out of the
    /// checker's state (kept in a timed-only store, or in a
    /// [`crate::agents::cache::Beside`]).
    fn cache_counters(&self, _agent: &Self::Agent) -> Option<CacheCounters> {
        None
    }
    /// Whether an agent waits for something (a transaction in progress).
    fn busy(&self, agent: &Self::Agent) -> bool;
    /// Symmetry reduction: the protocol's scalarsets (Ip and Dill), the
    /// sets of interchangeable identities (caches, data values,
    /// addresses). The checker stores one state per orbit of the group of
    /// all their renamings. Empty (the default) means no symmetry.
    fn scalarsets(&self) -> Vec<Scalarset> {
        Vec::new()
    }
    /// Rename a state: write the agents of `from`, renamed by `r`, into
    /// `to` (same length; an agent that is an element of a scalarset moves
    /// to its new index), and rename the ghost and every message in flight
    /// (its `to`, `from` and fields) in place. The caller puts the messages
    /// back in canonical order. Must be a group action: renaming by `r`
    /// then by `s` equals renaming by `s ∘ r`.
    fn rename(
        &self,
        _r: &Renaming,
        _from: &[Self::Agent],
        _to: &mut [Self::Agent],
        _ghost: &mut Self::Ghost,
        _mail: &mut [Envelope<Self::Msg>],
    ) {
    }
    /// For a scalarset declared `keyed`: a key per element (`out[e]`) of
    /// the state renamed by `r` (`r` renames only the scalarsets that are
    /// not keyed). Keys must not depend on the names of keyed elements:
    /// renaming the state by a permutation `π` of keyed elements gives
    /// element `π(e)` the key `e` had. The checker then only tries the
    /// renamings that sort the elements by key (and every order of
    /// elements with equal keys, unless the set is `complete`).
    fn element_keys(
        &self,
        _set: usize,
        _r: &Renaming,
        _agents: &[Self::Agent],
        _ghost: &Self::Ghost,
        _mail: &[Envelope<Self::Msg>],
        out: &mut [u64],
    ) {
        out.fill(0);
    }
    /// A short name of agent `id` for traces ("cache1", "dir0").
    fn agent_name(&self, id: AgentId) -> String {
        format!("agent{id}")
    }

    // ---------------------------------------------------------------- timing
    // What the timing engine needs beyond the checker; the defaults suit a
    // protocol with no data messages whose cores are driven by their own
    // (environment) actions.

    /// Where agent `id` sits on the fabric.
    fn role(&self, _id: AgentId) -> Role {
        Role::Core
    }
    /// Whether a message carries a line of data (its size on the wire, and
    /// a home's memory access before sending it).
    fn carries_data(&self, _msg: &Self::Msg) -> bool {
        false
    }
    /// Lines of data a message carries (a snoop response may carry
    /// several): its size on the wire is the control size plus this many
    /// lines.
    fn data_lines(&self, msg: &Self::Msg) -> u32 {
        self.carries_data(msg) as u32
    }
    /// Bytes of data and extra header fields a message carries on top of
    /// its control part, for a protocol whose messages are not whole lines
    /// (a word-sized write-through, a Release's counter); None: sized by
    /// [`Protocol::data_lines`].
    fn payload_bytes(&self, _msg: &Self::Msg) -> Option<u32> {
        None
    }
    /// The most bytes [`Protocol::payload_bytes`] returns (sizes the fabric's buffers).
    fn max_payload_bytes(&self) -> u32 {
        0
    }
    /// The most lines one message carries (sizes the fabric's buffers).
    fn max_data_lines(&self) -> u32 {
        1
    }
    /// Cache accesses a core's handler of `msg` makes (timing: each costs
    /// the core's `cache_latency`). An InvBlk snoop touches every line it
    /// names, which is ESF's reason long blocks stop paying.
    fn cache_accesses(&self, _msg: &Self::Msg) -> u32 {
        1
    }
    /// Processing time of agent `id`'s handler of `msg`, when it is not
    /// its role's (`cache_latency` per access at a core,
    /// `directory_latency` at a home); a memory read still adds
    /// `memory_latency`. The root complex pays its 17 ns on a request from
    /// the PCIe link only, the host's cache its own hit time.
    fn handler_latency(&self, _id: AgentId, _msg: &Self::Msg) -> Option<Time> {
        None
    }
    /// How long handling `msg` keeps agent `id` from handling the next
    /// message (None: the role's, `directory_service` at a home and none
    /// at a core): a blade's NIC processing unit, which serves its network
    /// messages one at a time.
    fn occupancy(&self, _id: AgentId, _msg: &Self::Msg) -> Option<Time> {
        None
    }
    /// Time agent `id` spends on `action` before its sends leave, on top
    /// of its role's: a thread's critical section before the release that
    /// ends it.
    fn action_latency(&self, _id: AgentId, _action: &Self::Action) -> Option<Time> {
        None
    }
    /// How long agent `id`'s own (non-environment) `action` keeps it from
    /// its next action (None: the engine's `issue_interval`): an in-order
    /// core that hits its L1 waits for the hit before its next load.
    fn action_busy(&self, _id: AgentId, _action: &Self::Action) -> Option<Time> {
        None
    }
    /// A name per virtual channel, for traffic tables (default `vcN`).
    fn vc_names(&self) -> Vec<String> {
        (0..self.vc_orders().len()).map(|i| format!("vc{i}")).collect()
    }
    /// The environment action that performs workload operation `op` at
    /// `agent` now, or None if it cannot start yet (no free MSHR, a
    /// transaction on the line in progress): the engine offers it again
    /// after the agent's next change.
    fn workload_action(&self, _agent: &Self::Agent, _me: AgentId, _op: &WorkOp) -> Option<Self::Action> {
        None
    }
    /// Whether `actions` can ever give agent `id` an action. The timing
    /// engine steps an agent that cannot only if a driver issues to it (a
    /// workload's core): a home with nothing to do on its own then costs
    /// no event after each message it handles.
    fn has_actions(&self, _id: AgentId) -> bool {
        true
    }
}
