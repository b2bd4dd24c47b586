//! German's protocol with program cores: a litmus program's loads and
//! stores run on german.m's rules, one german.m line per location.
//!
//! A separate construction beside [`German`]'s free-running clients (as
//! `Directory::running` is beside `Directory::free`): german.m's model and
//! its state counts stay exactly Rumur's. Here agents `0..T` are the
//! cores, one per thread, each with the shared front end
//! ([`super::core`]: SC, TSO or RC) and a german.m client line per
//! location; agents `T..T+L` are the homes, one per location, each
//! german.m's home. A load needs S or E (ReqS from I), a store or RMW
//! needs E (ReqE from I or S); the rules of the home and the answer to an
//! Inv are [`German`]'s own, so its mutants apply unchanged.

use std::sync::Arc;

use smallvec::SmallVec;

use super::core::{Core, FrontEnd, Next, STORE_BUFFER};
use super::german::{
    props, Action as Rule, CacheState, Client, Cmd, Data, German, Home, Msg, CHAN1, CHAN2, CHAN3, CHANNEL_NAMES, ORDERS,
};
use crate::agents::protocol::{AgentId, ChannelOrder, Ctx, OpKind, Protocol, Role, Step, Violation};
use crate::engine::pack::{get_byte, Pack};
use crate::programs::{Op, Outcome, Program, Value};

/// Threads a home's InvSet and ShrSet (32-bit masks) can name.
pub const MAX_CORES: usize = 32;

/// The program operation a line's request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Wait {
    #[default]
    None,
    /// Operation `i` of the core's thread.
    Op(u8),
    /// The TSO store buffer's head.
    Drain,
}

/// A core's german.m client line for one location, and what its
/// outstanding request (if any) is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Line {
    pub client: Client,
    pub wait: Wait,
}

impl Default for Line {
    fn default() -> Self {
        Line { client: Client { state: CacheState::I, data: None }, wait: Wait::None }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Agent {
    Core { core: Core, lines: SmallVec<[Line; 4]> },
    Home(Home),
}

/// A german.m message on location `loc`'s line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineMsg {
    pub loc: u8,
    pub msg: Msg,
}

/// A core's front-end move or a home's german.m rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Core(Next),
    Home(Rule),
}

/// AuxData per location: the latest value stored there.
pub type Aux = SmallVec<[Data; 8]>;

/// German's protocol whose clients are the cores of `program`.
#[derive(Debug, Clone)]
pub struct GermanCores {
    pub rules: German,
    pub program: Arc<Program>,
    pub front_end: FrontEnd,
}

/// A program value as german.m's data.
fn data(v: Value) -> Option<Data> {
    Data::try_from(v).ok()
}

impl GermanCores {
    /// One core per thread of `program` behind `front_end`, german.m's
    /// rules of `rules` (its mutant); an error names what does not fit.
    pub fn new(rules: German, program: Arc<Program>, front_end: FrontEnd) -> Result<Self, String> {
        if program.threads.len() > MAX_CORES {
            return Err(format!(
                "{} threads: german's home names at most {MAX_CORES} clients (ShrSet)",
                program.threads.len()
            ));
        }
        let values = program.init.iter().copied().chain(program.threads.iter().flatten().filter_map(|op| match op {
            Op::Store { value, .. } => Some(*value),
            _ => None,
        }));
        for v in values {
            if data(v).is_none() {
                return Err(format!("value {v}: german's data are 0 to 255"));
            }
        }
        Ok(GermanCores { rules, program, front_end })
    }

    fn cores(&self) -> usize {
        self.program.threads.len()
    }

    fn home_of(&self, loc: u8) -> AgentId {
        (self.cores() + loc as usize) as AgentId
    }

    /// Perform `op` on `loc`'s line now if the line allows it (true), else
    /// send the request it needs and mark the line waiting for `wait`.
    fn access(
        &self,
        core: &mut Core,
        line: &mut Line,
        ctx: &mut Ctx<LineMsg, Aux>,
        loc: u8,
        op: Op,
        wait: Wait,
    ) -> Result<bool, Violation> {
        let c = &mut line.client;
        let need_e = match op {
            Op::Load { reg, .. } => {
                if let (CacheState::S | CacheState::E, Some(d)) = (c.state, c.data) {
                    core.regs[reg as usize] = d as Value;
                    return Ok(true);
                }
                false
            }
            Op::Store { value, .. } => {
                if self.rules.may_store(c.state) {
                    self.write(c, ctx, loc, value)?;
                    return Ok(true);
                }
                true
            }
            Op::Rmw { reg, kind, .. } => {
                if let (true, Some(d)) = (self.rules.may_store(c.state), c.data) {
                    core.regs[reg as usize] = d as Value;
                    if let Some(new) = kind.apply(d as Value) {
                        self.write(c, ctx, loc, new)?;
                    }
                    return Ok(true);
                }
                true
            }
            Op::Fence { .. } => return Ok(true),
        };
        let msg = if need_e { Msg::ReqE } else { Msg::ReqS };
        ctx.send(self.home_of(loc), CHAN1, LineMsg { loc, msg });
        line.wait = wait;
        Ok(false)
    }

    /// Store(i, d): the line's data and AuxData.
    fn write(&self, c: &mut Client, ctx: &mut Ctx<LineMsg, Aux>, loc: u8, v: Value) -> Result<(), Violation> {
        let d = data(v).ok_or_else(|| Violation {
            kind: "value out of range",
            detail: format!("{v} at location {loc}: german's data are 0 to 255"),
        })?;
        c.data = Some(d);
        ctx.ghost[loc as usize] = d;
        Ok(())
    }

    /// A grant arrived on `loc`'s line: what waited for it goes on.
    fn granted(
        &self,
        me: AgentId,
        core: &mut Core,
        line: &mut Line,
        ctx: &mut Ctx<LineMsg, Aux>,
        loc: u8,
    ) -> Result<(), Violation> {
        match std::mem::take(&mut line.wait) {
            Wait::None => return Err(Violation::unexpected(line.client, "a grant nothing asked for")),
            Wait::Op(i) => {
                let op = self.program.threads[me as usize][i as usize];
                if self.access(core, line, ctx, loc, op, Wait::Op(i))? {
                    ctx.done(i as u64);
                    core.finish(self.front_end, i);
                }
            }
            Wait::Drain => {
                let (l, v) = *core.sb.head().expect("the store waiting for its line");
                debug_assert_eq!(l, loc);
                if self.rules.may_store(line.client.state) {
                    self.write(&mut line.client, ctx, loc, v)?;
                    core.sb.pop();
                } else {
                    ctx.send(self.home_of(loc), CHAN1, LineMsg { loc, msg: Msg::ReqE });
                    line.wait = Wait::Drain;
                }
            }
        }
        Ok(())
    }

    /// The final outcome of a quiescent state: registers, and each
    /// location's value (an E copy's, else the home's MemData).
    pub fn outcome(&self, agents: &[Agent]) -> Outcome {
        let p = &self.program;
        let regs = (0..self.cores())
            .map(|t| match &agents[t] {
                Agent::Core { core, .. } => core.regs[..p.registers[t].len()].to_vec(),
                Agent::Home(_) => unreachable!("agents 0..T are cores"),
            })
            .collect();
        let mem = (0..p.locations.len())
            .map(|l| {
                let owned = agents[..self.cores()].iter().find_map(|a| match a {
                    Agent::Core { lines, .. } if lines[l].client.state == CacheState::E => lines[l].client.data,
                    _ => None,
                });
                match (owned, &agents[self.home_of(l as u8) as usize]) {
                    (Some(d), _) | (None, &Agent::Home(Home { mem_data: d, .. })) => d as Value,
                    (None, Agent::Core { .. }) => unreachable!("agents T.. are homes"),
                }
            })
            .collect();
        Outcome { regs, mem }
    }
}

impl Protocol for GermanCores {
    type Agent = Agent;
    type Msg = LineMsg;
    type Ghost = Aux;
    type Action = Action;

    fn name(&self) -> String {
        format!("{}-{}", self.rules.name(), self.program.name)
    }

    fn vc_orders(&self) -> &[ChannelOrder] {
        &ORDERS
    }

    fn vc_names(&self) -> Vec<String> {
        CHANNEL_NAMES.map(String::from).to_vec()
    }

    /// Every channel is german.m's single slot.
    fn capacity(&self) -> usize {
        1
    }

    fn initial(&self) -> Vec<(Vec<Agent>, Aux)> {
        let p = &self.program;
        let init: Aux = p.init.iter().map(|&v| data(v).expect("checked by new")).collect();
        let mut agents: Vec<Agent> = p
            .threads
            .iter()
            .map(|ops| Agent::Core {
                core: Core { len: ops.len() as u8, ..Core::default() },
                lines: (0..p.locations.len()).map(|_| Line::default()).collect(),
            })
            .collect();
        agents.extend(init.iter().map(|&d| {
            Agent::Home(Home {
                inv_set: 0,
                shr_set: 0,
                ex_gntd: false,
                cur_cmd: Cmd::Empty,
                cur_ptr: None,
                mem_data: d,
            })
        }));
        vec![(agents, init)]
    }

    fn on_message(
        &self,
        agent: &mut Agent,
        ctx: &mut Ctx<LineMsg, Aux>,
        from: AgentId,
        m: LineMsg,
    ) -> Result<Step, Violation> {
        let me = ctx.me;
        match agent {
            Agent::Home(h) => self.rules.home_receives(h, ctx, from, m.msg),
            Agent::Core { core, lines } => {
                let line = &mut lines[m.loc as usize];
                match m.msg {
                    Msg::Inv => {
                        let ack = self.rules.inv_ack(&mut line.client);
                        ctx.send(self.home_of(m.loc), CHAN3, LineMsg { loc: m.loc, msg: ack });
                    }
                    Msg::GntS(d) | Msg::GntE(d) => {
                        let e = matches!(m.msg, Msg::GntE(_));
                        line.client = Client { state: if e { CacheState::E } else { CacheState::S }, data: Some(d) };
                        self.granted(me, core, line, ctx, m.loc)?;
                    }
                    _ => return Err(Violation::unexpected(line.client, m)),
                }
                Ok(Step::Done)
            }
        }
    }

    fn actions(&self, agent: &Agent, me: AgentId, _ghost: &Aux, out: &mut Vec<Action>) {
        match agent {
            Agent::Home(h) => self.rules.home_actions(h, |r| out.push(Action::Home(r))),
            Agent::Core { core, lines } => {
                let prog = &self.program.threads[me as usize];
                let free = |loc: Option<u8>| loc.is_none_or(|l| lines[l as usize].wait == Wait::None);
                core.next_moves(self.front_end, prog, STORE_BUFFER, false, free, |n| out.push(Action::Core(n)));
            }
        }
    }

    fn act(&self, agent: &mut Agent, ctx: &mut Ctx<LineMsg, Aux>, action: Action) -> Result<(), Violation> {
        let me = ctx.me;
        match (agent, action) {
            (Agent::Home(h), Action::Home(r)) => {
                // the home of location l is agent T + l
                let loc = (me as usize - self.cores()) as u8;
                self.rules.home_act(h, ctx, r, |ctx, i, msg| ctx.send(i, CHAN2, LineMsg { loc, msg }));
            }
            (Agent::Core { core, lines }, Action::Core(n)) => {
                let prog = &self.program.threads[me as usize];
                match n {
                    Next::Step => {
                        let i = core.pc;
                        let op = prog[i as usize];
                        ctx.issued(i as u64, op_kind(op));
                        if self.front_end == FrontEnd::Tso && core.tso_buffered(op) {
                            ctx.done(i as u64);
                            return Ok(());
                        }
                        let done = match op.loc() {
                            None => true,
                            Some(l) => self.access(core, &mut lines[l as usize], ctx, l, op, Wait::Op(i))?,
                        };
                        if done {
                            core.pc += 1;
                            ctx.done(i as u64);
                        } else {
                            core.waiting = true;
                        }
                    }
                    Next::Drain => {
                        let (l, v) = *core.sb.head().expect("a buffered store drains");
                        let line = &mut lines[l as usize];
                        if self.rules.may_store(line.client.state) {
                            self.write(&mut line.client, ctx, l, v)?;
                            core.sb.pop();
                        } else {
                            ctx.send(self.home_of(l), CHAN1, LineMsg { loc: l, msg: Msg::ReqE });
                            line.wait = Wait::Drain;
                        }
                    }
                    Next::Perform(j) => {
                        let op = prog[j as usize];
                        ctx.issued(j as u64, op_kind(op));
                        let done = match op.loc() {
                            None => true,
                            Some(l) => self.access(core, &mut lines[l as usize], ctx, l, op, Wait::Op(j))?,
                        };
                        if done {
                            core.done |= 1 << j;
                            ctx.done(j as u64);
                        } else {
                            core.inflight |= 1 << j;
                        }
                    }
                }
            }
            (a, action) => return Err(Violation { kind: "bad action", detail: format!("{action:?} for {a:?}") }),
        }
        Ok(())
    }

    /// german.m's CntrlProp and DataProp on every location's line.
    fn invariant(&self, agents: &[Agent], aux: &Aux) -> Result<(), (String, String)> {
        let (cores, homes) = agents.split_at(self.cores());
        for (l, h) in homes.iter().enumerate() {
            let Agent::Home(h) = h else { unreachable!("agents T.. are homes") };
            let clients = cores.iter().map(|a| match a {
                Agent::Core { lines, .. } => &lines[l].client,
                Agent::Home(_) => unreachable!("agents 0..T are cores"),
            });
            props(h, clients, aux[l]).map_err(|(name, why)| (name, format!("{}: {why}", self.program.locations[l])))?;
        }
        Ok(())
    }

    fn busy(&self, agent: &Agent) -> bool {
        match agent {
            Agent::Core { core, lines } => !core.finished() || lines.iter().any(|l| l.wait != Wait::None),
            Agent::Home(h) => h.cur_cmd != Cmd::Empty,
        }
    }

    fn agent_name(&self, id: AgentId) -> String {
        match (id as usize).checked_sub(self.cores()) {
            None => format!("P{id}"),
            Some(l) => format!("home({})", self.program.locations[l]),
        }
    }

    fn role(&self, id: AgentId) -> Role {
        if (id as usize) < self.cores() {
            Role::Core
        } else {
            Role::Home
        }
    }

    fn carries_data(&self, m: &LineMsg) -> bool {
        matches!(m.msg, Msg::GntS(_) | Msg::GntE(_) | Msg::InvAck(Some(_)))
    }
}

fn op_kind(op: Op) -> OpKind {
    match op {
        Op::Load { .. } | Op::Fence { .. } => OpKind::Load,
        Op::Store { .. } => OpKind::Store,
        Op::Rmw { .. } => OpKind::Rmw,
    }
}

// Packing: a message as its line and german.m's code; a core as the front
// end's core and its lines; a home as german.m's.

impl Pack for LineMsg {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        out.push(self.loc);
        self.msg.pack(out);
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let loc = get_byte(src);
        LineMsg { loc, msg: Msg::unpack(src) }
    }
}

impl Pack for Line {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        super::german::Agent::Client(self.client).pack(out);
        match self.wait {
            Wait::None => out.push(0),
            Wait::Op(i) => out.extend_from_slice(&[1, i]),
            Wait::Drain => out.push(2),
        }
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let super::german::Agent::Client(client) = super::german::Agent::unpack(src) else {
            panic!("a packed line is a client's")
        };
        let wait = match get_byte(src) {
            0 => Wait::None,
            1 => Wait::Op(get_byte(src)),
            2 => Wait::Drain,
            k => panic!("{k} is not a packed wait"),
        };
        Line { client, wait }
    }
}

impl Pack for Agent {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            Agent::Core { core, lines } => {
                out.push(0);
                core.pack(out);
                lines.pack(out);
            }
            Agent::Home(h) => {
                out.push(1);
                super::german::Agent::Home(*h).pack(out);
            }
        }
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Agent::Core { core: Core::unpack(src), lines: Pack::unpack(src) },
            _ => match super::german::Agent::unpack(src) {
                super::german::Agent::Home(h) => Agent::Home(h),
                super::german::Agent::Client(_) => panic!("a packed home is german.m's home"),
            },
        }
    }
}
