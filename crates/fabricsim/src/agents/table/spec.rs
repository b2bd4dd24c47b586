//! The compiled form of a table, for one size: what the interpreter runs.

use super::model::{Ex, Slot, Ty};
use crate::agents::protocol::{ChannelOrder, Role};

pub struct Machine {
    pub name: String,
    pub count: usize,
    /// Its first agent id.
    pub base: u8,
    pub role: Role,
    /// Its states, by local number; `state_base + local` is the protocol-wide one.
    pub states: Vec<String>,
    pub state_base: usize,
    pub events: Vec<Event>,
    pub vars: Vec<Var>,
    /// The line of its declaration.
    pub line: u32,
    /// Its lines: the addresses (`per address`), or 1. Line `a`'s state
    /// and variables are its line 0's slots `a * stride` bits higher (line
    /// 0's state is the protocol-wide state slot, which names the machine).
    pub lines: usize,
    pub stride: u8,
}

impl Machine {
    /// Line `a`'s copy of a slot of line 0.
    #[inline(always)]
    pub fn at(&self, s: Slot, a: usize) -> Slot {
        s.at(a, self.stride)
    }
}

pub struct Var {
    pub name: String,
    pub ty: Ty,
    /// Its slot (a per-address ghost's at address 0).
    pub slot: Slot,
    pub init: Option<Ex>,
    /// A per-address ghost: its addresses (else 1), `slot.width` bits apart.
    pub lines: usize,
}

pub struct Event {
    pub name: String,
    /// A message's arrival (its kind), or an action.
    pub msg: Option<u8>,
    /// An action's parameter: its type and values `lo..lo + n`.
    pub param: Option<(Ty, i64, i64)>,
    pub env: bool,
}

#[derive(Debug, Clone)]
pub struct Target {
    pub ghost: bool,
    pub slot: Slot,
    pub name: String,
    pub ty: Ty,
}

pub enum To {
    Agent(u8),
    /// A node id of the machine whose first agent is this.
    Node(u8, Ex),
    /// Every node id in a set, in increasing order.
    Set(u8, Ex),
}

pub struct Field {
    pub slot: Slot,
    pub value: Ex,
    pub name: String,
    pub ty: Ty,
}

pub enum St {
    Assign(Target, Ex),
    Add(Target, Ex),
    Remove(Target, Ex),
    Send {
        kind: u8,
        vc: u8,
        fields: Vec<(u8, Field)>,
        to: To,
    },
    /// A violation of this kind when false.
    Assert(Ex, &'static str),
}

pub struct Row {
    pub machine: usize,
    pub event: usize,
    pub guard: Option<Ex>,
    pub body: Vec<St>,
    /// Protocol-wide state number.
    pub next: Option<usize>,
    pub stall: bool,
    pub line: u32,
    /// The event's name (for traces).
    pub name: &'static str,
    pub env: bool,
    /// The line (address) of a per-address machine this copy of the row is for (else 0).
    pub addr: u8,
    /// That line's state.
    pub state: Slot,
}

/// The rows of one (state, event), in file order, or the pair declared impossible.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cell {
    pub start: u32,
    pub end: u32,
    pub impossible: bool,
}

pub struct MsgKind {
    pub name: String,
    pub vc: u8,
    pub fields: Vec<(String, Ty, Slot)>,
}

pub struct Invariant {
    pub name: String,
    pub ex: Ex,
    pub line: u32,
}

pub struct Spec {
    pub name: String,
    pub machines: Vec<Machine>,
    pub msgs: Vec<MsgKind>,
    pub vcs: Vec<(String, ChannelOrder)>,
    pub capacity: usize,
    pub rows: Vec<Row>,
    /// Row numbers, cell by cell.
    pub order: Vec<u16>,
    /// Line by line (`ncells` each): a per-address machine's rows for line
    /// `a` are at `a * ncells + cell_start[state] + event`.
    pub cells: Vec<Cell>,
    pub ncells: usize,
    pub addresses: usize,
    /// Per protocol-wide state: its machine, its first cell, whether it is transient.
    pub state_machine: Vec<usize>,
    pub cell_start: Vec<usize>,
    pub transient: Vec<bool>,
    pub state_slot: Slot,
    pub ghosts: Vec<Var>,
    /// Start parameters: one initial state per combination of their values.
    /// `one`: the first value only.
    pub starts: Vec<(String, Ty, bool)>,
    pub invariants: Vec<Invariant>,
    /// Per agent id: its machine and index.
    pub agents: Vec<(usize, usize)>,
    pub values: usize,
    pub enums: Vec<(String, Vec<String>)>,
    /// The mutant compiled in, if any.
    pub mutant: Option<String>,
}

impl Spec {
    /// Values of a type: `lo..lo + n`.
    pub fn domain(&self, t: Ty) -> (i64, i64) {
        match t {
            Ty::Bool => (0, 2),
            Ty::Int(lo, hi) => (lo, hi - lo + 1),
            Ty::Enum(e) => (0, self.enums[e].1.len() as i64),
            Ty::Data => (0, self.values as i64),
            Ty::Node(m) => (0, self.machines[m].count as i64),
            Ty::Set(m) => (0, 1 << self.machines[m].count),
            Ty::State(m) => (self.machines[m].state_base as i64, self.machines[m].states.len() as i64),
            Ty::Addr => (0, self.addresses as i64),
        }
    }

    /// A value as the table writes it.
    pub fn show(&self, t: Ty, v: i64) -> String {
        if v == super::model::UNDEF {
            return "undef".into();
        }
        match t {
            Ty::Bool => (v != 0).to_string(),
            Ty::Enum(e) => self.enums[e].1.get(v as usize).cloned().unwrap_or_else(|| v.to_string()),
            Ty::Set(_) => {
                let v: Vec<String> = (0..64).filter(|i| v >> i & 1 == 1).map(|i| i.to_string()).collect();
                format!("{{{}}}", v.join(","))
            }
            Ty::State(_) => self.state_name(v as usize).to_string(),
            _ => v.to_string(),
        }
    }

    pub fn state_name(&self, g: usize) -> &str {
        let m = &self.machines[self.state_machine[g]];
        &m.states[g - m.state_base]
    }

    /// An agent's state and variables, by name (line by line, `[a] ...`, when per address).
    pub fn show_agent(&self, w: u128) -> String {
        let g = self.state_slot.read(w) as usize;
        let Some(&mi) = self.state_machine.get(g) else { return format!("#{w:x}") };
        let m = &self.machines[mi];
        let line = |a: usize| {
            let g = m.at(self.state_slot, a).read(w) as usize;
            let name = self.state_machine.get(g).map_or("?", |_| self.state_name(g));
            let vars: Vec<String> =
                m.vars.iter().map(|v| format!("{}: {}", v.name, self.show(v.ty, m.at(v.slot, a).read(w)))).collect();
            if vars.is_empty() {
                name.to_string()
            } else {
                format!("{name} {{ {} }}", vars.join(", "))
            }
        };
        if m.lines == 1 {
            return line(0);
        }
        (0..m.lines).map(|a| format!("[{a}] {}", line(a))).collect::<Vec<_>>().join("; ")
    }

    pub fn show_msg(&self, kind: u8, f: [u8; 3]) -> String {
        let Some(k) = self.msgs.get(kind as usize) else { return format!("%{kind}") };
        if k.fields.is_empty() {
            return k.name.clone();
        }
        let fs: Vec<String> =
            k.fields.iter().zip(f).map(|((n, t, s), c)| format!("{n}: {}", self.show(*t, s.read(c as u128)))).collect();
        format!("{}({})", k.name, fs.join(", "))
    }

    pub fn agent_name(&self, id: usize) -> String {
        let (m, i) = self.agents[id];
        let m = &self.machines[m];
        if m.count == 1 {
            m.name.clone()
        } else {
            format!("{}{i}", m.name)
        }
    }
}
