//! Static checks and compilation: resolve every name (with did-you-mean),
//! check types, lay variables out in packed words, refuse a table with a
//! (state, event) pair neither handled nor declared impossible.

use std::collections::{BTreeMap, BTreeSet};

use super::ast::{self, Expr, ExprKind, Name, Pos, TypeKind, TypeRef};
use super::model::{bits, Ex, Op, Slot, Ty, AGENT_BITS, GHOST_BITS, MAX_BOUND, MAX_FIELDS, UNDEF};
use super::spec::*;
use super::TableError;
use crate::agents::protocol::{ChannelOrder, Role};

/// The sizes a table is compiled for.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub caches: usize,
    pub directories: usize,
    pub values: usize,
    /// The lines of a `per address` machine (1 for a table without one).
    pub addresses: usize,
}

impl Sizes {
    /// One address (a table without `per address` machines ignores it).
    pub fn new(caches: usize, directories: usize, values: usize) -> Self {
        Sizes { caches, directories, values, addresses: 1 }
    }
}

type R<T> = Result<T, TableError>;

struct Scope {
    machine: Option<usize>,
    msg: Option<usize>,
    src: Option<usize>,
    param: Option<(String, Ty)>,
    bound: Vec<(String, Ty)>,
    /// Invariants read every machine; rows only their own.
    remote: bool,
    /// A per-address machine's row: the line it is compiled for.
    line: Option<usize>,
}

struct Cx<'a> {
    file: &'a str,
    spec: Spec,
    /// Per machine: which machine sends each message to it (inferred from sends).
    senders: BTreeMap<usize, BTreeSet<usize>>,
    receives: BTreeMap<usize, BTreeSet<usize>>,
    /// `type NAME = LO..HI`.
    ranges: Vec<(String, i64, i64)>,
    /// Per machine: declared `per address`; the ghosts so declared.
    per_address: Vec<bool>,
    per_address_ghosts: Vec<String>,
}

fn err<T>(file: &str, pos: Pos, msg: String) -> R<T> {
    Err(TableError::at(file, pos.line, pos.col, msg))
}

fn unknown(what: &str, name: &str, known: &[String]) -> String {
    let close = crate::error::did_you_mean_name(name, known.iter().map(|s| s.as_str()));
    let list =
        if known.is_empty() { "none is declared".to_string() } else { format!("expected one of {}", known.join(", ")) };
    format!("{name:?}: no such {what};{close} {list}")
}

pub fn compile(f: &ast::File, file: &str, sizes: Sizes, mutant: Option<&str>) -> R<Spec> {
    let name = f.name.as_ref().map(|n| n.text.clone()).unwrap_or_else(|| "table".into());
    let mut cx = Cx {
        file,
        spec: Spec {
            name,
            machines: vec![],
            msgs: vec![],
            vcs: vec![],
            capacity: usize::MAX,
            rows: vec![],
            order: vec![],
            cells: vec![],
            ncells: 0,
            addresses: sizes.addresses,
            state_machine: vec![],
            cell_start: vec![],
            transient: vec![],
            state_slot: Slot { off: 0, width: 0, opt: false, lo: 0 },
            ghosts: vec![],
            starts: vec![],
            invariants: vec![],
            agents: vec![],
            values: sizes.values,
            enums: vec![],
            mutant: mutant.map(str::to_string),
        },
        senders: BTreeMap::new(),
        receives: BTreeMap::new(),
        ranges: vec![],
        per_address: f.machines.iter().map(|m| m.per_address).collect(),
        per_address_ghosts: f.ghosts.iter().filter(|g| g.per_address).map(|g| g.name.text.clone()).collect(),
    };
    // mutants first: an unknown one is the caller's error, whatever else is wrong
    // a mutant may replace several rows: each name once, in the file's order
    let mut mutants: Vec<String> = Vec::new();
    for n in f.machines.iter().flat_map(|m| &m.rows).filter_map(|r| r.mutant.as_ref()) {
        if !mutants.contains(&n.text) {
            mutants.push(n.text.clone());
        }
    }
    if let Some(m) = mutant {
        if !mutants.iter().any(|x| x == m) {
            let known = if mutants.is_empty() { "this table declares none".into() } else { mutants.join(", ") };
            return Err(TableError::mutant(format!("{m:?}: no such mutant in {file}; expected one of {known}")));
        }
    }
    cx.types(f)?;
    cx.channels(f)?;
    cx.machines(f, sizes)?;
    cx.messages(f)?;
    cx.variables(f)?;
    cx.rows(f, mutant)?;
    cx.invariants(f)?;
    Ok(cx.spec)
}

impl<'a> Cx<'a> {
    fn types(&mut self, f: &ast::File) -> R<()> {
        for (n, d) in &f.types {
            self.fresh(&n.text, n.pos)?;
            match d {
                ast::TypeDef::Enum(v) => {
                    self.spec.enums.push((n.text.clone(), v.iter().map(|x| x.text.clone()).collect()))
                }
                ast::TypeDef::Range(lo, hi) => {
                    if lo > hi {
                        return err(self.file, n.pos, format!("{lo}..{hi}: expected LO <= HI"));
                    }
                    self.ranges.push((n.text.clone(), *lo, *hi))
                }
            }
        }
        Ok(())
    }

    /// Type names must not repeat.
    fn fresh(&self, name: &str, pos: Pos) -> R<()> {
        let taken = self.spec.enums.iter().any(|e| e.0 == name)
            || self.spec.machines.iter().any(|m| m.name == name)
            || self.ranges.iter().any(|r| r.0 == name);
        if taken {
            return err(self.file, pos, format!("{name:?} is declared twice"));
        }
        Ok(())
    }

    fn channels(&mut self, f: &ast::File) -> R<()> {
        let mut cap: Option<(i64, Pos)> = None;
        for v in &f.vcs {
            if self.spec.vcs.iter().any(|x| x.0 == v.name.text) {
                return err(self.file, v.name.pos, format!("channel {:?} is declared twice", v.name.text));
            }
            let order = if v.fifo { ChannelOrder::Fifo } else { ChannelOrder::Unordered };
            self.spec.vcs.push((v.name.text.clone(), order));
            let c = v.capacity;
            if let Some((n, pos)) = c {
                if n < 1 {
                    return err(self.file, pos, format!("capacity {n}: expected 1 or more messages"));
                }
            }
            match (cap, c, self.spec.vcs.len()) {
                (_, _, 1) => cap = c,
                (a, b, _) if a.map(|x| x.0) != b.map(|x| x.0) => {
                    return err(
                        self.file,
                        v.name.pos,
                        format!(
                            "channel {:?}: every channel has the same capacity (the checker bounds all alike); \
                             expected {}",
                            v.name.text,
                            a.map_or("none".to_string(), |x| format!("capacity {}", x.0))
                        ),
                    )
                }
                _ => {}
            }
        }
        if self.spec.vcs.is_empty() {
            return Err(TableError::at(
                self.file,
                1,
                1,
                "no channel: expected at least one `vc NAME fifo|unordered`".into(),
            ));
        }
        if self.spec.vcs.len() > 6 {
            return err(self.file, f.vcs[6].name.pos, "a 7th channel: expected at most 6".into());
        }
        self.spec.capacity = cap.map_or(usize::MAX, |c| c.0 as usize);
        Ok(())
    }

    fn machines(&mut self, f: &ast::File, sizes: Sizes) -> R<()> {
        let mut base = 0usize;
        let mut states = 0usize;
        for m in &f.machines {
            self.fresh(&m.name.text, m.name.pos)?;
            let count = match &m.count {
                ast::Count::One => 1,
                ast::Count::Fixed(n, pos) => {
                    if !(1..=64).contains(n) {
                        return err(self.file, *pos, format!("{n} instances: expected 1 to 64"));
                    }
                    *n as usize
                }
                ast::Count::Key(k) => match k.text.as_str() {
                    "caches" => sizes.caches,
                    "directories" => sizes.directories,
                    _ => {
                        return err(
                            self.file,
                            k.pos,
                            format!("{:?}: expected a number or a [check] size key (caches, directories)", k.text),
                        )
                    }
                },
            };
            let role = match &m.role {
                None if count > 1 => Role::Core,
                None => Role::Home,
                Some(r) if r.text == "core" => Role::Core,
                Some(r) if r.text == "home" => Role::Home,
                Some(r) => return err(self.file, r.pos, format!("role {:?}: expected core or home", r.text)),
            };
            let mut names: Vec<String> = Vec::new();
            for s in m.stable.iter().chain(&m.transient) {
                if names.contains(&s.text) {
                    return err(self.file, s.pos, format!("state {:?} is declared twice in {}", s.text, m.name.text));
                }
                names.push(s.text.clone());
            }
            if m.stable.is_empty() {
                return err(
                    self.file,
                    m.name.pos,
                    format!(
                        "machine {}: no stable state; expected `stable S ...` (the first is its initial state)",
                        m.name.text
                    ),
                );
            }
            for (i, _) in names.iter().enumerate() {
                self.spec.state_machine.push(self.spec.machines.len());
                self.spec.transient.push(i >= m.stable.len());
            }
            for i in 0..count {
                self.spec.agents.push((self.spec.machines.len(), i));
            }
            let mut events: Vec<Event> = Vec::new();
            for a in &m.actions {
                if events.iter().any(|e| e.name == a.name.text) {
                    return err(self.file, a.name.pos, format!("action {:?} is declared twice", a.name.text));
                }
                events.push(Event { name: a.name.text.clone(), msg: None, param: None, env: a.env });
            }
            self.spec.machines.push(Machine {
                name: m.name.text.clone(),
                count,
                base: base as u8,
                role,
                states: names,
                state_base: states,
                events,
                vars: vec![],
                line: m.name.pos.line,
                lines: if m.per_address { sizes.addresses } else { 1 },
                stride: 0,
            });
            states = self.spec.state_machine.len();
            base += count;
        }
        if sizes.addresses > 1 && !f.machines.iter().any(|m| m.per_address) {
            let (l, c) = f.machines.first().map_or((1, 1), |m| (m.name.pos.line, m.name.pos.col));
            return Err(TableError::at(
                self.file,
                l,
                c,
                format!(
                    "{} addresses, but no machine is `per address`: expected 1 address (or a `machine NAME per address`)",
                    sizes.addresses
                ),
            )
            .of_size("addresses"));
        }
        if f.machines.iter().any(|m| m.per_address) && !(1..=64).contains(&sizes.addresses) {
            let e = TableError::at(self.file, 1, 1, format!("{} addresses: expected 1 to 64", sizes.addresses));
            return Err(e.of_size("addresses"));
        }
        if base > 250 {
            return Err(TableError::at(self.file, 1, 1, format!("{base} agents: expected at most 250")));
        }
        if self.spec.machines.is_empty() {
            return Err(TableError::at(self.file, 1, 1, "no machine: expected at least one `machine NAME`".into()));
        }
        self.spec.state_slot = Slot { off: 0, width: bits(states as u64 - 1), opt: false, lo: 0 };
        // action parameters, now that machines are known
        for (mi, m) in f.machines.iter().enumerate() {
            for (ei, a) in m.actions.iter().enumerate() {
                if let Some((_, t)) = &a.param {
                    let ty = self.ty(t)?;
                    if t.opt || matches!(ty, Ty::Set(_) | Ty::State(_)) {
                        return err(
                            self.file,
                            t.pos,
                            "an action's parameter: expected bool, data, a range, an enum or a machine (a node id)"
                                .into(),
                        );
                    }
                    let (lo, n) = self.spec.domain(ty);
                    if lo < 0 || lo + n > i16::MAX as i64 {
                        return err(self.file, t.pos, "an action's parameter: expected values 0 to 32767".into());
                    }
                    self.spec.machines[mi].events[ei].param = Some((ty, lo, n));
                }
            }
        }
        Ok(())
    }

    fn machine_named(&self, n: &Name) -> R<usize> {
        self.spec.machines.iter().position(|m| m.name == n.text).map_or_else(
            || {
                let known: Vec<String> = self.spec.machines.iter().map(|m| m.name.clone()).collect();
                err(self.file, n.pos, unknown("machine", &n.text, &known))
            },
            Ok,
        )
    }

    fn ty(&self, t: &TypeRef) -> R<Ty> {
        Ok(match &t.kind {
            TypeKind::Bool => Ty::Bool,
            TypeKind::Data => Ty::Data,
            TypeKind::Range(lo, hi) => {
                if lo > hi {
                    return err(self.file, t.pos, format!("{lo}..{hi}: expected LO <= HI"));
                }
                Ty::Int(*lo, *hi)
            }
            TypeKind::Set(m) => Ty::Set(self.machine_named(m)?),
            TypeKind::Named(n) => {
                if let Some(e) = self.spec.enums.iter().position(|e| e.0 == n.text) {
                    Ty::Enum(e)
                } else if let Some(m) = self.spec.machines.iter().position(|m| m.name == n.text) {
                    Ty::Node(m)
                } else {
                    let mut known: Vec<String> = vec!["bool".into(), "data".into()];
                    known.extend(self.spec.enums.iter().map(|e| e.0.clone()));
                    known.extend(self.spec.machines.iter().map(|m| m.name.clone()));
                    // ranges are declared by `type NAME = LO..HI`
                    return match self.range_alias(&n.text) {
                        Some(r) => Ok(r),
                        None => err(self.file, n.pos, unknown("type", &n.text, &known)),
                    };
                }
            }
        })
    }

    fn range_alias(&self, name: &str) -> Option<Ty> {
        self.ranges.iter().find(|r| r.0 == name).map(|r| Ty::Int(r.1, r.2))
    }

    /// A slot for a value of `t` at bit `off`.
    fn slot(&self, t: Ty, opt: bool, off: u32) -> Slot {
        let (lo, n) = self.spec.domain(t);
        let width = match t {
            Ty::Set(m) => self.spec.machines[m].count as u8,
            _ => bits((n - 1 + opt as i64).max(0) as u64),
        };
        let lo = if matches!(t, Ty::Set(_)) { 0 } else { lo };
        Slot { off: off as u8, width, opt, lo }
    }

    fn messages(&mut self, f: &ast::File) -> R<()> {
        if f.messages.len() > 255 {
            return err(self.file, f.messages[255].name.pos, "a 256th message kind: expected at most 255".into());
        }
        for m in &f.messages {
            if self.spec.msgs.iter().any(|x| x.name == m.name.text) {
                return err(self.file, m.name.pos, format!("message {:?} is declared twice", m.name.text));
            }
            let vc = self.spec.vcs.iter().position(|v| v.0 == m.vc.text).map_or_else(
                || {
                    let known: Vec<String> = self.spec.vcs.iter().map(|v| v.0.clone()).collect();
                    err(self.file, m.vc.pos, unknown("channel", &m.vc.text, &known))
                },
                Ok,
            )?;
            if m.fields.len() > MAX_FIELDS {
                return err(
                    self.file,
                    m.fields[MAX_FIELDS].0.pos,
                    format!("message {}: {} fields; expected at most {MAX_FIELDS}", m.name.text, m.fields.len()),
                );
            }
            let mut fields = Vec::new();
            for (n, t) in &m.fields {
                let ty = self.ty(t)?;
                let s = self.slot(ty, t.opt, 0);
                if s.width > 8 || matches!(ty, Ty::Set(_)) {
                    return err(
                        self.file,
                        t.pos,
                        format!(
                            "field {}: its values do not fit a message field (at most 255 values, no sets)",
                            n.text
                        ),
                    );
                }
                fields.push((n.text.clone(), ty, s));
            }
            self.spec.msgs.push(MsgKind { name: m.name.text.clone(), vc: vc as u8, fields });
        }
        Ok(())
    }

    fn variables(&mut self, f: &ast::File) -> R<()> {
        for (n, t, one) in &f.starts {
            let ty = self.ty(t)?;
            if t.opt || matches!(ty, Ty::Set(_)) {
                return err(
                    self.file,
                    t.pos,
                    "a start parameter: expected bool, data, a range, an enum or a machine".into(),
                );
            }
            self.spec.starts.push((n.text.clone(), ty, *one));
        }
        if self.spec.starts.len() > MAX_BOUND - 2 {
            return err(
                self.file,
                f.starts[MAX_BOUND - 2].0.pos,
                format!("expected at most {} start parameters", MAX_BOUND - 2),
            );
        }
        let init_scope = || Scope {
            machine: None,
            msg: None,
            src: None,
            param: None,
            bound: self.spec.starts.iter().map(|s| (s.0.clone(), s.1)).collect(),
            remote: false,
            line: None,
        };
        let mut off = 0;
        for v in &f.ghosts {
            let ty = self.ty(&v.ty)?;
            let slot = self.slot(ty, v.ty.opt, off);
            let lines = if v.per_address { self.spec.addresses } else { 1 };
            off += slot.width as u32 * lines as u32;
            if off > GHOST_BITS {
                return err(
                    self.file,
                    v.name.pos,
                    format!(
                        "ghost {}: the ghost variables need {off} bits at {} addresses; at most {GHOST_BITS} fit",
                        v.name.text, self.spec.addresses
                    ),
                );
            }
            let init = match &v.init {
                Some(e) => Some(self.value(e, &init_scope(), ty, v.ty.opt)?),
                None => None,
            };
            self.default_ok(&v.name, ty, v.ty.opt, init.is_some())?;
            self.spec.ghosts.push(Var { name: v.name.text.clone(), ty, slot, init, lines });
        }
        for (mi, m) in f.machines.iter().enumerate() {
            let mut off = self.spec.state_slot.width as u32;
            let mut vars = Vec::new();
            for v in &m.vars {
                if vars.iter().any(|x: &Var| x.name == v.name.text)
                    || self.spec.ghosts.iter().any(|g| g.name == v.name.text)
                {
                    return err(self.file, v.name.pos, format!("variable {:?} is declared twice", v.name.text));
                }
                let ty = self.ty(&v.ty)?;
                let slot = self.slot(ty, v.ty.opt, off);
                off += slot.width as u32;
                if off > AGENT_BITS {
                    return err(
                        self.file,
                        v.name.pos,
                        format!(
                            "machine {}: its state and variables need more than {AGENT_BITS} bits at this size",
                            m.name.text
                        ),
                    );
                }
                let init = match &v.init {
                    Some(e) => Some(self.value(e, &init_scope(), ty, v.ty.opt)?),
                    None => None,
                };
                self.default_ok(&v.name, ty, v.ty.opt, init.is_some())?;
                vars.push(Var { name: v.name.text.clone(), ty, slot, init, lines: 1 });
            }
            let lines = self.spec.machines[mi].lines;
            if lines > 1 && off as usize * lines > AGENT_BITS as usize {
                return err(
                    self.file,
                    m.name.pos,
                    format!(
                        "machine {}: {lines} addresses of {off} bits each (its state and variables) need {} bits; \
                         at most {AGENT_BITS} fit, so at most {} addresses",
                        m.name.text,
                        off as usize * lines,
                        AGENT_BITS / off
                    ),
                )
                .map_err(|e| e.of_size("addresses"));
            }
            self.spec.machines[mi].stride = off as u8;
            self.spec.machines[mi].vars = vars;
        }
        Ok(())
    }

    /// Data values and node ids have no default (they are scalarsets): give one or make the variable `T?`.
    fn default_ok(&self, n: &Name, ty: Ty, opt: bool, given: bool) -> R<()> {
        if !given && !opt && matches!(ty, Ty::Data | Ty::Node(_)) {
            return err(self.file, n.pos, format!("{}: a data value or node id needs an initial value (`= EXPR`) or the type `T?` (undefined at first)", n.text));
        }
        Ok(())
    }

    /// An expression whose value is stored in a `ty` (optional when `opt`).
    fn value(&self, e: &Expr, sc: &Scope, ty: Ty, opt: bool) -> R<Ex> {
        let (x, t) = self.expr(e, sc, Some(ty))?;
        match t {
            None if !opt => err(
                self.file,
                e.pos,
                format!("undef: the target is not optional; expected a {} (or declare it `T?`)", self.ty_name(ty)),
            ),
            None => Ok(x),
            Some(t) if compatible(t, ty) => Ok(x),
            Some(Ty::Node(m)) if ty == Ty::Set(m) => Ok(Ex::Single(Box::new(x))),
            Some(t) => err(self.file, e.pos, format!("a {}: expected a {}", self.ty_name(t), self.ty_name(ty))),
        }
    }

    fn ty_name(&self, t: Ty) -> String {
        match t {
            Ty::Bool => "bool".into(),
            Ty::Int(lo, hi) => format!("{lo}..{hi}"),
            Ty::Enum(e) => self.spec.enums[e].0.clone(),
            Ty::Data => "data value".into(),
            Ty::Node(m) => format!("{} (node id)", self.spec.machines[m].name),
            Ty::Set(m) => format!("set {}", self.spec.machines[m].name),
            Ty::State(m) => format!("state of {}", self.spec.machines[m].name),
            Ty::Addr => "address".into(),
        }
    }

    /// Compile `e`; its type (None: `undef`, of any type).
    fn expr(&self, e: &Expr, sc: &Scope, want: Option<Ty>) -> R<(Ex, Option<Ty>)> {
        let bool_ = Some(Ty::Bool);
        Ok(match &e.kind {
            ExprKind::Int(v) => {
                if matches!(want, Some(Ty::Data | Ty::Node(_))) {
                    return err(self.file, e.pos, format!("{v}: data values and node ids are not numbers (they may be renamed by symmetry); expected a variable, a parameter or `src`"));
                }
                (Ex::Const(*v), Some(Ty::Int(*v, *v)))
            }
            ExprKind::Bool(b) => (Ex::Const(*b as i64), bool_),
            ExprKind::Undef => (Ex::Const(UNDEF), None),
            ExprKind::Name(n) => self.name(n, e.pos, sc, want)?,
            ExprKind::Field(f) => {
                let Some(k) = sc.msg else {
                    return err(
                        self.file,
                        e.pos,
                        format!("msg.{f}: only a row whose event is a message reads its fields"),
                    );
                };
                let kind = &self.spec.msgs[k];
                let Some(i) = kind.fields.iter().position(|x| x.0 == *f) else {
                    let known: Vec<String> = kind.fields.iter().map(|x| x.0.clone()).collect();
                    return err(self.file, e.pos, unknown(&format!("field of {}", kind.name), f, &known));
                };
                let (_, t, s) = kind.fields[i];
                (Ex::Field { i: i as u8, opt: s.opt, lo: s.lo }, Some(t))
            }
            ExprKind::Remote { machine, index, member, line } => {
                if !sc.remote {
                    return err(self.file, e.pos, format!("{}.{}: a row reads only its own machine's variables (another machine's are known through messages); invariants read any", machine.text, member.text));
                }
                let m = self.machine_named(machine)?;
                let mc = &self.spec.machines[m];
                let index = match index {
                    Some(i) => {
                        let (x, t) = self.expr(i, sc, Some(Ty::Node(m)))?;
                        if t != Some(Ty::Node(m)) {
                            return err(
                                self.file,
                                i.pos,
                                format!(
                                    "an index of {}: expected a node id of it (a bound variable `forall i in {}`)",
                                    mc.name, mc.name
                                ),
                            );
                        }
                        Some(Box::new(x))
                    }
                    None if mc.count == 1 => None,
                    None => {
                        return err(
                            self.file,
                            machine.pos,
                            format!("{} has {} instances: expected {}[i].{}", mc.name, mc.count, mc.name, member.text),
                        )
                    }
                };
                let (slot, t) = if member.text == "state" {
                    (self.spec.state_slot, Ty::State(m))
                } else {
                    let Some(v) = mc.vars.iter().find(|v| v.name == member.text) else {
                        let mut known: Vec<String> = mc.vars.iter().map(|v| v.name.clone()).collect();
                        known.push("state".into());
                        return err(
                            self.file,
                            member.pos,
                            unknown(&format!("variable of {}", mc.name), &member.text, &known),
                        );
                    };
                    (v.slot, v.ty)
                };
                match (line, self.per_address(m)) {
                    (None, false) => (Ex::Remote { base: mc.base, index, slot }, Some(t)),
                    (Some(l), true) => {
                        let line = Box::new(self.address(l, sc)?);
                        (Ex::RemoteLine { base: mc.base, index, line, slot, stride: mc.stride }, Some(t))
                    }
                    (None, true) => {
                        return err(
                            self.file,
                            member.pos,
                            format!(
                                "{}.{} is per address: expected {}[a] (a bound `forall a in address`)",
                                mc.name, member.text, member.text
                            ),
                        )
                    }
                    (Some(l), false) => {
                        return err(
                            self.file,
                            l.pos,
                            format!("{} is not `per address`: expected no address after {}", mc.name, member.text),
                        )
                    }
                }
            }
            ExprKind::At(n, l) => {
                let Some(g) = self.spec.ghosts.iter().find(|g| g.name == n.text) else {
                    let known: Vec<String> =
                        self.spec.ghosts.iter().filter(|g| g.lines > 1).map(|g| g.name.clone()).collect();
                    return err(self.file, n.pos, unknown("per-address ghost", &n.text, &known));
                };
                if !self.per_address_ghost(&n.text) {
                    return err(
                        self.file,
                        l.pos,
                        format!("ghost {} is not `per address`: expected no `[...]`", n.text),
                    );
                }
                let line = Box::new(self.address(l, sc)?);
                (Ex::GhostAt { line, slot: g.slot, stride: g.slot.width }, Some(g.ty))
            }
            ExprKind::Not(a) => (Ex::Not(Box::new(self.cond(a, sc)?)), bool_),
            ExprKind::Count(a) => {
                let (x, t) = self.expr(a, sc, None)?;
                let Some(Ty::Set(m)) = t else {
                    return err(self.file, a.pos, "count(...): expected a set of node ids".into());
                };
                (Ex::Count(Box::new(x)), Some(Ty::Int(0, self.spec.machines[m].count as i64)))
            }
            ExprKind::SetOf(items) => {
                let m = match want {
                    Some(Ty::Set(m)) => m,
                    _ => {
                        return err(
                            self.file,
                            e.pos,
                            "a set `{...}`: expected one where a set of node ids is wanted (or after `in`)".into(),
                        )
                    }
                };
                let mut x = Ex::Const(0);
                for it in items {
                    let (y, t) = self.expr(it, sc, Some(Ty::Node(m)))?;
                    if t != Some(Ty::Node(m)) {
                        return err(self.file, it.pos, format!("expected a node id of {}", self.spec.machines[m].name));
                    }
                    x = Ex::Bin(Op::Union, Box::new(x), Box::new(Ex::Single(Box::new(y))));
                }
                (x, Some(Ty::Set(m)))
            }
            ExprKind::Quant { all, vars, machine, body } => {
                let (ty, n) = if machine.text == "address" {
                    (Ty::Addr, self.spec.addresses)
                } else {
                    let m = self.machine_named(machine)?;
                    (Ty::Node(m), self.spec.machines[m].count)
                };
                let mut sc2 = Scope { bound: sc.bound.clone(), param: sc.param.clone(), ..*sc };
                let first = sc2.bound.len();
                for v in vars {
                    sc2.bound.push((v.text.clone(), ty));
                }
                if sc2.bound.len() > MAX_BOUND {
                    return err(self.file, e.pos, format!("more than {MAX_BOUND} bound variables at once"));
                }
                let mut x = self.cond(body, &sc2)?;
                for (k, _) in vars.iter().enumerate().rev() {
                    x = Ex::Quant { all: *all, var: (first + k) as u8, n: n as u8, body: Box::new(x) };
                }
                (x, bool_)
            }
            ExprKind::Bin(op, a, b) => self.bin(op, a, b, sc, e.pos)?,
        })
    }

    fn cond(&self, e: &Expr, sc: &Scope) -> R<Ex> {
        let (x, t) = self.expr(e, sc, Some(Ty::Bool))?;
        if t != Some(Ty::Bool) {
            return err(
                self.file,
                e.pos,
                format!("a {}: expected a condition (bool)", t.map_or("undef".into(), |t| self.ty_name(t))),
            );
        }
        Ok(x.fuse())
    }

    fn bin(&self, op: &str, a: &Expr, b: &Expr, sc: &Scope, pos: Pos) -> R<(Ex, Option<Ty>)> {
        let bx = |x| Box::new(x);
        match op {
            "&" | "|" | "->" => {
                let o = match op {
                    "&" => Op::And,
                    "|" => Op::Or,
                    _ => Op::Implies,
                };
                return Ok((Ex::Bin(o, bx(self.cond(a, sc)?), bx(self.cond(b, sc)?)), Some(Ty::Bool)));
            }
            "in" => {
                let (x, t) = self.expr(a, sc, None)?;
                if let (ExprKind::SetOf(items), Some(t)) = (&b.kind, t) {
                    if !matches!(t, Ty::Node(_)) {
                        // `x in {A, B}` over any type: x = A | x = B
                        let mut out: Option<Ex> = None;
                        for it in items {
                            let y = self.value(it, sc, t, false)?;
                            let eq = Ex::Bin(Op::Eq, bx(x.clone()), bx(y));
                            out = Some(match out {
                                None => eq,
                                Some(o) => Ex::Bin(Op::Or, bx(o), bx(eq)),
                            });
                        }
                        return Ok((out.unwrap_or(Ex::Const(0)), Some(Ty::Bool)));
                    }
                }
                let Some(Ty::Node(m)) = t else {
                    return err(
                        self.file,
                        a.pos,
                        "`in`: expected a node id before it (or a list `{A, B}` after it)".into(),
                    );
                };
                let y = self.value(b, sc, Ty::Set(m), false)?;
                return Ok((Ex::Bin(Op::In, bx(x), bx(y)), Some(Ty::Bool)));
            }
            _ => {}
        }
        // type the side that names itself first: a bare literal (an enum value, a state) takes the other's type
        let (first, second, swapped) = if self.literal_only(a, sc) { (b, a, true) } else { (a, b, false) };
        let (x, tx) = self.expr(first, sc, None)?;
        let (y, ty) = self.expr(second, sc, tx)?;
        let (x, y, tx, ty) = if swapped { (y, x, ty, tx) } else { (x, y, tx, ty) };
        if let (Some(p), Some(q)) = (tx, ty) {
            if !compatible(p, q) && !compatible(q, p) {
                return err(self.file, pos, format!("`{op}` between a {} and a {}", self.ty_name(p), self.ty_name(q)));
            }
        }
        let t = tx.or(ty);
        if let (Some(Ty::Set(_)), "+" | "-") = (t, op) {
            return Ok((Ex::Bin(if op == "+" { Op::Union } else { Op::Diff }, bx(x), bx(y)), t));
        }
        let ordered = matches!(t, Some(Ty::Int(..)));
        let (o, out) = match op {
            "=" => (Op::Eq, Some(Ty::Bool)),
            "!=" => (Op::Ne, Some(Ty::Bool)),
            "<" | "<=" | ">" | ">=" if ordered => (
                match op {
                    "<" => Op::Lt,
                    "<=" => Op::Le,
                    ">" => Op::Gt,
                    _ => Op::Ge,
                },
                Some(Ty::Bool),
            ),
            "+" | "-" if ordered => {
                (if op == "+" { Op::Add } else { Op::Sub }, Some(Ty::Int(i64::MIN / 2, i64::MAX / 2)))
            }
            _ => {
                return err(
                    self.file,
                    pos,
                    format!(
                    "`{op}` needs numbers (a range type); data values, node ids and enums compare with = and != only"
                ),
                )
            }
        };
        Ok((Ex::Bin(o, bx(x), bx(y)), out))
    }

    /// A bare name that is no variable: a literal whose type comes from the other side.
    fn literal_only(&self, e: &Expr, sc: &Scope) -> bool {
        match &e.kind {
            ExprKind::Name(n) => self.var_like(n, sc).is_none(),
            ExprKind::Undef | ExprKind::Int(_) => true,
            _ => false,
        }
    }

    fn var_like(&self, n: &str, sc: &Scope) -> Option<(Ex, Option<Ty>)> {
        if let Some(i) = sc.bound.iter().rposition(|b| b.0 == n) {
            return Some((Ex::Bound(i as u8), Some(sc.bound[i].1)));
        }
        if let Some((p, t)) = &sc.param {
            if p == n {
                return Some((Ex::Param, Some(*t)));
            }
        }
        if n == "src" {
            if let Some(m) = sc.src {
                return Some((Ex::Src, Some(Ty::Node(m))));
            }
        }
        if let Some(m) = sc.machine {
            let mc = &self.spec.machines[m];
            let at = |s: Slot| mc.at(s, sc.line.unwrap_or(0));
            if n == "state" {
                return Some((Ex::Own(at(self.spec.state_slot)), Some(Ty::State(m))));
            }
            if let Some(v) = mc.vars.iter().find(|v| v.name == n) {
                return Some((Ex::Own(at(v.slot)), Some(v.ty)));
            }
            if n == "busy" {
                return Some((self.busy(m), Some(Ty::Bool)));
            }
        }
        if let Some(g) = self.spec.ghosts.iter().find(|g| g.name == n) {
            // a per-address ghost, unindexed, is the row's line's (elsewhere it needs `[a]`)
            return match (self.per_address_ghost(n), sc.line) {
                (false, _) => Some((Ex::Ghost(g.slot), Some(g.ty))),
                (true, Some(a)) => Some((Ex::Ghost(g.slot.at(a, g.slot.width)), Some(g.ty))),
                (true, None) => None,
            };
        }
        None
    }

    /// `busy`: some line of machine `m` is in a transient state (a
    /// single-MSHR core starts no miss while one is in flight).
    fn busy(&self, m: usize) -> Ex {
        let mc = &self.spec.machines[m];
        let transient: Vec<usize> =
            (mc.state_base..mc.state_base + mc.states.len()).filter(|&g| self.spec.transient[g]).collect();
        let mut out: Option<Ex> = None;
        let or = |o: Option<Ex>, t: Ex| match o {
            None => t,
            Some(o) => Ex::Bin(Op::Or, Box::new(o), Box::new(t)),
        };
        for a in 0..mc.lines {
            let own = Ex::Own(mc.at(self.spec.state_slot, a));
            // one test of a mask, when the state numbers fit one
            let t = if self.spec.state_machine.len() < 63 {
                let mask = transient.iter().fold(0i64, |acc, g| acc | 1 << g);
                Ex::Bin(Op::In, Box::new(own), Box::new(Ex::Const(mask)))
            } else {
                let eqs =
                    transient.iter().map(|&g| Ex::Bin(Op::Eq, Box::new(own.clone()), Box::new(Ex::Const(g as i64))));
                eqs.fold(None, |o, t| Some(or(o, t))).unwrap_or(Ex::Const(0))
            };
            out = Some(match out {
                None => t,
                Some(o) => Ex::Bin(Op::Or, Box::new(o), Box::new(t)),
            });
        }
        out.unwrap_or(Ex::Const(0))
    }

    /// Whether machine `m` is declared `per address` (it has lines even at one address).
    fn per_address(&self, m: usize) -> bool {
        self.per_address.get(m).copied().unwrap_or(false)
    }

    fn per_address_ghost(&self, name: &str) -> bool {
        self.per_address_ghosts.iter().any(|g| g == name)
    }

    /// An address: a bound variable of `forall a in address`.
    fn address(&self, e: &Expr, sc: &Scope) -> R<Ex> {
        let (x, t) = self.expr(e, sc, Some(Ty::Addr))?;
        if t != Some(Ty::Addr) {
            return err(self.file, e.pos, "an address: expected a bound variable of `forall a in address`".into());
        }
        Ok(x)
    }

    fn name(&self, n: &str, pos: Pos, sc: &Scope, want: Option<Ty>) -> R<(Ex, Option<Ty>)> {
        if let Some(x) = self.var_like(n, sc) {
            return Ok(x);
        }
        if self.per_address_ghost(n) {
            return err(
                self.file,
                pos,
                format!("ghost {n} is per address: expected {n}[a] (a bound `forall a in address`) outside a per-address machine's rows"),
            );
        }
        match want {
            Some(Ty::Enum(e)) => {
                if let Some(i) = self.spec.enums[e].1.iter().position(|v| v == n) {
                    return Ok((Ex::Const(i as i64), Some(Ty::Enum(e))));
                }
            }
            Some(Ty::State(m)) => {
                let mc = &self.spec.machines[m];
                if let Some(i) = mc.states.iter().position(|v| v == n) {
                    return Ok((Ex::Const((mc.state_base + i) as i64), Some(Ty::State(m))));
                }
                return err(self.file, pos, unknown(&format!("state of {}", mc.name), n, &mc.states));
            }
            _ => {}
        }
        let mut known: Vec<String> = sc.bound.iter().map(|b| b.0.clone()).collect();
        known.extend(sc.param.iter().map(|p| p.0.clone()));
        if sc.src.is_some() {
            known.push("src".into());
        }
        if let Some(m) = sc.machine {
            known.push("state".into());
            known.extend(self.spec.machines[m].vars.iter().map(|v| v.name.clone()));
        }
        known.extend(self.spec.ghosts.iter().map(|g| g.name.clone()));
        if let Some(Ty::Enum(e)) = want {
            known.extend(self.spec.enums[e].1.iter().cloned());
        }
        err(self.file, pos, unknown("variable or value", n, &known))
    }

    fn state_of(&self, m: usize, n: &Name) -> R<usize> {
        let mc = &self.spec.machines[m];
        mc.states
            .iter()
            .position(|s| *s == n.text)
            .map_or_else(|| err(self.file, n.pos, unknown(&format!("state of {}", mc.name), &n.text, &mc.states)), Ok)
    }

    fn states_of(&self, m: usize, names: &[Name]) -> R<Vec<usize>> {
        if names.is_empty() {
            return Ok((0..self.spec.machines[m].states.len()).collect());
        }
        names.iter().map(|n| self.state_of(m, n)).collect()
    }

    fn msg_named(&self, n: &Name) -> Option<usize> {
        self.spec.msgs.iter().position(|k| k.name == n.text)
    }

    fn rows(&mut self, f: &ast::File, mutant: Option<&str>) -> R<()> {
        // who sends what to whom: a machine's message events
        for (mi, m) in f.machines.iter().enumerate() {
            for r in &m.rows {
                let src = self.msg_named(&r.event).map(|_| ());
                for s in &r.body {
                    if let ast::Stmt::Send { msg, to, .. } = s {
                        let Some(k) = self.msg_named(msg) else {
                            let known: Vec<String> = self.spec.msgs.iter().map(|k| k.name.clone()).collect();
                            return err(self.file, msg.pos, unknown("message", &msg.text, &known));
                        };
                        let dest = match &to.kind {
                            ExprKind::Name(n) if self.spec.machines.iter().any(|x| x.name == *n) => {
                                self.machine_named(&Name { text: n.clone(), pos: to.pos })?
                            }
                            ExprKind::Name(n) if n == "src" && src.is_some() => {
                                let k2 = self.msg_named(&r.event).expect("a message row");
                                match self.senders_of(k2, f) {
                                    Some(x) => x,
                                    None => continue,
                                }
                            }
                            _ => match self.dest_type(to, mi, m, r, f)? {
                                Some(x) => x,
                                None => continue,
                            },
                        };
                        self.receives.entry(dest).or_default().insert(k);
                        self.senders.entry(k).or_default().insert(mi);
                    }
                }
            }
        }
        for (mi, _) in f.machines.iter().enumerate() {
            let kinds: Vec<usize> = self.receives.get(&mi).map(|s| s.iter().copied().collect()).unwrap_or_default();
            for k in kinds {
                let name = self.spec.msgs[k].name.clone();
                self.spec.machines[mi].events.push(Event { name, msg: Some(k as u8), param: None, env: false });
            }
        }
        // the rows, cell by cell
        let mut cells_rows: Vec<Vec<Vec<Vec<Vec<u16>>>>> = Vec::new();
        let mut impossible: Vec<Vec<Vec<bool>>> = Vec::new();
        for (mi, m) in f.machines.iter().enumerate() {
            let ns = self.spec.machines[mi].states.len();
            let ne = self.spec.machines[mi].events.len();
            let lines = self.spec.machines[mi].lines;
            // per line: a per-address machine's rows are compiled once for each of its lines
            let mut by_line = vec![vec![vec![Vec::new(); ne]; ns]; lines];
            let mut imp = vec![vec![false; ne]; ns];
            // the rows in force: a chosen mutant's row replaces the ordinary row above it
            let mut chosen: Vec<&ast::Row> = Vec::new();
            let mut last_ordinary: Option<usize> = None;
            for r in &m.rows {
                match &r.mutant {
                    None => {
                        last_ordinary = Some(chosen.len());
                        chosen.push(r);
                    }
                    Some(n) if Some(n.text.as_str()) == mutant => match last_ordinary {
                        Some(i) => chosen[i] = r,
                        None => {
                            return err(
                                self.file,
                                n.pos,
                                format!("mutant {}: no ordinary row above it to replace", n.text),
                            )
                        }
                    },
                    Some(_) => {}
                }
            }
            for r in chosen {
                let ev = self.event_of(mi, &r.event)?;
                for (a, cells) in by_line.iter_mut().enumerate() {
                    let row = self.row(mi, ev, r, a)?;
                    let id = self.spec.rows.len();
                    if id >= u16::MAX as usize {
                        return err(self.file, r.pos, "too many rows: expected fewer than 65535".into());
                    }
                    for s in self.states_of(mi, &r.states)? {
                        cells[s][ev].push(id as u16);
                    }
                    self.spec.rows.push(row);
                }
            }
            let cells = &by_line[0];
            for i in &m.impossible {
                let states = self.states_of(mi, &i.states)?;
                for e in &i.events {
                    let ev = self.event_of(mi, e)?;
                    for &s in &states {
                        // a mutant's row may handle a pair the correct table declares impossible
                        if !cells[s][ev].is_empty() && mutant.is_none() {
                            return err(
                                self.file,
                                i.pos,
                                format!(
                                    "({}, {}) is declared impossible but a row handles it",
                                    self.spec.machines[mi].states[s], e.text
                                ),
                            );
                        }
                        imp[s][ev] = cells[s][ev].is_empty();
                    }
                }
            }
            let mc = &self.spec.machines[mi];
            let mut missing = Vec::new();
            for s in 0..ns {
                for e in 0..ne {
                    if cells[s][e].is_empty() && !imp[s][e] {
                        missing.push(format!("({}, {})", mc.states[s], mc.events[e].name));
                    }
                }
            }
            if !missing.is_empty() {
                return err(
                    self.file,
                    m.name.pos,
                    format!(
                        "machine {}: {} (state, event) pairs neither handled nor declared impossible: {}; expected a row or `impossible STATE EVENT` for each",
                        mc.name,
                        missing.len(),
                        missing.join(", ")
                    ),
                );
            }
            cells_rows.push(by_line);
            impossible.push(imp);
        }
        let lines = self.spec.machines.iter().map(|m| m.lines).max().unwrap_or(1);
        for a in 0..lines {
            for (mi, by_line) in cells_rows.iter().enumerate() {
                // a machine that is not per address has one line: its rows serve every address
                let cells = &by_line[a.min(by_line.len() - 1)];
                for (s, evs) in cells.iter().enumerate() {
                    if a == 0 {
                        self.spec.cell_start.push(self.spec.cells.len());
                    }
                    for (e, rows) in evs.iter().enumerate() {
                        let start = self.spec.order.len() as u32;
                        self.spec.order.extend(rows);
                        self.spec.cells.push(Cell {
                            start,
                            end: self.spec.order.len() as u32,
                            impossible: impossible[mi][s][e],
                        });
                    }
                }
            }
            if a == 0 {
                self.spec.ncells = self.spec.cells.len();
            }
        }
        Ok(())
    }

    /// The machine a message is sent from (for `src`'s type): the one machine that sends it.
    fn senders_of(&self, k: usize, f: &ast::File) -> Option<usize> {
        let name = &self.spec.msgs[k].name;
        let mut who = BTreeSet::new();
        for (mi, m) in f.machines.iter().enumerate() {
            for r in &m.rows {
                for s in &r.body {
                    if let ast::Stmt::Send { msg, .. } = s {
                        if msg.text == *name {
                            who.insert(mi);
                        }
                    }
                }
            }
        }
        (who.len() == 1).then(|| *who.iter().next().expect("one"))
    }

    /// The machine a `send ... to EXPR` reaches, from the expression's type.
    fn dest_type(&self, to: &Expr, mi: usize, m: &ast::Machine, r: &ast::Row, f: &ast::File) -> R<Option<usize>> {
        // `src` may appear in the destination (`sharers - {src}`): its machine is the event's one sender
        let src = self.msg_named(&r.event).and_then(|k| self.senders_of(k, f));
        let sc = self.row_scope(mi, m, r, src)?;
        match self.expr(to, &sc, None) {
            Ok((_, Some(Ty::Node(d) | Ty::Set(d)))) => Ok(Some(d)),
            Ok(_) => err(self.file, to.pos, "`to`: expected a machine with one instance or a node id".into()),
            Err(_) => Ok(None),
        }
    }

    fn event_of(&self, m: usize, n: &Name) -> R<usize> {
        let mc = &self.spec.machines[m];
        mc.events.iter().position(|e| e.name == n.text).map_or_else(
            || {
                let known: Vec<String> = mc.events.iter().map(|e| e.name.clone()).collect();
                let hint = if self.msg_named(n).is_some() { " (no machine sends it to this one)" } else { "" };
                err(self.file, n.pos, format!("{}{hint}", unknown(&format!("event of {}", mc.name), &n.text, &known)))
            },
            Ok,
        )
    }

    fn row_scope(&self, mi: usize, m: &ast::Machine, r: &ast::Row, src: Option<usize>) -> R<Scope> {
        let msg = self.msg_named(&r.event).filter(|_| !m.actions.iter().any(|a| a.name.text == r.event.text));
        let mut param = None;
        if let Some(a) = m.actions.iter().find(|a| a.name.text == r.event.text) {
            match (&a.param, &r.param) {
                (Some((_, t)), Some(p)) => param = Some((p.text.clone(), self.ty(t)?)),
                (None, Some(p)) => return err(self.file, p.pos, format!("action {} takes no parameter", a.name.text)),
                (Some((n, _)), None) => {
                    return err(
                        self.file,
                        r.event.pos,
                        format!("action {} takes a parameter: expected {}({})", a.name.text, a.name.text, n.text),
                    )
                }
                (None, None) => {}
            }
        } else if let Some(p) = &r.param {
            return err(self.file, p.pos, "only an action takes a parameter".into());
        }
        Ok(Scope { machine: Some(mi), msg, src, param, bound: vec![], remote: false, line: None })
    }

    /// Row `r` of machine `mi` for its line `a` (0 unless it is per address).
    fn row(&self, mi: usize, ev: usize, r: &ast::Row, a: usize) -> R<Row> {
        let event = &self.spec.machines[mi].events[ev];
        let src = event.msg.and_then(|k| {
            self.senders.get(&(k as usize)).filter(|s| s.len() == 1).map(|s| *s.iter().next().expect("one"))
        });
        let line = self.per_address(mi).then_some(a);
        let mut sc = Scope { machine: Some(mi), msg: None, src, param: None, bound: vec![], remote: false, line };
        if event.msg.is_some() {
            sc.msg = event.msg.map(|k| k as usize);
            if let Some(p) = &r.param {
                return err(self.file, p.pos, format!("{} is a message: only an action takes a parameter", event.name));
            }
        } else if let Some((t, _, _)) = event.param {
            sc.param = r.param.as_ref().map(|p| (p.text.clone(), t));
            if sc.param.is_none() {
                return err(
                    self.file,
                    r.event.pos,
                    format!("action {} takes a parameter: expected {}(NAME)", event.name, event.name),
                );
            }
        } else if let Some(p) = &r.param {
            return err(self.file, p.pos, format!("action {} takes no parameter", event.name));
        }
        let guard = match &r.guard {
            Some(g) => Some(self.cond(g, &sc)?),
            None => None,
        };
        let mut body = Vec::new();
        for s in &r.body {
            body.push(self.stmt(s, &sc)?);
        }
        let next = match &r.next {
            Some(n) => Some(self.spec.machines[mi].state_base + self.state_of(mi, n)?),
            None => None,
        };
        if r.stall && event.msg.is_none() {
            return err(self.file, r.event.pos, format!("stall: only a message waits; {} is an action (give it no row in this state, or declare it impossible)", event.name));
        }
        Ok(Row {
            machine: mi,
            event: ev,
            guard,
            body,
            next,
            stall: r.stall,
            line: r.pos.line,
            name: Box::leak(event.name.clone().into_boxed_str()),
            env: event.env,
            addr: a as u8,
            state: self.spec.machines[mi].at(self.spec.state_slot, a),
        })
    }

    fn target(&self, n: &Name, sc: &Scope) -> R<Target> {
        let m = sc.machine.expect("rows are in machines");
        let a = sc.line.unwrap_or(0);
        if let Some(v) = self.spec.machines[m].vars.iter().find(|v| v.name == n.text) {
            let slot = self.spec.machines[m].at(v.slot, a);
            return Ok(Target { ghost: false, slot, name: v.name.clone(), ty: v.ty });
        }
        if let Some(g) = self.spec.ghosts.iter().find(|g| g.name == n.text) {
            if self.per_address_ghost(&n.text) && sc.line.is_none() {
                return err(
                    self.file,
                    n.pos,
                    format!("ghost {} is per address: only a per-address machine's row writes it (its line's)", n.text),
                );
            }
            let slot = g.slot.at(a, g.slot.width);
            return Ok(Target { ghost: true, slot, name: g.name.clone(), ty: g.ty });
        }
        let mut known: Vec<String> = self.spec.machines[m].vars.iter().map(|v| v.name.clone()).collect();
        known.extend(self.spec.ghosts.iter().map(|g| g.name.clone()));
        err(
            self.file,
            n.pos,
            unknown(&format!("variable of {} (or ghost)", self.spec.machines[m].name), &n.text, &known),
        )
    }

    fn stmt(&self, s: &ast::Stmt, sc: &Scope) -> R<St> {
        Ok(match s {
            ast::Stmt::Assign { target, op, value } => {
                let t = self.target(target, sc)?;
                match *op {
                    ":=" => {
                        let x = self.value(value, sc, t.ty, t.slot.opt)?;
                        St::Assign(t, x)
                    }
                    _ => {
                        let Ty::Set(m) = t.ty else {
                            return err(
                                self.file,
                                target.pos,
                                format!("`{op}` adds to or removes from a set; {} is a {}", t.name, self.ty_name(t.ty)),
                            );
                        };
                        let x = self.value(value, sc, Ty::Set(m), false)?;
                        if *op == "+=" {
                            St::Add(t, x)
                        } else {
                            St::Remove(t, x)
                        }
                    }
                }
            }
            ast::Stmt::Assert { cond, kind, .. } => {
                St::Assert(self.cond(cond, sc)?, Box::leak(kind.clone().into_boxed_str()))
            }
            ast::Stmt::Send { msg, fields, to } => {
                let k = self.msg_named(msg).expect("checked with the senders");
                let kind = &self.spec.msgs[k];
                let mut out = Vec::new();
                for (n, e) in fields {
                    let Some(i) = kind.fields.iter().position(|x| x.0 == n.text) else {
                        let known: Vec<String> = kind.fields.iter().map(|x| x.0.clone()).collect();
                        return err(self.file, n.pos, unknown(&format!("field of {}", kind.name), &n.text, &known));
                    };
                    if out.iter().any(|(j, _)| *j == i as u8) {
                        return err(self.file, n.pos, format!("field {} is given twice", n.text));
                    }
                    let (_, ty, slot) = kind.fields[i];
                    let value = self.value(e, sc, ty, slot.opt)?;
                    out.push((i as u8, Field { slot, value, name: n.text.clone(), ty }));
                }
                for (i, (n, _, s)) in kind.fields.iter().enumerate() {
                    if !s.opt && !out.iter().any(|(j, _)| *j == i as u8) {
                        return err(
                            self.file,
                            msg.pos,
                            format!(
                                "send {}: field {n} is not given (only a `T?` field may be left out: undefined)",
                                kind.name
                            ),
                        );
                    }
                }
                let to = match &to.kind {
                    ExprKind::Name(n) if self.spec.machines.iter().any(|m| m.name == *n) => {
                        let m = self.machine_named(&Name { text: n.clone(), pos: to.pos })?;
                        let mc = &self.spec.machines[m];
                        if mc.count != 1 {
                            return err(
                                self.file,
                                to.pos,
                                format!(
                                    "{} has {} instances: expected a node id (src, a variable or a parameter)",
                                    mc.name, mc.count
                                ),
                            );
                        }
                        To::Agent(mc.base)
                    }
                    _ => {
                        let (x, t) = self.expr(to, sc, None)?;
                        match t {
                            Some(Ty::Node(m)) => To::Node(self.spec.machines[m].base, x),
                            Some(Ty::Set(m)) => To::Set(self.spec.machines[m].base, x),
                            _ => {
                                return err(
                                    self.file,
                                    to.pos,
                                    "`to`: expected a machine with one instance, a node id or a set of node ids".into(),
                                )
                            }
                        }
                    }
                };
                St::Send { kind: k as u8, vc: kind.vc, fields: out, to }
            }
        })
    }

    fn invariants(&mut self, f: &ast::File) -> R<()> {
        for (n, e) in &f.invariants {
            let sc =
                Scope { machine: None, msg: None, src: None, param: None, bound: vec![], remote: true, line: None };
            let ex = self.cond(e, &sc)?;
            self.spec.invariants.push(Invariant { name: n.text.clone(), ex, line: n.pos.line });
        }
        Ok(())
    }
}

/// Whether a value of type `a` may be stored where `b` is wanted.
fn compatible(a: Ty, b: Ty) -> bool {
    match (a, b) {
        (Ty::Int(..), Ty::Int(..)) => true,
        _ => a == b,
    }
}
