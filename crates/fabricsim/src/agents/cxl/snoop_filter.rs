//! ESF's device-side inclusive snoop filter (§III-D): per line of the
//! device's memory that some requester caches, an entry with the owner list
//! and whether one owner holds it exclusively.
//!
//! Keys are *device-local* line indices, so "contiguous" (InvBlk) means
//! contiguous in the device's own address space.
//!
//! Victims. An entry may be chosen only if no back-invalidation is in
//! progress on it and it has owners (an entry without owners is a slot
//! reserved for the request that waited for it). Timing picks by policy:
//! FIFO, LRU, LFI, LIFO, MRU or random through the set-associative store,
//! or — with InvBlk blocks longer than one line — ESF's block-length-
//! prioritised policy: the longest run of contiguous evictable entries,
//! capped at the maximum block length, ties to the newest inserted (LIFO),
//! looking at the newest [`BLOCK_SCAN`] entries. The checker instead
//! explores every possible victim block ([`SnoopFilter::candidates`]).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use super::line_store::LineStore;
use crate::agents::cache::{CacheGeometry, VictimPolicy};
use crate::engine::pack::{get_byte, Pack};

/// The block policy examines at most this many of the newest entries (a
/// bounded search window, as a hardware selector would have).
pub const BLOCK_SCAN: usize = 64;

/// Longest InvBlk block (CXL 3.x: 2 to 4 lines; 1 is a plain BISnp).
pub const MAX_BLOCK: u8 = 4;

/// One snoop-filter entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Entry {
    /// Requesters holding (or possibly holding) the line, a bit each.
    pub owners: u64,
    /// One owner holds the line exclusively (E or M).
    pub excl: bool,
    /// Owners whose BIRsp is still awaited.
    pub wait: u64,
    /// The entry is being freed for the request on line `for_line`.
    pub evicting: bool,
    pub for_line: u64,
}

impl Entry {
    pub const EMPTY: Entry = Entry { owners: 0, excl: false, wait: 0, evicting: false, for_line: 0 };

    /// A back-invalidation is in progress on this entry.
    #[inline]
    pub fn busy(&self) -> bool {
        self.wait != 0 || self.evicting
    }

    #[inline]
    fn evictable(&self) -> bool {
        !self.busy() && self.owners != 0
    }
}

#[derive(Clone)]
pub struct SnoopFilter {
    store: LineStore<Entry>,
    /// Block policy (timing): insertion number -> line, and line -> number.
    order: Option<(BTreeMap<u64, u64>, std::collections::HashMap<u64, u64>)>,
    seq: u64,
    max_block: u8,
}

impl SnoopFilter {
    /// The checker's filter: `entries` lines, fully associative.
    pub fn small(entries: usize, max_block: u8) -> Self {
        SnoopFilter { store: LineStore::small(entries), order: None, seq: 0, max_block }
    }

    /// The timed filter. With `max_block > 1` the filter must be fully
    /// associative and uses the block-length-prioritised policy.
    pub fn timed(geom: CacheGeometry, policy: VictimPolicy, max_block: u8, seed: u64) -> Self {
        let order = (max_block > 1).then(Default::default);
        SnoopFilter { store: LineStore::assoc(geom, policy, seed), order, seq: 0, max_block }
    }

    pub fn max_block(&self) -> u8 {
        self.max_block
    }

    #[inline]
    pub fn get(&self, line: u64) -> Option<&Entry> {
        self.store.get(line)
    }

    #[inline]
    pub fn get_mut(&mut self, line: u64) -> Option<&mut Entry> {
        self.store.get_mut(line)
    }

    pub fn touch(&mut self, line: u64) {
        self.store.touch(line);
    }

    pub fn has_room(&self, line: u64) -> bool {
        self.store.has_room(line)
    }

    pub fn insert(&mut self, line: u64, e: Entry) {
        if let Some((order, index)) = &mut self.order {
            self.seq += 1;
            order.insert(self.seq, line);
            index.insert(line, self.seq);
        }
        self.store.insert(line, e);
    }

    pub fn remove(&mut self, line: u64) -> Option<Entry> {
        if let Some((order, index)) = &mut self.order {
            if let Some(s) = index.remove(&line) {
                order.remove(&s);
            }
        }
        self.store.remove(line)
    }

    pub fn iter(&self) -> impl Iterator<Item = (u64, &Entry)> + '_ {
        self.store.iter()
    }

    /// Every entry, to change in place (the checker's filter only).
    pub fn entries_mut(&mut self) -> impl Iterator<Item = &mut Entry> {
        self.store.values_mut()
    }

    pub fn len(&self) -> usize {
        self.store.len()
    }

    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    fn evictable(&self, line: u64) -> bool {
        self.store.get(line).is_some_and(|e| e.evictable())
    }

    /// The policy's victim block `(first line, length)` to make room for
    /// `line`, or None if every entry of its set is busy or reserved.
    pub fn choose(&self, line: u64) -> Option<(u64, u8)> {
        let Some((order, _)) = &self.order else {
            return self.store.victim_where(line, |_, e| e.evictable()).map(|v| (v, 1));
        };
        let max = self.max_block as u64;
        let mut best: Option<(u64, u8)> = None;
        for (_, &x) in order.iter().rev().filter(|(_, &x)| self.evictable(x)).take(BLOCK_SCAN) {
            // The capped run around x, extended downwards first.
            let mut lo = x;
            while lo > 0 && x - lo + 1 < max && self.evictable(lo - 1) {
                lo -= 1;
            }
            let mut hi = x;
            while hi - lo + 1 < max && self.evictable(hi + 1) {
                hi += 1;
            }
            let len = (hi - lo + 1) as u8;
            if best.is_none_or(|b| len > b.1) {
                best = Some((lo, len));
                if len as u64 == max {
                    break;
                }
            }
        }
        best
    }

    /// Every victim block the checker explores: each run of 1 to
    /// `max_block` contiguous evictable entries.
    pub fn candidates(&self, out: &mut Vec<(u64, u8)>) {
        for (x, e) in self.store.iter() {
            if !e.evictable() {
                continue;
            }
            let mut len = 1u8;
            loop {
                out.push((x, len));
                if len == self.max_block || !self.evictable(x + len as u64) {
                    break;
                }
                len += 1;
            }
        }
    }
}

crate::pack_struct!(Entry { owners, excl, wait, evicting, for_line });

/// Packed for the checker, whose filter is small and keeps no block order.
impl Pack for SnoopFilter {
    fn pack(&self, out: &mut Vec<u8>) {
        assert!(self.order.is_none(), "the checker's snoop filter keeps no block order");
        self.store.pack(out);
        self.seq.pack(out);
        out.push(self.max_block);
    }

    fn unpack(src: &mut &[u8]) -> Self {
        SnoopFilter { store: Pack::unpack(src), order: None, seq: Pack::unpack(src), max_block: get_byte(src) }
    }

    fn unpack_into(&mut self, src: &mut &[u8]) {
        self.store.unpack_into(src);
        self.order = None;
        self.seq = Pack::unpack(src);
        self.max_block = get_byte(src);
    }
}

impl Hash for SnoopFilter {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.store.hash(h);
    }
}

impl PartialEq for SnoopFilter {
    fn eq(&self, other: &Self) -> bool {
        self.store == other.store
    }
}

impl Eq for SnoopFilter {}

impl std::fmt::Debug for SnoopFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.store.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned() -> Entry {
        Entry { owners: 1, ..Entry::EMPTY }
    }

    fn filter(policy: VictimPolicy, max_block: u8) -> SnoopFilter {
        SnoopFilter::timed(CacheGeometry::fully_associative(4, 64).unwrap(), policy, max_block, 1)
    }

    #[test]
    fn fifo_and_lifo_pick_oldest_and_newest() {
        for (policy, want) in [(VictimPolicy::Fifo, 7), (VictimPolicy::Lifo, 1)] {
            let mut f = filter(policy, 1);
            for l in [7, 3, 9, 1] {
                f.insert(l, owned());
            }
            assert_eq!(f.choose(100), Some((want, 1)), "{policy}");
        }
    }

    #[test]
    fn busy_and_reserved_entries_are_never_victims() {
        let mut f = filter(VictimPolicy::Fifo, 1);
        f.insert(7, Entry { wait: 1, ..owned() });
        f.insert(3, Entry::EMPTY);
        f.insert(9, owned());
        f.insert(1, owned());
        assert_eq!(f.choose(100), Some((9, 1)));
    }

    #[test]
    fn block_policy_prefers_the_longest_run_then_the_newest() {
        let mut f = filter(VictimPolicy::Lifo, 2);
        // Runs: {10, 11} (older), {20} (newest), {30, 31}.
        for l in [10, 11, 30, 31] {
            f.insert(l, owned());
        }
        assert_eq!(f.choose(100), Some((30, 2)), "ties of length go to the newest");
        f.remove(31);
        f.insert(20, owned());
        assert_eq!(f.choose(100), Some((10, 2)), "a longer run beats a newer entry");
    }

    #[test]
    fn block_length_is_capped() {
        let mut f = SnoopFilter::timed(CacheGeometry::fully_associative(8, 64).unwrap(), VictimPolicy::Lifo, 3, 1);
        for l in 0..6 {
            f.insert(l, owned());
        }
        // The newest is 5: the capped run ending at it.
        assert_eq!(f.choose(100), Some((3, 3)));
    }

    #[test]
    fn checker_candidates_are_every_run() {
        let mut f = SnoopFilter::small(3, 2);
        for l in [0, 1, 2] {
            f.insert(l, owned());
        }
        let mut c = Vec::new();
        f.candidates(&mut c);
        assert_eq!(c, vec![(0, 1), (0, 2), (1, 1), (1, 2), (2, 1)]);
    }
}
