//! Evaluates an [`Expr`] against an [`EvalContext`], with NebulaGraph's three-valued logic, EMPTY/NULL
//! distinction and checked integer arithmetic.

use crate::error::{QError, QResult};
use crate::expr::{BinaryOp, EdgeMeta, Expr, UnaryOp, VertexRef};
use crate::functions;
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
    match expr {
        Expr::Const(v) => Ok(v.clone()),
        Expr::Param(name) => ctx.param(name),
        Expr::LabelProp { label, prop } => ctx.label_prop(label, prop),
        Expr::EdgeMetaProp { edge, meta } => ctx.edge_meta(edge, *meta),
        Expr::SrcProp { tag, prop } => ctx.src_prop(tag, prop),
        Expr::DstProp { tag, prop } => ctx.dst_prop(tag, prop),
        Expr::InputProp(col) => ctx.input_prop(col),
        Expr::VarProp { var, prop } => ctx.var_prop(var, prop),
        Expr::Label(name) => ctx.label(name),
        Expr::Vertex(which) => ctx.vertex(*which),
        Expr::Edge => ctx.edge(),
        Expr::Attribute { base, name } => Ok(attribute(&eval(base, ctx)?, name)),
        Expr::Unary { op, operand } => {
            let v = eval(operand, ctx)?;
            unary(*op, v, expr)
        }
        Expr::Binary { op: BinaryOp::And, lhs, rhs } => {
            let l = eval(lhs, ctx)?;
            if let Value::Bool(false) = l {
                return Ok(Value::Bool(false));
            }
            logic(BinaryOp::And, l, eval(rhs, ctx)?)
        }
        Expr::Binary { op: BinaryOp::Or, lhs, rhs } => {
            let l = eval(lhs, ctx)?;
            if let Value::Bool(true) = l {
                return Ok(Value::Bool(true));
            }
            logic(BinaryOp::Or, l, eval(rhs, ctx)?)
        }
        Expr::Binary { op, lhs, rhs } => {
            let l = eval(lhs, ctx)?;
            let r = eval(rhs, ctx)?;
            binary(*op, l, r, expr)
        }
        Expr::Function { name, args } => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(eval(a, ctx)?);
            }
            functions::call(name, vals)
        }
        Expr::Aggregate { .. } => ctx.aggregate(expr),
        Expr::List(items) => Ok(Value::List(items.iter().map(|e| eval(e, ctx)).collect::<QResult<_>>()?)),
        Expr::Set(items) => Ok(Value::set_from(items.iter().map(|e| eval(e, ctx)).collect::<QResult<_>>()?)),
        Expr::Map(items) => {
            let mut m = BTreeMap::new();
            for (k, e) in items {
                m.insert(k.clone(), eval(e, ctx)?);
            }
            Ok(Value::Map(m))
        }
        Expr::Subscript { base, index } => Ok(subscript(eval(base, ctx)?, eval(index, ctx)?)),
        Expr::Slice { base, lo, hi } => {
            let b = eval(base, ctx)?;
            let lo = lo.as_ref().map(|e| eval(e, ctx)).transpose()?;
            let hi = hi.as_ref().map(|e| eval(e, ctx)).transpose()?;
            Ok(slice(b, lo, hi))
        }
        Expr::Case { operand, whens, default } => {
            let subject = operand.as_ref().map(|o| eval(o, ctx)).transpose()?;
            for (w, t) in whens {
                let wv = eval(w, ctx)?;
                let hit = match &subject {
                    Some(s) => matches!(equal(s, &wv), Value::Bool(true)),
                    None => match wv {
                        Value::Bool(b) => b,
                        Value::Null(_) | Value::Empty => false,
                        other => {
                            return Err(QError::semantic(format!(
                                "Failed to evaluate condition: {w}. For boolean conditions, please write in their full forms like <condition> == <true/false> or <condition> IS [NOT] NULL. Got {other}"
                            )))
                        }
                    },
                };
                if hit {
                    return eval(t, ctx);
                }
            }
            match default {
                Some(d) => eval(d, ctx),
                None => Ok(Value::NULL),
            }
        }
    }
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

fn overflow(expr: &Expr) -> QError {
    QError::semantic(format!("result of {expr} cannot be represented as an integer"))
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

/// Three-valued `==`: NULL if either side is NULL, EMPTY if either is EMPTY, false across unrelated types.
pub fn equal(l: &Value, r: &Value) -> Value {
    if l.is_null() || r.is_null() {
        return Value::NULL;
    }
    if l.is_empty() || r.is_empty() {
        return Value::Empty;
    }
    Value::Bool(comparable(l, r) && l.total_cmp(r) == Ordering::Equal)
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
    )
}

fn ordering(op: BinaryOp, l: &Value, r: &Value) -> Value {
    if l.is_null() || r.is_null() {
        return Value::NULL;
    }
    if l.is_empty() || r.is_empty() {
        return Value::Empty;
    }
    if !comparable(l, r) {
        return Value::Null(NullKind::BadType);
    }
    let o = l.total_cmp(r);
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
                Div | Mod if b == 0.0 => return Err(QError::semantic("Divide by 0")),
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
        (Add | Sub, Value::Date(d), Value::Duration(dur)) => {
            let sign = if op == Sub { -1 } else { 1 };
            let dt = crate::datetime::DateTime { date: *d, time: crate::datetime::Time::from_micros(0) };
            Value::Date(dt.add_duration(dur, sign).ok_or_else(|| overflow(expr))?.date)
        }
        (Add | Sub, Value::DateTime(d), Value::Duration(dur)) => {
            let sign = if op == Sub { -1 } else { 1 };
            Value::DateTime(d.add_duration(dur, sign).ok_or_else(|| overflow(expr))?)
        }
        (Add | Sub, Value::Time(t), Value::Duration(dur)) => {
            let sign = if op == Sub { -1 } else { 1 };
            let delta = (dur.seconds * 1_000_000 + dur.microseconds as i64) * sign;
            Value::Time(crate::datetime::Time::from_micros(t.to_micros() + delta))
        }
        (Add, Value::Duration(_), Value::Date(_) | Value::DateTime(_) | Value::Time(_)) => {
            return arith(op, r, l, expr)
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
        Value::Edge(e) => e.props.get(name).cloned().unwrap_or(Value::NULL),
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
                Value::NULL
            } else {
                items[i as usize].clone()
            }
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
