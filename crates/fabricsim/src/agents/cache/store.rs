//! [`SetAssoc`]: a sets × ways table of (line address, value) slots with
//! per-slot victim-policy metadata, whose memory grows with the sets used.
//!
//! Layout: a set's `ways` slots are one block of flat arrays, placed at
//! the set's first insertion (`base[set]`): a 38.5 MiB L3 that a run
//! touches in a few thousand sets costs those blocks, not 630,000 slots,
//! and its busy sets sit together in host memory. The arrays reserve
//! every block at construction, so a block is placed without allocating
//! (the reservation is address space: the host commits a page when it is
//! first written). Placement order never reaches a result: ways, victims
//! and [`SetAssoc::iter`] go by set and way as a preallocated table's do.
//! Each set keeps its occupied slots in a doubly linked list, oldest first (by
//! last use for LRU/MRU, by insertion otherwise), and its free slots in a
//! singly linked chain, so LRU/MRU/FIFO/LIFO victims, hits, inserts and
//! removals are O(1). LFI keeps an indexed min-heap per set keyed by
//! (insertion count, insertion number). Sets with more than
//! [`INDEX_WAYS`] ways (fully associative snoop filters) find lines through
//! a hash index reserved at construction; smaller sets scan their ways.
//! Nothing iterates a hash map, so hash order never reaches a result.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{CacheGeometry, VictimPolicy};
use crate::engine::rng::Stream;

const NIL: u32 = u32::MAX;

/// Sets with more ways than this use a hash index instead of a scan.
pub const INDEX_WAYS: u32 = 32;

/// A fast, deterministic hasher for line addresses (murmur3's finaliser).
#[derive(Default, Clone, Copy)]
pub struct LineHasher(u64);

impl Hasher for LineHasher {
    #[inline]
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        z ^ (z >> 33)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 ^= v;
    }
}

type LineMap<V> = HashMap<u64, V, BuildHasherDefault<LineHasher>>;

/// `floor(r * n / 2^64)`: a uniform index in `[0, n)` from a uniform `r`.
#[inline]
fn scale(r: u64, n: usize) -> usize {
    ((r as u128 * n as u128) >> 64) as usize
}

/// A set-associative store of values `L` keyed by line address.
///
/// `get`/`get_mut` do not change policy state; `touch` records a hit;
/// `victim`/`victim_where` say what an insertion would evict without
/// changing anything; `insert` evicts by policy when the set is full.
#[derive(Clone)]
pub struct SetAssoc<L> {
    geom: CacheGeometry,
    policy: VictimPolicy,
    ways: usize,
    /// Per set: its block's first slot (NIL: no line inserted yet).
    base: Vec<u32>,
    /// Per block: its set.
    owner: Vec<u32>,
    tags: Vec<u64>,
    vals: Vec<Option<L>>,
    /// Occupied list links (per slot), and the free chain through `next`.
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Per set: oldest and newest occupied slot, first free slot, occupancy.
    head: Vec<u32>,
    tail: Vec<u32>,
    free: Vec<u32>,
    used: Vec<u32>,
    /// LFI only: per slot, the resident line's insertion count and insertion
    /// number; per set segment, a min-heap of slots; per slot, heap position.
    count: Vec<u32>,
    inserted: Vec<u64>,
    heap: Vec<u32>,
    heap_pos: Vec<u32>,
    /// LFI only: insertions per line address, kept across evictions.
    counts: LineMap<u32>,
    /// Sets with many ways: line address -> slot.
    index: Option<LineMap<u32>>,
    seq: u64,
    rng: Stream,
    /// Random only: the number the next insertion's victim choice uses.
    draw: u64,
    len: usize,
}

impl<L> SetAssoc<L> {
    /// An empty store. `seed` drives the `random` policy (other policies
    /// ignore it); the same seed gives the same victims.
    pub fn new(geom: CacheGeometry, policy: VictimPolicy, seed: u64) -> Self {
        let sets = geom.sets() as usize;
        let ways = geom.ways() as usize;
        let n = sets * ways;
        let lfi = policy == VictimPolicy::Lfi;
        let lfi_slots = if lfi { n } else { 0 };
        let mut rng = Stream::new(seed, 0);
        let draw = rng.next_u64();
        SetAssoc {
            geom,
            policy,
            ways,
            base: vec![NIL; sets],
            owner: Vec::with_capacity(sets),
            tags: Vec::with_capacity(n),
            vals: Vec::with_capacity(n),
            prev: Vec::with_capacity(n),
            next: Vec::with_capacity(n),
            head: vec![NIL; sets],
            tail: vec![NIL; sets],
            free: vec![NIL; sets],
            used: vec![0; sets],
            count: Vec::with_capacity(lfi_slots),
            inserted: Vec::with_capacity(lfi_slots),
            heap: Vec::with_capacity(lfi_slots),
            heap_pos: Vec::with_capacity(lfi_slots),
            counts: LineMap::default(),
            // Twice the lines, so tombstones are always cleared in place
            // (hashbrown rehashes without allocating below half capacity).
            index: (geom.ways() > INDEX_WAYS).then(|| LineMap::with_capacity_and_hasher(2 * n, Default::default())),
            seq: 0,
            rng,
            draw,
            len: 0,
        }
    }

    pub fn geometry(&self) -> CacheGeometry {
        self.geom
    }

    pub fn policy(&self) -> VictimPolicy {
        self.policy
    }

    /// Resident lines.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Lines the store can hold (sets × ways).
    pub fn capacity(&self) -> usize {
        self.base.len() * self.ways
    }

    /// Slots placed so far (sets that have held a line, × ways).
    pub fn slots_placed(&self) -> usize {
        self.vals.len()
    }

    #[inline]
    fn find(&self, addr: u64) -> Option<usize> {
        if let Some(ix) = &self.index {
            return ix.get(&addr).map(|&s| s as usize);
        }
        let base = self.base[self.geom.set_of(addr)];
        if base == NIL {
            return None;
        }
        let base = base as usize;
        (base..base + self.ways).find(|&s| self.tags[s] == addr && self.vals[s].is_some())
    }

    /// `set`'s block, placed at the end of the arrays on its first
    /// insertion: its slots free and chained in way order.
    fn place(&mut self, set: usize) -> usize {
        let b = self.base[set];
        if b != NIL {
            return b as usize;
        }
        let b = self.tags.len();
        let ways = self.ways;
        self.tags.resize(b + ways, 0);
        self.vals.extend((0..ways).map(|_| None));
        self.prev.resize(b + ways, NIL);
        self.next.extend((b + 1..b + ways).map(|s| s as u32));
        self.next.push(NIL);
        if self.policy == VictimPolicy::Lfi {
            self.count.resize(b + ways, 0);
            self.inserted.resize(b + ways, 0);
            self.heap.resize(b + ways, NIL);
            self.heap_pos.resize(b + ways, NIL);
        }
        self.base[set] = b as u32;
        self.owner.push(set as u32);
        self.free[set] = b as u32;
        b
    }

    pub fn contains(&self, addr: u64) -> bool {
        self.find(addr).is_some()
    }

    /// The value of a resident line; no policy update.
    pub fn get(&self, addr: u64) -> Option<&L> {
        self.find(addr).and_then(|s| self.vals[s].as_ref())
    }

    /// The value of a resident line, to change; no policy update.
    pub fn get_mut(&mut self, addr: u64) -> Option<&mut L> {
        self.find(addr).and_then(|s| self.vals[s].as_mut())
    }

    /// Record a hit on `addr` (LRU/MRU recency; other policies ignore hits).
    /// Returns whether the line is resident.
    pub fn touch(&mut self, addr: u64) -> bool {
        match self.find(addr) {
            Some(s) => {
                self.hit(s);
                true
            }
            None => false,
        }
    }

    /// The number of times `addr` has been inserted (kept across evictions);
    /// counted only under `lfi`, 0 otherwise.
    pub fn insertions(&self, addr: u64) -> u32 {
        self.counts.get(&addr).copied().unwrap_or(0)
    }

    /// Whether inserting `addr` must evict a line: it is not resident and
    /// its set has no free way.
    pub fn needs_eviction(&self, addr: u64) -> bool {
        self.used[self.geom.set_of(addr)] as usize == self.ways && !self.contains(addr)
    }

    /// The line that `insert(addr, _)` would evict, or `None` if `addr` is
    /// resident or its set has a free way.
    pub fn victim(&self, addr: u64) -> Option<u64> {
        if !self.needs_eviction(addr) {
            return None;
        }
        self.choose(self.geom.set_of(addr), true, |_, _| true).map(|s| self.tags[s])
    }

    /// The line the policy would evict for `addr` among the lines of its set
    /// for which `ok(line, value)` holds (the policy's order, restricted to
    /// the candidates); `None` if no eviction is needed or no line may be
    /// evicted (tell the two apart with [`needs_eviction`](Self::needs_eviction)).
    /// `ok` must be a pure function: it may be called more than once per line.
    /// To evict the chosen line, `remove` it, then `insert`.
    pub fn victim_where(&self, addr: u64, ok: impl Fn(u64, &L) -> bool) -> Option<u64> {
        if !self.needs_eviction(addr) {
            return None;
        }
        self.choose(self.geom.set_of(addr), false, ok).map(|s| self.tags[s])
    }

    /// Insert `addr` with `value`. If the set is full, the policy's victim is
    /// evicted and returned with its value. If `addr` is already resident its
    /// value is replaced (the old one dropped) and the access counts as a hit
    /// (`touch`); nothing is evicted and no insertion is counted.
    pub fn insert(&mut self, addr: u64, value: L) -> Option<(u64, L)> {
        if let Some(s) = self.find(addr) {
            self.vals[s] = Some(value);
            self.hit(s);
            return None;
        }
        self.insert_absent(addr, value).1
    }

    /// `insert` of a line known not to be resident: its slot, and what it evicted.
    fn insert_absent(&mut self, addr: u64, value: L) -> (usize, Option<(u64, L)>) {
        let set = self.geom.set_of(addr);
        self.place(set);
        let evicted = if self.used[set] as usize == self.ways {
            let s = self.choose(set, true, |_, _| true).expect("a full set has a victim");
            Some(self.take(set, s))
        } else {
            None
        };
        // Take the first free slot.
        let s = self.free[set] as usize;
        debug_assert!(s != NIL as usize);
        self.free[set] = self.next[s];
        self.tags[s] = addr;
        self.vals[s] = Some(value);
        self.link_tail(set, s);
        self.used[set] += 1;
        self.len += 1;
        self.seq += 1;
        if let Some(ix) = &mut self.index {
            ix.insert(addr, s as u32);
        }
        match self.policy {
            VictimPolicy::Lfi => {
                let c = self.counts.entry(addr).or_insert(0);
                *c = c.saturating_add(1);
                self.count[s] = *c;
                self.inserted[s] = self.seq;
                self.heap_push(set, s);
            }
            VictimPolicy::Random => self.draw = self.rng.next_u64(),
            _ => {}
        }
        (s, evicted)
    }

    /// `victim_where(addr, ok)`, removed: the line and its value, in one
    /// look-up of the set instead of two.
    pub fn evict_where(&mut self, addr: u64, ok: impl Fn(u64, &L) -> bool) -> Option<(u64, L)> {
        if !self.needs_eviction(addr) {
            return None;
        }
        let set = self.geom.set_of(addr);
        let s = self.choose(set, false, ok)?;
        Some(self.take(set, s))
    }

    /// The value of `addr` after an access: inserted as `value` if absent
    /// (as `insert`), and the use recorded (as `touch`). One look-up of the
    /// set instead of the three of `insert`, `touch` and `get_mut`.
    pub fn entry_touch(&mut self, addr: u64, value: L) -> &mut L {
        let s = match self.find(addr) {
            Some(s) => s,
            None => self.insert_absent(addr, value).0,
        };
        self.hit(s);
        self.vals[s].as_mut().expect("occupied")
    }

    /// Remove `addr`, returning its value. Its LFI count is kept.
    pub fn remove(&mut self, addr: u64) -> Option<L> {
        let s = self.find(addr)?;
        Some(self.take(self.geom.set_of(addr), s).1)
    }

    /// Resident lines, set by set and way by way (a deterministic order).
    pub fn iter(&self) -> impl Iterator<Item = (u64, &L)> + '_ {
        self.base.iter().filter(|&&b| b != NIL).flat_map(move |&b| {
            let b = b as usize;
            self.tags[b..b + self.ways]
                .iter()
                .zip(&self.vals[b..b + self.ways])
                .filter_map(|(&a, v)| v.as_ref().map(|v| (a, v)))
        })
    }

    // ------------------------------------------------------------ internals

    #[inline]
    fn hit(&mut self, s: usize) {
        if matches!(self.policy, VictimPolicy::Lru | VictimPolicy::Mru) {
            let set = self.owner[s / self.ways] as usize;
            if self.tail[set] as usize != s {
                self.unlink(set, s);
                self.link_tail(set, s);
            }
        }
    }

    /// The slot to evict from `set` among the candidates (`all`: every
    /// resident line is one, and `ok` is not called).
    fn choose(&self, set: usize, all: bool, ok: impl Fn(u64, &L) -> bool) -> Option<usize> {
        let cand = |s: usize| all || ok(self.tags[s], self.vals[s].as_ref().expect("occupied"));
        match self.policy {
            VictimPolicy::Lru | VictimPolicy::Fifo => {
                let mut s = self.head[set];
                while s != NIL && !cand(s as usize) {
                    s = self.next[s as usize];
                }
                (s != NIL).then_some(s as usize)
            }
            VictimPolicy::Mru | VictimPolicy::Lifo => {
                let mut s = self.tail[set];
                while s != NIL && !cand(s as usize) {
                    s = self.prev[s as usize];
                }
                (s != NIL).then_some(s as usize)
            }
            VictimPolicy::Lfi => {
                let n = self.used[set] as usize;
                if n == 0 {
                    return None;
                }
                let base = self.base[set] as usize;
                let top = self.heap[base] as usize;
                if cand(top) {
                    return Some(top);
                }
                self.heap[base + 1..base + n]
                    .iter()
                    .map(|&s| s as usize)
                    .filter(|&s| cand(s))
                    .min_by_key(|&s| (self.count[s], self.inserted[s]))
            }
            VictimPolicy::Random => {
                // The k-th candidate in way order, k uniform in [0, candidates).
                if self.used[set] == 0 {
                    return None;
                }
                let base = self.base[set] as usize;
                let occupied = |s: &usize| self.vals[*s].is_some();
                if all && self.used[set] as usize == self.ways {
                    return Some(base + scale(self.draw, self.ways));
                }
                let n = (base..base + self.ways).filter(occupied).filter(|&s| cand(s)).count();
                if n == 0 {
                    return None;
                }
                (base..base + self.ways).filter(occupied).filter(|&s| cand(s)).nth(scale(self.draw, n))
            }
        }
    }

    /// Remove slot `s` of `set`: unlink, free, unindex; its value.
    fn take(&mut self, set: usize, s: usize) -> (u64, L) {
        self.unlink(set, s);
        if self.policy == VictimPolicy::Lfi {
            self.heap_remove(set, s);
        }
        self.next[s] = self.free[set];
        self.free[set] = s as u32;
        self.used[set] -= 1;
        self.len -= 1;
        let addr = self.tags[s];
        if let Some(ix) = &mut self.index {
            ix.remove(&addr);
        }
        (addr, self.vals[s].take().expect("occupied"))
    }

    #[inline]
    fn link_tail(&mut self, set: usize, s: usize) {
        let t = self.tail[set];
        self.prev[s] = t;
        self.next[s] = NIL;
        if t == NIL {
            self.head[set] = s as u32;
        } else {
            self.next[t as usize] = s as u32;
        }
        self.tail[set] = s as u32;
    }

    #[inline]
    fn unlink(&mut self, set: usize, s: usize) {
        let (p, n) = (self.prev[s], self.next[s]);
        if p == NIL {
            self.head[set] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail[set] = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[s] = NIL;
        self.next[s] = NIL;
    }

    #[inline]
    fn lfi_less(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        (self.count[a], self.inserted[a]) < (self.count[b], self.inserted[b])
    }

    /// Push slot `s` onto `set`'s heap; `used[set]` already counts it.
    fn heap_push(&mut self, set: usize, s: usize) {
        let base = self.base[set] as usize;
        let k = self.used[set] as usize - 1;
        self.heap[base + k] = s as u32;
        self.heap_pos[s] = k as u32;
        self.sift_up(base, k);
    }

    /// Remove slot `s` from `set`'s heap; `used[set]` still counts it.
    fn heap_remove(&mut self, set: usize, s: usize) {
        let base = self.base[set] as usize;
        let last = self.used[set] as usize - 1;
        let k = self.heap_pos[s] as usize;
        self.heap_pos[s] = NIL;
        if k != last {
            let moved = self.heap[base + last];
            self.heap[base + k] = moved;
            self.heap_pos[moved as usize] = k as u32;
            self.sift_down(base, k, last);
            self.sift_up(base, self.heap_pos[moved as usize] as usize);
        }
        self.heap[base + last] = NIL;
    }

    fn sift_up(&mut self, base: usize, mut k: usize) {
        while k > 0 {
            let p = (k - 1) / 2;
            let (a, b) = (self.heap[base + k], self.heap[base + p]);
            if !self.lfi_less(a, b) {
                break;
            }
            self.heap_swap(base, k, p);
            k = p;
        }
    }

    fn sift_down(&mut self, base: usize, mut k: usize, n: usize) {
        loop {
            let (l, r) = (2 * k + 1, 2 * k + 2);
            let mut m = k;
            if l < n && self.lfi_less(self.heap[base + l], self.heap[base + m]) {
                m = l;
            }
            if r < n && self.lfi_less(self.heap[base + r], self.heap[base + m]) {
                m = r;
            }
            if m == k {
                break;
            }
            self.heap_swap(base, k, m);
            k = m;
        }
    }

    #[inline]
    fn heap_swap(&mut self, base: usize, i: usize, j: usize) {
        self.heap.swap(base + i, base + j);
        self.heap_pos[self.heap[base + i] as usize] = i as u32;
        self.heap_pos[self.heap[base + j] as usize] = j as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A naive model written from the policy definitions: every resident
    /// line with its last use, insertion number and insertion count.
    struct Model {
        sets: Vec<Vec<(u64, u64, u64, u32)>>,
        ways: usize,
        counts: HashMap<u64, u32>,
        clock: u64,
        policy: VictimPolicy,
    }

    impl Model {
        fn set(&self, a: u64) -> usize {
            (a % self.sets.len() as u64) as usize
        }
        fn victim(&self, a: u64, ok: impl Fn(u64) -> bool) -> Option<u64> {
            let set = &self.sets[self.set(a)];
            if set.len() < self.ways || set.iter().any(|e| e.0 == a) {
                return None;
            }
            let c = set.iter().filter(|e| ok(e.0));
            let v = match self.policy {
                VictimPolicy::Lru => c.min_by_key(|e| e.1),
                VictimPolicy::Mru => c.max_by_key(|e| e.1),
                VictimPolicy::Fifo => c.min_by_key(|e| e.2),
                VictimPolicy::Lifo => c.max_by_key(|e| e.2),
                VictimPolicy::Lfi => c.min_by_key(|e| (e.3, e.2)),
                VictimPolicy::Random => unreachable!(),
            };
            v.map(|e| e.0)
        }
        fn touch(&mut self, a: u64) {
            self.clock += 1;
            let (s, t) = (self.set(a), self.clock);
            if let Some(e) = self.sets[s].iter_mut().find(|e| e.0 == a) {
                e.1 = t;
            }
        }
        fn insert(&mut self, a: u64) -> Option<u64> {
            let s = self.set(a);
            if self.sets[s].iter().any(|e| e.0 == a) {
                self.touch(a);
                return None;
            }
            let v = self.victim(a, |_| true);
            if let Some(v) = v {
                self.remove(v);
            }
            self.clock += 1;
            let c = self.counts.entry(a).or_insert(0);
            *c += 1;
            let e = (a, self.clock, self.clock, *c);
            self.sets[s].push(e);
            v
        }
        fn remove(&mut self, a: u64) -> bool {
            let s = self.set(a);
            let n = self.sets[s].len();
            self.sets[s].retain(|e| e.0 != a);
            n != self.sets[s].len()
        }
    }

    fn against_model(policy: VictimPolicy, sets: u32, ways: u32, seed: u64) {
        let geom = CacheGeometry::new((sets * ways) as u64 * 64, 64, ways).unwrap();
        let mut c: SetAssoc<u64> = SetAssoc::new(geom, policy, 1);
        let mut m = Model {
            sets: vec![Vec::new(); sets as usize],
            ways: ways as usize,
            counts: HashMap::new(),
            clock: 0,
            policy,
        };
        let mut r = Stream::new(seed, 0);
        let span = (sets * ways * 3) as u64;
        for step in 0..20_000 {
            let a = r.below(span);
            let ok = |x: u64| x % 3 != step % 3;
            assert_eq!(c.victim(a), m.victim(a, |_| true), "{policy} step {step} victim({a})");
            assert_eq!(c.victim_where(a, |x, _| ok(x)), m.victim(a, ok), "{policy} step {step} victim_where({a})");
            match r.below(6) {
                4 => {
                    // entry_touch: insert if absent, then a use
                    let was = c.get(a).copied();
                    let v = *c.entry_touch(a, a * 10);
                    assert_eq!(v, was.unwrap_or(a * 10));
                    if was.is_none() {
                        m.insert(a);
                    }
                    m.touch(a);
                }
                5 => {
                    let e = c.evict_where(a, |x, _| ok(x));
                    let want = m.victim(a, ok);
                    assert_eq!(
                        e.map(|(x, v)| (x, v == x * 10)),
                        want.map(|x| (x, true)),
                        "{policy} step {step} evict_where"
                    );
                    if let Some(x) = want {
                        m.remove(x);
                    }
                }
                0 | 1 => {
                    let e = c.insert(a, a * 10);
                    assert_eq!(
                        e.map(|(x, v)| (x, v == x * 10)),
                        m.insert(a).map(|x| (x, true)),
                        "{policy} step {step}"
                    );
                }
                2 => {
                    assert_eq!(c.touch(a), m.sets[m.set(a)].iter().any(|e| e.0 == a));
                    m.touch(a);
                }
                _ => assert_eq!(c.remove(a).is_some(), m.remove(a), "{policy} step {step} remove"),
            }
            assert_eq!(c.len(), m.sets.iter().map(Vec::len).sum::<usize>());
            assert_eq!(c.get(a).is_some(), m.sets[m.set(a)].iter().any(|e| e.0 == a));
        }
        let mut got: Vec<u64> = c.iter().map(|(a, &v)| (assert_eq!(v, a * 10), a).1).collect();
        let mut want: Vec<u64> = m.sets.iter().flatten().map(|e| e.0).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn every_policy_matches_its_definition_on_random_operations() {
        for p in VictimPolicy::ALL {
            if p == VictimPolicy::Random {
                continue;
            }
            against_model(p, 2, 4, 7);
            against_model(p, 3, 2, 8); // a set count that is not a power of two
            against_model(p, 1, 40, 9); // fully associative, hash-indexed
        }
    }

    #[test]
    fn random_victims_are_candidates_and_predicted() {
        for ways in [4, 40] {
            let geom = CacheGeometry::new(2 * ways as u64 * 64, 64, ways).unwrap();
            let mut c: SetAssoc<()> = SetAssoc::new(geom, VictimPolicy::Random, 3);
            let mut r = Stream::new(5, 0);
            for _ in 0..5000 {
                let a = r.below(4 * ways as u64);
                if let Some(v) = c.victim_where(a, |x, _| x % 2 == 0) {
                    assert_eq!(v % 2, 0);
                    assert_eq!(geom.set_of(v), geom.set_of(a));
                }
                let predicted = c.victim(a);
                assert_eq!(c.insert(a, ()).map(|e| e.0), predicted);
            }
        }
    }

    #[test]
    fn only_the_sets_used_hold_slots_and_lines_iterate_by_set() {
        // 4096 sets of 8 ways; lines placed in sets 3000, 7 and 3000 again
        let geom = CacheGeometry::new(4096 * 8 * 64, 64, 8).unwrap();
        let mut c: SetAssoc<u64> = SetAssoc::new(geom, VictimPolicy::Lru, 1);
        assert_eq!((c.capacity(), c.slots_placed()), (4096 * 8, 0));
        let lines = [3000u64, 7, 3000 + 4096, 7 + 2 * 4096];
        for a in lines {
            c.insert(a, a);
        }
        assert_eq!(c.slots_placed(), 2 * 8, "two sets placed");
        let order: Vec<u64> = c.iter().map(|(a, _)| a).collect();
        assert_eq!(order, [7, 7 + 2 * 4096, 3000, 3000 + 4096], "set by set, way by way");
        assert!(c.get(5).is_none() && c.victim(5).is_none() && c.remove(5).is_none());
    }

    #[test]
    fn the_hash_index_does_not_grow_in_steady_state() {
        let geom = CacheGeometry::fully_associative(64, 64).unwrap();
        let mut c: SetAssoc<u8> = SetAssoc::new(geom, VictimPolicy::Lru, 1);
        let cap = c.index.as_ref().unwrap().capacity();
        for a in 0..100_000u64 {
            c.insert(a.wrapping_mul(0x9E37_79B9_7F4A_7C15), 0);
        }
        assert_eq!(c.index.as_ref().unwrap().capacity(), cap);
        assert_eq!(c.len(), 64);
    }
}
