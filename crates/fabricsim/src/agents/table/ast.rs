//! What the parser reads, names unresolved, every piece with its position.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// A name as written, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeKind {
    Bool,
    /// The data values, `0..values` (a scalarset under symmetry).
    Data,
    Range(i64, i64),
    /// An enum type or a machine (a node id of it).
    Named(Name),
    /// A set of node ids of a machine.
    Set(Name),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeRef {
    pub kind: TypeKind,
    /// `T?`: the value may be undefined (Murphi's undefined).
    pub opt: bool,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Int(i64),
    Bool(bool),
    Undef,
    Name(String),
    /// `msg.FIELD`.
    Field(String),
    /// `MACHINE.member` (a single machine) or `MACHINE[i].member`; a
    /// per-address member takes the address: `MACHINE[i].member[a]`.
    Remote {
        machine: Name,
        index: Option<Box<Expr>>,
        member: Name,
        line: Option<Box<Expr>>,
    },
    /// `NAME[a]`: a per-address ghost at address `a`.
    At(Name, Box<Expr>),
    Not(Box<Expr>),
    Bin(&'static str, Box<Expr>, Box<Expr>),
    SetOf(Vec<Expr>),
    Count(Box<Expr>),
    /// Over a machine's node ids, or over the addresses (`machine` is `address`).
    Quant {
        all: bool,
        vars: Vec<Name>,
        machine: Name,
        body: Box<Expr>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `x := e`, `x += e` (add to a set), `x -= e` (remove from a set).
    Assign {
        target: Name,
        op: &'static str,
        value: Expr,
    },
    Send {
        msg: Name,
        fields: Vec<(Name, Expr)>,
        to: Expr,
    },
    /// `assert e "kind"`: a violation of that kind when e is false.
    Assert {
        cond: Expr,
        kind: String,
        pos: Pos,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Empty: `*`, every state.
    pub states: Vec<Name>,
    pub event: Name,
    pub param: Option<Name>,
    pub guard: Option<Expr>,
    pub body: Vec<Stmt>,
    pub stall: bool,
    pub next: Option<Name>,
    pub pos: Pos,
    /// `mutant NAME:` rows replace the ordinary row above them when NAME is chosen.
    pub mutant: Option<Name>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Var {
    pub name: Name,
    pub ty: TypeRef,
    pub init: Option<Expr>,
    /// `per address` (ghosts): one value per address.
    pub per_address: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub name: Name,
    pub param: Option<(Name, TypeRef)>,
    pub env: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Count {
    One,
    Fixed(i64, Pos),
    /// A `[check]` size key (`caches`, `directories`).
    Key(Name),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Impossible {
    pub states: Vec<Name>,
    pub events: Vec<Name>,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    pub name: Name,
    pub count: Count,
    pub role: Option<Name>,
    /// `per address`: its state and variables are per address (a cache's
    /// lines, a directory's entries); an event on a line sees that line's.
    pub per_address: bool,
    pub stable: Vec<Name>,
    pub transient: Vec<Name>,
    pub vars: Vec<Var>,
    pub actions: Vec<Action>,
    pub rows: Vec<Row>,
    pub impossible: Vec<Impossible>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Vc {
    pub name: Name,
    pub fifo: bool,
    pub capacity: Option<(i64, Pos)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TypeDef {
    Enum(Vec<Name>),
    Range(i64, i64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub name: Name,
    pub fields: Vec<(Name, TypeRef)>,
    pub vc: Name,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct File {
    pub name: Option<Name>,
    pub vcs: Vec<Vc>,
    pub types: Vec<(Name, TypeDef)>,
    pub messages: Vec<Message>,
    pub ghosts: Vec<Var>,
    /// Start parameters; `one`: only the first value (`start d: one data`).
    pub starts: Vec<(Name, TypeRef, bool)>,
    pub machines: Vec<Machine>,
    pub invariants: Vec<(Name, Expr)>,
}
