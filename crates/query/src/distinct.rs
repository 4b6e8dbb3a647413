//! DISTINCT over rows being produced: the rows already kept are remembered by position in the output table, found
//! by hash, so a row is stored once (in the output) rather than cloned into a set beside it.

use crate::DataSet;
use quiver_common::fasthash::FastState;
use std::hash::{BuildHasher, Hasher};

#[derive(Default)]
pub(crate) struct DistinctRows {
    table: hashbrown::HashTable<usize>,
    state: FastState,
}

impl DistinctRows {
    /// `kept` holds every row this set has accepted, in order, and then one row just appended: keeps that row if
    /// it is new (and remembers it), else removes it. Returns whether it was kept.
    pub(crate) fn admit_last(&mut self, kept: &mut DataSet) -> bool {
        let last = kept.len() - 1;
        let state = self.state;
        let hash = |i: usize| {
            let mut h = state.build_hasher();
            kept.hash_row(i, &mut h);
            h.finish()
        };
        let h = hash(last);
        if self.table.find(h, |&i| kept.row_eq(i, kept, last)).is_some() {
            kept.pop_row();
            return false;
        }
        self.table.insert_unique(h, last, |&i| hash(i));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver_common::Value;

    #[test]
    fn keeps_each_row_once_in_order() {
        let mut set = DistinctRows::default();
        let mut kept = DataSet::with_columns(&["k", "v"]);
        for i in [3, 1, 3, 2, 1, 3, 4] {
            kept.push_row([Value::Int(i % 3), Value::str(format!("{i}"))]);
            set.admit_last(&mut kept);
        }
        let got: Vec<Value> = kept.column(1).to_vec();
        assert_eq!(got, ["3", "1", "2", "4"].map(Value::str).to_vec());
    }
}
