//! The generators' small PRNG (program padding, bulk group arguments, mutators).

/// SplitMix64 (Steele, Lea, Flood 2014): the padding's and the mutators' PRNG.
#[derive(Clone, Debug)]
pub struct Mix(pub u64);

impl Mix {
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; 0 for `n == 0`).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// A byte.
    pub fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }
}
