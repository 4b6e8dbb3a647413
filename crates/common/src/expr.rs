//! The expression tree, produced by the parser and evaluated by [`crate::eval`]. Its `Display` is the canonical
//! text NebulaGraph prints for an expression, which is also the default column name of a YIELD item.

use crate::value::{write_quoted, Value};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Plus,
    Minus,
    Not,
    IsNull,
    IsNotNull,
    IsEmpty,
    IsNotEmpty,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

#[derive(Debug, Clone, PartialEq)]
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
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        default: Option<Box<Expr>>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VertexRef {
    Current,
    Src,
    Dst,
}

impl Expr {
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
            Expr::Unary { operand, .. } => f(operand),
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
            Expr::Case { operand, whens, default } => {
                operand.iter().for_each(|e| f(e));
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                default.iter().for_each(|e| f(e));
            }
            _ => {}
        }
    }

    /// Calls `f` on each direct sub-expression, in order, allowing each to be changed.
    pub fn for_each_child_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            Expr::Attribute { base, .. } => f(base),
            Expr::Unary { operand, .. } => f(operand),
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
            Expr::Case { operand, whens, default } => {
                operand.iter_mut().for_each(|e| f(e));
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                default.iter_mut().for_each(|e| f(e));
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
            Expr::Const(Value::String(s)) => write_quoted(f, s),
            Expr::Const(Value::Null(_)) => f.write_str("NULL"),
            Expr::Const(v) => write!(f, "{v}"),
            Expr::Param(p) => write!(f, "${p}"),
            Expr::LabelProp { label, prop } => write!(f, "{label}.{prop}"),
            Expr::EdgeMetaProp { edge, meta } => write!(f, "{edge}.{}", meta.name()),
            Expr::SrcProp { tag, prop } => write!(f, "$^.{tag}.{prop}"),
            Expr::DstProp { tag, prop } => write!(f, "$$.{tag}.{prop}"),
            Expr::InputProp(c) => write!(f, "$-.{c}"),
            Expr::VarProp { var, prop } => write!(f, "${var}.{prop}"),
            Expr::Label(l) => f.write_str(l),
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
                write!(f, "{}(", name.to_uppercase())?;
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
            Expr::Case { operand, whens, default } => {
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
        }
    }
}
