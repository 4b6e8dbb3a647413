//! The table operators pass to each other and a request returns: named columns of values, stored column by
//! column.
//!
//! A batch of `n` rows and `k` columns is `k` vectors of `n` values, so producing or moving a batch costs one
//! allocation per column rather than one per row, an operator that passes a column through moves or gathers that
//! column alone, and a consumer reads a row as one position across the columns. Rows exist as `Vec<Value>` only
//! where a caller asks for them ([`DataSet::row`], [`DataSet::rows`]): the client-facing edges, tests, and the
//! few operators that key a hash set by whole rows.

use crate::PlanDesc;
use quiver_common::Value;
use std::hash::{Hash, Hasher};
use std::ops::Range;

/// The rows `skip..skip + count` of `len` rows, clamped to them: what an `OFFSET skip LIMIT count` keeps.
pub(crate) fn window(len: usize, skip: usize, count: usize) -> Range<usize> {
    let start = skip.min(len);
    start..start.saturating_add(count).min(len)
}

/// A result table, with the plan when the statement was an EXPLAIN or PROFILE.
///
/// **Invariant:** there is one value vector per column name, and every vector holds [`DataSet::len`] values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DataSet {
    columns: Vec<String>,
    data: Vec<Vec<Value>>,
    len: usize,
    pub plan: Option<Box<PlanDesc>>,
}

impl DataSet {
    /// A table of `rows`, each as wide as `columns`.
    pub fn new(columns: Vec<String>, rows: Vec<Vec<Value>>) -> DataSet {
        let mut d = DataSet::from_columns(columns, Vec::new());
        d.reserve(rows.len());
        for row in rows {
            d.push_row(row);
        }
        d
    }

    /// A table of the given column vectors, all of one length; no vectors at all is an empty table.
    pub fn from_columns(columns: Vec<String>, mut data: Vec<Vec<Value>>) -> DataSet {
        if data.is_empty() {
            data = vec![Vec::new(); columns.len()];
        }
        assert_eq!(data.len(), columns.len(), "one value vector per column");
        let len = data.first().map_or(0, Vec::len);
        assert!(data.iter().all(|c| c.len() == len), "columns of one length");
        DataSet { columns, data, len, plan: None }
    }

    pub fn empty() -> DataSet {
        DataSet::default()
    }

    pub fn with_columns(columns: &[&str]) -> DataSet {
        DataSet::from_columns(columns.iter().map(|c| c.to_string()).collect(), Vec::new())
    }

    /// The same columns, no rows.
    pub fn empty_like(&self) -> DataSet {
        DataSet::from_columns(self.columns.clone(), Vec::new())
    }

    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Renames the columns; the count must stay.
    pub fn rename(&mut self, columns: Vec<String>) {
        assert_eq!(columns.len(), self.columns.len(), "a rename keeps the column count");
        self.columns = columns;
    }

    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The values of column `c`, one per row.
    pub fn column(&self, c: usize) -> &[Value] {
        &self.data[c]
    }

    pub fn value(&self, row: usize, c: usize) -> &Value {
        &self.data[c][row]
    }

    /// Row `i`, copied out.
    pub fn row(&self, i: usize) -> Vec<Value> {
        self.data.iter().map(|c| c[i].clone()).collect()
    }

    /// Every row, copied out.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = Vec<Value>> + '_ {
        (0..self.len).map(|i| self.row(i))
    }

    /// Every row, moved out.
    pub fn into_rows(self) -> Vec<Vec<Value>> {
        let mut rows: Vec<Vec<Value>> = (0..self.len).map(|_| Vec::with_capacity(self.data.len())).collect();
        for col in self.data {
            for (row, v) in rows.iter_mut().zip(col) {
                row.push(v);
            }
        }
        rows
    }

    pub fn reserve(&mut self, rows: usize) {
        self.data.iter_mut().for_each(|c| c.reserve(rows));
    }

    /// Appends one row, as wide as the columns.
    pub fn push_row(&mut self, row: impl IntoIterator<Item = Value>) {
        let mut values = row.into_iter();
        for c in &mut self.data {
            c.push(values.next().expect("a row as wide as the columns"));
        }
        assert!(values.next().is_none(), "a row as wide as the columns");
        self.len += 1;
    }

    /// Appends row `row` of `input`, whose columns are this table's first ones, then `extra` for the others:
    /// a row extended without being copied out first.
    pub fn push_extended(&mut self, input: &DataSet, row: usize, extra: impl IntoIterator<Item = Value>) {
        let width = input.data.len();
        for (c, col) in self.data[..width].iter_mut().zip(&input.data) {
            c.push(col[row].clone());
        }
        let mut values = extra.into_iter();
        for c in &mut self.data[width..] {
            c.push(values.next().expect("a row as wide as the columns"));
        }
        assert!(values.next().is_none(), "a row as wide as the columns");
        self.len += 1;
    }

    /// Appends row `row` of `input`, which has this table's columns, with column `c` set to `value`.
    pub fn push_replaced(&mut self, input: &DataSet, row: usize, c: usize, value: Value) {
        self.push_replaced_extended(input, row, c, value, std::iter::empty());
    }

    /// Appends row `row` of `input`, whose columns are this table's first ones, with column `c` set to `value`,
    /// then `extra` for the other columns.
    pub fn push_replaced_extended(
        &mut self,
        input: &DataSet,
        row: usize,
        c: usize,
        value: Value,
        extra: impl IntoIterator<Item = Value>,
    ) {
        let width = input.data.len();
        let mut value = Some(value);
        for (i, (out, col)) in self.data[..width].iter_mut().zip(&input.data).enumerate() {
            out.push(if i == c { value.take().expect("one column replaced") } else { col[row].clone() });
        }
        let mut values = extra.into_iter();
        for out in &mut self.data[width..] {
            out.push(values.next().expect("a row as wide as the columns"));
        }
        assert!(values.next().is_none() && value.is_none(), "a row as wide as the columns");
        self.len += 1;
    }

    /// Appends one row whose values `value` gives column by column; when it fails on a column, nothing is
    /// appended and its error is returned.
    pub fn push_row_with<E>(&mut self, mut value: impl FnMut(usize) -> Result<Value, E>) -> Result<(), E> {
        for c in 0..self.data.len() {
            match value(c) {
                Ok(v) => self.data[c].push(v),
                Err(e) => {
                    self.data[..c].iter_mut().for_each(|col| col.truncate(self.len));
                    return Err(e);
                }
            }
        }
        self.len += 1;
        Ok(())
    }

    /// Removes the last row.
    pub fn pop_row(&mut self) {
        assert!(self.len > 0, "a row to remove");
        self.data.iter_mut().for_each(|c| c.truncate(self.len - 1));
        self.len -= 1;
    }

    /// The column names and value vectors.
    pub fn into_columns(self) -> (Vec<String>, Vec<Vec<Value>>) {
        (self.columns, self.data)
    }

    /// Appends the rows of `other`, which has the same columns.
    pub fn append(&mut self, other: DataSet) {
        assert_eq!(other.data.len(), self.data.len(), "appended rows have the same columns");
        for (c, o) in self.data.iter_mut().zip(other.data) {
            c.extend(o);
        }
        self.len += other.len;
    }

    /// The rows at `positions`, in that order.
    pub fn gather(&self, positions: &[usize]) -> DataSet {
        let data = self.data.iter().map(|c| positions.iter().map(|&i| c[i].clone()).collect()).collect();
        DataSet { columns: self.columns.clone(), data, len: positions.len(), plan: None }
    }

    /// The rows in `range`, copied out.
    pub fn slice(&self, range: Range<usize>) -> DataSet {
        let len = range.len();
        let data = self.data.iter().map(|c| c[range.clone()].to_vec()).collect();
        DataSet { columns: self.columns.clone(), data, len, plan: None }
    }

    /// Keeps the rows in `range` and drops the others.
    pub fn keep(&mut self, range: Range<usize>) {
        for c in &mut self.data {
            c.truncate(range.end);
            c.drain(..range.start);
        }
        self.len = range.len();
    }

    /// Splits off the first `n` rows (or all there are) as a table of their own.
    pub fn take_front(&mut self, n: usize) -> DataSet {
        let n = n.min(self.len);
        let data = self.data.iter_mut().map(|c| c.drain(..n).collect()).collect();
        self.len -= n;
        DataSet { columns: self.columns.clone(), data, len: n, plan: None }
    }

    /// Feeds row `i` to `state`, value by value (as hashing the row's values as a slice would, length first).
    pub fn hash_row<H: Hasher>(&self, i: usize, state: &mut H) {
        state.write_usize(self.data.len());
        for c in &self.data {
            c[i].hash(state);
        }
    }

    /// Whether row `i` equals `other`'s row `j` (both tables having the same width).
    pub fn row_eq(&self, i: usize, other: &DataSet, j: usize) -> bool {
        self.data.iter().zip(&other.data).all(|(a, b)| a[i] == b[j])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[[i64; 2]]) -> DataSet {
        DataSet::new(
            vec!["a".into(), "b".into()],
            rows.iter().map(|r| r.iter().map(|&v| Value::Int(v)).collect()).collect(),
        )
    }

    #[test]
    fn rows_in_and_out_keep_their_order() {
        let t = table(&[[1, 2], [3, 4], [5, 6]]);
        assert_eq!(t.len(), 3);
        assert_eq!(t.column(1), &[Value::Int(2), Value::Int(4), Value::Int(6)]);
        assert_eq!(t.row(1), vec![Value::Int(3), Value::Int(4)]);
        assert_eq!(t.clone().into_rows(), t.rows().collect::<Vec<_>>());
        assert_eq!(t.gather(&[2, 0]), table(&[[5, 6], [1, 2]]));
        assert_eq!(t.slice(1..3), table(&[[3, 4], [5, 6]]));
        assert_eq!((window(3, 1, 5), window(3, 5, 1), window(3, 0, usize::MAX)), (1..3, 3..3, 0..3));
        let mut k = t.clone();
        k.keep(1..2);
        assert_eq!(k, table(&[[3, 4]]));
        let mut rest = t.clone();
        assert_eq!(rest.take_front(2), table(&[[1, 2], [3, 4]]));
        assert_eq!(rest, table(&[[5, 6]]));
        assert_eq!(rest.take_front(5), table(&[[5, 6]]));
        assert!(rest.is_empty());
        let mut p = table(&[[1, 2]]);
        let failed: Result<(), &str> =
            p.push_row_with(|c| if c == 0 { Ok(Value::Int(7)) } else { Err("second column") });
        assert_eq!(failed, Err("second column"));
        assert_eq!(p, table(&[[1, 2]]));
        p.push_row_with(|c| Ok::<_, ()>(Value::Int(c as i64))).unwrap();
        assert_eq!(p, table(&[[1, 2], [0, 1]]));
        p.pop_row();
        assert_eq!(p, table(&[[1, 2]]));
        let mut a = table(&[[1, 2]]);
        a.append(table(&[[3, 4]]));
        assert_eq!(a, table(&[[1, 2], [3, 4]]));
    }

    #[test]
    fn a_row_hashes_and_compares_as_its_values() {
        use std::hash::BuildHasher;
        let t = table(&[[1, 2], [3, 4], [1, 2]]);
        let s = quiver_common::fasthash::FastState::default();
        let h = |i: usize| {
            let mut st = s.build_hasher();
            t.hash_row(i, &mut st);
            st.finish()
        };
        assert_eq!(h(0), h(2));
        assert_ne!(h(0), h(1));
        assert!(t.row_eq(0, &t, 2) && !t.row_eq(0, &t, 1));
    }

    #[test]
    #[should_panic(expected = "a row as wide as the columns")]
    fn a_short_row_is_refused() {
        let mut t = table(&[]);
        t.push_row([Value::Int(1)]);
    }
}
