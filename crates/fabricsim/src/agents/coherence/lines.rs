//! Where a cache and a directory keep their lines, sized by parameters.
//!
//! One interface, two representations, so the same protocol code holds 2
//! lines when checked and 100 000 when timed:
//! - *dense*: every location, inline for up to four (a checked state is
//!   cloned per transition, and this clone does not allocate);
//! - *associative* (caches in the timing engine): a set-associative store
//!   with a victim policy ([`crate::agents::cache::SetAssoc`]); a line not
//!   in it is Invalid, and an evicted line waits beside it in its transient
//!   state until the directory's `PutAck`.

use std::hash::{Hash, Hasher};

use smallvec::SmallVec;

use super::directory::{CState, DirLine, Line};
use crate::agents::cache::{CacheCounters, SetAssoc};
use crate::engine::pack::Pack;

/// A line address (the line's index in the address space).
pub type Loc = u32;

pub enum CacheLines {
    Dense(SmallVec<[Line; 4]>),
    Assoc(Box<Assoc>),
}

#[derive(Clone)]
pub struct Assoc {
    pub store: SetAssoc<Line>,
    /// Lines evicted and waiting for their `PutAck` (SI_A, MI_A, II_A).
    pub evicting: Vec<(Loc, Line)>,
    /// The timed run's counters (here, where only the timing engine looks).
    pub counters: CacheCounters,
}

/// A line its set may give up: valid and with no transaction in flight.
fn evictable(_: u64, l: &Line) -> bool {
    l.st.stable() && l.st != CState::I
}

impl CacheLines {
    pub fn dense(locs: usize) -> Self {
        CacheLines::Dense(SmallVec::from_elem(Line::default(), locs))
    }

    pub fn assoc(store: SetAssoc<Line>) -> Self {
        CacheLines::Assoc(Box::new(Assoc { store, evicting: Vec::new(), counters: CacheCounters::default() }))
    }

    /// The line's state (Invalid if the cache does not hold it).
    #[inline]
    pub fn get(&self, loc: Loc) -> Line {
        match self {
            CacheLines::Dense(v) => v[loc as usize],
            CacheLines::Assoc(a) => a
                .store
                .get(loc as u64)
                .copied()
                .or_else(|| a.evicting.iter().find(|e| e.0 == loc).map(|e| e.1))
                .unwrap_or_default(),
        }
    }

    /// A line the cache holds (valid, transient, or being evicted).
    #[inline]
    pub fn get_mut(&mut self, loc: Loc) -> Option<&mut Line> {
        match self {
            CacheLines::Dense(v) => v.get_mut(loc as usize),
            CacheLines::Assoc(a) => {
                if a.store.contains(loc as u64) {
                    a.store.get_mut(loc as u64)
                } else {
                    a.evicting.iter_mut().find(|e| e.0 == loc).map(|e| &mut e.1)
                }
            }
        }
    }

    /// Whether a miss on `loc` may start now: the line is not being
    /// evicted, and it is held, or its set has a free way or a stable victim.
    pub fn can_allocate(&self, loc: Loc) -> bool {
        match self {
            CacheLines::Dense(_) => true,
            CacheLines::Assoc(a) => {
                !a.evicting.iter().any(|e| e.0 == loc)
                    && (!a.store.needs_eviction(loc as u64) || a.store.victim_where(loc as u64, evictable).is_some())
            }
        }
    }

    /// Make room for `loc`: the stable line its set must give up, removed
    /// from the store (the caller writes it back and calls [`Self::evicting`]).
    pub fn make_room(&mut self, loc: Loc) -> Option<(Loc, Line)> {
        let CacheLines::Assoc(a) = self else { return None };
        if !a.store.needs_eviction(loc as u64) {
            return None;
        }
        let (v, line) = a.store.evict_where(loc as u64, evictable)?;
        Some((v as Loc, line))
    }

    /// A written-back line waits for its `PutAck` in `line`'s transient state.
    pub fn evicting(&mut self, loc: Loc, line: Line) {
        if let CacheLines::Assoc(a) = self {
            a.evicting.push((loc, line));
        }
    }

    /// The line, allocated Invalid if absent (after [`Self::make_room`]).
    #[inline]
    pub fn entry(&mut self, loc: Loc) -> &mut Line {
        match self {
            CacheLines::Dense(v) => &mut v[loc as usize],
            CacheLines::Assoc(a) => {
                if let Some(i) = a.evicting.iter().position(|e| e.0 == loc) {
                    return &mut a.evicting[i].1;
                }
                a.store.entry_touch(loc as u64, Line::default())
            }
        }
    }

    /// The counters of a timed (associative) cache, to count on; a checked
    /// (dense) one has none: its state is all the checker sees.
    #[inline]
    pub fn count(&mut self, f: impl FnOnce(&mut CacheCounters)) {
        if let CacheLines::Assoc(a) = self {
            f(&mut a.counters);
        }
    }

    pub fn counters(&self) -> Option<CacheCounters> {
        match self {
            CacheLines::Dense(_) => None,
            CacheLines::Assoc(a) => Some(a.counters),
        }
    }

    /// A hit: the victim policy sees the use.
    #[inline]
    pub fn touch(&mut self, loc: Loc) {
        if let CacheLines::Assoc(a) = self {
            a.store.touch(loc as u64);
        }
    }

    /// The line became Invalid: an associative cache frees its way (or its write-back slot).
    pub fn release(&mut self, loc: Loc) {
        if let CacheLines::Assoc(a) = self {
            if let Some(i) = a.evicting.iter().position(|e| e.0 == loc) {
                a.evicting.swap_remove(i);
            } else if a.store.get(loc as u64).is_some_and(|l| l.st == CState::I) {
                a.store.remove(loc as u64);
            }
        }
    }

    /// Every line held that is not Invalid, as (location, line).
    pub fn held(&self) -> Vec<(Loc, Line)> {
        match self {
            CacheLines::Dense(v) => {
                v.iter().enumerate().filter(|(_, l)| **l != Line::default()).map(|(i, l)| (i as Loc, *l)).collect()
            }
            CacheLines::Assoc(a) => {
                let mut out: Vec<(Loc, Line)> =
                    a.store.iter().map(|(k, l)| (k as Loc, *l)).chain(a.evicting.iter().copied()).collect();
                out.retain(|(_, l)| *l != Line::default());
                out.sort_by_key(|e| e.0);
                out
            }
        }
    }

    pub fn any_transient(&self) -> bool {
        match self {
            CacheLines::Dense(v) => v.iter().any(|l| !l.st.stable()),
            CacheLines::Assoc(a) => !a.evicting.is_empty() || a.store.iter().any(|(_, l)| !l.st.stable()),
        }
    }
}

// By hand: `SmallVec`'s derived clone copies element by element; a checked
// state is cloned for every transition, so copy the slice at once.
impl Clone for CacheLines {
    #[inline]
    fn clone(&self) -> Self {
        match self {
            CacheLines::Dense(v) => CacheLines::Dense(SmallVec::from_slice(v)),
            CacheLines::Assoc(a) => CacheLines::Assoc(a.clone()),
        }
    }

    #[inline]
    fn clone_from(&mut self, other: &Self) {
        match (self, other) {
            (CacheLines::Dense(a), CacheLines::Dense(b)) if a.len() == b.len() => a.copy_from_slice(b),
            (me, other) => *me = other.clone(),
        }
    }
}

impl PartialEq for CacheLines {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (CacheLines::Dense(a), CacheLines::Dense(b)) => a == b,
            _ => self.held() == other.held(),
        }
    }
}

impl Eq for CacheLines {}

impl Hash for CacheLines {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            CacheLines::Dense(v) => v.hash(h),
            // never hashed by the checker, which keeps caches dense
            CacheLines::Assoc(_) => self.held().hash(h),
        }
    }
}

/// Packed for the checker, which keeps caches dense.
impl Pack for CacheLines {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            CacheLines::Dense(v) => v.pack(out),
            CacheLines::Assoc(_) => panic!("the checker keeps caches dense; an associative cache is not packed"),
        }
    }

    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        CacheLines::Dense(Pack::unpack(src))
    }

    #[inline]
    fn unpack_into(&mut self, src: &mut &[u8]) {
        match self {
            CacheLines::Dense(v) => v.unpack_into(src),
            me => *me = CacheLines::unpack(src),
        }
    }
}

/// A directory's lines: the locations it is home for, densely (location
/// `loc` of `dirs` directories at index `loc / dirs`).
pub type DirLines = SmallVec<[DirLine; 4]>;
