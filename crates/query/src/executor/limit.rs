//! LimitExecutor: `LIMIT [offset,] count` and `LIMIT count OFFSET offset`.

use crate::dataset::window;
use crate::request::{limit_operand, Request};
use crate::DataSet;
use quiver_common::expr::Expr;
use quiver_common::{QError, QResult};

pub(crate) struct LimitExecutor;

impl LimitExecutor {
    pub fn execute(offset: &Expr, count: &Expr, req: &Request<'_>, input: Option<&DataSet>) -> QResult<DataSet> {
        let data = input.ok_or_else(|| QError::semantic("LIMIT needs an input, as in `... | LIMIT 10'"))?;
        let (offset, count) = (limit_operand(offset, req)?, limit_operand(count, req)?);
        Ok(data.slice(window(data.len(), offset, count)))
    }
}
