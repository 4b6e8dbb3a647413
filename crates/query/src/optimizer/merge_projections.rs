//! `merge_projections`: a projection over a projection becomes one, evaluating the outer columns directly over
//! the inner projection's input, so no intermediate rows are built.
//!
//! Preconditions: both are plain projections (no aggregates, no variables); the inner one is not DISTINCT; at most
//! one of them has a WHERE; every `$-.c` the outer one reads names exactly one inner column; and every inner column
//! evaluates without error on every input row (so dropping the ones the outer does not read loses no error).
//! Outer columns keep their names.
//!
//! ```text
//! before:  Project [columns: x]                          after:  Project [filter: ($-.l>90); columns: x]
//!            FilterProject [filter: ($-.l>90); columns: d, l]        Go [columns: d, l]
//!              Go [columns: d, l]
//! ```

use super::{cannot_fail, input_columns, output_columns, reads_var, Rule, RuleContext};
use crate::planner::{Op, PlanNode};
use quiver_common::expr::Expr;
use quiver_syntax::ast::{YieldClause, YieldColumn};
use std::collections::HashMap;

pub(crate) struct MergeProjections;

fn plain(y: &YieldClause, filter: Option<&Expr>) -> bool {
    !y.columns.iter().any(|c| c.expr.has_aggregate()) && !reads_var(y.columns.iter().map(|c| &c.expr).chain(filter))
}

impl Rule for MergeProjections {
    fn name(&self) -> &'static str {
        "merge_projections"
    }

    fn apply(&self, node: &mut PlanNode, _ctx: &RuleContext<'_>) -> bool {
        let Op::Project { yield_clause: outer, filter: outer_filter } = &node.op else { return false };
        let Some(inner_node) = &node.input else { return false };
        let Op::Project { yield_clause: inner, filter: inner_filter } = &inner_node.op else { return false };
        if !node.branches.is_empty() || !inner_node.branches.is_empty() {
            return false;
        }
        if !plain(outer, outer_filter.as_ref()) || !plain(inner, inner_filter.as_ref()) || inner.distinct {
            return false;
        }
        if outer_filter.is_some() && inner_filter.is_some() {
            return false;
        }
        let names: Vec<String> = inner.columns.iter().map(|c| c.name()).collect();
        let read = input_columns(outer.columns.iter().map(|c| &c.expr).chain(outer_filter.iter()));
        if !read.iter().all(|c| names.iter().filter(|n| *n == c).count() == 1) {
            return false;
        }
        let below = inner_node.input.as_deref().and_then(output_columns);
        if !inner.columns.iter().all(|c| cannot_fail(&c.expr, below.as_deref())) {
            return false;
        }
        let by_name: HashMap<String, Expr> = inner.columns.iter().map(|c| (c.name(), c.expr.clone())).collect();
        let substitute = |e: &Expr| {
            let mut e = e.clone();
            e.visit_mut(&mut |x| {
                if let Expr::InputProp(c) = x {
                    *x = by_name[c.as_str()].clone();
                }
            });
            e
        };
        let columns =
            outer.columns.iter().map(|c| YieldColumn { expr: substitute(&c.expr), alias: Some(c.name()) }).collect();
        let filter = match (inner_filter, outer_filter) {
            (Some(f), None) => Some(f.clone()),
            (None, Some(f)) => Some(substitute(f)),
            _ => None,
        };
        let merged = Op::Project { yield_clause: YieldClause { distinct: outer.distinct, columns }, filter };
        let inner_node = *node.input.take().expect("checked");
        node.op = merged;
        node.input = inner_node.input;
        true
    }
}
