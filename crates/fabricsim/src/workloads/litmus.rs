//! Parser for herd7's C litmus format, the subset docs/architecture.md describes.
//!
//! ```text
//! C MP+rel+acq
//! "optional comment strings"
//! { [x]=0; y=0; }                      (missing locations start at 0)
//! P0(atomic_int* x, atomic_int* y) {
//!   atomic_store_explicit(x, 1, memory_order_relaxed);
//!   atomic_store_explicit(y, 1, memory_order_release);
//! }
//! P1(atomic_int* x, atomic_int* y) {
//!   int r0 = atomic_load_explicit(y, memory_order_acquire);
//!   int r1;
//!   r1 = atomic_load_explicit(x, memory_order_relaxed);
//! }
//! exists (1:r0=1 /\ 1:r1=0)
//! ```
//!
//! Supported statements, with orders `memory_order_relaxed`, `_acquire`,
//! `_release`, `_acq_rel` and `_seq_cst`:
//! - `int r = atomic_load_explicit(x, mo);` (or `r = ...;` after `int r;`)
//! - `atomic_store_explicit(x, V, mo);`
//! - `atomic_thread_fence(mo);`
//! - `int r = atomic_exchange_explicit(x, V, mo);`
//! - `int r = atomic_fetch_add_explicit(x, V, mo);` (and `_fetch_sub_`)
//! - `atomic_compare_exchange_strong_explicit(x, &r, V, mo_ok, mo_fail);`
//!   after `int r = E;`: `r` holds the expected value `E` and receives the
//!   old value (C semantics); `mo_fail` must be the read part of `mo_ok`.
//! - the non-`_explicit` forms (`atomic_load(x)`, ...) mean `seq_cst`.
//!
//! The condition is `exists`, `~exists` or `forall` over `N:r=V` and `x=V`
//! (or `[x]=V`), `true`, `false`, joined by `/\`, `\/`, `~` and parentheses.
//! `//` and `/* */` comments are skipped. Anything else is an error
//! [`LitmusError`] naming the file, the line and what is supported; the
//! parser never panics.

use std::fmt;
use std::path::Path;

use super::program::{Condition, Expr, Op, Order, Program, Quantifier, RmwKind, Value};

/// A litmus file that could not be parsed: `FILE:LINE: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LitmusError {
    pub file: String,
    /// 1-based; 0 when the file could not be read at all.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for LitmusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for LitmusError {}

const STATEMENTS: &str = "supported statements: `int r = atomic_load_explicit(x, mo);`, \
`atomic_store_explicit(x, V, mo);`, `atomic_thread_fence(mo);`, \
`int r = atomic_exchange_explicit(x, V, mo);`, `int r = atomic_fetch_add_explicit(x, V, mo);`, \
`int r = atomic_fetch_sub_explicit(x, V, mo);`, \
`atomic_compare_exchange_strong_explicit(x, &r, V, mo, mo);` (after `int r = E;`), \
`int r;` and `r = ...;`";

const ORDERS: &str = "supported orders: memory_order_relaxed, memory_order_acquire, \
memory_order_release, memory_order_acq_rel, memory_order_seq_cst";

const CONDITIONS: &str = "supported: `exists`, `~exists` or `forall` followed by atoms \
`N:r=V` (register r of thread N) and `x=V` (final memory), `true`, `false`, joined by \
`/\\`, `\\/`, `~` and parentheses";

/// Parse a litmus file from disk; the file name in errors is `path`.
pub fn parse_file(path: &Path) -> Result<Program, LitmusError> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, &file),
        Err(e) => Err(LitmusError { file, line: 0, message: format!("cannot read the litmus file: {e}") }),
    }
}

/// Parse the text of a litmus test; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Program, LitmusError> {
    // A UTF-8 byte order mark (some Windows editors write one) is not content.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Parser::new(text, file)?.program()
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Int(i128),
    Str,
    /// Single punctuation character.
    P(char),
    /// `/\`
    And,
    /// `\/`
    Or,
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Int(v) => write!(f, "`{v}`"),
            Tok::Str => write!(f, "a string"),
            Tok::P(c) => write!(f, "`{c}`"),
            Tok::And => write!(f, "`/\\`"),
            Tok::Or => write!(f, "`\\/`"),
            Tok::Eof => write!(f, "the end of the file"),
        }
    }
}

struct Parser<'a> {
    file: &'a str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
    name: String,
}

/// One thread's state while its body is parsed.
struct ThreadCtx {
    index: usize,
    /// Parameter names, as indices into the program's locations.
    params: Vec<(String, u8)>,
    regs: Vec<String>,
    /// Per register: a pending constant (`int r = K;`), its line, and
    /// whether an operation wrote the register before.
    constant: Vec<Option<(Value, usize)>>,
    written: Vec<bool>,
    ops: Vec<Op>,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> Parser<'a> {
    fn new(text: &str, file: &'a str) -> Result<Parser<'a>, LitmusError> {
        let err = |line: usize, message: String| LitmusError { file: file.to_string(), line, message };
        // Header: the first non-blank line is `C NAME`.
        let mut lines = text.split_inclusive('\n').enumerate();
        let mut offset = 0;
        let (hline, name) = loop {
            match lines.next() {
                None => return Err(err(1, "empty file: a C litmus test starts with a line `C NAME`".into())),
                Some((i, l)) => {
                    offset += l.len();
                    let t = l.trim();
                    if t.is_empty() {
                        continue;
                    }
                    let mut words = t.split_whitespace();
                    let arch = words.next().unwrap_or("");
                    if arch != "C" {
                        return Err(err(
                            i + 1,
                            format!(
                                "expected the header `C NAME`, found `{t}`: only herd7's C litmus \
                                 format is supported (not `{arch}` tests)"
                            ),
                        ));
                    }
                    match (words.next(), words.next()) {
                        (Some(n), None) => break (i + 1, n.to_string()),
                        (None, _) => return Err(err(i + 1, "the header `C` has no test name".into())),
                        (Some(_), Some(_)) => {
                            return Err(err(i + 1, "the header must be `C NAME` with a name without spaces".into()))
                        }
                    }
                }
            }
        };
        let toks = tokenize(&text[offset..], hline + 1, file)?;
        Ok(Parser { file, toks, pos: 0, name })
    }

    fn err<T>(&self, line: usize, message: impl Into<String>) -> Result<T, LitmusError> {
        Err(LitmusError { file: self.file.to_string(), line, message: message.into() })
    }

    fn peek(&self) -> &Tok {
        self.toks.get(self.pos).map_or(&Tok::Eof, |t| &t.0)
    }

    fn peek_at(&self, k: usize) -> &Tok {
        self.toks.get(self.pos + k).map_or(&Tok::Eof, |t| &t.0)
    }

    fn line(&self) -> usize {
        self.toks.get(self.pos).or(self.toks.last()).map_or(1, |t| t.1)
    }

    fn next(&mut self) -> (Tok, usize) {
        let line = self.line();
        let t = self.peek().clone();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        (t, line)
    }

    fn expect_p(&mut self, c: char, what: &str) -> Result<usize, LitmusError> {
        let (t, line) = self.next();
        if t == Tok::P(c) {
            Ok(line)
        } else {
            self.err(line, format!("expected `{c}` {what}, found {t}"))
        }
    }

    fn eat_p(&mut self, c: char) -> bool {
        if *self.peek() == Tok::P(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn ident(&mut self, what: &str) -> Result<(String, usize), LitmusError> {
        match self.next() {
            (Tok::Ident(s), line) => Ok((s, line)),
            (t, line) => self.err(line, format!("expected {what}, found {t}")),
        }
    }

    /// An integer constant, optionally negative.
    fn int(&mut self, what: &str) -> Result<Value, LitmusError> {
        let neg = self.eat_p('-');
        match self.next() {
            (Tok::Int(v), line) => {
                let v = if neg { -v } else { v };
                Value::try_from(v).or_else(|_| self.err(line, format!("{what} {v} does not fit in a 64-bit integer")))
            }
            (t, line) => self.err(line, format!("expected {what} (an integer constant), found {t}")),
        }
    }

    fn program(&mut self) -> Result<Program, LitmusError> {
        // Optional comment strings.
        while *self.peek() == Tok::Str {
            self.pos += 1;
        }
        let mut locations: Vec<String> = Vec::new();
        let mut init: Vec<Value> = Vec::new();
        let mut init_given: Vec<bool> = Vec::new();
        self.init_block(&mut locations, &mut init, &mut init_given)?;

        let mut threads = Vec::new();
        let mut registers = Vec::new();
        while let Tok::Ident(s) = self.peek() {
            if !s.starts_with('P') || s.len() < 2 || !s[1..].chars().all(|c| c.is_ascii_digit()) {
                break;
            }
            let ctx = self.thread(threads.len(), &mut locations, &mut init)?;
            threads.push(ctx.ops);
            registers.push(ctx.regs);
        }
        if threads.is_empty() {
            let line = self.line();
            let found = self.peek().clone();
            return self.err(line, format!("expected a thread `P0(atomic_int* x, ...) {{ ... }}`, found {found}"));
        }
        let condition = self.condition(&locations, &registers)?;
        Ok(Program { name: self.name.clone(), locations, init, threads, registers, condition })
    }

    fn add_location(
        &self,
        line: usize,
        name: &str,
        locations: &mut Vec<String>,
        init: &mut Vec<Value>,
    ) -> Result<u8, LitmusError> {
        if let Some(i) = locations.iter().position(|l| l == name) {
            return Ok(i as u8);
        }
        if locations.len() >= 256 {
            return self.err(line, "too many locations (at most 256 are supported)");
        }
        locations.push(name.to_string());
        init.push(0);
        Ok((locations.len() - 1) as u8)
    }

    fn init_block(
        &mut self,
        locations: &mut Vec<String>,
        init: &mut Vec<Value>,
        given: &mut Vec<bool>,
    ) -> Result<(), LitmusError> {
        self.expect_p('{', "to open the initial state block (e.g. `{ [x]=0; [y]=0; }`)")?;
        loop {
            let line = self.line();
            match self.peek().clone() {
                Tok::P('}') => {
                    self.pos += 1;
                    return Ok(());
                }
                Tok::P(';') => {
                    self.pos += 1;
                }
                Tok::P('[') => {
                    self.pos += 1;
                    let (name, _) = self.ident("a location name inside `[...]`")?;
                    self.expect_p(']', "after the location name")?;
                    self.init_entry(line, &name, locations, init, given)?;
                }
                Tok::Int(t) => {
                    return self.err(
                        line,
                        format!(
                            "initial register values (`{t}:r=...`) are not supported; \
                             registers start at 0 (supported initial entries: `[x]=V;` or `x=V;`)"
                        ),
                    )
                }
                Tok::Ident(mut name) => {
                    self.pos += 1;
                    if name == "atomic_int" || name == "int" {
                        // `atomic_int x = 0;`
                        if *self.peek() == Tok::P('*') {
                            return self.err(
                                line,
                                "pointer values in the initial state are not supported \
                                 (supported initial entries: `[x]=V;` or `x=V;`)",
                            );
                        }
                        name = self.ident("a location name")?.0;
                    }
                    self.init_entry(line, &name, locations, init, given)?;
                }
                t => {
                    return self.err(
                        line,
                        format!(
                            "unexpected {t} in the initial state block; supported entries are \
                             `[x]=V;` and `x=V;` with an integer V"
                        ),
                    )
                }
            }
        }
    }

    fn init_entry(
        &mut self,
        line: usize,
        name: &str,
        locations: &mut Vec<String>,
        init: &mut Vec<Value>,
        given: &mut Vec<bool>,
    ) -> Result<(), LitmusError> {
        check_name(self, line, name)?;
        self.expect_p('=', &format!("after `{name}` in the initial state"))?;
        if *self.peek() == Tok::P('&') {
            return self.err(
                line,
                "pointer values in the initial state are not supported; \
                 initial values are integers (`[x]=V;`)",
            );
        }
        let v = self.int(&format!("the initial value of `{name}`"))?;
        if !matches!(self.peek(), Tok::P(';') | Tok::P('}')) {
            let t = self.peek().clone();
            let l = self.line();
            return self.err(l, format!("expected `;` after the initial value, found {t}"));
        }
        let i = self.add_location(line, name, locations, init)? as usize;
        given.resize(locations.len(), false);
        if given[i] {
            return self.err(line, format!("location `{name}` is initialised twice"));
        }
        given[i] = true;
        init[i] = v;
        Ok(())
    }

    fn thread(
        &mut self,
        index: usize,
        locations: &mut Vec<String>,
        init: &mut Vec<Value>,
    ) -> Result<ThreadCtx, LitmusError> {
        let (pname, line) = self.ident("a thread")?;
        if pname != format!("P{index}") {
            return self.err(
                line,
                format!("expected thread `P{index}`, found `{pname}`: threads are numbered P0, P1, ... in order"),
            );
        }
        if index >= 255 {
            return self.err(line, "too many threads (at most 255 are supported)");
        }
        self.expect_p('(', &format!("after `{pname}`"))?;
        let mut ctx = ThreadCtx {
            index,
            params: Vec::new(),
            regs: Vec::new(),
            constant: Vec::new(),
            written: Vec::new(),
            ops: Vec::new(),
        };
        if !self.eat_p(')') {
            loop {
                let (ty, line) = self.ident("a parameter `atomic_int* x`")?;
                if ty == "volatile" || ty == "int" || ty == "const" || ty == "char" || ty == "long" {
                    return self.err(
                        line,
                        format!(
                            "non-atomic parameter type `{ty}`: only atomic locations are \
                             supported, declared as `atomic_int* x`"
                        ),
                    );
                }
                if ty != "atomic_int" {
                    return self
                        .err(line, format!("unsupported parameter type `{ty}`; declare locations as `atomic_int* x`"));
                }
                self.expect_p('*', "after `atomic_int` (parameters are `atomic_int* x`)")?;
                let (name, line) = self.ident("a location name")?;
                check_name(self, line, &name)?;
                if ctx.params.iter().any(|(n, _)| *n == name) {
                    return self.err(line, format!("parameter `{name}` is declared twice"));
                }
                let loc = self.add_location(line, &name, locations, init)?;
                ctx.params.push((name, loc));
                let (t, line) = self.next();
                match t {
                    Tok::P(',') => continue,
                    Tok::P(')') => break,
                    t => return self.err(line, format!("expected `,` or `)` in the parameter list, found {t}")),
                }
            }
        }
        self.expect_p('{', &format!("to open the body of `{pname}`"))?;
        loop {
            match self.peek() {
                Tok::P('}') => {
                    self.pos += 1;
                    break;
                }
                Tok::Eof => {
                    let l = self.line();
                    return self.err(l, format!("the body of `{pname}` is not closed with `}}`"));
                }
                _ => self.statement(&mut ctx)?,
            }
        }
        // A register whose last assignment is a constant would end with that
        // constant, which a program of memory operations cannot express
        // (registers start at 0 and change only by loads).
        for (r, c) in ctx.constant.iter().enumerate() {
            if let Some((v, line)) = *c {
                if v != 0 || ctx.written[r] {
                    return self.err(
                        line,
                        format!(
                            "register `{}` ends with the constant {v}: assigning a constant to a \
                             register is only supported to give the expected value of \
                             atomic_compare_exchange_strong_explicit",
                            ctx.regs[r]
                        ),
                    );
                }
            }
        }
        Ok(ctx)
    }

    fn declare_reg(&self, ctx: &mut ThreadCtx, line: usize, name: &str) -> Result<u8, LitmusError> {
        check_name(self, line, name)?;
        if ctx.regs.iter().any(|r| r == name) {
            return self.err(line, format!("register `{name}` is declared twice"));
        }
        if ctx.params.iter().any(|(p, _)| p == name) {
            return self.err(line, format!("`{name}` is already a location parameter of this thread"));
        }
        if ctx.regs.len() >= 256 {
            return self.err(line, "too many registers in one thread (at most 256)");
        }
        ctx.regs.push(name.to_string());
        ctx.constant.push(None);
        ctx.written.push(false);
        Ok((ctx.regs.len() - 1) as u8)
    }

    fn statement(&mut self, ctx: &mut ThreadCtx) -> Result<(), LitmusError> {
        let line = self.line();
        match self.peek().clone() {
            Tok::P(';') => {
                self.pos += 1;
                Ok(())
            }
            Tok::P('*') => self.err(line, format!("non-atomic accesses (`*x`) are not supported; {STATEMENTS}")),
            Tok::P('{') => self.err(line, format!("nested blocks are not supported; {STATEMENTS}")),
            Tok::Ident(kw) if kw == "int" => {
                self.pos += 1;
                if *self.peek() == Tok::P('*') {
                    return self.err(line, "pointer variables are not supported; registers are `int r`");
                }
                let (name, nline) = self.ident("a register name after `int`")?;
                let reg = self.declare_reg(ctx, nline, &name)?;
                if self.eat_p(';') {
                    return Ok(());
                }
                self.expect_p('=', &format!("or `;` after `int {name}`"))?;
                self.assignment(ctx, reg, line)
            }
            Tok::Ident(name) => {
                if let Some(r) = ctx.regs.iter().position(|r| *r == name) {
                    if *self.peek_at(1) == Tok::P('=') {
                        self.pos += 2;
                        return self.assignment(ctx, r as u8, line);
                    }
                    let t = self.peek_at(1).clone();
                    return self.err(line, format!("expected `=` after register `{name}`, found {t}; {STATEMENTS}"));
                }
                if ctx.params.iter().any(|(p, _)| *p == name) {
                    return self.err(
                        line,
                        format!(
                            "`{name}` is a location; plain (non-atomic) accesses are not \
                             supported; {STATEMENTS}"
                        ),
                    );
                }
                match name.as_str() {
                    "atomic_store_explicit" | "atomic_store" => {
                        self.pos += 1;
                        let explicit = name.ends_with("_explicit");
                        self.expect_p('(', &format!("after `{name}`"))?;
                        let loc = self.location(ctx)?;
                        self.expect_p(',', "after the location")?;
                        let value = self.store_value()?;
                        let order = if explicit {
                            self.expect_p(',', "before the memory order")?;
                            self.order()?
                        } else {
                            Order::SeqCst
                        };
                        self.expect_p(')', &format!("to close `{name}(...)`"))?;
                        self.expect_p(';', "after the statement")?;
                        if order.is_acquire() && order != Order::SeqCst {
                            return self.err(
                                line,
                                format!(
                                    "a store cannot be {}; stores are memory_order_relaxed, \
                                     memory_order_release or memory_order_seq_cst",
                                    order.c_name()
                                ),
                            );
                        }
                        ctx.ops.push(Op::Store { loc, value, order });
                        Ok(())
                    }
                    "atomic_thread_fence" => {
                        self.pos += 1;
                        self.expect_p('(', "after `atomic_thread_fence`")?;
                        let order = self.order()?;
                        self.expect_p(')', "to close `atomic_thread_fence(...)`")?;
                        self.expect_p(';', "after the statement")?;
                        ctx.ops.push(Op::Fence { order });
                        Ok(())
                    }
                    "atomic_compare_exchange_strong_explicit" | "atomic_compare_exchange_strong" => {
                        self.pos += 1;
                        self.compare_exchange(ctx, &name, line)?;
                        self.expect_p(';', "after the statement").map(|_| ())
                    }
                    "atomic_compare_exchange_weak_explicit" | "atomic_compare_exchange_weak" => self.err(
                        line,
                        "weak compare-exchange (which may fail spuriously) is not supported; \
                         use atomic_compare_exchange_strong_explicit",
                    ),
                    "atomic_load_explicit"
                    | "atomic_load"
                    | "atomic_exchange_explicit"
                    | "atomic_exchange"
                    | "atomic_fetch_add_explicit"
                    | "atomic_fetch_add"
                    | "atomic_fetch_sub_explicit"
                    | "atomic_fetch_sub" => self.err(
                        line,
                        format!(
                            "the result of `{name}` must be assigned to a register, \
                             e.g. `int r0 = {name}(...);`"
                        ),
                    ),
                    "if" | "else" | "while" | "for" | "do" | "switch" | "goto" | "return" | "break" | "continue" => {
                        self.err(line, format!("control flow (`{name}`) is not supported; {STATEMENTS}"))
                    }
                    _ => self.err(
                        line,
                        format!(
                            "unknown name `{name}` (not a register of P{} nor a supported function); {STATEMENTS}",
                            ctx.index
                        ),
                    ),
                }
            }
            t => self.err(line, format!("unexpected {t}; {STATEMENTS}")),
        }
    }

    /// The right-hand side of `r = ...;`.
    fn assignment(&mut self, ctx: &mut ThreadCtx, reg: u8, line: usize) -> Result<(), LitmusError> {
        let r = reg as usize;
        match self.peek().clone() {
            Tok::Int(_) | Tok::P('-') => {
                let v = self.int("a register value")?;
                self.expect_p(';', "after the assignment")?;
                ctx.constant[r] = Some((v, line));
                Ok(())
            }
            Tok::Ident(f) => {
                self.pos += 1;
                let explicit = f.ends_with("_explicit");
                let base = f.strip_suffix("_explicit").unwrap_or(&f);
                let op = match base {
                    "atomic_load" => {
                        self.expect_p('(', &format!("after `{f}`"))?;
                        let loc = self.location(ctx)?;
                        let order = if explicit {
                            self.expect_p(',', "before the memory order")?;
                            self.order()?
                        } else {
                            Order::SeqCst
                        };
                        if order.is_release() && order != Order::SeqCst {
                            return self.err(
                                line,
                                format!(
                                    "a load cannot be {}; loads are memory_order_relaxed, \
                                     memory_order_acquire or memory_order_seq_cst",
                                    order.c_name()
                                ),
                            );
                        }
                        Op::Load { loc, reg, order }
                    }
                    "atomic_exchange" | "atomic_fetch_add" | "atomic_fetch_sub" => {
                        self.expect_p('(', &format!("after `{f}`"))?;
                        let loc = self.location(ctx)?;
                        self.expect_p(',', "after the location")?;
                        let v = self.store_value()?;
                        let order = if explicit {
                            self.expect_p(',', "before the memory order")?;
                            self.order()?
                        } else {
                            Order::SeqCst
                        };
                        let kind = match base {
                            "atomic_exchange" => RmwKind::Exchange(v),
                            "atomic_fetch_add" => RmwKind::FetchAdd(v),
                            _ => RmwKind::FetchAdd(v.wrapping_neg()),
                        };
                        Op::Rmw { loc, reg, kind, order }
                    }
                    "atomic_compare_exchange_strong" => {
                        return self.err(
                            line,
                            format!(
                                "the boolean result of `{f}` is not supported; write it as a \
                                 statement `{f}(x, &r, V, mo, mo);` after `int r = E;`: `r` then \
                                 receives the old value of x"
                            ),
                        )
                    }
                    _ => {
                        if ctx.regs.contains(&f) {
                            return self.err(
                                line,
                                "copying registers is not supported; a register is assigned \
                                 a load, an RMW or (for compare-exchange) a constant",
                            );
                        }
                        if ctx.params.iter().any(|(p, _)| *p == f) {
                            return self.err(
                                line,
                                format!(
                                    "`{f}` is a location; plain (non-atomic) loads are not \
                                     supported, use `atomic_load_explicit({f}, mo)`"
                                ),
                            );
                        }
                        return self.err(line, format!("unsupported right-hand side `{f}`; {STATEMENTS}"));
                    }
                };
                self.expect_p(')', &format!("to close `{f}(...)`"))?;
                self.expect_p(';', "after the statement")?;
                ctx.constant[r] = None;
                ctx.written[r] = true;
                ctx.ops.push(op);
                Ok(())
            }
            Tok::P('*') => self.err(line, format!("non-atomic accesses (`*x`) are not supported; {STATEMENTS}")),
            t => self.err(line, format!("unsupported right-hand side {t}; {STATEMENTS}")),
        }
    }

    /// After the function name: `(x, &r, V, mo_ok, mo_fail)`.
    fn compare_exchange(&mut self, ctx: &mut ThreadCtx, f: &str, line: usize) -> Result<(), LitmusError> {
        self.expect_p('(', &format!("after `{f}`"))?;
        let loc = self.location(ctx)?;
        self.expect_p(',', "after the location")?;
        self.expect_p('&', "before the expected-value register (the form is `f(x, &r, V, mo, mo)`)")?;
        let (rname, rline) = self.ident("the expected-value register")?;
        let Some(reg) = ctx.regs.iter().position(|r| *r == rname) else {
            return self.err(
                rline,
                format!("`{rname}` is not a register of P{}; declare it first with `int {rname} = E;`", ctx.index),
            );
        };
        let Some((expected, _)) = ctx.constant[reg] else {
            return self.err(
                rline,
                format!(
                    "the expected-value register `{rname}` must hold a constant \
                     (assign it with `{rname} = E;` just before)"
                ),
            );
        };
        self.expect_p(',', "after the expected-value register")?;
        let new = self.store_value()?;
        let (order, fail) = if f.ends_with("_explicit") {
            self.expect_p(',', "before the success memory order")?;
            let o = self.order()?;
            self.expect_p(',', "before the failure memory order")?;
            (o, self.order()?)
        } else {
            (Order::SeqCst, Order::SeqCst)
        };
        self.expect_p(')', &format!("to close `{f}(...)`"))?;
        if fail != order.read_part() {
            return self.err(
                line,
                format!(
                    "the failure order of a compare-exchange must be the read part of its \
                     success order ({} for {}); other failure orders are not supported",
                    order.read_part().c_name(),
                    order.c_name()
                ),
            );
        }
        ctx.constant[reg] = None;
        ctx.written[reg] = true;
        ctx.ops.push(Op::Rmw { loc, reg: reg as u8, kind: RmwKind::CompareExchange { expected, new }, order });
        Ok(())
    }

    fn store_value(&mut self) -> Result<Value, LitmusError> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                let line = self.line();
                self.err(
                    line,
                    format!(
                        "the value `{s}` is not an integer constant: stored values must be \
                         constants (data dependencies are not supported)"
                    ),
                )
            }
            _ => self.int("a value"),
        }
    }

    /// A location argument: one of the thread's parameters.
    fn location(&mut self, ctx: &ThreadCtx) -> Result<u8, LitmusError> {
        let line = self.line();
        match self.next().0 {
            Tok::Ident(name) => {
                if let Some((_, l)) = ctx.params.iter().find(|(p, _)| *p == name) {
                    if matches!(self.peek(), Tok::P('+') | Tok::P('-') | Tok::P('[')) {
                        return self.err(
                            line,
                            "pointer arithmetic and indexing are not supported; pass a \
                             location parameter as is",
                        );
                    }
                    return Ok(*l);
                }
                if ctx.regs.contains(&name) {
                    return self.err(
                        line,
                        format!("`{name}` is a register, not a location; addresses in registers are not supported"),
                    );
                }
                self.err(
                    line,
                    format!(
                        "P{} uses location `{name}` that it does not declare; add `atomic_int* \
                         {name}` to its parameters",
                        ctx.index
                    ),
                )
            }
            Tok::P('&') => {
                self.err(line, "`&x` is not supported here: a location parameter is already a pointer, write `x`")
            }
            Tok::P('*') => self.err(line, "`*x` is not supported here: write the location parameter `x`"),
            t => self.err(line, format!("expected a location parameter, found {t}")),
        }
    }

    fn order(&mut self) -> Result<Order, LitmusError> {
        let (t, line) = self.next();
        match t {
            Tok::Ident(s) => match Order::from_c_name(&s) {
                Some(o) => Ok(o),
                None if s == "memory_order_consume" => self
                    .err(line, format!("memory_order_consume is not supported (use memory_order_acquire); {ORDERS}")),
                None => self.err(line, format!("unknown memory order `{s}`; {ORDERS}")),
            },
            t => self.err(line, format!("expected a memory order, found {t}; {ORDERS}")),
        }
    }

    fn condition(&mut self, locations: &[String], registers: &[Vec<String>]) -> Result<Condition, LitmusError> {
        let (t, line) = self.next();
        let quantifier = match t {
            Tok::Ident(s) if s == "exists" => Quantifier::Exists,
            Tok::Ident(s) if s == "forall" => Quantifier::Forall,
            Tok::P('~') => match self.next() {
                (Tok::Ident(s), _) if s == "exists" => Quantifier::NotExists,
                (t, l) => return self.err(l, format!("expected `exists` after `~`, found {t}")),
            },
            Tok::Ident(s) if s == "locations" || s == "filter" => {
                return self.err(
                    line,
                    format!("`{s}` clauses are not supported; the test ends with its final condition ({CONDITIONS})"),
                )
            }
            Tok::Eof => return self.err(line, format!("missing final condition; {CONDITIONS}")),
            t => {
                return self
                    .err(line, format!("expected a thread `P...` or the final condition, found {t}; {CONDITIONS}"))
            }
        };
        let env = Env { locations, registers };
        let expr = self.disj(&env, 0)?;
        if *self.peek() != Tok::Eof {
            let l = self.line();
            let t = self.peek().clone();
            return self.err(l, format!("unexpected {t} after the final condition"));
        }
        Ok(Condition { quantifier, expr })
    }

    fn disj(&mut self, env: &Env, depth: usize) -> Result<Expr, LitmusError> {
        let mut e = self.conj(env, depth)?;
        while *self.peek() == Tok::Or {
            self.pos += 1;
            let r = self.conj(env, depth)?;
            e = Expr::Or(Box::new(e), Box::new(r));
        }
        Ok(e)
    }

    fn conj(&mut self, env: &Env, depth: usize) -> Result<Expr, LitmusError> {
        let mut e = self.unary(env, depth)?;
        while *self.peek() == Tok::And {
            self.pos += 1;
            let r = self.unary(env, depth)?;
            e = Expr::And(Box::new(e), Box::new(r));
        }
        Ok(e)
    }

    fn unary(&mut self, env: &Env, depth: usize) -> Result<Expr, LitmusError> {
        if depth > 200 {
            let l = self.line();
            return self.err(l, "the condition is nested too deeply");
        }
        let (t, line) = self.next();
        match t {
            Tok::P('~') => Ok(Expr::Not(Box::new(self.unary(env, depth + 1)?))),
            Tok::P('(') => {
                let e = self.disj(env, depth + 1)?;
                match self.next() {
                    (Tok::P(')'), _) => Ok(e),
                    (t, l) => self.err(l, format!("expected `)` to close the parenthesis, found {t}; {CONDITIONS}")),
                }
            }
            Tok::Ident(s) if s == "true" => Ok(Expr::True),
            Tok::Ident(s) if s == "false" => Ok(Expr::False),
            Tok::Int(t) => {
                self.expect_p(':', &format!("after thread number {t} (atoms are `N:r=V`)"))?;
                let (reg, rl) = self.ident("a register name")?;
                let Some(regs) = usize::try_from(t).ok().and_then(|t| env.registers.get(t)) else {
                    return self.err(
                        line,
                        format!(
                            "the condition names thread {t}, but the test has threads P0..P{}",
                            env.registers.len().saturating_sub(1)
                        ),
                    );
                };
                let Some(r) = regs.iter().position(|x| *x == reg) else {
                    return self
                        .err(rl, format!("the condition names register `{t}:{reg}`, which P{t} does not declare"));
                };
                self.expect_p('=', &format!("after `{t}:{reg}`"))?;
                let value = self.int("a value")?;
                Ok(Expr::RegEq { thread: t as u8, reg: r as u8, value })
            }
            Tok::P('[') => {
                let (name, _) = self.ident("a location name inside `[...]`")?;
                self.expect_p(']', "after the location name")?;
                self.loc_atom(env, &name, line)
            }
            Tok::Ident(name) => self.loc_atom(env, &name, line),
            t => self.err(line, format!("unexpected {t} in the condition; {CONDITIONS}")),
        }
    }

    fn loc_atom(&mut self, env: &Env, name: &str, line: usize) -> Result<Expr, LitmusError> {
        let Some(loc) = env.locations.iter().position(|l| l == name) else {
            return self.err(line, format!("unknown location `{name}` in the condition; {CONDITIONS}"));
        };
        self.expect_p('=', &format!("after `{name}` (atoms are `x=V`)"))?;
        let value = self.int("a value")?;
        Ok(Expr::LocEq { loc: loc as u8, value })
    }
}

struct Env<'a> {
    locations: &'a [String],
    registers: &'a [Vec<String>],
}

const RESERVED: &[&str] =
    &["int", "atomic_int", "exists", "forall", "true", "false", "if", "else", "while", "for", "do", "return"];

fn check_name(p: &Parser, line: usize, name: &str) -> Result<(), LitmusError> {
    if RESERVED.contains(&name) || name.starts_with("atomic_") || name.starts_with("memory_order") {
        return p.err(line, format!("`{name}` cannot be used as a name"));
    }
    Ok(())
}

fn tokenize(text: &str, first_line: usize, file: &str) -> Result<Vec<(Tok, usize)>, LitmusError> {
    let err = |line: usize, message: String| LitmusError { file: file.to_string(), line, message };
    let mut toks = Vec::new();
    let mut line = first_line;
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            '/' if it.peek() == Some(&'/') => {
                for c in it.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            '/' if it.peek() == Some(&'*') => {
                let start = line;
                it.next();
                let mut prev = ' ';
                let mut closed = false;
                for c in it.by_ref() {
                    if c == '\n' {
                        line += 1;
                    }
                    if prev == '*' && c == '/' {
                        closed = true;
                        break;
                    }
                    prev = c;
                }
                if !closed {
                    return Err(err(start, "unterminated `/* ... */` comment".into()));
                }
            }
            '/' if it.peek() == Some(&'\\') => {
                it.next();
                toks.push((Tok::And, line));
            }
            '\\' if it.peek() == Some(&'/') => {
                it.next();
                toks.push((Tok::Or, line));
            }
            '"' => {
                let start = line;
                let mut closed = false;
                for c in it.by_ref() {
                    if c == '\n' {
                        line += 1;
                    }
                    if c == '"' {
                        closed = true;
                        break;
                    }
                }
                if !closed {
                    return Err(err(start, "unterminated string".into()));
                }
                toks.push((Tok::Str, start));
            }
            c if c.is_ascii_digit() => {
                let mut s = String::from(c);
                while let Some(&d) = it.peek() {
                    if d.is_ascii_alphanumeric() || d == '_' {
                        s.push(d);
                        it.next();
                    } else {
                        break;
                    }
                }
                match s.parse::<i128>() {
                    Ok(v) if v <= i64::MAX as i128 + 1 => toks.push((Tok::Int(v), line)),
                    _ => return Err(err(line, format!("bad integer `{s}`: integers are decimal and fit in 64 bits"))),
                }
            }
            c if is_ident_start(c) => {
                let mut s = String::from(c);
                while let Some(&d) = it.peek() {
                    if is_ident(d) {
                        s.push(d);
                        it.next();
                    } else {
                        break;
                    }
                }
                toks.push((Tok::Ident(s), line));
            }
            '{' | '}' | '(' | ')' | '[' | ']' | ';' | ',' | '=' | '*' | '&' | ':' | '~' | '-' | '+' => {
                toks.push((Tok::P(c), line))
            }
            c => {
                return Err(err(
                    line,
                    format!(
                        "unexpected character `{}`: only the C litmus subset (atomic loads, \
                         stores, RMWs and fences; an exists/~exists/forall condition) is supported",
                        c.escape_default()
                    ),
                ))
            }
        }
    }
    Ok(toks)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MP: &str = r#"C MP+rel+acq
"a comment"
{ [x]=0; y=0; }

P0(atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
  atomic_store_explicit(y, 1, memory_order_release);
}

P1(atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire);
  int r1;
  r1 = atomic_load_explicit(x, memory_order_relaxed); // comment
}

exists (1:r0=1 /\ 1:r1=0)
"#;

    #[test]
    fn parses_message_passing() {
        let p = parse(MP, "mp.litmus").unwrap();
        assert_eq!(p.name, "MP+rel+acq");
        assert_eq!(p.locations, vec!["x", "y"]);
        assert_eq!(p.init, vec![0, 0]);
        assert_eq!(p.registers, vec![Vec::<String>::new(), vec!["r0".into(), "r1".into()]]);
        assert_eq!(
            p.threads[0],
            vec![
                Op::Store { loc: 0, value: 1, order: Order::Relaxed },
                Op::Store { loc: 1, value: 1, order: Order::Release }
            ]
        );
        assert_eq!(p.threads[1][0], Op::Load { loc: 1, reg: 0, order: Order::Acquire });
        assert_eq!(p.condition.quantifier, Quantifier::Exists);
        assert_eq!(p.condition_string(), "exists (1:r0=1 /\\ 1:r1=0)");
    }

    #[test]
    fn parses_rmws_fences_and_conditions() {
        let src = r#"C RMW
{ x=5; }
P0(atomic_int* x, atomic_int* z) {
  int a = atomic_fetch_add_explicit(x, 2, memory_order_acq_rel);
  int b = atomic_exchange_explicit(x, -3, memory_order_relaxed);
  int c = atomic_fetch_sub(x, 1);
  atomic_thread_fence(memory_order_seq_cst);
  int e = 7;
  atomic_compare_exchange_strong_explicit(x, &e, 9, memory_order_release, memory_order_relaxed);
  atomic_store(z, 4);
  int f = atomic_load(z);
}
~exists (~0:a=5 \/ (x=9 /\ [z]=4) /\ true)
"#;
        let p = parse(src, "rmw.litmus").unwrap();
        assert_eq!(p.locations, vec!["x", "z"]);
        assert_eq!(p.init, vec![5, 0]);
        let t = &p.threads[0];
        assert_eq!(t.len(), 7);
        assert_eq!(t[0], Op::Rmw { loc: 0, reg: 0, kind: RmwKind::FetchAdd(2), order: Order::AcqRel });
        assert_eq!(t[1], Op::Rmw { loc: 0, reg: 1, kind: RmwKind::Exchange(-3), order: Order::Relaxed });
        assert_eq!(t[2], Op::Rmw { loc: 0, reg: 2, kind: RmwKind::FetchAdd(-1), order: Order::SeqCst });
        assert_eq!(t[3], Op::Fence { order: Order::SeqCst });
        assert_eq!(
            t[4],
            Op::Rmw { loc: 0, reg: 3, kind: RmwKind::CompareExchange { expected: 7, new: 9 }, order: Order::Release }
        );
        assert_eq!(p.condition.quantifier, Quantifier::NotExists);
        assert_eq!(p.condition_string(), "~exists (~0:a=5 \\/ x=9 /\\ z=4 /\\ true)");
    }

    fn error(src: &str) -> String {
        match parse(src, "bad.litmus") {
            Ok(p) => panic!("accepted: {p:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn body(stmts: &str) -> String {
        format!("C T\n{{ [x]=0; [y]=0; }}\nP0(atomic_int* x) {{\n{stmts}\n}}\nexists (x=0)\n")
    }

    #[test]
    fn bad_inputs_name_file_line_and_what_is_supported() {
        let cases: &[(String, &str)] = &[
            (String::new(), "bad.litmus:1: empty file"),
            ("X86 SB\n{}\n".into(), "bad.litmus:1: expected the header `C NAME`"),
            ("C\n".into(), "has no test name"),
            (body("if (1) { }"), "bad.litmus:4: control flow (`if`) is not supported; supported statements"),
            (body("while (1) { }"), "control flow (`while`)"),
            (body("*x = 1;"), "bad.litmus:4: non-atomic accesses (`*x`) are not supported"),
            (body("int r0 = *x;"), "non-atomic accesses"),
            (body("x = 1;"), "plain (non-atomic) accesses are not supported"),
            (body("int r0 = x;"), "plain (non-atomic) loads are not supported"),
            (body("int r0 = atomic_load_explicit(x, memory_order_consume);"), "bad.litmus:4: memory_order_consume is not supported"),
            (body("int r0 = atomic_load_explicit(x, memory_order_bogus);"), "unknown memory order `memory_order_bogus`; supported orders"),
            (body("int r0 = atomic_load_explicit(y, memory_order_relaxed);"), "bad.litmus:4: P0 uses location `y` that it does not declare"),
            (body("int r0 = atomic_load_explicit(x+1, memory_order_relaxed);"), "pointer arithmetic"),
            (body("int r0 = atomic_load_explicit(&x, memory_order_relaxed);"), "`&x` is not supported"),
            (body("int r0 = atomic_load_explicit(x, memory_order_release);"), "a load cannot be memory_order_release"),
            (body("atomic_store_explicit(x, 1, memory_order_acquire);"), "a store cannot be memory_order_acquire"),
            (body("int r0 = atomic_load_explicit(x, memory_order_relaxed);\natomic_store_explicit(x, r0, memory_order_relaxed);"), "bad.litmus:5: the value `r0` is not an integer constant"),
            (body("foo(x);"), "unknown name `foo`"),
            (body("int r0 = 1;"), "register `r0` ends with the constant 1"),
            (body("int r0 = atomic_load_explicit(x, memory_order_relaxed);\nr0 = 0;"), "ends with the constant 0"),
            (body("int r0; int r0;"), "declared twice"),
            (body("r9 = 1;"), "unknown name `r9`"),
            (body("atomic_load_explicit(x, memory_order_relaxed);"), "must be assigned to a register"),
            (body("int r = atomic_compare_exchange_strong_explicit(x, &r, 1, memory_order_relaxed, memory_order_relaxed);"), "boolean result"),
            (body("int r; atomic_compare_exchange_strong_explicit(x, &r, 1, memory_order_relaxed, memory_order_relaxed);"), "must hold a constant"),
            (body("int r = 0; atomic_compare_exchange_strong_explicit(x, &r, 1, memory_order_seq_cst, memory_order_relaxed);"), "failure order"),
            (body("int r = 0; atomic_compare_exchange_weak_explicit(x, &r, 1, memory_order_relaxed, memory_order_relaxed);"), "weak compare-exchange"),
            (body("atomic_thread_fence(memory_order_seq_cst)"), "expected `;` after the statement"),
            (body("int r0 = atomic_load_explicit(x, memory_order_relaxed)"), "bad.litmus:5: expected `;`"),
            (body("{ }"), "nested blocks"),
            (body("atomic_store_explicit(x, 99999999999999999999999, memory_order_relaxed);"), "bad integer"),
            ("C T\n{ [x]=0; }\nP0(int* x) { }\nexists (x=0)\n".into(), "bad.litmus:3: non-atomic parameter type `int`"),
            ("C T\n{ [x]=0; }\nP0(atomic_int* x, atomic_int* x) { }\nexists (x=0)\n".into(), "declared twice"),
            ("C T\n{ [x]=0; }\nP1(atomic_int* x) { }\nexists (x=0)\n".into(), "expected thread `P0`"),
            ("C T\n{ [x]=0; }\nP0(atomic_int* x) { }\nP0(atomic_int* x) { }\nexists (x=0)\n".into(), "bad.litmus:4: expected thread `P1`"),
            ("C T\n{ [x]=0; }\nexists (x=0)\n".into(), "expected a thread"),
            ("C T\n{ [x]=0; [x]=1; }\nP0(atomic_int* x) { }\nexists (x=0)\n".into(), "initialised twice"),
            ("C T\n{ 0:r0=1; }\nP0(atomic_int* x) { }\nexists (x=0)\n".into(), "initial register values"),
            ("C T\n{ x=&y; }\nP0(atomic_int* x) { }\nexists (x=0)\n".into(), "pointer values"),
            ("C T\n{ [x=0; }\nP0(atomic_int* x) { }\nexists (x=0)\n".into(), "bad.litmus:2: expected `]`"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\n".into(), "missing final condition"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (1:r0=0)\n".into(), "the condition names thread 1"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (0:r0=0)\n".into(), "which P0 does not declare"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (z=0)\n".into(), "unknown location `z`"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (x=0 /\\)\n".into(), "unexpected `)` in the condition"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (x=0) junk\n".into(), "after the final condition"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nlocations [x;]\nexists (x=0)\n".into(), "`locations` clauses are not supported"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (x=0 && x=1)\n".into(), "found `&`; supported: `exists`"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) {\n".into(), "is not closed"),
            ("C T\n\"unterminated\n{ x=0; }\n".into(), "bad.litmus:2: unterminated string"),
            ("C T\n/* open\n{ x=0; }\n".into(), "unterminated `/* ... */`"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { int r0 = atomic_load_explicit(x, memory_order_relaxed); }\nexists (0:r0=99999999999999999999)\n".into(), "bad integer"),
        ];
        for (src, want) in cases {
            let got = error(src);
            assert!(got.contains(want), "for\n{src}\nwant `{want}`, got `{got}`");
        }
    }

    #[test]
    fn no_panics_on_truncations_and_garbage() {
        // Every prefix of a valid test is either accepted or an error.
        for i in 0..MP.len() {
            if MP.is_char_boundary(i) {
                let _ = parse(&MP[..i], "cut.litmus");
            }
        }
        for junk in [
            "C T\n\u{1F600}",
            "C T\n{ -",
            "C T\n{ [",
            "C T\n{ x= - }",
            "C T\n(((",
            "C T\n{}\nP0(",
            "C T\n{}\nP0(atomic_int",
            "C T\n{}\nP0(){}\nexists ((((((",
            "C T\n{}\nP0(){}\nexists ~",
            "C T\n{}\nP0(){}\nexists 0:",
        ] {
            assert!(parse(junk, "junk.litmus").is_err(), "{junk}");
        }
        let deep = format!("C T\n{{}}\nP0(){{}}\nexists {}true{}", "(".repeat(5000), ")".repeat(5000));
        assert!(parse(&deep, "deep.litmus").is_err());
    }

    #[test]
    fn defaults_and_alternative_spellings() {
        let src = "C T\n{ }\nP0(atomic_int *x) { int r0 = atomic_load_explicit(x, memory_order_seq_cst); }\nforall (0:r0=0 \\/ [x]=-1)\n";
        let p = parse(src, "t.litmus").unwrap();
        assert_eq!(p.locations, vec!["x"]);
        assert_eq!(p.init, vec![0]);
        assert_eq!(p.condition.quantifier, Quantifier::Forall);
        // A thread without parameters and an unused constant-0 register.
        let src = "C T\n{ atomic_int x = 2; }\nP0() { int r = 0; }\nexists (x=2)\n";
        let p = parse(src, "t.litmus").unwrap();
        assert_eq!(p.init, vec![2]);
        assert!(p.threads[0].is_empty());
    }
}
