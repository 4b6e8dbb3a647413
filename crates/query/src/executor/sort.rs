//! SortExecutor (`ORDER BY`) and TopNExecutor (`ORDER BY ... | LIMIT`).

use crate::request::{Request, RowSource};
use crate::DataSet;
use quiver_common::budget::Meter;
use quiver_common::eval::eval;
use quiver_common::expr::Expr;
use quiver_common::{QError, QResult, Value};
use std::borrow::Borrow;
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
        keyed.sort_by(|(a, _), (b, _)| compare_keys(factors.iter().map(|(_, asc)| *asc), a, b));
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

/// A TopN's bound on a prefix of its sort keys, applied early (`push_topn_bound_below_append`): the rows whose
/// prefix is at most the `keep`-th best distinct prefix. A row past it sorts after `keep` rows with distinct
/// prefixes (so distinct rows too), which are all kept: it could be neither among the first `keep` rows nor among
/// the first `keep` distinct ones.
pub(crate) struct TopNFilterExecutor;

impl TopNFilterExecutor {
    pub fn execute(
        keys: &[(String, bool)],
        keep: usize,
        req: &Request<'_>,
        input: Option<&DataSet>,
    ) -> QResult<DataSet> {
        let data = input.ok_or_else(|| QError::execution("TopNFilter needs an input"))?;
        let Some(cols) = keys.iter().map(|(c, _)| data.column_index(c)).collect::<Option<Vec<usize>>>() else {
            // A column the plan expected is not there: filter nothing (the TopN above still decides).
            return Ok(data.clone());
        };
        if keep == 0 {
            return Ok(data.gather(&[]));
        }
        let order = |a: &[&Value], b: &[&Value]| compare_keys(keys.iter().map(|(_, asc)| *asc), a, b);
        // The best `keep` distinct prefixes so far, best first (`keep` is a LIMIT: small).
        let mut best: Vec<Vec<&Value>> = Vec::new();
        let mut meter = Meter::new(&req.budget);
        let mut key: Vec<&Value> = Vec::with_capacity(cols.len());
        for row in 0..data.len() {
            meter.tick()?;
            key.clear();
            key.extend(cols.iter().map(|&c| data.value(row, c)));
            if best.len() == keep && order(&key, &best[keep - 1]) != Ordering::Less {
                continue;
            }
            match best.binary_search_by(|b| order(b, &key)) {
                Ok(_) => {}
                Err(at) => {
                    best.insert(at, key.clone());
                    best.truncate(keep);
                }
            }
        }
        if best.len() < keep {
            return Ok(data.clone());
        }
        let bound = &best[keep - 1];
        let mut kept = Vec::new();
        for row in 0..data.len() {
            key.clear();
            key.extend(cols.iter().map(|&c| data.value(row, c)));
            if order(&key, bound) != Ordering::Greater {
                kept.push(row);
            }
        }
        Ok(data.gather(&kept))
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

/// Two rows' sort keys compared key by key, each ascending or not (`asc`, one per key).
fn compare_keys<A: Borrow<Value>, B: Borrow<Value>>(asc: impl IntoIterator<Item = bool>, a: &[A], b: &[B]) -> Ordering {
    for (i, asc) in asc.into_iter().enumerate() {
        let o = a[i].borrow().total_cmp(b[i].borrow());
        if o != Ordering::Equal {
            return if asc { o } else { o.reverse() };
        }
    }
    Ordering::Equal
}
