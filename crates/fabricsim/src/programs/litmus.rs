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
//! Read as herd7 reads it: `(* ... *)` comments outside braces (nesting;
//! inside a thread `(*x)` is C), `//` and `/* */` comments; herd's `Key=Value` metadata lines between the header and the
//! initial state (`Cycle=`, `Relax=`, `Safe=`, `Prefetch=`, `Com=`,
//! `Orig=`, `Generator=`, ...) are skipped; a `;` may follow the condition.
//!
//! Locations are thread parameters `atomic_int* x`, `int* x` or
//! `volatile int* x` (qualifiers `volatile`/`const` anywhere); the initial
//! state is `[x]=V;`, `x=V;`, `int x = V;` or `atomic_int x = V;`.
//!
//! Statements, with orders `memory_order_relaxed`, `_acquire`, `_release`,
//! `_acq_rel` and `_seq_cst`:
//! - `r = atomic_load_explicit(x, mo);`, `atomic_store_explicit(x, E, mo);`,
//!   `atomic_thread_fence(mo);`, `r = atomic_exchange_explicit(x, E, mo);`,
//!   `r = atomic_fetch_add_explicit(x, E, mo);` (and `_fetch_sub_`),
//!   `atomic_compare_exchange_strong_explicit(x, &r, E, mo_ok, mo_fail);`
//!   (`r` holds the expected value and receives the old value, C
//!   semantics; `mo_fail` must be the read part of `mo_ok`; its boolean
//!   result may be assigned); the non-`_explicit` forms mean `seq_cst`;
//! - plain accesses `r = *x;` and `*x = E;`: relaxed atomic accesses (data
//!   races are not detected: a racy test gets the outcomes of relaxed
//!   atomics, where C11 would make it undefined);
//! - `r = E;` with `E` an expression over registers and constants (`+ - *
//!   & | ^ == != < <= > >= && || ! ~ -`, parentheses): register arithmetic;
//!   a stored value or RMW operand computed from a loaded register is a
//!   data dependency;
//! - `if (E) S else S` (blocks or single statements): a control dependency
//!   on the registers `E` reads;
//! - registers need no declaration (`int r;`, `int r = E;`, `int a, b;`
//!   also work); an access whose result is not assigned reads into a
//!   hidden register that outcomes do not show.
//!
//! A thread that is a straight line of accesses with constant values (every
//! register ending with a loaded value or 0) becomes [`Op`]s, which
//! protocols run; otherwise the program keeps its code
//! ([`Program::code`]), which only the oracle runs.
//!
//! The condition is `exists`, `~exists` or `forall` over `N:r=V` and `x=V`
//! (or `[x]=V`), `true`, `false`, joined by `/\`, `\/`, `~` and parentheses.
//! Anything else (loops, pointer values and address dependencies, weak
//! compare-exchange, `memory_order_consume`, other functions) is an error
//! [`LitmusError`] naming the file, the line, the column and the construct;
//! the parser never panics.

use std::fmt;
use std::path::Path;

use super::{BinOp, Condition, Exp, Expr, Op, Order, Program, Quantifier, RmwExp, RmwKind, Stmt, UnOp, Value};

/// A litmus file that could not be parsed: `FILE:LINE:COLUMN: message`
/// (`FILE:LINE: message` when the column is not known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LitmusError {
    pub file: String,
    /// 1-based; 0 when the file could not be read at all.
    pub line: usize,
    /// 1-based, in characters; 0 when not known.
    pub column: usize,
    pub message: String,
}

impl fmt::Display for LitmusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.column > 0 {
            write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for LitmusError {}

const STATEMENTS: &str = "supported statements: `r = atomic_load_explicit(x, mo);`, \
`atomic_store_explicit(x, E, mo);`, `atomic_thread_fence(mo);`, \
`r = atomic_exchange_explicit(x, E, mo);`, `r = atomic_fetch_add_explicit(x, E, mo);`, \
`r = atomic_fetch_sub_explicit(x, E, mo);`, \
`atomic_compare_exchange_strong_explicit(x, &r, E, mo, mo);`, `r = *x;`, `*x = E;`, \
`r = E;` (register arithmetic), `if (E) { ... } else { ... }`";

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
        Err(e) => Err(LitmusError { file, line: 0, column: 0, message: format!("cannot read the litmus file: {e}") }),
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
    /// A two-character C operator: `==`, `!=`, `<=`, `>=`, `&&`, `||`.
    Op2(&'static str),
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
            Tok::Op2(s) => write!(f, "`{s}`"),
            Tok::Eof => write!(f, "the end of the file"),
        }
    }
}

struct Parser<'a> {
    file: &'a str,
    toks: Vec<(Tok, Pos)>,
    pos: usize,
    name: String,
}

/// A location parameter of a thread.
struct Param {
    name: String,
    loc: u8,
    /// `int* x` or `volatile int* x`: plain accesses (relaxed).
    #[allow(dead_code)]
    plain: bool,
}

/// One thread's names while its body is parsed.
struct ThreadCtx {
    index: usize,
    params: Vec<Param>,
    regs: Vec<String>,
}

/// A position in the file: 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Pos {
    line: usize,
    col: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> Parser<'a> {
    fn new(text: &str, file: &'a str) -> Result<Parser<'a>, LitmusError> {
        let err = |line: usize, message: String| LitmusError { file: file.to_string(), line, column: 0, message };
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
        // herd's metadata lines between the header and the initial state
        // (`Cycle=...`, `Relax=...`, `Safe=...`, `Generator=...`, ...) are
        // not part of the test: blanked, keeping the line numbers.
        let mut rest = String::with_capacity(text.len() - offset);
        let mut in_header = true;
        for l in text[offset..].split_inclusive('\n') {
            if in_header && l.contains('{') {
                in_header = false;
            }
            if in_header && is_metadata(l) {
                rest.push_str(if l.ends_with('\n') { "\n" } else { "" });
            } else {
                rest.push_str(l);
            }
        }
        let toks = tokenize(&rest, hline + 1, file)?;
        Ok(Parser { file, toks, pos: 0, name })
    }

    fn err<T>(&self, at: Pos, message: impl Into<String>) -> Result<T, LitmusError> {
        Err(LitmusError { file: self.file.to_string(), line: at.line, column: at.col, message: message.into() })
    }

    /// A call that has no result (a store, a fence) assigned to a register.
    fn no_result(&self, f: &str, at: Pos, dest: Option<u8>) -> Result<(), LitmusError> {
        match dest {
            Some(_) => self.err(at, format!("`{f}` has no result to assign")),
            None => Ok(()),
        }
    }

    fn peek(&self) -> &Tok {
        self.toks.get(self.pos).map_or(&Tok::Eof, |t| &t.0)
    }

    fn peek_at(&self, k: usize) -> &Tok {
        self.toks.get(self.pos + k).map_or(&Tok::Eof, |t| &t.0)
    }

    /// Where the next token is (the last one at the end of the file).
    fn at(&self) -> Pos {
        self.toks.get(self.pos).or(self.toks.last()).map_or(Pos { line: 1, col: 0 }, |t| t.1)
    }

    fn line(&self) -> Pos {
        self.at()
    }

    fn next(&mut self) -> (Tok, Pos) {
        let line = self.line();
        let t = self.peek().clone();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        (t, line)
    }

    fn expect_p(&mut self, c: char, what: &str) -> Result<Pos, LitmusError> {
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

    fn ident(&mut self, what: &str) -> Result<(String, Pos), LitmusError> {
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

        let mut code = Vec::new();
        let mut registers = Vec::new();
        while let Tok::Ident(s) = self.peek() {
            if !s.starts_with('P') || s.len() < 2 || !s[1..].chars().all(|c| c.is_ascii_digit()) {
                break;
            }
            let (ctx, body) = self.thread(code.len(), &mut locations, &mut init)?;
            code.push(body);
            registers.push(ctx.regs);
        }
        if code.is_empty() {
            let line = self.line();
            let found = self.peek().clone();
            return self.err(line, format!("expected a thread `P0(atomic_int* x, ...) {{ ... }}`, found {found}"));
        }
        let condition = self.condition(&locations, &registers)?;
        // Straight-line threads with constant values become operations (what
        // protocols run); otherwise the program keeps its code.
        let mut lowered_regs = registers.clone();
        let lowered: Option<Vec<Vec<Op>>> = code.iter().zip(&mut lowered_regs).map(|(c, r)| lower(c, r)).collect();
        let (threads, registers, code) = match lowered {
            Some(threads) => (threads, lowered_regs, None),
            None => (vec![Vec::new(); code.len()], registers, Some(code)),
        };
        Ok(Program { name: self.name.clone(), locations, init, threads, registers, condition, code })
    }

    fn add_location(
        &self,
        line: Pos,
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
                    while name == "volatile" || name == "const" {
                        name = self.ident("a type after the qualifier")?.0;
                    }
                    if ["atomic_int", "int", "atomic_t", "intptr_t"].contains(&name.as_str()) {
                        // `atomic_int x = 0;`, `int x = 0;`, `volatile int x = 0;`,
                        // `atomic_t x = ATOMIC_INIT(0);`
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
        line: Pos,
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
        // The kernel's `ATOMIC_INIT(V)`.
        let wrapped = matches!(self.peek(), Tok::Ident(f) if f == "ATOMIC_INIT") && *self.peek_at(1) == Tok::P('(');
        if wrapped {
            self.pos += 2;
        }
        let v = self.int(&format!("the initial value of `{name}`"))?;
        if wrapped {
            self.expect_p(')', "to close `ATOMIC_INIT(...)`")?;
        }
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
    ) -> Result<(ThreadCtx, Vec<Stmt>), LitmusError> {
        let (pname, at) = self.ident("a thread")?;
        if pname != format!("P{index}") {
            return self.err(
                at,
                format!("expected thread `P{index}`, found `{pname}`: threads are numbered P0, P1, ... in order"),
            );
        }
        if index >= 255 {
            return self.err(at, "too many threads (at most 255 are supported)");
        }
        self.expect_p('(', &format!("after `{pname}`"))?;
        let mut ctx = ThreadCtx { index, params: Vec::new(), regs: Vec::new() };
        if !self.eat_p(')') {
            loop {
                let (mut ty, mut at) = self.ident("a parameter `atomic_int* x`")?;
                while ty == "volatile" || ty == "const" {
                    (ty, at) = self.ident("a parameter type after the qualifier")?;
                }
                let plain = match ty.as_str() {
                    "atomic_int" | "atomic_t" => false,
                    "int" | "intptr_t" => true,
                    "spinlock_t" => {
                        return self.err(
                            at,
                            "`spinlock_t`: spin locks are outside what the SC, TSO and RC models define \
                             (herd7 gives them a meaning only under the Linux-kernel memory model)",
                        )
                    }
                    _ => {
                        return self.err(
                            at,
                            format!(
                                "unsupported parameter type `{ty}`; locations are `atomic_int* x`, \
                                 `int* x` or `volatile int* x`"
                            ),
                        )
                    }
                };
                self.expect_p('*', &format!("after `{ty}` (parameters are pointers to locations, `{ty}* x`)"))?;
                while matches!(self.peek(), Tok::Ident(q) if q == "volatile" || q == "const") {
                    self.pos += 1;
                }
                let (name, at) = self.ident("a location name")?;
                check_name(self, at, &name)?;
                if ctx.params.iter().any(|p| p.name == name) {
                    return self.err(at, format!("parameter `{name}` is declared twice"));
                }
                let loc = self.add_location(at, &name, locations, init)?;
                ctx.params.push(Param { name, loc, plain });
                let (t, at) = self.next();
                match t {
                    Tok::P(',') => continue,
                    Tok::P(')') => break,
                    t => return self.err(at, format!("expected `,` or `)` in the parameter list, found {t}")),
                }
            }
        }
        self.expect_p('{', &format!("to open the body of `{pname}`"))?;
        let body = self.block_body(&mut ctx, &pname, 0)?;
        Ok((ctx, body))
    }

    /// Statements up to the `}` closing a block (consumed).
    fn block_body(&mut self, ctx: &mut ThreadCtx, pname: &str, depth: usize) -> Result<Vec<Stmt>, LitmusError> {
        let mut out = Vec::new();
        loop {
            match self.peek() {
                Tok::P('}') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Tok::Eof => {
                    let at = self.at();
                    return self.err(at, format!("the body of `{pname}` is not closed with `}}`"));
                }
                _ => self.statement(ctx, pname, depth, &mut out)?,
            }
        }
    }

    fn declare_reg(&self, ctx: &mut ThreadCtx, at: Pos, name: &str) -> Result<u8, LitmusError> {
        check_name(self, at, name)?;
        if ctx.regs.iter().any(|r| r == name) {
            return self.err(at, format!("register `{name}` is declared twice"));
        }
        self.new_reg(ctx, at, name)
    }

    fn new_reg(&self, ctx: &mut ThreadCtx, at: Pos, name: &str) -> Result<u8, LitmusError> {
        if ctx.params.iter().any(|p| p.name == name) {
            return self.err(at, format!("`{name}` is already a location parameter of this thread"));
        }
        if ctx.regs.len() >= 200 {
            return self.err(at, "too many registers in one thread (at most 200)");
        }
        ctx.regs.push(name.to_string());
        Ok((ctx.regs.len() - 1) as u8)
    }

    /// A register assigned by `name = ...`: declared, or declared now (herd
    /// reads registers used without an `int r` declaration).
    fn target_reg(&self, ctx: &mut ThreadCtx, at: Pos, name: &str) -> Result<u8, LitmusError> {
        if let Some(r) = ctx.regs.iter().position(|r| r == name) {
            return Ok(r as u8);
        }
        check_name(self, at, name)?;
        self.new_reg(ctx, at, name)
    }

    fn statement(
        &mut self,
        ctx: &mut ThreadCtx,
        pname: &str,
        depth: usize,
        out: &mut Vec<Stmt>,
    ) -> Result<(), LitmusError> {
        let at = self.at();
        if depth > 50 {
            return self.err(at, "blocks are nested too deeply (at most 50)");
        }
        match self.peek().clone() {
            Tok::P(';') => {
                self.pos += 1;
                Ok(())
            }
            Tok::P('{') => {
                self.pos += 1;
                let b = self.block_body(ctx, pname, depth + 1)?;
                out.extend(b);
                Ok(())
            }
            Tok::P('*') => {
                // `*x = E;`: a plain store.
                self.pos += 1;
                let loc = self.deref_location(ctx, at)?;
                self.expect_p('=', "after `*x` (a plain store is `*x = V;`)")?;
                let value = self.exp(ctx, 0)?;
                self.expect_p(';', "after the statement")?;
                out.push(Stmt::Store { loc, value, order: Order::Relaxed });
                Ok(())
            }
            Tok::Ident(kw) if kw == "int" || kw == "intptr_t" => {
                self.pos += 1;
                if *self.peek() == Tok::P('*') {
                    let a = self.at();
                    return self.err(
                        a,
                        "pointer registers (`int* r`: pointer values, address dependencies through them) \
                         are not supported; registers are `int r`",
                    );
                }
                loop {
                    let (name, nat) = self.ident("a register name after `int`")?;
                    let reg = self.declare_reg(ctx, nat, &name)?;
                    if self.eat_p('=') {
                        self.rhs(ctx, reg, out)?;
                    }
                    match self.next() {
                        (Tok::P(';'), _) => return Ok(()),
                        (Tok::P(','), _) => continue,
                        (t, a) => return self.err(a, format!("expected `;` or `,` after the declaration, found {t}")),
                    }
                }
            }
            Tok::Ident(kw) if kw == "if" => {
                self.pos += 1;
                self.expect_p('(', "after `if`")?;
                let cond = self.exp(ctx, 0)?;
                self.expect_p(')', "to close the condition of `if`")?;
                let then = self.branch(ctx, pname, depth)?;
                let otherwise = if matches!(self.peek(), Tok::Ident(e) if e == "else") {
                    self.pos += 1;
                    self.branch(ctx, pname, depth)?
                } else {
                    Vec::new()
                };
                out.push(Stmt::If { cond, then, otherwise });
                Ok(())
            }
            Tok::Ident(kw)
                if ["while", "for", "do", "switch", "goto", "return", "break", "continue", "else"]
                    .contains(&kw.as_str()) =>
            {
                let what = if kw == "else" { "`else` without `if`".to_string() } else { format!("`{kw}`") };
                self.err(
                    at,
                    format!(
                        "{what} is outside what the models define: threads are loop-free code of \
                         accesses, fences, register assignments and `if`/`else`"
                    ),
                )
            }
            Tok::Ident(name) if *self.peek_at(1) == Tok::P('=') => {
                if ctx.params.iter().any(|p| p.name == name) {
                    return self.err(
                        at,
                        format!(
                            "`{name}` is a pointer to a location: assigning it is not supported; \
                             store with `*{name} = V;` or `atomic_store_explicit({name}, V, mo);`"
                        ),
                    );
                }
                let reg = self.target_reg(ctx, at, &name)?;
                self.pos += 2;
                self.rhs(ctx, reg, out)?;
                self.expect_p(';', "after the statement").map(|_| ())
            }
            Tok::Ident(name) if *self.peek_at(1) == Tok::P('(') => {
                self.pos += 1;
                let s = self.call(ctx, &name, at, None)?;
                self.expect_p(';', "after the statement")?;
                out.extend(s);
                Ok(())
            }
            Tok::Ident(name) => {
                let t = self.peek_at(1).clone();
                self.err(at, format!("expected `=` or `(` after `{name}`, found {t}; {STATEMENTS}"))
            }
            t => self.err(at, format!("unexpected {t}; {STATEMENTS}")),
        }
    }

    /// The body of an `if` or `else`: a block or one statement.
    fn branch(&mut self, ctx: &mut ThreadCtx, pname: &str, depth: usize) -> Result<Vec<Stmt>, LitmusError> {
        let mut out = Vec::new();
        if self.eat_p('{') {
            return self.block_body(ctx, pname, depth + 1);
        }
        self.statement(ctx, pname, depth + 1, &mut out)?;
        Ok(out)
    }

    /// The right-hand side of `r = ...` (without the `;`): a load, an RMW,
    /// a compare-exchange's boolean result or an expression over registers.
    fn rhs(&mut self, ctx: &mut ThreadCtx, reg: u8, out: &mut Vec<Stmt>) -> Result<(), LitmusError> {
        let at = self.at();
        match self.peek().clone() {
            Tok::Ident(f) if *self.peek_at(1) == Tok::P('(') && !ctx.regs.contains(&f) => {
                self.pos += 1;
                let s = self.call(ctx, &f, at, Some(reg))?;
                out.extend(s);
                Ok(())
            }
            Tok::P('*') => {
                self.pos += 1;
                let loc = self.deref_location(ctx, at)?;
                out.push(Stmt::Load { loc, reg: Some(reg), order: Order::Relaxed });
                Ok(())
            }
            _ => {
                let value = self.exp(ctx, 0)?;
                out.push(Stmt::Assign { reg, value });
                Ok(())
            }
        }
    }

    /// After `*`: the location parameter of a plain access.
    fn deref_location(&mut self, ctx: &ThreadCtx, at: Pos) -> Result<u8, LitmusError> {
        match self.peek().clone() {
            Tok::Ident(name) => {
                if let Some(p) = ctx.params.iter().find(|p| p.name == name) {
                    self.pos += 1;
                    Ok(p.loc)
                } else if ctx.regs.contains(&name) {
                    self.err(at, format!("`*{name}`: `{name}` is a register; addresses in registers are not supported"))
                } else {
                    self.err(at, format!("P{} uses location `{name}` that it does not declare", ctx.index))
                }
            }
            Tok::P('(') => self.err(
                at,
                "pointer arithmetic (`*(x + e)`, address dependencies) is not supported; \
                 write `*x` for a location parameter `x`",
            ),
            t => self.err(at, format!("expected a location parameter after `*`, found {t}")),
        }
    }

    /// A function call after its name: a C11 atomic operation.
    fn call(&mut self, ctx: &mut ThreadCtx, f: &str, at: Pos, dest: Option<u8>) -> Result<Vec<Stmt>, LitmusError> {
        if let Some(k) = lkmm(f) {
            return self.lkmm_call(ctx, f, k, at, dest);
        }
        self.c11_call(ctx, f, at, dest).map(|s| vec![s])
    }

    /// A location argument of a Linux-kernel primitive: `x` or `*x`
    /// (`READ_ONCE(*x)`).
    fn lkmm_location(&mut self, ctx: &ThreadCtx) -> Result<u8, LitmusError> {
        let at = self.at();
        if self.eat_p('*') {
            return self.deref_location(ctx, at);
        }
        self.location(ctx)
    }

    /// A Linux-kernel primitive mapped onto the oracle's operations (the
    /// table in docs/checker.md, "Linux-kernel primitives").
    fn lkmm_call(
        &mut self,
        ctx: &mut ThreadCtx,
        f: &str,
        k: Lkmm,
        at: Pos,
        dest: Option<u8>,
    ) -> Result<Vec<Stmt>, LitmusError> {
        self.expect_p('(', &format!("after `{f}`"))?;
        let out = match k {
            Lkmm::Load(order) => {
                let loc = self.lkmm_location(ctx)?;
                vec![Stmt::Load { loc, reg: dest, order }]
            }
            Lkmm::Store(order) => {
                self.no_result(f, at, dest)?;
                let loc = self.lkmm_location(ctx)?;
                self.expect_p(',', "after the location")?;
                let value = self.exp(ctx, 0)?;
                vec![Stmt::Store { loc, value, order }]
            }
            Lkmm::Fence(order) => {
                self.no_result(f, at, dest)?;
                vec![Stmt::Fence { order }]
            }
            Lkmm::Rmw { op, order, value_first, returns_new } => {
                let (loc, v) = if value_first {
                    // atomic_add(i, v)
                    let v = self.exp(ctx, 0)?;
                    self.expect_p(',', "after the value")?;
                    (self.lkmm_location(ctx)?, v)
                } else {
                    let loc = self.lkmm_location(ctx)?;
                    let v = match op {
                        LkmmRmw::Inc | LkmmRmw::Dec => Exp::Const(1),
                        _ => {
                            self.expect_p(',', "after the location")?;
                            self.exp(ctx, 0)?
                        }
                    };
                    (loc, v)
                };
                let (mut pre, mut post) = (Vec::new(), Vec::new());
                let (dest, rmw) = match op {
                    LkmmRmw::Cmpxchg => {
                        // cmpxchg(x, old, new): the old value goes to a register
                        // holding `old` (hidden if the result is not assigned),
                        // then a compare-exchange with that register expected.
                        self.expect_p(',', "after the expected value")?;
                        let mut new = self.exp(ctx, 0)?;
                        if let Some(r) = dest {
                            let mut read = Vec::new();
                            new.regs(&mut read);
                            if read.contains(&r) {
                                // `r = cmpxchg(x, 0, r)`: the new value is read
                                // before `r` takes the expected one.
                                let name = format!("%{}", ctx.regs.len());
                                let t = self.new_reg(ctx, at, &name)?;
                                pre.push(Stmt::Assign { reg: t, value: new });
                                new = Exp::Reg(t);
                            }
                        }
                        let reg = match dest {
                            Some(r) => r,
                            None => {
                                let name = format!("%{}", ctx.regs.len());
                                self.new_reg(ctx, at, &name)?
                            }
                        };
                        pre.push(Stmt::Assign { reg, value: v });
                        (None, RmwExp::CompareExchange { expected: reg, new, result: None })
                    }
                    _ => match (dest, self.lkmm_rmw_exp(op, v)) {
                        // atomic_add_return(i, v): the new value. The
                        // operand goes to a hidden register first (it may
                        // read the result register), the RMW returns the old
                        // value and the operand is added to it.
                        (Some(r), RmwExp::FetchAdd(delta)) if returns_new => {
                            let name = format!("%{}", ctx.regs.len());
                            let t = self.new_reg(ctx, at, &name)?;
                            pre.push(Stmt::Assign { reg: t, value: delta });
                            post.push(Stmt::Assign {
                                reg: r,
                                value: Exp::Bin(BinOp::Add, Box::new(Exp::Reg(r)), Box::new(Exp::Reg(t))),
                            });
                            (Some(r), RmwExp::FetchAdd(Exp::Reg(t)))
                        }
                        (d, e) => (d, e),
                    },
                };
                let mut out = pre;
                match order {
                    // Fully ordered: smp_mb() before and after.
                    None => out.extend([
                        Stmt::Fence { order: Order::SeqCst },
                        Stmt::Rmw { loc, reg: dest, op: rmw, order: Order::Relaxed },
                        Stmt::Fence { order: Order::SeqCst },
                    ]),
                    Some(order) => out.push(Stmt::Rmw { loc, reg: dest, op: rmw, order }),
                }
                out.extend(post);
                out
            }
        };
        self.expect_p(')', &format!("to close `{f}(...)`"))?;
        Ok(out)
    }

    /// The operation of a Linux-kernel RMW other than `cmpxchg`.
    fn lkmm_rmw_exp(&self, op: LkmmRmw, v: Exp) -> RmwExp {
        match op {
            LkmmRmw::Xchg | LkmmRmw::Cmpxchg => RmwExp::Exchange(v),
            LkmmRmw::Add | LkmmRmw::Inc => RmwExp::FetchAdd(v),
            LkmmRmw::Sub | LkmmRmw::Dec => RmwExp::FetchAdd(Exp::Un(UnOp::Neg, Box::new(v))),
        }
    }

    fn c11_call(&mut self, ctx: &mut ThreadCtx, f: &str, at: Pos, dest: Option<u8>) -> Result<Stmt, LitmusError> {
        let explicit = f.ends_with("_explicit");
        let base = f.strip_suffix("_explicit").unwrap_or(f);
        self.expect_p('(', &format!("after `{f}`"))?;
        let stmt = match base {
            "atomic_load" => {
                let loc = self.location(ctx)?;
                let order = if explicit { self.order_arg()? } else { Order::SeqCst };
                if order.is_release() && order != Order::SeqCst {
                    return self.err(
                        at,
                        format!(
                            "a load cannot be {}; loads are memory_order_relaxed, \
                             memory_order_acquire or memory_order_seq_cst",
                            order.c_name()
                        ),
                    );
                }
                Stmt::Load { loc, reg: dest, order }
            }
            "atomic_store" => {
                self.no_result(f, at, dest)?;
                let loc = self.location(ctx)?;
                self.expect_p(',', "after the location")?;
                let value = self.exp(ctx, 0)?;
                let order = if explicit { self.order_arg()? } else { Order::SeqCst };
                if order.is_acquire() && order != Order::SeqCst {
                    return self.err(
                        at,
                        format!(
                            "a store cannot be {}; stores are memory_order_relaxed, \
                             memory_order_release or memory_order_seq_cst",
                            order.c_name()
                        ),
                    );
                }
                Stmt::Store { loc, value, order }
            }
            "atomic_thread_fence" => {
                self.no_result(f, at, dest)?;
                Stmt::Fence { order: self.order()? }
            }
            "atomic_exchange" | "atomic_fetch_add" | "atomic_fetch_sub" => {
                let loc = self.location(ctx)?;
                self.expect_p(',', "after the location")?;
                let v = self.exp(ctx, 0)?;
                let order = if explicit { self.order_arg()? } else { Order::SeqCst };
                let op = match base {
                    "atomic_exchange" => RmwExp::Exchange(v),
                    "atomic_fetch_add" => RmwExp::FetchAdd(v),
                    _ => RmwExp::FetchAdd(Exp::Un(UnOp::Neg, Box::new(v))),
                };
                Stmt::Rmw { loc, reg: dest, op, order }
            }
            "atomic_compare_exchange_strong" => {
                let loc = self.location(ctx)?;
                self.expect_p(',', "after the location")?;
                self.expect_p('&', "before the expected-value register (the form is `f(x, &r, V, mo, mo)`)")?;
                let (rname, rat) = self.ident("the expected-value register")?;
                let Some(expected) = ctx.regs.iter().position(|r| *r == rname) else {
                    return self.err(
                        rat,
                        format!("`{rname}` is not a register of P{}; assign it first (`int {rname} = E;`)", ctx.index),
                    );
                };
                self.expect_p(',', "after the expected-value register")?;
                let new = self.exp(ctx, 0)?;
                let (order, fail) = if explicit {
                    let o = self.order_arg()?;
                    (o, self.order_arg()?)
                } else {
                    (Order::SeqCst, Order::SeqCst)
                };
                if fail != order.read_part() {
                    return self.err(
                        at,
                        format!(
                            "the failure order of a compare-exchange must be the read part of its \
                             success order ({} for {}); other failure orders are not supported",
                            order.read_part().c_name(),
                            order.c_name()
                        ),
                    );
                }
                Stmt::Rmw {
                    loc,
                    reg: None,
                    op: RmwExp::CompareExchange { expected: expected as u8, new, result: dest },
                    order,
                }
            }
            "atomic_compare_exchange_weak" => {
                return self.err(
                    at,
                    "weak compare-exchange (which may fail spuriously) is outside what the models \
                     define; use atomic_compare_exchange_strong_explicit",
                )
            }
            _ if outside_models(f).is_some() => {
                let what = outside_models(f).unwrap_or_default();
                return self.err(
                    at,
                    format!(
                        "`{f}` is {what}, outside what the SC, TSO and RC models define (herd7 gives it a \
                         meaning only under the Linux-kernel memory model)"
                    ),
                );
            }
            _ if f.starts_with("atomic_") => {
                return self.err(at, format!("`{f}` is not supported; {STATEMENTS}"));
            }
            _ => {
                return self.err(
                    at,
                    format!(
                        "unknown name `{f}` (not a register of P{} nor a supported function); {STATEMENTS}",
                        ctx.index
                    ),
                )
            }
        };
        self.expect_p(')', &format!("to close `{f}(...)`"))?;
        Ok(stmt)
    }

    /// `, mo` after an argument.
    fn order_arg(&mut self) -> Result<Order, LitmusError> {
        self.expect_p(',', "before the memory order")?;
        self.order()
    }

    /// An expression over registers and constants (C precedence).
    fn exp(&mut self, ctx: &ThreadCtx, depth: usize) -> Result<Exp, LitmusError> {
        self.binary(ctx, 0, depth)
    }

    fn binop(&self) -> Option<(u8, BinOp)> {
        Some(match self.peek() {
            Tok::Op2("||") => (0, BinOp::Or),
            Tok::Op2("&&") => (1, BinOp::And),
            Tok::P('|') => (2, BinOp::BitOr),
            Tok::P('^') => (3, BinOp::BitXor),
            Tok::P('&') => (4, BinOp::BitAnd),
            Tok::Op2("==") => (5, BinOp::Eq),
            Tok::Op2("!=") => (5, BinOp::Ne),
            Tok::P('<') => (6, BinOp::Lt),
            Tok::Op2("<=") => (6, BinOp::Le),
            Tok::P('>') => (6, BinOp::Gt),
            Tok::Op2(">=") => (6, BinOp::Ge),
            Tok::P('+') => (7, BinOp::Add),
            Tok::P('-') => (7, BinOp::Sub),
            Tok::P('*') => (8, BinOp::Mul),
            _ => return None,
        })
    }

    fn binary(&mut self, ctx: &ThreadCtx, min: u8, depth: usize) -> Result<Exp, LitmusError> {
        let mut lhs = self.unary_exp(ctx, depth)?;
        while let Some((level, op)) = self.binop() {
            if level < min {
                break;
            }
            self.pos += 1;
            let rhs = self.binary(ctx, level + 1, depth + 1)?;
            lhs = Exp::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary_exp(&mut self, ctx: &ThreadCtx, depth: usize) -> Result<Exp, LitmusError> {
        let at = self.at();
        if depth > 100 {
            return self.err(at, "the expression is nested too deeply");
        }
        let (t, _) = self.next();
        match t {
            Tok::Int(_) => {
                self.pos -= 1;
                Ok(Exp::Const(self.int("a value")?))
            }
            Tok::P('-') => Ok(Exp::Un(UnOp::Neg, Box::new(self.unary_exp(ctx, depth + 1)?))),
            Tok::P('!') => Ok(Exp::Un(UnOp::Not, Box::new(self.unary_exp(ctx, depth + 1)?))),
            Tok::P('~') => Ok(Exp::Un(UnOp::BitNot, Box::new(self.unary_exp(ctx, depth + 1)?))),
            Tok::P('(') => {
                let e = self.exp(ctx, depth + 1)?;
                self.expect_p(')', "to close the parenthesis")?;
                Ok(e)
            }
            Tok::Ident(name) => {
                if let Some(r) = ctx.regs.iter().position(|r| *r == name) {
                    return Ok(Exp::Reg(r as u8));
                }
                if ctx.params.iter().any(|p| p.name == name) {
                    return self.err(
                        at,
                        format!(
                            "`{name}` is a pointer to a location, not a value (pointer values are not \
                             supported); load it into a register first"
                        ),
                    );
                }
                if *self.peek() == Tok::P('(') {
                    return self.err(
                        at,
                        format!(
                            "`{name}(...)` inside an expression: a memory access is a statement of its own; \
                             assign it to a register first (`int r = {name}(...);`)"
                        ),
                    );
                }
                self.err(at, format!("`{name}` is not a register of P{} (read before it is assigned)", ctx.index))
            }
            Tok::P('*') => {
                self.err(at, "a plain load inside an expression: load into a register first (`int r = *x;`)")
            }
            Tok::P('&') => self.err(at, "`&` of a location (pointer values) is not supported"),
            t => self.err(at, format!("expected an expression over registers and constants, found {t}")),
        }
    }

    /// A location argument: one of the thread's parameters.
    fn location(&mut self, ctx: &ThreadCtx) -> Result<u8, LitmusError> {
        let at = self.at();
        match self.next().0 {
            Tok::Ident(name) => {
                if let Some(p) = ctx.params.iter().find(|p| p.name == name) {
                    if matches!(self.peek(), Tok::P('+') | Tok::P('-') | Tok::P('[')) {
                        return self.err(
                            at,
                            "pointer arithmetic and indexing (address dependencies) are not \
                             supported; pass a location parameter as is",
                        );
                    }
                    return Ok(p.loc);
                }
                if ctx.regs.contains(&name) {
                    return self.err(
                        at,
                        format!("`{name}` is a register, not a location; addresses in registers are not supported"),
                    );
                }
                self.err(
                    at,
                    format!(
                        "P{} uses location `{name}` that it does not declare; add `atomic_int* \
                         {name}` to its parameters",
                        ctx.index
                    ),
                )
            }
            Tok::P('&') => {
                self.err(at, "`&x` is not supported here: a location parameter is already a pointer, write `x`")
            }
            Tok::P('*') => self.err(at, "`*x` is not supported here: write the location parameter `x`"),
            t => self.err(at, format!("expected a location parameter, found {t}")),
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
        // herd accepts a `;` after the condition.
        self.eat_p(';');
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

    fn loc_atom(&mut self, env: &Env, name: &str, line: Pos) -> Result<Expr, LitmusError> {
        let Some(loc) = env.locations.iter().position(|l| l == name) else {
            return self.err(line, format!("unknown location `{name}` in the condition; {CONDITIONS}"));
        };
        self.expect_p('=', &format!("after `{name}` (atoms are `x=V`)"))?;
        let value = self.int("a value")?;
        Ok(Expr::LocEq { loc: loc as u8, value })
    }
}

/// What a Linux-kernel construct that no model here defines is (RCU, spin
/// locks), for its error message; `None` for other names.
fn outside_models(f: &str) -> Option<&'static str> {
    if f.contains("rcu") {
        Some("RCU (read-copy-update)")
    } else if f.starts_with("spin_") || f.starts_with("raw_spin_") {
        Some("a spin lock")
    } else {
        None
    }
}

/// A Linux-kernel read-modify-write.
#[derive(Clone, Copy)]
enum LkmmRmw {
    Xchg,
    /// `cmpxchg(x, old, new)`: returns the old value, writes `new` if it
    /// was `old`.
    Cmpxchg,
    Add,
    Sub,
    Inc,
    Dec,
}

/// A Linux-kernel primitive and the operation it maps onto.
#[derive(Clone, Copy)]
enum Lkmm {
    Load(Order),
    Store(Order),
    Fence(Order),
    /// `order: None` is fully ordered (value-returning RMWs without a
    /// suffix); `value_first` for `atomic_add(i, v)`.
    Rmw {
        op: LkmmRmw,
        order: Option<Order>,
        value_first: bool,
        /// `atomic_*_return`: the result is the new value (the
        /// `atomic_fetch_*` forms and `xchg` return the old one).
        returns_new: bool,
    },
}

/// The Linux-kernel primitives fabricsim maps (docs/checker.md).
fn lkmm(f: &str) -> Option<Lkmm> {
    use Lkmm::*;
    Some(match f {
        "READ_ONCE" | "atomic_read" => Load(Order::Relaxed),
        "smp_load_acquire" | "atomic_read_acquire" => Load(Order::Acquire),
        "WRITE_ONCE" | "atomic_set" => Store(Order::Relaxed),
        "smp_store_release" | "atomic_set_release" => Store(Order::Release),
        "smp_mb" => Fence(Order::SeqCst),
        "smp_rmb" => Fence(Order::Acquire),
        "smp_wmb" => Fence(Order::Release),
        _ => {
            let (stem, order) = if let Some(s) = f.strip_suffix("_relaxed") {
                (s, Some(Order::Relaxed))
            } else if let Some(s) = f.strip_suffix("_acquire") {
                (s, Some(Order::Acquire))
            } else if let Some(s) = f.strip_suffix("_release") {
                (s, Some(Order::Release))
            } else {
                (f, None)
            };
            let (op, returns, value_first) = match stem {
                "xchg" | "atomic_xchg" => (LkmmRmw::Xchg, true, false),
                "cmpxchg" | "atomic_cmpxchg" => (LkmmRmw::Cmpxchg, true, false),
                "atomic_add_return" | "atomic_fetch_add" => (LkmmRmw::Add, true, true),
                "atomic_sub_return" | "atomic_fetch_sub" => (LkmmRmw::Sub, true, true),
                "atomic_inc_return" | "atomic_fetch_inc" => (LkmmRmw::Inc, true, false),
                "atomic_dec_return" | "atomic_fetch_dec" => (LkmmRmw::Dec, true, false),
                // Not value-returning: unordered (relaxed).
                "atomic_add" => (LkmmRmw::Add, false, true),
                "atomic_sub" => (LkmmRmw::Sub, false, true),
                "atomic_inc" => (LkmmRmw::Inc, false, false),
                "atomic_dec" => (LkmmRmw::Dec, false, false),
                _ => return None,
            };
            if !returns && order.is_some() {
                return None;
            }
            // Unsuffixed `atomic_fetch_add(x, v)` is C11's.
            if order.is_none() && (stem == "atomic_fetch_add" || stem == "atomic_fetch_sub") {
                return None;
            }
            let returns_new = stem.ends_with("_return");
            Rmw { op, order: if returns { order } else { Some(Order::Relaxed) }, value_first, returns_new }
        }
    })
}

/// What a register holds during lowering to straight-line operations.
#[derive(Clone, Copy, PartialEq)]
enum RegState {
    /// Never written: 0.
    Init,
    /// A constant; `after_load` if a load wrote it before.
    Const(Value, bool),
    /// The result of the last operation that wrote it.
    Loaded,
}

/// The thread as a straight line of memory operations with constant
/// values (what protocols run), or `None` when it needs general code:
/// `if`/`else`, a value computed from a loaded register (a data
/// dependency), a register that ends with a computed constant, or a
/// compare-exchange's boolean result. Results that are not assigned go
/// to hidden registers (`%N`), appended to `regs`.
fn lower(stmts: &[Stmt], regs: &mut Vec<String>) -> Option<Vec<Op>> {
    let mut state = vec![RegState::Init; regs.len()];
    let mut names = regs.clone();
    let mut ops = Vec::new();
    let known = |e: &Exp, state: &[RegState]| -> Option<Value> {
        let mut rs = Vec::new();
        e.regs(&mut rs);
        let mut vals = vec![0; state.len()];
        for r in rs {
            vals[r as usize] = match state[r as usize] {
                RegState::Init => 0,
                RegState::Const(v, _) => v,
                RegState::Loaded => return None,
            };
        }
        Some(e.eval(&vals))
    };
    let hidden = |names: &mut Vec<String>, state: &mut Vec<RegState>| -> Option<u8> {
        if names.len() >= 255 {
            return None;
        }
        names.push(format!("%{}", names.len()));
        state.push(RegState::Loaded);
        Some((names.len() - 1) as u8)
    };
    for s in stmts {
        match s {
            Stmt::Load { loc, reg, order } => {
                let reg = match reg {
                    Some(r) => *r,
                    None => hidden(&mut names, &mut state)?,
                };
                state[reg as usize] = RegState::Loaded;
                ops.push(Op::Load { loc: *loc, reg, order: *order });
            }
            Stmt::Store { loc, value, order } => {
                ops.push(Op::Store { loc: *loc, value: known(value, &state)?, order: *order });
            }
            Stmt::Rmw { loc, reg, op, order } => {
                let (reg, kind) = match op {
                    RmwExp::FetchAdd(e) => (*reg, RmwKind::FetchAdd(known(e, &state)?)),
                    RmwExp::Exchange(e) => (*reg, RmwKind::Exchange(known(e, &state)?)),
                    RmwExp::CompareExchange { expected, new, result } => {
                        if result.is_some() {
                            return None;
                        }
                        let exp = known(&Exp::Reg(*expected), &state)?;
                        (Some(*expected), RmwKind::CompareExchange { expected: exp, new: known(new, &state)? })
                    }
                };
                let reg = match reg {
                    Some(r) => r,
                    None => hidden(&mut names, &mut state)?,
                };
                state[reg as usize] = RegState::Loaded;
                ops.push(Op::Rmw { loc: *loc, reg, kind, order: *order });
            }
            Stmt::Fence { order } => ops.push(Op::Fence { order: *order }),
            Stmt::Assign { reg, value } => {
                let v = known(value, &state)?;
                let after_load = match state[*reg as usize] {
                    RegState::Loaded => true,
                    RegState::Const(_, l) => l,
                    RegState::Init => false,
                };
                state[*reg as usize] = RegState::Const(v, after_load);
            }
            Stmt::If { .. } => return None,
        }
    }
    // A register must end as a straight line leaves it: loaded, or 0.
    if state.iter().any(|s| matches!(*s, RegState::Const(v, l) if v != 0 || l)) {
        return None;
    }
    *regs = names;
    Some(ops)
}

struct Env<'a> {
    locations: &'a [String],
    registers: &'a [Vec<String>],
}

const RESERVED: &[&str] =
    &["int", "atomic_int", "exists", "forall", "true", "false", "if", "else", "while", "for", "do", "return"];

fn check_name(p: &Parser, line: Pos, name: &str) -> Result<(), LitmusError> {
    if RESERVED.contains(&name) || name.starts_with("atomic_") || name.starts_with("memory_order") {
        return p.err(line, format!("`{name}` cannot be used as a name"));
    }
    Ok(())
}

/// Whether a line before the initial state is herd metadata: `Key=Value`
/// (`Cycle=`, `Relax=`, `Safe=`, `Prefetch=`, `Com=`, `Orig=`, `Generator=`, ...).
fn is_metadata(line: &str) -> bool {
    let t = line.trim_start();
    let key_len = t.chars().take_while(|&c| is_ident(c) || c == '-' || c == '.').count();
    key_len > 0 && t.chars().next().is_some_and(is_ident_start) && t[key_len..].trim_start().starts_with('=')
}

fn tokenize(text: &str, first_line: usize, file: &str) -> Result<Vec<(Tok, Pos)>, LitmusError> {
    let err = |at: Pos, message: String| LitmusError { file: file.to_string(), line: at.line, column: at.col, message };
    let mut toks = Vec::new();
    let mut line = first_line;
    let mut col = 0;
    // Brace depth: `(*` opens a comment only at depth 0.
    let mut depth = 0usize;
    let mut it = text.chars().peekable();
    // Every character read goes through `step`, which tracks the position.
    let step = |c: char, line: &mut usize, col: &mut usize| {
        if c == '\n' {
            *line += 1;
            *col = 0;
        } else {
            *col += 1;
        }
    };
    while let Some(c) = it.next() {
        step(c, &mut line, &mut col);
        let at = Pos { line, col };
        match c {
            c if c.is_whitespace() => {}
            '/' if it.peek() == Some(&'/') => {
                while let Some(&c) = it.peek() {
                    if c == '\n' {
                        break;
                    }
                    it.next();
                    step(c, &mut line, &mut col);
                }
            }
            '/' if it.peek() == Some(&'*') => {
                let mut prev = ' ';
                let mut closed = false;
                if let Some(c) = it.next() {
                    step(c, &mut line, &mut col);
                }
                for c in it.by_ref() {
                    step(c, &mut line, &mut col);
                    if prev == '*' && c == '/' {
                        closed = true;
                        break;
                    }
                    prev = c;
                }
                if !closed {
                    return Err(err(at, "unterminated `/* ... */` comment".into()));
                }
            }
            '(' if it.peek() == Some(&'*') && depth == 0 => {
                // herd's `(* ... *)` comments, which nest (as OCaml's); as in
                // herd, only outside braces: in C code `(*x)` is a dereference.
                if let Some(c) = it.next() {
                    step(c, &mut line, &mut col);
                }
                let mut nest = 1;
                let mut prev = ' ';
                for c in it.by_ref() {
                    step(c, &mut line, &mut col);
                    if prev == '(' && c == '*' {
                        nest += 1;
                        prev = ' ';
                        continue;
                    }
                    if prev == '*' && c == ')' {
                        nest -= 1;
                        if nest == 0 {
                            break;
                        }
                        prev = ' ';
                        continue;
                    }
                    prev = c;
                }
                if nest > 0 {
                    return Err(err(at, "unterminated `(* ... *)` comment".into()));
                }
            }
            '/' if it.peek() == Some(&'\\') => {
                if let Some(c) = it.next() {
                    step(c, &mut line, &mut col);
                }
                toks.push((Tok::And, at));
            }
            '\\' if it.peek() == Some(&'/') => {
                if let Some(c) = it.next() {
                    step(c, &mut line, &mut col);
                }
                toks.push((Tok::Or, at));
            }
            '"' => {
                let mut closed = false;
                for c in it.by_ref() {
                    step(c, &mut line, &mut col);
                    if c == '"' {
                        closed = true;
                        break;
                    }
                }
                if !closed {
                    return Err(err(at, "unterminated string".into()));
                }
                toks.push((Tok::Str, at));
            }
            c if c.is_ascii_digit() => {
                let mut s = String::from(c);
                while let Some(&d) = it.peek() {
                    if d.is_ascii_alphanumeric() || d == '_' {
                        s.push(d);
                        it.next();
                        step(d, &mut line, &mut col);
                    } else {
                        break;
                    }
                }
                match s.parse::<i128>() {
                    Ok(v) if v <= i64::MAX as i128 + 1 => toks.push((Tok::Int(v), at)),
                    _ => return Err(err(at, format!("bad integer `{s}`: integers are decimal and fit in 64 bits"))),
                }
            }
            c if is_ident_start(c) => {
                let mut s = String::from(c);
                while let Some(&d) = it.peek() {
                    if is_ident(d) {
                        s.push(d);
                        it.next();
                        step(d, &mut line, &mut col);
                    } else {
                        break;
                    }
                }
                toks.push((Tok::Ident(s), at));
            }
            '=' | '!' | '<' | '>' | '&' | '|' => {
                let two = match (c, it.peek()) {
                    ('=', Some('=')) => Some("=="),
                    ('!', Some('=')) => Some("!="),
                    ('<', Some('=')) => Some("<="),
                    ('>', Some('=')) => Some(">="),
                    ('&', Some('&')) => Some("&&"),
                    ('|', Some('|')) => Some("||"),
                    _ => None,
                };
                match two {
                    Some(op) => {
                        if let Some(c) = it.next() {
                            step(c, &mut line, &mut col);
                        }
                        toks.push((Tok::Op2(op), at));
                    }
                    None => toks.push((Tok::P(c), at)),
                }
            }
            '{' | '}' | '(' | ')' | '[' | ']' | ';' | ',' | '*' | ':' | '~' | '-' | '+' | '^' => {
                match c {
                    '{' => depth += 1,
                    '}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                toks.push((Tok::P(c), at))
            }
            c => {
                return Err(err(
                    at,
                    format!(
                        "unexpected character `{}`: outside herd's C litmus format as fabricsim reads it",
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
            (body("while (1) { }"), "bad.litmus:4:1: `while` is outside what the models define"),
            (body("  for (;;) { }"), "bad.litmus:4:3: `for` is outside what the models define"),
            (body("else { }"), "`else` without `if`"),
            (body("x = 1;"), "bad.litmus:4:1: `x` is a pointer to a location: assigning it is not supported"),
            (body("int r0 = x;"), "bad.litmus:4:10: `x` is a pointer to a location, not a value"),
            (body("int r0 = *x + 1;"), "bad.litmus:4:13: expected `;` or `,` after the declaration, found `+`"),
            (body("int r0 = 1 + *x;"), "bad.litmus:4:14: a plain load inside an expression"),
            // Inside braces `(*` is C, not a comment (as in herd).
            (body("int r0 = (*x);"), "bad.litmus:4:11: a plain load inside an expression"),
            (body("int r0 = 1 + atomic_load(x);"), "bad.litmus:4:14: `atomic_load(...)` inside an expression"),
            (body("int r0 = r1;"), "bad.litmus:4:10: `r1` is not a register of P0 (read before it is assigned)"),
            (body("int* r0 = x;"), "bad.litmus:4:4: pointer registers"),
            (body("int r0 = *(x + 1);"), "bad.litmus:4:10: pointer arithmetic (`*(x + e)`, address dependencies)"),
            (body("int r0 = atomic_load_explicit(x, memory_order_consume);"), "bad.litmus:4:34: memory_order_consume is not supported"),
            (body("int r0 = atomic_load_explicit(x, memory_order_bogus);"), "unknown memory order `memory_order_bogus`; supported orders"),
            (body("int r0 = atomic_load_explicit(y, memory_order_relaxed);"), "bad.litmus:4:31: P0 uses location `y` that it does not declare"),
            (body("int r0 = atomic_load_explicit(x+1, memory_order_relaxed);"), "pointer arithmetic"),
            (body("int r0 = atomic_load_explicit(&x, memory_order_relaxed);"), "`&x` is not supported"),
            (body("int r0 = atomic_load_explicit(x, memory_order_release);"), "a load cannot be memory_order_release"),
            (body("atomic_store_explicit(x, 1, memory_order_acquire);"), "a store cannot be memory_order_acquire"),
            (body("int r = atomic_fetch_or_explicit(x, 1, memory_order_relaxed);"), "bad.litmus:4:9: `atomic_fetch_or_explicit` is not supported"),
            (body("foo(x);"), "unknown name `foo`"),
            (body("int r0; int r0;"), "declared twice"),
            (body("int r0 = atomic_store_explicit(x, 1, memory_order_relaxed);"), "has no result to assign"),
            (body("atomic_compare_exchange_strong_explicit(x, &r, 1, memory_order_relaxed, memory_order_relaxed);"), "`r` is not a register of P0"),
            (body("int r = 0; atomic_compare_exchange_strong_explicit(x, &r, 1, memory_order_seq_cst, memory_order_relaxed);"), "failure order"),
            (body("int r = 0; atomic_compare_exchange_weak_explicit(x, &r, 1, memory_order_relaxed, memory_order_relaxed);"), "weak compare-exchange"),
            (body("atomic_thread_fence(memory_order_seq_cst)"), "expected `;` after the statement"),
            (body("int r0 = atomic_load_explicit(x, memory_order_relaxed)"), "bad.litmus:5:1: expected `;`"),
            (body("atomic_store_explicit(x, 99999999999999999999999, memory_order_relaxed);"), "bad integer"),
            ("C T\n{}\nP0(atomic_int* x) {\n  if (1) { int r = 1; }\n".into(), "the body of `P0` is not closed"),
            (body("int r = 1 % 2;"), "bad.litmus:4:11: unexpected character `%`"),
            ("C T\n{ [x]=0; }\nP0(long* x) { }\nexists (x=0)\n".into(), "bad.litmus:3:4: unsupported parameter type `long`"),
            ("C T\n{ [x]=0; }\nP0(atomic_int* x, atomic_int* x) { }\nexists (x=0)\n".into(), "declared twice"),
            ("C T\n{ [x]=0; }\nP1(atomic_int* x) { }\nexists (x=0)\n".into(), "expected thread `P0`"),
            ("C T\n{ [x]=0; }\nP0(atomic_int* x) { }\nP0(atomic_int* x) { }\nexists (x=0)\n".into(), "bad.litmus:4:1: expected thread `P1`"),
            ("C T\n{ [x]=0; }\nexists (x=0)\n".into(), "expected a thread"),
            ("C T\n{ [x]=0; [x]=1; }\nP0(atomic_int* x) { }\nexists (x=0)\n".into(), "initialised twice"),
            ("C T\n{ 0:r0=1; }\nP0(atomic_int* x) { }\nexists (x=0)\n".into(), "initial register values"),
            ("C T\n{ x=&y; }\nP0(atomic_int* x) { }\nexists (x=0)\n".into(), "pointer values"),
            ("C T\n{ [x=0; }\nP0(atomic_int* x) { }\nexists (x=0)\n".into(), "bad.litmus:2:5: expected `]`"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\n".into(), "missing final condition"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (1:r0=0)\n".into(), "the condition names thread 1"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (0:r0=0)\n".into(), "which P0 does not declare"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (z=0)\n".into(), "unknown location `z`"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (x=0 /\\)\n".into(), "unexpected `)` in the condition"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (x=0) junk\n".into(), "after the final condition"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (x=0);;\n".into(), "bad.litmus:4:14: unexpected `;` after the final condition"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nlocations [x;]\nexists (x=0)\n".into(), "`locations` clauses are not supported"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { }\nexists (x=0 && x=1)\n".into(), "bad.litmus:4:13: expected `)` to close the parenthesis, found `&&`"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) {\n".into(), "is not closed"),
            ("C T\n\"unterminated\n{ x=0; }\n".into(), "bad.litmus:2:1: unterminated string"),
            ("C T\n/* open\n{ x=0; }\n".into(), "unterminated `/* ... */`"),
            ("C T\n(* open (* nested *)\n{ x=0; }\n".into(), "bad.litmus:2:1: unterminated `(* ... *)`"),
            ("C T\n{ x=0; }\nP0(atomic_int* x) { int r0 = atomic_load_explicit(x, memory_order_relaxed); }\nexists (0:r0=99999999999999999999)\n".into(), "bad integer"),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter_map(|(src, want)| {
                let got = error(src);
                (!got.contains(want)).then(|| format!("for\n{src}\nwant `{want}`, got `{got}`"))
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    }

    const HERD_MP: &str = "C MP+herd
\"PodWW Rfe PodRR Fre\"
Cycle=Rfe PodRR Fre PodWW
Relax=
Safe=Rfe PodRR Fre PodWW
Prefetch=0:x=F,0:y=W,1:y=F,1:x=T
Com=Rf Fr
Orig=PodWW Rfe PodRR Fre
Generator=diy7 (version 7.51+4(dev))
{ x=0; y=0; }
P0(atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
  atomic_store_explicit(y, 1, memory_order_relaxed);
}
P1(atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_relaxed);
  int r1 = atomic_load_explicit(x, memory_order_relaxed);
}
exists (1:r0=1 /\\ 1:r1=0)
";

    fn mp_ops(p: &Program) {
        assert_eq!(p.locations, vec!["x", "y"]);
        assert_eq!(p.threads[0].len(), 2);
        assert_eq!(p.threads[1][1], Op::Load { loc: 0, reg: 1, order: Order::Relaxed });
        assert_eq!(p.condition_string(), "exists (1:r0=1 /\\ 1:r1=0)");
    }

    #[test]
    fn herd_metadata_lines_are_skipped() {
        let p = parse(HERD_MP, "m.litmus").unwrap();
        assert_eq!(p.name, "MP+herd");
        mp_ops(&p);
        // Only before the initial state: inside a thread `Cycle=...` is a statement.
        let late = HERD_MP.replace("  int r0 =", "  Relax=1;\n  int r0 =");
        assert!(parse(&late, "m.litmus").unwrap().code.is_some());
    }

    #[test]
    fn herd_comments_nest_and_keep_positions() {
        let src = HERD_MP
            .replace("{ x=0;", "(* a comment (* nested *) with { braces } and P0() *)\n{ x=0;")
            .replace("}\nP1(", "}\n(* between threads *)\nP1(")
            .replace("exists (", "(* before the condition *) exists (");
        let p = parse(&src, "c.litmus").unwrap();
        mp_ops(&p);
        // Lines and columns after a multi-line comment are right.
        let bad = "C T\n(* one\ntwo *) { x=0; }\nP0(atomic_int* x) {\n  /* c */ while (1) {}\n}\nexists (x=0)\n";
        assert_eq!(error(bad), "bad.litmus:5:11: `while` is outside what the models define: threads are loop-free code of accesses, fences, register assignments and `if`/`else`");
    }

    #[test]
    fn a_semicolon_may_end_the_condition() {
        let src = HERD_MP.replace("1:r1=0)", "1:r1=0);");
        mp_ops(&parse(&src, "s.litmus").unwrap());
    }

    #[test]
    fn registers_without_declaration_and_unassigned_results() {
        let src = "C T\n{}\nP0(atomic_int* x) {\n  r0 = atomic_load_explicit(x, memory_order_relaxed);\n  atomic_fetch_add_explicit(x, 1, memory_order_relaxed);\n  atomic_exchange(x, 3);\n  atomic_load(x);\n}\nexists (0:r0=0)\n";
        let p = parse(src, "t.litmus").unwrap();
        assert!(p.code.is_none());
        assert_eq!(p.registers, vec![vec!["r0".to_string(), "%1".into(), "%2".into(), "%3".into()]]);
        assert_eq!(
            p.threads[0],
            vec![
                Op::Load { loc: 0, reg: 0, order: Order::Relaxed },
                Op::Rmw { loc: 0, reg: 1, kind: RmwKind::FetchAdd(1), order: Order::Relaxed },
                Op::Rmw { loc: 0, reg: 2, kind: RmwKind::Exchange(3), order: Order::SeqCst },
                Op::Load { loc: 0, reg: 3, order: Order::SeqCst },
            ]
        );
        // Hidden registers are not printed.
        assert_eq!(p.initial_outcome().display(&p).to_string(), "0:r0=0; x=0;");
    }

    #[test]
    fn plain_and_volatile_locations_are_relaxed_accesses() {
        let src = "C T\n{ int x = 2; volatile int y = 3; }\nP0(int* x, volatile int* y, int *z) {\n  *x = 1;\n  int r0 = *y;\n  r1 = *z;\n}\nexists (0:r0=3)\n";
        let p = parse(src, "t.litmus").unwrap();
        assert_eq!(p.init, vec![2, 3, 0]);
        assert_eq!(
            p.threads[0],
            vec![
                Op::Store { loc: 0, value: 1, order: Order::Relaxed },
                Op::Load { loc: 1, reg: 0, order: Order::Relaxed },
                Op::Load { loc: 2, reg: 1, order: Order::Relaxed },
            ]
        );
    }

    #[test]
    fn arithmetic_dependencies_and_branches_keep_the_code() {
        use crate::programs::{BinOp, Exp, Stmt};
        let src = "C T\n{}\nP0(atomic_int* x, atomic_int* y) {\n  int r0 = atomic_load_explicit(x, memory_order_relaxed);\n  int r1 = (r0 ^ r0) + 1;\n  if (r0 == 1) { atomic_store_explicit(y, r1, memory_order_relaxed); } else *y = -r0;\n}\nexists (0:r0=0)\n";
        let p = parse(src, "t.litmus").unwrap();
        let reg = |r| Box::new(Exp::Reg(r));
        let c = |v| Box::new(Exp::Const(v));
        assert_eq!(p.threads, vec![Vec::<Op>::new()]);
        assert_eq!(
            p.code.unwrap()[0],
            vec![
                Stmt::Load { loc: 0, reg: Some(0), order: Order::Relaxed },
                Stmt::Assign {
                    reg: 1,
                    value: Exp::Bin(BinOp::Add, Box::new(Exp::Bin(BinOp::BitXor, reg(0), reg(0))), c(1))
                },
                Stmt::If {
                    cond: Exp::Bin(BinOp::Eq, reg(0), c(1)),
                    then: vec![Stmt::Store { loc: 1, value: Exp::Reg(1), order: Order::Relaxed }],
                    otherwise: vec![Stmt::Store {
                        loc: 1,
                        value: Exp::Un(crate::programs::UnOp::Neg, reg(0)),
                        order: Order::Relaxed
                    }],
                },
            ]
        );
        // Precedence: `a + b * c == d && e`.
        let src = "C T\n{}\nP0() { int a = 1 + 2 * 3 == 7 && 4 | 1 ^ 3 & 2; }\nexists (0:a=1)\n";
        let p = parse(src, "t.litmus").unwrap();
        let Stmt::Assign { value, .. } = &p.code.unwrap()[0][0] else { panic!() };
        assert_eq!(value.eval(&[]), 1);
        let src = "C T\n{}\nP0() { int a = 4 | 1 ^ 3 & 2; int b = -2 * -3 - ~0 + !5; }\nexists (0:a=1)\n";
        let p = parse(src, "t.litmus").unwrap();
        let code = p.code.unwrap();
        let v: Vec<i64> = code[0]
            .iter()
            .map(|s| match s {
                Stmt::Assign { value, .. } => value.eval(&[]),
                _ => panic!(),
            })
            .collect();
        assert_eq!(v, vec![4 | (1 ^ (3 & 2)), 6 + 1]);
        // A constant that a straight line can carry stays a straight line.
        let src = "C T\n{}\nP0(atomic_int* x) { int v = 2; atomic_store_explicit(x, v + 1, memory_order_relaxed); v = 0; }\nexists (x=3)\n";
        let p = parse(src, "t.litmus").unwrap();
        assert_eq!(p.threads[0], vec![Op::Store { loc: 0, value: 3, order: Order::Relaxed }]);
    }

    #[test]
    fn linux_kernel_primitives_map_onto_operations() {
        let src = "C LK\n{ x=0; atomic_t v = ATOMIC_INIT(7); }\nP0(int *x, atomic_t *v, intptr_t *y) {\n\
            intptr_t r0 = READ_ONCE(*x);\n  WRITE_ONCE(*x, r0 + 1);\n  r1 = smp_load_acquire(y);\n  smp_store_release(y, 2);\n\
            smp_mb(); smp_rmb(); smp_wmb();\n  r2 = xchg_relaxed(x, 3);\n  r3 = atomic_add_return_acquire(2, v);\n\
            atomic_inc(v);\n  atomic_sub(4, v);\n  r4 = atomic_read(v);\n  atomic_set_release(v, 5);\n  r5 = xchg(y, 6);\n}\n\
            exists (0:r0=0)\n";
        let p = parse(src, "lk.litmus").unwrap();
        assert_eq!(p.init, vec![0, 7, 0]);
        let code = p.code.expect("r0 + 1 is a data dependency");
        use crate::programs::{BinOp, Exp, RmwExp, Stmt};
        let (x, v, y) = (0u8, 1u8, 2u8);
        let c = Exp::Const;
        assert_eq!(
            code[0],
            vec![
                Stmt::Load { loc: x, reg: Some(0), order: Order::Relaxed },
                Stmt::Store {
                    loc: x,
                    value: Exp::Bin(BinOp::Add, Box::new(Exp::Reg(0)), Box::new(c(1))),
                    order: Order::Relaxed
                },
                Stmt::Load { loc: y, reg: Some(1), order: Order::Acquire },
                Stmt::Store { loc: y, value: c(2), order: Order::Release },
                Stmt::Fence { order: Order::SeqCst },
                Stmt::Fence { order: Order::Acquire },
                Stmt::Fence { order: Order::Release },
                Stmt::Rmw { loc: x, reg: Some(2), op: RmwExp::Exchange(c(3)), order: Order::Relaxed },
                // atomic_add_return: the new value (operand in hidden register 4).
                Stmt::Assign { reg: 4, value: c(2) },
                Stmt::Rmw { loc: v, reg: Some(3), op: RmwExp::FetchAdd(Exp::Reg(4)), order: Order::Acquire },
                Stmt::Assign { reg: 3, value: Exp::Bin(BinOp::Add, Box::new(Exp::Reg(3)), Box::new(Exp::Reg(4))) },
                Stmt::Rmw { loc: v, reg: None, op: RmwExp::FetchAdd(c(1)), order: Order::Relaxed },
                Stmt::Rmw {
                    loc: v,
                    reg: None,
                    op: RmwExp::FetchAdd(Exp::Un(UnOp::Neg, Box::new(c(4)))),
                    order: Order::Relaxed
                },
                Stmt::Load { loc: v, reg: Some(5), order: Order::Relaxed },
                Stmt::Store { loc: v, value: c(5), order: Order::Release },
                Stmt::Fence { order: Order::SeqCst },
                Stmt::Rmw { loc: y, reg: Some(6), op: RmwExp::Exchange(c(6)), order: Order::Relaxed },
                Stmt::Fence { order: Order::SeqCst },
            ]
        );
        // C11's unsuffixed atomic_fetch_add(x, v) stays C11's (location first, seq_cst).
        let src = "C T\n{}\nP0(atomic_int* x) { int r = atomic_fetch_add(x, 2); }\nexists (0:r=0)\n";
        assert_eq!(
            parse(src, "t").unwrap().threads[0][0],
            Op::Rmw { loc: 0, reg: 0, kind: RmwKind::FetchAdd(2), order: Order::SeqCst }
        );
        // cmpxchg: the old value into the result register, which first holds
        // the expected value; fully ordered without a suffix.
        let src = "C T\n{}\nP0(int* x) { int r = cmpxchg_acquire(x, 0, 2); cmpxchg(x, 2, 3); }\nexists (0:r=0)\n";
        let p = parse(src, "t").unwrap();
        assert_eq!(
            p.threads[0],
            vec![
                Op::Rmw {
                    loc: 0,
                    reg: 0,
                    kind: RmwKind::CompareExchange { expected: 0, new: 2 },
                    order: Order::Acquire
                },
                Op::Fence { order: Order::SeqCst },
                Op::Rmw {
                    loc: 0,
                    reg: 1,
                    kind: RmwKind::CompareExchange { expected: 2, new: 3 },
                    order: Order::Relaxed
                },
                Op::Fence { order: Order::SeqCst },
            ]
        );
        assert!(p.is_hidden_reg(0, 1) && !p.is_hidden_reg(0, 0));
        // The new value may read the result register: it is read first.
        let src = "C T\n{}\nP0(atomic_t* x) { int r0 = 1; r0 = atomic_cmpxchg(x, 0, r0); }\nforall (0:r0=0 /\\ x=1)\n";
        let p = parse(src, "t").unwrap();
        for m in crate::programs::Model::ALL {
            let v = crate::check::oracle::verdict(&p, m);
            assert!(v.condition_holds, "{m}: {v:?}");
        }
        // Not mapped: an error naming it.
        let src = "C T\n{}\nP0(spinlock_t *l) { spin_lock(l); }\nexists (0:r=0)\n";
        assert!(error(src).contains("bad.litmus:3:4: `spinlock_t`: spin locks are outside"), "{}", error(src));
        let e = error(&body("  rcu_read_lock();"));
        assert!(e.contains("bad.litmus:4:3: `rcu_read_lock` is RCU (read-copy-update), outside what"), "{e}");
        let e = error(&body("  int r0 = rcu_dereference(*x);"));
        assert!(e.contains("bad.litmus:4:12: `rcu_dereference` is RCU"), "{e}");
        let e = error(&body("  synchronize_rcu();"));
        assert!(e.contains("bad.litmus:4:3: `synchronize_rcu` is RCU"), "{e}");
        let e = error(&body("  spin_lock(x);"));
        assert!(e.contains("bad.litmus:4:3: `spin_lock` is a spin lock, outside what"), "{e}");
    }

    #[test]
    fn no_panics_on_truncations_and_garbage() {
        // Every prefix of a valid test is either accepted or an error.
        for src in [
            MP,
            HERD_MP,
            "C T\n(* c *)\n{}\nP0(int* x) { if (*x == 1) { r = 1 + (2 * r0); } else { *x = r; } }\nexists (0:r=1);",
        ] {
            for i in 0..src.len() {
                if src.is_char_boundary(i) {
                    let _ = parse(&src[..i], "cut.litmus");
                }
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
