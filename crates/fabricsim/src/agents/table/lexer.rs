//! Tokens of a table file, each with its line and column (1-based), so
//! every later error can point at the text that caused it.

use super::TableError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    Int(i64),
    Str(String),
    /// Punctuation and operators, as written.
    Sym(&'static str),
    /// End of a logical line (newlines inside brackets and after a
    /// trailing `\` do not end one).
    Newline,
    Eof,
}

impl Tok {
    /// How an error shows the token.
    pub fn show(&self) -> String {
        match self {
            Tok::Ident(s) => format!("{s:?}"),
            Tok::Int(i) => i.to_string(),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Sym(s) => format!("`{s}`"),
            Tok::Newline => "end of line".into(),
            Tok::Eof => "end of file".into(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
}

/// Longest first, so `->` is not read as `-` then `>`.
const SYMS: &[&str] = &[
    ":=", "+=", "-=", "->", "!=", "<=", ">=", "..", "(", ")", "[", "]", "{", "}", ":", ",", ";", "=", "<", ">", "&",
    "|", "!", "+", "-", "?", "*", ".", "@",
];

pub fn lex(text: &str, file: &str) -> Result<Vec<Token>, TableError> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    for (ln, raw) in text.lines().enumerate() {
        let line = ln as u32 + 1;
        let chars: Vec<char> = raw.chars().collect();
        let mut i = 0;
        let mut continued = false;
        while i < chars.len() {
            let c = chars[i];
            let col = i as u32 + 1;
            let at = |tok| Token { tok, line, col };
            if c == '#' {
                break;
            }
            if c.is_whitespace() {
                i += 1;
                continue;
            }
            if c == '\\' && chars[i + 1..].iter().all(|c| c.is_whitespace()) {
                continued = true;
                break;
            }
            if c.is_ascii_alphabetic() || c == '_' {
                let s: String = chars[i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == '_').collect();
                i += s.len();
                out.push(at(Tok::Ident(s)));
                continue;
            }
            if c.is_ascii_digit() {
                let s: String = chars[i..].iter().take_while(|c| c.is_ascii_digit() || **c == '_').collect();
                i += s.len();
                let v = s.replace('_', "").parse::<i64>().map_err(|_| {
                    TableError::at(file, line, col, format!("{s}: a number too large; expected at most {}", i64::MAX))
                })?;
                out.push(at(Tok::Int(v)));
                continue;
            }
            if c == '"' {
                let s: String = chars[i + 1..].iter().take_while(|c| **c != '"').collect();
                if i + 1 + s.chars().count() >= chars.len() {
                    return Err(TableError::at(file, line, col, "a string without its closing `\"`".into()));
                }
                i += s.chars().count() + 2;
                out.push(at(Tok::Str(s)));
                continue;
            }
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let Some(sym) = SYMS.iter().find(|s| rest.starts_with(**s)) else {
                return Err(TableError::at(file, line, col, format!("`{c}`: not a character of the table language")));
            };
            match *sym {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                _ => {}
            }
            i += sym.len();
            out.push(at(Tok::Sym(sym)));
        }
        let ends_line = !continued && depth <= 0;
        if ends_line && out.last().is_some_and(|t| t.tok != Tok::Newline) {
            out.push(Token { tok: Tok::Newline, line, col: chars.len() as u32 + 1 });
        }
        depth = depth.max(0);
    }
    let line = text.lines().count() as u32 + 1;
    out.push(Token { tok: Tok::Newline, line, col: 1 });
    out.push(Token { tok: Tok::Eof, line, col: 1 });
    Ok(out)
}
