//! Where BI's caches keep their lines: a map without capacity (checking,
//! and the `no-capacity` mutant) or a set-associative store with its
//! victim policy (timing).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use crate::agents::cache::SetAssoc;
use crate::engine::pack::{get_byte, Pack};

pub enum Lines<L> {
    Map(BTreeMap<u64, L>),
    Assoc(Box<SetAssoc<L>>),
}

impl<L: Clone> Clone for Lines<L> {
    fn clone(&self) -> Self {
        match self {
            Lines::Map(m) => Lines::Map(m.clone()),
            Lines::Assoc(a) => Lines::Assoc(a.clone()),
        }
    }
}

impl<L: Clone> Lines<L> {
    pub fn map() -> Self {
        Lines::Map(BTreeMap::new())
    }

    pub fn get(&self, line: u64) -> Option<&L> {
        match self {
            Lines::Map(m) => m.get(&line),
            Lines::Assoc(a) => a.get(line),
        }
    }

    pub fn get_mut(&mut self, line: u64) -> Option<&mut L> {
        match self {
            Lines::Map(m) => m.get_mut(&line),
            Lines::Assoc(a) => a.get_mut(line),
        }
    }

    pub fn contains(&self, line: u64) -> bool {
        self.get(line).is_some()
    }

    /// A hit: the victim policy sees the use.
    pub fn touch(&mut self, line: u64) {
        if let Lines::Assoc(a) = self {
            a.touch(line);
        }
    }

    /// The line its set would give up to make room for `line`, among those
    /// `ok` accepts (None: room without a victim, or no acceptable victim:
    /// see [`Self::full`]).
    pub fn victim_where(&self, line: u64, ok: impl Fn(u64, &L) -> bool) -> Option<u64> {
        match self {
            Lines::Map(_) => None,
            Lines::Assoc(a) => a.victim_where(line, ok),
        }
    }

    /// Whether inserting `line` needs a victim.
    pub fn full(&self, line: u64) -> bool {
        match self {
            Lines::Map(_) => false,
            Lines::Assoc(a) => a.needs_eviction(line),
        }
    }

    /// Insert (or replace) `line`, evicting by policy if its set is full;
    /// the victim is returned.
    pub fn insert(&mut self, line: u64, v: L) -> Option<(u64, L)> {
        match self {
            Lines::Map(m) => {
                m.insert(line, v);
                None
            }
            Lines::Assoc(a) => a.insert(line, v),
        }
    }

    pub fn remove(&mut self, line: u64) -> Option<L> {
        match self {
            Lines::Map(m) => m.remove(&line),
            Lines::Assoc(a) => a.remove(line),
        }
    }

    /// Every line held, in address order (tests, invariants, hashing).
    pub fn held(&self) -> Vec<(u64, L)> {
        match self {
            Lines::Map(m) => m.iter().map(|(k, v)| (*k, v.clone())).collect(),
            Lines::Assoc(a) => {
                let mut v: Vec<(u64, L)> = a.iter().map(|(k, l)| (k, l.clone())).collect();
                v.sort_by_key(|e| e.0);
                v
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            Lines::Map(m) => m.is_empty(),
            Lines::Assoc(a) => a.is_empty(),
        }
    }
}

impl<L: Clone + PartialEq> PartialEq for Lines<L> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Lines::Map(a), Lines::Map(b)) => a == b,
            _ => self.held() == other.held(),
        }
    }
}

impl<L: Clone + Eq> Eq for Lines<L> {}

impl<L: Clone + Hash> Hash for Lines<L> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            Lines::Map(m) => m.hash(h),
            // never hashed by the checker, which keeps maps
            Lines::Assoc(_) => self.held().hash(h),
        }
    }
}

impl<L: Clone + std::fmt::Debug> std::fmt::Debug for Lines<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lines::Map(m) => m.fmt(f),
            Lines::Assoc(a) => write!(f, "<{} lines>", a.len()),
        }
    }
}

/// Packed for the checker, which keeps maps.
impl<L: Clone + Pack> Pack for Lines<L> {
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            Lines::Map(m) => {
                out.push(0);
                m.pack(out);
            }
            Lines::Assoc(_) => panic!("the checker keeps BI's caches as maps; a set-associative store is not packed"),
        }
    }

    fn unpack(src: &mut &[u8]) -> Self {
        let _ = get_byte(src);
        Lines::Map(Pack::unpack(src))
    }
}
