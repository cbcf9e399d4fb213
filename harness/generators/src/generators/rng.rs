//! The harness's one PRNG, SplitMix64 (Steele, Lea & Flood, OOPSLA 2014), and the pure
//! seeding of a gate case from `(seed, target, index)`.

#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }

    /// A value in `0..n` (`n > 0`; slight modulo bias).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// An index in `0..n`; 0 when `n == 0`.
    #[inline]
    pub fn index(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    #[inline]
    pub fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }

    #[inline]
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    pub fn fill(&mut self, out: &mut [u8]) {
        for c in out.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        self.fill(&mut v);
        v
    }
}

#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 64-bit FNV-1a (stable across runs and platforms: corpus file names, program padding).
#[inline]
pub fn fnv1a64(data: &[u8]) -> u64 {
    fnv1a64_on(0xcbf2_9ce4_8422_2325, data)
}

/// [`fnv1a64`] continued from hash `h`.
#[inline]
pub fn fnv1a64_on(h: u64, data: &[u8]) -> u64 {
    data.iter().fold(h, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

pub fn name_hash(s: &str) -> u64 {
    fnv1a64(s.as_bytes())
}

/// The generator of case `i` of the target whose [`name_hash`] is `target_hash`.
#[inline]
pub fn case_rng(seed: u64, target_hash: u64, i: u64) -> SplitMix64 {
    SplitMix64(mix64(
        mix64(seed ^ 0x5EED_0F7B_C0DE) ^ target_hash ^ mix64(i.wrapping_add(0xA5A5)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // First outputs of SplitMix64 seeded with 0 (the reference
        // implementation, Vigna's splitmix64.c).
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn case_rng_is_pure() {
        let h = name_hash("validate_header");
        assert_eq!(case_rng(1, h, 5).next_u64(), case_rng(1, h, 5).next_u64());
        assert_ne!(case_rng(1, h, 5).next_u64(), case_rng(1, h, 6).next_u64());
    }

    #[test]
    fn index_of_empty_is_zero() {
        assert_eq!(SplitMix64(3).index(0), 0);
    }
}
