//! CORD's look-up tables (§4.3): counts keyed by a core and an epoch, with
//! a fixed number of entries per core (the directory's tables are
//! statically partitioned per core). Entries are kept sorted so equal
//! tables hash alike in the checker.

use smallvec::SmallVec;

use super::messages::Num;
use crate::agents::protocol::AgentId;

/// (Debug: `text.rs`.)
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct EpochTable {
    entries: SmallVec<[(AgentId, Num, Num); 4]>,
}

/// A table had no free entry for a core: the core should have stalled.
#[derive(Debug)]
pub struct Overflow;

impl EpochTable {
    /// The count of `(pid, ep)`; 0 without an entry.
    pub fn get(&self, pid: AgentId, ep: Num) -> Num {
        self.find(pid, ep).map_or(0, |i| self.entries[i].2)
    }

    fn find(&self, pid: AgentId, ep: Num) -> Option<usize> {
        self.entries.binary_search_by_key(&(pid, ep), |e| (e.0, e.1)).ok()
    }

    /// Add one (modulo `modulus`) to `(pid, ep)`, taking an entry if it has
    /// none; at most `per_core` entries per core.
    pub fn bump(&mut self, pid: AgentId, ep: Num, modulus: u64, per_core: usize) -> Result<(), Overflow> {
        match self.entries.binary_search_by_key(&(pid, ep), |e| (e.0, e.1)) {
            Ok(i) => {
                let e = &mut self.entries[i];
                e.2 = ((e.2 as u64 + 1) % modulus) as Num;
            }
            Err(i) => {
                if self.of(pid) >= per_core {
                    return Err(Overflow);
                }
                self.entries.insert(i, (pid, ep, (1 % modulus) as Num));
            }
        }
        Ok(())
    }

    /// Free the entry of `(pid, ep)` (the epoch committed or was notified).
    pub fn free(&mut self, pid: AgentId, ep: Num) {
        if let Some(i) = self.find(pid, ep) {
            self.entries.remove(i);
        }
    }

    /// Entries held for core `pid`.
    pub fn of(&self, pid: AgentId) -> usize {
        self.entries.iter().filter(|e| e.0 == pid).count()
    }

    /// The entries, sorted by (core, epoch).
    pub fn entries(&self) -> &[(AgentId, Num, Num)] {
        &self.entries
    }

    /// Append an entry that sorts after every present one (unpacking).
    pub fn push_sorted(&mut self, pid: AgentId, ep: Num, n: Num) {
        debug_assert!(self.entries.last().is_none_or(|e| (e.0, e.1) < (pid, ep)));
        self.entries.push((pid, ep, n));
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Every entry: (core, epoch, count), sorted.
    pub fn iter(&self) -> impl Iterator<Item = (AgentId, Num, Num)> + '_ {
        self.entries.iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Rename the cores (symmetry reduction) and restore the order.
    pub fn rename(&mut self, f: impl Fn(AgentId) -> AgentId) {
        for e in self.entries.iter_mut() {
            e.0 = f(e.0);
        }
        self.entries.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_wrap_at_the_modulus_and_entries_are_bounded_per_core() {
        let mut t = EpochTable::default();
        t.bump(0, 5, 4, 2).unwrap();
        for _ in 0..4 {
            t.bump(0, 5, 4, 2).unwrap();
        }
        assert_eq!(t.get(0, 5), 1, "5 counted modulo 4");
        t.bump(0, 6, 4, 2).unwrap();
        assert!(t.bump(0, 7, 4, 2).is_err(), "a third epoch of core 0");
        t.bump(1, 7, 4, 2).unwrap();
        t.free(0, 5);
        assert_eq!((t.get(0, 5), t.of(0), t.len()), (0, 1, 2));
    }
}
