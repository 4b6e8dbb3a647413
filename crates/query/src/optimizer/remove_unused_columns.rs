//! `remove_unused_columns`: a GO or projection stops computing columns that the projection or GROUP BY reading
//! it never uses, so their properties are never fetched (this rule runs before `push_projection_into_go`).
//!
//! Preconditions: the reader is a projection or GROUP BY without variables; the producer is a GO or a plain
//! projection, not DISTINCT (which compares whole rows). A column is removed only if no `$-.c` of the reader names
//! it, it evaluates without error on every row (so no error is lost), and, in a GO, it does not read the GO's
//! input (which decides how results join back onto input rows). At least one column stays, so row counts hold.
//!
//! ```text
//! before:  Aggregate [keys: $-.d; columns: $-.d, COUNT(*)]       after:  Aggregate [...]
//!            Go [edge props: none; columns: d, l, n]                       Go [columns: d]
//! ```

use super::{cannot_fail, input_columns, output_columns, reads_var, Rule, RuleContext};
use crate::planner::{Op, PlanNode};
use quiver_common::expr::Expr;
use quiver_syntax::ast::YieldClause;

pub(crate) struct RemoveUnusedColumns;

impl Rule for RemoveUnusedColumns {
    fn name(&self) -> &'static str {
        "remove_unused_columns"
    }

    fn apply(&self, node: &mut PlanNode, _ctx: &RuleContext<'_>) -> bool {
        let read: Vec<&Expr> = match &node.op {
            Op::Project { yield_clause, filter } => {
                yield_clause.columns.iter().map(|c| &c.expr).chain(filter.iter()).collect()
            }
            Op::Aggregate { keys, yield_clause } => {
                keys.iter().chain(yield_clause.columns.iter().map(|c| &c.expr)).collect()
            }
            _ => return false,
        };
        if reads_var(read.iter().copied()) || !node.branches.is_empty() {
            return false;
        }
        let Some(producer) = &mut node.input else { return false };
        let below = producer.input.as_deref().and_then(output_columns);
        let (y, is_go): (&mut YieldClause, bool) = match &mut producer.op {
            Op::Go(g) => match &mut g.go.stmt.yield_clause {
                Some(y) => (y, true),
                None => return false,
            },
            Op::Project { yield_clause, filter } => {
                if yield_clause.columns.iter().any(|c| c.expr.has_aggregate())
                    || reads_var(yield_clause.columns.iter().map(|c| &c.expr).chain(filter.iter()))
                {
                    return false;
                }
                (yield_clause, false)
            }
            _ => return false,
        };
        if y.distinct {
            return false;
        }
        // Only now, under a producer this rule rewrites, the columns the node reads (a MATCH's RETURN stands over
        // pattern operators: no need to gather them).
        let used = input_columns(read.iter().copied());
        let removable = |c: &quiver_syntax::ast::YieldColumn| {
            !used.contains(&c.name())
                && cannot_fail(&c.expr, if is_go { None } else { below.as_deref() })
                && !(is_go && c.expr.reads_input())
        };
        let before = y.columns.len();
        let mut kept: Vec<_> = y.columns.iter().filter(|c| !removable(c)).cloned().collect();
        if kept.is_empty() {
            kept.push(y.columns[0].clone());
        }
        if kept.len() == before {
            return false;
        }
        y.columns = kept;
        true
    }
}
