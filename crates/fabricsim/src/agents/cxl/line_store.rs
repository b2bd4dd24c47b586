//! One interface over the lines an agent holds, in two shapes: a small
//! sorted vector when the checker explores the agent (compact, hashable,
//! every line fits), and the set-associative [`SetAssoc`] with a victim
//! policy when the timing engine runs it at full size.

use std::hash::{Hash, Hasher};

use crate::agents::cache::{CacheGeometry, SetAssoc, VictimPolicy};
use crate::engine::pack::Pack;

#[derive(Clone)]
pub enum LineStore<T> {
    /// Sorted by line; at most `cap` lines.
    Small {
        cap: usize,
        lines: Vec<(u64, T)>,
    },
    Assoc(Box<SetAssoc<T>>),
}

impl<T: Copy> LineStore<T> {
    pub fn small(cap: usize) -> Self {
        LineStore::Small { cap, lines: Vec::new() }
    }

    pub fn assoc(geom: CacheGeometry, policy: VictimPolicy, seed: u64) -> Self {
        LineStore::Assoc(Box::new(SetAssoc::new(geom, policy, seed)))
    }

    #[inline]
    pub fn get(&self, line: u64) -> Option<&T> {
        match self {
            LineStore::Small { lines, .. } => lines.binary_search_by_key(&line, |e| e.0).ok().map(|i| &lines[i].1),
            LineStore::Assoc(s) => s.get(line),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, line: u64) -> Option<&mut T> {
        match self {
            LineStore::Small { lines, .. } => match lines.binary_search_by_key(&line, |e| e.0) {
                Ok(i) => Some(&mut lines[i].1),
                Err(_) => None,
            },
            LineStore::Assoc(s) => s.get_mut(line),
        }
    }

    /// A hit, for the recency policies (timing only).
    #[inline]
    pub fn touch(&mut self, line: u64) {
        if let LineStore::Assoc(s) = self {
            s.touch(line);
        }
    }

    /// Whether `line` is resident or can be inserted without an eviction.
    pub fn has_room(&self, line: u64) -> bool {
        match self {
            LineStore::Small { cap, lines } => lines.len() < *cap || self.get(line).is_some(),
            LineStore::Assoc(s) => !s.needs_eviction(line),
        }
    }

    /// Insert a line that has room (see [`has_room`](Self::has_room)).
    pub fn insert(&mut self, line: u64, v: T) {
        match self {
            LineStore::Small { cap, lines } => match lines.binary_search_by_key(&line, |e| e.0) {
                Ok(i) => lines[i].1 = v,
                Err(i) => {
                    debug_assert!(lines.len() < *cap);
                    lines.insert(i, (line, v));
                }
            },
            LineStore::Assoc(s) => {
                let evicted = s.insert(line, v);
                debug_assert!(evicted.is_none(), "insert without room");
            }
        }
    }

    pub fn remove(&mut self, line: u64) -> Option<T> {
        match self {
            LineStore::Small { lines, .. } => {
                lines.binary_search_by_key(&line, |e| e.0).ok().map(|i| lines.remove(i).1)
            }
            LineStore::Assoc(s) => s.remove(line),
        }
    }

    /// The line the store's policy evicts to make room for `line`, among
    /// those `ok` accepts (the small store: the lowest accepted line).
    pub fn victim_where(&self, line: u64, ok: impl Fn(u64, &T) -> bool) -> Option<u64> {
        match self {
            LineStore::Small { lines, .. } => lines.iter().find(|(l, v)| ok(*l, v)).map(|e| e.0),
            LineStore::Assoc(s) => s.victim_where(line, ok),
        }
    }

    /// Resident lines (the small store in line order; the associative one
    /// set by set).
    pub fn iter(&self) -> impl Iterator<Item = (u64, &T)> + '_ {
        // one of the two is empty: no boxed iterator, as the checker's
        // invariant walks every requester's lines in every state
        let (small, assoc) = match self {
            LineStore::Small { lines, .. } => (Some(lines.iter().map(|(l, v)| (*l, v))), None),
            LineStore::Assoc(s) => (None, Some(s.iter())),
        };
        small.into_iter().flatten().chain(assoc.into_iter().flatten())
    }

    /// Every resident line's state, to change in place (the checker's
    /// small store only: renaming a state for symmetry).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        match self {
            LineStore::Small { lines, .. } => lines.iter_mut().map(|(_, v)| v),
            LineStore::Assoc(_) => unreachable!("timed stores are never renamed"),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            LineStore::Small { lines, .. } => lines.len(),
            LineStore::Assoc(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

// The checker hashes and compares small stores; a timed agent is never
// hashed, but the trait bounds of `Protocol::Agent` ask for both.
/// Packed for the checker, which keeps stores small: the capacity, then
/// the lines.
impl<T: Copy + Pack> Pack for LineStore<T> {
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            LineStore::Small { cap, lines } => {
                cap.pack(out);
                lines.pack(out);
            }
            LineStore::Assoc(_) => panic!("the checker keeps line stores small; an associative one is not packed"),
        }
    }

    fn unpack(src: &mut &[u8]) -> Self {
        LineStore::Small { cap: Pack::unpack(src), lines: Pack::unpack(src) }
    }

    fn unpack_into(&mut self, src: &mut &[u8]) {
        match self {
            LineStore::Small { cap, lines } => {
                cap.unpack_into(src);
                lines.unpack_into(src);
            }
            me => *me = LineStore::unpack(src),
        }
    }
}

impl<T: Copy + Hash> Hash for LineStore<T> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            LineStore::Small { lines, .. } => lines.hash(h),
            LineStore::Assoc(s) => {
                for (l, v) in s.iter() {
                    h.write_u64(l);
                    v.hash(h);
                }
            }
        }
    }
}

impl<T: Copy + PartialEq> PartialEq for LineStore<T> {
    fn eq(&self, other: &Self) -> bool {
        if let (LineStore::Small { lines: a, .. }, LineStore::Small { lines: b, .. }) = (self, other) {
            return a == b;
        }
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a.0 == b.0 && a.1 == b.1)
    }
}

impl<T: Copy + Eq> Eq for LineStore<T> {}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for LineStore<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_store_keeps_lines_sorted_and_bounded() {
        let mut s: LineStore<u8> = LineStore::small(2);
        s.insert(5, 1);
        s.insert(2, 2);
        assert!(!s.has_room(7));
        assert!(s.has_room(5));
        assert_eq!(s.iter().map(|e| e.0).collect::<Vec<_>>(), vec![2, 5]);
        assert_eq!(s.victim_where(7, |l, _| l > 2), Some(5));
        assert_eq!(s.remove(2), Some(2));
        assert!(s.has_room(7));
    }
}
