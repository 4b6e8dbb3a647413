//! `fuse_count_traversal`: a chain of GOs whose rows are only counted runs as one storage-side expansion.
//!
//! Preconditions: a `YIELD COUNT(*)` (one column, no WHERE, no DISTINCT), or a `GROUP BY $-.c YIELD` whose
//! columns are `$-.c` and `COUNT(*)` with `c` the far end of the last GO, reading a pipe of GOs where
//! - the first GO starts from constants and has no input;
//! - every GO has `N STEPS` (not `M TO N`), no WHERE, no SAMPLE/LIMIT, no DISTINCT, and yields only
//!   expressions that cannot fail (properties, edge and vertex references, `src/dst/rank/type/id`, constants);
//! - each next GO starts `FROM $-.c` where `c` is a column its predecessor yields as the far end
//!   ([`super::is_far_end`]) and reads no other input;
//! - no edge type walked has a TTL (the in-memory topology cannot tell which edges expired).
//!
//! Counting then needs no rows: storage carries, per frontier vertex, the number of paths that reach it, and the
//! last hop reads degrees only.
//!
//! ```text
//! before:  Aggregate [COUNT(*)]            after:  ExpandCount [go 1 ..., go 2 ..., count]
//!            Go [FROM $-.d OVER e]
//!              Go [FROM "a" OVER e]
//! ```

use super::{cannot_fail, has_ttl, is_count_star, is_far_end, Rule, RuleContext};
use crate::planner::{CountOutput, ExpandNode, Op, PlanNode};
use crate::validator::BoundGo;
use quiver_common::expr::Expr;
use quiver_syntax::ast::{FromClause, GoStatement};

pub(crate) struct FuseCountTraversal;

fn fusable(g: &GoStatement) -> bool {
    let Some(y) = &g.yield_clause else { return false };
    g.is_n_steps()
        && g.filter.is_none()
        && g.bounds.is_none()
        && !y.distinct
        && y.columns.iter().all(|c| cannot_fail(&c.expr, None) && !c.expr.reads_input())
}

/// The name of the far-end column `col` of `g`, if `g` yields it.
fn yields_far_end(g: &GoStatement, col: &str) -> bool {
    g.yield_clause.as_ref().is_some_and(|y| {
        let named: Vec<_> = y.columns.iter().filter(|c| c.name() == col).collect();
        named.len() == 1 && is_far_end(&named[0].expr, g)
    })
}

/// The GOs of the chain under `node`, first to last, if the whole chain qualifies.
fn chain(mut node: &PlanNode) -> Option<Vec<&BoundGo>> {
    let mut gos = Vec::new();
    loop {
        let Op::Go(g) = &node.op else { return None };
        if g.storage_filter.is_some() || g.limit.is_some() || !node.branches.is_empty() || !fusable(&g.go.stmt) {
            return None;
        }
        gos.push(&g.go);
        match (&g.go.stmt.from, &node.input) {
            (FromClause::Vids(_), None) => break,
            (FromClause::Ref(Expr::InputProp(col)), Some(prev)) => {
                let Op::Go(p) = &prev.op else { return None };
                if !yields_far_end(&p.go.stmt, col) {
                    return None;
                }
                node = prev;
            }
            _ => return None,
        }
    }
    gos.reverse();
    Some(gos)
}

/// Whether `g` walks an edge type with a TTL.
fn walks_ttl_edges(g: &BoundGo) -> bool {
    g.edges.iter().any(|(_, s)| has_ttl(s))
}

impl Rule for FuseCountTraversal {
    fn name(&self) -> &'static str {
        "fuse_count_traversal"
    }

    fn apply(&self, node: &mut PlanNode, _ctx: &RuleContext<'_>) -> bool {
        let output = match &node.op {
            Op::Project { yield_clause: y, filter: None }
                if !y.distinct && y.columns.len() == 1 && is_count_star(&y.columns[0].expr) =>
            {
                CountOutput::Count { column: y.columns[0].name() }
            }
            Op::Aggregate { keys, yield_clause: y } if !y.distinct && keys.len() == 1 => {
                let Expr::InputProp(key) = &keys[0] else { return false };
                if !y.columns.iter().all(|c| is_count_star(&c.expr) || c.expr == keys[0]) {
                    return false;
                }
                let Some(Op::Go(last)) = node.input.as_ref().map(|i| &i.op) else { return false };
                if !yields_far_end(&last.go.stmt, key) {
                    return false;
                }
                CountOutput::GroupCount {
                    columns: y.columns.iter().map(|c| (c.name(), is_count_star(&c.expr))).collect(),
                }
            }
            _ => return false,
        };
        let Some(input) = &node.input else { return false };
        let Some(gos) = chain(input) else { return false };
        if gos.iter().any(|g| walks_ttl_edges(g)) {
            return false;
        }
        let gos: Vec<BoundGo> = gos.into_iter().cloned().collect();
        *node = PlanNode::leaf(Op::Expand(Box::new(ExpandNode { gos, output })));
        true
    }
}
