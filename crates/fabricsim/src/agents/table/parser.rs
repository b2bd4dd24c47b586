//! A recursive-descent parser from tokens to the [`ast`](super::ast):
//! one declaration or row per logical line.

use super::ast::*;
use super::lexer::{Tok, Token};
use super::TableError;

pub struct Parser<'a> {
    toks: &'a [Token],
    at: usize,
    file: &'a str,
}

type R<T> = Result<T, TableError>;

/// Words that start a declaration at the top level.
const TOP: &[&str] = &["protocol", "vc", "type", "message", "ghost", "start", "machine", "invariant"];

pub fn parse(toks: &[Token], file: &str) -> R<File> {
    let mut p = Parser { toks, at: 0, file };
    p.file()
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok {
        &self.toks[self.at].tok
    }
    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.at + n).min(self.toks.len() - 1)].tok
    }
    fn pos(&self) -> Pos {
        let t = &self.toks[self.at];
        Pos { line: t.line, col: t.col }
    }
    fn next(&mut self) -> &Token {
        let t = &self.toks[self.at];
        if self.at + 1 < self.toks.len() {
            self.at += 1;
        }
        t
    }
    fn err<T>(&self, expected: &str) -> R<T> {
        let t = &self.toks[self.at];
        Err(TableError::at(self.file, t.line, t.col, format!("{}: expected {expected}", t.tok.show())))
    }
    fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Sym(x) if *x == s)
    }
    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(x) if x == w)
    }
    fn eat_sym(&mut self, s: &str) -> bool {
        let yes = self.is_sym(s);
        if yes {
            self.next();
        }
        yes
    }
    fn eat_word(&mut self, w: &str) -> bool {
        let yes = self.is_word(w);
        if yes {
            self.next();
        }
        yes
    }
    fn sym(&mut self, s: &str, expected: &str) -> R<()> {
        if self.eat_sym(s) {
            Ok(())
        } else {
            self.err(expected)
        }
    }
    fn name(&mut self, expected: &str) -> R<Name> {
        let pos = self.pos();
        match self.peek().clone() {
            Tok::Ident(text) => {
                self.next();
                Ok(Name { text, pos })
            }
            _ => self.err(expected),
        }
    }
    /// A name that may contain hyphens written without spaces (`ack-keeps-copy`).
    fn dashed_name(&mut self, expected: &str) -> R<Name> {
        let mut n = self.name(expected)?;
        while self.is_sym("-") {
            let t = &self.toks[self.at];
            let u = &self.toks[self.at + 1];
            let adjacent =
                t.line == u.line && t.col as usize == n.pos.col as usize + n.text.len() && u.col == t.col + 1;
            let Tok::Ident(more) = &u.tok else { break };
            if !adjacent {
                break;
            }
            n.text = format!("{}-{more}", n.text);
            self.at += 2;
        }
        Ok(n)
    }
    fn int(&mut self, expected: &str) -> R<i64> {
        let neg = self.eat_sym("-");
        match *self.peek() {
            Tok::Int(v) => {
                self.next();
                Ok(if neg { -v } else { v })
            }
            _ => self.err(expected),
        }
    }
    fn end_line(&mut self) -> R<()> {
        if matches!(self.peek(), Tok::Newline) {
            self.next();
            Ok(())
        } else {
            self.err("the end of the line")
        }
    }
    fn skip_blank(&mut self) {
        while matches!(self.peek(), Tok::Newline) {
            self.next();
        }
    }

    fn file(&mut self) -> R<File> {
        let mut f = File::default();
        loop {
            self.skip_blank();
            if matches!(self.peek(), Tok::Eof) {
                return Ok(f);
            }
            let word = match self.peek() {
                Tok::Ident(w) if TOP.contains(&w.as_str()) => w.clone(),
                _ => return self.err(&format!("a declaration ({})", TOP.join(", "))),
            };
            self.next();
            match word.as_str() {
                "protocol" => f.name = Some(self.dashed_name("the protocol's name")?),
                "vc" => {
                    let name = self.name("the channel's name")?;
                    let fifo = if self.eat_word("fifo") {
                        true
                    } else if self.eat_word("unordered") {
                        false
                    } else {
                        return self.err("`fifo` or `unordered`");
                    };
                    let capacity = if self.eat_word("capacity") {
                        let pos = self.pos();
                        Some((self.int("a capacity (messages per source, destination and channel)")?, pos))
                    } else {
                        None
                    };
                    f.vcs.push(Vc { name, fifo, capacity });
                }
                "type" => {
                    let name = self.name("the type's name")?;
                    self.sym("=", "`=`")?;
                    let def = if self.eat_sym("{") {
                        let mut v = vec![self.name("a value name")?];
                        while self.eat_sym(",") {
                            v.push(self.name("a value name")?);
                        }
                        self.sym("}", "`,` or `}`")?;
                        TypeDef::Enum(v)
                    } else {
                        let lo = self.int("`{` (an enum) or a number (a range LO..HI)")?;
                        self.sym("..", "`..`")?;
                        TypeDef::Range(lo, self.int("the range's upper bound")?)
                    };
                    f.types.push((name, def));
                }
                "message" => {
                    let name = self.name("the message's name")?;
                    let mut fields = Vec::new();
                    if self.eat_sym("(") {
                        loop {
                            let n = self.name("a field name")?;
                            self.sym(":", "`:` and the field's type")?;
                            fields.push((n, self.type_ref()?));
                            if !self.eat_sym(",") {
                                break;
                            }
                        }
                        self.sym(")", "`,` or `)`")?;
                    }
                    if !self.eat_word("on") {
                        return self.err("`on` and the message's channel (vc)");
                    }
                    let vc = self.name("a channel (vc) name")?;
                    f.messages.push(Message { name, fields, vc });
                }
                "ghost" => {
                    let mut v = self.var()?;
                    v.per_address = self.per_address()?;
                    f.ghosts.push(v);
                }
                "start" => {
                    let n = self.name("the start parameter's name")?;
                    self.sym(":", "`:` and its type")?;
                    let one = self.eat_word("one");
                    f.starts.push((n, self.type_ref()?, one));
                }
                "invariant" => {
                    // a quoted name may hold spaces ("data-value invariant", as a built-in check's kind)
                    let n = match self.peek().clone() {
                        Tok::Str(text) => {
                            let pos = self.pos();
                            self.next();
                            Name { text, pos }
                        }
                        _ => self.dashed_name("the invariant's name")?,
                    };
                    self.sym(":", "`:` and the invariant")?;
                    f.invariants.push((n, self.expr(true)?));
                }
                "machine" => {
                    let m = self.machine()?;
                    f.machines.push(m);
                    continue;
                }
                _ => unreachable!(),
            }
            self.end_line()?;
        }
    }

    fn var(&mut self) -> R<Var> {
        let name = self.name("a variable name")?;
        self.sym(":", "`:` and the variable's type")?;
        let ty = self.type_ref()?;
        let init = if self.eat_sym("=") { Some(self.expr(false)?) } else { None };
        Ok(Var { name, ty, init, per_address: false })
    }

    /// `per address`, or nothing.
    fn per_address(&mut self) -> R<bool> {
        if !self.eat_word("per") {
            return Ok(false);
        }
        if !self.eat_word("address") {
            return self.err("`address` (`per address`: one per address)");
        }
        Ok(true)
    }

    fn type_ref(&mut self) -> R<TypeRef> {
        let pos = self.pos();
        let kind = if self.eat_word("bool") {
            TypeKind::Bool
        } else if self.eat_word("data") {
            TypeKind::Data
        } else if self.eat_word("set") {
            TypeKind::Set(self.name("a machine (set of its node ids)")?)
        } else if matches!(self.peek(), Tok::Int(_)) || self.is_sym("-") {
            let lo = self.int("a number")?;
            self.sym("..", "`..`")?;
            TypeKind::Range(lo, self.int("the range's upper bound")?)
        } else if matches!(self.peek(), Tok::Ident(_)) {
            TypeKind::Named(self.name("a type")?)
        } else {
            return self.err("a type (bool, data, LO..HI, set MACHINE, MACHINE or an enum type)");
        };
        let opt = self.eat_sym("?");
        Ok(TypeRef { kind, opt, pos })
    }

    fn names_list(&mut self, expected: &str) -> R<Vec<Name>> {
        let mut v = vec![self.name(expected)?];
        while self.eat_sym(",") {
            v.push(self.name(expected)?);
        }
        Ok(v)
    }

    fn machine(&mut self) -> R<Machine> {
        let name = self.name("the machine's name")?;
        let count = if self.eat_sym("[") {
            let c = if let Tok::Int(n) = *self.peek() {
                let pos = self.pos();
                self.next();
                Count::Fixed(n, pos)
            } else {
                Count::Key(self.name("a count: a number or a [check] size key (caches, directories)")?)
            };
            self.sym("]", "`]`")?;
            c
        } else {
            Count::One
        };
        let role = if self.eat_word("role") { Some(self.name("`core` or `home`")?) } else { None };
        let per_address = self.per_address()?;
        self.end_line()?;
        let mut m = Machine {
            name,
            count,
            role,
            per_address,
            stable: vec![],
            transient: vec![],
            vars: vec![],
            actions: vec![],
            rows: vec![],
            impossible: vec![],
        };
        loop {
            self.skip_blank();
            match self.peek() {
                Tok::Eof => break,
                Tok::Ident(w) if TOP.contains(&w.as_str()) => break,
                _ => {}
            }
            if self.eat_word("stable") {
                m.stable.extend(self.state_names()?);
            } else if self.eat_word("transient") {
                m.transient.extend(self.state_names()?);
            } else if self.eat_word("var") {
                m.vars.push(self.var()?);
            } else if self.eat_word("action") {
                let name = self.name("the action's name")?;
                let param = if self.eat_sym("(") {
                    let n = self.name("a parameter name")?;
                    self.sym(":", "`:` and the parameter's type")?;
                    let t = self.type_ref()?;
                    self.sym(")", "`)` (one parameter at most)")?;
                    Some((n, t))
                } else {
                    None
                };
                let env = self.eat_word("env");
                m.actions.push(Action { name, param, env });
            } else if self.is_word("impossible") {
                let pos = self.pos();
                self.next();
                let states = self.row_states()?;
                let events = self.names_list("an event (a message or an action)")?;
                m.impossible.push(Impossible { states, events, pos });
            } else if self.eat_word("mutant") {
                let name = self.dashed_name("the mutant's name")?;
                self.sym(":", "`:` and the row it puts in place of the row above")?;
                let mut row = self.row()?;
                row.mutant = Some(name);
                m.rows.push(row);
            } else {
                let row = self.row()?;
                m.rows.push(row);
            }
            self.end_line()?;
        }
        Ok(m)
    }

    fn state_names(&mut self) -> R<Vec<Name>> {
        let mut v = Vec::new();
        while let Tok::Ident(_) = self.peek() {
            v.push(self.name("a state name")?);
            self.eat_sym(",");
        }
        if v.is_empty() {
            return self.err("state names");
        }
        Ok(v)
    }

    fn row_states(&mut self) -> R<Vec<Name>> {
        if self.eat_sym("*") {
            return Ok(Vec::new());
        }
        self.names_list("a state, `*`, or a declaration (stable, transient, var, action, impossible, mutant)")
    }

    /// `STATES EVENT[(p)] [guard] : actions [-> NEXT]` or `... : stall`.
    fn row(&mut self) -> R<Row> {
        let pos = self.pos();
        let states = self.row_states()?;
        let event = self.name("an event (a message or an action) after the states")?;
        let param = if self.eat_sym("(") {
            let p = self.name("the action's parameter name")?;
            self.sym(")", "`)`")?;
            Some(p)
        } else {
            None
        };
        let guard = if self.eat_sym("[") {
            let g = self.expr(true)?;
            self.sym("]", "`]` after the guard")?;
            Some(g)
        } else {
            None
        };
        self.sym(":", "`:` (or a guard in `[ ]`) before the row's actions")?;
        let mut row = Row { states, event, param, guard, body: vec![], stall: false, next: None, pos, mutant: None };
        if self.eat_word("stall") {
            row.stall = true;
            return Ok(row);
        }
        while !matches!(self.peek(), Tok::Newline) && !self.is_sym("->") {
            row.body.push(self.stmt()?);
            if !self.eat_sym(";") {
                break;
            }
        }
        if self.eat_sym("->") {
            row.next = Some(self.name("the next state")?);
        }
        Ok(row)
    }

    fn stmt(&mut self) -> R<Stmt> {
        let pos = self.pos();
        if self.eat_word("send") {
            let msg = self.name("a message name")?;
            let mut fields = Vec::new();
            if self.eat_sym("(") {
                loop {
                    let f = self.name("a field name")?;
                    self.sym(":", "`:` and the field's value")?;
                    fields.push((f, self.expr(false)?));
                    if !self.eat_sym(",") {
                        break;
                    }
                }
                self.sym(")", "`,` or `)`")?;
            }
            if !self.eat_word("to") {
                return self.err("`to` and the destination");
            }
            let to = self.expr(false)?;
            return Ok(Stmt::Send { msg, fields, to });
        }
        if self.eat_word("assert") {
            let cond = self.expr(false)?;
            let kind = match self.peek().clone() {
                Tok::Str(s) => {
                    self.next();
                    s
                }
                _ => return self.err("the violation's name, in quotes"),
            };
            return Ok(Stmt::Assert { cond, kind, pos });
        }
        let target = self.name("an action (send, assert, or VAR := value)")?;
        let op = match self.peek() {
            Tok::Sym(s) if [":=", "+=", "-="].contains(s) => *s,
            _ => return self.err("`:=`, `+=` or `-=`"),
        };
        self.next();
        Ok(Stmt::Assign { target, op, value: self.expr(false)? })
    }

    /// An expression; `->` (implies) only where it cannot end a row.
    pub fn expr(&mut self, implies: bool) -> R<Expr> {
        let lhs = self.or()?;
        if implies && self.is_sym("->") {
            let pos = self.pos();
            self.next();
            let rhs = self.expr(true)?;
            return Ok(Expr { kind: ExprKind::Bin("->", Box::new(lhs), Box::new(rhs)), pos });
        }
        Ok(lhs)
    }
    fn or(&mut self) -> R<Expr> {
        let mut e = self.and()?;
        while self.is_sym("|") {
            let pos = self.pos();
            self.next();
            e = Expr { kind: ExprKind::Bin("|", Box::new(e), Box::new(self.and()?)), pos };
        }
        Ok(e)
    }
    fn and(&mut self) -> R<Expr> {
        let mut e = self.not()?;
        while self.is_sym("&") {
            let pos = self.pos();
            self.next();
            e = Expr { kind: ExprKind::Bin("&", Box::new(e), Box::new(self.not()?)), pos };
        }
        Ok(e)
    }
    fn not(&mut self) -> R<Expr> {
        let pos = self.pos();
        if self.eat_sym("!") {
            return Ok(Expr { kind: ExprKind::Not(Box::new(self.not()?)), pos });
        }
        self.cmp()
    }
    fn cmp(&mut self) -> R<Expr> {
        let e = self.sum()?;
        let op = match self.peek() {
            Tok::Sym(s) if ["=", "!=", "<", "<=", ">", ">="].contains(s) => *s,
            Tok::Ident(w) if w == "in" => "in",
            _ => return Ok(e),
        };
        let pos = self.pos();
        self.next();
        Ok(Expr { kind: ExprKind::Bin(op, Box::new(e), Box::new(self.sum()?)), pos })
    }
    fn sum(&mut self) -> R<Expr> {
        let mut e = self.primary()?;
        while let Tok::Sym(s @ ("+" | "-")) = self.peek() {
            let op = *s;
            let pos = self.pos();
            self.next();
            e = Expr { kind: ExprKind::Bin(op, Box::new(e), Box::new(self.primary()?)), pos };
        }
        Ok(e)
    }
    fn primary(&mut self) -> R<Expr> {
        let pos = self.pos();
        let kind = match self.peek().clone() {
            Tok::Int(v) => {
                self.next();
                ExprKind::Int(v)
            }
            Tok::Sym("(") => {
                self.next();
                let e = self.expr(true)?;
                self.sym(")", "`)`")?;
                return Ok(e);
            }
            Tok::Sym("{") => {
                self.next();
                let mut v = Vec::new();
                if !self.is_sym("}") {
                    v.push(self.expr(false)?);
                    while self.eat_sym(",") {
                        v.push(self.expr(false)?);
                    }
                }
                self.sym("}", "`,` or `}`")?;
                ExprKind::SetOf(v)
            }
            Tok::Ident(w) => {
                self.next();
                match w.as_str() {
                    "true" => ExprKind::Bool(true),
                    "false" => ExprKind::Bool(false),
                    "undef" => ExprKind::Undef,
                    "count" => {
                        self.sym("(", "`(`")?;
                        let e = self.expr(false)?;
                        self.sym(")", "`)`")?;
                        ExprKind::Count(Box::new(e))
                    }
                    "forall" | "exists" => {
                        let vars = self.names_list("a bound variable")?;
                        if !self.eat_word("in") {
                            return self.err("`in` and a machine");
                        }
                        let machine = self.name("a machine")?;
                        self.sym(":", "`:` and the quantified expression")?;
                        let body = self.expr(true)?;
                        ExprKind::Quant { all: w == "forall", vars, machine, body: Box::new(body) }
                    }
                    "msg" if self.is_sym(".") => {
                        self.next();
                        ExprKind::Field(self.name("a field of the message")?.text)
                    }
                    _ if self.is_sym("[") || (self.is_sym(".") && matches!(self.peek_at(1), Tok::Ident(_))) => {
                        let index = if self.eat_sym("[") {
                            let e = self.expr(false)?;
                            self.sym("]", "`]`")?;
                            Some(Box::new(e))
                        } else {
                            None
                        };
                        if !self.is_sym(".") {
                            // `NAME[a]`: a per-address ghost
                            if let Some(i) = index {
                                return Ok(Expr { kind: ExprKind::At(Name { text: w, pos }, i), pos });
                            }
                        }
                        self.sym(".", "`.` and a variable of the machine (or `state`)")?;
                        let member = self.name("a variable of the machine (or `state`)")?;
                        let line = if self.eat_sym("[") {
                            let e = self.expr(false)?;
                            self.sym("]", "`]` after the address")?;
                            Some(Box::new(e))
                        } else {
                            None
                        };
                        ExprKind::Remote { machine: Name { text: w, pos }, index, member, line }
                    }
                    _ => ExprKind::Name(w),
                }
            }
            _ => return self.err("a value (a name, a number, true, false, undef, `(`, `{`)"),
        };
        Ok(Expr { kind, pos })
    }
}
