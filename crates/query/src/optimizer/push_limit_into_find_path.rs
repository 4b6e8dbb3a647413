//! `push_limit_into_find_path`: `FIND ... PATH ... | LIMIT [offset,] n` stops the search once it has found
//! `offset + n` paths (NebulaGraph pushes a LIMIT into SHORTEST searches in its parser, and into ALL/NOLOOP with
//! `PushLimitDownAllPathsRule`), so a FIND ALL PATH over a dense graph ends early instead of enumerating every path.
//!
//! Preconditions: a LIMIT (constants or parameters) whose input is a FIND PATH. The LIMIT stays: a search with a
//! limit finds the first paths of the order the unlimited search finds them in, so the rows are the same.
//!
//! ```text
//! before:  Limit [count: 3]          after:  Limit [count: 3]
//!            AllPaths [...]                    AllPaths [limit: 3; ...]
//! ```

use super::{Rule, RuleContext};
use crate::planner::{Op, PlanNode};
use crate::request::limit_operand;

pub(crate) struct PushLimitIntoFindPath;

impl Rule for PushLimitIntoFindPath {
    fn name(&self) -> &'static str {
        "push_limit_into_find_path"
    }

    fn apply(&self, node: &mut PlanNode, ctx: &RuleContext<'_>) -> bool {
        let Op::Limit { offset, count } = &node.op else { return false };
        let (Ok(offset), Ok(count)) = (limit_operand(offset, ctx.req), limit_operand(count, ctx.req)) else {
            return false;
        };
        let Some(input) = &mut node.input else { return false };
        let Op::FindPath(f) = &mut input.op else { return false };
        if f.limit.is_some() {
            return false;
        }
        f.limit = Some(offset.saturating_add(count));
        true
    }
}
