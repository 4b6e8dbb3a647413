//! SetExecutor: UNION [ALL|DISTINCT], INTERSECT and MINUS of two branches' rows.

use crate::distinct::DistinctRows;
use crate::DataSet;
use quiver_common::fasthash::FastSet as HashSet;
use quiver_common::{QError, QResult};
use quiver_syntax::ast::SetOp;

pub(crate) struct SetExecutor;

impl SetExecutor {
    pub fn execute(op: SetOp, l: DataSet, r: DataSet) -> QResult<DataSet> {
        if l.columns().len() != r.columns().len() {
            return Err(QError::semantic("number of columns to UNION/INTERSECT/MINUS must be same"));
        }
        if op == SetOp::UnionAll {
            let mut out = l;
            out.append(r);
            return Ok(out);
        }
        // The rows that may enter, each kept once (in order) by the same hash-by-position DISTINCT uses.
        let (right, more) = if op == SetOp::Union {
            (HashSet::default(), r.into_rows())
        } else {
            (r.rows().collect::<HashSet<_>>(), Vec::new())
        };
        let mut out = l.empty_like();
        let mut seen = DistinctRows::default();
        for row in l.into_rows().into_iter().chain(more) {
            let wanted = match op {
                SetOp::Intersect => right.contains(&row),
                SetOp::Minus => !right.contains(&row),
                _ => true,
            };
            if wanted {
                out.push_row(row);
                seen.admit_last(&mut out);
            }
        }
        Ok(out)
    }
}
