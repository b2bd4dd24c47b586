//! A log-linear latency histogram: 16 linear sub-buckets per power of two,
//! so any percentile is within 1/16 (6.25 %) of the true value, in a fixed
//! array (no allocation when recording). Mean, min and max are exact.

const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = (SUB as usize) * (64 - SUB_BITS as usize + 1);

#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    pub count: u64,
    pub sum: u128,
    pub min: u64,
    pub max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self { counts: Box::new([0; BUCKETS]), count: 0, sum: 0, min: u64::MAX, max: 0 }
    }
}

#[inline]
fn bucket(v: u64) -> usize {
    if v < SUB {
        v as usize
    } else {
        let e = 63 - v.leading_zeros(); // >= SUB_BITS
        let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
        (SUB as usize) * (e - SUB_BITS + 1) as usize + sub as usize
    }
}

/// [lo, hi) of bucket `i`.
fn bounds(i: usize) -> (u64, u64) {
    if i < SUB as usize {
        (i as u64, i as u64 + 1)
    } else {
        let e = (i / SUB as usize) as u32 + SUB_BITS - 1;
        let sub = (i % SUB as usize) as u64;
        let width = 1u64 << (e - SUB_BITS);
        let lo = (1u64 << e) + sub * width;
        (lo, lo.saturating_add(width))
    }
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[bucket(v)] += 1;
        self.count += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a += b;
        }
        self.count += o.count;
        self.sum += o.sum;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The value at quantile `q` (0..=1): the midpoint of the bucket holding
    /// it, clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bounds(i);
                return (lo + (hi - lo) / 2).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Non-empty buckets as (lo, hi, count).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| {
            let (lo, hi) = bounds(i);
            (lo, hi, c)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values() {
        for v in [0u64, 1, 15, 16, 17, 31, 32, 1000, 123_456_789, u64::MAX / 3] {
            let (lo, hi) = bounds(bucket(v));
            assert!(lo <= v && v < hi.max(lo + 1), "{v} not in [{lo},{hi})");
        }
    }

    #[test]
    fn quantiles_are_within_a_sixteenth() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v);
        }
        let p50 = h.quantile(0.5) as f64;
        assert!((p50 - 50_000.0).abs() / 50_000.0 < 1.0 / 16.0, "{p50}");
        let p99 = h.quantile(0.99) as f64;
        assert!((p99 - 99_000.0).abs() / 99_000.0 < 1.0 / 16.0, "{p99}");
        assert_eq!(h.mean(), 50_000.5);
        assert_eq!((h.min, h.max), (1, 100_000));
    }
}
