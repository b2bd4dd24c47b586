//! A table compiled for one size: names resolved to slots in packed words,
//! expressions to trees the interpreter walks without allocating.

use std::hash::{Hash, Hasher};

use crate::engine::pack::{get_byte, get_varint, put_varint, Pack};

/// Murphi's undefined value.
pub const UNDEF: i64 = i64::MIN;
/// Fields a message carries at most (each at most 255 as coded).
pub const MAX_FIELDS: usize = 3;
/// Bits of a machine's state and variables (an [`Agent`]).
pub const AGENT_BITS: u32 = 128;
/// Bits of the ghost variables.
pub const GHOST_BITS: u32 = 64;
/// Bound variables alive at once (start parameters, quantifiers).
pub const MAX_BOUND: usize = 6;

/// A machine instance: its state (a protocol-wide state number, so that
/// `busy` needs no machine) and its variables, packed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Agent(pub u128);

impl Hash for Agent {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u128(self.0);
    }
}

/// One LEB128 varint of the whole word: a client's few bits in one byte.
impl Pack for Agent {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        let mut x = self.0;
        while x >= 0x80 {
            out.push(x as u8 | 0x80);
            x >>= 7;
        }
        out.push(x as u8);
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let mut x = 0u128;
        let mut shift = 0;
        loop {
            let b = get_byte(src);
            x |= ((b & 0x7f) as u128) << shift;
            if b < 0x80 {
                return Agent(x);
            }
            shift += 7;
        }
    }
}

/// Printed as `#HEX`; a checked table's report spells it out by name
/// (`Table::show_agent`).
impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{:x}", self.0)
    }
}

/// A message: its kind, its fields' codes (0 is undefined for a field
/// that may be) and its address (0 in a table without `per address`
/// machines). The address is last, so that a table without addresses
/// hashes, packs and orders its messages as before addresses existed.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Msg {
    pub kind: u8,
    pub f: [u8; MAX_FIELDS],
    pub addr: u8,
}

impl Msg {
    #[inline]
    fn word(&self) -> u64 {
        (self.kind as u32 | (self.f[0] as u32) << 8 | (self.f[1] as u32) << 16 | (self.f[2] as u32) << 24) as u64
            | (self.addr as u64) << 32
    }
}

impl Hash for Msg {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        let w = self.word();
        if self.addr == 0 {
            h.write_u32(w as u32);
        } else {
            h.write_u64(w);
        }
    }
}

impl Pack for Msg {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        put_varint(out, self.word());
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let w = get_varint(src);
        Msg { kind: w as u8, f: [(w >> 8) as u8, (w >> 16) as u8, (w >> 24) as u8], addr: (w >> 32) as u8 }
    }
}

/// Printed as `%KIND(F0,F1,F2)` (and `@ADDR` when not 0); spelled out by `Table::show_msg`.
impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "%{}({},{},{})", self.kind, self.f[0], self.f[1], self.f[2])?;
        if self.addr != 0 {
            write!(f, "@{}", self.addr)?;
        }
        Ok(())
    }
}

/// A spontaneous transition: the row and its parameter's value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Act {
    pub row: u16,
    pub param: i16,
    pub env: bool,
    pub name: &'static str,
}

impl std::fmt::Debug for Act {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.param < 0 {
            write!(f, "{}", self.name)
        } else {
            write!(f, "{}({})", self.name, self.param)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Bool,
    Int(i64, i64),
    /// An enum type, by index.
    Enum(usize),
    Data,
    /// A node id of a machine.
    Node(usize),
    Set(usize),
    /// A state of a machine (protocol-wide numbers).
    State(usize),
    /// An address (a bound variable of `forall a in address`).
    Addr,
}

/// Where a value lives in a packed word: `width` bits at `off`, coded
/// `v - lo`, or `v - lo + 1` with 0 for undefined when `opt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub off: u8,
    pub width: u8,
    pub opt: bool,
    pub lo: i64,
}

impl Slot {
    #[inline(always)]
    pub fn read(&self, w: u128) -> i64 {
        let code = ((w >> self.off) as u64 & mask(self.width)) as i64;
        if self.opt {
            if code == 0 {
                UNDEF
            } else {
                code - 1 + self.lo
            }
        } else {
            code + self.lo
        }
    }
    /// `v` must be in range (and defined unless `opt`).
    /// The same variable at address `a` of a per-address machine whose lines are `stride` bits apart.
    #[inline(always)]
    pub fn at(&self, a: usize, stride: u8) -> Slot {
        Slot { off: self.off + (a * stride as usize) as u8, ..*self }
    }
    #[inline(always)]
    pub fn write(&self, w: u128, v: i64) -> u128 {
        let code = if v == UNDEF { 0 } else { (v - self.lo + self.opt as i64) as u128 };
        (w & !((mask(self.width) as u128) << self.off)) | code << self.off
    }
}

#[inline(always)]
pub fn mask(width: u8) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Bits that hold `0..=x`.
pub fn bits(x: u64) -> u8 {
    (64 - x.leading_zeros()) as u8
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Implies,
    Add,
    Sub,
    /// Element in set.
    In,
    /// Set union (a `{a, b}` literal, `s + t`).
    Union,
    /// Set difference (`s - t`).
    Diff,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Ex {
    Const(i64),
    Own(Slot),
    Remote {
        base: u8,
        index: Option<Box<Ex>>,
        slot: Slot,
    },
    Field {
        i: u8,
        opt: bool,
        lo: i64,
    },
    Src,
    Param,
    Bound(u8),
    Ghost(Slot),
    /// `MACHINE[i].member[a]`: a per-address variable at address `line`.
    RemoteLine {
        base: u8,
        index: Option<Box<Ex>>,
        line: Box<Ex>,
        slot: Slot,
        stride: u8,
    },
    /// `ghost[a]`: a per-address ghost at address `line`.
    GhostAt {
        line: Box<Ex>,
        slot: Slot,
        stride: u8,
    },
    Not(Box<Ex>),
    Bin(Op, Box<Ex>, Box<Ex>),
    /// `{x}`: the set holding node x.
    Single(Box<Ex>),
    Count(Box<Ex>),
    Quant {
        all: bool,
        var: u8,
        n: u8,
        body: Box<Ex>,
    },
    // Fused forms of the commonest shapes ([`Ex::fuse`]): one node where
    // the tree had three or four, for the invariants' quantified bodies
    // and the guards.
    /// `MACHINE[bound].slot`.
    RemoteB {
        base: u8,
        b: u8,
        slot: Slot,
    },
    /// `MACHINE[bound].slot = c` (or `!=` when not `eq`).
    RemoteCmp {
        base: u8,
        b: u8,
        slot: Slot,
        c: i64,
        eq: bool,
    },
    /// `own slot = c` (or `!=`).
    OwnCmp {
        slot: Slot,
        c: i64,
        eq: bool,
    },
    /// `bound a = bound b` (or `!=`).
    BoundCmp {
        a: u8,
        b: u8,
        eq: bool,
    },
}

/// What an expression sees.
pub struct Env<'a> {
    pub own: u128,
    pub msg: Msg,
    pub src: i64,
    pub param: i64,
    pub ghost: u64,
    pub agents: &'a [Agent],
    pub bound: [i64; MAX_BOUND],
    /// The address the event is about: its messages carry it.
    pub addr: u8,
}

impl<'a> Env<'a> {
    pub fn new(own: u128, ghost: u64) -> Self {
        Env {
            own,
            msg: Msg::default(),
            src: UNDEF,
            param: UNDEF,
            ghost,
            agents: &[],
            bound: [UNDEF; MAX_BOUND],
            addr: 0,
        }
    }
}

impl Ex {
    /// The same expression with the common shapes fused (see the fused variants).
    pub fn fuse(self) -> Ex {
        let b = |x: Ex| Box::new(x.fuse());
        match self {
            Ex::Remote { base, index: Some(i), slot } => match *i {
                Ex::Bound(v) => Ex::RemoteB { base, b: v, slot },
                i => Ex::Remote { base, index: Some(b(i)), slot },
            },
            Ex::Not(x) => Ex::Not(b(*x)),
            Ex::RemoteLine { base, index, line, slot, stride } => {
                Ex::RemoteLine { base, index: index.map(|i| b(*i)), line: b(*line), slot, stride }
            }
            Ex::GhostAt { line, slot, stride } => Ex::GhostAt { line: b(*line), slot, stride },
            Ex::Single(x) => Ex::Single(b(*x)),
            Ex::Count(x) => Ex::Count(b(*x)),
            Ex::Quant { all, var, n, body } => Ex::Quant { all, var, n, body: b(*body) },
            Ex::Bin(op @ (Op::Eq | Op::Ne), x, y) => {
                let eq = op == Op::Eq;
                match (x.fuse(), y.fuse()) {
                    (Ex::RemoteB { base, b, slot }, Ex::Const(c)) | (Ex::Const(c), Ex::RemoteB { base, b, slot }) => {
                        Ex::RemoteCmp { base, b, slot, c, eq }
                    }
                    (Ex::Own(slot), Ex::Const(c)) | (Ex::Const(c), Ex::Own(slot)) => Ex::OwnCmp { slot, c, eq },
                    (Ex::Bound(a), Ex::Bound(b)) => Ex::BoundCmp { a, b, eq },
                    (x, y) => Ex::Bin(op, Box::new(x), Box::new(y)),
                }
            }
            Ex::Bin(op, x, y) => Ex::Bin(op, b(*x), b(*y)),
            x => x,
        }
    }

    /// The value; undefined operands make undefined results (the
    /// interpreter refuses to store or send one where it may not be).
    pub fn eval(&self, env: &mut Env) -> i64 {
        match self {
            Ex::Const(v) => *v,
            Ex::Own(s) => s.read(env.own),
            Ex::Remote { base, index, slot } => {
                let i = match index {
                    Some(e) => e.eval(env),
                    None => 0,
                };
                if i == UNDEF {
                    return UNDEF;
                }
                slot.read(env.agents[*base as usize + i as usize].0)
            }
            Ex::Field { i, opt, lo } => {
                let c = env.msg.f[*i as usize] as i64;
                if *opt {
                    if c == 0 {
                        UNDEF
                    } else {
                        c - 1 + lo
                    }
                } else {
                    c + lo
                }
            }
            Ex::Src => env.src,
            Ex::Param => env.param,
            Ex::Bound(b) => env.bound[*b as usize],
            Ex::Ghost(s) => s.read(env.ghost as u128),
            Ex::RemoteLine { base, index, line, slot, stride } => {
                let i = match index {
                    Some(e) => e.eval(env),
                    None => 0,
                };
                let a = line.eval(env);
                if i == UNDEF || a == UNDEF {
                    return UNDEF;
                }
                slot.at(a as usize, *stride).read(env.agents[*base as usize + i as usize].0)
            }
            Ex::GhostAt { line, slot, stride } => match line.eval(env) {
                UNDEF => UNDEF,
                a => slot.at(a as usize, *stride).read(env.ghost as u128),
            },
            Ex::Not(e) => (e.eval(env) == 0) as i64,
            Ex::Bin(op, a, b) => {
                match op {
                    Op::And => return (a.eval(env) != 0 && b.eval(env) != 0) as i64,
                    Op::Or => return (a.eval(env) != 0 || b.eval(env) != 0) as i64,
                    Op::Implies => return (a.eval(env) == 0 || b.eval(env) != 0) as i64,
                    _ => {}
                }
                let (x, y) = (a.eval(env), b.eval(env));
                match op {
                    Op::Eq => (x == y) as i64,
                    Op::Ne => (x != y) as i64,
                    _ if x == UNDEF || y == UNDEF => UNDEF,
                    Op::Lt => (x < y) as i64,
                    Op::Le => (x <= y) as i64,
                    Op::Gt => (x > y) as i64,
                    Op::Ge => (x >= y) as i64,
                    Op::Add => x + y,
                    Op::Sub => x - y,
                    Op::In => y >> x & 1,
                    Op::Union => x | y,
                    Op::Diff => x & !y,
                    Op::And | Op::Or | Op::Implies => unreachable!(),
                }
            }
            Ex::Single(e) => match e.eval(env) {
                UNDEF => UNDEF,
                v => 1 << v,
            },
            Ex::Count(e) => match e.eval(env) {
                UNDEF => UNDEF,
                v => (v as u64).count_ones() as i64,
            },
            Ex::RemoteB { base, b, slot } => match env.bound[*b as usize] {
                UNDEF => UNDEF,
                i => slot.read(env.agents[*base as usize + i as usize].0),
            },
            Ex::RemoteCmp { base, b, slot, c, eq } => {
                let i = env.bound[*b as usize];
                let v = if i == UNDEF { UNDEF } else { slot.read(env.agents[*base as usize + i as usize].0) };
                ((v == *c) == *eq) as i64
            }
            Ex::OwnCmp { slot, c, eq } => ((slot.read(env.own) == *c) == *eq) as i64,
            Ex::BoundCmp { a, b, eq } => ((env.bound[*a as usize] == env.bound[*b as usize]) == *eq) as i64,
            Ex::Quant { all, var, n, body } => {
                let saved = env.bound[*var as usize];
                let mut out = *all;
                for i in 0..*n as i64 {
                    env.bound[*var as usize] = i;
                    if (body.eval(env) != 0) != *all {
                        out = !*all;
                        break;
                    }
                }
                env.bound[*var as usize] = saved;
                out as i64
            }
        }
    }
}
