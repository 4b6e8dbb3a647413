//! The expression tree, produced by the parser and evaluated by [`crate::eval`]. Its `Display` is the canonical
//! text NebulaGraph prints for an expression, which is also the default column name of a YIELD item.

use crate::value::Value;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum UnaryOp {
    Plus,
    Minus,
    Not,
    IsNull,
    IsNotNull,
    IsEmpty,
    IsNotEmpty,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    Contains,
    NotContains,
    StartsWith,
    NotStartsWith,
    EndsWith,
    NotEndsWith,
    Regex,
    And,
    Or,
    Xor,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::In => " IN ",
            BinaryOp::NotIn => " NOT IN ",
            BinaryOp::Contains => " CONTAINS ",
            BinaryOp::NotContains => " NOT CONTAINS ",
            BinaryOp::StartsWith => " STARTS WITH ",
            BinaryOp::NotStartsWith => " NOT STARTS WITH ",
            BinaryOp::EndsWith => " ENDS WITH ",
            BinaryOp::NotEndsWith => " NOT ENDS WITH ",
            BinaryOp::Regex => "=~",
            BinaryOp::And => " AND ",
            BinaryOp::Or => " OR ",
            BinaryOp::Xor => " XOR ",
        }
    }
}

/// `_src`, `_dst`, `_rank` and `_type` of an edge in `e._dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum EdgeMeta {
    Src,
    Dst,
    Rank,
    Type,
}

impl EdgeMeta {
    pub fn from_name(name: &str) -> Option<EdgeMeta> {
        Some(match name {
            "_src" => EdgeMeta::Src,
            "_dst" => EdgeMeta::Dst,
            "_rank" => EdgeMeta::Rank,
            "_type" => EdgeMeta::Type,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            EdgeMeta::Src => "_src",
            EdgeMeta::Dst => "_dst",
            EdgeMeta::Rank => "_rank",
            EdgeMeta::Type => "_type",
        }
    }
}

/// The predicate functions over a list: `all(x IN l WHERE p)` and `any`, `single`, `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Quantifier {
    All,
    Any,
    Single,
    None,
}

impl Quantifier {
    /// The quantifier a function name (in any case) spells, if it is one.
    pub fn from_name(name: &str) -> Option<Quantifier> {
        Some(match name.to_ascii_lowercase().as_str() {
            "all" => Quantifier::All,
            "any" => Quantifier::Any,
            "single" => Quantifier::Single,
            "none" => Quantifier::None,
            _ => return None,
        })
    }

    /// The name as NebulaGraph prints it: in lower case, whatever the query wrote.
    pub fn name(self) -> &'static str {
        match self {
            Quantifier::All => "all",
            Quantifier::Any => "any",
            Quantifier::Single => "single",
            Quantifier::None => "none",
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Expr {
    Const(Value),
    /// `$name`: a query parameter or, in statements that have them, a variable (resolved by the validator).
    Param(String),
    /// `label.prop`: a tag property (FETCH, LOOKUP) or an edge property (GO), resolved by context.
    LabelProp {
        label: String,
        prop: String,
    },
    /// `e._src`, `e._dst`, `e._rank`, `e._type`.
    EdgeMetaProp {
        edge: String,
        meta: EdgeMeta,
    },
    /// `$^.tag.prop`
    SrcProp {
        tag: String,
        prop: String,
    },
    /// `$$.tag.prop`
    DstProp {
        tag: String,
        prop: String,
    },
    /// `$-.col`
    InputProp(String),
    /// `$var.col`
    VarProp {
        var: String,
        prop: String,
    },
    /// A bare name: a column alias or a variable of a pattern.
    Label(String),
    /// `vertex` (the current vertex), `$^` or `$$`.
    Vertex(VertexRef),
    /// `edge` (the current edge).
    Edge,
    /// `expr.name` on a map or other value.
    Attribute {
        base: Box<Expr>,
        name: String,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Function {
        name: String,
        args: Vec<Expr>,
    },
    /// `count(*)` has `arg: None`.
    Aggregate {
        name: String,
        arg: Option<Box<Expr>>,
        distinct: bool,
    },
    List(Vec<Expr>),
    Set(Vec<Expr>),
    Map(Vec<(String, Expr)>),
    Subscript {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    Slice {
        base: Box<Expr>,
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
    },
    /// `CASE [operand] WHEN .. THEN .. [ELSE ..] END`, or the conditional `c ? t : e` (`ternary`: one WHEN, no
    /// operand, a default), which evaluates alike and prints as NebulaGraph prints it, `(c ? t : e)`.
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        default: Option<Box<Expr>>,
        ternary: bool,
    },
    /// `(type)operand`: NebulaGraph's type casting.
    Cast {
        to: CastTo,
        operand: Box<Expr>,
    },
    /// `[var IN list WHERE filter | mapping]`, with a filter, a mapping or both. `var` is bound in `filter` and
    /// `mapping` only, where it is read as a bare name ([`Expr::Label`]); the parser writes `var.name` there as an
    /// [`Expr::Attribute`] of it.
    ListComprehension {
        var: String,
        list: Box<Expr>,
        filter: Option<Box<Expr>>,
        mapping: Option<Box<Expr>>,
    },
    /// `all(var IN list WHERE filter)`, and `any`, `single`, `none`; `var` is bound in `filter`.
    Predicate {
        quantifier: Quantifier,
        var: String,
        list: Box<Expr>,
        filter: Box<Expr>,
    },
    /// `reduce(acc = init, var IN list | mapping)` (boxed whole: its two names would make every `Expr` larger).
    Reduce(Box<Reduce>),
    /// A path pattern as a predicate of a MATCH's WHERE (`(v)-[:like]->()`, `NOT (v)--()`): whether it matches
    /// from the row's aliases. The MATCH planner turns it into a semi-join; it has no value of its own.
    Pattern(Box<crate::pattern::PathPattern>),
}

/// `reduce(acc = init, var IN list | mapping)`: `acc` and `var` are bound in `mapping` (as in
/// [`Expr::ListComprehension`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Reduce {
    pub acc: String,
    pub init: Expr,
    pub var: String,
    pub list: Expr,
    pub mapping: Expr,
}

/// The value type a cast `(type)x` converts to: the property type written, as NebulaGraph maps it to a value type
/// (`int8`..`int64` and `timestamp` to INT, `double` to FLOAT, `fixed_string(n)` to STRING).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CastTo {
    Bool,
    Int,
    Float,
    String,
    Date,
    Time,
    DateTime,
    Duration,
    Geography,
}

impl CastTo {
    /// NebulaGraph's name of the value type, as a cast prints it: `(INT)x`.
    pub fn name(self) -> &'static str {
        match self {
            CastTo::Bool => "BOOL",
            CastTo::Int => "INT",
            CastTo::Float => "FLOAT",
            CastTo::String => "STRING",
            CastTo::Date => "DATE",
            CastTo::Time => "TIME",
            CastTo::DateTime => "DATETIME",
            CastTo::Duration => "DURATION",
            CastTo::Geography => "GEOGRAPHY",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum VertexRef {
    Current,
    Src,
    Dst,
}

impl Expr {
    /// `base.tag.prop`, a property of one tag of a vertex: its base, tag and property (`base._vid.x` is not one:
    /// `_vid` is the vertex's id).
    pub fn tag_prop(&self) -> Option<(&Expr, &str, &str)> {
        let Expr::Attribute { base, name: prop } = self else { return None };
        let Expr::Attribute { base, name: tag } = &**base else { return None };
        (tag != "_vid").then_some((&**base, tag.as_str(), prop.as_str()))
    }

    pub fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }
    }

    pub fn unary(op: UnaryOp, operand: Expr) -> Expr {
        Expr::Unary { op, operand: Box::new(operand) }
    }

    /// Calls `f` on each direct sub-expression, in order.
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match self {
            Expr::Attribute { base, .. } => f(base),
            Expr::Unary { operand, .. } | Expr::Cast { operand, .. } => f(operand),
            Expr::Binary { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Expr::Function { args, .. } => args.iter().for_each(f),
            Expr::Aggregate { arg: Some(a), .. } => f(a),
            Expr::List(items) | Expr::Set(items) => items.iter().for_each(f),
            Expr::Map(items) => items.iter().for_each(|(_, a)| f(a)),
            Expr::Subscript { base, index } => {
                f(base);
                f(index);
            }
            Expr::Slice { base, lo, hi } => {
                f(base);
                lo.iter().chain(hi).for_each(|e| f(e));
            }
            Expr::Case { operand, whens, default, .. } => {
                operand.iter().for_each(|e| f(e));
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                default.iter().for_each(|e| f(e));
            }
            Expr::ListComprehension { list, filter, mapping, .. } => {
                f(list);
                filter.iter().chain(mapping).for_each(|e| f(e));
            }
            Expr::Predicate { list, filter, .. } => {
                f(list);
                f(filter);
            }
            Expr::Reduce(r) => {
                f(&r.init);
                f(&r.list);
                f(&r.mapping);
            }
            _ => {}
        }
    }

    /// Calls `f` on each direct sub-expression, in order, allowing each to be changed.
    pub fn for_each_child_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            Expr::Attribute { base, .. } => f(base),
            Expr::Unary { operand, .. } | Expr::Cast { operand, .. } => f(operand),
            Expr::Binary { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Expr::Function { args, .. } => args.iter_mut().for_each(f),
            Expr::Aggregate { arg: Some(a), .. } => f(a),
            Expr::List(items) | Expr::Set(items) => items.iter_mut().for_each(f),
            Expr::Map(items) => items.iter_mut().for_each(|(_, a)| f(a)),
            Expr::Subscript { base, index } => {
                f(base);
                f(index);
            }
            Expr::Slice { base, lo, hi } => {
                f(base);
                lo.iter_mut().chain(hi).for_each(|e| f(e));
            }
            Expr::Case { operand, whens, default, .. } => {
                operand.iter_mut().for_each(|e| f(e));
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                default.iter_mut().for_each(|e| f(e));
            }
            Expr::ListComprehension { list, filter, mapping, .. } => {
                f(list);
                filter.iter_mut().chain(mapping).for_each(|e| f(e));
            }
            Expr::Predicate { list, filter, .. } => {
                f(list);
                f(filter);
            }
            Expr::Reduce(r) => {
                f(&mut r.init);
                f(&mut r.list);
                f(&mut r.mapping);
            }
            _ => {}
        }
    }

    /// Calls `f` on this expression and every sub-expression, parents first.
    pub fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        self.for_each_child(&mut |c| c.visit(f));
    }

    /// Calls `f` on every sub-expression and then on this one (children first), allowing each to be replaced.
    pub fn visit_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        self.for_each_child_mut(&mut |c| c.visit_mut(f));
        f(self);
    }

    /// True if `pred` holds for this expression or any sub-expression.
    pub fn any(&self, pred: &dyn Fn(&Expr) -> bool) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= pred(e));
        found
    }

    /// The operands of this expression's top-level ANDs, left to right (the expression itself when it is no AND).
    pub fn conjuncts(&self) -> Vec<&Expr> {
        match self {
            Expr::Binary { op: BinaryOp::And, lhs, rhs } => {
                let mut out = lhs.conjuncts();
                out.extend(rhs.conjuncts());
                out
            }
            other => vec![other],
        }
    }

    /// The left-nested AND of `parts`, or `None` when there are none.
    pub fn and_all(parts: impl IntoIterator<Item = Expr>) -> Option<Expr> {
        parts.into_iter().reduce(|acc, e| Expr::binary(BinaryOp::And, acc, e))
    }

    pub fn has_aggregate(&self) -> bool {
        self.any(&|e| matches!(e, Expr::Aggregate { .. }))
    }

    /// Whether the expression reads a piped input (`$-.c`) or a variable (`$v.c`).
    pub fn reads_input(&self) -> bool {
        self.any(&|e| matches!(e, Expr::InputProp(_) | Expr::VarProp { .. }))
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Expr]) -> fmt::Result {
    for (i, e) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{e}")?;
    }
    Ok(())
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // As NebulaGraph's `Value::toString`: in double quotes, nothing escaped (the TCK's `=~"\w+\d+"`).
            Expr::Const(Value::String(s)) => write!(f, "\"{s}\""),
            Expr::Const(Value::Null(_)) => f.write_str("NULL"),
            // NebulaGraph writes a float constant in an expression's text as `folly::to<std::string>` does: the
            // shortest form, without a `.0` (`hash(123.0)` is the column `hash(123)`).
            Expr::Const(Value::Float(x)) if x.is_finite() && x.abs() < 1e15 => write!(f, "{x}"),
            Expr::Const(v) => write!(f, "{v}"),
            Expr::Param(p) => write!(f, "${p}"),
            Expr::LabelProp { label, prop } => write!(f, "{label}.{prop}"),
            Expr::EdgeMetaProp { edge, meta } => write!(f, "{edge}.{}", meta.name()),
            Expr::SrcProp { tag, prop } => write!(f, "$^.{tag}.{prop}"),
            Expr::DstProp { tag, prop } => write!(f, "$$.{tag}.{prop}"),
            Expr::InputProp(c) => write!(f, "$-.{c}"),
            Expr::VarProp { var, prop } => write!(f, "${var}.{prop}"),
            Expr::Label(l) => f.write_str(l),
            Expr::Pattern(p) => write!(f, "{p}"),
            Expr::Vertex(VertexRef::Current) => f.write_str("VERTEX"),
            Expr::Vertex(VertexRef::Src) => f.write_str("$^"),
            Expr::Vertex(VertexRef::Dst) => f.write_str("$$"),
            Expr::Edge => f.write_str("EDGE"),
            Expr::Attribute { base, name } => write!(f, "{base}.{name}"),
            Expr::Unary { op, operand } => match op {
                UnaryOp::Plus => write!(f, "+({operand})"),
                UnaryOp::Minus => write!(f, "-({operand})"),
                UnaryOp::Not => write!(f, "!({operand})"),
                UnaryOp::IsNull => write!(f, "{operand} IS NULL"),
                UnaryOp::IsNotNull => write!(f, "{operand} IS NOT NULL"),
                UnaryOp::IsEmpty => write!(f, "{operand} IS EMPTY"),
                UnaryOp::IsNotEmpty => write!(f, "{operand} IS NOT EMPTY"),
            },
            Expr::Binary { op, lhs, rhs } => write!(f, "({lhs}{}{rhs})", op.symbol()),
            Expr::Function { name, args } => {
                write!(f, "{name}(")?;
                write_list(f, args)?;
                f.write_str(")")
            }
            Expr::Aggregate { name, arg, distinct } => {
                write!(f, "{name}(")?;
                if *distinct {
                    f.write_str("distinct ")?;
                }
                match arg {
                    Some(a) => write!(f, "{a})"),
                    None => f.write_str("*)"),
                }
            }
            Expr::List(items) => {
                f.write_str("[")?;
                write_list(f, items)?;
                f.write_str("]")
            }
            Expr::Set(items) => {
                f.write_str("{")?;
                write_list(f, items)?;
                f.write_str("}")
            }
            Expr::Map(items) => {
                f.write_str("{")?;
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{k}:{v}")?;
                }
                f.write_str("}")
            }
            Expr::Cast { to, operand } => write!(f, "({}){operand}", to.name()),
            Expr::Subscript { base, index } => write!(f, "{base}[{index}]"),
            Expr::Slice { base, lo, hi } => {
                write!(f, "{base}[")?;
                if let Some(lo) = lo {
                    write!(f, "{lo}")?;
                }
                f.write_str("..")?;
                if let Some(hi) = hi {
                    write!(f, "{hi}")?;
                }
                f.write_str("]")
            }
            Expr::Case { operand: None, whens, default: Some(d), ternary: true } if whens.len() == 1 => {
                write!(f, "({} ? {} : {d})", whens[0].0, whens[0].1)
            }
            Expr::Case { operand, whens, default, .. } => {
                f.write_str("CASE")?;
                if let Some(o) = operand {
                    write!(f, " {o}")?;
                }
                for (w, t) in whens {
                    write!(f, " WHEN {w} THEN {t}")?;
                }
                if let Some(d) = default {
                    write!(f, " ELSE {d}")?;
                }
                f.write_str(" END")
            }
            Expr::ListComprehension { var, list, filter, mapping } => {
                write!(f, "[{var} IN {list}")?;
                if let Some(w) = filter {
                    write!(f, " WHERE {w}")?;
                }
                if let Some(m) = mapping {
                    write!(f, " | {m}")?;
                }
                f.write_str("]")
            }
            Expr::Predicate { quantifier, var, list, filter } => {
                write!(f, "{}({var} IN {list} WHERE {filter})", quantifier.name())
            }
            Expr::Reduce(r) => {
                let Reduce { acc, init, var, list, mapping } = &**r;
                write!(f, "reduce({acc} = {init}, {var} IN {list} | {mapping})")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(i: i64) -> Expr {
        Expr::Const(Value::Int(i))
    }

    fn label(n: &str) -> Expr {
        Expr::Label(n.into())
    }

    #[test]
    fn comprehensions_print_and_walk_their_parts() {
        let lc = Expr::ListComprehension {
            var: "x".into(),
            list: Box::new(Expr::List(vec![int(1), int(2)])),
            filter: Some(Box::new(Expr::binary(BinaryOp::Gt, label("x"), int(1)))),
            mapping: Some(Box::new(Expr::binary(BinaryOp::Mul, label("x"), int(10)))),
        };
        assert_eq!(lc.to_string(), "[x IN [1,2] WHERE (x>1) | (x*10)]");
        let pred = Expr::Predicate {
            quantifier: Quantifier::Single,
            var: "y".into(),
            list: Box::new(label("l")),
            filter: Box::new(Expr::unary(UnaryOp::IsNull, label("y"))),
        };
        assert_eq!(pred.to_string(), "single(y IN l WHERE y IS NULL)");
        let red = Expr::Reduce(Box::new(Reduce {
            acc: "s".into(),
            init: int(0),
            var: "x".into(),
            list: lc.clone(),
            mapping: Expr::binary(BinaryOp::Add, label("s"), label("x")),
        }));
        assert_eq!(red.to_string(), "reduce(s = 0, x IN [x IN [1,2] WHERE (x>1) | (x*10)] | (s+x))");
        // Every part is visited, parents first and in reading order.
        let mut seen = Vec::new();
        Expr::List(vec![red, pred]).visit(&mut |e| seen.push(e.to_string()));
        assert_eq!(
            seen,
            [
                "[reduce(s = 0, x IN [x IN [1,2] WHERE (x>1) | (x*10)] | (s+x)),single(y IN l WHERE y IS NULL)]",
                "reduce(s = 0, x IN [x IN [1,2] WHERE (x>1) | (x*10)] | (s+x))",
                "0",
                "[x IN [1,2] WHERE (x>1) | (x*10)]",
                "[1,2]",
                "1",
                "2",
                "(x>1)",
                "x",
                "1",
                "(x*10)",
                "x",
                "10",
                "(s+x)",
                "s",
                "x",
                "single(y IN l WHERE y IS NULL)",
                "l",
                "y IS NULL",
                "y",
            ]
        );
        // And each can be replaced.
        let mut e = lc;
        e.visit_mut(&mut |x| {
            if let Expr::Label(n) = x {
                *n = n.to_uppercase();
            }
        });
        assert_eq!(e.to_string(), "[x IN [1,2] WHERE (X>1) | (X*10)]");
        assert_eq!(Quantifier::from_name("NONE").map(Quantifier::name), Some("none"));
        assert_eq!(Quantifier::from_name("reduce"), None);
    }

    #[test]
    fn an_expression_stays_small() {
        // `reduce` is boxed so that its two names do not make every expression node larger.
        assert!(std::mem::size_of::<Expr>() <= 56, "{}", std::mem::size_of::<Expr>());
    }
}
