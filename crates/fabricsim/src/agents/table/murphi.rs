//! A table file as a Murphi model (issue 36, item 5): the independent
//! cross-check. Rumur explores the model written here and must find
//! exactly the states and transitions fabricsim's interpreter finds, so
//! the model mirrors [`interp`](super::interp) and the checker's
//! `World`, not just the table's intent:
//!
//! * a channel is one slot array per (channel, destination, source) of
//!   `capacity` messages; FIFO: the head is deliverable; unordered: the
//!   array is kept sorted (a multiset in canonical form, as the checker's
//!   mail) and each distinct message is deliverable;
//! * one Murphi rule per row (and per sender machine for a message): a
//!   message's row is enabled when no earlier row of its cell holds, a
//!   `stall` row has no rule, and a row whose sends would overflow a
//!   channel is not enabled (a function runs the row's body on copies);
//! * undefined values are Murphi's `undefined`, and every expression is
//!   written so that it never reads one: undefined operands make an
//!   undefined result, which a condition takes as true (as `eval` does);
//! * the checker's deadlock (work pending and only environment actions
//!   enabled) is an invariant; Rumur's own deadlock check (a state whose
//!   rules all stutter) is another notion and is to be turned off.
//!
//! No scalarsets unless asked (`symmetry`): Rumur then counts plain states.

use std::fmt::Write as _;

use super::compile::{self, Sizes};
use super::model::{Ex, Op, Slot, Ty, UNDEF};
use super::spec::{Spec, St, Target, To};
use super::{Table, TableError};
use crate::agents::protocol::ChannelOrder;

/// What the model checks besides the table's invariants.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Scalarsets for the replicated machines and the data values (FIFO channels only).
    pub symmetry: bool,
    /// The checker's deadlock check, as an invariant.
    pub deadlock: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { symmetry: false, deadlock: true }
    }
}

/// How to run the written model so that Rumur counts what fabricsim counts.
pub const RUMUR_FLAGS: &str = "--deadlock-detection off";

/// The Murphi model of `table` at `sizes`, with `mutant`'s rows in place.
pub fn export(table: &Table, sizes: Sizes, mutant: Option<&str>, opts: Options) -> Result<String, TableError> {
    let spec = compile::compile(&table.ast, &table.file, sizes, mutant)?;
    let w = Writer::new(table, &spec, opts)?;
    w.model().map_err(|(line, message)| TableError::at(&table.file, line, 1, message))
}

/// [`export`] of the table file at `path`.
pub fn export_file(
    path: &std::path::Path,
    sizes: Sizes,
    mutant: Option<&str>,
    opts: Options,
) -> Result<String, TableError> {
    export(&Table::load(path)?, sizes, mutant, opts)
}

/// Murphi's reserved words: a table name that is one cannot be written.
const KEYWORDS: &[&str] = &[
    "alias",
    "array",
    "assert",
    "assume",
    "begin",
    "boolean",
    "by",
    "case",
    "clear",
    "const",
    "cover",
    "do",
    "else",
    "elsif",
    "end",
    "endalias",
    "endexists",
    "endfor",
    "endforall",
    "endfunction",
    "endif",
    "endprocedure",
    "endrecord",
    "endrule",
    "endruleset",
    "endstartstate",
    "endswitch",
    "endwhile",
    "enum",
    "error",
    "exists",
    "false",
    "for",
    "forall",
    "function",
    "if",
    "in",
    "interleaved",
    "invariant",
    "isundefined",
    "liveness",
    "of",
    "procedure",
    "process",
    "program",
    "put",
    "record",
    "return",
    "rule",
    "ruleset",
    "scalarset",
    "startstate",
    "switch",
    "then",
    "to",
    "traceuntil",
    "true",
    "type",
    "undefine",
    "undefined",
    "union",
    "var",
    "while",
    "multiset",
    "ismember",
    "multisetadd",
    "multisetcount",
    "multisetremove",
    "multisetremovepred",
    "choose",
];

/// An expression's value: undefined for sure, or defined when `d` holds (always if none).
enum Val {
    Undef,
    Def { d: Option<String>, v: String },
}

fn def(v: String) -> Val {
    Val::Def { d: None, v }
}

/// A set of node ids: the union of its parts, defined when `d` holds.
enum SetV {
    Undef,
    Def { d: Option<String>, parts: Vec<Part> },
}

enum Part {
    /// A set variable (an array of booleans).
    Var(String),
    /// A constant set (only `{}` is writable in a table).
    Mask(i64),
    /// `{x}`.
    One(String),
}

fn and(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a} & {b}")),
        (a, b) => a.or(b),
    }
}

/// Where an expression is evaluated: the paths of the machine's own
/// record, the ghosts and the message, and the names of the bound values.
#[derive(Clone)]
struct Cx {
    machine: Option<usize>,
    own: String,
    ghost: String,
    /// The message kind and its path.
    msg: Option<(usize, String)>,
    src: Option<(usize, String)>,
    param: Option<(Ty, String)>,
    bound: Vec<(String, Option<Ty>)>,
}

impl Cx {
    fn global() -> Cx {
        Cx {
            machine: None,
            own: String::new(),
            ghost: "ghost".into(),
            msg: None,
            src: None,
            param: None,
            bound: vec![],
        }
    }
}

type R<T> = Result<T, (u32, String)>;

/// One rule of the model, kept for the deadlock invariant.
struct Rule {
    /// Ruleset parameters (name, type).
    params: Vec<(String, String)>,
    guard: String,
    env: bool,
}

struct Writer<'a> {
    table: &'a Table,
    s: &'a Spec,
    opts: Options,
    cap: usize,
    /// Per message kind: the machines that send it.
    senders: Vec<Vec<usize>>,
    /// (channel, destination machine, source machine) arrays.
    chans: Vec<(usize, usize, usize)>,
    uses_data: bool,
}

impl<'a> Writer<'a> {
    fn new(table: &'a Table, s: &'a Spec, opts: Options) -> Result<Self, TableError> {
        let file = &table.file;
        // per-address machines and ghosts (a message's address, a row on its
        // line) are not written yet: refuse rather than write another protocol
        let per_address = table.ast.machines.iter().map(|m| (&m.name, m.per_address));
        let ghosts = table.ast.ghosts.iter().map(|g| (&g.name, g.per_address));
        if let Some((name, _)) = per_address.chain(ghosts).find(|(_, p)| *p) {
            return Err(TableError::at(
                file,
                name.pos.line,
                name.pos.col,
                format!(
                    "{}: the Murphi export does not write `per address` machines or ghosts yet (issue 36); expected \
                     a table without them",
                    name.text
                ),
            ));
        }
        if s.capacity == usize::MAX {
            let pos = table.ast.vcs.first().map(|v| v.name.pos).unwrap_or_default();
            return Err(TableError::at(
                file,
                pos.line,
                pos.col,
                "the Murphi export needs bounded channels (a Murphi state is finite): expected `capacity N` on every \
                 `vc`"
                    .into(),
            ));
        }
        if opts.symmetry {
            if let Some(v) = table.ast.vcs.iter().find(|v| !v.fifo) {
                return Err(TableError::at(
                    file,
                    v.name.pos.line,
                    v.name.pos.col,
                    format!(
                        "channel {}: the Murphi export with symmetry supports FIFO channels only (an unordered one \
                         is kept sorted, which a scalarset permutation would undo); expected no --symmetry",
                        v.name.text
                    ),
                ));
            }
        }
        for m in &table.ast.machines {
            if matches!(m.count, super::ast::Count::Key(_))
                && s.machines.iter().any(|x| x.name == m.name.text && x.count == 0)
            {
                return Err(TableError::at(
                    file,
                    m.name.pos.line,
                    m.name.pos.col,
                    format!("machine {}: 0 instances; expected 1 or more", m.name.text),
                ));
            }
        }
        let vars = table.ast.machines.iter().flat_map(|m| m.vars.iter().map(|v| ("variable", v)));
        let ghosts = table.ast.ghosts.iter().map(|g| ("ghost", g));
        if let Some((what, v)) =
            vars.chain(ghosts).find(|(_, v)| v.ty.opt && matches!(v.ty.kind, super::ast::TypeKind::Set(_)))
        {
            return Err(TableError::at(
                file,
                v.name.pos.line,
                v.name.pos.col,
                format!(
                    "{what} {}: an optional set is not supported by the Murphi export; expected `set M`",
                    v.name.text
                ),
            ));
        }
        // machines and types are global names in the model, beside the export's own
        let own = ["t", "f", "k", "p", "e", "j", "me", "gh", "msg", "out", "ghost", "DATA", "MSG", "QUEUE", "CAP"];
        let globals = s
            .machines
            .iter()
            .map(|m| (m.name.as_str(), m.line))
            .chain(table.ast.types.iter().map(|(n, _)| (n.text.as_str(), n.pos.line)));
        for (n, line) in globals {
            if own.contains(&n) || n.starts_with("q") && n[1..].parse::<u32>().is_ok() {
                return Err(TableError::at(
                    file,
                    line,
                    1,
                    format!("{n:?} is a name the Murphi export gives to its own variables; expected another name"),
                ));
            }
        }
        // every name the table gives that Murphi sees
        let mut names: Vec<&str> = vec![&s.name];
        names.extend(s.machines.iter().map(|m| m.name.as_str()));
        names.extend(s.machines.iter().flat_map(|m| m.vars.iter().map(|v| v.name.as_str())));
        names.extend(s.machines.iter().flat_map(|m| m.states.iter().map(|x| x.as_str())));
        names.extend(s.ghosts.iter().map(|g| g.name.as_str()));
        names.extend(
            s.msgs.iter().flat_map(|k| std::iter::once(k.name.as_str()).chain(k.fields.iter().map(|f| f.0.as_str()))),
        );
        names.extend(s.vcs.iter().map(|v| v.0.as_str()));
        names.extend(s.enums.iter().flat_map(|e| std::iter::once(e.0.as_str()).chain(e.1.iter().map(|x| x.as_str()))));
        names.extend(s.starts.iter().map(|x| x.0.as_str()));
        if let Some(n) = names.iter().find(|n| KEYWORDS.contains(&n.to_ascii_lowercase().as_str())) {
            // where it is first written
            let word = |l: &str| l.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == *n);
            let line = table.lines.iter().position(|l| word(l.split('#').next().unwrap_or(""))).map_or(1, |i| i + 1);
            return Err(TableError::at(
                file,
                line as u32,
                1,
                format!("{n:?} is a Murphi keyword: the Murphi export cannot name it; expected another name"),
            ));
        }
        let nk = s.msgs.len();
        let mut senders = vec![Vec::new(); nk];
        let mut receivers = vec![Vec::new(); nk];
        for r in &s.rows {
            for st in &r.body {
                if let St::Send { kind, to, .. } = st {
                    let dest = match to {
                        To::Agent(a) => s.agents[*a as usize].0,
                        To::Node(base, _) => s.machines.iter().position(|m| m.base == *base).expect("a machine's base"),
                        To::Set(..) => {
                            let pos = table.ast.machines.first().map(|m| m.name.pos).unwrap_or_default();
                            let why = "`send ... to` a set: not written by the Murphi export yet (issue 36); expected \
                                       sends to one node";
                            return Err(TableError::at(file, pos.line, pos.col, why.into()));
                        }
                    };
                    let k = *kind as usize;
                    if !senders[k].contains(&r.machine) {
                        senders[k].push(r.machine);
                    }
                    if !receivers[k].contains(&dest) {
                        receivers[k].push(dest);
                    }
                }
            }
        }
        let mut chans = Vec::new();
        for (k, kind) in s.msgs.iter().enumerate() {
            for &to in &receivers[k] {
                for &from in &senders[k] {
                    let c = (kind.vc as usize, to, from);
                    if !chans.contains(&c) {
                        chans.push(c);
                    }
                }
            }
        }
        chans.sort();
        let uses_data = s.machines.iter().flat_map(|m| &m.vars).chain(&s.ghosts).any(|v| v.ty == Ty::Data)
            || s.msgs.iter().flat_map(|k| &k.fields).any(|f| f.1 == Ty::Data)
            || s.starts.iter().any(|x| x.1 == Ty::Data)
            || s.machines.iter().flat_map(|m| &m.events).any(|e| matches!(e.param, Some((Ty::Data, _, _))));
        if uses_data && s.values == 0 {
            return Err(TableError::at(file, 1, 1, "0 data values: expected 1 or more".into()));
        }
        let w = Writer { table, s, opts, cap: s.capacity, senders, chans, uses_data };
        w.distinct_globals()?;
        Ok(w)
    }

    /// The model's global names, from the table's, must not meet.
    fn distinct_globals(&self) -> Result<(), TableError> {
        let s = self.s;
        let mut names: Vec<String> = ["DATA", "MSG", "QUEUE", "CAP", "msg_kind", "ghost", "ghost_rec", "qsize"]
            .iter()
            .chain(&["take", "push_fifo", "push_set", "mkey"])
            .map(|x| x.to_string())
            .collect();
        for m in &s.machines {
            names.push(m.name.clone());
            names.extend(["id", "set", "state", "rec"].iter().map(|x| format!("{}_{x}", m.name)));
            names.push(format!("count_{}", m.name));
            names.extend((m.state_base..m.state_base + m.states.len()).map(|g| self.state_const(g)));
        }
        for (n, vals) in &s.enums {
            names.push(n.clone());
            names.push(format!("ord_{n}"));
            names.extend(vals.iter().map(|v| format!("{n}_{v}")));
        }
        names.extend((0..s.msgs.len()).map(|k| self.kind_const(k)));
        names.extend(self.chans.iter().map(|&(vc, to, from)| self.chan_var(vc, to, from)));
        let mut sorted = names.clone();
        sorted.sort();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(TableError::at(
                &self.table.file,
                1,
                1,
                format!(
                    "the Murphi export would declare {:?} twice (its names join the table's with `_`); expected \
                     table names that do not meet so",
                    w[0]
                ),
            ));
        }
        Ok(())
    }

    // ---- names ----

    fn id_ty(&self, m: usize) -> String {
        format!("{}_id", self.s.machines[m].name)
    }

    fn chan_var(&self, vc: usize, to: usize, from: usize) -> String {
        format!("{}_{}_{}", self.s.vcs[vc].0, self.s.machines[to].name, self.s.machines[from].name)
    }

    fn state_const(&self, g: usize) -> String {
        let m = &self.s.machines[self.s.state_machine[g]];
        format!("{}_{}", m.name, self.s.state_name(g))
    }

    fn kind_const(&self, k: usize) -> String {
        format!("k_{}", self.s.msgs[k].name)
    }

    fn field_member(&self, k: usize, i: usize) -> String {
        format!("{}_{}", self.s.msgs[k].name, self.s.msgs[k].fields[i].0)
    }

    fn ty(&self, t: Ty) -> String {
        match t {
            Ty::Bool => "boolean".into(),
            Ty::Int(lo, hi) => format!("{lo}..{hi}"),
            Ty::Enum(e) => self.s.enums[e].0.clone(),
            Ty::Data => "DATA".into(),
            Ty::Node(m) => self.id_ty(m),
            Ty::Set(m) => format!("{}_set", self.s.machines[m].name),
            Ty::State(m) => format!("{}_state", self.s.machines[m].name),
            // refused in `Writer::new` (per-address tables are not written yet)
            Ty::Addr => "0..0".into(),
        }
    }

    fn constant(&self, t: Option<Ty>, c: i64) -> R<String> {
        Ok(match t {
            Some(Ty::Bool) => (c != 0).to_string(),
            Some(Ty::Enum(e)) => format!("{}_{}", self.s.enums[e].0, self.s.enums[e].1[c as usize]),
            Some(Ty::State(_)) => self.state_const(c as usize),
            Some(Ty::Data | Ty::Node(_)) => return Err((0, format!("constant {c} of a scalarset type"))),
            _ => c.to_string(),
        })
    }

    // ---- expressions ----

    fn var_of(&self, m: usize, slot: &Slot) -> (String, Ty, bool) {
        if *slot == self.s.state_slot {
            return ("state".into(), Ty::State(m), false);
        }
        let v = self.s.machines[m].vars.iter().find(|v| v.slot == *slot).expect("a slot of the machine");
        (v.name.clone(), v.ty, v.slot.opt)
    }

    fn ghost_of(&self, slot: &Slot) -> (String, Ty, bool) {
        let g = self.s.ghosts.iter().find(|g| g.slot == *slot).expect("a ghost's slot");
        (g.name.clone(), g.ty, g.slot.opt)
    }

    fn machine_at(&self, base: u8) -> usize {
        self.s.machines.iter().position(|m| m.base == base).expect("a machine's base")
    }

    fn ty_of(&self, e: &Ex, cx: &Cx) -> Option<Ty> {
        match e {
            Ex::Const(_) => None,
            Ex::Own(s) => Some(self.var_of(cx.machine?, s).1),
            Ex::Remote { base, slot, .. } | Ex::RemoteB { base, slot, .. } => {
                Some(self.var_of(self.machine_at(*base), slot).1)
            }
            Ex::Field { i, .. } => cx.msg.as_ref().map(|(k, _)| self.s.msgs[*k].fields[*i as usize].1),
            Ex::Src => cx.src.as_ref().map(|(m, _)| Ty::Node(*m)),
            Ex::Param => cx.param.as_ref().map(|p| p.0),
            Ex::Bound(b) => cx.bound.get(*b as usize).and_then(|x| x.1),
            Ex::Ghost(s) => Some(self.ghost_of(s).1),
            Ex::Bin(Op::Add | Op::Sub, ..) | Ex::Count(_) => Some(Ty::Int(i64::MIN / 2, i64::MAX / 2)),
            Ex::Bin(Op::Union, a, b) => self.ty_of(a, cx).or_else(|| self.ty_of(b, cx)),
            Ex::Single(x) => match self.ty_of(x, cx) {
                Some(Ty::Node(m)) => Some(Ty::Set(m)),
                _ => None,
            },
            _ => Some(Ty::Bool),
        }
    }

    /// The expression as a condition (an undefined value holds, as in `eval`).
    fn truth(&self, e: &Ex, cx: &Cx) -> R<String> {
        Ok(match self.val(e, cx, Some(Ty::Bool))? {
            Val::Undef => "true".into(),
            Val::Def { d: None, v } => v,
            Val::Def { d: Some(d), v } => format!("(!({d}) | {v})"),
        })
    }

    fn opt_path(path: String, opt: bool) -> Val {
        let d = opt.then(|| format!("!isundefined({path})"));
        Val::Def { d, v: path }
    }

    fn val(&self, e: &Ex, cx: &Cx, want: Option<Ty>) -> R<Val> {
        Ok(match e {
            Ex::Const(UNDEF) => Val::Undef,
            Ex::Const(c) => def(self.constant(want, *c)?),
            Ex::Own(slot) => {
                let (n, _, opt) = self.var_of(cx.machine.expect("a row's machine"), slot);
                Self::opt_path(format!("{}.{n}", cx.own), opt)
            }
            Ex::Remote { base, index, slot } => {
                let m = self.machine_at(*base);
                let (di, vi) = match index {
                    None => (None, "0".to_string()),
                    Some(i) => match self.val(i, cx, None)? {
                        Val::Undef => return Ok(Val::Undef),
                        Val::Def { d, v } => (d, v),
                    },
                };
                let (n, _, opt) = self.var_of(m, slot);
                let path = format!("{}[{vi}].{n}", self.s.machines[m].name);
                let d = and(di, opt.then(|| format!("!isundefined({path})")));
                Val::Def { d, v: path }
            }
            Ex::RemoteB { base, b, slot } => {
                return self.val(
                    &Ex::Remote { base: *base, index: Some(Box::new(Ex::Bound(*b))), slot: *slot },
                    cx,
                    want,
                )
            }
            Ex::Field { i, .. } => {
                let (k, path) = cx.msg.as_ref().expect("a message row");
                let opt = self.s.msgs[*k].fields[*i as usize].2.opt;
                Self::opt_path(format!("{path}.{}", self.field_member(*k, *i as usize)), opt)
            }
            Ex::Src => def(cx.src.as_ref().expect("a message row").1.clone()),
            Ex::Param => def(cx.param.as_ref().expect("an action's row").1.clone()),
            Ex::Bound(b) => def(cx.bound[*b as usize].0.clone()),
            Ex::Ghost(slot) => {
                let (n, _, opt) = self.ghost_of(slot);
                Self::opt_path(format!("{}.{n}", cx.ghost), opt)
            }
            Ex::Not(a) => def(format!("!{}", self.truth(a, cx)?)),
            Ex::RemoteCmp { base, b, slot, c, eq } => {
                let x = Ex::RemoteB { base: *base, b: *b, slot: *slot };
                return self.eq(&x, &Ex::Const(*c), !eq, cx);
            }
            Ex::OwnCmp { slot, c, eq } => return self.eq(&Ex::Own(*slot), &Ex::Const(*c), !eq, cx),
            Ex::BoundCmp { a, b, eq } => return self.eq(&Ex::Bound(*a), &Ex::Bound(*b), !eq, cx),
            Ex::Quant { all, var, n, body } => {
                let m = self.quant_machine(*var, *n as usize, body);
                let tyname = match m {
                    Some(m) => self.id_ty(m),
                    None => format!("0..{}", *n as i64 - 1),
                };
                let name = format!("q{var}");
                let mut cx2 = cx.clone();
                while cx2.bound.len() <= *var as usize {
                    cx2.bound.push((String::new(), None));
                }
                cx2.bound[*var as usize] = (name.clone(), m.map(Ty::Node));
                let body = self.truth(body, &cx2)?;
                let q = if *all { "forall" } else { "exists" };
                def(format!("({q} {name} : {tyname} do {body} end)"))
            }
            Ex::Count(x) => match self.set(x, cx)? {
                SetV::Undef => Val::Undef,
                SetV::Def { d, parts } => {
                    let m = match self.ty_of(x, cx) {
                        Some(Ty::Set(m)) => m,
                        _ => return Err((0, "count of a set of unknown machine".into())),
                    };
                    Val::Def { d, v: self.count(m, &parts)? }
                }
            },
            Ex::Single(_) => return Err((0, "a set where a value is expected".into())),
            Ex::RemoteLine { .. } | Ex::GhostAt { .. } => {
                return Err((0, "another line's variable: not written by the Murphi export yet (issue 36)".into()))
            }
            Ex::Bin(op, a, b) => match op {
                Op::And => def(format!("({} & {})", self.truth(a, cx)?, self.truth(b, cx)?)),
                Op::Or => def(format!("({} | {})", self.truth(a, cx)?, self.truth(b, cx)?)),
                Op::Implies => def(format!("(!{} | {})", self.truth(a, cx)?, self.truth(b, cx)?)),
                Op::Eq | Op::Ne => return self.eq(a, b, *op == Op::Ne, cx),
                Op::In => {
                    let x = self.val(a, cx, None)?;
                    let set = self.set(b, cx)?;
                    match (x, set) {
                        (Val::Def { d, v }, SetV::Def { d: ds, parts }) => {
                            Val::Def { d: and(d, ds), v: format!("({})", self.elem(&parts, &v)?) }
                        }
                        _ => Val::Undef,
                    }
                }
                Op::Union | Op::Diff => return Err((0, "a set where a value is expected".into())),
                Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Add | Op::Sub => {
                    let t = self.ty_of(a, cx).or_else(|| self.ty_of(b, cx));
                    let sym = match op {
                        Op::Lt => "<",
                        Op::Le => "<=",
                        Op::Gt => ">",
                        Op::Ge => ">=",
                        Op::Add => "+",
                        _ => "-",
                    };
                    match (self.val(a, cx, t)?, self.val(b, cx, t)?) {
                        (Val::Def { d: da, v: va }, Val::Def { d: db, v: vb }) => {
                            Val::Def { d: and(da, db), v: format!("({va} {sym} {vb})") }
                        }
                        _ => Val::Undef,
                    }
                }
            },
        })
    }

    /// A quantifier's machine: the one its variable indexes (else the one of its size).
    fn quant_machine(&self, var: u8, n: usize, body: &Ex) -> Option<usize> {
        fn find(e: &Ex, var: u8) -> Option<u8> {
            match e {
                Ex::RemoteB { base, b, .. } | Ex::RemoteCmp { base, b, .. } if *b == var => Some(*base),
                Ex::Remote { base, index: Some(i), .. } if matches!(**i, Ex::Bound(b) if b == var) => Some(*base),
                Ex::Remote { index: Some(i), .. } => find(i, var),
                Ex::Not(x) | Ex::Single(x) | Ex::Count(x) | Ex::Quant { body: x, .. } => find(x, var),
                Ex::Bin(_, a, b) => find(a, var).or_else(|| find(b, var)),
                _ => None,
            }
        }
        if let Some(base) = find(body, var) {
            return Some(self.machine_at(base));
        }
        let same: Vec<usize> = (0..self.s.machines.len()).filter(|&m| self.s.machines[m].count == n).collect();
        (same.len() == 1).then(|| same[0])
    }

    fn eq(&self, a: &Ex, b: &Ex, ne: bool, cx: &Cx) -> R<Val> {
        let t = self.ty_of(a, cx).or_else(|| self.ty_of(b, cx));
        let both = |x: (Option<String>, String), y: (Option<String>, String), same: String| match (x.0, y.0) {
            (None, None) => same,
            (Some(d), None) | (None, Some(d)) => format!("({d} & {same})"),
            (Some(dx), Some(dy)) => format!("({dx} & {dy} ? {same} : !({dx}) & !({dy}))"),
        };
        let out = if let Some(Ty::Set(m)) = t {
            match (self.set(a, cx)?, self.set(b, cx)?) {
                (SetV::Undef, SetV::Undef) => "true".into(),
                (SetV::Undef, SetV::Def { d, .. }) | (SetV::Def { d, .. }, SetV::Undef) => {
                    d.map_or("false".into(), |d| format!("!({d})"))
                }
                (SetV::Def { d: dx, parts: px }, SetV::Def { d: dy, parts: py }) => {
                    let k = "e";
                    let same = format!(
                        "(forall {k} : {} do ({}) = ({}) end)",
                        self.id_ty(m),
                        self.elem(&px, k)?,
                        self.elem(&py, k)?
                    );
                    both((dx, String::new()), (dy, String::new()), same)
                }
            }
        } else {
            match (self.val(a, cx, t)?, self.val(b, cx, t)?) {
                (Val::Undef, Val::Undef) => "true".into(),
                (Val::Undef, Val::Def { d, .. }) | (Val::Def { d, .. }, Val::Undef) => {
                    d.map_or("false".into(), |d| format!("!({d})"))
                }
                (Val::Def { d: dx, v: vx }, Val::Def { d: dy, v: vy }) => {
                    let same = format!("{vx} = {vy}");
                    both((dx, String::new()), (dy, String::new()), format!("({same})"))
                }
            }
        };
        Ok(def(if ne { format!("!{out}") } else { out }))
    }

    fn set(&self, e: &Ex, cx: &Cx) -> R<SetV> {
        Ok(match e {
            Ex::Const(UNDEF) => SetV::Undef,
            Ex::Const(c) => SetV::Def { d: None, parts: vec![Part::Mask(*c)] },
            Ex::Own(_) | Ex::Ghost(_) | Ex::Remote { .. } | Ex::RemoteB { .. } => match self.val(e, cx, None)? {
                Val::Undef => SetV::Undef,
                Val::Def { d, v } => SetV::Def { d, parts: vec![Part::Var(v)] },
            },
            Ex::Single(x) => match self.val(x, cx, None)? {
                Val::Undef => SetV::Undef,
                Val::Def { d, v } => SetV::Def { d, parts: vec![Part::One(v)] },
            },
            Ex::Bin(Op::Union, a, b) => match (self.set(a, cx)?, self.set(b, cx)?) {
                (SetV::Def { d: da, parts: mut pa }, SetV::Def { d: db, parts: pb }) => {
                    pa.extend(pb);
                    SetV::Def { d: and(da, db), parts: pa }
                }
                _ => SetV::Undef,
            },
            Ex::Bin(Op::Diff, ..) => return Err((0, "a set difference: not written by the Murphi export yet".into())),
            _ => return Err((0, "an expression where a set is expected".into())),
        })
    }

    /// Whether node `idx` is in the set.
    fn elem(&self, parts: &[Part], idx: &str) -> R<String> {
        let mut out: Vec<String> = Vec::new();
        for p in parts {
            match p {
                Part::Var(v) => out.push(format!("{v}[{idx}]")),
                Part::One(v) => out.push(format!("{idx} = {v}")),
                Part::Mask(0) => {}
                Part::Mask(c) => {
                    if self.opts.symmetry {
                        return Err((0, "a constant non-empty set under symmetry".into()));
                    }
                    out.extend((0..63).filter(|k| c >> k & 1 == 1).map(|k| format!("{idx} = {k}")));
                }
            }
        }
        Ok(if out.is_empty() { "false".into() } else { out.join(" | ") })
    }

    fn count(&self, m: usize, parts: &[Part]) -> R<String> {
        if let [Part::Var(v)] = parts {
            return Ok(format!("count_{}({v})", self.s.machines[m].name));
        }
        if self.opts.symmetry {
            return Err((0, "count of a set expression (not a variable) under symmetry".into()));
        }
        let n = self.s.machines[m].count;
        let terms: R<Vec<String>> =
            (0..n).map(|k| Ok(format!("(({}) ? 1 : 0)", self.elem(parts, &k.to_string())?))).collect();
        Ok(format!("({})", terms?.join(" + ")))
    }

    // ---- statements ----

    fn target_path(&self, t: &Target, cx: &Cx) -> String {
        if t.ghost {
            format!("{}.{}", cx.ghost, t.name)
        } else {
            format!("{}.{}", cx.own, t.name)
        }
    }

    /// A row's body. `fits`: the function that decides whether the row's
    /// sends fit (a violation then makes it true: the rule is enabled and
    /// fails when fired), else the rule's body.
    fn body(&self, r: usize, cx: &Cx, fits: bool, out: &mut String) -> R<Vec<(usize, usize, String)>> {
        let row = &self.s.rows[r];
        let me = &self.s.machines[row.machine];
        let fail = |kind: &str| {
            if fits {
                "return true;".to_string()
            } else {
                format!("error \"{kind}: {} on {} (line {})\";", me.name, row.name, row.line)
            }
        };
        let mut sends = Vec::new();
        let ind = "    ";
        for st in &row.body {
            match st {
                St::Assign(t, x) => {
                    let path = self.target_path(t, cx);
                    if let Ty::Set(m) = t.ty {
                        match self.set(x, cx)? {
                            SetV::Undef => writeln!(out, "{ind}{}", fail("undefined value")).unwrap(),
                            SetV::Def { d, parts } => {
                                if let Some(d) = d {
                                    writeln!(out, "{ind}if !({d}) then {} end;", fail("undefined value")).unwrap();
                                }
                                // element by element: element e of the value reads only element e of a set
                                let k = "e";
                                writeln!(
                                    out,
                                    "{ind}for {k} : {} do {path}[{k}] := {} end;",
                                    self.id_ty(m),
                                    self.elem(&parts, k)?
                                )
                                .unwrap();
                            }
                        }
                        continue;
                    }
                    match self.val(x, cx, Some(t.ty))? {
                        Val::Undef if t.slot.opt => writeln!(out, "{ind}undefine {path};").unwrap(),
                        Val::Undef => writeln!(out, "{ind}{}", fail("undefined value")).unwrap(),
                        Val::Def { d, v } => {
                            let mut set = String::new();
                            if let Ty::Int(lo, hi) = t.ty {
                                write!(set, "if !({lo} <= {v} & {v} <= {hi}) then {} end; ", fail("out of range"))
                                    .unwrap();
                            }
                            write!(set, "{path} := {v};").unwrap();
                            match d {
                                None => writeln!(out, "{ind}{set}").unwrap(),
                                Some(d) => {
                                    let other =
                                        if t.slot.opt { format!("undefine {path};") } else { fail("undefined value") };
                                    writeln!(out, "{ind}if {d} then {set} else {other} end;").unwrap()
                                }
                            }
                        }
                    }
                }
                St::Add(t, x) | St::Remove(t, x) => {
                    let add = matches!(st, St::Add(..));
                    let path = self.target_path(t, cx);
                    let Ty::Set(m) = t.ty else { return Err((row.line, "`+=` on a non-set".into())) };
                    match self.set(x, cx)? {
                        SetV::Undef => writeln!(out, "{ind}{}", fail("undefined value")).unwrap(),
                        SetV::Def { d, parts } => {
                            if let Some(d) = d {
                                writeln!(out, "{ind}if !({d}) then {} end;", fail("undefined value")).unwrap();
                            }
                            if let [Part::One(v)] = &parts[..] {
                                writeln!(out, "{ind}{path}[{v}] := {add};").unwrap();
                            } else {
                                let k = "e";
                                let e = self.elem(&parts, k)?;
                                let new =
                                    if add { format!("{path}[{k}] | ({e})") } else { format!("{path}[{k}] & !({e})") };
                                writeln!(out, "{ind}for {k} : {} do {path}[{k}] := {new} end;", self.id_ty(m)).unwrap();
                            }
                        }
                    }
                }
                St::Assert(x, kind) => {
                    writeln!(out, "{ind}if !{} then {} end;", self.truth(x, cx)?, fail(kind)).unwrap();
                }
                St::Send { kind, vc, fields, to } => {
                    let k = *kind as usize;
                    if !fits {
                        writeln!(out, "{ind}undefine out; out.kind := {};", self.kind_const(k)).unwrap();
                    }
                    for (i, f) in fields {
                        let member = format!("out.{}", self.field_member(k, *i as usize));
                        match self.val(&f.value, cx, Some(f.ty))? {
                            Val::Undef if f.slot.opt => {}
                            Val::Undef => writeln!(out, "{ind}{}", fail("undefined value")).unwrap(),
                            Val::Def { d, v } => {
                                let mut set = String::new();
                                if let Ty::Int(lo, hi) = f.ty {
                                    write!(set, "if !({lo} <= {v} & {v} <= {hi}) then {} end; ", fail("out of range"))
                                        .unwrap();
                                }
                                if !fits {
                                    write!(set, "{member} := {v};").unwrap();
                                }
                                match d {
                                    None if set.is_empty() => {}
                                    None => writeln!(out, "{ind}{set}").unwrap(),
                                    // an undefined value leaves an optional field undefined
                                    Some(_) if f.slot.opt && set.is_empty() => {}
                                    Some(d) if f.slot.opt => writeln!(out, "{ind}if {d} then {set} end;").unwrap(),
                                    Some(d) if set.is_empty() => {
                                        writeln!(out, "{ind}if !({d}) then {} end;", fail("undefined value")).unwrap()
                                    }
                                    Some(d) => {
                                        writeln!(out, "{ind}if {d} then {set} else {} end;", fail("undefined value"))
                                            .unwrap()
                                    }
                                }
                            }
                        }
                    }
                    let (dm, idx) = match to {
                        To::Agent(a) => {
                            let (m, i) = self.s.agents[*a as usize];
                            (m, i.to_string())
                        }
                        To::Set(..) => return Err((0, "a send to a set: not written by the Murphi export yet".into())),
                        To::Node(base, x) => {
                            let m = self.machine_at(*base);
                            match self.val(x, cx, None)? {
                                Val::Undef => {
                                    writeln!(out, "{ind}{}", fail("undefined value")).unwrap();
                                    (m, "0".into())
                                }
                                Val::Def { d, v } => {
                                    if let Some(d) = d {
                                        writeln!(out, "{ind}if !({d}) then {} end;", fail("undefined value")).unwrap();
                                    }
                                    (m, v)
                                }
                            }
                        }
                    };
                    let j = sends.len();
                    if fits {
                        writeln!(out, "{ind}d{j} := {idx};").unwrap();
                    } else {
                        let q = format!("{}[{idx}][t]", self.chan_var(*vc as usize, dm, row.machine));
                        let push = match self.s.vcs[*vc as usize].1 {
                            ChannelOrder::Fifo => "push_fifo",
                            ChannelOrder::Unordered => "push_set",
                        };
                        writeln!(out, "{ind}{push}({q}, out);").unwrap();
                    }
                    sends.push((*vc as usize, dm, format!("d{j}")));
                }
            }
        }
        Ok(sends)
    }

    // ---- the model ----

    fn model(&self) -> R<String> {
        let s = self.s;
        let mut o = String::new();
        let mutant = s.mutant.as_ref().map_or(String::new(), |m| format!(", mutant {m}"));
        let sizes: Vec<String> = s.machines.iter().map(|m| format!("{} {}", m.name, m.count)).collect();
        writeln!(
            o,
            "-- {} as a Murphi model, written by `fabricsim export --murphi` from {}\n\
             -- ({}, {} data values{mutant}; {}).\n\
             -- Check it as fabricsim does (its deadlock is the invariant \"deadlock\" below):\n\
             --   rumur {RUMUR_FLAGS} --output model.c model.m && cc -O2 -pthread -mcx16 model.c -o model && ./model",
            s.name,
            self.table.file,
            sizes.join(", "),
            s.values,
            if self.opts.symmetry { "scalarsets: run with --symmetry-reduction exhaustive" } else { "no scalarsets" },
        )
        .unwrap();
        writeln!(o, "\nconst\n  CAP : {};", self.cap).unwrap();
        // types
        writeln!(o, "\ntype").unwrap();
        let scalar =
            |n: usize| if self.opts.symmetry && n > 1 { format!("scalarset({n})") } else { format!("0..{}", n - 1) };
        if self.uses_data {
            writeln!(o, "  DATA : {};", scalar(s.values)).unwrap();
        }
        for m in &s.machines {
            writeln!(o, "  {}_id : {};", m.name, scalar(m.count)).unwrap();
            writeln!(o, "  {}_set : array [{}_id] of boolean;", m.name, m.name).unwrap();
            let st: Vec<String> = m.states.iter().map(|x| format!("{}_{x}", m.name)).collect();
            writeln!(o, "  {}_state : enum {{{}}};", m.name, st.join(", ")).unwrap();
        }
        for (n, vals) in &s.enums {
            let v: Vec<String> = vals.iter().map(|x| format!("{n}_{x}")).collect();
            writeln!(o, "  {n} : enum {{{}}};", v.join(", ")).unwrap();
        }
        let kinds: Vec<String> = (0..s.msgs.len()).map(|k| self.kind_const(k)).collect();
        writeln!(o, "  msg_kind : enum {{{}}};", kinds.join(", ")).unwrap();
        writeln!(o, "  MSG : record").unwrap();
        writeln!(o, "    kind : msg_kind;").unwrap();
        for (k, kind) in s.msgs.iter().enumerate() {
            for (i, f) in kind.fields.iter().enumerate() {
                writeln!(o, "    {} : {};", self.field_member(k, i), self.ty(f.1)).unwrap();
            }
        }
        writeln!(o, "  end;\n  QUEUE : array [0..CAP-1] of MSG;").unwrap();
        for m in &s.machines {
            writeln!(o, "  {}_rec : record\n    state : {}_state;", m.name, m.name).unwrap();
            for v in &m.vars {
                writeln!(o, "    {} : {};", v.name, self.ty(v.ty)).unwrap();
            }
            writeln!(o, "  end;").unwrap();
        }
        if !s.ghosts.is_empty() {
            writeln!(o, "  ghost_rec : record").unwrap();
            for g in &s.ghosts {
                writeln!(o, "    {} : {};", g.name, self.ty(g.ty)).unwrap();
            }
            writeln!(o, "  end;").unwrap();
        }
        // state
        writeln!(o, "\nvar").unwrap();
        for m in &s.machines {
            writeln!(o, "  {} : array [{}_id] of {}_rec;", m.name, m.name, m.name).unwrap();
        }
        if !s.ghosts.is_empty() {
            writeln!(o, "  ghost : ghost_rec;").unwrap();
        }
        for &(vc, to, from) in &self.chans {
            let order = match s.vcs[vc].1 {
                ChannelOrder::Fifo => "fifo",
                ChannelOrder::Unordered => "unordered, kept sorted",
            };
            writeln!(
                o,
                "  {} : array [{}] of array [{}] of QUEUE;  -- {}: {} -> {}, {order}",
                self.chan_var(vc, to, from),
                self.id_ty(to),
                self.id_ty(from),
                s.vcs[vc].0,
                s.machines[from].name,
                s.machines[to].name
            )
            .unwrap();
        }
        self.helpers(&mut o);
        self.start(&mut o)?;
        let rules = self.rules(&mut o)?;
        self.invariants(&mut o, &rules)?;
        Ok(o)
    }

    fn helpers(&self, o: &mut String) {
        let s = self.s;
        o.push_str(
            "\n---- channels ----\n\n\
             function qsize(q : QUEUE) : 0..CAP;\nvar n : 0..CAP;\nbegin\n  n := 0;\n  \
             for j : 0..CAP-1 do if !isundefined(q[j].kind) then n := n + 1 end end;\n  return n;\nend;\n\n\
             -- the caller has checked that the message fits\n\
             procedure push_fifo(var q : QUEUE; m : MSG);\nbegin\n  q[qsize(q)] := m;\nend;\n\n\
             -- remove message k; the rest move up, the free slots stay undefined\n\
             procedure take(var q : QUEUE; k : 0..CAP-1);\nbegin\n  \
             for j : 0..CAP-1 do if j >= k & j < CAP-1 then q[j] := q[j+1] end end;\n  undefine q[CAP-1];\nend;\n",
        );
        for m in &s.machines {
            writeln!(
                o,
                "\nfunction count_{n}(x : {n}_set) : 0..{c};\nvar c : 0..{c};\nbegin\n  c := 0;\n  \
                 for j : {n}_id do if x[j] then c := c + 1 end end;\n  return c;\nend;",
                n = m.name,
                c = m.count
            )
            .unwrap();
        }
        if !s.vcs.iter().any(|v| v.1 == ChannelOrder::Unordered) {
            return;
        }
        // An unordered channel holds a multiset: its messages sorted by a
        // key (a number per distinct message) make one array per multiset.
        for (n, vals) in &s.enums {
            writeln!(o, "\nfunction ord_{n}(x : {n}) : 0..{};\nbegin\n  switch x", vals.len() - 1).unwrap();
            for (i, v) in vals.iter().enumerate() {
                writeln!(o, "  case {n}_{v}: return {i};").unwrap();
            }
            writeln!(o, "  end;\n  return 0;\nend;").unwrap();
        }
        let mut width = 1i64;
        let mut cases = Vec::new();
        for (k, kind) in s.msgs.iter().enumerate() {
            let mut w = 1i64;
            let mut terms = Vec::new();
            for (i, (_, t, slot)) in kind.fields.iter().enumerate() {
                let x = format!("m.{}", self.field_member(k, i));
                let (lo, n) = s.domain(*t);
                let code = match t {
                    Ty::Bool => format!("({x} ? 1 : 0)"),
                    Ty::Enum(e) => format!("ord_{}({x})", s.enums[*e].0),
                    _ => format!("({x} - {lo})"),
                };
                let code = if slot.opt { format!("(isundefined({x}) ? 0 : {code} + 1)") } else { code };
                terms.push(format!("{code} * {w}"));
                w *= n + slot.opt as i64;
            }
            width = width.max(w);
            cases.push((k, terms));
        }
        let max = width * s.msgs.len() as i64 - 1;
        writeln!(o, "\n-- a number per distinct message (the sort key of an unordered channel)").unwrap();
        writeln!(o, "function mkey(m : MSG) : 0..{max};\nbegin\n  switch m.kind").unwrap();
        for (k, terms) in cases {
            let mut t = vec![format!("{}", k as i64 * width)];
            t.extend(terms);
            writeln!(o, "  case {}: return {};", self.kind_const(k), t.join(" + ")).unwrap();
        }
        writeln!(o, "  end;\n  return 0;\nend;").unwrap();
        o.push_str(
            "\n-- insert in key order (the caller has checked that it fits)\n\
             procedure push_set(var q : QUEUE; m : MSG);\nvar n : 0..CAP; p : 0..CAP;\nbegin\n  \
             n := qsize(q);\n  p := 0;\n  \
             for j : 0..CAP-1 do if j < n & mkey(q[j]) <= mkey(m) then p := j + 1 end end;\n  \
             for j := CAP-1 to 1 by -1 do if j > p & j <= n then q[j] := q[j-1] end end;\n  \
             q[p] := m;\nend;\n",
        );
    }

    fn start(&self, o: &mut String) -> R<()> {
        let s = self.s;
        writeln!(o, "\n---- initial states: one per start value ----\n").unwrap();
        let mut cx = Cx::global();
        let params: Vec<String> = s
            .starts
            .iter()
            .map(|(n, t, one)| {
                if *one {
                    return Err((0, format!("start {n}: one: not written by the Murphi export yet (issue 36)")));
                }
                cx.bound.push((format!("s_{n}"), Some(*t)));
                Ok(format!("s_{n} : {}", self.ty(*t)))
            })
            .collect::<R<_>>()?;
        if !params.is_empty() {
            writeln!(o, "ruleset {} do", params.join("; ")).unwrap();
        }
        writeln!(o, "startstate \"init\"\nbegin").unwrap();
        let init = |path: String, ty: Ty, opt: bool, x: &Option<Ex>, cx: &Cx, o: &mut String| -> R<()> {
            let Some(x) = x else {
                // the interpreter's default: undefined, empty, false, the lowest value
                let v = match ty {
                    _ if opt => format!("undefine {path};"),
                    Ty::Set(m) => format!("for e : {} do {path}[e] := false end;", self.id_ty(m)),
                    Ty::Bool => format!("{path} := false;"),
                    Ty::Int(lo, _) => format!("{path} := {lo};"),
                    Ty::Enum(_) | Ty::State(_) => format!("{path} := {};", self.constant(Some(ty), s.domain(ty).0)?),
                    Ty::Data | Ty::Node(_) => return Err((0, format!("{path}: no initial value"))),
                    Ty::Addr => return Err((0, format!("{path}: an address: not written by the Murphi export yet"))),
                };
                writeln!(o, "  {v}").unwrap();
                return Ok(());
            };
            if let Ty::Set(m) = ty {
                let SetV::Def { parts, .. } = self.set(x, cx)? else { return Err((0, "an undefined set".into())) };
                writeln!(o, "  for e : {} do {path}[e] := {} end;", self.id_ty(m), self.elem(&parts, "e")?).unwrap();
                return Ok(());
            }
            match self.val(x, cx, Some(ty))? {
                Val::Undef => writeln!(o, "  undefine {path};").unwrap(),
                Val::Def { d: None, v } => writeln!(o, "  {path} := {v};").unwrap(),
                Val::Def { d: Some(d), v } => {
                    writeln!(o, "  if {d} then {path} := {v} else undefine {path} end;").unwrap()
                }
            }
            Ok(())
        };
        for g in &s.ghosts {
            init(format!("ghost.{}", g.name), g.ty, g.slot.opt, &g.init, &cx, o)?;
        }
        for m in &s.machines {
            writeln!(o, "  for t : {}_id do", m.name).unwrap();
            writeln!(o, "    {}[t].state := {};", m.name, self.state_const(m.state_base)).unwrap();
            for v in &m.vars {
                let mut line = String::new();
                init(format!("{}[t].{}", m.name, v.name), v.ty, v.slot.opt, &v.init, &cx, &mut line)?;
                o.push_str("  ");
                o.push_str(&line.replace("\n  ", "\n    "));
            }
            writeln!(o, "  end;").unwrap();
        }
        for &(vc, to, from) in &self.chans {
            writeln!(o, "  undefine {};", self.chan_var(vc, to, from)).unwrap();
        }
        writeln!(o, "end;").unwrap();
        if !params.is_empty() {
            writeln!(o, "end;").unwrap();
        }
        Ok(())
    }

    /// Protocol-wide states in which row `r` is in force, each with the
    /// earlier rows of its cell (a message takes the first that holds).
    fn row_states(&self, r: usize) -> Vec<(usize, Vec<usize>)> {
        let s = self.s;
        let row = &s.rows[r];
        let m = &s.machines[row.machine];
        let mut out = Vec::new();
        for g in m.state_base..m.state_base + m.states.len() {
            let cell = s.cells[s.cell_start[g] + row.event];
            let rows: Vec<usize> =
                s.order[cell.start as usize..cell.end as usize].iter().map(|&x| x as usize).collect();
            if let Some(p) = rows.iter().position(|&x| x == r) {
                out.push((g, rows[..p].to_vec()));
            }
        }
        out
    }

    fn row_text(&self, r: usize) -> String {
        let line = self.s.rows[r].line;
        let t = self.table.lines.get(line as usize - 1).map_or("", |l| l.trim());
        let t: String = t.chars().filter(|c| *c != '"' && *c != '\\').collect();
        format!("line {line}: {}", t.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// Cx of a row's guard (and body): its machine's record `M[t]`.
    fn row_cx(&self, m: usize, msg: Option<(usize, String)>, src: Option<usize>) -> Cx {
        let mut cx = Cx::global();
        cx.machine = Some(m);
        cx.own = format!("{}[t]", self.s.machines[m].name);
        cx.msg = msg;
        cx.src = src.map(|x| (x, "f".to_string()));
        cx
    }

    fn rules(&self, o: &mut String) -> R<Vec<Rule>> {
        let s = self.s;
        let mut rules = Vec::new();
        writeln!(o, "\n---- rules: one per row (and sending machine) ----").unwrap();
        for (mi, m) in s.machines.iter().enumerate() {
            let n_actions = m.events.iter().filter(|e| e.msg.is_none()).count();
            // deliveries, by message kind and sending machine
            for (ev, e) in m.events.iter().enumerate().skip(n_actions) {
                let k = e.msg.expect("a message event") as usize;
                let vc = s.msgs[k].vc as usize;
                let fifo = s.vcs[vc].1 == ChannelOrder::Fifo;
                for &from in &self.senders[k] {
                    let src = (self.senders[k].len() == 1).then_some(from);
                    let q = format!("{}[t][f]", self.chan_var(vc, mi, from));
                    let slot = if fifo { "0" } else { "k" };
                    let mut params = vec![("t".to_string(), self.id_ty(mi)), ("f".to_string(), self.id_ty(from))];
                    let mut head =
                        format!("!isundefined({q}[{slot}].kind) & {q}[{slot}].kind = {}", self.kind_const(k));
                    if !fifo {
                        params.push(("k".into(), "0..CAP-1".into()));
                        head = format!(
                            "!isundefined({q}[k].kind) & (k = 0 | mkey({q}[k]) != mkey({q}[k-1])) & {q}[k].kind = {}",
                            self.kind_const(k)
                        );
                    }
                    let gcx = self.row_cx(mi, Some((k, format!("{q}[{slot}]"))), src);
                    let mut bcx = gcx.clone();
                    bcx.msg = Some((k, "msg".into()));
                    let prologue = format!("    msg := {q}[{slot}];\n    take({q}, {slot});\n");
                    let mut violations: Vec<String> = Vec::new();
                    let mut impossible: Vec<String> = Vec::new();
                    for g in m.state_base..m.state_base + m.states.len() {
                        let cell = s.cells[s.cell_start[g] + ev];
                        let st = format!("{}[t].state = {}", m.name, self.state_const(g));
                        if cell.impossible {
                            impossible.push(st);
                            continue;
                        }
                        let rows = &s.order[cell.start as usize..cell.end as usize];
                        let mut none = vec![st];
                        let mut always = false;
                        for &x in rows {
                            match &s.rows[x as usize].guard {
                                None => always = true,
                                Some(gd) => none.push(format!(
                                    "!{}",
                                    self.truth(gd, &gcx).map_err(|e| (s.rows[x as usize].line, e.1))?
                                )),
                            }
                        }
                        if !always {
                            violations.push(format!("({})", none.join(" & ")));
                        }
                    }
                    let from_name = if self.senders[k].len() > 1 {
                        format!(" from {}", s.machines[from].name)
                    } else {
                        String::new()
                    };
                    for (what, states) in [("no transition", violations), ("impossible", impossible)] {
                        if states.is_empty() {
                            continue;
                        }
                        let guard = format!("{head} & ({})", states.join(" | "));
                        let name = format!("{} gets {}{from_name}: {what}", m.name, s.msgs[k].name);
                        self.emit_rule(o, &params, &name, &guard, &format!("    error \"{name}\";\n"), "")?;
                        rules.push(Rule { params: params.clone(), guard, env: false });
                    }
                    for r in (0..s.rows.len()).filter(|&r| s.rows[r].machine == mi && s.rows[r].event == ev) {
                        let row = &s.rows[r];
                        if row.stall {
                            continue;
                        }
                        let line = row.line;
                        let at = |e: (u32, String)| (line, e.1);
                        let mut alts = Vec::new();
                        'states: for (g, before) in self.row_states(r) {
                            let mut c = vec![format!("{}[t].state = {}", m.name, self.state_const(g))];
                            for b in before {
                                // an earlier row without a guard always takes the message
                                let Some(gd) = &s.rows[b].guard else { continue 'states };
                                c.push(format!("!{}", self.truth(gd, &gcx).map_err(at)?));
                            }
                            alts.push(format!("({})", c.join(" & ")));
                        }
                        if alts.is_empty() {
                            writeln!(o, "\n-- {}: never in force (an earlier row always holds)", self.row_text(r))
                                .unwrap();
                            continue;
                        }
                        let mut guard = format!("{head} & ({})", alts.join(" | "));
                        if let Some(gd) = &row.guard {
                            guard += &format!(" & {}", self.truth(gd, &gcx).map_err(at)?);
                        }
                        let fits = self.fits(o, r, &bcx, mi, Some((vc, from)), &params)?;
                        if let Some(f) = fits {
                            guard += &format!(" & {f}(t, f, {q}[{slot}])");
                        }
                        let mut body = prologue.clone();
                        self.body(r, &bcx, false, &mut body).map_err(at)?;
                        let next = row.next.map_or(String::new(), |n| {
                            format!("    {}[t].state := {};\n", m.name, self.state_const(n))
                        });
                        let name = format!("{}{from_name} {}", m.name, self.row_text(r));
                        self.emit_rule(o, &params, &name, &guard, &(body + &next), "msg : MSG; out : MSG;")?;
                        rules.push(Rule { params: params.clone(), guard, env: false });
                    }
                }
            }
            // actions: every row whose guard holds
            for r in (0..s.rows.len()).filter(|&r| s.rows[r].machine == mi && s.rows[r].event < n_actions) {
                let row = &s.rows[r];
                let line = row.line;
                let at = |e: (u32, String)| (line, e.1);
                let ev = &m.events[row.event];
                let mut cx = self.row_cx(mi, None, None);
                let mut params = vec![("t".to_string(), self.id_ty(mi))];
                if let Some((t, _, _)) = ev.param {
                    cx.param = Some((t, "p".into()));
                    params.push(("p".into(), self.ty(t)));
                }
                let states: Vec<String> = self
                    .row_states(r)
                    .into_iter()
                    .map(|(g, _)| format!("{}[t].state = {}", m.name, self.state_const(g)))
                    .collect();
                let mut guard = format!("({})", states.join(" | "));
                if let Some(gd) = &row.guard {
                    guard += &format!(" & {}", self.truth(gd, &cx).map_err(at)?);
                }
                if let Some(f) = self.fits(o, r, &cx, mi, None, &params)? {
                    let args: Vec<&str> = params.iter().map(|p| p.0.as_str()).collect();
                    guard += &format!(" & {f}({})", args.join(", "));
                }
                let mut body = String::new();
                self.body(r, &cx, false, &mut body).map_err(at)?;
                if let Some(n) = row.next {
                    writeln!(body, "    {}[t].state := {};", m.name, self.state_const(n)).unwrap();
                }
                let name = format!("{} {}", m.name, self.row_text(r));
                self.emit_rule(o, &params, &name, &guard, &body, "out : MSG;")?;
                rules.push(Rule { params, guard, env: ev.env });
            }
        }
        Ok(rules)
    }

    fn emit_rule(
        &self,
        o: &mut String,
        params: &[(String, String)],
        name: &str,
        guard: &str,
        body: &str,
        locals: &str,
    ) -> R<()> {
        let ps: Vec<String> = params.iter().map(|(n, t)| format!("{n} : {t}")).collect();
        writeln!(o, "\nruleset {} do rule \"{name}\"\n  {guard}\n==>", ps.join("; ")).unwrap();
        if !locals.is_empty() {
            writeln!(o, "var {locals}").unwrap();
        }
        writeln!(o, "begin\n{body}end; end;").unwrap();
        Ok(())
    }

    /// The function telling whether row `r`'s sends fit their channels (none if it sends nothing).
    fn fits(
        &self,
        o: &mut String,
        r: usize,
        cx: &Cx,
        mi: usize,
        delivery: Option<(usize, usize)>,
        params: &[(String, String)],
    ) -> R<Option<String>> {
        let s = self.s;
        let row = &s.rows[r];
        if !row.body.iter().any(|st| matches!(st, St::Send { .. })) {
            return Ok(None);
        }
        let name = match delivery {
            Some((_, from)) => format!("fits_{r}_{}", s.machines[from].name),
            None => format!("fits_{r}"),
        };
        let mut fcx = cx.clone();
        fcx.own = "me".into();
        fcx.ghost = "gh".into();
        let mut body = String::new();
        let sends = self.body(r, &fcx, true, &mut body).map_err(|e| (row.line, e.1))?;
        let mut ps: Vec<String> = vec![format!("t : {}", self.id_ty(mi))];
        match delivery {
            Some((_, from)) => {
                ps.push(format!("f : {}", self.id_ty(from)));
                ps.push("msg : MSG".into());
            }
            None => ps.extend(params.iter().skip(1).map(|(n, t)| format!("{n} : {t}"))),
        }
        let mut locals = vec![format!("me : {}_rec", s.machines[mi].name)];
        if !s.ghosts.is_empty() {
            locals.push("gh : ghost_rec".into());
        }
        for (j, (_, dm, _)) in sends.iter().enumerate() {
            locals.push(format!("d{j} : {}", self.id_ty(*dm)));
        }
        let mut checks = Vec::new();
        for (j, (vc, dm, d)) in sends.iter().enumerate() {
            let mut n = format!("qsize({}[{d}][t])", self.chan_var(*vc, *dm, mi));
            // the row's earlier sends into the same channel
            for (vi, di, dd) in &sends[..j] {
                if vi == vc && di == dm {
                    n += &format!(" + ({dd} = {d} ? 1 : 0)");
                }
            }
            if let Some((dvc, from)) = delivery {
                // the message being delivered has left its channel
                if dvc == *vc && *dm == mi && from == mi {
                    n += &format!(" - ({d} = t & t = f ? 1 : 0)");
                }
            }
            checks.push(format!("{n} < CAP"));
        }
        writeln!(
            o,
            "\n-- {}: whether its sends fit (a violation on the way: true, the rule fails when fired)\n\
             function {name}({}) : boolean;\nvar {};\nbegin\n    me := {}[t];",
            self.row_text(r),
            ps.join("; "),
            locals.join("; "),
            s.machines[mi].name
        )
        .unwrap();
        if !s.ghosts.is_empty() {
            writeln!(o, "    gh := ghost;").unwrap();
        }
        writeln!(o, "{body}    return {};\nend;", checks.join(" & ")).unwrap();
        Ok(Some(name))
    }

    fn invariants(&self, o: &mut String, rules: &[Rule]) -> R<()> {
        let s = self.s;
        writeln!(o, "\n---- invariants ----").unwrap();
        for inv in &s.invariants {
            let t = self.truth(&inv.ex, &Cx::global()).map_err(|e| (inv.line, e.1))?;
            writeln!(o, "\ninvariant \"{}\"\n  {t};", inv.name).unwrap();
        }
        if !self.opts.deadlock {
            return Ok(());
        }
        let mut quiet: Vec<String> = Vec::new();
        for &(vc, to, from) in &self.chans {
            quiet.push(format!(
                "(forall t : {} do forall f : {} do isundefined({}[t][f][0].kind) end end)",
                self.id_ty(to),
                self.id_ty(from),
                self.chan_var(vc, to, from)
            ));
        }
        for (mi, m) in s.machines.iter().enumerate() {
            let busy: Vec<String> = (m.state_base..m.state_base + m.states.len())
                .filter(|&g| s.transient[g])
                .map(|g| format!("{}[t].state != {}", m.name, self.state_const(g)))
                .collect();
            if !busy.is_empty() {
                quiet.push(format!("(forall t : {} do {} end)", self.id_ty(mi), busy.join(" & ")));
            }
        }
        let mut progress: Vec<String> = Vec::new();
        for r in rules.iter().filter(|r| !r.env) {
            let mut e = format!("({})", r.guard);
            for (n, t) in r.params.iter().rev() {
                e = format!("(exists {n} : {t} do {e} end)");
            }
            progress.push(e);
        }
        if quiet.is_empty() {
            quiet.push("true".into());
        }
        if progress.is_empty() {
            progress.push("false".into());
        }
        writeln!(
            o,
            "\n-- fabricsim's deadlock: work pending (a message in flight or a machine in a transient state)\n\
             -- and nothing but environment actions enabled\ninvariant \"deadlock\"\n  ({})\n  | {};",
            quiet.join("\n    & "),
            progress.join("\n  | ")
        )
        .unwrap();
        Ok(())
    }
}
