//! HashInnerJoinExecutor: the rows of `YIELD ... FROM $a INNER JOIN $b ON $a.x == $b.y`, before the YIELD.

use crate::request::Request;
use crate::DataSet;
use quiver_common::budget::Meter;
use quiver_common::fasthash::FastMap;
use quiver_common::{QError, QResult, Value};

pub(crate) struct HashInnerJoinExecutor;

impl HashInnerJoinExecutor {
    /// Each pair of a row of `left` and a row of `right` whose key columns hold equal values, in `left`'s row
    /// order (then `right`'s), as one row: the columns `left.c`, then `right.c`.
    pub fn execute(left: &str, right: &str, left_col: &str, right_col: &str, req: &Request<'_>) -> QResult<DataSet> {
        let var =
            |name: &str| req.vars.get(name).ok_or_else(|| QError::semantic(format!("variable: `{name}' not exist")));
        let (l, r) = (var(left)?, var(right)?);
        let key = |data: &DataSet, var: &str, col: &str| {
            data.column_index(col).ok_or_else(|| QError::semantic(format!("`${var}.{col}', not exist prop `{col}'")))
        };
        let (lk, rk) = (key(l, left, left_col)?, key(r, right, right_col)?);
        let mut by_key: FastMap<&Value, Vec<usize>> = FastMap::default();
        for (row, v) in r.column(rk).iter().enumerate() {
            by_key.entry(v).or_default().push(row);
        }
        let columns = l.columns().iter().map(|c| format!("{left}.{c}"));
        let columns = columns.chain(r.columns().iter().map(|c| format!("{right}.{c}"))).collect();
        let mut out = DataSet::from_columns(columns, Vec::new());
        let mut meter = Meter::new(&req.budget);
        for (lrow, v) in l.column(lk).iter().enumerate() {
            for &rrow in by_key.get(v).map(Vec::as_slice).unwrap_or_default() {
                meter.tick()?;
                out.push_row(l.row(lrow).into_iter().chain(r.row(rrow)));
            }
        }
        Ok(out)
    }
}
