//! 128-bit state fingerprints (hash compaction).
//!
//! The explorer keys each visited state by its fingerprint, not the state
//! (the visited set is `check::store`, which keeps 70 of the 128 bits). Two
//! different states with the same key would make the second look visited,
//! so a collision can only *omit* states, never add false ones; the report
//! prints the bound. The hash has two 64-bit multiply-rotate lanes over the
//! state's bytes.

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

/// The fingerprint of a byte string (a packed state, `engine::pack`): the
/// same stream as [`Hasher::write`] would give, mixed a word at a time.
#[inline]
pub fn fingerprint_bytes(b: &[u8]) -> u128 {
    let mut h = Fingerprinter::default();
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        h.mix(u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let rest = words.remainder();
    let mut last = [0u8; 8];
    last[..rest.len()].copy_from_slice(rest);
    h.acc = u64::from_le_bytes(last);
    h.fill = 8 * rest.len() as u32;
    h.len = b.len() as u64;
    h.finish128()
}

#[inline]
pub fn fingerprint<T: Hash>(t: &T) -> u128 {
    let mut h = Fingerprinter::default();
    t.hash(&mut h);
    h.finish128()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_ne!(fingerprint(&u), fingerprint(&(u.clone(), 1u8)));
        }
    }

    #[test]
    fn bytes_hash_as_written() {
        for n in 0..40usize {
            let v: Vec<u8> = (0..n).map(|i| (i * 13 + 1) as u8).collect();
            let mut h = Fingerprinter::default();
            h.write(&v);
            assert_eq!(fingerprint_bytes(&v), h.finish128(), "{n}");
        }
        assert_ne!(fingerprint_bytes(&[0]), fingerprint_bytes(&[0, 0]));
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
