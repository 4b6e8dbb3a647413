//! Type deduction: the type of an expression before anything runs, and the semantic errors that a type alone decides
//! (NebulaGraph's `DeduceTypeVisitor`, which its validators run over every YIELD column, WHERE filter, ORDER BY and
//! GROUP BY key and UNWIND list). A function called with arguments whose types match none of its signatures is
//! refused with NebulaGraph's "Parameter's type error"; an operator applied to types it does not take is refused with
//! "can not apply".
//!
//! What a type is known of: constants, operators and function calls over them, list/set/map literals, `$^`, `$$`,
//! `vertex`, `edge`, `e._type`, `e._rank`, `id`/`src`/`dst` (the space's VID type), and a schema property
//! (`$^.t.p`, `$$.t.p`, `e.p`, `t.p`: its declared type). A column, a variable, a parameter or a MATCH alias is
//! unknown (`__EMPTY__`), which every check lets through, as NebulaGraph does for what it cannot type; NebulaGraph
//! also types a piped column by the type its producer deduced, which Quiver does only for a piped VID of a DELETE
//! or UPDATE VERTEX (`Validator::check_piped_vid`, `docs/compat.md`).

use quiver_api::VidType;
use quiver_common::datetime::{Date, DateTime, Duration, Time};
use quiver_common::eval::eval_const;
use quiver_common::expr::{BinaryOp, CastTo, EdgeMeta, Expr, UnaryOp, VertexRef};
use quiver_common::types::PropType;
use quiver_common::value::{Edge, NullKind, Path, Value, Vertex};
use quiver_common::{QError, QResult};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// A value type as NebulaGraph's `Value::Type` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Ty {
    Empty,
    Null,
    Bool,
    Int,
    Float,
    String,
    Date,
    Time,
    DateTime,
    Duration,
    List,
    Set,
    Map,
    Vertex,
    Edge,
    Path,
    Geography,
    DataSet,
}

impl Ty {
    fn of(v: &Value) -> Ty {
        match v {
            Value::Empty => Ty::Empty,
            Value::Null(_) => Ty::Null,
            Value::Bool(_) => Ty::Bool,
            Value::Int(_) => Ty::Int,
            Value::Float(_) => Ty::Float,
            Value::String(_) => Ty::String,
            Value::Date(_) => Ty::Date,
            Value::Time(_) => Ty::Time,
            Value::DateTime(_) => Ty::DateTime,
            Value::Duration(_) => Ty::Duration,
            Value::List(_) => Ty::List,
            Value::Set(_) => Ty::Set,
            Value::Map(_) => Ty::Map,
            Value::Vertex(_) => Ty::Vertex,
            Value::Edge(_) => Ty::Edge,
            Value::Path(_) => Ty::Path,
            Value::Geography(_) => Ty::Geography,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Ty::Empty => "__EMPTY__",
            Ty::Null => "NULL",
            Ty::Bool => "BOOL",
            Ty::Int => "INT",
            Ty::Float => "FLOAT",
            Ty::String => "STRING",
            Ty::Date => "DATE",
            Ty::Time => "TIME",
            Ty::DateTime => "DATETIME",
            Ty::Duration => "DURATION",
            Ty::List => "LIST",
            Ty::Set => "SET",
            Ty::Map => "MAP",
            Ty::Vertex => "VERTEX",
            Ty::Edge => "EDGE",
            Ty::Path => "PATH",
            Ty::Geography => "GEOGRAPHY",
            Ty::DataSet => "DATASET",
        }
    }

    fn parse(name: &str) -> Ty {
        match name {
            "__EMPTY__" => Ty::Empty,
            "NULLVALUE" => Ty::Null,
            "BOOL" => Ty::Bool,
            "INT" => Ty::Int,
            "FLOAT" => Ty::Float,
            "STRING" => Ty::String,
            "DATE" => Ty::Date,
            "TIME" => Ty::Time,
            "DATETIME" => Ty::DateTime,
            "DURATION" => Ty::Duration,
            "LIST" => Ty::List,
            "SET" => Ty::Set,
            "MAP" => Ty::Map,
            "VERTEX" => Ty::Vertex,
            "EDGE" => Ty::Edge,
            "PATH" => Ty::Path,
            "GEOGRAPHY" => Ty::Geography,
            "DATASET" => Ty::DataSet,
            other => unreachable!("no value type {other} in the signature table"),
        }
    }

    /// NULL or `__EMPTY__`: a type every check lets through (NebulaGraph's `isSuperiorType`).
    fn is_superior(self) -> bool {
        matches!(self, Ty::Empty | Ty::Null)
    }

    /// The value NebulaGraph applies an operator to in order to learn what it gives for this type
    /// (`kConstantValues`); none for a geography or a dataset, which it has no sample of.
    fn sample(self) -> Option<Value> {
        let vertex = || Vertex { vid: Value::Empty, tags: Vec::new() };
        Some(match self {
            Ty::Empty => Value::Empty,
            Ty::Null => Value::NULL,
            Ty::Bool => Value::Bool(true),
            Ty::Int => Value::Int(1),
            Ty::Float => Value::Float(1.0),
            Ty::String => Value::str("123"),
            Ty::Date => Value::Date(Date { year: 1970, month: 1, day: 1 }),
            Ty::Time => Value::Time(Time { hour: 0, minute: 0, sec: 0, microsec: 0 }),
            Ty::DateTime => Value::DateTime(DateTime {
                date: Date { year: 1970, month: 1, day: 1 },
                time: Time { hour: 0, minute: 0, sec: 0, microsec: 0 },
            }),
            Ty::Duration => Value::Duration(Duration { months: 0, seconds: 0, microseconds: 0 }),
            Ty::List => Value::List(Vec::new()),
            Ty::Set => Value::Set(Vec::new()),
            Ty::Map => Value::Map(Default::default()),
            Ty::Vertex => Value::Vertex(Arc::new(vertex())),
            Ty::Edge => Value::Edge(Arc::new(Edge {
                src: Value::Empty,
                dst: Value::Empty,
                edge_type: 0,
                name: Default::default(),
                ranking: 0,
                props: Default::default(),
            })),
            Ty::Path => Value::Path(Arc::new(Path { src: vertex(), steps: Vec::new() })),
            Ty::Geography | Ty::DataSet => return None,
        })
    }
}

/// The declared type of a schema property an expression reads (`$^.t.p`, `$$.t.p`, `label.p`), if it names one.
pub(crate) type PropTypes<'a> = &'a dyn Fn(&Expr) -> Option<PropType>;

/// Deduces the type of `e`, raising NebulaGraph's semantic error for what its types alone make invalid. `vid` is
/// the type of the current space's VIDs (`None` with no space chosen).
pub(crate) fn deduce(e: &Expr, vid: Option<VidType>, props: PropTypes<'_>) -> QResult<Ty> {
    let vid = vid.map_or(Ty::Empty, |v| if v == VidType::Int64 { Ty::Int } else { Ty::String });
    Deducer { vid, props }.ty(e)
}

/// [`deduce`] for each expression, for its errors only.
pub(crate) fn check<'e>(
    exprs: impl IntoIterator<Item = &'e Expr>,
    vid: Option<VidType>,
    props: PropTypes<'_>,
) -> QResult<()> {
    exprs.into_iter().try_for_each(|e| deduce(e, vid, props).map(drop))
}

struct Deducer<'a> {
    vid: Ty,
    props: PropTypes<'a>,
}

/// The value type of a property type, as NebulaGraph's `SchemaUtil::propTypeToValueType`.
fn value_type(t: &PropType) -> Ty {
    match t {
        PropType::Bool => Ty::Bool,
        PropType::Int8 | PropType::Int16 | PropType::Int32 | PropType::Int64 | PropType::Timestamp => Ty::Int,
        PropType::Float | PropType::Double => Ty::Float,
        PropType::String | PropType::FixedString(_) => Ty::String,
        PropType::Date => Ty::Date,
        PropType::Time => Ty::Time,
        PropType::DateTime => Ty::DateTime,
        PropType::Duration => Ty::Duration,
        PropType::Geography(_) => Ty::Geography,
        PropType::List(_) => Ty::List,
        PropType::Set(_) => Ty::Set,
    }
}

/// A NULL that reports a failure (NebulaGraph's `isBadNull`): anything but a plain NULL or NaN.
fn is_bad_null(v: &Value) -> bool {
    matches!(v, Value::Null(kind) if !matches!(kind, NullKind::Null | NullKind::NaN))
}

fn invalid(e: &Expr, why: impl std::fmt::Display) -> QError {
    QError::semantic(format!("`{e}' is not a valid expression, {why}"))
}

/// Whether `e` is an operator or a call on values only (constants, or lists and sets of them): a part NebulaGraph's
/// `FoldConstantExprVisitor` evaluates while validating. Its operands are checked one level down only, so each
/// part of an expression is evaluated once, not once per enclosing part.
fn folds(e: &Expr) -> bool {
    let value = |x: &Expr| match x {
        Expr::Const(_) => true,
        Expr::List(items) | Expr::Set(items) => items.iter().all(|i| matches!(i, Expr::Const(_))),
        _ => false,
    };
    match e {
        Expr::Unary { operand, .. } => value(operand),
        Expr::Binary { lhs, rhs, .. } => value(lhs) && value(rhs),
        Expr::Function { name, args } => {
            let impure = ["rand", "rand32", "rand64", "now", "uuid"].iter().any(|n| name.eq_ignore_ascii_case(n));
            !impure && args.iter().all(value)
        }
        _ => false,
    }
}

/// NebulaGraph's constant folding while validating: a part of `e` on values only that evaluates to BAD_TYPE is the
/// semantic error `Type error `part'`.
pub(crate) fn fold_type_error(e: &Expr) -> QResult<()> {
    let mut bad = None;
    e.visit(&mut |x| {
        if bad.is_none() && folds(x) && matches!(eval_const(x), Ok(Value::Null(NullKind::BadType))) {
            bad = Some(x);
        }
    });
    match bad {
        Some(part) => Err(QError::semantic(format!("Type error `{part}'"))),
        None => Ok(()),
    }
}

impl Deducer<'_> {
    fn ty(&self, e: &Expr) -> QResult<Ty> {
        let t = self.deduced(e)?;
        // A part whose type is known may still fail when folded (`123 STARTS WITH 1`, an integer overflow).
        if folds(e) {
            match eval_const(e) {
                Ok(Value::Null(NullKind::BadType)) => return Err(QError::semantic(format!("Type error `{e}'"))),
                Err(err) => return Err(err),
                Ok(_) => {}
            }
        }
        Ok(t)
    }

    fn deduced(&self, e: &Expr) -> QResult<Ty> {
        Ok(match e {
            Expr::Const(v) => Ty::of(v),
            Expr::Vertex(VertexRef::Current | VertexRef::Src | VertexRef::Dst) => Ty::Vertex,
            Expr::Edge => Ty::Edge,
            Expr::EdgeMetaProp { meta: EdgeMeta::Src | EdgeMeta::Dst, .. } => self.vid,
            Expr::EdgeMetaProp { meta: EdgeMeta::Rank | EdgeMeta::Type, .. } => Ty::Int,
            Expr::Unary { op, operand } => {
                let t = self.ty(operand)?;
                match op {
                    UnaryOp::Plus => t,
                    UnaryOp::IsNull | UnaryOp::IsNotNull | UnaryOp::IsEmpty | UnaryOp::IsNotEmpty => Ty::Bool,
                    UnaryOp::Minus | UnaryOp::Not => {
                        let symbol = if *op == UnaryOp::Minus { "-" } else { "!" };
                        let sample = self.sample(t)?;
                        let out = eval_const(&Expr::Unary { op: *op, operand: Box::new(Expr::Const(sample)) });
                        match out {
                            Ok(v) if !is_bad_null(&v) => Ty::of(&v),
                            _ => return Err(invalid(e, format_args!("can not apply `{symbol}' to {}.", t.name()))),
                        }
                    }
                }
            }
            Expr::Binary { op, lhs, rhs } => self.binary(e, *op, lhs, rhs)?,
            Expr::Function { name, args } => self.function(e, name, args)?,
            Expr::Aggregate { name, arg, .. } => {
                let arg = match arg {
                    Some(a) => self.ty(a)?,
                    None => Ty::Empty,
                };
                match name.to_ascii_lowercase().as_str() {
                    "count" => Ty::Int,
                    "collect" => Ty::List,
                    "collect_set" => Ty::Set,
                    "avg" | "sum" => Ty::Float,
                    "max" | "min" => arg,
                    _ => Ty::Empty,
                }
            }
            // As NebulaGraph's DeduceTypeVisitor, the items of a list, set or map are not typed: only folded.
            Expr::List(items) | Expr::Set(items) => {
                for item in items {
                    fold_type_error(item)?;
                }
                if matches!(e, Expr::List(_)) {
                    Ty::List
                } else {
                    Ty::Set
                }
            }
            Expr::Map(items) => {
                for (_, item) in items {
                    fold_type_error(item)?;
                }
                Ty::Map
            }
            Expr::Subscript { base, index } => {
                let (b, i) = (self.ty(base)?, self.ty(index)?);
                let list_index_ok = matches!(i, Ty::Int) || i.is_superior();
                let map_index_ok = matches!(i, Ty::String) || i.is_superior();
                if !(matches!(b, Ty::List | Ty::Map) || b.is_superior()) {
                    return Err(QError::semantic(format!("`{e}', expected LIST but was {}: {base}", b.name())));
                }
                if b == Ty::List && !list_index_ok {
                    return Err(QError::semantic(format!("`{e}', expected Integer but was {}: {index}", i.name())));
                }
                if b == Ty::Map && !map_index_ok {
                    return Err(QError::semantic(format!("`{e}', expected Identifier but was {}: {index}", i.name())));
                }
                Ty::Empty
            }
            Expr::Attribute { base, .. } => {
                let b = self.ty(base)?;
                let has_attributes = matches!(b, Ty::Map | Ty::Vertex | Ty::Edge | Ty::Date | Ty::Time | Ty::DateTime);
                if !has_attributes && !b.is_superior() {
                    return Err(QError::semantic(format!(
                        "`{e}', expected type with attribute like Date, Time, DateTime, Map, Vertex or Edge but was {}: {base}",
                        b.name()
                    )));
                }
                Ty::Empty
            }
            Expr::Case { operand, whens, default, .. } => {
                if let Some(o) = operand {
                    self.ty(o)?;
                }
                if let Some(d) = default {
                    self.ty(d)?;
                }
                let mut results = Vec::new();
                for (when, then) in whens {
                    let w = self.ty(when)?;
                    if operand.is_none() && w != Ty::Bool && !w.is_superior() {
                        return Err(QError::semantic(format!("`{when}', expected BOOL, but was {}", w.name())));
                    }
                    let t = self.ty(then)?;
                    if !results.contains(&t) {
                        results.push(t);
                    }
                }
                match results[..] {
                    [one] => one,
                    _ => Ty::Empty,
                }
            }
            Expr::Cast { to, operand } => {
                self.ty(operand)?;
                match to {
                    CastTo::Bool => Ty::Bool,
                    CastTo::Int => Ty::Int,
                    CastTo::Float => Ty::Float,
                    CastTo::String => Ty::String,
                    CastTo::Date => Ty::Date,
                    CastTo::Time => Ty::Time,
                    CastTo::DateTime => Ty::DateTime,
                    CastTo::Duration => Ty::Duration,
                    CastTo::Geography => Ty::Geography,
                }
            }
            Expr::ListComprehension { list, filter, mapping, .. } => {
                for part in [filter, mapping].into_iter().flatten() {
                    self.ty(part)?;
                }
                self.collection(list)?;
                Ty::List
            }
            Expr::Predicate { list, filter, .. } => {
                self.ty(filter)?;
                match self.collection(list)? {
                    t if t.is_superior() => t,
                    _ => Ty::Bool,
                }
            }
            Expr::Reduce(r) => {
                self.ty(&r.init)?;
                self.ty(&r.mapping)?;
                self.collection(&r.list)?;
                Ty::Empty
            }
            Expr::Slice { base, lo, hi } => {
                let b = self.ty(base)?;
                if !b.is_superior() && b != Ty::List {
                    return Err(QError::semantic("Expect list type for subscript range operator."));
                }
                for bound in [lo, hi].into_iter().flatten() {
                    let t = self.ty(bound)?;
                    if !t.is_superior() && t != Ty::Int {
                        return Err(QError::semantic("Expect integer type for subscript range bound."));
                    }
                }
                Ty::List
            }
            Expr::LabelProp { .. } | Expr::SrcProp { .. } | Expr::DstProp { .. } => {
                (self.props)(e).map_or(Ty::Empty, |t| value_type(&t))
            }
            // Read from a row, a parameter or a variable: not known before the statement runs.
            Expr::Param(_) | Expr::InputProp(_) | Expr::VarProp { .. } | Expr::Label(_) => Ty::Empty,
            // A pattern predicate of a WHERE, planned as a semi-join before its filter runs.
            Expr::Pattern(_) => Ty::Empty,
        })
    }

    /// The list a comprehension, a predicate or a reduce iterates: a LIST, or a type not known.
    fn collection(&self, list: &Expr) -> QResult<Ty> {
        let t = self.ty(list)?;
        if !t.is_superior() && t != Ty::List {
            return Err(QError::semantic(format!("`{list}', expected LIST, but was {}", t.name())));
        }
        Ok(t)
    }

    fn sample(&self, t: Ty) -> QResult<Value> {
        t.sample()
            .ok_or_else(|| QError::semantic(format!("Can't find constant value of `{}' when deduce type.", t.name())))
    }

    fn binary(&self, e: &Expr, op: BinaryOp, lhs: &Expr, rhs: &Expr) -> QResult<Ty> {
        let (l, r) = (self.ty(lhs)?, self.ty(rhs)?);
        match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => {
                let symbol = op.symbol();
                let refused =
                    || invalid(e, format_args!("can not apply `{symbol}' to `{}' and `{}'.", l.name(), r.name()));
                if op == BinaryOp::Sub && (l == Ty::String || r == Ty::String) {
                    return Err(refused());
                }
                let applied = Expr::Binary {
                    op,
                    lhs: Box::new(Expr::Const(self.sample(l)?)),
                    rhs: Box::new(Expr::Const(self.sample(r)?)),
                };
                match eval_const(&applied) {
                    Ok(v) if !is_bad_null(&v) => Ok(Ty::of(&v)),
                    _ => Err(refused()),
                }
            }
            BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => {
                // NebulaGraph deduces XOR as OR.
                let (deduced_as, name) =
                    if op == BinaryOp::And { (BinaryOp::And, "`&&' or `AND'") } else { (BinaryOp::Or, "`||' or `OR'") };
                let applied = Expr::Binary {
                    op: deduced_as,
                    lhs: Box::new(Expr::Const(self.sample(l)?)),
                    rhs: Box::new(Expr::Const(self.sample(r)?)),
                };
                match eval_const(&applied) {
                    Ok(v) if !is_bad_null(&v) => Ok(Ty::of(&v)),
                    _ => Err(invalid(
                        e,
                        format_args!("can not apply {name} operator to `{}' and `{}'.", l.name(), r.name()),
                    )),
                }
            }
            BinaryOp::In | BinaryOp::NotIn => {
                if !matches!(r, Ty::List | Ty::Set | Ty::Map) && !r.is_superior() {
                    return Err(QError::semantic(format!("`{rhs}', expected List/Set/Map, but was {}", r.name())));
                }
                Ok(Ty::Bool)
            }
            _ => Ok(Ty::Bool),
        }
    }

    fn function(&self, e: &Expr, name: &str, args: &[Expr]) -> QResult<Ty> {
        let mut types = Vec::with_capacity(args.len());
        for a in args {
            types.push(self.ty(a)?);
        }
        let name = name.to_ascii_lowercase();
        if matches!(name.as_str(), "id" | "src" | "dst") {
            return Ok(self.vid);
        }
        if let Some(t) = variadic(&name) {
            return Ok(t);
        }
        // A function NebulaGraph has no signature of is Quiver's own or internal: not typed.
        let Some(signatures) = signatures().get(name.as_str()) else { return Ok(Ty::Empty) };
        if let Some((_, ret)) = signatures.iter().find(|(takes, _)| *takes == types) {
            return Ok(*ret);
        }
        if let Some(t) = types.iter().find(|t| t.is_superior()) {
            return Ok(*t);
        }
        Err(QError::semantic(format!("`{e}' is not a valid expression : Parameter's type error")))
    }
}

/// NebulaGraph's `variadicFunReturnType_`: functions of any arity, typed by name alone.
fn variadic(name: &str) -> Option<Ty> {
    match name {
        "concat" | "concat_ws" => Some(Ty::String),
        "cos_similarity" => Some(Ty::Float),
        "coalesce" | "_any" => Some(Ty::Empty),
        _ => None,
    }
}

type Signatures = HashMap<&'static str, Vec<(Vec<Ty>, Ty)>>;

fn signatures() -> &'static Signatures {
    static TABLE: OnceLock<Signatures> = OnceLock::new();
    TABLE.get_or_init(|| {
        SIGNATURES
            .iter()
            .map(|(name, sigs)| {
                let sigs = sigs
                    .split(" | ")
                    .map(|sig| {
                        let (takes, ret) = sig.split_once('>').expect("every signature has a return type");
                        (takes.split_whitespace().map(Ty::parse).collect(), Ty::parse(ret.trim()))
                    })
                    .collect();
                (*name, sigs)
            })
            .collect()
    })
}

/// Each function's signatures, `ARGUMENT TYPES > RETURN TYPE`, as NebulaGraph's `FunctionManager::typeSignature_`
/// lists them: 3.8's, with master's list and set forms of `replace`, `erase` and `setAdd` and its `md5`, which
/// Quiver has. A call matches a signature only by its exact argument types.
const SIGNATURES: &[(&str, &str)] = &[
    ("abs", "INT > INT | FLOAT > FLOAT"),
    ("bit_and", "INT INT > INT"),
    ("bit_or", "INT INT > INT"),
    ("bit_xor", "INT INT > INT"),
    ("floor", "INT > FLOAT | FLOAT > FLOAT"),
    ("ceil", "INT > FLOAT | FLOAT > FLOAT"),
    ("round", "INT > FLOAT | INT INT > FLOAT | INT INT STRING > FLOAT | FLOAT > FLOAT | FLOAT INT > FLOAT | FLOAT INT STRING > FLOAT"),
    ("sqrt", "INT > FLOAT | FLOAT > FLOAT"),
    ("cbrt", "INT > FLOAT | FLOAT > FLOAT"),
    ("hypot", "INT INT > FLOAT | INT FLOAT > FLOAT | FLOAT INT > FLOAT | FLOAT FLOAT > FLOAT"),
    ("pow", "INT INT > INT | INT FLOAT > FLOAT | FLOAT INT > FLOAT | FLOAT FLOAT > FLOAT"),
    ("e", "> FLOAT"),
    ("exp", "INT > FLOAT | FLOAT > FLOAT"),
    ("exp2", "INT > FLOAT | FLOAT > FLOAT"),
    ("log", "INT > FLOAT | FLOAT > FLOAT"),
    ("log2", "INT > FLOAT | FLOAT > FLOAT"),
    ("log10", "INT > FLOAT | FLOAT > FLOAT"),
    ("pi", "> FLOAT"),
    ("radians", "INT > FLOAT | FLOAT > FLOAT"),
    ("sin", "INT > FLOAT | FLOAT > FLOAT"),
    ("cos", "INT > FLOAT | FLOAT > FLOAT"),
    ("asin", "INT > FLOAT | FLOAT > FLOAT"),
    ("acos", "INT > FLOAT | FLOAT > FLOAT"),
    ("tan", "INT > FLOAT | FLOAT > FLOAT"),
    ("atan", "INT > FLOAT | FLOAT > FLOAT"),
    ("sign", "INT > INT | FLOAT > INT"),
    ("rand", "> FLOAT"),
    ("rand32", "> INT | INT > INT | INT INT > INT"),
    ("rand64", "> INT | INT > INT | INT INT > INT"),
    ("now", "> INT"),
    ("strcasecmp", "STRING STRING > STRING"),
    ("lower", "STRING > STRING"),
    ("tolower", "STRING > STRING"),
    ("upper", "STRING > STRING"),
    ("toupper", "STRING > STRING"),
    ("length", "STRING > INT | PATH > INT"),
    ("trim", "STRING > STRING"),
    ("ltrim", "STRING > STRING"),
    ("rtrim", "STRING > STRING"),
    ("left", "STRING INT > STRING"),
    ("right", "STRING INT > STRING"),
    ("replace", "STRING STRING STRING > STRING | LIST STRING STRING > LIST | LIST INT INT > LIST | LIST FLOAT FLOAT > LIST | SET STRING STRING > SET | SET INT INT > SET | SET FLOAT FLOAT > SET"),
    ("erase", "LIST STRING > LIST | LIST INT > LIST | LIST FLOAT > LIST | SET STRING > SET | SET INT > SET | SET FLOAT > SET"),
    ("setadd", "SET STRING > SET | SET INT > SET | SET FLOAT > SET"),
    ("reverse", "STRING > STRING | LIST > LIST"),
    ("split", "STRING STRING > LIST"),
    ("lpad", "STRING INT STRING > STRING"),
    ("rpad", "STRING INT STRING > STRING"),
    ("substr", "STRING INT INT > STRING | STRING INT > STRING"),
    ("substring", "STRING INT INT > STRING | STRING INT > STRING"),
    ("tostring", "INT > STRING | FLOAT > STRING | STRING > STRING | BOOL > STRING | DATE > STRING | TIME > STRING | DATETIME > STRING"),
    ("toboolean", "STRING > BOOL | STRING > NULLVALUE | BOOL > BOOL"),
    ("tofloat", "STRING > FLOAT | STRING > NULLVALUE | FLOAT > FLOAT | INT > FLOAT"),
    ("tointeger", "STRING > INT | STRING > NULLVALUE | FLOAT > INT | INT > INT"),
    ("toset", "LIST > SET | SET > SET"),
    ("hash", "INT > INT | FLOAT > INT | STRING > INT | NULLVALUE > INT | __EMPTY__ > INT | BOOL > INT | DATE > INT | DATETIME > INT | PATH > INT | VERTEX > INT | EDGE > INT | LIST > INT"),
    ("size", "STRING > INT | NULLVALUE > NULLVALUE | __EMPTY__ > __EMPTY__ | LIST > INT | MAP > INT | SET > INT | DATASET > INT"),
    ("time", "> TIME | STRING > TIME | MAP > TIME"),
    ("date", "> DATE | STRING > DATE | MAP > DATE"),
    ("datetime", "> DATETIME | STRING > DATETIME | MAP > DATETIME | INT > DATETIME"),
    ("timestamp", "> INT | STRING > INT | INT > INT | DATETIME > INT"),
    ("tags", "VERTEX > LIST"),
    ("labels", "VERTEX > LIST"),
    ("properties", "VERTEX > MAP | EDGE > MAP | MAP > MAP"),
    ("type", "EDGE > STRING"),
    ("typeid", "EDGE > INT"),
    ("rank", "EDGE > INT"),
    ("startnode", "EDGE > VERTEX | PATH > VERTEX"),
    ("endnode", "EDGE > VERTEX | PATH > VERTEX"),
    ("keys", "VERTEX > LIST | EDGE > LIST | MAP > LIST"),
    ("nodes", "PATH > LIST"),
    ("tail", "LIST > LIST"),
    ("relationships", "PATH > LIST"),
    ("head", "LIST > __EMPTY__"),
    ("last", "LIST > __EMPTY__"),
    ("range", "INT INT > LIST | INT INT INT > LIST"),
    ("hassameedgeinpath", "PATH > BOOL"),
    ("hassamevertexinpath", "PATH > BOOL"),
    ("reversepath", "PATH > PATH"),
    ("st_point", "FLOAT FLOAT > GEOGRAPHY | INT INT > GEOGRAPHY | FLOAT INT > GEOGRAPHY | INT FLOAT > GEOGRAPHY"),
    ("st_geogfromtext", "STRING > GEOGRAPHY"),
    ("st_astext", "GEOGRAPHY > STRING"),
    ("st_centroid", "GEOGRAPHY > GEOGRAPHY"),
    ("st_isvalid", "GEOGRAPHY > BOOL"),
    ("st_intersects", "GEOGRAPHY GEOGRAPHY > BOOL"),
    ("st_covers", "GEOGRAPHY GEOGRAPHY > BOOL"),
    ("st_coveredby", "GEOGRAPHY GEOGRAPHY > BOOL"),
    ("st_dwithin", "GEOGRAPHY GEOGRAPHY FLOAT > BOOL | GEOGRAPHY GEOGRAPHY INT > BOOL | GEOGRAPHY GEOGRAPHY FLOAT BOOL > BOOL | GEOGRAPHY GEOGRAPHY INT BOOL > BOOL"),
    ("st_distance", "GEOGRAPHY GEOGRAPHY > FLOAT"),
    ("s2_cellidfrompoint", "GEOGRAPHY > INT | GEOGRAPHY INT > INT"),
    ("s2_coveringcellids", "GEOGRAPHY > LIST | GEOGRAPHY INT > LIST | GEOGRAPHY INT INT > LIST | GEOGRAPHY INT INT INT > LIST | GEOGRAPHY INT INT INT INT > LIST | GEOGRAPHY INT INT INT FLOAT > LIST"),
    ("is_edge", "EDGE > BOOL"),
    ("duration", "STRING > DURATION | MAP > DURATION"),
    ("extract", "STRING STRING > LIST"),
    ("json_extract", "STRING > MAP | STRING > NULLVALUE"),
    ("md5", "STRING > STRING"),
];
