//! `push_limit_into_go`: `GO ... | LIMIT [offset,] n` asks storage for at most `offset + n` edges on the GO's last
//! step, so a GO from a super vertex stops early.
//!
//! Preconditions: a LIMIT (constants or parameters) whose input is a GO with `N STEPS`, no WHERE left after
//! filter push-down (a filter could drop rows after the cut), no DISTINCT, no SAMPLE/LIMIT, and no join onto its
//! input (a join multiplies rows after the cut; it would still be correct, but the bound would mean nothing).
//! The LIMIT stays: the GO emits the first `offset + n` rows in the order it would have anyway.
//!
//! ```text
//! before:  Limit [count: 3]          after:  Limit [count: 3]
//!            Go [...]                          Go [storage limit: 3; ...]
//! ```

use super::{Rule, RuleContext};
use crate::planner::{Op, PlanNode};
use crate::request::limit_operand;

pub(crate) struct PushLimitIntoGo;

impl Rule for PushLimitIntoGo {
    fn name(&self) -> &'static str {
        "push_limit_into_go"
    }

    fn apply(&self, node: &mut PlanNode, ctx: &RuleContext<'_>) -> bool {
        let Op::Limit { offset, count } = &node.op else { return false };
        let (Ok(offset), Ok(count)) = (limit_operand(offset, ctx.req), limit_operand(count, ctx.req)) else {
            return false;
        };
        let Some(input) = &mut node.input else { return false };
        let Op::Go(g) = &mut input.op else { return false };
        let s = &g.go.stmt;
        let Some(y) = &s.yield_clause else { return false };
        if g.limit.is_some() || s.filter.is_some() || y.distinct || s.bounds.is_some() || !s.is_n_steps() {
            return false;
        }
        if y.columns.iter().any(|c| c.expr.reads_input()) {
            return false;
        }
        g.limit = Some(offset.saturating_add(count));
        true
    }
}
