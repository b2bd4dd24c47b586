//! What the explorer keeps per visited state: its fingerprint in a sharded
//! visited set ([`Visited`], about 12 bytes a state), and its place in the
//! breadth-first tree ([`Tree`], about 2 bytes a state), from which a
//! counterexample is rebuilt by re-executing the rules from an initial
//! state.

/// Shards of the visited set (a power of two): each grows on its own, so
/// growing never doubles the whole table at once, and threads insert into
/// disjoint shards without locks.
pub const SHARDS: usize = 64;
const SHARD_BITS: u32 = SHARDS.trailing_zeros();

/// Where a state's 128-bit fingerprint goes: its shard (top bits) and the
/// 64-bit key stored there (low bits; independent of the shard bits).
#[inline(always)]
pub fn split(fp: u128) -> (usize, u64) {
    ((fp >> (128 - SHARD_BITS)) as usize, fp as u64)
}

/// Fingerprint bits the set tells apart: two states collide only if
/// their shards and keys are equal.
pub const FINGERPRINT_BITS: i32 = 64 + SHARD_BITS as i32;

/// A zeroed table of `n` slots; a large one backed by huge pages where the
/// system allows (lookups are random: with 4 KiB pages nearly each would
/// also miss the TLB).
fn table(n: usize) -> Vec<u64> {
    let v = vec![0u64; n];
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = n * std::mem::size_of::<u64>();
        if bytes >= 2 * HUGE {
            extern "C" {
                fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: std::ffi::c_int) -> std::ffi::c_int;
            }
            const MADV_HUGEPAGE: std::ffi::c_int = 14;
            let start = (v.as_ptr() as usize).next_multiple_of(HUGE);
            let end = (v.as_ptr() as usize + bytes) / HUGE * HUGE;
            if end > start {
                // SAFETY: advice only, on memory this vector owns; failure
                // (no huge pages here) changes nothing.
                unsafe {
                    madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE);
                }
            }
        }
    }
    v
}

/// One shard: open addressing with linear probing over 64-bit keys,
/// indexed by a key's top bits. Zero marks an empty slot; the key 0 itself
/// is kept in a flag.
pub struct Shard {
    slots: Vec<u64>,
    shift: u32,
    len: usize,
    has_zero: bool,
}

impl Shard {
    fn new() -> Self {
        let n = 1024usize;
        Shard { slots: table(n), shift: 64 - n.trailing_zeros(), len: 0, has_zero: false }
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (key >> self.shift) as usize
    }

    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        if key == 0 {
            return self.has_zero;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = self.slots[i];
            if s == key {
                return true;
            }
            if s == 0 {
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    pub fn prefetch(&self, key: u64) {
        let i = self.home(key);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetching is a hint; the address is in bounds.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(self.slots.as_ptr().add(i) as *const i8);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// Add `key`; true if it was not there.
    #[inline]
    pub fn insert(&mut self, key: u64) -> bool {
        if key == 0 {
            let new = !self.has_zero;
            self.has_zero = true;
            self.len += new as usize;
            return new;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = self.slots[i];
            if s == key {
                return false;
            }
            if s == 0 {
                break;
            }
            i = (i + 1) & mask;
        }
        self.slots[i] = key;
        self.len += 1;
        if self.len * 4 > self.slots.len() * 3 {
            self.grow();
        }
        true
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = table(old.len() * 2);
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for key in old.into_iter().filter(|&k| k != 0) {
            let mut i = self.home(key);
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = key;
        }
    }

    pub fn bytes(&self) -> usize {
        self.slots.len() * 8
    }

    /// Its keys in increasing order; the shard is left empty (and small).
    pub fn take_sorted(&mut self) -> Vec<u64> {
        let mut keys: Vec<u64> = self.slots.iter().copied().filter(|&k| k != 0).collect();
        if self.has_zero {
            keys.push(0);
        }
        keys.sort_unstable();
        *self = Shard::new();
        keys
    }
}

/// The visited set: [`SHARDS`] shards of fingerprint keys.
pub struct Visited {
    pub shards: Vec<Shard>,
}

impl Default for Visited {
    fn default() -> Self {
        Visited { shards: (0..SHARDS).map(|_| Shard::new()).collect() }
    }
}

impl Visited {
    #[inline]
    pub fn contains(&self, fp: u128) -> bool {
        let (s, k) = split(fp);
        self.shards[s].contains(k)
    }

    #[inline]
    pub fn prefetch(&self, fp: u128) {
        let (s, k) = split(fp);
        self.shards[s].prefetch(k)
    }

    pub fn insert(&mut self, fp: u128) -> bool {
        let (s, k) = split(fp);
        self.shards[s].insert(k)
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> usize {
        self.shards.iter().map(Shard::bytes).sum()
    }
}

/// The breadth-first tree, compactly: state `id`'s parent and the index of
/// the rule (the enabled transition, in the explorer's order) that reached
/// it. States are numbered in discovery order, so parents never decrease
/// along the numbering; each entry is the varint of the parent's increase
/// and the varint of the rule, about two bytes. The first `roots` states
/// are initial, their rule the index in `Protocol::initial`. A checkpoint
/// every [`STRIDE`] states makes a lookup decode at most that many.
#[derive(Default)]
pub struct Tree {
    bytes: Vec<u8>,
    /// (byte offset, last parent) before state `k * STRIDE`.
    checkpoints: Vec<(u64, u32)>,
    len: u32,
    roots: u32,
    last_parent: u32,
}

const STRIDE: u32 = 256;

fn put_varint(out: &mut Vec<u8>, mut x: u32) {
    while x >= 0x80 {
        out.push((x as u8 & 0x7f) | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> u32 {
    let mut x = 0u32;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        x |= ((b & 0x7f) as u32) << shift;
        if b < 0x80 {
            return x;
        }
        shift += 7;
    }
}

impl Tree {
    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn checkpoint(&mut self) {
        if self.len.is_multiple_of(STRIDE) {
            self.checkpoints.push((self.bytes.len() as u64, self.last_parent));
        }
    }

    /// An initial state, the `index`-th of `Protocol::initial`.
    pub fn push_root(&mut self, index: u32) {
        assert_eq!(self.len, self.roots, "initial states come first");
        self.checkpoint();
        put_varint(&mut self.bytes, index);
        self.roots += 1;
        self.len += 1;
    }

    /// A state reached from `parent` by rule `rule`.
    pub fn push(&mut self, parent: u32, rule: u32) {
        debug_assert!(parent >= self.last_parent && parent < self.len);
        self.checkpoint();
        put_varint(&mut self.bytes, parent - self.last_parent);
        put_varint(&mut self.bytes, rule);
        self.last_parent = parent;
        self.len += 1;
    }

    /// State `id`'s parent (None for an initial state) and rule.
    pub fn get(&self, id: u32) -> (Option<u32>, u32) {
        assert!(id < self.len);
        let (off, mut parent) = self.checkpoints[(id / STRIDE) as usize];
        let mut at = off as usize;
        let mut k = id / STRIDE * STRIDE;
        loop {
            if k < self.roots {
                let rule = get_varint(&self.bytes, &mut at);
                if k == id {
                    return (None, rule);
                }
            } else {
                parent += get_varint(&self.bytes, &mut at);
                let rule = get_varint(&self.bytes, &mut at);
                if k == id {
                    return (Some(parent), rule);
                }
            }
            k += 1;
        }
    }

    pub fn bytes(&self) -> usize {
        self.bytes.capacity() + self.checkpoints.capacity() * 16
    }

    /// The tree as bytes (a checkpoint's file): a header of its counts,
    /// then its varints; the lookup checkpoints are rebuilt on reading.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes.len() + 20);
        out.extend_from_slice(b"FSTREE1\0");
        for x in [self.len, self.roots, self.last_parent] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.extend_from_slice(&self.bytes);
        out
    }

    /// The tree [`Tree::to_bytes`] wrote, or None if `b` is not one.
    pub fn from_bytes(b: &[u8]) -> Option<Tree> {
        let rest = b.strip_prefix(b"FSTREE1\0")?;
        let word = |i: usize| Some(u32::from_le_bytes(rest.get(i * 4..i * 4 + 4)?.try_into().ok()?));
        let (len, roots, last_parent) = (word(0)?, word(1)?, word(2)?);
        let bytes = rest[12..].to_vec();
        // Decode every entry once, to rebuild the lookup checkpoints and
        // to refuse a truncated file.
        let mut checkpoints = Vec::with_capacity((len / STRIDE + 1) as usize);
        let (mut at, mut parent) = (0usize, 0u32);
        let varint = |at: &mut usize| -> Option<u32> {
            let (mut x, mut shift) = (0u32, 0);
            loop {
                let byte = *bytes.get(*at)?;
                *at += 1;
                x |= ((byte & 0x7f) as u32).checked_shl(shift)?;
                if byte < 0x80 {
                    return Some(x);
                }
                shift += 7;
            }
        };
        for k in 0..len {
            if k.is_multiple_of(STRIDE) {
                checkpoints.push((at as u64, parent));
            }
            if k < roots {
                varint(&mut at)?;
            } else {
                parent += varint(&mut at)?;
                varint(&mut at)?;
            }
        }
        (at == bytes.len() && parent == last_parent).then_some(Tree { bytes, checkpoints, len, roots, last_parent })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::fingerprint::fingerprint;

    #[test]
    fn visited_is_exact_over_keys() {
        let mut v = Visited::default();
        let fps: Vec<u128> = (0..100_000u128).map(|i| fingerprint(&i)).chain([0, 1, 1 << 127]).collect();
        for &f in &fps {
            assert!(v.insert(f));
        }
        for &f in &fps {
            assert!(!v.insert(f));
            assert!(v.contains(f));
        }
        assert_eq!(v.len(), fps.len());
        assert!(!v.contains(2));
    }

    #[test]
    fn tree_round_trips() {
        let mut t = Tree::default();
        t.push_root(0);
        t.push_root(3);
        let mut want = vec![(None, 0), (None, 3)];
        let mut parent = 0;
        for i in 2..5000u32 {
            if i % 3 == 0 {
                parent += 1 + i % 7;
                parent = parent.min(i - 1);
            }
            let rule = (i * 37) % 300;
            t.push(parent, rule);
            want.push((Some(parent), rule));
        }
        for (i, w) in want.iter().enumerate() {
            assert_eq!(t.get(i as u32), *w, "{i}");
        }
        let back = Tree::from_bytes(&t.to_bytes()).expect("a tree reads back");
        for (i, w) in want.iter().enumerate() {
            assert_eq!(back.get(i as u32), *w, "{i} after a round trip through bytes");
        }
        let mut cut = t.to_bytes();
        cut.pop();
        assert!(Tree::from_bytes(&cut).is_none(), "a truncated tree is refused");
    }
}
