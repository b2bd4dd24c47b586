//! Random streams. Every requester gets its own PCG stream derived from the
//! run's seed and its index, so adding a requester never changes what the
//! others do, and the same seed gives the same run on any machine.

use rand_core::RngCore;
use rand_pcg::Pcg64Mcg;

#[derive(Clone)]
pub struct Stream(Pcg64Mcg);

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xorshift64*: a tiny generator whose whole state is one word, for
/// agents whose state must be hashable and packed (the BI benchmarks).
pub fn xorshift64star(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// A stateless mix of several words, for deterministic choices (route
/// selection) that must not consume a random stream.
pub fn mix(a: u64, b: u64, c: u64) -> u64 {
    splitmix64(splitmix64(splitmix64(a) ^ b) ^ c)
}

impl Stream {
    pub fn new(seed: u64, stream: u64) -> Self {
        let s = ((splitmix64(seed) as u128) << 64) | splitmix64(seed ^ splitmix64(stream.wrapping_add(1))) as u128;
        Stream(Pcg64Mcg::new(s | 1))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1) with 53 bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n) without modulo bias (Lemire's method).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = (self.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let t = n.wrapping_neg() % n;
            while (m as u64) < t {
                m = (self.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as u64
    }

    /// Exponentially distributed with the given mean (inverse transform).
    #[inline]
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.unit()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut s = Stream::new(7, 0);
                move |_| s.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut s = Stream::new(7, 0);
                move |_| s.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut s = Stream::new(7, 1);
                move |_| s.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn exponential_mean() {
        let mut s = Stream::new(1, 0);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| s.exp(10.0)).sum::<f64>() / n as f64;
        assert!((m - 10.0).abs() < 0.1, "{m}");
    }
}
