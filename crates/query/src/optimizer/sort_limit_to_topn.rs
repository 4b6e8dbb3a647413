//! `sort_limit_to_topn`: `ORDER BY ... | LIMIT [offset,] n` keeps a heap of `offset + n` rows instead of sorting
//! every row.
//!
//! Preconditions: a LIMIT whose input is an ORDER BY, with offset and count constants or parameters.
//!
//! ```text
//! before:  Limit [offset: 0; count: 10]        after:  TopN [factors: $-.t ASC; offset: 0; count: 10]
//!            Sort [factors: $-.t ASC]                    Go [...]
//!              Go [...]
//! ```

use super::{Rule, RuleContext};
use crate::planner::{Op, PlanNode};
use crate::request::limit_operand;

pub(crate) struct SortLimitToTopN;

impl Rule for SortLimitToTopN {
    fn name(&self) -> &'static str {
        "sort_limit_to_topn"
    }

    fn apply(&self, node: &mut PlanNode, ctx: &RuleContext<'_>) -> bool {
        let Op::Limit { offset, count } = &node.op else { return false };
        let Some(sort) = &node.input else { return false };
        if !matches!(sort.op, Op::Sort(_)) || !sort.branches.is_empty() {
            return false;
        }
        let (Ok(offset), Ok(count)) = (limit_operand(offset, ctx.req), limit_operand(count, ctx.req)) else {
            return false;
        };
        let sort = *node.input.take().expect("checked");
        let Op::Sort(factors) = sort.op else { unreachable!("checked") };
        node.op = Op::TopN { factors, offset, count };
        node.input = sort.input;
        true
    }
}
