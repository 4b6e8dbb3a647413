//! ProjectExecutor: standalone and piped `YIELD [WHERE]`.

use super::aggregate::{eval_group, group_by};
use crate::distinct::DistinctRows;
use crate::request::{input_rows, NoRow, Request, RowSource};
use crate::DataSet;
use quiver_common::budget::Meter;
use quiver_common::eval::{eval, eval_condition, EvalContext};
use quiver_common::expr::Expr;
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::YieldClause;

/// The source a YIELD reads: the variable it names, else the piped input, else none (one row of constants).
fn yield_source<'a>(
    y: &YieldClause,
    filter: Option<&Expr>,
    req: &'a Request<'a>,
    input: Option<&'a DataSet>,
) -> QResult<Option<RowSource<'a>>> {
    let mut var = None;
    let mut first_input: Option<&str> = None;
    let exprs = y.columns.iter().map(|c| &c.expr).chain(filter);
    for e in exprs {
        e.visit(&mut |x| match x {
            Expr::VarProp { var: v, prop } if var.is_none() => {
                var = Some((v.clone(), prop.clone()));
            }
            Expr::InputProp(col) => {
                first_input.get_or_insert(col);
            }
            _ => {}
        });
    }
    if first_input.is_some() && var.is_some() {
        return Err(QError::semantic("Not support both input and variable."));
    }
    if let Some((v, p)) = var {
        return input_rows(&Expr::VarProp { var: v, prop: p }, req, input).map(Some);
    }
    match (input, first_input) {
        (Some(data), _) => Ok(Some(RowSource { var: None, data })),
        (None, Some(col)) => Err(QError::semantic(format!("`$-.{col}', not exist prop `{col}'"))),
        (None, None) => Ok(None),
    }
}

pub(crate) struct ProjectExecutor;

/// How a column's value is found per row.
#[derive(Clone, Copy)]
enum Passed {
    /// Copied from this input column.
    Copy(usize),
    /// The VID of the vertex in this input column (anything else is evaluated).
    Id(usize),
    Eval,
}

impl ProjectExecutor {
    pub fn execute(
        y: &YieldClause,
        filter: Option<&Expr>,
        req: &Request<'_>,
        input: Option<&DataSet>,
    ) -> QResult<DataSet> {
        let columns: Vec<String> = y.columns.iter().map(|c| c.name()).collect();
        let mut out = DataSet::from_columns(columns, Vec::new());
        let aggregated = y.columns.iter().any(|c| c.expr.has_aggregate());
        let Some(src) = yield_source(y, filter, req, input)? else {
            let ctx = NoRow(req);
            if let Some(f) = filter {
                if !eval_condition(f, &ctx)? {
                    return Ok(out);
                }
            }
            let exprs: Vec<&Expr> = y.columns.iter().map(|c| &c.expr).collect();
            out.push_row(if aggregated {
                eval_group(&exprs, &[&ctx], &ctx)?
            } else {
                exprs.iter().map(|e| eval(e, &ctx)).collect::<QResult<_>>()?
            });
            return Ok(out);
        };
        // Rows that pass the filter.
        let mut kept: Vec<usize> = Vec::new();
        for row in 0..src.len() {
            if let Some(f) = filter {
                if !eval_condition(f, &src.context(req, row))? {
                    continue;
                }
            }
            kept.push(row);
        }
        if aggregated {
            // An implicit GROUP BY on the columns without aggregates.
            let keys: Vec<Expr> =
                y.columns.iter().filter(|c| !c.expr.has_aggregate()).map(|c| c.expr.clone()).collect();
            let filtered = src.data.gather(&kept);
            let inner = RowSource { var: src.var, data: &filtered };
            let mut grouped = group_by(&keys, y, req, &inner)?;
            if keys.is_empty() && grouped.is_empty() {
                let ctx = NoRow(req);
                let exprs: Vec<&Expr> = y.columns.iter().map(|c| &c.expr).collect();
                grouped.push_row(eval_group(&exprs, &[], &ctx)?);
            }
            return Ok(grouped);
        }
        // A column that only reads an input column (or a vertex's id in one) is copied from it, without evaluating
        // anything per row.
        let passed: Vec<Passed> = y
            .columns
            .iter()
            .map(|c| match &c.expr {
                Expr::InputProp(col) if src.var.is_none() => {
                    src.data.column_index(col).map_or(Passed::Eval, Passed::Copy)
                }
                Expr::VarProp { var, prop } if src.var == Some(var.as_str()) => {
                    src.data.column_index(prop).map_or(Passed::Eval, Passed::Copy)
                }
                e => match crate::optimizer::id_of(e) {
                    Some(col) if src.var.is_none() => src.data.column_index(col).map_or(Passed::Eval, Passed::Id),
                    _ => Passed::Eval,
                },
            })
            .collect();
        let mut distinct = y.distinct.then(DistinctRows::default);
        out.reserve(kept.len());
        let mut meter = Meter::new(&req.budget);
        for row in kept {
            meter.tick()?;
            let ctx = src.context(req, row);
            out.push_row_with(|i| match passed[i] {
                Passed::Copy(c) => Ok(src.data.value(row, c).clone()),
                Passed::Id(c) => match src.data.value(row, c) {
                    Value::Vertex(v) => Ok(v.vid.clone()),
                    _ => eval(&y.columns[i].expr, &ctx),
                },
                Passed::Eval => eval(&y.columns[i].expr, &ctx),
            })?;
            if let Some(d) = &mut distinct {
                d.admit_last(&mut out);
            }
        }
        Ok(out)
    }
}

pub(crate) fn yield_columns(y: &YieldClause) -> Vec<String> {
    y.columns.iter().map(|c| c.name()).collect()
}

/// Appends the YIELD's row for `ctx` to `ds`; with DISTINCT, only if `seen` (which has seen every row of `ds`)
/// finds no equal row.
pub(crate) fn project(
    y: &YieldClause,
    ctx: &dyn EvalContext,
    ds: &mut DataSet,
    seen: &mut DistinctRows,
) -> QResult<()> {
    ds.push_row_with(|i| eval(&y.columns[i].expr, ctx))?;
    if y.distinct {
        seen.admit_last(ds);
    }
    Ok(())
}
