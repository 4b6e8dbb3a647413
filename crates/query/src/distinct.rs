//! DISTINCT over rows being produced: the rows already kept are remembered by position in the output, found by
//! hash, so a row is stored once (in the output) rather than cloned into a set beside it.

use quiver_common::fasthash::FastState;
use quiver_common::Value;
use std::hash::BuildHasher;

#[derive(Default)]
pub(crate) struct DistinctRows {
    table: hashbrown::HashTable<usize>,
    state: FastState,
}

impl DistinctRows {
    /// Whether `row` is not among `kept` yet (`kept` being every row this set has accepted, in order); if so it
    /// is remembered as `kept.len()`, where the caller must push it.
    pub(crate) fn is_new(&mut self, kept: &[Vec<Value>], row: &[Value]) -> bool {
        let state = self.state;
        let hash = state.hash_one(row);
        if self.table.find(hash, |&i| kept[i] == row).is_some() {
            return false;
        }
        self.table.insert_unique(hash, kept.len(), |&i| state.hash_one(kept[i].as_slice()));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_row_once_in_order() {
        let mut set = DistinctRows::default();
        let mut kept: Vec<Vec<Value>> = Vec::new();
        for i in [3, 1, 3, 2, 1, 3, 4] {
            let row = vec![Value::Int(i % 3), Value::str(format!("{i}"))];
            if set.is_new(&kept, &row) {
                kept.push(row);
            }
        }
        let got: Vec<i64> = kept.iter().map(|r| r[1].to_string().trim_matches('"').parse().unwrap()).collect();
        assert_eq!(got, vec![3, 1, 2, 4]);
    }
}
