//! MurmurHash2, 64-bit version A, with NebulaGraph's seed. `hash("str")` in nGQL and the partition of a string
//! VID both use it, so that integer VIDs made with `hash()` match NebulaGraph's.

/// NebulaGraph's seed for MurmurHash2-64A.
pub const NEBULA_SEED: u64 = 0xc70f_6907;

/// MurmurHash2-64A (Austin Appleby's `MurmurHash64A`) over `data` with `seed`.
pub fn murmur2_64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let len = data.len();
    let mut h: u64 = seed ^ (len as u64).wrapping_mul(M);
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        let mut k = u64::from_le_bytes(chunk.try_into().expect("chunk of 8"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, b) in tail.iter().enumerate() {
            h ^= (*b as u64) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// NebulaGraph's `hash()` of a string: MurmurHash2-64A with its seed, read as a signed integer.
pub fn nebula_hash(data: &[u8]) -> i64 {
    murmur2_64a(data, NEBULA_SEED) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_nebula_hash_values() {
        // VIDs of NebulaGraph's `nba_int_vid` test graph, which are `hash(name)`.
        assert_eq!(nebula_hash(b"Tony Parker"), -7579316172763586624);
        assert_eq!(nebula_hash(b"Tim Duncan"), 5662213458193308137);
        assert_eq!(nebula_hash(b"Danny Green"), -4246510323023722591);
    }
}
