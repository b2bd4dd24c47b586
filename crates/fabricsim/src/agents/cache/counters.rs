//! What a protocol's cache counts in a timed run, and a wrapper that keeps
//! such counters out of the checker's states.

use std::hash::{Hash, Hasher};

use crate::engine::pack::Pack;

/// A protocol's own cache (the last private level a protocol models) over
/// a timed run: summary.json `caches`, the `protocol` rows (docs/core.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheCounters {
    /// Accesses served without a new request (a store merged into the miss
    /// in flight to its line included: it sends none).
    pub hits: u64,
    /// Accesses that sent a request (an upgrade of a read-only copy included).
    pub misses: u64,
    /// Valid lines given up to make room, or by the core's own choice (a
    /// random driver's evictions); not the ones coherence took.
    pub evictions: u64,
    /// Of those, the dirty ones (Modified), whose data went back.
    pub writebacks: u64,
}

/// Counters an agent keeps beside its state: equal to any other, hashed as
/// nothing and packed as nothing, so that the checker, which compares,
/// hashes and packs states, never sees them (a state reached twice with
/// different counts is one state).
#[derive(Debug, Clone, Copy, Default)]
pub struct Beside<T>(pub T);

impl<T> PartialEq for Beside<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> Eq for Beside<T> {}

impl<T> Hash for Beside<T> {
    #[inline]
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

impl<T: Default> Pack for Beside<T> {
    #[inline]
    fn pack(&self, _: &mut Vec<u8>) {}

    #[inline]
    fn unpack(_: &mut &[u8]) -> Self {
        Beside(T::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    #[test]
    fn counters_beside_a_state_leave_it_as_it_was() {
        let hash = |x: &(u8, Beside<CacheCounters>)| {
            let mut h = DefaultHasher::new();
            x.hash(&mut h);
            h.finish()
        };
        let a = (7u8, Beside(CacheCounters::default()));
        let b = (7u8, Beside(CacheCounters { hits: 3, misses: 1, evictions: 1, writebacks: 1 }));
        assert_eq!(a, b);
        assert_eq!(hash(&a), hash(&b));
        let mut out = Vec::new();
        b.1.pack(&mut out);
        assert!(out.is_empty());
    }
}
