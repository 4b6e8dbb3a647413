//! AggregateExecutor: `GROUP BY ... YIELD` with its aggregates, and the implicit grouping of a YIELD whose columns
//! aggregate.

use crate::distinct::DistinctRows;
use crate::request::{input_rows, Request, RowContext, RowSource};
use crate::DataSet;
use quiver_common::budget::Meter;
use quiver_common::eval::{eval, EvalContext};
use quiver_common::expr::Expr;
use quiver_common::fasthash::{FastMap as HashMap, FastSet as HashSet};
use quiver_common::value::NullKind;
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::YieldClause;
use std::cmp::Ordering;

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
pub(crate) fn eval_group(columns: &[&Expr], rows: &[&dyn EvalContext], first: &dyn EvalContext) -> QResult<Vec<Value>> {
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

pub(crate) struct AggregateExecutor;

impl AggregateExecutor {
    pub fn execute(keys: &[Expr], y: &YieldClause, req: &Request<'_>, input: Option<&DataSet>) -> QResult<DataSet> {
        // The rows of the one variable the sentence reads (the validator saw to it that there is at most one),
        // else the piped input.
        let mut var = None;
        for e in keys.iter().chain(y.columns.iter().map(|c| &c.expr)) {
            e.visit(&mut |x| {
                if var.is_none() && matches!(x, Expr::VarProp { .. }) {
                    var = Some(x.clone());
                }
            });
        }
        if let Some(v) = var {
            return group_by(keys, y, req, &input_rows(&v, req, input)?);
        }
        let data =
            input.ok_or_else(|| QError::semantic("GROUP BY needs an input, as in `... | GROUP BY $-.c YIELD ...'"))?;
        group_by(keys, y, req, &RowSource { var: None, data })
    }
}

/// Groups `src`'s rows by `keys` (the validator checked the columns against them).
pub(crate) fn group_by(keys: &[Expr], y: &YieldClause, req: &Request<'_>, src: &RowSource<'_>) -> QResult<DataSet> {
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
