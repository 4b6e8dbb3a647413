//! A small deterministic generator (xorshift64*) for seeded tests: a failure reproduces from its seed.

pub struct Rng(pub u64);

impl Rng {
    // reason: the generator never ends, so `Iterator`'s `Option` would only add an unwrap to every call.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
