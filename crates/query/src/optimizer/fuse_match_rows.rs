//! `fuse_match_rows`: a MATCH path whose rows read only its last node is walked as one storage-side path count
//! per far end, and the rows are produced per far end, then repeated once per path.
//!
//! Preconditions: a `RETURN` or `WITH` (a `Project` without aggregates or its own filter) whose columns read
//! nothing but the path's last node `d` (no `rand()`), above only `Filter`s that read nothing but `d`, above one
//! path that [`fuse_match_count`](super::fuse_match_count) could count, except that `d` may have labels and a
//! property map (its `AppendVertices` stays and checks them), and it has two hops or more (the paths of one hop
//! rarely meet at a far end, so there would be little to share).
//!
//! Every path ending at the same `d` gives the same row, so the row is computed once per distinct `d` and repeated
//! as many times as paths reach it (`Repeat`; nothing is repeated under DISTINCT, which would remove the copies).
//! Storage enumerates only the paths one hop short of the end, counts the last hop per far end (see
//! `quiver_api::ExpandRequest::paths`), and `d` is read once per distinct far end instead of once per path.
//! Rows come out grouped by `d` rather than in walking order; a MATCH defines no order of its own.
//!
//! ```text
//! before:  Project [id(d)]                    after:  Repeat [count: __paths]
//!            AppendVertices [d]                         Project [id(d), __paths]
//!              Traverse [c -> d]                          AppendVertices [d]
//!                ...                                        PathGroupCount [start v; hops ...; columns: d, __paths]
//!                  GetVertices [v]                            GetVertices [v]
//!                    Argument                                   Argument
//! ```

use super::fuse_match_count::{chain, last_node, start_of, Chain};
use super::{Rule, RuleContext};
use crate::planner::{CountOutput, Op, PathCountNode, PlanNode};
use quiver_common::expr::Expr;
use quiver_syntax::ast::YieldColumn;

pub(crate) struct FuseMatchRows;

/// The column holding how many paths reach a row's far end.
const PATHS: &str = "__paths";

/// Whether `e` reads no column but `column`, no variable, and gives the same value on every row with the same
/// `column` (no random numbers).
fn reads_only(e: &Expr, column: &str) -> bool {
    !e.any(&|x| match x {
        Expr::InputProp(c) => c != column,
        Expr::VarProp { .. } | Expr::Aggregate { .. } | Expr::Pattern(_) => true,
        Expr::Function { name, .. } => name.to_ascii_lowercase().starts_with("rand"),
        _ => false,
    })
}

impl Rule for FuseMatchRows {
    fn name(&self) -> &'static str {
        "fuse_match_rows"
    }

    fn apply(&self, node: &mut PlanNode, _ctx: &RuleContext<'_>) -> bool {
        let Op::Project { yield_clause: y, filter: None } = &node.op else { return false };
        let Some(mut below) = node.input.as_deref() else { return false };
        let mut filters = 0;
        while let Op::Filter(_) = below.op {
            filters += 1;
            let Some(b) = below.input.as_deref() else { return false };
            below = b;
        }
        let Some(last) = last_node(below) else { return false };
        let mut reads = y.columns.iter().map(|c| &c.expr);
        if y.columns.iter().any(|c| c.name() == PATHS) || !reads.all(|e| reads_only(e, last)) {
            return false;
        }
        let mut conditions = node.input.as_deref();
        for _ in 0..filters {
            let f = conditions.expect("counted above");
            if !matches!(&f.op, Op::Filter(c) if reads_only(c, last)) {
                return false;
            }
            conditions = f.input.as_deref();
        }
        let Some(append) = conditions else { return false };
        let Some(Chain { start, hops, described }) = chain(append, true) else { return false };
        // One hop has no paths that meet at a far end: nothing to share.
        if hops.len() < 2 {
            return false;
        }
        let last = last.to_string();
        let distinct = y.distinct;

        // Cut the chain under the last AppendVertices and put the count there.
        let mut at = node.input.as_mut().expect("checked above");
        while let Op::Filter(_) = at.op {
            at = at.input.as_mut().expect("checked above");
        }
        let Op::AppendVertices(a) = &mut at.op else { unreachable!("the chain was checked") };
        a.exist = true;
        let traverse = at.input.take().expect("the chain was checked");
        let output = CountOutput::GroupCount { columns: vec![(last, false), (PATHS.to_string(), true)] };
        at.input = Some(Box::new(PlanNode {
            op: Op::PathCount(Box::new(PathCountNode { start, hops, described, output })),
            input: Some(start_of(traverse)),
            branches: Vec::new(),
        }));
        if distinct {
            return true;
        }
        let Op::Project { yield_clause, .. } = &mut node.op else { unreachable!("matched above") };
        yield_clause.columns.push(YieldColumn { expr: Expr::InputProp(PATHS.into()), alias: Some(PATHS.into()) });
        let project = std::mem::replace(node, PlanNode::leaf(Op::Repeat { column: PATHS.into() }));
        node.input = Some(Box::new(project));
        true
    }
}
