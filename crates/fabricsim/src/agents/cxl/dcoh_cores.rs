//! DCOH with program cores: a litmus program's loads and stores run on
//! the host-side requesters, one requester per thread, to lines of one
//! device (a line per location).
//!
//! Beside the checked protocol's requesters, which read and write any
//! line at random ([`Dcoh`]'s environment actions), each requester here
//! has a core with the shared front end (`coherence::core`: SC, TSO or
//! RC) that issues its thread's operations: a load hits in S, E or M and
//! otherwise sends MemRdS, a store hits in E or M and otherwise sends
//! MemRdE with its value (the requester's pending store). Everything else
//! (the requesters' answers to BISnp, the device, its snoop filter, the
//! invariants, the mutants) is [`Dcoh`]'s own. The device's snoop filter
//! holds one entry, as `fabricsim check` sizes it by default, so two
//! locations already make it back-invalidate.

use std::sync::Arc;

use smallvec::SmallVec;

use super::dcoh::{Action as DcohAction, Agent as DcohAgent, Dcoh, Ghost, Msg, Mutant, St, Val};
use crate::agents::coherence::core::{Core, FrontEnd, Next, STORE_BUFFER};
use crate::agents::protocol::{AgentId, ChannelOrder, Ctx, OpKind, Protocol, Role, Step, Violation};
use crate::engine::pack::{get_byte, Pack};
use crate::programs::{Op, Order, Outcome, Program, Value};

/// Locations a program may use: the invariant tracks at most 8 lines.
pub const MAX_LINES: usize = 8;

/// What a requester's outstanding request on a line is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Wait {
    #[default]
    None,
    /// Operation `i` of the core's thread.
    Op(u8),
    /// The TSO store buffer's head.
    Drain,
}

/// A DCOH agent; a requester's has its core and what each line's request
/// is for (a device's: an idle core and none).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Node {
    pub core: Core,
    pub waits: SmallVec<[Wait; 4]>,
    pub agent: DcohAgent,
}

impl std::borrow::Borrow<DcohAgent> for Node {
    fn borrow(&self) -> &DcohAgent {
        &self.agent
    }
}

/// A core's front-end move or a device's victim choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Core(Next),
    Device(DcohAction),
}

#[derive(Debug, Clone)]
pub struct DcohCores {
    pub dcoh: Dcoh,
    pub program: Arc<Program>,
    pub front_end: FrontEnd,
}

fn val(v: Value) -> Option<Val> {
    Val::try_from(v).ok()
}

impl DcohCores {
    /// One requester per thread of `program` behind `front_end`, one
    /// device with a one-entry snoop filter, BISnp blocks of up to
    /// `invblk` lines; an error says what does not fit.
    pub fn new(program: Arc<Program>, front_end: FrontEnd, invblk: u8, mutant: Option<Mutant>) -> Result<Self, String> {
        let locs = program.locations.len();
        if locs > MAX_LINES {
            return Err(format!("{locs} locations: dcoh's cores run at most {MAX_LINES} (its invariant's lines)"));
        }
        if program.threads.iter().flatten().any(|op| matches!(op, Op::Rmw { .. })) {
            return Err("dcoh's requesters have no read-modify-write (a store's value goes with its MemRdE)".into());
        }
        let stores = program.threads.iter().flatten().filter_map(|op| match op {
            Op::Store { value, .. } => Some(*value),
            _ => None,
        });
        if let Some(v) = program.init.iter().copied().chain(stores).find(|&v| val(v).is_none()) {
            return Err(format!("value {v}: dcoh's data are 0 to 255"));
        }
        let dcoh = Dcoh::checked(program.threads.len(), 1, locs.max(1) as u64, 1, invblk, 1).with_mutant(mutant);
        Ok(DcohCores { dcoh, program, front_end })
    }

    fn requesters(&self) -> usize {
        self.program.threads.len()
    }

    /// Perform `op` on its line now if the requester holds it so (true),
    /// else start the miss it needs, marked for `wait`.
    fn access(&self, n: &mut Node, ctx: &mut Ctx<Msg, Ghost>, op: Op, wait: Wait) -> Result<bool, Violation> {
        let DcohAgent::Requester(r) = &mut n.agent else { unreachable!("cores are requesters") };
        let (line, store) = match op {
            Op::Load { loc, reg, .. } => {
                if let Some(l) = r.lines.get(loc as u64).filter(|l| l.st != St::I) {
                    n.core.regs[reg as usize] = l.data as Value;
                    return Ok(true);
                }
                (loc, None)
            }
            Op::Store { loc, value, .. } => {
                let v = val(value).expect("checked by new");
                if let Some(l) = r.lines.get_mut(loc as u64).filter(|l| matches!(l.st, St::E | St::M)) {
                    l.st = St::M;
                    l.data = v;
                    ctx.ghost.last[loc as usize] = v;
                    return Ok(true);
                }
                (loc, Some(v))
            }
            Op::Fence { .. } => return Ok(true),
            Op::Rmw { .. } => unreachable!("refused by new"),
        };
        self.dcoh.miss(r, ctx, line as u64, store);
        n.waits[line as usize] = wait;
        Ok(false)
    }

    /// The final outcome of a quiescent state: registers, and each line's
    /// value (an M or E copy's, else the device's memory).
    pub fn outcome(&self, agents: &[Node]) -> Outcome {
        let p = &self.program;
        let regs = (0..self.requesters()).map(|t| agents[t].core.regs[..p.registers[t].len()].to_vec()).collect();
        let mem = (0..p.locations.len() as u64)
            .map(|line| {
                let owned = agents[..self.requesters()].iter().find_map(|n| match &n.agent {
                    DcohAgent::Requester(r) => r.lines.get(line).filter(|l| matches!(l.st, St::E | St::M)),
                    DcohAgent::Device(_) => None,
                });
                match (owned, &agents[self.dcoh.device_of(line) as usize].agent) {
                    (Some(l), _) => l.data as Value,
                    (None, DcohAgent::Device(d)) => d.mem[self.dcoh.local(line) as usize] as Value,
                    (None, DcohAgent::Requester(_)) => unreachable!("the device follows the requesters"),
                }
            })
            .collect();
        Outcome { regs, mem }
    }
}

impl Protocol for DcohCores {
    type Agent = Node;
    type Msg = Msg;
    type Ghost = Ghost;
    type Action = Action;

    fn name(&self) -> String {
        format!("dcoh-{}", self.program.name)
    }

    fn vc_orders(&self) -> &[ChannelOrder] {
        self.dcoh.vc_orders()
    }

    fn vc_names(&self) -> Vec<String> {
        self.dcoh.vc_names()
    }

    /// The checked protocol's state with the program's initial memory.
    fn initial(&self) -> Vec<(Vec<Node>, Ghost)> {
        let p = &self.program;
        let (agents, mut ghost) = self.dcoh.initial().remove(0);
        let nodes = agents
            .into_iter()
            .enumerate()
            .map(|(i, mut agent)| {
                let core = match p.threads.get(i) {
                    Some(ops) => Core { len: ops.len() as u8, ..Core::default() },
                    None => Core::default(),
                };
                if let DcohAgent::Device(d) = &mut agent {
                    for (line, &v) in p.init.iter().enumerate() {
                        d.mem[self.dcoh.local(line as u64) as usize] = val(v).expect("checked by new");
                    }
                }
                let waits = if i < self.requesters() {
                    SmallVec::from_elem(Wait::None, p.locations.len())
                } else {
                    SmallVec::new()
                };
                Node { core, waits, agent }
            })
            .collect();
        for (line, &v) in p.init.iter().enumerate() {
            ghost.last[line] = val(v).expect("checked by new");
        }
        vec![(nodes, ghost)]
    }

    fn on_message(&self, n: &mut Node, ctx: &mut Ctx<Msg, Ghost>, from: AgentId, msg: Msg) -> Result<Step, Violation> {
        let step = self.dcoh.on_message(&mut n.agent, ctx, from, msg)?;
        // The data a request waited for: its operation is performed (a
        // store's value went in with it; a load reads the data, which a
        // snoop deferred behind it may already have invalidated).
        if let Msg::MemData { line, data, .. } = msg {
            if (ctx.me as usize) < self.requesters() {
                match std::mem::take(&mut n.waits[line as usize]) {
                    Wait::None => {}
                    Wait::Op(i) => {
                        if let Op::Load { reg, .. } = self.program.threads[ctx.me as usize][i as usize] {
                            n.core.regs[reg as usize] = data as Value;
                        }
                        ctx.done(i as u64);
                        n.core.finish(self.front_end, i);
                    }
                    Wait::Drain => {
                        n.core.sb.pop();
                    }
                }
            }
        }
        Ok(step)
    }

    fn actions(&self, n: &Node, me: AgentId, ghost: &Ghost, out: &mut Vec<Action>) {
        match &n.agent {
            DcohAgent::Device(_) => {
                let mut own = Vec::new();
                self.dcoh.actions(&n.agent, me, ghost, &mut own);
                out.extend(own.into_iter().map(Action::Device));
            }
            DcohAgent::Requester(r) => {
                let prog = &self.program.threads[me as usize];
                let free = |loc: Option<u8>| {
                    loc.is_none_or(|l| n.waits[l as usize] == Wait::None && !r.wbs.iter().any(|w| w.0 == l as u64))
                };
                n.core.next_moves(self.front_end, prog, STORE_BUFFER, false, free, |m| out.push(Action::Core(m)));
            }
        }
    }

    fn act(&self, n: &mut Node, ctx: &mut Ctx<Msg, Ghost>, action: Action) -> Result<(), Violation> {
        let me = ctx.me as usize;
        match action {
            Action::Device(a) => return self.dcoh.act(&mut n.agent, ctx, a),
            Action::Core(Next::Step) => {
                let i = n.core.pc;
                let op = self.program.threads[me][i as usize];
                ctx.issued(i as u64, if matches!(op, Op::Store { .. }) { OpKind::Store } else { OpKind::Load });
                if self.front_end == FrontEnd::Tso && n.core.tso_buffered(op) {
                    ctx.done(i as u64);
                } else if self.access(n, ctx, op, Wait::Op(i))? {
                    n.core.pc += 1;
                    ctx.done(i as u64);
                } else {
                    n.core.waiting = true;
                }
            }
            Action::Core(Next::Drain) => {
                let (loc, value) = *n.core.sb.head().expect("a buffered store drains");
                let store = Op::Store { loc, value, order: Order::Relaxed };
                if self.access(n, ctx, store, Wait::Drain)? {
                    n.core.sb.pop();
                }
            }
            Action::Core(Next::Perform(j)) => {
                let op = self.program.threads[me][j as usize];
                ctx.issued(j as u64, if matches!(op, Op::Store { .. }) { OpKind::Store } else { OpKind::Load });
                if self.access(n, ctx, op, Wait::Op(j))? {
                    n.core.done |= 1 << j;
                    ctx.done(j as u64);
                } else {
                    n.core.inflight |= 1 << j;
                }
            }
        }
        Ok(())
    }

    fn invariant(&self, agents: &[Node], ghost: &Ghost) -> Result<(), (String, String)> {
        self.dcoh.lines_invariant(agents, ghost)
    }

    fn busy(&self, n: &Node) -> bool {
        self.dcoh.busy(&n.agent) || !n.core.finished()
    }

    fn agent_name(&self, id: AgentId) -> String {
        if (id as usize) < self.requesters() {
            format!("P{id}")
        } else {
            self.dcoh.agent_name(id)
        }
    }

    fn role(&self, id: AgentId) -> Role {
        self.dcoh.role(id)
    }

    fn carries_data(&self, msg: &Msg) -> bool {
        self.dcoh.carries_data(msg)
    }
}

impl Pack for Wait {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            Wait::None => out.push(0),
            Wait::Op(i) => out.extend_from_slice(&[1, i]),
            Wait::Drain => out.push(2),
        }
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Wait::None,
            1 => Wait::Op(get_byte(src)),
            2 => Wait::Drain,
            k => panic!("{k} is not a packed wait"),
        }
    }
}

crate::pack_struct!(Node { core, waits, agent });
