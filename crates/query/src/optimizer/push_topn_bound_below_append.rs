//! `push_topn_bound_below_append`: a MATCH ending in `ORDER BY ... LIMIT` whose first sort keys are read before the
//! last node is (an edge property, say) drops the rows that cannot make the limit before that node's properties
//! are read: a `TopNFilter` below `AppendVertices` keeps the rows whose key prefix is no worse than the
//! `offset + count`-th best distinct prefix. Every other row sorts after that many rows with distinct prefixes,
//! which are distinct rows too, so it is in neither the first rows nor the first distinct rows. The TopN stays and
//! decides among the rows kept; ties on the prefix are all kept, so the order among them is unchanged.
//!
//! Preconditions: a TopN (of at most [`TOPN_BOUND_KEEP_MAX`] rows) over a Project without filter or aggregate whose columns
//! all copy input columns (nothing to evaluate, so no error can be skipped), maybe through a Repeat, over an
//! `AppendVertices` that drops no row (the far ends are known to exist, with no label, property map or earlier
//! binding to check). The keys are the longest prefix of the TopN's factors that name Project columns copying a
//! column from below the `AppendVertices`.
//!
//! ```text
//! before:  TopN [factors: $-.t ASC, $-.b ASC; count: 10]     after:  TopN [factors: $-.t ASC, $-.b ASC; count: 10]
//!            Project [columns: t, b]                                   Project [columns: t, b]
//!              AppendVertices [node: d; columns: ...]                    AppendVertices [node: d; columns: ...]
//!                PathEdgeCount [columns: time as __e.time, ...]            TopNFilter [keys: $-.__e.time ASC; keep: 10]
//!                                                                            PathEdgeCount [...]
//! ```

use super::{Rule, RuleContext};
use crate::planner::{Op, PlanNode};
use quiver_common::expr::Expr;
use quiver_common::limits::TOPN_BOUND_KEEP_MAX;

pub(crate) struct PushTopNBoundBelowAppend;

impl Rule for PushTopNBoundBelowAppend {
    fn name(&self) -> &'static str {
        "push_topn_bound_below_append"
    }

    fn apply(&self, node: &mut PlanNode, _ctx: &RuleContext<'_>) -> bool {
        let Op::TopN { factors, offset, count } = &node.op else { return false };
        let keep = offset.saturating_add(*count);
        if keep == 0 || keep > TOPN_BOUND_KEEP_MAX {
            return false;
        }
        let Some(mut project) = node.input.as_deref_mut() else { return false };
        if matches!(project.op, Op::Repeat { .. }) {
            let Some(below) = project.input.as_deref_mut() else { return false };
            project = below;
        }
        let Op::Project { yield_clause, filter: None } = &project.op else { return false };
        let copies: Option<Vec<(String, &str)>> = yield_clause
            .columns
            .iter()
            .map(|c| match &c.expr {
                Expr::InputProp(from) => Some((c.name(), from.as_str())),
                _ => None,
            })
            .collect();
        let Some(copies) = copies else { return false };
        let Some(append) = project.input.as_deref_mut() else { return false };
        let Op::AppendVertices(a) = &append.op else { return false };
        if !a.exist || a.node.bound || !a.node.tags.is_empty() || !a.node.props.is_empty() {
            return false;
        }
        let added = |c: &str| c == a.node.column || a.columns.iter().any(|p| p.column == c);
        let mut keys = Vec::new();
        for (e, asc) in factors {
            let Expr::InputProp(c) = e else { break };
            let mut named = copies.iter().filter(|(name, _)| name == c);
            match (named.next(), named.next()) {
                (Some((_, from)), None) if !added(from) => keys.push((from.to_string(), *asc)),
                _ => break,
            }
        }
        if keys.is_empty() || append.input.as_ref().is_some_and(|i| matches!(i.op, Op::TopNFilter { .. })) {
            return false;
        }
        let Some(below) = append.input.take() else { return false };
        append.input =
            Some(Box::new(PlanNode { op: Op::TopNFilter { keys, keep }, input: Some(below), branches: Vec::new() }));
        true
    }
}
