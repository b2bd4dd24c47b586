//! Pieces of a counterexample's state text that every protocol writes the
//! same way: a bit set of agents as a set of names, a memory's values, and
//! per-line states.

use std::collections::BTreeMap;
use std::fmt::{Debug, Display};

/// `{req0, req2}` for the bits 0 and 2 of `bits` with `prefix` "req".
pub fn set_of(bits: u64, prefix: &str) -> String {
    let names: Vec<String> = (0..64).filter(|i| bits >> i & 1 == 1).map(|i| format!("{prefix}{i}")).collect();
    format!("{{{}}}", names.join(", "))
}

/// A memory's values (`line 0=1, line 3=2`), or "every line 0" when it
/// holds none (every line at its initial value).
pub fn memory<K: Display, V: Display>(m: &BTreeMap<K, V>) -> String {
    if m.is_empty() {
        return "every line 0".to_string();
    }
    let l: Vec<String> = m.iter().map(|(line, v)| format!("line {line}={v}")).collect();
    l.join(", ")
}

/// Each line's state (`line 0: ...; line 1: ...`), or `empty` when no
/// line is held.
pub fn lines<K: Display, V: Debug>(m: &BTreeMap<K, V>, empty: &str) -> String {
    if m.is_empty() {
        return empty.to_string();
    }
    let l: Vec<String> = m.iter().map(|(line, v)| format!("line {line}: {v:?}")).collect();
    l.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_memories_and_lines_read_as_words() {
        assert_eq!((set_of(0b101, "req"), set_of(0, "req")), ("{req0, req2}".to_string(), "{}".to_string()));
        let m: BTreeMap<u32, u64> = [(0, 1), (3, 2)].into();
        assert_eq!(memory(&m), "line 0=1, line 3=2");
        assert_eq!(memory(&BTreeMap::<u32, u64>::new()), "every line 0");
        assert_eq!(lines(&m, "every line I"), "line 0: 1; line 3: 2");
        assert_eq!(lines(&BTreeMap::<u32, u64>::new(), "every line I"), "every line I");
    }
}
