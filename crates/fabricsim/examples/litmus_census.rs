//! How many C litmus files of a corpus fabricsim reads, and why the others
//! fail: `cargo run --release -p fabricsim --example litmus_census -- DIR...`.
//!
//! Every `*.litmus` file under the directories (recursively) whose first
//! non-blank line starts with `C` is a C litmus test. Failures are grouped
//! by their message with register names and numbers blanked (`_`, `N`);
//! output is sorted, so the same corpus gives the same bytes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().and_then(|e| e.to_str()) == Some("litmus") {
            out.push(p);
        }
    }
}

/// The message without its variable parts: a backquoted text with a digit
/// or over 24 characters becomes `_`, a number `N`.
fn reason(message: &str) -> String {
    let head = message.split("; supported").next().unwrap_or(message);
    let mut out = String::new();
    for (i, part) in head.split('`').enumerate() {
        if i % 2 == 1 {
            let keep = part.len() <= 24 && !part.chars().any(|c| c.is_ascii_digit());
            out.push('`');
            out.push_str(if keep { part } else { "_" });
            out.push('`');
            continue;
        }
        for c in part.chars() {
            if c.is_ascii_digit() {
                if !out.ends_with('N') {
                    out.push('N');
                }
            } else {
                out.push(c);
            }
        }
    }
    out
}

fn main() {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    if dirs.is_empty() {
        eprintln!("usage: litmus_census DIR...");
        std::process::exit(2);
    }
    let mut files = Vec::new();
    for d in &dirs {
        walk(Path::new(d), &mut files);
    }
    files.sort();
    let (mut total, mut ok, mut general) = (0, 0, 0);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for f in &files {
        let Ok(bytes) = std::fs::read(f) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if first.split_whitespace().next() != Some("C") {
            continue;
        }
        total += 1;
        match fabricsim::programs::litmus::parse(&text, &f.display().to_string()) {
            Ok(p) => {
                ok += 1;
                general += p.code.is_some() as usize;
            }
            Err(e) => *reasons.entry(reason(&e.message)).or_default() += 1,
        }
    }
    println!("C litmus files: {total}");
    println!("parsed: {ok} ({general} with general code: arithmetic, dependencies or branches)");
    println!("failed: {}", total - ok);
    let mut by: Vec<(usize, String)> = reasons.into_iter().map(|(r, n)| (n, r)).collect();
    by.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (n, r) in by {
        println!("{n:6}  {r}");
    }
}
