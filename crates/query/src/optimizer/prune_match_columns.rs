//! `prune_match_columns`: where a MATCH's walk ends, its rows keep only the columns that what follows reads. The
//! pattern's other columns (anonymous nodes and edges, nodes and edges nothing reads after the walk) are dropped
//! there, so the operators between the walk and the projection (the WHERE's `Filter`s and pattern predicates)
//! copy, hash and drop fewer values per row.
//!
//! Preconditions: a `Project` (a RETURN or WITH) above one or more `Filter`s and `PatternApply`s (a projection
//! alone copies only what it reads), above the `AppendVertices` of the walk's last node. No expression of them
//! reads a variable. The columns kept are those the projection, the filters and the pattern predicates' keys read
//! (`$-.c`), in the order the walk made them; the last node's column stays when nothing else does, so that the rows
//! stay (a `count(*)` reads no column). Dropping a column changes no row and no value: every reader above is
//! checked to read nothing else.
//!
//! ```text
//! before:  Project [id(o)]                          after:  Project [id(o)]
//!            PatternApply [anti; keys n, o]                   PatternApply [anti; keys n, o]
//!              Filter [id($-.o) != 1]                           Filter [id($-.o) != 1]
//!                AppendVertices [o]                               AppendVertices [o; keep: n, o]
//!                  Traverse [m -> o]                                Traverse [m -> o]
//! ```

use super::{input_columns, reads_var, Rule, RuleContext};
use crate::planner::{Op, PlanNode};
use quiver_common::expr::Expr;

pub(crate) struct PruneMatchColumns;

impl Rule for PruneMatchColumns {
    fn name(&self) -> &'static str {
        "prune_match_columns"
    }

    fn apply(&self, node: &mut PlanNode, _ctx: &RuleContext<'_>) -> bool {
        let Op::Project { yield_clause, filter } = &node.op else { return false };
        let mut read: Vec<&Expr> = yield_clause.columns.iter().map(|c| &c.expr).chain(filter.iter()).collect();
        let mut keys: Vec<String> = Vec::new();
        // Down through the filters and pattern predicates to the walk's last node.
        let mut between = 0;
        let mut below = node.input.as_deref();
        let append = loop {
            let Some(n) = below else { return false };
            match &n.op {
                Op::Filter(cond) => read.push(cond),
                Op::PatternApply { keys: k, .. } => keys.extend(k.iter().cloned()),
                Op::AppendVertices(a) if between > 0 && a.keep.is_none() => break n,
                _ => return false,
            }
            between += 1;
            below = n.input.as_deref();
        };
        if reads_var(read.iter().copied()) {
            return false;
        }
        let mut used = input_columns(read.iter().copied());
        used.extend(keys);
        let Op::AppendVertices(a) = &append.op else { unreachable!("matched above") };
        let Some(made) = walk_columns(append) else { return false };
        let mut keep: Vec<String> = made.iter().filter(|c| used.contains(c)).cloned().collect();
        if keep.is_empty() {
            keep.push(a.node.column.clone());
        }
        if keep.len() == made.len() {
            return false;
        }
        // The same walk again, mutably: set what its last node keeps.
        let mut n = node.input.as_deref_mut().expect("walked above");
        loop {
            if let Op::AppendVertices(a) = &mut n.op {
                a.keep = Some(keep);
                return true;
            }
            n = n.input.as_deref_mut().expect("walked above");
        }
    }
}

/// The columns a MATCH walk's operators output, in order, when every operator of it is one whose columns the plan
/// knows (the walk's nodes and edges, and the columns of earlier clauses it starts from).
fn walk_columns(node: &PlanNode) -> Option<Vec<String>> {
    let below = || node.input.as_deref().map_or(Some(Vec::new()), walk_columns);
    match &node.op {
        Op::Argument => Some(Vec::new()),
        Op::StartVertices(s) if node.branches.is_empty() => {
            let mut c = below()?;
            c.push(s.node.column.clone());
            Some(c)
        }
        Op::Traverse(t) => {
            let mut c = below()?;
            c.push(t.edge.column.clone());
            c.push(t.to.clone());
            Some(c)
        }
        Op::AppendVertices(a) => {
            if let Some(k) = &a.keep {
                return Some(k.clone());
            }
            let mut c = below()?;
            if a.node.bound && a.from != a.node.column {
                // The walk's VID column goes; the node's column, bound before, stays.
                c.retain(|x| *x != a.from);
            }
            c.extend(a.columns.iter().map(|p| p.column.clone()));
            Some(c)
        }
        _ => None,
    }
}
