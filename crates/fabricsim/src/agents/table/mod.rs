//! Protocols from tables (issue 36): a coherence protocol written as one
//! table file (docs/protocol-tables.md), checked before it runs and
//! executed by one interpreter.
//!
//! The pipeline: [`lexer`] (tokens with line and column) → [`parser`]
//! (the [`ast`], names unresolved) → [`compile`] (names resolved with
//! did-you-mean, types checked, every (state, event) pair handled or
//! declared impossible, variables laid out in packed words: a [`spec::Spec`]
//! for one size) → [`interp::TableProtocol`], a [`Protocol`](crate::agents::protocol::Protocol)
//! the checker explores like any other.

pub mod ast;
pub mod compile;
pub mod interp;
pub mod lexer;
pub mod model;
pub mod murphi;
pub mod parser;
pub mod spec;

use std::fmt;

pub use compile::Sizes;
pub use interp::{Coverage, TableProtocol};

/// A table refused: where (file, line, column) and why, with what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
    /// The chosen mutant is not in the table (the `mutant` key's error).
    pub bad_mutant: bool,
    /// The size (`caches`, `addresses` ...) the table cannot take, when
    /// the refusal is of a size rather than of the file.
    pub size: Option<&'static str>,
}

impl TableError {
    pub fn at(file: &str, line: u32, col: u32, message: String) -> Self {
        TableError { file: file.to_string(), line, col, message, bad_mutant: false, size: None }
    }
    /// The same refusal, blamed on the size `key`.
    pub fn of_size(self, key: &'static str) -> Self {
        TableError { size: Some(key), ..self }
    }
    fn mutant(message: String) -> Self {
        TableError { file: String::new(), line: 0, col: 0, message, bad_mutant: true, size: None }
    }
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.bad_mutant {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.message)
        }
    }
}

impl std::error::Error for TableError {}

/// A parsed table file, ready to compile at any size.
#[derive(Debug, Clone)]
pub struct Table {
    pub file: String,
    pub ast: ast::File,
    /// Its lines (reports quote the rows).
    pub lines: Vec<String>,
}

impl Table {
    /// Parse `text`, naming `file` in errors.
    pub fn parse(text: &str, file: &str) -> Result<Table, TableError> {
        let toks = lexer::lex(text, file)?;
        let ast = parser::parse(&toks, file)?;
        Ok(Table { file: file.to_string(), ast, lines: text.lines().map(str::to_string).collect() })
    }

    pub fn load(path: &std::path::Path) -> Result<Table, TableError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| TableError::at(&file, 0, 0, format!("cannot read the table file: {e}")))?;
        Self::parse(&text, &file)
    }

    /// The mutants its `mutant NAME:` rows declare, in file order.
    pub fn mutants(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for r in self.ast.machines.iter().flat_map(|m| &m.rows) {
            if let Some(n) = &r.mutant {
                if !v.contains(&n.text) {
                    v.push(n.text.clone());
                }
            }
        }
        v
    }

    /// The protocol at `sizes`, with `mutant`'s rows in place of the rows they replace.
    pub fn protocol(&self, sizes: Sizes, mutant: Option<&str>, symmetry: bool) -> Result<TableProtocol, TableError> {
        let spec = compile::compile(&self.ast, &self.file, sizes, mutant)?;
        let size = format!("{}c{}d", sizes.caches, sizes.values);
        Ok(TableProtocol::new(spec, symmetry, size))
    }
}
