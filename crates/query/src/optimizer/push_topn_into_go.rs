//! `push_topn_into_go`: `GO ... | ORDER BY $-.a, ... | LIMIT n` keeps only the GO's best `offset + n` rows while
//! it produces them, instead of producing every row (and, with DISTINCT, remembering every distinct row) for the
//! TopN above to sift. The GO evaluates a row's sort columns first and, when the row cannot enter, skips its other
//! columns where they cannot fail (so no error is hidden).
//!
//! Preconditions: a TopN whose input is a GO, every factor `$-.c` naming exactly one of the GO's columns. The TopN
//! stays: it orders the kept rows (ties in the GO's order, as before). With DISTINCT the GO keeps the best
//! distinct rows: a row equal to a kept one is a later duplicate, and a duplicate of a dropped row is dropped too
//! (it sorts after the row that was, which sorted after every row kept since).
//!
//! ```text
//! before:  TopN [factors: $-.t ASC; count: 10]       after:  TopN [factors: $-.t ASC; count: 10]
//!            Go [columns: t, n]                                Go [keep first: 10 by t ASC; columns: t, n]
//! ```

use super::{Rule, RuleContext};
use crate::planner::{GoTop, Op, PlanNode};
use quiver_common::expr::Expr;

pub(crate) struct PushTopNIntoGo;

impl Rule for PushTopNIntoGo {
    fn name(&self) -> &'static str {
        "push_topn_into_go"
    }

    fn apply(&self, node: &mut PlanNode, _ctx: &RuleContext<'_>) -> bool {
        let Op::TopN { factors, offset, count } = &node.op else { return false };
        let keep = offset.saturating_add(*count);
        let Some(input) = &mut node.input else { return false };
        if !input.branches.is_empty() {
            return false;
        }
        let Op::Go(g) = &mut input.op else { return false };
        let Some(y) = &g.go.stmt.yield_clause else { return false };
        if g.top.is_some() || g.limit.is_some() {
            return false;
        }
        let mut keys = Vec::new();
        for (e, asc) in factors {
            let Expr::InputProp(c) = e else { return false };
            let mut named = y.columns.iter().enumerate().filter(|(_, col)| col.name() == *c);
            match (named.next(), named.next()) {
                (Some((i, _)), None) => keys.push((i, *asc)),
                _ => return false,
            }
        }
        g.top = Some(GoTop { keys, keep });
        true
    }
}
