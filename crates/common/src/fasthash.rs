//! The hasher of the engine's hot maps and sets (VID dictionaries, frontiers, rows seen): a multiply-rotate over
//! 8-byte words finished with MurmurHash3's avalanche, several times cheaper than the standard SipHash on the
//! short keys these maps hold. Its seed is drawn once per process from the standard library's random keys, so
//! which keys collide cannot be chosen from outside.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

pub type FastMap<K, V> = HashMap<K, V, FastState>;
pub type FastSet<K> = HashSet<K, FastState>;

const K: u64 = 0x9e37_79b9_7f4a_7c15;

#[derive(Clone, Copy)]
pub struct FastState {
    seed: u64,
}

impl Default for FastState {
    fn default() -> FastState {
        static SEED: OnceLock<u64> = OnceLock::new();
        let seed = *SEED.get_or_init(|| std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64));
        FastState { seed }
    }
}

impl BuildHasher for FastState {
    type Hasher = FastHasher;

    fn build_hasher(&self) -> FastHasher {
        FastHasher(self.seed)
    }
}

pub struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(K).rotate_left(26);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            // The length goes in with the tail, so "a" and "a\0" differ.
            self.mix(u64::from_le_bytes(b) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.mix(i as u64);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(i as u64);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }

    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.mix(i as u64);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }

    /// MurmurHash3's 64-bit finalizer: every input bit reaches the low bits the table indexes with.
    #[inline]
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys that share their low bits (VIDs that are multiples of a power of two) still spread over the table's
    /// buckets, as do strings that differ only in their tails.
    #[test]
    fn spreads_keys_with_shared_low_bits() {
        let s = FastState::default();
        for keys in [(0..4096i64).map(|i| i << 20).collect::<Vec<_>>(), (0..4096i64).collect()] {
            let buckets: HashSet<u64> = keys.iter().map(|k| s.hash_one(k) & 4095).collect();
            assert!(buckets.len() > 2400, "{} of 4096 buckets used", buckets.len());
        }
        let strings: HashSet<u64> = (0..4096).map(|i| s.hash_one(format!("player{i:08}")) & 4095).collect();
        assert!(strings.len() > 2400, "{} of 4096 buckets used", strings.len());
        assert_ne!(s.hash_one("a"), s.hash_one("a\0"));
    }
}
