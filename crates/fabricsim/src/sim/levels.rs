//! A workload-driven core's private levels (`[protocol.core.l1]`, `.l2`;
//! docs/core.md): tags in front of the protocol's cache, inclusive in it,
//! and their counters. The protocol driver (`sim/protocol.rs`) asks where
//! a line is held, then reports what the protocol did with the access.

use crate::agents::cache::SetAssoc;
use crate::agents::core::{self as front, OpId, Queues};
use crate::engine::Time;
use crate::sim::system::CacheStats;
use crate::spec::CoreSpec;

/// Where a core's private levels hold a line (tags only; the protocol may
/// have lost it since).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Held {
    L1,
    L2,
    /// In neither: the access goes to the protocol's cache.
    Neither,
}

/// The access a level's stall was counted for last, and since when it
/// waits (None: its entries let it go).
type Waiting = Option<(OpId, Option<Time>)>;

/// The private levels: tags with a dirty bit each (whether the line was
/// written since it was filled: a level that holds no data still knows
/// what its eviction would write back).
pub(super) struct Levels {
    pub(super) l1: SetAssoc<bool>,
    pub(super) l1_latency: Time,
    pub(super) l2: Option<(SetAssoc<bool>, Time)>,
    /// The L2's miss entries (with an L2).
    pub(super) l2_mshrs: Option<front::Entries>,
    /// L1, L2, the protocol's cache.
    pub(super) stats: [CacheStats; 3],
    /// Per queue the driver issues from (window, buffers) and level (L1's
    /// fill buffers, L2's MSHRs): the access waiting for its entries.
    waiting: [[Waiting; 2]; 2],
}

impl Levels {
    pub(super) fn new(c: &CoreSpec, seed: u64) -> Option<Self> {
        let l1 = c.l1?;
        Some(Levels {
            l1: SetAssoc::new(l1.geometry, l1.policy, seed),
            l1_latency: l1.latency,
            l2: c.l2.map(|l| (SetAssoc::new(l.geometry, l.policy, seed ^ 0x12), l.latency)),
            l2_mshrs: c.l2.map(|l| front::Entries::new(l.mshrs)),
            stats: [CacheStats::default(); 3],
            waiting: [[None; 2]; 2],
        })
    }

    pub(super) fn held(&self, line: u64) -> Held {
        if self.l1.contains(line) {
            Held::L1
        } else if self.l2.as_ref().is_some_and(|(c, _)| c.contains(line)) {
            Held::L2
        } else {
            Held::Neither
        }
    }

    /// The latency of a hit in the level holding the line (None: the
    /// protocol cache's own).
    pub(super) fn hit_latency(&self, held: Held) -> Option<Time> {
        match held {
            Held::L1 => Some(self.l1_latency),
            Held::L2 => self.l2.as_ref().map(|l| l.1),
            Held::Neither => None,
        }
    }

    /// Access `id` from `queues` found, at `now`, every entry of the L1
    /// (fill buffers) and of the L2 (MSHRs) in use or not (`full`). An
    /// access counts one stall per level it waited for, however often it is
    /// offered again (the protocol may refuse it after its entries freed);
    /// its wait runs until that level lets it go.
    pub(super) fn entries(&mut self, queues: Queues, id: OpId, now: Time, full: [bool; 2]) {
        let q = usize::from(queues != Queues::Window);
        for (level, &full) in full.iter().enumerate() {
            let st = &mut self.stats[level];
            let slot = &mut self.waiting[q][level];
            // the wait of the access counted last ends (it goes, or another
            // access is offered in its place)
            if let Some((x, Some(since))) = *slot {
                if x != id || !full {
                    st.mshr_stall_ps += now - since;
                    *slot = Some((x, None));
                }
            }
            match *slot {
                Some((x, Some(_))) if x == id => {}
                Some((x, None)) if x == id && full => *slot = Some((id, Some(now))),
                _ if full => {
                    st.mshr_stalls += 1;
                    *slot = Some((id, Some(now)));
                }
                _ => {}
            }
        }
    }

    /// The protocol completed the access at once: a hit where the line was
    /// held, the levels above it filled; a store dirties the L1's copy.
    pub(super) fn hit(&mut self, line: u64, held: Held, write: bool) {
        match held {
            Held::L1 => {
                self.stats[0].hits += 1;
                self.l1.touch(line);
                if write {
                    if let Some(d) = self.l1.get_mut(line) {
                        *d = true;
                    }
                }
            }
            Held::L2 => {
                self.stats[0].capacity += 1;
                self.stats[1].hits += 1;
                if let Some((l2, _)) = &mut self.l2 {
                    l2.touch(line);
                }
                self.fill_l1(line, write);
            }
            Held::Neither => {
                self.stats[0].capacity += 1;
                if self.l2.is_some() {
                    self.stats[1].capacity += 1;
                }
                self.stats[2].hits += 1;
                self.fill(line, write);
            }
        }
    }

    /// The protocol missed: a tag still held is stale (the protocol lost
    /// the line, or holds it without the permission): a coherence miss of
    /// that level, the tag dropped (written or not: the protocol that took
    /// the line took its data). Filled at completion ([`Levels::fill`]).
    pub(super) fn miss(&mut self, line: u64, held: Held) {
        let has_l2 = self.l2.is_some();
        let (l1, l2) = match held {
            Held::L1 => (true, has_l2),
            Held::L2 => (false, true),
            Held::Neither => (false, false),
        };
        if l1 {
            self.stats[0].coherence += 1;
            self.l1.remove(line);
        } else {
            self.stats[0].capacity += 1;
        }
        if let Some((c, _)) = &mut self.l2 {
            if l2 {
                self.stats[1].coherence += 1;
                c.remove(line);
            } else {
                self.stats[1].capacity += 1;
            }
        }
        self.stats[2].capacity += 1;
    }

    /// The line's data arrived: both levels hold it, the L2's copy clean
    /// (or as it was), the L1's written by a store. An L2 victim leaves the
    /// L1 too (inclusion); its data goes back if either copy was written.
    pub(super) fn fill(&mut self, line: u64, write: bool) {
        if let Some((l2, _)) = &mut self.l2 {
            // (a line still held keeps its dirty bit: a store merged into
            // its miss filled it before the miss completed)
            let dirty = l2.get(line).copied().unwrap_or(false);
            if let Some((victim, l2_dirty)) = l2.insert(line, dirty) {
                self.stats[1].evictions += 1;
                let l1_dirty = self.l1.remove(victim);
                if let Some(d) = l1_dirty {
                    self.stats[0].evictions += 1;
                    self.stats[0].writebacks += u64::from(d);
                }
                self.stats[1].writebacks += u64::from(l2_dirty || l1_dirty == Some(true));
            }
        }
        self.fill_l1(line, write);
    }

    /// The L1 takes the line (dirty if written now or before); a written
    /// victim writes back into the L2 (which holds it: inclusion), or into
    /// the protocol's cache without one.
    fn fill_l1(&mut self, line: u64, write: bool) {
        let dirty = write || self.l1.get(line).copied().unwrap_or(false);
        if let Some((victim, d)) = self.l1.insert(line, dirty) {
            self.stats[0].evictions += 1;
            if d {
                self.stats[0].writebacks += 1;
                if let Some(v) = self.l2.as_mut().and_then(|(l2, _)| l2.get_mut(victim)) {
                    *v = true;
                }
            }
        }
    }
}
