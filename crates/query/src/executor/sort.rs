//! SortExecutor (`ORDER BY`) and TopNExecutor (`ORDER BY ... | LIMIT`).

use crate::request::{Request, RowSource};
use crate::DataSet;
use quiver_common::budget::Meter;
use quiver_common::eval::eval;
use quiver_common::expr::Expr;
use quiver_common::{QError, QResult, Value};
use std::cmp::Ordering;

/// `ORDER BY`: a stable sort of the piped rows.
pub(crate) struct SortExecutor;

/// `ORDER BY ... | LIMIT offset, count` without sorting every row: a bounded heap keeps the first
/// `offset + count` rows by (keys, position), which is exactly what a stable sort followed by the limit keeps.
pub(crate) struct TopNExecutor;

impl SortExecutor {
    pub fn execute(factors: &[(Expr, bool)], req: &Request<'_>, input: Option<&DataSet>) -> QResult<DataSet> {
        let data = input.ok_or_else(|| QError::semantic("ORDER BY needs an input, as in `... | ORDER BY $-.c'"))?;
        let mut keyed = sort_keys(factors, req, data)?;
        keyed.sort_by(|(a, _), (b, _)| compare_keys(factors, a, b));
        Ok(data.gather(&keyed.into_iter().map(|(_, pos)| pos).collect::<Vec<_>>()))
    }
}

impl TopNExecutor {
    pub fn execute(
        factors: &[(Expr, bool)],
        offset: usize,
        count: usize,
        req: &Request<'_>,
        input: Option<&DataSet>,
    ) -> QResult<DataSet> {
        let data = input.ok_or_else(|| QError::semantic("ORDER BY needs an input, as in `... | ORDER BY $-.c'"))?;
        let keep = offset.saturating_add(count);
        let src = RowSource { var: None, data };
        let mut top = crate::top::TopRows::new(factors.iter().map(|(_, asc)| *asc).collect(), keep);
        if keep > 0 {
            let mut meter = Meter::new(&req.budget);
            for pos in 0..data.len() {
                meter.tick()?;
                let ctx = src.context(req, pos);
                let keys = factors.iter().map(|(e, _)| eval(e, &ctx)).collect::<QResult<Vec<_>>>()?;
                top.push(keys, pos);
            }
        }
        Ok(data.gather(&top.into_sorted().into_iter().skip(offset).collect::<Vec<_>>()))
    }
}

/// Each row's sort keys, with its position.
fn sort_keys(factors: &[(Expr, bool)], req: &Request<'_>, data: &DataSet) -> QResult<Vec<(Vec<Value>, usize)>> {
    let src = RowSource { var: None, data };
    let mut keyed = Vec::with_capacity(data.len());
    let mut meter = Meter::new(&req.budget);
    for row in 0..data.len() {
        meter.tick()?;
        let ctx = src.context(req, row);
        keyed.push((factors.iter().map(|(e, _)| eval(e, &ctx)).collect::<QResult<Vec<_>>>()?, row));
    }
    Ok(keyed)
}

fn compare_keys(factors: &[(Expr, bool)], a: &[Value], b: &[Value]) -> Ordering {
    for (i, (_, asc)) in factors.iter().enumerate() {
        let o = a[i].total_cmp(&b[i]);
        if o != Ordering::Equal {
            return if *asc { o } else { o.reverse() };
        }
    }
    Ordering::Equal
}
