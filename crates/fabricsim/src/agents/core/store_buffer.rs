//! The store buffer: one component for every core that retires stores
//! before they perform (the MSI/MESI/German and CORD program cores, BI's
//! program cores, CORD's workload-driven cores), and the one rule of which
//! buffered entry may drain before which (also the timing front end's rule
//! for its store buffer, `buffers.rs`).
//!
//! Time-free and protocol-free: the buffer keeps the entries in program
//! order and answers questions about them; its owner decides when an entry
//! performs (a line held writable, a table with room) and what it does then.
//! A protocol's own parts are its entry type ([`Buffered`]) and the hooks
//! around the buffer (BI's ownership prefetch), not another buffer.
//!
//! No capacity is built in: the owner passes its own to [`StoreBuffer::has_room`].
//! The first `N` entries live inline, so a checked state with a small
//! buffer allocates nothing; a deeper buffer (a timed core's 56 entries)
//! spills to the heap once.

use std::fmt;
use std::hash::{Hash, Hasher};

use smallvec::SmallVec;

use super::Model;
use crate::engine::pack::{get_varint, put_varint, Pack};

/// How a buffered entry orders against the others of its buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A plain store: under RC it may drain before older stores to other
    /// locations.
    Store,
    /// A release store: it drains after every older entry.
    Release,
    /// A fence in the buffer (an sfence; a flush): it drains after every
    /// older entry and every younger one drains after it.
    Fence,
}

/// Whether `y` must drain after the older `x` of the same buffer under
/// `model`; `same_loc`: both write one location (false when the owner does
/// not know locations, as the timing front end does not).
#[inline]
pub fn drains_after(model: Model, x: Class, y: Class, same_loc: bool) -> bool {
    // TSO: in program order. RC: a fence holds everything younger, a
    // release waits for everything older, one location's stores stay in order.
    model == Model::Tso || x == Class::Fence || y != Class::Store || same_loc
}

/// An entry of a store buffer: what a load may forward from it and how it
/// orders.
pub trait Buffered: Copy {
    /// What a load names (a location; for BI a line's word).
    type Loc: PartialEq + Copy;
    /// What a load forwarded from the entry takes (`()` if the entry
    /// carries no value).
    type Value: Copy;
    /// The location a store writes and its value (None: not a store).
    fn store(&self) -> Option<(Self::Loc, Self::Value)>;
    fn class(&self) -> Class;
}

/// Retired stores (and whatever else the owner buffers) not yet performed,
/// oldest first.
pub struct StoreBuffer<E, const N: usize = 4> {
    slots: SmallVec<[E; N]>,
    /// Slots before it have drained: the head advances without moving the
    /// others (a deep buffer would shift every entry at each drain), and
    /// the drained slots are reused when the storage is full.
    head: u32,
}

impl<E: Buffered, const N: usize> StoreBuffer<E, N> {
    pub fn new() -> Self {
        StoreBuffer { slots: SmallVec::new(), head: 0 }
    }

    /// The entries, oldest first.
    #[inline]
    pub fn as_slice(&self) -> &[E] {
        &self.slots[self.head as usize..]
    }

    pub fn iter(&self) -> std::slice::Iter<'_, E> {
        self.as_slice().iter()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.slots.len() - self.head as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether a buffer of `capacity` entries takes another.
    #[inline]
    pub fn has_room(&self, capacity: usize) -> bool {
        self.len() < capacity
    }

    /// Retire `e` (the owner checked [`StoreBuffer::has_room`]).
    pub fn push(&mut self, e: E) {
        if self.head > 0 && self.slots.len() == self.slots.capacity() {
            self.slots.drain(..self.head as usize);
            self.head = 0;
        }
        self.slots.push(e);
    }

    /// The oldest entry.
    #[inline]
    pub fn head(&self) -> Option<&E> {
        self.as_slice().first()
    }

    /// Take the oldest entry (it performed).
    pub fn pop(&mut self) -> Option<E> {
        let e = *self.head()?;
        self.head += 1;
        if self.head as usize == self.slots.len() {
            self.slots.clear();
            self.head = 0;
        }
        Some(e)
    }

    pub fn clear(&mut self) {
        self.slots.clear();
        self.head = 0;
    }

    /// Take entry `i` (RC: an entry [`StoreBuffer::may_drain`] performed).
    pub fn remove(&mut self, i: usize) -> E {
        if i == 0 {
            return self.pop().expect("an entry");
        }
        self.slots.remove(self.head as usize + i)
    }

    /// The value of the youngest store to `loc` (store-to-load forwarding).
    pub fn forward(&self, loc: E::Loc) -> Option<E::Value> {
        self.iter().rev().find_map(|e| e.store().filter(|s| s.0 == loc)).map(|s| s.1)
    }

    /// Whether entry `i` may drain now under `model`: no older entry holds it.
    pub fn may_drain(&self, i: usize, model: Model) -> bool {
        let s = self.as_slice();
        let y = &s[i];
        let loc = y.store().map(|s| s.0);
        s[..i].iter().all(|x| {
            let same = loc.is_some() && x.store().map(|s| s.0) == loc;
            !drains_after(model, x.class(), y.class(), same)
        })
    }
}

// By hand: the checker clones every state, and copying the live slice at
// once is faster than SmallVec's element-wise clone.
impl<E: Buffered, const N: usize> Clone for StoreBuffer<E, N> {
    // (an empty buffer, the common case, copies nothing: not even a
    // zero-length memcpy call)
    #[inline]
    fn clone(&self) -> Self {
        if self.is_empty() {
            return Self::new();
        }
        StoreBuffer { slots: SmallVec::from_slice(self.as_slice()), head: 0 }
    }

    #[inline]
    fn clone_from(&mut self, other: &Self) {
        self.clear();
        if !other.is_empty() {
            self.slots.extend_from_slice(other.as_slice());
        }
    }
}

impl<E: Buffered, const N: usize> Default for StoreBuffer<E, N> {
    fn default() -> Self {
        Self::new()
    }
}

// Equality, hashing, packing and printing see the entries only, not where
// the head stands in the storage: the checker's states stay canonical.

impl<E: Buffered + PartialEq, const N: usize> PartialEq for StoreBuffer<E, N> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<E: Buffered + Eq, const N: usize> Eq for StoreBuffer<E, N> {}

impl<E: Buffered + Hash, const N: usize> Hash for StoreBuffer<E, N> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.as_slice().hash(h);
    }
}

impl<E: Buffered + fmt::Debug, const N: usize> fmt::Debug for StoreBuffer<E, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<E: Buffered + Pack, const N: usize> Pack for StoreBuffer<E, N> {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        put_varint(out, self.len() as u64);
        for e in self.iter() {
            e.pack(out);
        }
    }
    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let mut b = Self::new();
        b.unpack_into(src);
        b
    }
    #[inline]
    fn unpack_into(&mut self, src: &mut &[u8]) {
        let n = get_varint(src) as usize;
        self.clear();
        for _ in 0..n {
            self.slots.push(E::unpack(src));
        }
    }
}

/// A location's store and its value: the program cores' entries.
impl<L: PartialEq + Copy, V: Copy> Buffered for (L, V) {
    type Loc = L;
    type Value = V;
    #[inline]
    fn store(&self) -> Option<(L, V)> {
        Some(*self)
    }
    fn class(&self) -> Class {
        Class::Store
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pack::round_trip;

    /// A store (release or not) or a fence.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    enum E {
        St(u8, i64, bool),
        Fence,
    }

    impl Buffered for E {
        type Loc = u8;
        type Value = i64;
        fn store(&self) -> Option<(u8, i64)> {
            match *self {
                E::St(l, v, _) => Some((l, v)),
                E::Fence => None,
            }
        }
        fn class(&self) -> Class {
            match *self {
                E::St(_, _, true) => Class::Release,
                E::St(..) => Class::Store,
                E::Fence => Class::Fence,
            }
        }
    }

    #[test]
    fn forwards_the_youngest_store() {
        let mut b: StoreBuffer<E, 2> = StoreBuffer::new();
        b.push(E::St(1, 10, false));
        b.push(E::St(2, 20, false));
        b.push(E::St(1, 11, false));
        assert_eq!(b.forward(1), Some(11));
        assert_eq!(b.forward(2), Some(20));
        assert_eq!(b.forward(3), None);
        assert!(b.has_room(4) && !b.has_room(3));
    }

    #[test]
    fn tso_drains_the_head_only_rc_what_no_older_entry_holds() {
        let mut b: StoreBuffer<E> = StoreBuffer::new();
        for e in [E::St(0, 1, false), E::St(1, 1, false), E::St(0, 2, false), E::St(2, 1, true), E::Fence] {
            b.push(e);
        }
        let drains = |m| (0..b.len()).filter(|&i| b.may_drain(i, m)).collect::<Vec<_>>();
        assert_eq!(drains(Model::Tso), [0]);
        // loc 0's second store waits for its first; the release and the fence for all
        assert_eq!(drains(Model::Rc), [0, 1]);
        b.push(E::St(3, 1, false));
        assert!(!b.may_drain(5, Model::Rc), "a fence holds every younger entry");
    }

    #[test]
    fn drained_slots_are_reused_and_do_not_show() {
        let mut b: StoreBuffer<(u8, i64), 2> = StoreBuffer::new();
        b.push((1, 1));
        b.push((2, 2));
        assert_eq!(b.pop(), Some((1, 1)));
        let mut c = StoreBuffer::new();
        c.push((2, 2));
        assert_eq!(b, c, "equal entries, different heads");
        // the full inline storage takes a third entry in the drained slot
        b.push((3, 3));
        assert!(!b.slots.spilled());
        assert_eq!(b.as_slice(), [(2, 2), (3, 3)]);
        assert_eq!(b.remove(1), (3, 3));
        assert_eq!(b.pop(), Some((2, 2)));
        assert!(b.is_empty() && b.pop().is_none());
        b.push((4, 4));
        b.push((5, 5));
        b.pop();
        assert_eq!(format!("{b:?}"), "[(5, 5)]");
        assert_eq!(round_trip(&b).0, b);
    }
}
