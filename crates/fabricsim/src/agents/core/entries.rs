//! Miss-handling entries (a level's fill buffers or MSHRs) and their one
//! rule: an access that misses the level holds an entry from its issue
//! until its data arrives. When that arrival is known at issue (a hit in a
//! lower level, accounted without an event) the entry frees itself then;
//! otherwise (outstanding) it is held until [`Entries::release`].

use crate::engine::Time;

/// A level's miss entries: at most `limit` held at once.
#[derive(Debug, Clone)]
pub struct Entries {
    limit: u32,
    /// Held by outstanding accesses, until `release`.
    open: u32,
    /// Held until these times (accesses whose data arrives then).
    until: Vec<Time>,
}

/// Timed entries preallocated (more grow the vector once, for large limits).
const PREALLOCATED: u32 = 64;

impl Entries {
    pub fn new(limit: u32) -> Self {
        Entries { limit, open: 0, until: Vec::with_capacity(limit.min(PREALLOCATED) as usize) }
    }

    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Entries held by outstanding accesses.
    pub fn open(&self) -> u32 {
        self.open
    }

    /// Entries in use at `now`.
    pub fn in_use(&self, now: Time) -> u32 {
        self.open + self.until.iter().filter(|&&t| t > now).count() as u32
    }

    /// Whether an access missing the level at `now` finds a free entry.
    pub fn free(&self, now: Time) -> bool {
        self.in_use(now) < self.limit
    }

    /// When the next timed entry frees (None: only completions free one).
    pub fn frees_at(&self, now: Time) -> Option<Time> {
        self.until.iter().copied().filter(|&t| t > now).min()
    }

    /// An outstanding access takes an entry (the caller checked
    /// [`Entries::free`], or accepts going past the limit).
    pub fn hold(&mut self) {
        self.open += 1;
    }

    /// An access issued at `now` whose data arrives at `until` takes an entry until then.
    pub fn hold_until(&mut self, now: Time, until: Time) {
        if until > now {
            self.until.retain(|&t| t > now);
            self.until.push(until);
        }
    }

    /// An outstanding access's data arrived.
    pub fn release(&mut self) {
        debug_assert!(self.open > 0, "a release without a hold");
        self.open = self.open.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timed_and_outstanding_entries_share_the_limit() {
        let mut e = Entries::new(2);
        assert!(e.free(0));
        e.hold_until(0, 10);
        e.hold();
        assert!(!e.free(0));
        assert!(!e.free(9));
        assert_eq!(e.frees_at(0), Some(10));
        // the timed one frees at its time, the outstanding one at its release
        assert!(e.free(10));
        e.hold_until(10, 20);
        assert!(!e.free(15));
        e.release();
        assert!(e.free(15));
        assert_eq!(e.in_use(15), 1);
        assert_eq!(e.in_use(20), 0);
        // a zero-length hold holds nothing
        e.hold_until(30, 30);
        assert_eq!(e.in_use(30), 0);
    }
}
