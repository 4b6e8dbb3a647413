//! The first rows of a stream by sort keys, kept in a bounded heap: exactly what a stable sort followed by a limit
//! keeps (ties in the order the rows arrived), without holding more than the limit.

use quiver_common::Value;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

pub(crate) struct TopRows<T> {
    /// Per key: ascending or not.
    asc: Vec<bool>,
    keep: usize,
    /// A max-heap on (keys, arrival): its root is the row that leaves first when a better one arrives.
    heap: BinaryHeap<Entry<T>>,
    arrived: u64,
}

struct Entry<T> {
    keys: Vec<Key>,
    arrival: u64,
    item: T,
}

struct Key {
    value: Value,
    asc: bool,
}

impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Key {
    fn cmp(&self, o: &Self) -> Ordering {
        let c = self.value.total_cmp(&o.value);
        if self.asc {
            c
        } else {
            c.reverse()
        }
    }
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl<T> Eq for Entry<T> {}

impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl<T> Ord for Entry<T> {
    fn cmp(&self, o: &Self) -> Ordering {
        self.keys.cmp(&o.keys).then(self.arrival.cmp(&o.arrival))
    }
}

impl<T> TopRows<T> {
    pub(crate) fn new(asc: Vec<bool>, keep: usize) -> TopRows<T> {
        TopRows { asc, keep, heap: BinaryHeap::with_capacity(keep.min(1 << 16) + 1), arrived: 0 }
    }

    /// Whether a row with `keys`, arriving now, would be kept (so far).
    pub(crate) fn admits(&self, keys: &[Value]) -> bool {
        if self.heap.len() < self.keep {
            return true;
        }
        let Some(top) = self.heap.peek() else { return false };
        // An equal row that arrived earlier goes first, so only a strictly better one enters.
        for ((k, t), asc) in keys.iter().zip(&top.keys).zip(&self.asc) {
            let c = k.total_cmp(&t.value);
            let c = if *asc { c } else { c.reverse() };
            if c != Ordering::Equal {
                return c == Ordering::Less;
            }
        }
        false
    }

    /// Offers a row; returns the item that no longer belongs to the first `keep` (the row itself when it does
    /// not enter).
    pub(crate) fn push(&mut self, keys: Vec<Value>, item: T) -> Option<T> {
        if !self.admits(&keys) {
            return Some(item);
        }
        let keys = keys.into_iter().zip(&self.asc).map(|(value, &asc)| Key { value, asc }).collect();
        self.heap.push(Entry { keys, arrival: self.arrived, item });
        self.arrived += 1;
        if self.heap.len() > self.keep {
            return self.heap.pop().map(|e| e.item);
        }
        None
    }

    /// The kept items, first first.
    pub(crate) fn into_sorted(self) -> Vec<T> {
        self.heap.into_sorted_vec().into_iter().map(|e| e.item).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver_common::rng::Rng;

    /// Against a stable sort and a cut, on random keys with many ties, ascending and descending.
    #[test]
    fn keeps_what_a_stable_sort_and_limit_keep() {
        let mut rng = Rng(7);
        for round in 0..200 {
            let n = rng.below(60) as usize;
            let keep = rng.below(12) as usize;
            let asc = vec![round % 2 == 0, round % 3 == 0];
            let rows: Vec<(i64, i64)> = (0..n).map(|_| (rng.below(4) as i64, rng.below(3) as i64)).collect();
            let mut top = TopRows::new(asc.clone(), keep);
            for (i, (a, b)) in rows.iter().enumerate() {
                top.push(vec![Value::Int(*a), Value::Int(*b)], i);
            }
            let dir = |o: Ordering, asc: bool| if asc { o } else { o.reverse() };
            let mut want: Vec<usize> = (0..n).collect();
            want.sort_by(|&x, &y| dir(rows[x].0.cmp(&rows[y].0), asc[0]).then(dir(rows[x].1.cmp(&rows[y].1), asc[1])));
            want.truncate(keep);
            assert_eq!(top.into_sorted(), want, "round {round}");
        }
    }
}
