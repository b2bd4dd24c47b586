//! The event queue: a calendar (bucket wheel) over packed (time, sequence)
//! keys.
//!
//! Keys are one `u128` (time in the high word, a global insertion counter
//! in the low word), so ordering is a single integer comparison and ties
//! at equal times pop in insertion order.
//!
//! Why a wheel: a loaded system pops tens of events per simulated
//! nanosecond, almost all scheduled a few nanoseconds ahead, and a binary
//! heap paid a dozen levels of sift-down per pop. Here time is cut into
//! slots of `SLOT` ps; the `BUCKETS` slots after the current one each hold
//! their events unsorted, and only the current slot's few events are
//! sorted (when it becomes current). Events beyond the wheel's horizon
//! wait in a binary heap and move onto the wheel as it turns. The pop
//! order is exactly the keys' order, as with a heap. (A radix heap was
//! tried before and was slower on the fabric's event mix; see
//! docs/performance.md.)

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Time;

/// log2 of a slot's width in ps (64 ps: a few events per slot under load;
/// 32 to 256 ps were within 1 % of each other on mesi_64core).
const SLOT_SHIFT: u32 = 6;
/// Slots on the wheel (a power of two): a horizon of 33 ns, past the
/// delays of a hop, a cache and a directory. A longer wheel took fewer
/// instructions but more cache misses than it saved: its slots' vectors
/// (4096 slots: about a megabyte) fell out of the L2 cache between turns.
const BUCKETS: u64 = 512;
const MASK: u64 = BUCKETS - 1;

#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

#[inline]
fn slot_of(key: u128) -> u64 {
    ((key >> 64) as u64) >> SLOT_SHIFT
}

/// For the far heap (std's max-heap): reversed, so the smallest key pops first.
struct Far<E>(Entry<E>);

impl<E> PartialEq for Far<E> {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}
impl<E> Eq for Far<E> {}
impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Far<E> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.key.cmp(&self.0.key)
    }
}

/// A priority queue of events ordered by time, ties broken by insertion
/// order (a global sequence number). The tie rule is what makes two runs of
/// the same configuration produce the same bytes: no event order ever
/// depends on hashing, pointers or the allocator.
pub struct EventQueue<E> {
    /// The current slot's events, sorted by key; `cur[pos..]` are pending.
    cur: Vec<Entry<E>>,
    pos: usize,
    /// The current slot (every pending event is in it or later).
    cur_slot: u64,
    /// Slot `s` in (cur_slot, cur_slot + BUCKETS) at `s & MASK`, unsorted.
    buckets: Vec<Vec<Entry<E>>>,
    /// Bit per bucket: not empty.
    bits: Vec<u64>,
    /// Events at or beyond the horizon, cur_slot + BUCKETS.
    far: BinaryHeap<Far<E>>,
    len: usize,
    seq: u64,
    now: Time,
    dispatched: u64,
    /// Key of the event popped last.
    current: u128,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::with_capacity(1024)
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn with_capacity(cap: usize) -> Self {
        Self {
            cur: Vec::with_capacity(64),
            pos: 0,
            cur_slot: 0,
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            bits: vec![0; (BUCKETS / 64) as usize],
            far: BinaryHeap::with_capacity(cap.min(1024)),
            len: 0,
            seq: 0,
            now: 0,
            dispatched: 0,
            current: 0,
        }
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
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Schedule `event` at absolute time `time`. Scheduling in the past is a
    /// logic error in the caller; it is clamped to `now` in release builds.
    #[inline]
    pub fn schedule(&mut self, time: Time, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let time = time.max(self.now);
        self.seq += 1;
        self.push(Entry { key: ((time as u128) << 64) | self.seq as u128, event });
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
        self.push(Entry { key, event });
    }

    /// Schedule `event` `delay` picoseconds from now.
    #[inline]
    pub fn schedule_in(&mut self, delay: Time, event: E) {
        self.schedule(self.now + delay, event);
    }

    #[inline(always)]
    fn push(&mut self, e: Entry<E>) {
        self.len += 1;
        // Slots after the current one, on the wheel: the common case.
        let d = slot_of(e.key).wrapping_sub(self.cur_slot).wrapping_sub(1);
        if d < BUCKETS - 1 {
            let b = ((self.cur_slot + 1 + d) & MASK) as usize;
            self.buckets[b].push(e);
            self.bits[b / 64] |= 1 << (b % 64);
        } else {
            self.push_other(e);
        }
    }

    /// Into the current slot (sorted) or beyond the wheel (the far heap).
    #[inline(never)]
    fn push_other(&mut self, e: Entry<E>) {
        let s = slot_of(e.key);
        if s != self.cur_slot {
            self.far.push(Far(e));
        } else if self.len == 1 {
            // The queue was empty: this slot starts afresh.
            self.cur.clear();
            self.pos = 0;
            self.cur.push(e);
        } else {
            self.insert_current(e);
        }
    }

    /// Into the current slot's sorted pending events (mostly at the end:
    /// keys grow with time and insertion order).
    #[inline]
    fn insert_current(&mut self, e: Entry<E>) {
        let n = self.cur.len();
        if n == self.pos || self.cur[n - 1].key < e.key {
            self.cur.push(e);
            return;
        }
        let at = self.pos + self.cur[self.pos..].partition_point(|x| x.key < e.key);
        self.cur.insert(at, e);
    }

    /// Pop the earliest event and advance `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.pos == self.cur.len() {
            if self.len == 0 {
                return None;
            }
            self.turn();
        }
        let e = self.cur[self.pos];
        self.pos += 1;
        self.len -= 1;
        self.current = e.key;
        let time = (e.key >> 64) as Time;
        self.now = time;
        self.dispatched += 1;
        Some((time, e.event))
    }

    /// The current slot is spent and events remain: make the next
    /// non-empty slot current, bring the far events now within the
    /// horizon onto the wheel, and sort the new slot.
    #[cold]
    #[inline(never)]
    fn turn(&mut self) {
        self.cur.clear();
        self.pos = 0;
        let next = match self.next_bucket() {
            Some(s) => s,
            None => slot_of(self.far.peek().expect("events remain").0.key),
        };
        self.cur_slot = next;
        let b = (next & MASK) as usize;
        std::mem::swap(&mut self.cur, &mut self.buckets[b]);
        self.bits[b / 64] &= !(1 << (b % 64));
        while let Some(f) = self.far.peek() {
            let s = slot_of(f.0.key);
            if s - next >= BUCKETS {
                break;
            }
            let e = self.far.pop().expect("peeked").0;
            if s == next {
                self.cur.push(e);
            } else {
                let b = (s & MASK) as usize;
                self.buckets[b].push(e);
                self.bits[b / 64] |= 1 << (b % 64);
            }
        }
        if self.cur.len() > 1 {
            self.cur.sort_unstable_by_key(|e| e.key);
        }
    }

    /// The first non-empty slot after the current one on the wheel.
    #[inline]
    fn next_bucket(&self) -> Option<u64> {
        let start = (self.cur_slot + 1) & MASK;
        let words = self.bits.len();
        let w0 = (start / 64) as usize;
        // The first word from the start bit on, then the others in turn,
        // then the first word's bits below the start.
        let first = self.bits[w0] & (!0u64 << (start % 64));
        let found = if first != 0 {
            Some(w0 * 64 + first.trailing_zeros() as usize)
        } else {
            (1..=words).find_map(|i| {
                let w = (w0 + i) % words;
                let mut bits = self.bits[w];
                if i == words {
                    bits &= !(!0u64 << (start % 64));
                }
                (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
            })
        }?;
        Some(self.cur_slot + 1 + ((found as u64).wrapping_sub(start) & MASK))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

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

    /// Against a reference (sort by key) on a random interleaving of
    /// schedules, reserved schedules and pops, with delays from within one
    /// slot to far beyond the wheel's horizon.
    #[test]
    fn matches_a_sorted_reference() {
        for (seed, spread) in [(9, 50), (10, 3_000), (11, 2_000_000), (12, 1 << 40)] {
            let mut rng = Stream::new(seed, 0);
            let mut q = EventQueue::default();
            let mut reference: Vec<(u128, u32)> = Vec::new();
            for step in 0..20_000u32 {
                if rng.below(3) > 0 || reference.is_empty() {
                    // Mostly near, sometimes far.
                    let d = if rng.below(8) == 0 { rng.below(spread) } else { rng.below(600) };
                    let t = q.now() + d;
                    let key = if rng.below(4) == 0 {
                        let k = EventQueue::<u32>::key(t, q.reserve());
                        q.schedule_reserved(k, step);
                        k
                    } else {
                        q.schedule(t, step);
                        EventQueue::<u32>::key(t, q.seq)
                    };
                    reference.push((key, step));
                } else {
                    reference.sort();
                    let (k, e) = reference.remove(0);
                    assert_eq!(q.pop(), Some(((k >> 64) as Time, e)));
                    assert_eq!(q.current(), k);
                }
                assert_eq!(q.len(), reference.len());
            }
            reference.sort();
            for (k, e) in reference {
                assert_eq!(q.pop(), Some(((k >> 64) as Time, e)));
            }
            assert_eq!(q.pop(), None);
        }
    }

    /// A key reserved earlier, scheduled later into the current slot,
    /// still pops before the events inserted after its reservation.
    #[test]
    fn a_reserved_key_keeps_its_place() {
        let mut q = EventQueue::default();
        q.schedule(0, 0u8);
        q.pop();
        let k = EventQueue::<u8>::key(10, q.reserve());
        q.schedule(10, 2);
        q.schedule(10, 3);
        q.schedule_reserved(k, 1);
        let order: Vec<u8> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec![1, 2, 3]);
    }
}
