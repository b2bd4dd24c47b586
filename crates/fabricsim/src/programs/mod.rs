//! Per-thread programs of annotated memory operations.
//!
//! A [`Program`] is what a litmus test becomes once parsed
//! ([`crate::programs::litmus`]), and what the cores of the timing engine
//! and the checking engine run: one list of [`Op`]s per thread, each a load,
//! a store, a read-modify-write or a fence annotated with a C11 memory order
//! (in the seeds' words: Relaxed, Acquire, Release, AcqRel, SeqCst).
//!
//! Everything on the hot path is an index: a location is a `u8` index into
//! [`Program::locations`], a register a `u8` index into the thread's
//! [`Program::registers`]. Names are kept only to print outcomes.

pub mod generate;
pub mod litmus;

use std::fmt;
use std::str::FromStr;

/// A value held by a memory location or a register.
pub type Value = i64;

/// C11 memory order of an access or a fence (`memory_order_consume` is not
/// supported).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Order {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl Order {
    pub const ALL: [Order; 5] = [Order::Relaxed, Order::Acquire, Order::Release, Order::AcqRel, Order::SeqCst];

    /// Acquire, AcqRel or SeqCst.
    pub fn is_acquire(self) -> bool {
        matches!(self, Order::Acquire | Order::AcqRel | Order::SeqCst)
    }

    /// Release, AcqRel or SeqCst.
    pub fn is_release(self) -> bool {
        matches!(self, Order::Release | Order::AcqRel | Order::SeqCst)
    }

    pub fn is_seq_cst(self) -> bool {
        self == Order::SeqCst
    }

    /// The order of the read half of an access with this order (a read
    /// cannot release): Release becomes Relaxed, AcqRel becomes Acquire.
    pub fn read_part(self) -> Order {
        match self {
            Order::Release => Order::Relaxed,
            Order::AcqRel => Order::Acquire,
            o => o,
        }
    }

    /// The order of the write half of an access with this order (a write
    /// cannot acquire): Acquire becomes Relaxed, AcqRel becomes Release.
    pub fn write_part(self) -> Order {
        match self {
            Order::Acquire => Order::Relaxed,
            Order::AcqRel => Order::Release,
            o => o,
        }
    }

    /// The C11 spelling, e.g. `memory_order_acq_rel`.
    pub fn c_name(self) -> &'static str {
        match self {
            Order::Relaxed => "memory_order_relaxed",
            Order::Acquire => "memory_order_acquire",
            Order::Release => "memory_order_release",
            Order::AcqRel => "memory_order_acq_rel",
            Order::SeqCst => "memory_order_seq_cst",
        }
    }

    /// Parse the C11 spelling (`memory_order_relaxed`, ...).
    pub fn from_c_name(s: &str) -> Option<Order> {
        Order::ALL.into_iter().find(|o| o.c_name() == s)
    }
}

impl fmt::Display for Order {
    /// The seeds' word: Relaxed, Acquire, Release, AcqRel, SeqCst.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// What a read-modify-write does with the value it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RmwKind {
    /// Write `old + v` (wrapping).
    FetchAdd(Value),
    /// Write `v`.
    Exchange(Value),
    /// Write `new` if `old == expected`; otherwise write nothing (the
    /// operation is then only a read).
    CompareExchange { expected: Value, new: Value },
}

impl RmwKind {
    /// The value written when the RMW reads `old`, or `None` when it writes
    /// nothing (a failed compare-exchange).
    #[inline]
    pub fn apply(self, old: Value) -> Option<Value> {
        match self {
            RmwKind::FetchAdd(v) => Some(old.wrapping_add(v)),
            RmwKind::Exchange(v) => Some(v),
            RmwKind::CompareExchange { expected, new } => (old == expected).then_some(new),
        }
    }
}

/// One memory operation of a thread. Every read returns its value into a
/// register of the thread (`reg`); a read-modify-write returns the old value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Load { loc: u8, reg: u8, order: Order },
    Store { loc: u8, value: Value, order: Order },
    Rmw { loc: u8, reg: u8, kind: RmwKind, order: Order },
    Fence { order: Order },
}

impl Op {
    /// The location accessed (none for a fence).
    #[inline]
    pub fn loc(self) -> Option<u8> {
        match self {
            Op::Load { loc, .. } | Op::Store { loc, .. } | Op::Rmw { loc, .. } => Some(loc),
            Op::Fence { .. } => None,
        }
    }

    #[inline]
    pub fn order(self) -> Order {
        match self {
            Op::Load { order, .. } | Op::Store { order, .. } | Op::Rmw { order, .. } | Op::Fence { order } => order,
        }
    }

    /// The register written (loads and RMWs).
    #[inline]
    pub fn reg(self) -> Option<u8> {
        match self {
            Op::Load { reg, .. } | Op::Rmw { reg, .. } => Some(reg),
            _ => None,
        }
    }

    /// Loads and RMWs read memory.
    #[inline]
    pub fn is_read(self) -> bool {
        matches!(self, Op::Load { .. } | Op::Rmw { .. })
    }

    /// Stores and RMWs (may) write memory.
    #[inline]
    pub fn is_write(self) -> bool {
        matches!(self, Op::Store { .. } | Op::Rmw { .. })
    }
}

/// How the final condition of a litmus test is quantified over outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantifier {
    /// `exists e`: some execution ends in an outcome satisfying `e`.
    Exists,
    /// `~exists e`: no execution ends in an outcome satisfying `e`.
    NotExists,
    /// `forall e`: every execution ends in an outcome satisfying `e`.
    Forall,
}

impl Quantifier {
    pub fn keyword(self) -> &'static str {
        match self {
            Quantifier::Exists => "exists",
            Quantifier::NotExists => "~exists",
            Quantifier::Forall => "forall",
        }
    }
}

/// A proposition over a final outcome.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    True,
    False,
    /// `thread:reg=value`
    RegEq {
        thread: u8,
        reg: u8,
        value: Value,
    },
    /// `loc=value` (final memory)
    LocEq {
        loc: u8,
        value: Value,
    },
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Whether the outcome satisfies the proposition. A register or a
    /// location that the outcome does not have makes its atom false.
    pub fn eval(&self, o: &Outcome) -> bool {
        match self {
            Expr::True => true,
            Expr::False => false,
            Expr::RegEq { thread, reg, value } => {
                o.regs.get(*thread as usize).and_then(|r| r.get(*reg as usize)).is_some_and(|v| v == value)
            }
            Expr::LocEq { loc, value } => o.mem.get(*loc as usize).is_some_and(|v| v == value),
            Expr::Not(e) => !e.eval(o),
            Expr::And(a, b) => a.eval(o) && b.eval(o),
            Expr::Or(a, b) => a.eval(o) || b.eval(o),
        }
    }

    fn write(&self, p: &Program, f: &mut fmt::Formatter<'_>, prec: u8) -> fmt::Result {
        // prec: 0 = top (\/), 1 = inside /\, 2 = inside ~
        match self {
            Expr::True => write!(f, "true"),
            Expr::False => write!(f, "false"),
            Expr::RegEq { thread, reg, value } => {
                write!(f, "{thread}:{}={value}", p.reg_name(*thread, *reg))
            }
            Expr::LocEq { loc, value } => write!(f, "{}={value}", p.loc_name(*loc)),
            Expr::Not(e) => {
                write!(f, "~")?;
                e.write(p, f, 2)
            }
            Expr::And(a, b) => {
                if prec > 1 {
                    write!(f, "(")?;
                }
                a.write(p, f, 1)?;
                write!(f, " /\\ ")?;
                b.write(p, f, 1)?;
                if prec > 1 {
                    write!(f, ")")?;
                }
                Ok(())
            }
            Expr::Or(a, b) => {
                if prec > 0 {
                    write!(f, "(")?;
                }
                a.write(p, f, 0)?;
                write!(f, " \\/ ")?;
                b.write(p, f, 0)?;
                if prec > 0 {
                    write!(f, ")")?;
                }
                Ok(())
            }
        }
    }
}

/// The final condition of a litmus test.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Condition {
    pub quantifier: Quantifier,
    pub expr: Expr,
}

/// A multi-threaded program of annotated memory operations: a litmus test.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Program {
    /// Test name (the `C NAME` header).
    pub name: String,
    /// Location names; an `Op`'s `loc` indexes this list.
    pub locations: Vec<String>,
    /// Initial value per location.
    pub init: Vec<Value>,
    /// The operations of each thread in program order.
    pub threads: Vec<Vec<Op>>,
    /// Register names per thread; an `Op`'s `reg` indexes the thread's list.
    pub registers: Vec<Vec<String>>,
    pub condition: Condition,
    /// The threads' code when it is not a straight line of memory
    /// operations with constant values (register arithmetic, data or
    /// control dependencies, `if`/`else`): then `threads` is empty per
    /// thread, the oracle runs this code ([`crate::check::oracle`]) and a
    /// protocol refuses the program. `None` for straight-line programs.
    pub code: Option<Vec<Vec<Stmt>>>,
}

/// A binary operator of a register expression (C's, on 64-bit integers,
/// wrapping; comparisons and `&&`/`||` give 0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// A unary operator: `-`, `!` (0 or 1), `~`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
}

/// An expression over a thread's registers and constants.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Exp {
    Const(Value),
    Reg(u8),
    Un(UnOp, Box<Exp>),
    Bin(BinOp, Box<Exp>, Box<Exp>),
}

impl Exp {
    /// The value with the registers `regs`.
    pub fn eval(&self, regs: &[Value]) -> Value {
        match self {
            Exp::Const(v) => *v,
            Exp::Reg(r) => regs.get(*r as usize).copied().unwrap_or(0),
            Exp::Un(op, e) => {
                let v = e.eval(regs);
                match op {
                    UnOp::Neg => v.wrapping_neg(),
                    UnOp::Not => (v == 0) as Value,
                    UnOp::BitNot => !v,
                }
            }
            Exp::Bin(op, a, b) => {
                let (x, y) = (a.eval(regs), b.eval(regs));
                match op {
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::BitAnd => x & y,
                    BinOp::BitOr => x | y,
                    BinOp::BitXor => x ^ y,
                    BinOp::Eq => (x == y) as Value,
                    BinOp::Ne => (x != y) as Value,
                    BinOp::Lt => (x < y) as Value,
                    BinOp::Le => (x <= y) as Value,
                    BinOp::Gt => (x > y) as Value,
                    BinOp::Ge => (x >= y) as Value,
                    BinOp::And => (x != 0 && y != 0) as Value,
                    BinOp::Or => (x != 0 || y != 0) as Value,
                }
            }
        }
    }

    /// The registers the expression reads, in order of appearance.
    pub fn regs(&self, out: &mut Vec<u8>) {
        match self {
            Exp::Const(_) => {}
            Exp::Reg(r) => out.push(*r),
            Exp::Un(_, e) => e.regs(out),
            Exp::Bin(_, a, b) => {
                a.regs(out);
                b.regs(out);
            }
        }
    }
}

/// The value operand of a read-modify-write in general code.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RmwExp {
    /// Write `old + e` (`fetch_sub` is `old + -e`).
    FetchAdd(Exp),
    /// Write `e`.
    Exchange(Exp),
    /// Compare with register `expected`, write `new` on success; `expected`
    /// receives the old value (C semantics) and `result`, if any, 1 on
    /// success and 0 on failure.
    CompareExchange { expected: u8, new: Exp, result: Option<u8> },
}

/// A statement of general thread code (see [`Program::code`]). `reg: None`
/// is an access whose result is not assigned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Stmt {
    Load { loc: u8, reg: Option<u8>, order: Order },
    Store { loc: u8, value: Exp, order: Order },
    Rmw { loc: u8, reg: Option<u8>, op: RmwExp, order: Order },
    Fence { order: Order },
    Assign { reg: u8, value: Exp },
    If { cond: Exp, then: Vec<Stmt>, otherwise: Vec<Stmt> },
}

impl Program {
    pub fn num_threads(&self) -> usize {
        self.threads.len()
    }

    pub fn loc_index(&self, name: &str) -> Option<u8> {
        self.locations.iter().position(|l| l == name).map(|i| i as u8)
    }

    /// Name of a location (`?N` if out of range).
    pub fn loc_name(&self, loc: u8) -> String {
        self.locations.get(loc as usize).cloned().unwrap_or_else(|| format!("?{loc}"))
    }

    /// Whether a register is hidden: it holds the result of an access whose
    /// result the test does not assign (named `%N`); outcomes keep it at 0
    /// and do not print it.
    pub fn is_hidden_reg(&self, thread: usize, reg: usize) -> bool {
        self.registers.get(thread).and_then(|r| r.get(reg)).is_some_and(|n| n.starts_with('%'))
    }

    /// The outcome with its hidden registers at 0.
    pub fn project(&self, mut o: Outcome) -> Outcome {
        for (t, regs) in o.regs.iter_mut().enumerate() {
            for (r, v) in regs.iter_mut().enumerate() {
                if self.is_hidden_reg(t, r) {
                    *v = 0;
                }
            }
        }
        o
    }

    /// Name of a register of a thread (`rN` if the program has no name).
    pub fn reg_name(&self, thread: u8, reg: u8) -> String {
        self.registers
            .get(thread as usize)
            .and_then(|r| r.get(reg as usize))
            .cloned()
            .unwrap_or_else(|| format!("r{reg}"))
    }

    /// The outcome before anything runs: registers 0, memory at its
    /// initial values. Register counts are those of [`Program::registers`]
    /// (extended to cover every register an op names).
    pub fn initial_outcome(&self) -> Outcome {
        let regs = self
            .threads
            .iter()
            .enumerate()
            .map(|(t, ops)| {
                let named = self.registers.get(t).map_or(0, Vec::len);
                let used = ops.iter().filter_map(|o| o.reg()).map(|r| r as usize + 1).max().unwrap_or(0);
                vec![0; named.max(used)]
            })
            .collect();
        let n = self
            .threads
            .iter()
            .flatten()
            .filter_map(|o| o.loc())
            .map(|l| l as usize + 1)
            .max()
            .unwrap_or(0)
            .max(self.locations.len());
        let mut mem = self.init.clone();
        mem.resize(n.max(mem.len()), 0);
        Outcome { regs, mem }
    }

    /// The condition in herd syntax, e.g. `exists (1:r0=1 /\ 1:r1=0)`.
    pub fn condition_string(&self) -> String {
        struct C<'a>(&'a Program);
        impl fmt::Display for C<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let c = &self.0.condition;
                write!(f, "{} (", c.quantifier.keyword())?;
                c.expr.write(self.0, f, 0)?;
                write!(f, ")")
            }
        }
        C(self).to_string()
    }
}

/// The final state of an execution: every register of every thread
/// (registers never written keep 0) and every location.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Outcome {
    /// `regs[thread][reg]`
    pub regs: Vec<Vec<Value>>,
    /// `mem[loc]`
    pub mem: Vec<Value>,
}

impl Outcome {
    /// Herd-style display with the program's register and location names:
    /// `0:r0=1; 1:r0=0; x=1; y=1;`.
    pub fn display<'a>(&'a self, p: &'a Program) -> OutcomeDisplay<'a> {
        OutcomeDisplay { outcome: self, program: Some(p) }
    }
}

/// Herd-style display without a program: registers are named by position
/// (`0:r0`, `0:r1`, ...) and locations by index (`[0]`, `[1]`, ...). Use
/// [`Outcome::display`] to print the program's names.
impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        OutcomeDisplay { outcome: self, program: None }.fmt(f)
    }
}

/// See [`Outcome::display`].
pub struct OutcomeDisplay<'a> {
    outcome: &'a Outcome,
    program: Option<&'a Program>,
}

impl fmt::Display for OutcomeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut sep = |f: &mut fmt::Formatter<'_>| {
            if first {
                first = false;
                Ok(())
            } else {
                write!(f, " ")
            }
        };
        for (t, regs) in self.outcome.regs.iter().enumerate() {
            for (r, v) in regs.iter().enumerate() {
                if self.program.is_some_and(|p| p.is_hidden_reg(t, r)) {
                    continue;
                }
                sep(f)?;
                match self.program {
                    Some(p) => write!(f, "{t}:{}={v};", p.reg_name(t as u8, r as u8))?,
                    None => write!(f, "{t}:r{r}={v};")?,
                }
            }
        }
        for (l, v) in self.outcome.mem.iter().enumerate() {
            sep(f)?;
            match self.program.and_then(|p| p.locations.get(l)) {
                Some(name) => write!(f, "{name}={v};")?,
                None => write!(f, "[{l}]={v};")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Program {
        Program {
            name: "T".into(),
            locations: vec!["x".into(), "y".into()],
            init: vec![0, 0],
            threads: vec![
                vec![Op::Store { loc: 0, value: 1, order: Order::Relaxed }],
                vec![Op::Load { loc: 0, reg: 0, order: Order::Acquire }],
            ],
            registers: vec![vec![], vec!["r0".into()]],
            code: None,
            condition: Condition {
                quantifier: Quantifier::Exists,
                expr: Expr::And(
                    Box::new(Expr::RegEq { thread: 1, reg: 0, value: 1 }),
                    Box::new(Expr::Not(Box::new(Expr::Or(
                        Box::new(Expr::LocEq { loc: 1, value: 1 }),
                        Box::new(Expr::False),
                    )))),
                ),
            },
        }
    }

    #[test]
    fn display_and_eval() {
        let p = sample();
        let mut o = p.initial_outcome();
        assert_eq!(o.display(&p).to_string(), "1:r0=0; x=0; y=0;");
        assert_eq!(o.to_string(), "1:r0=0; [0]=0; [1]=0;");
        assert!(!p.condition.expr.eval(&o));
        o.regs[1][0] = 1;
        assert!(p.condition.expr.eval(&o));
        o.mem[1] = 1;
        assert!(!p.condition.expr.eval(&o));
        assert_eq!(p.condition_string(), "exists (1:r0=1 /\\ ~(y=1 \\/ false))");
    }

    #[test]
    fn orders_and_rmw() {
        assert!(Order::AcqRel.is_acquire() && Order::AcqRel.is_release());
        assert_eq!(Order::AcqRel.read_part(), Order::Acquire);
        assert_eq!(Order::AcqRel.write_part(), Order::Release);
        assert_eq!(Order::from_c_name("memory_order_seq_cst"), Some(Order::SeqCst));
        assert_eq!(Order::from_c_name("memory_order_consume"), None);
        assert_eq!(RmwKind::FetchAdd(2).apply(3), Some(5));
        assert_eq!(RmwKind::Exchange(7).apply(3), Some(7));
        let cas = RmwKind::CompareExchange { expected: 0, new: 1 };
        assert_eq!(cas.apply(0), Some(1));
        assert_eq!(cas.apply(2), None);
    }

    #[test]
    fn out_of_range_atoms_are_false() {
        let o = Outcome { regs: vec![], mem: vec![] };
        assert!(!Expr::RegEq { thread: 3, reg: 0, value: 0 }.eval(&o));
        assert!(!Expr::LocEq { loc: 0, value: 0 }.eval(&o));
    }
}

/// A memory model: what a program's threads may observe (the oracle
/// computes its outcomes; a protocol's cores follow its ordering rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Model {
    /// Sequential consistency.
    Sc,
    /// x86-TSO.
    Tso,
    /// Release consistency (RC11-based, see the module documentation).
    Rc,
}

impl Model {
    pub const ALL: [Model; 3] = [Model::Sc, Model::Tso, Model::Rc];

    /// `sc`, `tso` or `rc`.
    pub fn name(self) -> &'static str {
        match self {
            Model::Sc => "sc",
            Model::Tso => "tso",
            Model::Rc => "rc",
        }
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Model {
    type Err = String;

    /// `sc`, `tso` or `rc` (any case).
    fn from_str(s: &str) -> Result<Model, String> {
        match s.to_ascii_lowercase().as_str() {
            "sc" => Ok(Model::Sc),
            "tso" => Ok(Model::Tso),
            "rc" => Ok(Model::Rc),
            _ => Err(format!("unknown memory model `{s}`; expected sc, tso or rc")),
        }
    }
}
