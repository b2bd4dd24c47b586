//! YCSB's scrambled Zipfian generator (Cooper et al., SoCC'10;
//! `site.ycsb.generator.ScrambledZipfianGenerator`), bit for bit: a
//! Zipfian over 10^10 items with YCSB's constant θ = 0.99 and its
//! precomputed ζ(10^10, 0.99), hashed with 64-bit FNV-1a onto the key
//! space, so popular keys are scattered rather than clustered at the start.
//! The test vectors in the unit tests were produced by YCSB's Java code.

/// YCSB's `ZIPFIAN_CONSTANT`.
pub const YCSB_THETA: f64 = 0.99;
/// YCSB's `ScrambledZipfianGenerator.ITEM_COUNT`.
const ITEM_COUNT: u64 = 10_000_000_000;
/// YCSB's `ScrambledZipfianGenerator.ZETAN`: ζ(ITEM_COUNT, 0.99).
const ZETAN: f64 = 26.469_028_201_783_02;

/// The Zipfian over `ITEM_COUNT` items (YCSB's `ZipfianGenerator` with a given ζ).
#[derive(Debug, Clone, Copy)]
pub struct ScrambledZipf {
    items: u64,
    theta: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
    half_pow_theta: f64,
}

impl ScrambledZipf {
    /// Keys `0..items`, YCSB's θ.
    pub fn ycsb(items: u64) -> Self {
        let theta = YCSB_THETA;
        let zeta2 = 1.0 + 0.5f64.powf(theta);
        ScrambledZipf {
            items: items.max(1),
            theta,
            zetan: ZETAN,
            alpha: 1.0 / (1.0 - theta),
            eta: (1.0 - (2.0 / ITEM_COUNT as f64).powf(1.0 - theta)) / (1.0 - zeta2 / ZETAN),
            half_pow_theta: 0.5f64.powf(theta),
        }
    }

    /// The rank drawn from the underlying Zipfian for a uniform `u` in [0, 1).
    #[inline]
    pub fn rank(&self, u: f64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + self.half_pow_theta {
            return 1;
        }
        (ITEM_COUNT as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
    }

    /// The key for a uniform `u` in [0, 1): the rank, hashed onto `0..items`.
    #[inline]
    pub fn key(&self, u: f64) -> u64 {
        fnv_hash64(self.rank(u)) % self.items
    }

    pub fn theta(&self) -> f64 {
        self.theta
    }
}

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 bytes of `val`, low byte
/// first, then Java's `Math.abs` of the signed result.
#[inline]
pub fn fnv_hash64(mut val: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        h ^= val & 0xff;
        val >>= 8;
        h = h.wrapping_mul(1_099_511_628_211);
    }
    (h as i64).unsigned_abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    // From YCSB's Java (Utils.fnvhash64 and ZipfianGenerator.nextValue) on this machine's JDK 17.
    #[test]
    fn fnv_hash_matches_ycsb() {
        assert_eq!(fnv_hash64(0), 6284781860667377211);
        assert_eq!(fnv_hash64(1), 8517097267634966620);
        assert_eq!(fnv_hash64(2), 1820151046732198393);
        assert_eq!(fnv_hash64(12345), 1792800413050876852);
        assert_eq!(fnv_hash64(9999999999), 3605131173811637474);
    }

    #[test]
    fn zipfian_ranks_and_scrambled_keys_match_ycsb() {
        let z = ScrambledZipf::ycsb(1000);
        for (u, rank, key) in [
            (0.0, 0, 211),
            (0.03, 0, 211),
            (0.05, 1, 620),
            (0.5, 134552, 260),
            (0.9, 1170869537, 670),
            (0.999999, 9999787802, 720),
        ] {
            assert_eq!(z.rank(u), rank, "u = {u}");
            assert_eq!(z.key(u), key, "u = {u}");
        }
    }
}
