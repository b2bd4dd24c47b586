//! 128-bit state fingerprints for the visited set (hash compaction).
//!
//! The explorer stores only a 128-bit fingerprint per visited state, not the
//! state. Two different states with the same fingerprint would make the
//! second look visited, so a collision can only *omit* states, never add
//! false ones; with n states the chance of any collision is at most
//! n^2 / 2^129 (about 3e-25 for ten million states), which the report
//! prints. The two 64-bit lanes are independent multiply-rotate mixers.

use std::hash::{BuildHasherDefault, Hash, Hasher};

const K0: u64 = 0x9E37_79B9_7F4A_7C15;
const K1: u64 = 0xC2B2_AE3D_27D4_EB4F;
const K2: u64 = 0x1656_67B1_9E37_79F9;
const K3: u64 = 0xD6E8_FEB8_6659_FD93;

pub struct Fingerprinter {
    a: u64,
    b: u64,
}

impl Default for Fingerprinter {
    fn default() -> Self {
        Fingerprinter { a: K0, b: K1 }
    }
}

impl Fingerprinter {
    #[inline]
    fn mix(&mut self, x: u64) {
        self.a = (self.a ^ x).wrapping_mul(K2).rotate_left(29);
        self.b = (self.b ^ x.rotate_left(32)).wrapping_mul(K3).rotate_left(31) ^ self.a;
    }

    pub fn finish128(&self) -> u128 {
        let fin = |mut z: u64| {
            z ^= z >> 33;
            z = z.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
            z ^= z >> 33;
            z = z.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
            z ^ (z >> 33)
        };
        ((fin(self.a ^ self.b.rotate_left(17)) as u128) << 64) | fin(self.b ^ self.a.rotate_left(41)) as u128
    }
}

impl Hasher for Fingerprinter {
    fn finish(&self) -> u64 {
        self.finish128() as u64
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(buf) ^ ((rest.len() as u64) << 56));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.mix(i as u64 | 0x100);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.mix(i as u64 | 0x2_0000);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(i as u64 | 0x4_0000_0000);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }
}

pub fn fingerprint<T: Hash>(t: &T) -> u128 {
    let mut h = Fingerprinter::default();
    t.hash(&mut h);
    h.finish128()
}

/// Fingerprints are already uniformly mixed: hash them by their low bits.
#[derive(Default)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u128(&mut self, i: u128) {
        self.0 = i as u64;
    }
}

pub type FingerprintSet = std::collections::HashSet<u128, BuildHasherDefault<IdentityHasher>>;
