//! The value model shared by every layer, after NebulaGraph's `Value` union.
//!
//! EMPTY (no such property, tag or vertex) and NULL (present but null) are different values everywhere.

use crate::datetime::{Date, DateTime, Duration, Time};
pub use smol_str::SmolStr;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

/// The kinds of NULL NebulaGraph distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NullKind {
    Null,
    NaN,
    BadData,
    BadType,
    Overflow,
    UnknownProp,
    DivByZero,
    OutOfRange,
}

#[derive(Debug, Clone)]
pub enum Value {
    Empty,
    Null(NullKind),
    Bool(bool),
    Int(i64),
    Float(f64),
    /// Inline up to 23 bytes and shared beyond, so copying a string value (out of a cache, into a row) neither
    /// allocates nor copies its bytes.
    String(SmolStr),
    Date(Date),
    Time(Time),
    DateTime(DateTime),
    Duration(Duration),
    List(Vec<Value>),
    /// Kept sorted and free of duplicates.
    Set(Vec<Value>),
    Map(BTreeMap<String, Value>),
    Vertex(Box<Vertex>),
    Edge(Box<Edge>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Tag {
    pub name: String,
    pub props: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Vertex {
    pub vid: Value,
    /// Sorted by tag name.
    pub tags: Vec<Tag>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub src: Value,
    pub dst: Value,
    /// Positive for an edge read in its stored direction, negative when read reversely (as in NebulaGraph).
    pub edge_type: i32,
    pub name: String,
    pub ranking: i64,
    pub props: BTreeMap<String, Value>,
}

impl Value {
    pub const NULL: Value = Value::Null(NullKind::Null);

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null(_))
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, Value::Empty)
    }

    pub fn is_null_or_empty(&self) -> bool {
        matches!(self, Value::Null(_) | Value::Empty)
    }

    pub fn str(s: impl Into<SmolStr>) -> Value {
        Value::String(s.into())
    }

    /// The type name used in error messages and by `typeof()`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Empty => "__EMPTY__",
            Value::Null(_) => "NULL",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::String(_) => "string",
            Value::Date(_) => "date",
            Value::Time(_) => "time",
            Value::DateTime(_) => "datetime",
            Value::Duration(_) => "duration",
            Value::List(_) => "list",
            Value::Set(_) => "set",
            Value::Map(_) => "map",
            Value::Vertex(_) => "vertex",
            Value::Edge(_) => "edge",
        }
    }

    /// How deeply lists, sets, maps, vertices and edges nest in the value: 0 for a scalar, 1 for a list of scalars,
    /// 2 for a list of lists. Walked with a heap stack (of the containers met), not by recursion, so any value can
    /// be measured (see [`crate::limits::VALUE_DEPTH_MAX`]); a scalar costs one test.
    #[inline]
    pub fn depth(&self) -> usize {
        match self {
            Value::List(_) | Value::Set(_) | Value::Map(_) => self.walk_depth(),
            // A vertex's or an edge's properties are of the schema's property types, never containers: one level,
            // found without walking (a GO reads `edge` or `$$` on every row).
            Value::Vertex(_) | Value::Edge(_) => 1,
            _ => 0,
        }
    }

    fn holds_values(&self) -> bool {
        matches!(self, Value::List(_) | Value::Set(_) | Value::Map(_) | Value::Vertex(_) | Value::Edge(_))
    }

    fn walk_depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 1)];
        while let Some((v, level)) = stack.pop() {
            deepest = deepest.max(level);
            let mut inner = |c| {
                if Value::holds_values(c) {
                    stack.push((c, level + 1));
                }
            };
            match v {
                Value::List(items) | Value::Set(items) => items.iter().for_each(&mut inner),
                Value::Map(m) => m.values().for_each(&mut inner),
                // A vertex or an edge is one level: its properties are never containers.
                _ => {}
            }
        }
        deepest
    }

    /// Rank of the type in the total order used by ORDER BY, DISTINCT and sets.
    fn type_rank(&self) -> u8 {
        match self {
            Value::Empty => 0,
            Value::Bool(_) => 1,
            Value::Int(_) | Value::Float(_) => 2,
            Value::String(_) => 3,
            Value::Date(_) => 4,
            Value::Time(_) => 5,
            Value::DateTime(_) => 6,
            Value::Duration(_) => 7,
            Value::Vertex(_) => 8,
            Value::Edge(_) => 9,
            Value::List(_) => 10,
            Value::Map(_) => 11,
            Value::Set(_) => 12,
            Value::Null(_) => 13,
        }
    }

    /// A total order over all values (NULLs last, EMPTY first), used for sorting and de-duplication.
    pub fn total_cmp(&self, other: &Value) -> Ordering {
        let (ra, rb) = (self.type_rank(), other.type_rank());
        if ra != rb {
            return ra.cmp(&rb);
        }
        match (self, other) {
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Int(a), Value::Float(b)) => (*a as f64).total_cmp(b),
            (Value::Float(a), Value::Int(b)) => a.total_cmp(&(*b as f64)),
            (Value::Float(a), Value::Float(b)) => a.total_cmp(b),
            (Value::String(a), Value::String(b)) => a.cmp(b),
            (Value::Date(a), Value::Date(b)) => a.cmp(b),
            (Value::Time(a), Value::Time(b)) => a.cmp(b),
            (Value::DateTime(a), Value::DateTime(b)) => a.cmp(b),
            (Value::Duration(a), Value::Duration(b)) => a.cmp(b),
            (Value::List(a), Value::List(b)) | (Value::Set(a), Value::Set(b)) => cmp_seq(a, b),
            (Value::Map(a), Value::Map(b)) => {
                for ((ka, va), (kb, vb)) in a.iter().zip(b.iter()) {
                    let o = ka.cmp(kb).then_with(|| va.total_cmp(vb));
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Value::Vertex(a), Value::Vertex(b)) => a.vid.total_cmp(&b.vid),
            (Value::Edge(a), Value::Edge(b)) => a
                .src
                .total_cmp(&b.src)
                .then(a.edge_type.cmp(&b.edge_type))
                .then(a.ranking.cmp(&b.ranking))
                .then_with(|| a.dst.total_cmp(&b.dst)),
            (Value::Null(a), Value::Null(b)) => a.cmp(b),
            _ => Ordering::Equal,
        }
    }

    /// Builds a set value: sorted, duplicates removed.
    pub fn set_from(mut items: Vec<Value>) -> Value {
        items.sort_by(|a, b| a.total_cmp(b));
        items.dedup_by(|a, b| a.total_cmp(b) == Ordering::Equal);
        Value::Set(items)
    }

    /// The value as JSON, in the shape of NebulaGraph's `executeJson` rows: vertices and edges as their
    /// property maps (their identity goes into `meta`, see [`Value::to_json_meta`]).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Empty | Value::Null(_) => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map(J::Number).unwrap_or(J::Null),
            Value::String(s) => J::String(s.to_string()),
            Value::Date(_) | Value::Time(_) | Value::DateTime(_) | Value::Duration(_) => J::String(self.to_string()),
            Value::List(items) | Value::Set(items) => J::Array(items.iter().map(|v| v.to_json()).collect()),
            Value::Map(m) => J::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
            Value::Vertex(v) => {
                let mut obj = serde_json::Map::new();
                for tag in &v.tags {
                    for (k, val) in &tag.props {
                        obj.insert(format!("{}.{}", tag.name, k), val.to_json());
                    }
                }
                J::Object(obj)
            }
            Value::Edge(e) => J::Object(e.props.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
        }
    }

    /// The `meta` entry NebulaGraph's `executeJson` puts beside each value: identity of vertices and edges.
    pub fn to_json_meta(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Value::Vertex(v) => json!({"type": "vertex", "id": v.vid.to_json()}),
            Value::Edge(e) => json!({"type": "edge", "id": {
                "src": e.src.to_json(), "dst": e.dst.to_json(), "type": e.edge_type,
                "name": e.name, "ranking": e.ranking}}),
            Value::List(items) | Value::Set(items) => {
                serde_json::Value::Array(items.iter().map(|v| v.to_json_meta()).collect())
            }
            _ => serde_json::Value::Null,
        }
    }
}

fn cmp_seq(a: &[Value], b: &[Value]) -> Ordering {
    for (x, y) in a.iter().zip(b.iter()) {
        let o = x.total_cmp(y);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

impl PartialEq for Value {
    /// Structural equality (NULL equals NULL here); three-valued `==` lives in the evaluator.
    fn eq(&self, other: &Value) -> bool {
        self.type_rank() == other.type_rank()
            && self.total_cmp(other) == Ordering::Equal
            && match (self, other) {
                (Value::Vertex(a), Value::Vertex(b)) => a == b,
                (Value::Edge(a), Value::Edge(b)) => a == b,
                _ => true,
            }
    }
}

impl Eq for Value {}

impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.type_rank().hash(state);
        match self {
            Value::Bool(b) => b.hash(state),
            // Ints and floats that compare equal must hash equal.
            Value::Int(i) => (*i as f64).to_bits().hash(state),
            Value::Float(f) => f.to_bits().hash(state),
            Value::String(s) => s.hash(state),
            Value::Date(d) => d.hash(state),
            Value::Time(t) => t.hash(state),
            Value::DateTime(d) => d.hash(state),
            Value::Duration(d) => d.hash(state),
            Value::List(items) | Value::Set(items) => items.iter().for_each(|v| v.hash(state)),
            Value::Map(m) => m.iter().for_each(|(k, v)| {
                k.hash(state);
                v.hash(state)
            }),
            Value::Vertex(v) => v.vid.hash(state),
            Value::Edge(e) => {
                e.src.hash(state);
                e.dst.hash(state);
                e.ranking.hash(state);
            }
            Value::Null(k) => k.hash(state),
            Value::Empty => {}
        }
    }
}

/// Writes a string literal the way NebulaGraph prints it: double-quoted, with `"` and `\` escaped.
pub fn write_quoted(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

pub fn format_float(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

fn write_props(f: &mut fmt::Formatter<'_>, props: &BTreeMap<String, Value>) -> fmt::Result {
    f.write_str("{")?;
    for (i, (k, v)) in props.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{k}: {v}")?;
    }
    f.write_str("}")
}

impl fmt::Display for NullKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NullKind::Null => "NULL",
            NullKind::NaN => "NaN",
            NullKind::BadData => "BAD_DATA",
            NullKind::BadType => "BAD_TYPE",
            NullKind::Overflow => "OVERFLOW",
            NullKind::UnknownProp => "UNKNOWN_PROP",
            NullKind::DivByZero => "DIV_BY_ZERO",
            NullKind::OutOfRange => "OUT_OF_RANGE",
        })
    }
}

impl fmt::Display for Value {
    /// The notation of NebulaGraph's TCK: `"str"`, `NULL`, `EMPTY`, `[1, 2]`, `{a: 1}`,
    /// `("vid" :tag{p: 1})`, `[:type "src"->"dst" @0 {p: 1}]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Empty => f.write_str("EMPTY"),
            Value::Null(k) => write!(f, "{k}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => f.write_str(&format_float(*x)),
            Value::String(s) => write_quoted(f, s),
            Value::Date(d) => write!(f, "{d}"),
            Value::Time(t) => write!(f, "{t}"),
            Value::DateTime(d) => write!(f, "{d}"),
            Value::Duration(d) => write!(f, "{d}"),
            Value::List(items) | Value::Set(items) => {
                let (open, close) = if matches!(self, Value::List(_)) { ("[", "]") } else { ("{", "}") };
                f.write_str(open)?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str(close)
            }
            Value::Map(m) => write_props(f, m),
            Value::Vertex(v) => {
                write!(f, "({}", v.vid)?;
                for tag in &v.tags {
                    write!(f, " :{}", tag.name)?;
                    write_props(f, &tag.props)?;
                }
                f.write_str(")")
            }
            Value::Edge(e) => {
                let (src, dst) = if e.edge_type >= 0 { (&e.src, &e.dst) } else { (&e.dst, &e.src) };
                write!(f, "[:{} {}->{} @{} ", e.name, src, dst, e.ranking)?;
                write_props(f, &e.props)?;
                f.write_str("]")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_nested_containers() {
        assert_eq!(Value::Int(1).depth(), 0);
        assert_eq!(Value::NULL.depth(), 0);
        assert_eq!(Value::List(vec![]).depth(), 1);
        assert_eq!(Value::List(vec![Value::Int(1), Value::str("a")]).depth(), 1);
        let inner = Value::List(vec![Value::List(vec![Value::Int(1)])]);
        let map = Value::Map(BTreeMap::from([("a".to_string(), inner.clone()), ("b".to_string(), Value::Int(2))]));
        assert_eq!(map.depth(), 3);
        assert_eq!(Value::Set(vec![Value::Int(1), map.clone()]).depth(), 4);
        let edge = Edge {
            src: Value::str("a"),
            dst: Value::str("b"),
            edge_type: 1,
            name: "e".into(),
            ranking: 0,
            props: BTreeMap::from([("p".to_string(), inner)]),
        };
        // Properties are of the schema's types, never containers: an edge is one level whatever it holds.
        assert_eq!(Value::Edge(Box::new(edge)).depth(), 1);
        let vertex = Vertex { vid: Value::str("v"), tags: vec![Tag { name: "t".into(), props: BTreeMap::new() }] };
        assert_eq!(Value::List(vec![Value::Vertex(Box::new(vertex))]).depth(), 2);
        // Walked without recursion: as deep as the value is, wherever its deepest branch is.
        let mut deep = Value::List(vec![]);
        for i in 0..1000 {
            deep = Value::List(if i % 2 == 0 { vec![Value::Int(i), deep] } else { vec![deep, Value::List(vec![])] });
        }
        assert_eq!(deep.depth(), 1001);
    }
}
