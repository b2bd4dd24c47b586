//! GCS as one [`Protocol`]: its agents, actions and channels, for the
//! checker and the timing engine alike.

use std::collections::BTreeMap;

use super::blade::{BLine, Blade};
use super::directory::{DEntry, Dir};
use super::messages::{Line, Msg, CHANNELS};
use super::thread::{St, Thread};
use super::{Mutant, Variant};
use crate::agents::protocol::{AgentId, ChannelOrder, Ctx, OpKind, Protocol, Role, Step, Violation, WorkOp};
use crate::engine::Time;
use crate::programs::Value;

/// (Debug: `text.rs`.)
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Node {
    Thread(Thread),
    Blade(Blade),
    Dir(Dir),
    /// The memory blade: each line's data (checking; timed runs keep none).
    Mem(BTreeMap<Line, Value>),
}

/// Per lock, the value its last writer released (checking: a reader or
/// writer entering must see it).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Ghost {
    pub last: Vec<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A thread asks for lock `line`, to write or to read.
    Acquire { line: Line, write: bool },
    /// A thread leaves its critical section.
    Release,
}

#[derive(Debug, Clone)]
pub struct Gcs {
    pub variant: Variant,
    pub mutant: Option<Mutant>,
    pub blades: usize,
    /// Threads per blade.
    pub threads: usize,
    pub locks: usize,
    /// Checking: which acquires a thread may make (read, write). Timed
    /// threads take theirs from the workload, so none are listed (listing
    /// every lock at every step made the timed run O(locks) an operation).
    pub modes: (bool, bool),
    /// Timing: the bytes of a lock's region (the grant's data) and of a
    /// MIND page (a line's data without combined data).
    pub region_bytes: u32,
    pub page_bytes: u32,
    /// Timing: the blade controller's time per message (None: the role's
    /// `directory_latency`), and a critical section's length.
    pub blade_latency: Option<Time>,
    pub cs: Time,
    /// Timing: a blade's NIC processing unit's time per network message it
    /// receives, one at a time (0: none).
    pub nic_service: Time,
    /// Checking: track values (the ghost's last writes).
    pub values: bool,
}

impl Gcs {
    /// A checkable system: `blades` blades of `threads` threads over `locks` locks.
    pub fn checking(variant: Variant, blades: usize, threads: usize, locks: usize, modes: (bool, bool)) -> Self {
        Gcs {
            variant,
            mutant: None,
            blades,
            threads,
            locks,
            modes,
            region_bytes: 64,
            page_bytes: 4096,
            blade_latency: None,
            cs: 0,
            nic_service: 0,
            values: true,
        }
    }

    /// A timed system (values are not kept).
    pub fn timed(variant: Variant, blades: usize, threads: usize, locks: usize) -> Self {
        Gcs { values: false, ..Self::checking(variant, blades, threads, locks, (false, false)) }
    }

    pub fn with_mutant(mut self, m: Option<Mutant>) -> Self {
        self.mutant = m;
        self
    }

    pub(super) fn is(&self, m: Mutant) -> bool {
        self.mutant == Some(m)
    }

    pub fn thread_count(&self) -> usize {
        self.blades * self.threads
    }

    pub(super) fn blade_of(&self, thread: AgentId) -> AgentId {
        (self.thread_count() + thread as usize / self.threads) as AgentId
    }

    pub(super) fn blade_agent(&self, b: u8) -> AgentId {
        (self.thread_count() + b as usize) as AgentId
    }

    pub(super) fn dir_agent(&self) -> AgentId {
        (self.thread_count() + self.blades) as AgentId
    }

    pub(super) fn mem_agent(&self) -> AgentId {
        self.dir_agent() + 1
    }

    /// Whether `line` is a lock (else the page of a lock's region).
    pub(super) fn is_lock(&self, line: Line) -> bool {
        (line as usize) < self.locks
    }

    /// The line holding lock `line`'s region without combined data.
    pub(super) fn data_line(&self, lock: Line) -> Line {
        lock + self.locks as Line
    }

    /// The grant of a lock carries its region (combined data, §3.3).
    pub(super) fn combined(&self) -> bool {
        !matches!(self.variant, Variant::NoData | Variant::Pthread)
    }

    /// pthread's rwlock layered on MSI (the baseline).
    pub(super) fn layered(&self) -> bool {
        self.variant == Variant::Pthread
    }

    pub(super) fn locality(&self) -> bool {
        self.variant != Variant::NoLocality
    }

    /// Bytes of `line`'s data on the wire.
    fn data_bytes(&self, line: Line) -> u32 {
        match (self.is_lock(line), self.variant) {
            // pthread's lock word sits on a page of its own, which MIND moves whole
            (true, Variant::Pthread) => self.page_bytes,
            (true, Variant::NoData) => 0,
            (true, _) => self.region_bytes,
            (false, _) => self.page_bytes,
        }
    }
}

impl Protocol for Gcs {
    type Agent = Node;
    type Msg = Msg;
    type Ghost = Ghost;
    type Action = Action;

    fn name(&self) -> String {
        let m = self.mutant.and_then(|m| super::MUTANTS.iter().find(|x| x.1 == m)).map(|m| m.0);
        format!("gcs-{}{}", self.variant.name(), m.map(|m| format!("+{m}")).unwrap_or_default())
    }

    fn vc_orders(&self) -> &[ChannelOrder] {
        use ChannelOrder::*;
        &[Fifo, Fifo, Fifo, Fifo, Fifo, Unordered, Unordered]
    }

    fn initial(&self) -> Vec<(Vec<Node>, Ghost)> {
        let mut agents: Vec<Node> = (0..self.thread_count()).map(|_| Node::Thread(Thread::default())).collect();
        agents.extend((0..self.blades).map(|_| Node::Blade(Blade::default())));
        agents.push(Node::Dir(Dir::default()));
        agents.push(Node::Mem(BTreeMap::new()));
        let last = if self.values { vec![0; self.locks] } else { Vec::new() };
        vec![(agents, Ghost { last })]
    }

    fn on_message(
        &self,
        agent: &mut Node,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        match agent {
            Node::Thread(t) => self.thread_message(t, ctx, msg).map(|_| Step::Done),
            Node::Blade(b) => self.blade_message(b, ctx, from, msg).map(|_| Step::Done),
            Node::Dir(d) => self.dir_message(d, ctx, from, msg),
            Node::Mem(m) => {
                match msg {
                    Msg::Read { line, to, write } => {
                        ctx.memory_read(line as u64);
                        let val = m.get(&line).copied().unwrap_or(0);
                        ctx.send(from, super::messages::MEMRESP, Msg::MemData { line, to, write, val });
                    }
                    Msg::Wb { line, val } => {
                        ctx.memory_write(line as u64);
                        // kept when timed too: pthread's lock words live in memory
                        m.insert(line, val);
                    }
                    _ => return Err(Violation::unexpected("memory blade", msg)),
                }
                Ok(Step::Done)
            }
        }
    }

    fn actions(&self, agent: &Node, _me: AgentId, _ghost: &Ghost, out: &mut Vec<Action>) {
        let Node::Thread(t) = agent else { return };
        match t.st {
            St::Idle if self.modes.0 || self.modes.1 => {
                for line in 0..self.locks as Line {
                    for write in [false, true] {
                        if (write && self.modes.1) || (!write && self.modes.0) {
                            out.push(Action::Acquire { line, write });
                        }
                    }
                }
            }
            St::Cs => out.push(Action::Release),
            St::Idle | St::Wait | St::Rel => {}
        }
    }

    fn act(&self, agent: &mut Node, ctx: &mut Ctx<Msg, Ghost>, action: Action) -> Result<(), Violation> {
        let Node::Thread(t) = agent else { unreachable!("only threads act") };
        match action {
            Action::Acquire { line, write } => self.acquire(t, ctx, line, write),
            Action::Release => self.release(t, ctx),
        }
        Ok(())
    }

    fn is_environment(&self, action: &Action) -> bool {
        matches!(action, Action::Acquire { .. })
    }

    fn invariant(&self, agents: &[Node], _ghost: &Ghost) -> Result<(), (String, String)> {
        // generalized SWMR: over each lock's whole critical section
        let mut inside: BTreeMap<Line, (u32, u32)> = BTreeMap::new();
        for a in &agents[..self.thread_count()] {
            if let Node::Thread(t) = a {
                if t.st == St::Cs {
                    let e = inside.entry(t.line).or_default();
                    if t.write {
                        e.1 += 1
                    } else {
                        e.0 += 1
                    }
                }
            }
        }
        for (line, (r, w)) in inside {
            if w > 1 || (w == 1 && r > 0) {
                return Err((
                    "swmr".into(),
                    format!("lock {line}: {w} writers and {r} readers in their critical sections"),
                ));
            }
        }
        // one queue holder, the directory's, outside a hand-off
        let Node::Dir(d) = &agents[self.dir_agent() as usize] else { unreachable!("the directory") };
        let mut holders: BTreeMap<Line, Vec<usize>> = BTreeMap::new();
        for (b, a) in agents[self.thread_count()..self.dir_agent() as usize].iter().enumerate() {
            if let Node::Blade(bl) = a {
                for (&line, l) in &bl.lines {
                    if l.holder && !l.transferring {
                        holders.entry(line).or_default().push(b);
                    }
                }
            }
        }
        for (line, hs) in holders {
            let dir = d.lines.get(&line).and_then(|e: &DEntry| e.holder);
            if hs.len() > 1 || dir != Some(hs[0] as u8) {
                return Err((
                    "one queue holder".into(),
                    format!("line {line}: blades {hs:?} hold its queue, the directory names {dir:?}"),
                ));
            }
        }
        Ok(())
    }

    fn busy(&self, agent: &Node) -> bool {
        match agent {
            Node::Thread(t) => matches!(t.st, St::Wait | St::Rel),
            Node::Blade(b) => b.lines.values().any(BLine::busy),
            Node::Dir(d) => d.lines.values().any(|e| e.reading != 0 || e.acks > 0),
            Node::Mem(_) => false,
        }
    }

    fn agent_name(&self, id: AgentId) -> String {
        let n = self.thread_count() as AgentId;
        match id {
            _ if id < n => format!("t{}.{}", id as usize / self.threads, id as usize % self.threads),
            _ if id < self.dir_agent() => format!("blade{}", id - n),
            _ if id == self.dir_agent() => "switch".into(),
            _ => "memory".into(),
        }
    }

    fn stats(&self, agents: &[Node]) -> Vec<(String, f64)> {
        let Some(Node::Dir(d)) = agents.get(self.dir_agent() as usize) else { return Vec::new() };
        let s = d.stats;
        vec![
            ("forwards".into(), s.forwards as f64),
            ("transfers".into(), s.transfers as f64),
            ("denials".into(), s.denials as f64),
            ("memory_reads".into(), s.memory_reads as f64),
        ]
    }

    fn role(&self, id: AgentId) -> Role {
        if (id as usize) < self.thread_count() {
            Role::Core
        } else {
            Role::Home
        }
    }

    fn carries_data(&self, msg: &Msg) -> bool {
        msg.carries_data() && self.data_bytes(msg.line()) > 0
    }

    fn payload_bytes(&self, msg: &Msg) -> Option<u32> {
        Some(if msg.carries_data() { self.data_bytes(msg.line()) } else { 0 })
    }

    fn max_payload_bytes(&self) -> u32 {
        self.region_bytes.max(self.page_bytes)
    }

    fn handler_latency(&self, id: AgentId, msg: &Msg) -> Option<Time> {
        let threads = self.thread_count() as AgentId;
        if id < threads {
            // a thread takes its grant and its release's answer at once
            Some(0)
        } else if id < self.dir_agent() {
            self.blade_latency
        } else if id == self.mem_agent() {
            // its read costs `memory_latency` alone
            Some(0)
        } else {
            let _ = msg;
            None
        }
    }

    fn occupancy(&self, id: AgentId, msg: &Msg) -> Option<Time> {
        let blade = (self.thread_count() as AgentId..self.dir_agent()).contains(&id);
        let local = matches!(msg, Msg::Acquire { .. } | Msg::Release { .. });
        (blade && !local).then_some(self.nic_service)
    }

    fn action_latency(&self, _id: AgentId, action: &Action) -> Option<Time> {
        matches!(action, Action::Release).then_some(self.cs)
    }

    fn vc_names(&self) -> Vec<String> {
        CHANNELS.iter().map(|s| s.to_string()).collect()
    }

    fn workload_action(&self, agent: &Node, _me: AgentId, op: &WorkOp) -> Option<Action> {
        let Node::Thread(t) = agent else { return None };
        if t.st != St::Idle {
            return None;
        }
        let line = (op.line % self.locks.max(1) as u64) as Line;
        match op.kind {
            OpKind::Load => Some(Action::Acquire { line, write: false }),
            OpKind::Store | OpKind::Rmw => Some(Action::Acquire { line, write: true }),
            _ => None,
        }
    }

    fn has_actions(&self, id: AgentId) -> bool {
        (id as usize) < self.thread_count()
    }
}
