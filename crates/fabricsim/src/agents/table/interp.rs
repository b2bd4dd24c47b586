//! The one interpreter: a [`Protocol`] that executes a compiled table.
//! A message's row is the first in file order whose guard holds; every
//! row of an action whose guard holds is a transition (Murphi's rules).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use super::model::{Act, Agent, Env, Msg, Ty, UNDEF};
use super::spec::{Row, Spec, St, Target, To};
use crate::agents::protocol::{
    AgentId, ChannelOrder, Ctx, Envelope, Protocol, Renaming, Role, Scalarset, Step, Violation,
};

pub struct TableProtocol {
    pub spec: Arc<Spec>,
    /// Per row: whether it ever fired (its actions ran, though a full
    /// channel may then have disabled the transition; a `stall` row: a
    /// message waited by it).
    fired: Vec<AtomicBool>,
    /// Per protocol-wide state: whether an agent was ever in it.
    reached: Vec<AtomicBool>,
    orders: Vec<ChannelOrder>,
    /// Per machine and message kind: its event number, or `NONE`.
    msg_event: Vec<u8>,
    /// Per machine: its actions (the first events).
    actions: Vec<usize>,
    symmetry: bool,
    /// Scalarset numbers: per machine (those with several instances), the data values and the addresses.
    node_set: Vec<Option<usize>>,
    data_set: Option<usize>,
    addr_set: Option<usize>,
    /// The most lines of any machine (1: no machine is per address).
    addr_lines: usize,
    size_name: String,
    /// This instance's number in the invariant memo.
    id: u64,
}

const NONE: u8 = u8::MAX;

/// Systems of at most this many agents have their invariants memoised.
const MEMO_AGENTS: usize = 8;
/// Entries of the per-thread memo (direct-mapped).
const MEMO_SIZE: usize = 4096;

/// An (agents, ghost) whose invariants held, for protocol `proto`.
#[derive(Clone, Copy, Default)]
struct MemoEntry {
    proto: u64,
    n: u8,
    ghost: u64,
    agents: [u128; MEMO_AGENTS],
}

impl MemoEntry {
    #[inline]
    fn matches(&self, proto: u64, agents: &[Agent], ghost: u64) -> bool {
        self.proto == proto
            && self.n as usize == agents.len()
            && self.ghost == ghost
            && self.agents.iter().zip(agents).all(|(x, a)| *x == a.0)
    }
}

thread_local! {
    static MEMO: std::cell::RefCell<Vec<MemoEntry>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Protocol instances are told apart in the memo by a number of their own (0: none yet).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

#[inline]
fn memo_key(proto: u64, agents: &[Agent], ghost: u64) -> u64 {
    let mut h = proto ^ ghost.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for a in agents {
        h = (h ^ a.0 as u64 ^ (a.0 >> 64) as u64).wrapping_mul(0x100_0000_01B3).rotate_left(29);
    }
    h ^ h >> 32
}

fn undefined(what: String) -> Violation {
    Violation { kind: "undefined value", detail: what }
}

impl TableProtocol {
    pub fn new(spec: Spec, symmetry: bool, size_name: String) -> Self {
        let nk = spec.msgs.len();
        let mut msg_event = vec![NONE; spec.machines.len() * nk.max(1)];
        let mut actions = Vec::new();
        for (m, mc) in spec.machines.iter().enumerate() {
            for (e, ev) in mc.events.iter().enumerate() {
                if let Some(k) = ev.msg {
                    msg_event[m * nk + k as usize] = e as u8;
                }
            }
            actions.push(mc.events.iter().filter(|e| e.msg.is_none()).count());
        }
        let mut sets = 0;
        let node_set = spec
            .machines
            .iter()
            .map(|m| {
                (symmetry && m.count > 1).then(|| {
                    sets += 1;
                    sets - 1
                })
            })
            .collect();
        let uses_data = spec.machines.iter().flat_map(|m| &m.vars).chain(&spec.ghosts).any(|v| v.ty == Ty::Data)
            || spec.msgs.iter().flat_map(|k| &k.fields).any(|f| f.1 == Ty::Data);
        let data_set = (symmetry && uses_data).then(|| {
            sets += 1;
            sets - 1
        });
        let per_address = spec.machines.iter().any(|m| m.lines > 1);
        let addr_set = (symmetry && per_address).then_some(sets);
        TableProtocol {
            fired: spec.rows.iter().map(|_| AtomicBool::new(false)).collect(),
            reached: spec.state_machine.iter().map(|_| AtomicBool::new(false)).collect(),
            orders: spec.vcs.iter().map(|v| v.1).collect(),
            msg_event,
            actions,
            symmetry,
            node_set,
            data_set,
            addr_set,
            addr_lines: spec.machines.iter().map(|m| m.lines).max().unwrap_or(1),
            size_name,
            id: NEXT_ID.fetch_add(1, Relaxed),
            spec: Arc::new(spec),
        }
    }

    #[inline]
    fn state(&self, a: &Agent) -> usize {
        self.spec.state_slot.read(a.0) as usize
    }

    /// The rows never fired and the states never reached, as lines of a report.
    /// A per-address machine's row fired if it fired on any line.
    pub fn coverage(&self, source: &[String]) -> Coverage {
        let s = &self.spec;
        let fired: std::collections::BTreeSet<u32> =
            s.rows.iter().zip(&self.fired).filter(|(_, f)| f.load(Relaxed)).map(|(r, _)| r.line).collect();
        let mut unfired: Vec<(u32, String)> = Vec::new();
        for r in &s.rows {
            if !fired.contains(&r.line) && unfired.last().is_none_or(|u| u.0 != r.line) {
                let text = source.get(r.line as usize - 1).map_or("", |l| l.trim());
                unfired.push((r.line, text.to_string()));
            }
        }
        let unreached = self
            .reached
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.load(Relaxed))
            .map(|(g, _)| (s.machines[s.state_machine[g]].name.clone(), s.state_name(g).to_string()))
            .collect();
        Coverage { unfired, unreached }
    }

    fn store(&self, t: &Target, v: i64, env: &mut Env, row: &Row) -> Result<(), Violation> {
        if v == UNDEF && !t.slot.opt {
            return Err(undefined(format!(
                "{}: {} := an undefined value (line {})",
                self.where_(env.own, row),
                t.name,
                row.line
            )));
        }
        if let Ty::Int(lo, hi) = t.ty {
            if v != UNDEF && !(lo..=hi).contains(&v) {
                return Err(Violation {
                    kind: "out of range",
                    detail: format!(
                        "{}: {} := {v}, outside {lo}..{hi} (line {})",
                        self.where_(env.own, row),
                        t.name,
                        row.line
                    ),
                });
            }
        }
        if t.ghost {
            env.ghost = t.slot.write(env.ghost as u128, v) as u64;
        } else {
            env.own = t.slot.write(env.own, v);
        }
        Ok(())
    }

    fn where_(&self, own: u128, row: &Row) -> String {
        let s = &self.spec;
        let m = &s.machines[row.machine];
        let line = if m.lines > 1 { format!(" (address {})", row.addr) } else { String::new() };
        format!("{}{line} in {} on {}", m.name, s.state_name(row.state.read(own) as usize), row.name)
    }

    /// Run `row`'s actions on the agent.
    #[inline]
    fn fire(&self, r: usize, agent: &mut Agent, ctx: &mut Ctx<Msg, u64>, env: &mut Env) -> Result<(), Violation> {
        let row = &self.spec.rows[r];
        if !self.fired[r].load(Relaxed) {
            self.fired[r].store(true, Relaxed);
        }
        for st in &row.body {
            match st {
                St::Assign(t, x) => {
                    let v = x.eval(env);
                    self.store(t, v, env, row)?;
                }
                St::Add(t, x) | St::Remove(t, x) => {
                    let v = x.eval(env);
                    if v == UNDEF {
                        return Err(undefined(format!(
                            "{}: {} changed by an undefined node (line {})",
                            self.where_(env.own, row),
                            t.name,
                            row.line
                        )));
                    }
                    let word = if t.ghost { env.ghost as u128 } else { env.own };
                    let cur = t.slot.read(word);
                    let new = if matches!(st, St::Add(..)) { cur | v } else { cur & !v };
                    self.store(t, new, env, row)?;
                }
                St::Send { kind, vc, fields, to } => {
                    let mut m = Msg { kind: *kind, f: [0; 3], addr: env.addr };
                    for (i, f) in fields {
                        let v = f.value.eval(env);
                        if v == UNDEF && !f.slot.opt {
                            return Err(undefined(format!(
                                "{}: field {} of {} is undefined (line {})",
                                self.where_(env.own, row),
                                f.name,
                                self.spec.msgs[*kind as usize].name,
                                row.line
                            )));
                        }
                        if let Ty::Int(lo, hi) = f.ty {
                            if v != UNDEF && !(lo..=hi).contains(&v) {
                                return Err(Violation {
                                    kind: "out of range",
                                    detail: format!(
                                        "{}: field {} = {v}, outside {lo}..{hi} (line {})",
                                        self.where_(env.own, row),
                                        f.name,
                                        row.line
                                    ),
                                });
                            }
                        }
                        m.f[*i as usize] = f.slot.write(0, v) as u8;
                    }
                    let dest = match to {
                        To::Set(base, x) => {
                            let mut set = x.eval(env);
                            if set == UNDEF {
                                return Err(undefined(format!(
                                    "{}: sent to an undefined set (line {})",
                                    self.where_(env.own, row),
                                    row.line
                                )));
                            }
                            while set != 0 {
                                ctx.send(base + set.trailing_zeros() as u8, *vc, m);
                                set &= set - 1;
                            }
                            continue;
                        }
                        To::Agent(a) => *a,
                        To::Node(base, x) => match x.eval(env) {
                            UNDEF => {
                                return Err(undefined(format!(
                                    "{}: sent to an undefined node (line {})",
                                    self.where_(env.own, row),
                                    row.line
                                )))
                            }
                            v => base + v as u8,
                        },
                    };
                    ctx.send(dest, *vc, m);
                }
                St::Assert(x, kind) => {
                    if x.eval(env) == 0 {
                        return Err(Violation {
                            kind,
                            detail: format!("{} (line {})", self.where_(env.own, row), row.line),
                        });
                    }
                }
            }
        }
        if let Some(n) = row.next {
            env.own = row.state.write(env.own, n as i64);
            if !self.reached[n].load(Relaxed) {
                self.reached[n].store(true, Relaxed);
            }
        }
        agent.0 = env.own;
        *ctx.ghost = env.ghost;
        Ok(())
    }

    /// Every invariant, in file order: the first that fails.
    fn evaluate_invariants(&self, agents: &[Agent], ghost: &u64) -> Result<(), (String, String)> {
        let mut env = Env::new(0, *ghost);
        env.agents = agents;
        for inv in &self.spec.invariants {
            if inv.ex.eval(&mut env) == 0 {
                return Err((inv.name.clone(), format!("invariant {} (line {}) is false", inv.name, inv.line)));
            }
        }
        Ok(())
    }

    fn rename_value(&self, r: &Renaming, t: Ty, v: i64) -> i64 {
        if v == UNDEF {
            return v;
        }
        match t {
            Ty::Data => self.data_set.map_or(v, |s| r.of(s, v as u8) as i64),
            Ty::Node(m) => self.node_set[m].map_or(v, |s| r.of(s, v as u8) as i64),
            Ty::Set(m) => self.node_set[m].map_or(v, |s| r.mask(s, v as u64) as i64),
            _ => v,
        }
    }

    /// The actions of one line (all of a machine that is not per address),
    /// whose cells start at `first`.
    #[inline]
    fn line_actions(&self, env: &mut Env, m: usize, first: usize, out: &mut Vec<Act>) {
        let s = &*self.spec;
        for ev in 0..self.actions[m] {
            let cell = s.cells[first + ev];
            let param = s.machines[m].events[ev].param;
            for &r in &s.order[cell.start as usize..cell.end as usize] {
                let row = &s.rows[r as usize];
                match param {
                    None => {
                        if row.guard.as_ref().is_none_or(|x| x.eval(env) != 0) {
                            out.push(Act { row: r, param: -1, env: row.env, name: row.name });
                        }
                    }
                    Some((_, lo, n)) => {
                        for p in lo..lo + n {
                            env.param = p;
                            if row.guard.as_ref().is_none_or(|x| x.eval(env) != 0) {
                                out.push(Act { row: r, param: p as i16, env: row.env, name: row.name });
                            }
                        }
                    }
                }
            }
        }
    }

    fn rename_addr(&self, r: &Renaming, a: usize) -> usize {
        self.addr_set.map_or(a, |s| r.of(s, a as u8) as usize)
    }

    fn rename_agent_id(&self, r: &Renaming, a: AgentId) -> AgentId {
        let (m, i) = self.spec.agents[a as usize];
        match self.node_set[m] {
            Some(s) => self.spec.machines[m].base + r.of(s, i as u8),
            None => a,
        }
    }
}

/// What a search never used.
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    /// Rows (line, text) that never fired.
    pub unfired: Vec<(u32, String)>,
    /// (machine, state) never reached.
    pub unreached: Vec<(String, String)>,
}

impl Coverage {
    pub fn text(&self) -> String {
        let mut s = String::new();
        if self.unfired.is_empty() {
            s += "every transition fired\n";
        } else {
            s += &format!("{} transitions never fired:\n", self.unfired.len());
            for (l, t) in &self.unfired {
                s += &format!("  line {l}: {t}\n");
            }
        }
        if self.unreached.is_empty() {
            s += "every state reached\n";
        } else {
            s += &format!("{} states never reached:\n", self.unreached.len());
            for (m, st) in &self.unreached {
                s += &format!("  {m} {st}\n");
            }
        }
        s
    }
}

impl Protocol for TableProtocol {
    type Agent = Agent;
    type Msg = Msg;
    type Ghost = u64;
    type Action = Act;

    fn name(&self) -> String {
        match &self.spec.mutant {
            Some(m) => format!("{}-{}-{m}", self.spec.name, self.size_name),
            None => format!("{}-{}", self.spec.name, self.size_name),
        }
    }

    fn vc_orders(&self) -> &[ChannelOrder] {
        &self.orders
    }

    fn vc_names(&self) -> Vec<String> {
        self.spec.vcs.iter().map(|v| v.0.clone()).collect()
    }

    fn capacity(&self) -> usize {
        self.spec.capacity
    }

    fn initial(&self) -> Vec<(Vec<Agent>, u64)> {
        let s = &self.spec;
        let domains: Vec<(i64, i64)> =
            s.starts.iter().map(|(_, t, one)| if *one { (s.domain(*t).0, 1) } else { s.domain(*t) }).collect();
        let combos: i64 = domains.iter().map(|d| d.1).product();
        let mut out = Vec::new();
        for mut c in 0..combos {
            let mut env = Env::new(0, 0);
            for (k, (lo, n)) in domains.iter().enumerate() {
                env.bound[k] = lo + c % n;
                c /= n;
            }
            for g in &s.ghosts {
                let v = g.init.as_ref().map_or(if g.slot.opt { UNDEF } else { g.slot.lo }, |x| x.eval(&mut env));
                for a in 0..g.lines {
                    env.ghost = g.slot.at(a, g.slot.width).write(env.ghost as u128, v) as u64;
                }
            }
            let mut agents = Vec::new();
            for m in &s.machines {
                let mut w = 0;
                self.reached[m.state_base].store(true, Relaxed);
                for a in 0..m.lines {
                    w = m.at(s.state_slot, a).write(w, m.state_base as i64);
                    for v in &m.vars {
                        let x =
                            v.init.as_ref().map_or(if v.slot.opt { UNDEF } else { v.slot.lo }, |x| x.eval(&mut env));
                        w = m.at(v.slot, a).write(w, x);
                    }
                }
                agents.extend((0..m.count).map(|_| Agent(w)));
            }
            out.push((agents, env.ghost));
        }
        out
    }

    fn on_message(
        &self,
        agent: &mut Agent,
        ctx: &mut Ctx<Msg, u64>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        let s = &*self.spec;
        let g0 = self.state(agent);
        let m = s.state_machine[g0];
        let mc = &s.machines[m];
        // a per-address machine's event is its line's (the message's address)
        let (a, g) = if mc.lines > 1 {
            let a = msg.addr as usize;
            (a, mc.at(s.state_slot, a).read(agent.0) as usize)
        } else {
            (0, g0)
        };
        let ev = self.msg_event[m * s.msgs.len() + msg.kind as usize];
        let show = || {
            let at = if mc.lines > 1 { format!(" (address {a})") } else { String::new() };
            format!(
                "{}{at} in {} got {} from {}",
                mc.name,
                s.state_name(g),
                s.show_msg(msg.kind, msg.f),
                s.agent_name(from as usize)
            )
        };
        if ev == NONE {
            return Err(Violation { kind: "unexpected message", detail: show() });
        }
        let cell = s.cells[a * s.ncells + s.cell_start[g] + ev as usize];
        if cell.impossible {
            return Err(Violation { kind: "impossible", detail: format!("{} (declared impossible)", show()) });
        }
        let mut env = Env::new(agent.0, *ctx.ghost);
        env.msg = msg;
        env.addr = msg.addr;
        env.src = s.agents[from as usize].1 as i64;
        for &r in &s.order[cell.start as usize..cell.end as usize] {
            let row = &s.rows[r as usize];
            if row.guard.as_ref().is_none_or(|x| x.eval(&mut env) != 0) {
                if row.stall {
                    if !self.fired[r as usize].load(Relaxed) {
                        self.fired[r as usize].store(true, Relaxed);
                    }
                    return Ok(Step::Stall);
                }
                self.fire(r as usize, agent, ctx, &mut env)?;
                return Ok(Step::Done);
            }
        }
        Err(Violation { kind: "no transition", detail: format!("{}: no row's guard holds", show()) })
    }

    fn actions(&self, agent: &Agent, _me: AgentId, ghost: &u64, out: &mut Vec<Act>) {
        let s = &*self.spec;
        let m = s.state_machine[self.state(agent)];
        let mc = &s.machines[m];
        let mut env = Env::new(agent.0, *ghost);
        for a in 0..mc.lines {
            let g = mc.at(s.state_slot, a).read(agent.0) as usize;
            self.line_actions(&mut env, m, a * s.ncells + s.cell_start[g], out);
        }
    }

    fn act(&self, agent: &mut Agent, ctx: &mut Ctx<Msg, u64>, action: Act) -> Result<(), Violation> {
        let mut env = Env::new(agent.0, *ctx.ghost);
        env.param = if action.param < 0 { UNDEF } else { action.param as i64 };
        env.addr = self.spec.rows[action.row as usize].addr;
        self.fire(action.row as usize, agent, ctx, &mut env)
    }

    fn is_environment(&self, action: &Act) -> bool {
        action.env
    }

    fn invariant(&self, agents: &[Agent], ghost: &u64) -> Result<(), (String, String)> {
        // Invariants read the machines and the ghosts, not the messages in
        // flight: many states share those, so a small per-thread memo of
        // the (agents, ghost) that passed saves most evaluations.
        let hit = agents.len() <= MEMO_AGENTS && {
            let key = memo_key(self.id, agents, *ghost);
            MEMO.with(|m| {
                let m = m.borrow();
                m.get(key as usize % MEMO_SIZE).is_some_and(|e| e.matches(self.id, agents, *ghost))
            })
        };
        if hit {
            return Ok(());
        }
        self.evaluate_invariants(agents, ghost)?;
        if agents.len() <= MEMO_AGENTS {
            let key = memo_key(self.id, agents, *ghost);
            MEMO.with(|m| {
                let mut m = m.borrow_mut();
                if m.is_empty() {
                    m.resize(MEMO_SIZE, MemoEntry::default());
                }
                let e = &mut m[key as usize % MEMO_SIZE];
                e.proto = self.id;
                e.n = agents.len() as u8;
                e.ghost = *ghost;
                for (x, a) in e.agents.iter_mut().zip(agents) {
                    *x = a.0;
                }
            });
        }
        Ok(())
    }

    fn busy(&self, agent: &Agent) -> bool {
        let s = &*self.spec;
        let g = self.state(agent);
        if s.transient[g] {
            return true;
        }
        if self.addr_lines == 1 {
            return false;
        }
        let mc = &s.machines[s.state_machine[g]];
        (1..mc.lines).any(|a| s.transient[mc.at(s.state_slot, a).read(agent.0) as usize])
    }

    fn scalarsets(&self) -> Vec<Scalarset> {
        if !self.symmetry {
            return Vec::new();
        }
        let s = &self.spec;
        let mut out: Vec<Scalarset> = s
            .machines
            .iter()
            .zip(&self.node_set)
            .filter(|(_, n)| n.is_some())
            .map(|(m, _)| Scalarset {
                name: Box::leak(m.name.to_uppercase().into_boxed_str()),
                size: m.count,
                keyed: false,
                complete: false,
            })
            .collect();
        if self.data_set.is_some() {
            out.push(Scalarset { name: "DATA", size: s.values, keyed: false, complete: false });
        }
        if self.addr_set.is_some() {
            out.push(Scalarset { name: "ADDRESS", size: s.addresses, keyed: false, complete: false });
        }
        out
    }

    fn rename(&self, r: &Renaming, from: &[Agent], to: &mut [Agent], ghost: &mut u64, mail: &mut [Envelope<Msg>]) {
        let s = &*self.spec;
        for (i, a) in from.iter().enumerate() {
            let m = s.state_machine[self.state(a)];
            let mc = &s.machines[m];
            let mut w = a.0;
            if mc.lines == 1 {
                for v in &mc.vars {
                    if matches!(v.ty, Ty::Data | Ty::Node(_) | Ty::Set(_)) {
                        w = v.slot.write(w, self.rename_value(r, v.ty, v.slot.read(w)));
                    }
                }
            } else {
                // line `l` moves to the renamed address's place
                w = 0;
                for l in 0..mc.lines {
                    let to = self.rename_addr(r, l);
                    w = mc.at(s.state_slot, to).write(w, mc.at(s.state_slot, l).read(a.0));
                    for v in &mc.vars {
                        let x = mc.at(v.slot, l).read(a.0);
                        w = mc.at(v.slot, to).write(w, self.rename_value(r, v.ty, x));
                    }
                }
            }
            to[self.rename_agent_id(r, i as AgentId) as usize] = Agent(w);
        }
        let old = *ghost as u128;
        for g in &s.ghosts {
            if g.lines > 1 {
                for l in 0..g.lines {
                    let x = self.rename_value(r, g.ty, g.slot.at(l, g.slot.width).read(old));
                    let to = g.slot.at(self.rename_addr(r, l), g.slot.width);
                    *ghost = to.write(*ghost as u128, x) as u64;
                }
            } else if matches!(g.ty, Ty::Data | Ty::Node(_) | Ty::Set(_)) {
                *ghost = g.slot.write(*ghost as u128, self.rename_value(r, g.ty, g.slot.read(*ghost as u128))) as u64;
            }
        }
        for e in mail.iter_mut() {
            e.to = self.rename_agent_id(r, e.to);
            e.from = self.rename_agent_id(r, e.from);
            if self.addr_set.is_some() {
                e.msg.addr = self.rename_addr(r, e.msg.addr as usize) as u8;
            }
            let k = &s.msgs[e.msg.kind as usize];
            for (i, (_, t, slot)) in k.fields.iter().enumerate() {
                if matches!(t, Ty::Data | Ty::Node(_)) {
                    let v = slot.read(e.msg.f[i] as u128);
                    e.msg.f[i] = slot.write(0, self.rename_value(r, *t, v)) as u8;
                }
            }
        }
    }

    fn agent_name(&self, id: AgentId) -> String {
        self.spec.agent_name(id as usize)
    }

    fn role(&self, id: AgentId) -> Role {
        self.spec.machines[self.spec.agents[id as usize].0].role
    }

    fn carries_data(&self, msg: &Msg) -> bool {
        let k = &self.spec.msgs[msg.kind as usize];
        k.fields.iter().enumerate().any(|(i, f)| f.1 == Ty::Data && f.2.read(msg.f[i] as u128) != UNDEF)
    }

    fn has_actions(&self, id: AgentId) -> bool {
        self.actions[self.spec.agents[id as usize].0] > 0
    }
}
