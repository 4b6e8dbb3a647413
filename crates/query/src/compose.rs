//! Query composition: pipes, variables, set operations, and the statements that work on piped rows (YIELD,
//! ORDER BY, LIMIT, GROUP BY with aggregates).

use crate::context::ParamContext;
use crate::dataset::window;
use crate::distinct::DistinctRows;
use crate::{DataSet, Params};
use quiver_common::budget::{Budget, Meter};
use quiver_common::eval::{eval, eval_condition, EvalContext};
use quiver_common::expr::Expr;
use quiver_common::fasthash::{FastMap as HashMap, FastSet as HashSet};
use quiver_common::value::NullKind;
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::{SetOp, YieldClause};
use std::cmp::Ordering;

/// The state of one request: its parameters, the variables its statements assign, and its budget.
pub(crate) struct Request<'a> {
    pub params: &'a Params,
    pub vars: HashMap<String, DataSet>,
    pub budget: Budget,
}

impl<'a> Request<'a> {
    pub fn new(params: &'a Params, budget: Budget) -> Request<'a> {
        Request { params, vars: HashMap::default(), budget }
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

    fn label_prop(&self, _label: &str, _prop: &str) -> QResult<Value> {
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

/// Evaluates with aggregates replaced by their values for one group.
struct GroupContext<'a> {
    inner: &'a dyn EvalContext,
    values: &'a HashMap<*const Expr, Value>,
}

impl EvalContext for GroupContext<'_> {
    fn param(&self, name: &str) -> QResult<Value> {
        self.inner.param(name)
    }
    fn label_prop(&self, label: &str, prop: &str) -> QResult<Value> {
        self.inner.label_prop(label, prop)
    }
    fn input_prop(&self, col: &str) -> QResult<Value> {
        self.inner.input_prop(col)
    }
    fn var_prop(&self, var: &str, col: &str) -> QResult<Value> {
        self.inner.var_prop(var, col)
    }
    fn aggregate(&self, expr: &Expr) -> QResult<Value> {
        Ok(self.values.get(&(expr as *const Expr)).cloned().unwrap_or(Value::NULL))
    }
}

/// A context with no row: constants and parameters only.
struct NoRow<'a>(&'a Request<'a>);

impl EvalContext for NoRow<'_> {
    fn param(&self, name: &str) -> QResult<Value> {
        self.0.param_context().param(name)
    }
    fn label_prop(&self, _label: &str, _prop: &str) -> QResult<Value> {
        Err(QError::semantic("Only support input and variable in yield sentence."))
    }
}

/// The running state of one aggregate call over a group.
struct Acc {
    name: String,
    distinct: bool,
    seen: HashSet<Value>,
    count: i64,
    sum: Value,
    sum_f: f64,
    sum_sq: f64,
    best: Option<Value>,
    items: Vec<Value>,
    bits: Option<i64>,
    /// A bit aggregate saw a value that is not an integer: the result is BAD_TYPE, as in NebulaGraph.
    bad_type: bool,
}

impl Acc {
    fn new(name: &str, distinct: bool) -> Acc {
        Acc {
            name: name.to_lowercase(),
            distinct,
            seen: HashSet::default(),
            count: 0,
            sum: Value::Int(0),
            sum_f: 0.0,
            sum_sq: 0.0,
            best: None,
            items: Vec::new(),
            bits: None,
            bad_type: false,
        }
    }

    /// Adds one value; `None` is a row for `count(*)`.
    fn add(&mut self, v: Option<Value>) -> QResult<()> {
        let Some(v) = v else {
            self.count += 1;
            return Ok(());
        };
        if v.is_null() || v.is_empty() {
            return Ok(());
        }
        if self.distinct && !self.seen.insert(v.clone()) {
            return Ok(());
        }
        self.count += 1;
        match self.name.as_str() {
            "count" => {}
            "sum" | "avg" | "std" => {
                let f = match &v {
                    Value::Int(i) => *i as f64,
                    Value::Float(f) => *f,
                    other => {
                        return Err(QError::semantic(format!(
                            "`{}' is not a number, cannot be used in `{}'",
                            other, self.name
                        )))
                    }
                };
                self.sum_f += f;
                self.sum_sq += f * f;
                self.sum = match (&self.sum, &v) {
                    (Value::Int(a), Value::Int(b)) => match a.checked_add(*b) {
                        Some(s) => Value::Int(s),
                        None => Value::Float(*a as f64 + *b as f64),
                    },
                    _ => Value::Float(self.sum_f),
                };
            }
            "max" | "min" => {
                let better = match &self.best {
                    None => true,
                    Some(b) => {
                        let o = v.total_cmp(b);
                        if self.name == "max" {
                            o == Ordering::Greater
                        } else {
                            o == Ordering::Less
                        }
                    }
                };
                if better {
                    self.best = Some(v);
                }
            }
            "collect" | "collect_set" => self.items.push(v),
            "bit_and" | "bit_or" | "bit_xor" => {
                let Value::Int(i) = v else {
                    self.bad_type = true;
                    return Ok(());
                };
                self.bits = Some(match (self.bits, self.name.as_str()) {
                    (None, _) => i,
                    (Some(b), "bit_and") => b & i,
                    (Some(b), "bit_or") => b | i,
                    (Some(b), _) => b ^ i,
                });
            }
            other => return Err(QError::semantic(format!("Unknown aggregate function `{other}'"))),
        }
        Ok(())
    }

    fn finish(self) -> Value {
        match self.name.as_str() {
            "count" => Value::Int(self.count),
            "sum" => self.sum,
            "avg" if self.count == 0 => Value::NULL,
            "avg" => Value::Float(self.sum_f / self.count as f64),
            "std" if self.count == 0 => Value::NULL,
            "std" => {
                let n = self.count as f64;
                let mean = self.sum_f / n;
                Value::Float((self.sum_sq / n - mean * mean).max(0.0).sqrt())
            }
            "max" | "min" => self.best.unwrap_or(Value::NULL),
            "collect" => Value::List(self.items),
            "collect_set" => Value::set_from(self.items),
            _ if self.bad_type => Value::Null(NullKind::BadType),
            _ => self.bits.map(Value::Int).unwrap_or(Value::NULL),
        }
    }
}

/// Computes the aggregates of `columns` over `rows` (contexts built by `ctx_of`) and evaluates each column for the
/// group, reading non-aggregate parts from the group's first row.
fn eval_group(columns: &[&Expr], rows: &[&dyn EvalContext], first: &dyn EvalContext) -> QResult<Vec<Value>> {
    let mut calls: Vec<&Expr> = Vec::new();
    for c in columns {
        c.visit(&mut |e| {
            if matches!(e, Expr::Aggregate { .. }) {
                calls.push(e);
            }
        });
    }
    let mut values = HashMap::default();
    for call in calls {
        let Expr::Aggregate { name, arg, distinct } = call else { unreachable!("collected aggregates") };
        let mut acc = Acc::new(name, *distinct);
        for ctx in rows {
            let v = match arg {
                Some(a) => Some(eval(a, *ctx)?),
                None => None,
            };
            acc.add(v)?;
        }
        values.insert(call as *const Expr, acc.finish());
    }
    let ctx = GroupContext { inner: first, values: &values };
    columns.iter().map(|c| eval(c, &ctx)).collect()
}

/// `ORDER BY`: a stable sort of the piped rows.
pub(crate) fn sort_rows(factors: &[(Expr, bool)], req: &Request<'_>, input: Option<&DataSet>) -> QResult<DataSet> {
    let data = input.ok_or_else(|| QError::semantic("ORDER BY needs an input, as in `... | ORDER BY $-.c'"))?;
    let mut keyed = sort_keys(factors, req, data)?;
    keyed.sort_by(|(a, _), (b, _)| compare_keys(factors, a, b));
    Ok(data.gather(&keyed.into_iter().map(|(_, pos)| pos).collect::<Vec<_>>()))
}

/// `ORDER BY ... | LIMIT offset, count` without sorting every row: a bounded heap keeps the first
/// `offset + count` rows by (keys, position), which is exactly what a stable sort followed by the limit keeps.
pub(crate) fn top_n(
    factors: &[(Expr, bool)],
    offset: usize,
    count: usize,
    req: &Request<'_>,
    input: Option<&DataSet>,
) -> QResult<DataSet> {
    let data = input.ok_or_else(|| QError::semantic("ORDER BY needs an input, as in `... | ORDER BY $-.c'"))?;
    let keep = offset.saturating_add(count);
    let src = RowSource { var: None, data };
    let mut top = crate::top::TopRows::new(factors.iter().map(|(_, asc)| *asc).collect(), keep);
    if keep > 0 {
        let mut meter = Meter::new(&req.budget);
        for pos in 0..data.len() {
            meter.tick()?;
            let ctx = src.context(req, pos);
            let keys = factors.iter().map(|(e, _)| eval(e, &ctx)).collect::<QResult<Vec<_>>>()?;
            top.push(keys, pos);
        }
    }
    Ok(data.gather(&top.into_sorted().into_iter().skip(offset).collect::<Vec<_>>()))
}

/// Each row's sort keys, with its position.
fn sort_keys(factors: &[(Expr, bool)], req: &Request<'_>, data: &DataSet) -> QResult<Vec<(Vec<Value>, usize)>> {
    let src = RowSource { var: None, data };
    let mut keyed = Vec::with_capacity(data.len());
    let mut meter = Meter::new(&req.budget);
    for row in 0..data.len() {
        meter.tick()?;
        let ctx = src.context(req, row);
        keyed.push((factors.iter().map(|(e, _)| eval(e, &ctx)).collect::<QResult<Vec<_>>>()?, row));
    }
    Ok(keyed)
}

fn compare_keys(factors: &[(Expr, bool)], a: &[Value], b: &[Value]) -> Ordering {
    for (i, (_, asc)) in factors.iter().enumerate() {
        let o = a[i].total_cmp(&b[i]);
        if o != Ordering::Equal {
            return if *asc { o } else { o.reverse() };
        }
    }
    Ordering::Equal
}

/// The value of a LIMIT or OFFSET operand: a non-negative integer constant or parameter.
pub(crate) fn limit_operand(e: &Expr, req: &Request<'_>) -> QResult<usize> {
    match eval(e, &NoRow(req))? {
        Value::Int(n) if n >= 0 => Ok(n as usize),
        other => Err(QError::semantic(format!("LIMIT and OFFSET take non-negative integers, got `{other}'"))),
    }
}

pub(crate) fn limit_rows(offset: &Expr, count: &Expr, req: &Request<'_>, input: Option<&DataSet>) -> QResult<DataSet> {
    let data = input.ok_or_else(|| QError::semantic("LIMIT needs an input, as in `... | LIMIT 10'"))?;
    let (offset, count) = (limit_operand(offset, req)?, limit_operand(count, req)?);
    Ok(data.slice(window(data.len(), offset, count)))
}

pub(crate) fn group_rows(
    keys: &[Expr],
    y: &YieldClause,
    req: &Request<'_>,
    input: Option<&DataSet>,
) -> QResult<DataSet> {
    let data =
        input.ok_or_else(|| QError::semantic("GROUP BY needs an input, as in `... | GROUP BY $-.c YIELD ...'"))?;
    group_by(keys, y, req, &RowSource { var: None, data })
}

pub(crate) fn set_op(op: SetOp, l: DataSet, r: DataSet) -> QResult<DataSet> {
    if l.columns().len() != r.columns().len() {
        return Err(QError::semantic("number of columns to UNION/INTERSECT/MINUS must be same"));
    }
    if op == SetOp::UnionAll {
        let mut out = l;
        out.append(r);
        return Ok(out);
    }
    // The rows that may enter, each kept once (in order) by the same hash-by-position DISTINCT uses.
    let (right, more) = if op == SetOp::Union {
        (HashSet::default(), r.into_rows())
    } else {
        (r.rows().collect::<HashSet<_>>(), Vec::new())
    };
    let mut out = l.empty_like();
    let mut seen = DistinctRows::default();
    for row in l.into_rows().into_iter().chain(more) {
        let wanted = match op {
            SetOp::Intersect => right.contains(&row),
            SetOp::Minus => !right.contains(&row),
            _ => true,
        };
        if wanted {
            out.push_row(row);
            seen.admit_last(&mut out);
        }
    }
    Ok(out)
}

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

pub(crate) fn yield_rows(
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
        let keys: Vec<Expr> = y.columns.iter().filter(|c| !c.expr.has_aggregate()).map(|c| c.expr.clone()).collect();
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
    // A column that only reads an input column is copied from it, without evaluating anything per row.
    let passed: Vec<Option<usize>> = y
        .columns
        .iter()
        .map(|c| match &c.expr {
            Expr::InputProp(col) if src.var.is_none() => src.data.column_index(col),
            Expr::VarProp { var, prop } if src.var == Some(var.as_str()) => src.data.column_index(prop),
            _ => None,
        })
        .collect();
    let mut distinct = y.distinct.then(DistinctRows::default);
    out.reserve(kept.len());
    let mut meter = Meter::new(&req.budget);
    for row in kept {
        meter.tick()?;
        let ctx = src.context(req, row);
        out.push_row_with(|i| match passed[i] {
            Some(c) => Ok(src.data.value(row, c).clone()),
            None => eval(&y.columns[i].expr, &ctx),
        })?;
        if let Some(d) = &mut distinct {
            d.admit_last(&mut out);
        }
    }
    Ok(out)
}

fn group_by(keys: &[Expr], y: &YieldClause, req: &Request<'_>, src: &RowSource<'_>) -> QResult<DataSet> {
    for c in &y.columns {
        if !c.expr.has_aggregate() && c.expr.reads_input() && !keys.contains(&c.expr) {
            return Err(QError::semantic(format!(
                "Yield non-agg expression `{}' must be functionally dependent on items in GROUP BY clause",
                c.expr
            )));
        }
    }
    let columns: Vec<String> = y.columns.iter().map(|c| c.name()).collect();
    let mut groups: Vec<(Vec<Value>, Vec<usize>)> = Vec::new();
    let mut index: HashMap<Vec<Value>, usize> = HashMap::default();
    let mut meter = Meter::new(&req.budget);
    for i in 0..src.len() {
        meter.tick()?;
        let ctx = src.context(req, i);
        let key = keys.iter().map(|k| eval(k, &ctx)).collect::<QResult<Vec<_>>>()?;
        match index.get(&key) {
            Some(&g) => groups[g].1.push(i),
            None => {
                index.insert(key.clone(), groups.len());
                groups.push((key, vec![i]));
            }
        }
    }
    let exprs: Vec<&Expr> = y.columns.iter().map(|c| &c.expr).collect();
    let mut out = DataSet::from_columns(columns, Vec::new());
    let mut seen = DistinctRows::default();
    for (_, members) in groups {
        let contexts: Vec<RowContext<'_>> = members.iter().map(|&i| src.context(req, i)).collect();
        let refs: Vec<&dyn EvalContext> = contexts.iter().map(|c| c as &dyn EvalContext).collect();
        out.push_row(eval_group(&exprs, &refs, refs[0])?);
        if y.distinct {
            seen.admit_last(&mut out);
        }
    }
    Ok(out)
}
