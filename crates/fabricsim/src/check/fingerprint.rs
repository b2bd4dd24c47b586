//! 128-bit state fingerprints for the visited set (hash compaction).
//!
//! The explorer stores only a 128-bit fingerprint per visited state, not the
//! state. Two different states with the same fingerprint would make the
//! second look visited, so a collision can only *omit* states, never add
//! false ones; with n states the chance of any collision is at most
//! n^2 / 2^129 (about 1.5e-25 for ten million states), which the report
//! prints. The hash has two 64-bit multiply-rotate lanes over the state's
//! bytes; the set ([`FingerprintSet`]) is an open-addressing table of
//! fingerprints, exact over them.

use std::hash::{Hash, Hasher};

const K0: u64 = 0x9E37_79B9_7F4A_7C15;
const K1: u64 = 0xC2B2_AE3D_27D4_EB4F;
const K2: u64 = 0x1656_67B1_9E37_79F9;
const K3: u64 = 0xD6E8_FEB8_6659_FD93;

pub struct Fingerprinter {
    a: u64,
    b: u64,
    /// Stream bits not mixed in yet (the low `fill` bits).
    acc: u64,
    fill: u32,
    /// Bytes written in all.
    len: u64,
}

impl Default for Fingerprinter {
    fn default() -> Self {
        Fingerprinter { a: K0, b: K1, acc: 0, fill: 0, len: 0 }
    }
}

// The hasher sees the writes of a `Hash` implementation as one byte stream:
// each write appends its value's bytes (little-endian, integers at their
// width; `usize`/`isize`, which derived `Hash` uses for lengths and enum
// discriminants, as LEB128, one byte below 128), and the stream is mixed
// eight bytes at a time, with its length at the end. For one type the
// stream determines the value (derived `Hash` writes lengths and
// discriminants, and both encodings are prefix-free), so this is a hash of
// the value, and a small state is mixed in a few words instead of one word
// per field.
impl Fingerprinter {
    #[inline(always)]
    fn mix(&mut self, x: u64) {
        self.a = (self.a ^ x).wrapping_mul(K2).rotate_left(29);
        self.b = (self.b ^ x.rotate_left(32)).wrapping_mul(K3).rotate_left(31) ^ self.a;
    }

    /// Append the low `n` bytes of `x` (1 <= n <= 8; the others zero).
    #[inline(always)]
    fn push(&mut self, x: u64, n: u32) {
        self.len += n as u64;
        let f = self.fill;
        self.acc |= x << f;
        let t = f + 8 * n;
        if t >= 64 {
            self.mix(self.acc);
            // The bits of x that did not fit (none when f = 0).
            self.acc = ((x as u128) >> (64 - f)) as u64;
            self.fill = t - 64;
        } else {
            self.fill = t;
        }
    }

    #[inline(always)]
    fn push_varint(&mut self, x: u64) {
        if x < 0x80 {
            self.push(x, 1);
        } else {
            self.push_varint_long(x);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_varint_long(&mut self, mut x: u64) {
        while x >= 0x80 {
            self.push((x & 0x7f) | 0x80, 1);
            x >>= 7;
        }
        self.push(x, 1);
    }

    pub fn finish128(&self) -> u128 {
        let mut h = Fingerprinter { a: self.a, b: self.b, acc: 0, fill: 0, len: 0 };
        h.mix(self.acc);
        h.mix(self.len);
        let fin = |mut z: u64| {
            z ^= z >> 33;
            z = z.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
            z ^= z >> 33;
            z = z.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
            z ^ (z >> 33)
        };
        ((fin(h.a ^ h.b.rotate_left(17)) as u128) << 64) | fin(h.b ^ h.a.rotate_left(41)) as u128
    }
}

impl Hasher for Fingerprinter {
    fn finish(&self) -> u64 {
        self.finish128() as u64
    }
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.push(u64::from_le_bytes(c.try_into().expect("8 bytes")), 8);
        }
        for &b in chunks.remainder() {
            self.push(b as u64, 1);
        }
    }
    #[inline(always)]
    fn write_u8(&mut self, i: u8) {
        self.push(i as u64, 1);
    }
    #[inline(always)]
    fn write_u16(&mut self, i: u16) {
        self.push(i as u64, 2);
    }
    #[inline(always)]
    fn write_u32(&mut self, i: u32) {
        self.push(i as u64, 4);
    }
    #[inline(always)]
    fn write_u64(&mut self, i: u64) {
        self.push(i, 8);
    }
    #[inline(always)]
    fn write_u128(&mut self, i: u128) {
        self.push(i as u64, 8);
        self.push((i >> 64) as u64, 8);
    }
    #[inline(always)]
    fn write_usize(&mut self, i: usize) {
        self.push_varint(i as u64);
    }
    #[inline(always)]
    fn write_isize(&mut self, i: isize) {
        self.push_varint(i as u64);
    }
}

#[inline]
pub fn fingerprint<T: Hash>(t: &T) -> u128 {
    let mut h = Fingerprinter::default();
    t.hash(&mut h);
    h.finish128()
}

/// A zeroed table of `n` slots. A large one is backed by huge pages where
/// the system allows it (Linux's transparent huge pages in "madvise" mode):
/// lookups are random, and with 4 KiB pages nearly each one would also miss
/// the TLB.
fn table(n: usize) -> Vec<u128> {
    let v = vec![0u128; n];
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = n * std::mem::size_of::<u128>();
        if bytes >= 2 * HUGE {
            extern "C" {
                fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: std::ffi::c_int) -> std::ffi::c_int;
            }
            const MADV_HUGEPAGE: std::ffi::c_int = 14;
            // The huge-page-aligned part of the (still untouched) table.
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

/// The visited set: open addressing with linear probing over a flat array
/// of fingerprints (one cache miss per lookup in the common case), indexed
/// by a fingerprint's low bits, which are already uniformly mixed. Zero
/// marks an empty slot; the fingerprint 0 itself is kept in a flag, so the
/// set is exact over fingerprints.
pub struct FingerprintSet {
    slots: Vec<u128>,
    len: usize,
    has_zero: bool,
}

impl Default for FingerprintSet {
    fn default() -> Self {
        FingerprintSet::with_capacity(0)
    }
}

impl FingerprintSet {
    /// A set that holds `n` fingerprints before it grows.
    pub fn with_capacity(n: usize) -> Self {
        let slots = (n * 4 / 3 + 1).next_power_of_two().max(1024);
        FingerprintSet { slots: table(slots), len: 0, has_zero: false }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn slot(&self, fp: u128) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = fp as usize & mask;
        loop {
            let s = self.slots[i];
            if s == fp {
                return Ok(i);
            }
            if s == 0 {
                return Err(i);
            }
            i = (i + 1) & mask;
        }
    }

    pub fn contains(&self, fp: u128) -> bool {
        if fp == 0 {
            return self.has_zero;
        }
        self.slot(fp).is_ok()
    }

    /// Start loading the slot where `fp` would be (a hint; no effect on
    /// the set).
    #[inline]
    pub fn prefetch(&self, fp: u128) {
        let i = fp as usize & (self.slots.len() - 1);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetching is a hint; any address is allowed, and this
        // one is in bounds.
        #[allow(unused_unsafe)]
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(self.slots.as_ptr().add(i) as *const i8);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// Add `fp`; true if it was not there.
    #[inline]
    pub fn insert(&mut self, fp: u128) -> bool {
        if fp == 0 {
            let new = !self.has_zero;
            self.has_zero = true;
            self.len += new as usize;
            return new;
        }
        match self.slot(fp) {
            Ok(_) => false,
            Err(i) => {
                self.slots[i] = fp;
                self.len += 1;
                // Keep the load at most 3/4.
                if self.len * 4 > self.slots.len() * 3 {
                    self.grow();
                }
                true
            }
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = table(old.len() * 2);
        let mask = self.slots.len() - 1;
        for fp in old.into_iter().filter(|&f| f != 0) {
            let mut i = fp as usize & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = fp;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_is_exact() {
        let mut s = FingerprintSet::default();
        let fps: Vec<u128> = (0..10_000u128).map(|i| fingerprint(&i) ^ (i << 100)).chain([0, 1, 2]).collect();
        for &f in &fps {
            assert!(s.insert(f));
        }
        for &f in &fps {
            assert!(!s.insert(f));
            assert!(s.contains(f));
        }
        assert_eq!(s.len(), fps.len());
        assert!(!s.contains(3));
    }

    #[test]
    fn long_streams() {
        // Longer than the buffer, at every alignment.
        for n in 0..700usize {
            let v: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
            let mut w = v.clone();
            assert_eq!(fingerprint(&v), fingerprint(&w));
            if n > 0 {
                w[n - 1] ^= 1;
                assert_ne!(fingerprint(&v), fingerprint(&w), "{n}");
                w[n - 1] ^= 1;
                w[n / 2] ^= 0x80;
                assert_ne!(fingerprint(&v), fingerprint(&w), "{n}");
            }
            let u: Vec<u16> = (0..n as u16).collect();
            let mut f = FingerprintSet::default();
            assert!(f.insert(fingerprint(&u)));
            assert!(f.insert(fingerprint(&(u, 1u8))));
        }
    }

    #[test]
    fn full_buffer() {
        let mut h = Fingerprinter::default();
        for i in 0..100u64 {
            h.write_u64(i);
        }
        let mut g = Fingerprinter::default();
        for i in 0..100u64 {
            g.write_u32(i as u32);
            g.write_u32(0);
        }
        assert_eq!(h.finish128(), g.finish128());
        g.write_u8(0);
        assert_ne!(h.finish128(), g.finish128());
    }

    #[test]
    fn stream_boundaries_matter() {
        assert_ne!(fingerprint(&(1u8, 2u16)), fingerprint(&(1u16, 2u8)));
        assert_ne!(fingerprint(&vec![0u8; 7]), fingerprint(&vec![0u8; 8]));
        assert_ne!(fingerprint(&Some(0u8)), fingerprint(&None::<u8>));
        assert_ne!(fingerprint(&(300usize, 0u8)), fingerprint(&(44usize, 2u8)));
        assert_eq!(fingerprint(&(5u32, "ab")), fingerprint(&(5u32, "ab")));
    }
}
