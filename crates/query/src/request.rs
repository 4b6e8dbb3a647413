//! The state of one request (parameters, variables, budget) and the rows a sentence reads from its piped input
//! (`$-`) or a variable (`$v`): shared by the executors.

use crate::context::ParamContext;
use crate::{DataSet, Params};
use quiver_common::budget::Budget;
use quiver_common::eval::{eval, EvalContext};
use quiver_common::expr::Expr;
use quiver_common::fasthash::FastMap as HashMap;
use quiver_common::{QError, QResult, Value};

/// The state of one request: its parameters, the variables its statements assign, and its budget.
pub(crate) struct Request<'a> {
    pub params: &'a Params,
    pub vars: HashMap<String, DataSet>,
    /// The columns of the variables assigned by the statements validated so far, newest last (an EXPLAIN of
    /// several statements validates them all before any runs).
    pub assigned: Vec<(String, Vec<String>)>,
    pub budget: Budget,
}

impl<'a> Request<'a> {
    pub fn new(params: &'a Params, budget: Budget) -> Request<'a> {
        Request { params, vars: HashMap::default(), assigned: Vec::new(), budget }
    }

    pub fn param_context(&self) -> ParamContext<'_> {
        ParamContext { params: self.params }
    }
}

/// The rows a statement reads: the piped input (`$-`) or a variable (`$v`).
pub(crate) struct RowSource<'a> {
    pub var: Option<&'a str>,
    pub data: &'a DataSet,
}

impl<'a> RowSource<'a> {
    /// The context of row `row`.
    pub fn context<'b>(&'b self, req: &'b Request<'b>, row: usize) -> RowContext<'b> {
        RowContext { req, var: self.var, data: self.data, row }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.data.len()
    }
}

/// The source `e` (a `$-.c` or `$v.c`) reads, checked to have the column.
pub(crate) fn input_rows<'a>(e: &Expr, req: &'a Request<'a>, input: Option<&'a DataSet>) -> QResult<RowSource<'a>> {
    match e {
        Expr::InputProp(col) => {
            let data = input.filter(|d| d.column_index(col).is_some());
            let data = data.ok_or_else(|| QError::semantic(format!("`$-.{col}', not exist prop `{col}'")))?;
            Ok(RowSource { var: None, data })
        }
        Expr::VarProp { var, prop } => {
            let (name, data) = req
                .vars
                .get_key_value(var)
                .ok_or_else(|| QError::semantic(format!("`${var}.{prop}', not exist variable `{var}'")))?;
            if data.column_index(prop).is_none() {
                return Err(QError::semantic(format!("`${var}.{prop}', not exist prop `{prop}'")));
            }
            Ok(RowSource { var: Some(name.as_str()), data })
        }
        other => Err(QError::semantic(format!(
            "`{other}', Only input and variable expression is acceptable when starts are evaluated at runtime."
        ))),
    }
}

/// One row of a [`RowSource`]: `$-.c` or `$v.c` read its columns.
pub(crate) struct RowContext<'a> {
    req: &'a Request<'a>,
    var: Option<&'a str>,
    data: &'a DataSet,
    row: usize,
}

impl RowContext<'_> {
    fn column(&self, col: &str) -> Option<Value> {
        self.data.column_index(col).map(|i| self.data.value(self.row, i).clone())
    }
}

impl EvalContext for RowContext<'_> {
    fn param(&self, name: &str) -> QResult<Value> {
        self.req.param_context().param(name)
    }

    // `label.prop` keeps the default, NebulaGraph's `Invalid label identifiers: label`; an edge's `_src`, `_dst`,
    // `_rank` or `_type` reads an edge, which a YIELD does not have.
    fn edge_meta(&self, _edge: &str, _meta: quiver_common::expr::EdgeMeta) -> QResult<Value> {
        Err(QError::semantic("Only support input and variable in yield sentence."))
    }

    fn input_prop(&self, col: &str) -> QResult<Value> {
        match (self.var, self.column(col)) {
            (None, Some(v)) => Ok(v),
            _ => Err(QError::semantic(format!("`$-.{col}', not exist prop `{col}'"))),
        }
    }

    fn var_prop(&self, var: &str, col: &str) -> QResult<Value> {
        if self.var == Some(var) {
            return self.column(col).ok_or_else(|| QError::semantic(format!("`${var}.{col}', not exist prop `{col}'")));
        }
        match self.req.vars.get(var) {
            Some(_) => Err(QError::semantic("Only one variable allowed to use.")),
            None => Err(QError::semantic(format!("`${var}.{col}', not exist variable `{var}'"))),
        }
    }
}

/// A context with no row: constants and parameters only.
pub(crate) struct NoRow<'a>(pub &'a Request<'a>);

impl EvalContext for NoRow<'_> {
    fn param(&self, name: &str) -> QResult<Value> {
        self.0.param_context().param(name)
    }
    // `label.prop` keeps the default, NebulaGraph's `Invalid label identifiers: label`; an edge's `_src`, `_dst`,
    // `_rank` or `_type` reads an edge, which a YIELD does not have.
    fn edge_meta(&self, _edge: &str, _meta: quiver_common::expr::EdgeMeta) -> QResult<Value> {
        Err(QError::semantic("Only support input and variable in yield sentence."))
    }
}

/// The value of a LIMIT or OFFSET operand: a non-negative integer constant or parameter.
pub(crate) fn limit_operand(e: &Expr, req: &Request<'_>) -> QResult<usize> {
    match eval(e, &NoRow(req))? {
        Value::Int(n) if n >= 0 => Ok(n as usize),
        other => Err(QError::semantic(format!("LIMIT and OFFSET take non-negative integers, got `{other}'"))),
    }
}
