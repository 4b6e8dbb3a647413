//! `fuse_match_count`: a MATCH path whose rows are only counted (or counted per far end) runs as one storage-side
//! path count.
//!
//! Preconditions: a `RETURN count(*)` (no DISTINCT, no other column), or a `RETURN` whose columns are `count(*)`
//! and `id(x)` with `x` the path's last node (the implicit grouping key), right above one path where
//! - the path starts from `GetVertices`, `IndexScan` or a scan (its start node may have labels and properties,
//!   checked as before, and earlier clauses may feed it rows);
//! - it is walked in one direction from the start, one edge pattern after the other, each a single step (no
//!   range) with no property map;
//! - no node after the start has a label or a property map or is bound earlier (no cycle), and no path alias,
//!   WHERE or pattern predicate follows;
//! - no tag or edge type it reads has a TTL (the in-memory topology cannot tell what expired);
//! - storage counts paths in the space (`StorageClient::counts_paths`: a cluster's does not when no host carries
//!   the whole space).
//!
//! The count then needs no rows: storage enumerates only the paths one hop short of the end and counts the last
//! hop from degrees, corrected for the path's own edges (see `quiver_api::ExpandRequest::paths`), so a 3-hop
//! count costs about what GO's fused walk count does, and no operator holds more rows than the result.
//!
//! ```text
//! before:  Aggregate [count(*)]            after:  PathCount [start p, hops +likes, -likes, +likes]
//!            AppendVertices [r]                      GetVertices [p]
//!              Traverse [p -> i -> o -> r]             Argument
//!                ...
//!                  GetVertices [p]
//!                    Argument
//! ```

use super::{has_ttl, id_of, is_count_star, Rule, RuleContext};
use crate::planner::{CountOutput, Op, PathCountNode, PlanNode};
use quiver_common::pattern::PatternDirection;

pub(crate) struct FuseMatchCount;

/// A qualifying chain: the start node's column, the signed edge types of each hop and its description.
pub(super) struct Chain {
    pub start: String,
    pub hops: Vec<Vec<i32>>,
    pub described: Vec<String>,
}

/// The chain under `node`, if it qualifies, read from its last `AppendVertices` down to its start. With
/// `end_checked`, the last node may have labels and a property map: its `AppendVertices` stays above the fused
/// chain and checks them (`fuse_match_rows`).
pub(super) fn chain(node: &PlanNode, end_checked: bool) -> Option<Chain> {
    let mut hops = Vec::new();
    let mut names = Vec::new();
    let mut node = node;
    // The column the hop above walks from.
    let mut from: Option<&str> = None;
    loop {
        match &node.op {
            Op::AppendVertices(a) => {
                let n = &a.node;
                let checked_above = end_checked && from.is_none();
                if n.bound
                    || (!checked_above && (!n.tags.is_empty() || !n.props.is_empty()))
                    || a.tags.iter().any(has_ttl)
                {
                    return None;
                }
                if from.is_some_and(|f| f != n.column) {
                    return None;
                }
                let t = node.input.as_deref()?;
                let Op::Traverse(tr) = &t.op else { return None };
                let e = &tr.edge;
                if tr.to != a.from
                    || e.range.is_some()
                    || !e.props.is_empty()
                    || e.bound_to.is_some()
                    || e.types.iter().any(has_ttl)
                {
                    return None;
                }
                let types: Vec<i32> = tr.signed_types().into_iter().map(|(t, _)| t).collect();
                let dir = match tr.walked_direction() {
                    PatternDirection::Out => "out",
                    PatternDirection::In => "in",
                    PatternDirection::Both => "both",
                };
                names.push(format!("{dir} {}", e.types.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join("|")));
                hops.push(types);
                from = Some(&tr.from);
                node = t.input.as_deref()?;
            }
            Op::StartVertices(s) => {
                let start = &s.node.column;
                if hops.is_empty() || from != Some(start.as_str()) || !node.branches.is_empty() {
                    return None;
                }
                if s.tags.iter().any(has_ttl) {
                    return None;
                }
                hops.reverse();
                names.reverse();
                return Some(Chain { start: start.clone(), hops, described: names });
            }
            _ => return None,
        }
    }
}

/// The last node's column of the chain under `node` (its top `AppendVertices`).
pub(super) fn last_node(node: &PlanNode) -> Option<&str> {
    match &node.op {
        Op::AppendVertices(a) => Some(&a.node.column),
        _ => None,
    }
}

/// The start's subtree of a checked chain (it moves under the fused count).
pub(super) fn start_of(mut chain: Box<PlanNode>) -> Box<PlanNode> {
    loop {
        match chain.op {
            Op::StartVertices(_) => return chain,
            _ => chain = chain.input.expect("the chain was checked"),
        }
    }
}

impl Rule for FuseMatchCount {
    fn name(&self) -> &'static str {
        "fuse_match_count"
    }

    fn apply(&self, node: &mut PlanNode, ctx: &RuleContext<'_>) -> bool {
        let Op::Project { yield_clause: y, filter: None } = &node.op else { return false };
        let Some(input) = node.input.as_deref() else { return false };
        if y.distinct || !y.columns.iter().any(|c| is_count_star(&c.expr)) {
            return false;
        }
        let output = if y.columns.len() == 1 {
            CountOutput::Count { column: y.columns[0].name() }
        } else {
            let Some(last) = last_node(input) else { return false };
            if !y.columns.iter().all(|c| is_count_star(&c.expr) || id_of(&c.expr) == Some(last)) {
                return false;
            }
            CountOutput::GroupCount { columns: y.columns.iter().map(|c| (c.name(), is_count_star(&c.expr))).collect() }
        };
        let Some(Chain { start, hops, described }) = chain(input, false) else { return false };
        if !ctx.counts_paths() {
            return false;
        }
        let start_node = start_of(node.input.take().expect("checked above"));
        *node = PlanNode {
            op: Op::PathCount(Box::new(PathCountNode { start, hops, described, output })),
            input: Some(start_node),
            branches: Vec::new(),
        };
        true
    }
}
