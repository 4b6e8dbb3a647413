//! Evaluates an [`Expr`] against an [`EvalContext`], with NebulaGraph's three-valued logic, EMPTY/NULL
//! distinction and checked integer arithmetic.

use crate::error::{QError, QResult};
use crate::expr::{BinaryOp, EdgeMeta, Expr, Quantifier, Reduce, UnaryOp, VertexRef};
use crate::functions;
use crate::limits::VALUE_DEPTH_MAX;
use crate::value::{NullKind, Value};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Where an expression finds the data it refers to. Each statement supplies its own; the defaults say the
/// reference is not valid in that statement.
pub trait EvalContext {
    fn param(&self, name: &str) -> QResult<Value> {
        Err(QError::semantic(format!("Undefined parameter or variable `${name}'")))
    }
    fn label_prop(&self, label: &str, _prop: &str) -> QResult<Value> {
        Err(QError::semantic(format!("Invalid label identifiers: {label}")))
    }
    fn edge_meta(&self, edge: &str, _meta: EdgeMeta) -> QResult<Value> {
        Err(QError::semantic(format!("Invalid label identifiers: {edge}")))
    }
    fn src_prop(&self, _tag: &str, _prop: &str) -> QResult<Value> {
        Err(QError::semantic("Only support input and variable in yield sentence."))
    }
    fn dst_prop(&self, _tag: &str, _prop: &str) -> QResult<Value> {
        Err(QError::semantic("Only support input and variable in yield sentence."))
    }
    fn input_prop(&self, col: &str) -> QResult<Value> {
        Err(QError::semantic(format!("`$-.{col}', not exist prop `{col}'")))
    }
    fn var_prop(&self, var: &str, col: &str) -> QResult<Value> {
        Err(QError::semantic(format!("`${var}.{col}', not exist variable `{var}'")))
    }
    fn label(&self, name: &str) -> QResult<Value> {
        Err(QError::semantic(format!("Invalid label identifiers: {name}")))
    }
    fn vertex(&self, which: VertexRef) -> QResult<Value> {
        let name = match which {
            VertexRef::Current => "VERTEX",
            VertexRef::Src => "$^",
            VertexRef::Dst => "$$",
        };
        Err(QError::semantic(format!("`{name}' is not valid in this statement")))
    }
    fn edge(&self) -> QResult<Value> {
        Err(QError::semantic("`EDGE' is not valid in this statement"))
    }
    /// The value of an aggregate call, where a grouping operator has computed it.
    fn aggregate(&self, expr: &Expr) -> QResult<Value> {
        Err(QError::semantic(format!("Invalid use of aggregating function in this context: `{expr}'")))
    }
}

/// The context of an expression that may only use constants (and parameters, if any are given).
pub struct ConstContext<'a> {
    pub params: Option<&'a BTreeMap<String, Value>>,
}

impl EvalContext for ConstContext<'_> {
    fn param(&self, name: &str) -> QResult<Value> {
        match self.params.and_then(|p| p.get(name)) {
            Some(v) => Ok(v.clone()),
            None => Err(QError::semantic(format!("Undefined parameter or variable `${name}'"))),
        }
    }
}

pub fn eval_const(expr: &Expr) -> QResult<Value> {
    eval(expr, &ConstContext { params: None })
}

pub fn eval(expr: &Expr, ctx: &dyn EvalContext) -> QResult<Value> {
    // The shapes a GO or a FETCH evaluates on every row (`knows.time`, `$$.person.name`, `dst(edge)`) go without
    // the depth bookkeeping, which cost about 7% of a 3-step GO: a value read from the context or a constant is
    // bounded already, and a function of such values builds at most one flat list.
    if let Some(v) = leaf(expr, ctx) {
        return v;
    }
    if let Expr::Function { name, args } = expr {
        if args.len() <= 4 && args.iter().all(is_leaf) {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(leaf(a, ctx).expect("checked to be a leaf")?);
            }
            return functions::call(name, vals);
        }
    }
    Ok(nested_eval(expr, ctx, None)?.0)
}

/// Whether `expr` reads one value from the context, or is a constant.
fn is_leaf(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::Const(_)
            | Expr::Param(_)
            | Expr::LabelProp { .. }
            | Expr::EdgeMetaProp { .. }
            | Expr::SrcProp { .. }
            | Expr::DstProp { .. }
            | Expr::InputProp(_)
            | Expr::VarProp { .. }
            | Expr::Vertex(_)
            | Expr::Edge
    )
}

/// The value of a leaf (see [`is_leaf`]); `None` for anything else.
fn leaf(expr: &Expr, ctx: &dyn EvalContext) -> Option<QResult<Value>> {
    Some(match expr {
        Expr::Const(v) => Ok(v.clone()),
        Expr::Param(name) => ctx.param(name),
        Expr::LabelProp { label, prop } => ctx.label_prop(label, prop),
        Expr::EdgeMetaProp { edge, meta } => ctx.edge_meta(edge, *meta),
        Expr::SrcProp { tag, prop } => ctx.src_prop(tag, prop),
        Expr::DstProp { tag, prop } => ctx.dst_prop(tag, prop),
        Expr::InputProp(col) => ctx.input_prop(col),
        Expr::VarProp { var, prop } => ctx.var_prop(var, prop),
        Expr::Vertex(which) => ctx.vertex(*which),
        Expr::Edge => ctx.edge(),
        _ => return None,
    })
}

/// A value and its [`Value::depth`], which the evaluator carries along so that a list built from other values knows
/// how deep it is without walking them again (a `reduce()` that grows a list one element a step would otherwise
/// walk the whole list at every step).
type Nested = (Value, usize);

/// A name bound by an enclosing list comprehension, predicate function or `reduce()` (a loop variable or an
/// accumulator), and the names bound around that one. Only a bare name ([`Expr::Label`]) reads it; every other
/// reference goes to the [`EvalContext`], which therefore needs nothing of its own for these expressions.
struct Scope<'a> {
    name: &'a str,
    value: &'a Value,
    depth: usize,
    outer: Option<&'a Scope<'a>>,
}

impl<'a> Scope<'a> {
    fn lookup(mut scope: Option<&'a Scope<'a>>, name: &str) -> Option<&'a Scope<'a>> {
        while let Some(s) = scope {
            if s.name == name {
                return Some(s);
            }
            scope = s.outer;
        }
        None
    }
}

/// `v` as built by `expr`, measured: refused if it nests deeper than [`VALUE_DEPTH_MAX`].
fn measured(v: Value, expr: &Expr) -> QResult<Nested> {
    let depth = v.depth();
    within_depth(v, depth, expr)
}

/// `v`, whose depth is known to be `depth`, unless that is over [`VALUE_DEPTH_MAX`].
fn within_depth(v: Value, depth: usize, expr: &Expr) -> QResult<Nested> {
    if depth > VALUE_DEPTH_MAX {
        let text = expr.to_string();
        let mut end = text.len().min(80);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        return Err(QError::semantic(format!(
            "`{}' would build a value nested deeper than {VALUE_DEPTH_MAX} levels",
            &text[..end]
        )));
    }
    Ok((v, depth))
}

// The evaluator recurses once per level of the expression, so its frames are kept small (a debug build gives
// every temporary its own slot): `nested_eval` reads references itself and hands each kind of node that holds
// others to a function of its own, so that a level costs `nested_eval`'s frame and one small one.

fn nested_eval(expr: &Expr, ctx: &dyn EvalContext, scope: Option<&Scope<'_>>) -> QResult<Nested> {
    let v = match expr {
        Expr::Const(v) => v.clone(),
        Expr::Param(name) => ctx.param(name)?,
        Expr::LabelProp { label, prop } => ctx.label_prop(label, prop)?,
        Expr::EdgeMetaProp { edge, meta } => ctx.edge_meta(edge, *meta)?,
        Expr::SrcProp { tag, prop } => ctx.src_prop(tag, prop)?,
        Expr::DstProp { tag, prop } => ctx.dst_prop(tag, prop)?,
        Expr::InputProp(col) => ctx.input_prop(col)?,
        Expr::VarProp { var, prop } => ctx.var_prop(var, prop)?,
        Expr::Label(name) => match Scope::lookup(scope, name) {
            Some(bound) => return Ok((bound.value.clone(), bound.depth)),
            None => ctx.label(name)?,
        },
        Expr::Vertex(which) => ctx.vertex(*which)?,
        Expr::Edge => ctx.edge()?,
        Expr::Aggregate { .. } => ctx.aggregate(expr)?,
        Expr::Attribute { .. } | Expr::Unary { .. } | Expr::Subscript { .. } | Expr::Slice { .. } => {
            return access(expr, ctx, scope)
        }
        Expr::Binary { .. } => return binary_node(expr, ctx, scope),
        Expr::Function { name, args } => return function(name, args, expr, ctx, scope),
        Expr::Cast { .. } => return cast(expr, ctx, scope),
        Expr::List(_) | Expr::Set(_) | Expr::Map(_) => return container(expr, ctx, scope),
        Expr::Case { .. } => return case(expr, ctx, scope),
        Expr::ListComprehension { var, list, filter, mapping } => {
            return comprehension(var, list, filter.as_deref(), mapping.as_deref(), expr, ctx, scope)
        }
        Expr::Predicate { quantifier, var, list, filter } => {
            return Ok((predicate(*quantifier, var, list, filter, ctx, scope)?, 0))
        }
        Expr::Reduce(r) => return reduce(r, ctx, scope),
        Expr::Pattern(_) => {
            return Err(QError::not_supported(format!("`{expr}' outside of a MATCH's WHERE (as a predicate)")))
        }
    };
    measured(v, expr)
}

/// The value of a node's operand.
fn operand(e: &Expr, ctx: &dyn EvalContext, scope: Option<&Scope<'_>>) -> QResult<Value> {
    Ok(nested_eval(e, ctx, scope)?.0)
}

/// `e.name`, `-e`, `e IS NULL`, `e[i]`, `e[lo..hi]`: values taken from one other, measured.
// Out of line in debug builds only, where every temporary of an inlined arm would take a slot in the
// caller's frame; a release build inlines as it sees fit.
#[cfg_attr(debug_assertions, inline(never))]
fn access(expr: &Expr, ctx: &dyn EvalContext, scope: Option<&Scope<'_>>) -> QResult<Nested> {
    let v = match expr {
        Expr::Attribute { base, name } => match expr.tag_prop() {
            // `n.tag.prop`: the property read where it is, without copying the tag's properties into a map first.
            Some((node, tag, prop)) => match operand(node, ctx, scope)? {
                Value::Vertex(v) => v
                    .tags
                    .iter()
                    .find(|t| t.name == tag)
                    .and_then(|t| t.props.get(prop).cloned())
                    .unwrap_or(Value::NULL),
                other => attribute(&attribute(&other, tag), prop),
            },
            None => attribute(&operand(base, ctx, scope)?, name),
        },
        Expr::Unary { op, operand: e } => unary(*op, operand(e, ctx, scope)?, expr)?,
        Expr::Subscript { base, index } => subscript(operand(base, ctx, scope)?, operand(index, ctx, scope)?),
        Expr::Slice { base, lo, hi } => {
            let b = operand(base, ctx, scope)?;
            let lo = lo.as_ref().map(|e| operand(e, ctx, scope)).transpose()?;
            let hi = hi.as_ref().map(|e| operand(e, ctx, scope)).transpose()?;
            slice(b, lo, hi)
        }
        _ => unreachable!("access called on {expr:?}"),
    };
    measured(v, expr)
}

// Out of line in debug builds only, where every temporary of an inlined arm would take a slot in the
// caller's frame; a release build inlines as it sees fit.
#[cfg_attr(debug_assertions, inline(never))]
fn binary_node(expr: &Expr, ctx: &dyn EvalContext, scope: Option<&Scope<'_>>) -> QResult<Nested> {
    let Expr::Binary { op, lhs, rhs } = expr else { unreachable!("binary_node called on {expr:?}") };
    let l = nested_eval(lhs, ctx, scope)?;
    // AND and OR decide on a false or true left side alone.
    match (op, &l.0) {
        (BinaryOp::And, Value::Bool(false)) | (BinaryOp::Or, Value::Bool(true)) => return Ok(l),
        (BinaryOp::And | BinaryOp::Or, _) => return Ok((logic(*op, l.0, operand(rhs, ctx, scope)?)?, 0)),
        _ => {}
    }
    nested_binary(*op, l, nested_eval(rhs, ctx, scope)?, expr)
}

// Out of line in debug builds only, where every temporary of an inlined arm would take a slot in the
// caller's frame; a release build inlines as it sees fit.
#[cfg_attr(debug_assertions, inline(never))]
fn function(
    name: &str,
    args: &[Expr],
    expr: &Expr,
    ctx: &dyn EvalContext,
    scope: Option<&Scope<'_>>,
) -> QResult<Nested> {
    // `exists(x.p)` of a NULL `x` is NULL, not false (NebulaGraph's PredicateExpression reads the container).
    if let [Expr::Attribute { base, .. } | Expr::Subscript { base, .. }] = args {
        if name.eq_ignore_ascii_case("exists") && matches!(operand(base, ctx, scope)?, Value::Null(NullKind::Null)) {
            return measured(Value::NULL, expr);
        }
    }
    let mut vals = Vec::with_capacity(args.len());
    for a in args {
        vals.push(operand(a, ctx, scope)?);
    }
    measured(functions::call(name, vals)?, expr)
}

/// A list, set or map literal: one level deeper than its deepest item.
// Out of line in debug builds only, where every temporary of an inlined arm would take a slot in the
// caller's frame; a release build inlines as it sees fit.
#[cfg_attr(debug_assertions, inline(never))]
fn container(expr: &Expr, ctx: &dyn EvalContext, scope: Option<&Scope<'_>>) -> QResult<Nested> {
    let mut deepest = 0;
    let v = match expr {
        Expr::List(items) | Expr::Set(items) => {
            let mut vals = Vec::with_capacity(items.len());
            for e in items {
                let (v, d) = nested_eval(e, ctx, scope)?;
                deepest = deepest.max(d);
                vals.push(v);
            }
            if matches!(expr, Expr::List(_)) {
                Value::List(vals)
            } else {
                Value::set_from(vals)
            }
        }
        Expr::Map(items) => {
            let mut m = BTreeMap::new();
            for (k, e) in items {
                let (v, d) = nested_eval(e, ctx, scope)?;
                deepest = deepest.max(d);
                m.insert(k.clone(), v);
            }
            Value::Map(m)
        }
        _ => unreachable!("container called on {expr:?}"),
    };
    within_depth(v, deepest + 1, expr)
}

// Out of line in debug builds only, as `case` is.
#[cfg_attr(debug_assertions, inline(never))]
fn cast(expr: &Expr, ctx: &dyn EvalContext, scope: Option<&Scope<'_>>) -> QResult<Nested> {
    let Expr::Cast { to, operand: o } = expr else { unreachable!("cast called on {expr:?}") };
    measured(functions::cast(*to, operand(o, ctx, scope)?)?, expr)
}

// Out of line in debug builds only, where every temporary of an inlined arm would take a slot in the
// caller's frame; a release build inlines as it sees fit.
#[cfg_attr(debug_assertions, inline(never))]
fn case(expr: &Expr, ctx: &dyn EvalContext, scope: Option<&Scope<'_>>) -> QResult<Nested> {
    let Expr::Case { operand: subject, whens, default, .. } = expr else { unreachable!("case called on {expr:?}") };
    let subject = subject.as_ref().map(|o| operand(o, ctx, scope)).transpose()?;
    for (w, t) in whens {
        let wv = operand(w, ctx, scope)?;
        let hit = match &subject {
            // The simple form compares as NebulaGraph's `Value::operator==` does: NULL equals NULL, and an int and a
            // float compare as numbers.
            Some(s) => match (s, &wv) {
                (Value::Null(a), Value::Null(b)) => a == b,
                _ => matches!(equal(s, &wv), Value::Bool(true)),
            },
            None => match wv {
                Value::Bool(b) => b,
                Value::Null(_) | Value::Empty => false,
                // A WHEN whose type is known must be a boolean (NebulaGraph's validator); any other is BAD_TYPE.
                other if matches!(w, Expr::Const(_)) => {
                    return Err(QError::semantic(format!(
                        "`{w}', expected BOOL, but was {}",
                        other.type_name().to_uppercase()
                    )))
                }
                _ => return Ok((Value::Null(NullKind::BadType), 0)),
            },
        };
        if hit {
            return nested_eval(t, ctx, scope);
        }
    }
    match default {
        Some(d) => nested_eval(d, ctx, scope),
        None => Ok((Value::NULL, 0)),
    }
}

/// A binary operator over measured operands. Only `+` builds a list (appending or concatenating), whose depth
/// follows from its operands'; every other result is measured (it is a scalar).
fn nested_binary(op: BinaryOp, (l, dl): Nested, (r, dr): Nested, expr: &Expr) -> QResult<Nested> {
    let lists = (matches!(l, Value::List(_)), matches!(r, Value::List(_)));
    let v = binary(op, l, r, expr)?;
    if op != BinaryOp::Add || !matches!(v, Value::List(_)) {
        return measured(v, expr);
    }
    let depth = match lists {
        (true, true) => dl.max(dr),
        (true, false) => dl.max(dr + 1),
        (false, true) => dr.max(dl + 1),
        (false, false) => return measured(v, expr),
    };
    within_depth(v, depth, expr)
}

/// The list a comprehension, predicate or `reduce()` iterates over: `Err(value)` for a NULL or EMPTY one, which
/// is the whole expression's value (as in NebulaGraph), and BAD_TYPE for anything else that is not a list.
fn iterated(list: &Expr, ctx: &dyn EvalContext, scope: Option<&Scope<'_>>) -> QResult<Result<Vec<Value>, Value>> {
    match nested_eval(list, ctx, scope)?.0 {
        Value::List(items) => Ok(Ok(items)),
        v @ (Value::Null(_) | Value::Empty) => Ok(Err(v)),
        // A list whose type the validator knew was checked there; one found on a row is BAD_TYPE, as NebulaGraph's
        // ListComprehensionExpression, PredicateExpression and ReduceExpression evaluate it.
        _ => Ok(Err(Value::Null(NullKind::BadType))),
    }
}

/// A comprehension's or predicate function's condition, as NebulaGraph reads it: a boolean, or a list (true when not
/// empty); `Ok(None)` for NULL or EMPTY, `Err(())` for any other value.
fn loop_condition(v: &Value) -> Result<Option<bool>, ()> {
    match v {
        Value::Bool(b) => Ok(Some(*b)),
        Value::List(items) => Ok(Some(!items.is_empty())),
        Value::Null(_) | Value::Empty => Ok(None),
        _ => Err(()),
    }
}

/// Fails once the query holds more than its memory bound or has run past its deadline: checked at every step of a
/// loop over a list, since a step can build anything and a `reduce()` can take quadratic time (the operators check
/// only between rows).
fn step_within_budget() -> QResult<()> {
    crate::budget::check_current()
}

/// `[var IN list WHERE filter | mapping]`: NULL for a NULL list, BAD_TYPE if the filter gives something other than
/// a boolean, a list, NULL or EMPTY; elements whose filter is not true are left out.
// Out of line in debug builds only, where every temporary of an inlined arm would take a slot in the
// caller's frame; a release build inlines as it sees fit.
#[cfg_attr(debug_assertions, inline(never))]
fn comprehension(
    var: &str,
    list: &Expr,
    filter: Option<&Expr>,
    mapping: Option<&Expr>,
    expr: &Expr,
    ctx: &dyn EvalContext,
    scope: Option<&Scope<'_>>,
) -> QResult<Nested> {
    let items = match iterated(list, ctx, scope)? {
        Ok(items) => items,
        Err(v) => return Ok((v, 0)),
    };
    // The result is at most as long as the list.
    crate::memory::reserve(items.len().saturating_mul(std::mem::size_of::<Value>()))?;
    let mut out = Vec::with_capacity(if filter.is_some() { 0 } else { items.len() });
    let mut deepest = 0;
    for item in &items {
        step_within_budget()?;
        let bound = Scope { name: var, value: item, depth: item.depth(), outer: scope };
        if let Some(f) = filter {
            match loop_condition(&nested_eval(f, ctx, Some(&bound))?.0) {
                Ok(Some(true)) => {}
                Ok(_) => continue,
                Err(()) => return Ok((Value::Null(NullKind::BadType), 0)),
            }
        }
        let (v, d) = match mapping {
            Some(m) => nested_eval(m, ctx, Some(&bound))?,
            None => (item.clone(), bound.depth),
        };
        deepest = deepest.max(d);
        out.push(v);
    }
    within_depth(Value::List(out), deepest + 1, expr)
}

/// `all`, `any`, `single` and `none` over a list, with NebulaGraph's treatment of a NULL condition: `all` and `none`
/// are NULL at the first one; `any` and `single` are NULL if one was met and the answer is not decided otherwise
/// (`any` by a true condition, `single` by a second one).
// Out of line in debug builds only, where every temporary of an inlined arm would take a slot in the
// caller's frame; a release build inlines as it sees fit.
#[cfg_attr(debug_assertions, inline(never))]
fn predicate(
    quantifier: Quantifier,
    var: &str,
    list: &Expr,
    filter: &Expr,
    ctx: &dyn EvalContext,
    scope: Option<&Scope<'_>>,
) -> QResult<Value> {
    let items = match iterated(list, ctx, scope)? {
        Ok(items) => items,
        Err(v) => return Ok(v),
    };
    let mut saw_null = false;
    let mut satisfied = false;
    for item in &items {
        step_within_budget()?;
        let bound = Scope { name: var, value: item, depth: item.depth(), outer: scope };
        let Ok(holds) = loop_condition(&nested_eval(filter, ctx, Some(&bound))?.0) else {
            return Ok(Value::Null(NullKind::BadType));
        };
        match (quantifier, holds) {
            (Quantifier::All | Quantifier::None, None) => return Ok(Value::NULL),
            (Quantifier::All, Some(false)) | (Quantifier::None, Some(true)) => return Ok(Value::Bool(false)),
            (Quantifier::Any, Some(true)) => return Ok(Value::Bool(true)),
            (Quantifier::Single, Some(true)) if satisfied => return Ok(Value::Bool(false)),
            (Quantifier::Single, Some(true)) => satisfied = true,
            (Quantifier::Any | Quantifier::Single, None) => saw_null = true,
            _ => {}
        }
    }
    Ok(match quantifier {
        Quantifier::All | Quantifier::None => Value::Bool(true),
        _ if saw_null => Value::NULL,
        Quantifier::Any => Value::Bool(false),
        Quantifier::Single => Value::Bool(satisfied),
    })
}

/// `reduce(acc = init, var IN list | mapping)`: `init` is evaluated first, then the list (NULL for a NULL list);
/// each step binds `var` to the next element and `acc` to the last step's value. Where the two names are the same,
/// the name is the accumulator, as in NebulaGraph.
// Out of line in debug builds only, where every temporary of an inlined arm would take a slot in the
// caller's frame; a release build inlines as it sees fit.
#[cfg_attr(debug_assertions, inline(never))]
fn reduce(r: &Reduce, ctx: &dyn EvalContext, scope: Option<&Scope<'_>>) -> QResult<Nested> {
    let Reduce { acc, init, var, list, mapping } = r;
    let (mut value, mut depth) = nested_eval(init, ctx, scope)?;
    let items = match iterated(list, ctx, scope)? {
        Ok(items) => items,
        Err(v) => return Ok((v, 0)),
    };
    for item in &items {
        step_within_budget()?;
        let next = {
            let element = Scope { name: var, value: item, depth: item.depth(), outer: scope };
            let accumulator = Scope { name: acc, value: &value, depth, outer: Some(&element) };
            nested_eval(mapping, ctx, Some(&accumulator))?
        };
        (value, depth) = next;
    }
    Ok((value, depth))
}

/// Evaluates a condition (WHERE, WHEN): true only for a boolean true; NULL and EMPTY count as false; any
/// other value is an error.
pub fn eval_condition(expr: &Expr, ctx: &dyn EvalContext) -> QResult<bool> {
    match eval(expr, ctx)? {
        Value::Bool(b) => Ok(b),
        Value::Null(_) | Value::Empty => Ok(false),
        other => {
            Err(QError::semantic(format!("`{expr}', expected Boolean, but was `{}'", other.type_name().to_uppercase())))
        }
    }
}

fn unary(op: UnaryOp, v: Value, expr: &Expr) -> QResult<Value> {
    Ok(match op {
        UnaryOp::IsNull => Value::Bool(v.is_null()),
        UnaryOp::IsNotNull => Value::Bool(!v.is_null()),
        UnaryOp::IsEmpty => Value::Bool(v.is_empty()),
        UnaryOp::IsNotEmpty => Value::Bool(!v.is_empty()),
        UnaryOp::Not => match v {
            Value::Bool(b) => Value::Bool(!b),
            Value::Null(_) | Value::Empty => v,
            _ => Value::Null(NullKind::BadType),
        },
        UnaryOp::Plus => match v {
            Value::Int(_) | Value::Float(_) | Value::Null(_) | Value::Empty => v,
            _ => Value::Null(NullKind::BadType),
        },
        UnaryOp::Minus => match v {
            Value::Int(i) => match i.checked_neg() {
                Some(n) => Value::Int(n),
                None => return Err(overflow(expr)),
            },
            Value::Float(f) => Value::Float(-f),
            Value::Duration(d) => Value::Duration(d.negate()),
            Value::Null(_) | Value::Empty => v,
            _ => Value::Null(NullKind::BadType),
        },
    })
}

/// NebulaGraph's overflow error. It is raised while constants are folded, children first, so a negated integer
/// literal among the operands has become a negative constant by then: `-9223372036854775807-2` is reported as
/// `(-9223372036854775807-2)`, `- -9223372036854775808` as `-(-9223372036854775808)`.
fn overflow(expr: &Expr) -> QError {
    let negated_literal = |e: &Expr| match e {
        Expr::Unary { op: UnaryOp::Minus, operand } => match **operand {
            Expr::Const(Value::Int(i)) => i.checked_neg().map(|n| Expr::Const(Value::Int(n))),
            _ => None,
        },
        _ => None,
    };
    let shown = match expr {
        Expr::Binary { op, lhs, rhs } if negated_literal(lhs).is_some() || negated_literal(rhs).is_some() => {
            let lhs = negated_literal(lhs).unwrap_or_else(|| (**lhs).clone());
            let rhs = negated_literal(rhs).unwrap_or_else(|| (**rhs).clone());
            Expr::binary(*op, lhs, rhs)
        }
        _ => expr.clone(),
    };
    QError::semantic(format!("result of {shown} cannot be represented as an integer"))
}

fn logic(op: BinaryOp, l: Value, r: Value) -> QResult<Value> {
    let as_tri = |v: &Value| -> Result<Option<bool>, ()> {
        match v {
            Value::Bool(b) => Ok(Some(*b)),
            Value::Null(_) | Value::Empty => Ok(None),
            _ => Err(()),
        }
    };
    let (a, b) = match (as_tri(&l), as_tri(&r)) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return Ok(Value::Null(NullKind::BadType)),
    };
    // An undecided result is NULL if a NULL took part, otherwise EMPTY.
    let unknown = if l.is_null() || r.is_null() {
        Value::NULL
    } else if l.is_empty() || r.is_empty() {
        Value::Empty
    } else {
        Value::NULL
    };
    Ok(match op {
        BinaryOp::And => match (a, b) {
            (Some(false), _) | (_, Some(false)) => Value::Bool(false),
            (Some(true), Some(true)) => Value::Bool(true),
            _ => unknown,
        },
        BinaryOp::Or => match (a, b) {
            (Some(true), _) | (_, Some(true)) => Value::Bool(true),
            (Some(false), Some(false)) => Value::Bool(false),
            _ => unknown,
        },
        BinaryOp::Xor => match (a, b) {
            (Some(x), Some(y)) => Value::Bool(x ^ y),
            _ => unknown,
        },
        _ => unreachable!("logic called with {op:?}"),
    })
}

/// Three-valued `==`, as NebulaGraph's `Value::equal`: EMPTY equals nothing else (false, so `!=` is true) and is
/// NULL against itself; otherwise NULL if either side is NULL, false across unrelated types.
pub fn equal(l: &Value, r: &Value) -> Value {
    if l.is_empty() || r.is_empty() {
        return if l.is_empty() && r.is_empty() { Value::NULL } else { Value::Bool(false) };
    }
    if l.is_null() || r.is_null() {
        return Value::NULL;
    }
    if let (Value::Geography(a), Value::Geography(b)) = (l, r) {
        return Value::Bool(a.approx_eq(b));
    }
    Value::Bool(same(l, r))
}

/// Two-valued equality of values neither EMPTY nor NULL at the top: numbers within [`FLOAT_EPSILON`] when one is a
/// float, lists item by item (so `[1.9999999999] == [2]`, as NebulaGraph's `List::operator==` finds), anything
/// else by its order.
fn same(l: &Value, r: &Value) -> bool {
    match (l, r) {
        // Items of lists: a NULL equals a NULL of its kind, an EMPTY an EMPTY.
        (Value::Null(a), Value::Null(b)) => return a == b,
        (Value::Empty, Value::Empty) => return true,
        _ => {}
    }
    if let Some((a, b)) = floats(l, r) {
        return (a - b).abs() < FLOAT_EPSILON;
    }
    if let (Value::List(a), Value::List(b)) = (l, r) {
        return a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y));
    }
    comparable(l, r) && l.total_cmp(r) == Ordering::Equal
}

/// NebulaGraph's `kEpsilon`: numbers of which one is a float are equal when this close, and ordered only when not.
const FLOAT_EPSILON: f64 = 1e-8;

/// Both sides as floats, when they are numbers and at least one is a float.
fn floats(l: &Value, r: &Value) -> Option<(f64, f64)> {
    match (l, r) {
        (Value::Float(a), Value::Float(b)) => Some((*a, *b)),
        (Value::Float(a), Value::Int(b)) => Some((*a, *b as f64)),
        (Value::Int(a), Value::Float(b)) => Some((*a as f64, *b)),
        _ => None,
    }
}

fn comparable(l: &Value, r: &Value) -> bool {
    matches!(
        (l, r),
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_))
            | (Value::Bool(_), Value::Bool(_))
            | (Value::String(_), Value::String(_))
            | (Value::Date(_), Value::Date(_))
            | (Value::Time(_), Value::Time(_))
            | (Value::DateTime(_), Value::DateTime(_))
            | (Value::Duration(_), Value::Duration(_))
            | (Value::List(_), Value::List(_))
            | (Value::Set(_), Value::Set(_))
            | (Value::Map(_), Value::Map(_))
            | (Value::Vertex(_), Value::Vertex(_))
            | (Value::Edge(_), Value::Edge(_))
            | (Value::Path(_), Value::Path(_))
            | (Value::Geography(_), Value::Geography(_))
    )
}

fn ordering(op: BinaryOp, l: &Value, r: &Value) -> Value {
    if l.is_null() || r.is_null() {
        return Value::NULL;
    }
    if l.is_empty() || r.is_empty() {
        return Value::Empty;
    }
    // NebulaGraph's `Value::lessThan`: values of two types (other than two numbers) have no order, a plain NULL
    // (`'Tim Duncan' > 0` filters its row out, it is no type error).
    if !comparable(l, r) {
        return Value::NULL;
    }
    // A duration has no order, only equality (NebulaGraph's `Duration` defines `==` alone).
    if matches!(l, Value::Duration(_)) {
        return Value::Null(NullKind::BadType);
    }
    let o = match floats(l, r) {
        Some((a, b)) if (a - b).abs() < FLOAT_EPSILON => Ordering::Equal,
        _ => l.total_cmp(r),
    };
    Value::Bool(match op {
        BinaryOp::Lt => o == Ordering::Less,
        BinaryOp::Le => o != Ordering::Greater,
        BinaryOp::Gt => o == Ordering::Greater,
        BinaryOp::Ge => o != Ordering::Less,
        _ => unreachable!(),
    })
}

fn negate(v: Value) -> Value {
    match v {
        Value::Bool(b) => Value::Bool(!b),
        other => other,
    }
}

fn binary(op: BinaryOp, l: Value, r: Value, expr: &Expr) -> QResult<Value> {
    use BinaryOp::*;
    Ok(match op {
        Add | Sub | Mul | Div | Mod => arith(op, l, r, expr)?,
        Eq => equal(&l, &r),
        Ne => negate(equal(&l, &r)),
        Lt | Le | Gt | Ge => ordering(op, &l, &r),
        In => contains_member(&r, &l),
        NotIn => negate(contains_member(&r, &l)),
        Contains | NotContains | StartsWith | NotStartsWith | EndsWith | NotEndsWith => {
            let v = match (&l, &r) {
                (Value::Null(_), _) | (_, Value::Null(_)) => Value::NULL,
                (Value::Empty, _) | (_, Value::Empty) => Value::Empty,
                (Value::String(a), Value::String(b)) => Value::Bool(match op {
                    Contains | NotContains => a.contains(&**b),
                    StartsWith | NotStartsWith => a.starts_with(&**b),
                    _ => a.ends_with(&**b),
                }),
                _ => Value::Null(NullKind::BadType),
            };
            if matches!(op, NotContains | NotStartsWith | NotEndsWith) {
                negate(v)
            } else {
                v
            }
        }
        Regex => match (&l, &r) {
            (Value::Null(_), _) | (_, Value::Null(_)) => Value::NULL,
            (Value::Empty, _) | (_, Value::Empty) => Value::Empty,
            (Value::String(s), Value::String(pattern)) => Value::Bool(regex_full_match(pattern, s)?),
            _ => Value::Null(NullKind::BadType),
        },
        And | Or | Xor => logic(op, l, r)?,
    })
}

fn regex_full_match(pattern: &str, s: &str) -> QResult<bool> {
    if pattern.len() > crate::limits::REGEX_BYTES_MAX {
        return Err(QError::semantic(format!(
            "Regular expression longer than {} bytes",
            crate::limits::REGEX_BYTES_MAX
        )));
    }
    let re = regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
        .size_limit(crate::limits::REGEX_COMPILED_BYTES_MAX)
        .build()
        .map_err(|_| QError::semantic(format!("Invalid regular expression `{pattern}'")))?;
    Ok(re.is_match(s))
}

fn contains_member(container: &Value, item: &Value) -> Value {
    match container {
        Value::List(items) | Value::Set(items) => {
            if item.is_null() {
                return Value::NULL;
            }
            let mut saw_null = false;
            for v in items {
                match equal(item, v) {
                    Value::Bool(true) => return Value::Bool(true),
                    Value::Null(_) => saw_null = true,
                    _ => {}
                }
            }
            if saw_null {
                Value::NULL
            } else {
                Value::Bool(false)
            }
        }
        Value::Map(m) => match item {
            Value::String(k) => Value::Bool(m.contains_key(&**k)),
            _ => Value::Null(NullKind::BadType),
        },
        Value::Null(_) => Value::NULL,
        Value::Empty => Value::Empty,
        _ => Value::Null(NullKind::BadType),
    }
}

fn arith(op: BinaryOp, l: Value, r: Value, expr: &Expr) -> QResult<Value> {
    use BinaryOp::*;
    if l.is_null() || r.is_null() {
        return Ok(Value::NULL);
    }
    if l.is_empty() || r.is_empty() {
        return Ok(Value::Empty);
    }
    Ok(match (op, &l, &r) {
        (_, Value::Int(a), Value::Int(b)) => {
            let (a, b) = (*a, *b);
            let res = match op {
                Add => a.checked_add(b),
                Sub => a.checked_sub(b),
                Mul => a.checked_mul(b),
                Div | Mod if b == 0 => return Err(QError::semantic("Divide by 0")),
                Div => a.checked_div(b),
                Mod => a.checked_rem(b),
                _ => unreachable!(),
            };
            Value::Int(res.ok_or_else(|| overflow(expr))?)
        }
        (_, Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            let a = as_f64(&l);
            let b = as_f64(&r);
            match op {
                Add => Value::Float(a + b),
                Sub => Value::Float(a - b),
                Mul => Value::Float(a * b),
                // As NebulaGraph: a float division by zero is IEEE's (NaN, inf or -inf); only integers refuse it.
                Div => Value::Float(a / b),
                Mod => Value::Float(a % b),
                _ => unreachable!(),
            }
        }
        (Add, Value::String(a), Value::String(b)) => Value::str(format!("{a}{b}")),
        (Add, Value::String(a), Value::Int(_) | Value::Float(_) | Value::Bool(_)) => Value::str(format!("{a}{r}")),
        (Add, Value::Int(_) | Value::Float(_) | Value::Bool(_), Value::String(b)) => Value::str(format!("{l}{b}")),
        (Add, Value::List(a), Value::List(b)) => Value::List(a.iter().chain(b.iter()).cloned().collect()),
        (Add, Value::List(a), _) => Value::List(a.iter().cloned().chain(std::iter::once(r.clone())).collect()),
        (Add, _, Value::List(b)) => Value::List(std::iter::once(l.clone()).chain(b.iter().cloned()).collect()),
        (Add | Sub, Value::Duration(a), Value::Duration(b)) => {
            let b = if op == Sub { b.negate() } else { *b };
            Value::Duration(a.add(&b).ok_or_else(|| overflow(expr))?)
        }
        // As NebulaGraph's Value.cpp: `date ± int` counts days, `date - date` is the days between, and a date, time
        // or datetime moves by a duration on its right (a duration on the left of one is BAD_TYPE).
        (Add | Sub, Value::Date(d), Value::Int(days)) => {
            let days = if op == Sub { days.checked_neg().ok_or_else(|| overflow(expr))? } else { *days };
            Value::Date(d.add_days(days).ok_or_else(|| overflow(expr))?)
        }
        (Add, Value::Int(days), Value::Date(d)) => Value::Date(d.add_days(*days).ok_or_else(|| overflow(expr))?),
        (Sub, Value::Date(a), Value::Date(b)) => Value::Int(a.to_days() - b.to_days()),
        (Add | Sub, Value::Date(d), Value::Duration(dur)) => {
            let sign = if op == Sub { -1 } else { 1 };
            Value::Date(d.add_duration(dur, sign).ok_or_else(|| overflow(expr))?)
        }
        (Add | Sub, Value::DateTime(d), Value::Duration(dur)) => {
            let sign = if op == Sub { -1 } else { 1 };
            Value::DateTime(d.add_duration(dur, sign).ok_or_else(|| overflow(expr))?)
        }
        (Add | Sub, Value::Time(t), Value::Duration(dur)) => {
            Value::Time(t.add_duration(dur, if op == Sub { -1 } else { 1 }))
        }
        _ => Value::Null(NullKind::BadType),
    })
}

pub fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

fn attribute(base: &Value, name: &str) -> Value {
    match base {
        Value::Map(m) => m.get(name).cloned().unwrap_or(Value::NULL),
        // As NebulaGraph's attribute expression: `_src`, `_dst`, `_rank` and `_type` (the name) of an edge, `_vid`
        // of a vertex (`e._dst` written on a loop variable becomes one).
        Value::Edge(e) => match name {
            "_src" => e.src.clone(),
            "_dst" => e.dst.clone(),
            "_rank" => Value::Int(e.ranking),
            "_type" => Value::str(e.name.as_str()),
            _ => e.props.get(name).cloned().unwrap_or(Value::NULL),
        },
        Value::Vertex(v) if name == "_vid" => v.vid.clone(),
        Value::Vertex(v) => {
            v.tags.iter().find(|t| t.name == name).map(|t| Value::Map(t.props.clone())).unwrap_or(Value::NULL)
        }
        Value::Date(d) => match name.to_lowercase().as_str() {
            "year" => Value::Int(d.year as i64),
            "month" => Value::Int(d.month as i64),
            "day" => Value::Int(d.day as i64),
            _ => Value::Null(NullKind::UnknownProp),
        },
        Value::Time(t) => time_attr(t, name),
        Value::DateTime(dt) => match name.to_lowercase().as_str() {
            "year" => Value::Int(dt.date.year as i64),
            "month" => Value::Int(dt.date.month as i64),
            "day" => Value::Int(dt.date.day as i64),
            _ => time_attr(&dt.time, name),
        },
        Value::Null(_) => Value::NULL,
        Value::Empty => Value::Empty,
        _ => Value::Null(NullKind::BadType),
    }
}

fn time_attr(t: &crate::datetime::Time, name: &str) -> Value {
    match name.to_lowercase().as_str() {
        "hour" => Value::Int(t.hour as i64),
        "minute" => Value::Int(t.minute as i64),
        "second" => Value::Int(t.sec as i64),
        "millisecond" => Value::Int((t.microsec / 1000) as i64),
        "microsecond" => Value::Int((t.microsec % 1000) as i64),
        _ => Value::Null(NullKind::UnknownProp),
    }
}

fn subscript(base: Value, index: Value) -> Value {
    match (&base, &index) {
        (Value::Null(_), _) | (_, Value::Null(_)) => Value::NULL,
        (Value::List(items), Value::Int(i)) => {
            let len = items.len() as i64;
            let i = if *i < 0 { len + *i } else { *i };
            if i < 0 || i >= len {
                // NebulaGraph's SubscriptExpression: an index past either end is OUT_OF_RANGE.
                Value::Null(NullKind::OutOfRange)
            } else {
                items[i as usize].clone()
            }
        }
        // NebulaGraph's SubscriptExpression on a vertex: `_vid`, else the property of the first tag that has it
        // (where `v.tag` reads a tag).
        (Value::Vertex(v), Value::String(k)) if k.as_str() != "_vid" => {
            v.tags.iter().find_map(|t| t.props.get(k.as_str()).cloned()).unwrap_or(Value::NULL)
        }
        (Value::Map(_) | Value::Edge(_) | Value::Vertex(_), Value::String(k)) => attribute(&base, k),
        (Value::Empty, _) => Value::Empty,
        _ => Value::Null(NullKind::BadType),
    }
}

fn slice(base: Value, lo: Option<Value>, hi: Option<Value>) -> Value {
    let Value::List(items) = base else {
        return if base.is_null() { Value::NULL } else { Value::Null(NullKind::BadType) };
    };
    let len = items.len() as i64;
    let norm = |v: Option<Value>, default: i64| -> Option<i64> {
        match v {
            None => Some(default),
            Some(Value::Int(i)) => Some(if i < 0 { (len + i).max(0) } else { i.min(len) }),
            _ => None,
        }
    };
    match (norm(lo, 0), norm(hi, len)) {
        (Some(a), Some(b)) if a < b => Value::List(items[a as usize..b as usize].to_vec()),
        (Some(_), Some(_)) => Value::List(vec![]),
        _ => Value::NULL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Reduce;

    fn int(i: i64) -> Expr {
        Expr::Const(Value::Int(i))
    }

    fn label(n: &str) -> Expr {
        Expr::Label(n.into())
    }

    fn ints(items: &[i64]) -> Value {
        Value::List(items.iter().map(|&i| Value::Int(i)).collect())
    }

    fn call(name: &str, args: Vec<Expr>) -> Expr {
        Expr::Function { name: name.into(), args }
    }

    fn comprehension(var: &str, list: Expr, filter: Option<Expr>, mapping: Option<Expr>) -> Expr {
        Expr::ListComprehension {
            var: var.into(),
            list: Box::new(list),
            filter: filter.map(Box::new),
            mapping: mapping.map(Box::new),
        }
    }

    fn reduce(acc: &str, init: Expr, var: &str, list: Expr, mapping: Expr) -> Expr {
        Expr::Reduce(Box::new(Reduce { acc: acc.into(), init, var: var.into(), list, mapping }))
    }

    /// A statement's context: names `x` and `y`, a property `x.p`, a deep map and list as parameters.
    struct Row;

    /// A value `depth` levels deep.
    fn deep(depth: usize, map: bool) -> Value {
        let mut v = Value::Int(0);
        for _ in 0..depth {
            v = if map { Value::Map(BTreeMap::from([("k".to_string(), v)])) } else { Value::List(vec![v]) };
        }
        v
    }

    impl EvalContext for Row {
        fn label(&self, name: &str) -> QResult<Value> {
            match name {
                "x" => Ok(Value::Int(100)),
                "y" => Ok(Value::Int(7)),
                _ => Err(QError::semantic(format!("no `{name}' here"))),
            }
        }
        fn label_prop(&self, label: &str, prop: &str) -> QResult<Value> {
            Ok(Value::str(format!("{label}.{prop} of the row")))
        }
        fn param(&self, name: &str) -> QResult<Value> {
            Ok(deep(VALUE_DEPTH_MAX, name == "map"))
        }
    }

    #[test]
    fn a_loop_variable_hides_the_context_only_as_a_bare_name() {
        let add = |a: &str, b: &str| Expr::binary(BinaryOp::Add, label(a), label(b));
        let list = Expr::List(vec![int(1), int(2)]);
        // `x` is the element, `y` still the context's.
        let e = comprehension("x", list.clone(), None, Some(add("x", "y")));
        assert_eq!(eval(&e, &Row).unwrap(), ints(&[8, 9]));
        // Outside the comprehension, and in its list, `x` is the context's again.
        let e = Expr::List(vec![comprehension("x", Expr::List(vec![label("x")]), None, Some(label("x"))), label("x")]);
        assert_eq!(eval(&e, &Row).unwrap(), Value::List(vec![ints(&[100]), Value::Int(100)]));
        // A property reference is always the context's (the parser writes `x.p` on a loop variable as an attribute),
        // so an expression moved under a comprehension by a rewrite keeps its meaning.
        let prop = Expr::LabelProp { label: "x".into(), prop: "p".into() };
        let e = comprehension("x", list.clone(), None, Some(prop));
        assert_eq!(eval(&e, &Row).unwrap(), Value::List(vec![Value::str("x.p of the row"); 2]));
        // Names the context does not know keep its error.
        let e = comprehension("x", list, Some(label("z")), None);
        assert_eq!(eval(&e, &Row).unwrap_err().message, "SemanticError: no `z' here");
        // reduce: the accumulator, then the element, then the context.
        let e = reduce(
            "s",
            int(0),
            "x",
            Expr::List(vec![int(1), int(2)]),
            Expr::binary(BinaryOp::Add, add("s", "x"), label("y")),
        );
        assert_eq!(eval(&e, &Row).unwrap(), Value::Int(17));
    }

    #[test]
    fn a_built_value_deeper_than_the_bound_is_refused() {
        let too_deep = |text: &str| {
            format!("SemanticError: `{text}' would build a value nested deeper than {VALUE_DEPTH_MAX} levels")
        };
        let deepest = Expr::Param("list".into());
        let map = Expr::Param("map".into());
        assert_eq!(eval(&deepest, &Row).unwrap().depth(), VALUE_DEPTH_MAX);
        // Concatenating lists keeps the deeper side's depth; appending or prepending another value nests it.
        let cat = Expr::binary(BinaryOp::Add, deepest.clone(), Expr::List(vec![int(1)]));
        assert_eq!(eval(&cat, &Row).unwrap().depth(), VALUE_DEPTH_MAX);
        let append = Expr::binary(BinaryOp::Add, Expr::List(vec![int(1)]), map.clone());
        assert_eq!(eval(&append, &Row).unwrap_err().message, too_deep("([1]+$map)"));
        let prepend = Expr::binary(BinaryOp::Add, map.clone(), Expr::List(vec![]));
        assert_eq!(eval(&prepend, &Row).unwrap_err().message, too_deep("($map+[])"));
        for built in [
            Expr::List(vec![deepest.clone()]),
            Expr::Set(vec![deepest.clone()]),
            Expr::Map(vec![("a".into(), deepest.clone())]),
        ] {
            assert_eq!(eval(&built, &Row).unwrap_err().message, too_deep(&built.to_string()));
        }
        // The elements of `$list` are one level less deep: wrapped, they are as deep as it; listed again, deeper.
        let mapped = comprehension("v", deepest.clone(), None, Some(Expr::List(vec![label("v")])));
        assert_eq!(eval(&mapped, &Row).unwrap_err().message, too_deep("[v IN $list | [v]]"));
        // A long expression is quoted by its first 80 bytes.
        let long = Expr::List(vec![deepest, Expr::Const(Value::str("é".repeat(100)))]);
        let message = eval(&long, &Row).unwrap_err().message;
        assert!(message.starts_with("SemanticError: `[$list,\"éé") && message.contains("é' would build"), "{message}");
    }

    #[test]
    fn loops_stop_at_the_memory_bound() {
        let account = crate::memory::Account::new(40 << 20);
        let _scope = account.enter();
        // A string doubled at every step outgrows the bound long before the list ends.
        let s = Expr::binary(BinaryOp::Add, label("s"), label("s"));
        let doubling = reduce("s", Expr::Const(Value::str("x")), "i", call("range", vec![int(1), int(60)]), s);
        let e = eval(&doubling, &ConstContext { params: None }).unwrap_err();
        assert!(e.message.starts_with("GraphMemoryExceeded"), "{}", e.message);
        // The result of a comprehension is reserved before it is built.
        let million = comprehension("i", call("range", vec![int(1), int(1_000_000)]), None, Some(label("i")));
        let e = eval(&million, &ConstContext { params: None }).unwrap_err();
        assert!(e.message.starts_with("GraphMemoryExceeded"), "{}", e.message);
        let small = comprehension("i", call("range", vec![int(1), int(1000)]), None, Some(label("i")));
        assert_eq!(eval(&small, &ConstContext { params: None }).unwrap(), ints(&(1..=1000).collect::<Vec<_>>()));
    }
}
