//! The event queue: a binary heap over packed (time, sequence) keys.
//!
//! Keys are one `u128` (time in the high word, a global insertion counter
//! in the low word), so ordering is a single integer comparison and ties
//! at equal times pop in insertion order. (A radix heap was tried and was
//! slower on the fabric's event mix; see docs/performance.md.)

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Time;

struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed so that std's max-heap pops the smallest key first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A priority queue of events ordered by time, ties broken by insertion
/// order (a global sequence number). The tie rule is what makes two runs of
/// the same configuration produce the same bytes: no event order ever
/// depends on hashing, pointers or the allocator.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Time,
    dispatched: u64,
    /// Key of the event popped last.
    current: u128,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::with_capacity(1024)
    }
}

impl<E> EventQueue<E> {
    pub fn with_capacity(cap: usize) -> Self {
        Self { heap: BinaryHeap::with_capacity(cap), seq: 0, now: 0, dispatched: 0, current: 0 }
    }

    /// Current simulated time: the time of the last popped event.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Number of events popped so far.
    #[inline]
    pub fn dispatched(&self) -> u64 {
        self.dispatched
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `event` at absolute time `time`. Scheduling in the past is a
    /// logic error in the caller; it is clamped to `now` in release builds.
    #[inline]
    pub fn schedule(&mut self, time: Time, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let time = time.max(self.now);
        self.seq += 1;
        self.heap.push(Entry { key: ((time as u128) << 64) | self.seq as u128, event });
    }

    /// Take the next insertion number without scheduling anything: a
    /// model that skips an event it used to schedule keeps its place in the
    /// tie order, `key(time, seq)`, to compare with `current` or to
    /// schedule with `schedule_reserved` later.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// The (time, sequence) key that orders events.
    #[inline]
    pub fn key(time: Time, seq: u64) -> u128 {
        ((time as u128) << 64) | seq as u128
    }

    /// The key of the event being handled (popped last): an event of a
    /// smaller key has already run.
    #[inline]
    pub fn current(&self) -> u128 {
        self.current
    }

    /// Schedule `event` with a key from `reserve` (at or after `now`).
    #[inline]
    pub fn schedule_reserved(&mut self, key: u128, event: E) {
        debug_assert!(key > self.current, "event scheduled in the past");
        self.heap.push(Entry { key, event });
    }

    /// Schedule `event` `delay` picoseconds from now.
    #[inline]
    pub fn schedule_in(&mut self, delay: Time, event: E) {
        self.schedule(self.now + delay, event);
    }

    /// Pop the earliest event and advance `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = self.heap.pop()?;
        self.current = e.key;
        let time = (e.key >> 64) as Time;
        self.now = time;
        self.dispatched += 1;
        Some((time, e.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::rng::Stream;

    #[test]
    fn pops_in_time_order_and_breaks_ties_by_insertion() {
        let mut q = EventQueue::with_capacity(4);
        q.schedule(30, 'c');
        q.schedule(10, 'a');
        q.schedule(30, 'd');
        q.schedule(10, 'b');
        q.schedule(20, 'x');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'x', 'c', 'd']);
        assert_eq!(q.now(), 30);
        assert_eq!(q.dispatched(), 5);
        assert!(q.is_empty());
    }

    #[test]
    fn schedule_in_is_relative_to_now() {
        let mut q = EventQueue::default();
        q.schedule(100, 1u8);
        q.pop();
        q.schedule_in(5, 2u8);
        assert_eq!(q.pop(), Some((105, 2)));
    }

    /// Against a reference (sort by time then insertion) on a random
    /// interleaving of schedules and pops.
    #[test]
    fn matches_a_sorted_reference() {
        let mut rng = Stream::new(9, 0);
        let mut q = EventQueue::default();
        let mut reference: Vec<(Time, u64, u32)> = Vec::new();
        let mut seq = 0;
        for step in 0..20_000u32 {
            if rng.below(3) > 0 || reference.is_empty() {
                let t = q.now() + rng.below(50);
                seq += 1;
                q.schedule(t, step);
                reference.push((t, seq, step));
            } else {
                reference.sort();
                let (t, _, e) = reference.remove(0);
                assert_eq!(q.pop(), Some((t, e)));
            }
        }
        reference.sort();
        for (t, _, e) in reference {
            assert_eq!(q.pop(), Some((t, e)));
        }
        assert_eq!(q.pop(), None);
    }
}
