//! The value model shared by every layer, after NebulaGraph's `Value` union.
//!
//! EMPTY (no such property, tag or vertex) and NULL (present but null) are different values everywhere.

use crate::datetime::{Date, DateTime, Duration, Time};
use crate::geo::Geography;
pub use smol_str::SmolStr;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The kinds of NULL NebulaGraph distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
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

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
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
    /// Shared: rows that carry the same node or edge (every row of a path through it) copy a pointer.
    Vertex(Arc<Vertex>),
    Edge(Arc<Edge>),
    Path(Arc<Path>),
    /// A point, linestring or polygon (see [`crate::geo`]); shared, as rows copy it.
    Geography(Arc<Geography>),
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tag {
    pub name: String,
    pub props: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Vertex {
    pub vid: Value,
    /// Sorted by tag name.
    pub tags: Vec<Tag>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Edge {
    pub src: Value,
    pub dst: Value,
    /// Positive for an edge read in its stored direction, negative when read reversely (as in NebulaGraph).
    pub edge_type: i32,
    /// Inline (no allocation per edge read) for names up to 23 bytes.
    pub name: SmolStr,
    pub ranking: i64,
    pub props: BTreeMap<String, Value>,
}

impl Edge {
    /// The edge as stored: `(source, positive type, destination)`, whichever way it was walked.
    pub fn stored(&self) -> (&Value, i32, &Value) {
        if self.edge_type < 0 {
            (&self.dst, -self.edge_type, &self.src)
        } else {
            (&self.src, self.edge_type, &self.dst)
        }
    }
}

/// One hop of a [`Path`]: the edge walked and the vertex it leads to, as NebulaGraph's `Step`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Step {
    pub dst: Vertex,
    /// Positive when the edge was walked in its stored direction (from the previous vertex to `dst`), negative
    /// when it was walked against it (the edge is stored from `dst` to the previous vertex).
    pub edge_type: i32,
    /// Inline (no allocation per edge read) for names up to 23 bytes.
    pub name: SmolStr,
    pub ranking: i64,
    pub props: BTreeMap<String, Value>,
}

/// A walk through the graph, as NebulaGraph's `Path`: a start vertex and the steps taken from it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Path {
    pub src: Vertex,
    pub steps: Vec<Step>,
}

impl Path {
    /// The number of steps (edges walked), what `length(p)` answers.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// A path of its start vertex alone.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The vertex the walk ends at: the start vertex of a path with no steps.
    pub fn end(&self) -> &Vertex {
        self.steps.last().map_or(&self.src, |s| &s.dst)
    }

    /// The vertices in walk order, the start vertex first (`nodes(p)`).
    pub fn nodes(&self) -> Vec<Vertex> {
        std::iter::once(&self.src).chain(self.steps.iter().map(|s| &s.dst)).cloned().collect()
    }

    /// Each step as an edge (`relationships(p)`), as NebulaGraph's function builds them: `src` is the vertex the
    /// step leaves, `dst` the one it reaches, and the type keeps the step's sign. A step walked against the stored
    /// direction is so an edge read reversely, which prints, and answers `src()`/`dst()`, in its stored direction.
    pub fn relationships(&self) -> Vec<Edge> {
        let mut from = &self.src.vid;
        self.steps
            .iter()
            .map(|s| {
                let edge = Edge {
                    src: from.clone(),
                    dst: s.dst.vid.clone(),
                    edge_type: s.edge_type,
                    name: s.name.clone(),
                    ranking: s.ranking,
                    props: s.props.clone(),
                };
                from = &s.dst.vid;
                edge
            })
            .collect()
    }

    /// The same walk taken from its end (`reversePath(p)`): every step leads to the vertex it came from, with its
    /// type negated. NebulaGraph's `Path::reverse`.
    pub fn reversed(&self) -> Path {
        let Some(last) = self.steps.last() else {
            return self.clone();
        };
        let mut steps = Vec::with_capacity(self.steps.len());
        for (i, s) in self.steps.iter().enumerate().rev() {
            let dst = if i == 0 { &self.src } else { &self.steps[i - 1].dst };
            steps.push(Step {
                dst: dst.clone(),
                edge_type: -s.edge_type,
                name: s.name.clone(),
                ranking: s.ranking,
                props: s.props.clone(),
            });
        }
        Path { src: last.dst.clone(), steps }
    }

    /// Is some vertex met twice (`hasSameVertexInPath(p)`)? Vertices are told apart by their ids.
    pub fn has_duplicate_vertices(&self) -> bool {
        let mut seen = std::collections::HashSet::with_capacity(self.steps.len() + 1);
        std::iter::once(&self.src).chain(self.steps.iter().map(|s| &s.dst)).any(|v| !seen.insert(&v.vid))
    }

    /// Is some edge walked twice, in either direction (`hasSameEdgeInPath(p)`)? Edges are told apart by their key
    /// in the stored direction: source, destination, type and rank.
    pub fn has_duplicate_edges(&self) -> bool {
        let mut seen = std::collections::HashSet::with_capacity(self.steps.len());
        let mut from = &self.src.vid;
        self.steps.iter().any(|s| {
            let to = &s.dst.vid;
            let key =
                if s.edge_type > 0 { (from, to, s.edge_type, s.ranking) } else { (to, from, -s.edge_type, s.ranking) };
            from = to;
            !seen.insert(key)
        })
    }
}

/// NebulaGraph's `Vertex::operator<`: by id, then by the number of tags.
fn cmp_vertex(a: &Vertex, b: &Vertex) -> Ordering {
    a.vid.total_cmp(&b.vid).then(a.tags.len().cmp(&b.tags.len()))
}

/// NebulaGraph's `Path::operator<` (by start vertex, then step by step: the vertex reached, the edge type without its
/// sign, the rank, the number of properties; a prefix first), then, where NebulaGraph's order sees two paths as
/// equal, by what its `==` and its hash still tell apart: edge names and property values, then the direction of
/// each step. So two walks of one edge in opposite directions are different paths, as NebulaGraph's hash (but not
/// its `==`) has them.
fn cmp_path(a: &Path, b: &Path) -> Ordering {
    let nebula = || {
        cmp_vertex(&a.src, &b.src).then_with(|| {
            for (x, y) in a.steps.iter().zip(&b.steps) {
                let o = cmp_vertex(&x.dst, &y.dst)
                    .then(x.edge_type.unsigned_abs().cmp(&y.edge_type.unsigned_abs()))
                    .then(x.ranking.cmp(&y.ranking))
                    .then(x.props.len().cmp(&y.props.len()));
                if o != Ordering::Equal {
                    return o;
                }
            }
            a.steps.len().cmp(&b.steps.len())
        })
    };
    let names_and_props = || {
        for (x, y) in a.steps.iter().zip(&b.steps) {
            let o = x.name.cmp(&y.name).then_with(|| cmp_props(&x.props, &y.props));
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    };
    let directions = || a.steps.iter().map(|s| s.edge_type > 0).cmp(b.steps.iter().map(|s| s.edge_type > 0));
    nebula().then_with(names_and_props).then_with(directions)
}

fn cmp_props(a: &BTreeMap<String, Value>, b: &BTreeMap<String, Value>) -> Ordering {
    for ((ka, va), (kb, vb)) in a.iter().zip(b.iter()) {
        let o = ka.cmp(kb).then_with(|| va.total_cmp(vb));
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
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
            Value::Path(_) => "path",
            Value::Geography(_) => "geography",
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
            // found without walking (a GO reads `edge` or `$$` on every row). A path's vertices and steps are
            // printed, compared and encoded inline, so it is one level too.
            Value::Vertex(_) | Value::Edge(_) | Value::Path(_) => 1,
            _ => 0,
        }
    }

    fn holds_values(&self) -> bool {
        matches!(
            self,
            Value::List(_) | Value::Set(_) | Value::Map(_) | Value::Vertex(_) | Value::Edge(_) | Value::Path(_)
        )
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
                // A vertex, an edge or a path is one level: properties are never containers.
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
            Value::Path(_) => 10,
            Value::List(_) => 11,
            Value::Map(_) => 12,
            Value::Set(_) => 13,
            Value::Geography(_) => 14,
            Value::Null(_) => 15,
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
            (Value::Geography(a), Value::Geography(b)) => a.total_cmp(b),
            (Value::List(a), Value::List(b)) | (Value::Set(a), Value::Set(b)) => cmp_seq(a, b),
            (Value::Map(a), Value::Map(b)) => cmp_props(a, b),
            (Value::Vertex(a), Value::Vertex(b)) => a.vid.total_cmp(&b.vid),
            // An edge is the stored one however it was walked (NebulaGraph's `Edge::operator==`).
            (Value::Edge(a), Value::Edge(b)) => {
                let ((asrc, at, adst), (bsrc, bt, bdst)) = (a.stored(), b.stored());
                asrc.total_cmp(bsrc)
                    .then(at.cmp(&bt))
                    .then(a.ranking.cmp(&b.ranking))
                    .then_with(|| adst.total_cmp(bdst))
            }
            (Value::Path(a), Value::Path(b)) => cmp_path(a, b),
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
            Value::Geography(g) => J::String(g.wkt()),
            Value::List(items) | Value::Set(items) => J::Array(items.iter().map(|v| v.to_json()).collect()),
            Value::Map(m) => J::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
            Value::Vertex(v) => vertex_json(v),
            Value::Edge(e) => props_json(&e.props),
            // NebulaGraph's `Path::toJson`: the start vertex, then each step's edge properties and the vertex it
            // reaches, alternating in one array.
            Value::Path(p) => {
                let mut items = Vec::with_capacity(1 + 2 * p.steps.len());
                items.push(vertex_json(&p.src));
                for s in &p.steps {
                    items.push(props_json(&s.props));
                    items.push(vertex_json(&s.dst));
                }
                J::Array(items)
            }
        }
    }

    /// The `meta` entry NebulaGraph's `executeJson` puts beside each value: identity of vertices and edges.
    pub fn to_json_meta(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Value::Vertex(v) => vertex_meta(v),
            Value::Edge(e) => json!({"type": "edge", "id": {
                "src": e.src.to_json(), "dst": e.dst.to_json(), "type": e.edge_type,
                "name": e.name.as_str(), "ranking": e.ranking}}),
            // NebulaGraph's `Path::getMetaData`: vertex and edge entries alternating as in the row. An edge's id has
            // the step's signed type, from the vertex the step leaves to the one it reaches (walk order, not the
            // stored direction).
            Value::Path(p) => {
                let mut items = Vec::with_capacity(1 + 2 * p.steps.len());
                items.push(vertex_meta(&p.src));
                let mut from = &p.src.vid;
                for s in &p.steps {
                    items.push(json!({"type": "edge", "id": {
                        "src": from.to_json(), "dst": s.dst.vid.to_json(), "type": s.edge_type,
                        "name": s.name.as_str(), "ranking": s.ranking}}));
                    items.push(vertex_meta(&s.dst));
                    from = &s.dst.vid;
                }
                serde_json::Value::Array(items)
            }
            Value::List(items) | Value::Set(items) => {
                serde_json::Value::Array(items.iter().map(|v| v.to_json_meta()).collect())
            }
            _ => serde_json::Value::Null,
        }
    }
}

/// A vertex in an `executeJson` row: its properties as `tag.prop` keys (NebulaGraph's `Vertex::toJson`).
fn vertex_json(v: &Vertex) -> serde_json::Value {
    let mut obj = serde_json::Map::new();
    for tag in &v.tags {
        for (k, val) in &tag.props {
            obj.insert(format!("{}.{}", tag.name, k), val.to_json());
        }
    }
    serde_json::Value::Object(obj)
}

fn props_json(props: &BTreeMap<String, Value>) -> serde_json::Value {
    serde_json::Value::Object(props.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
}

fn vertex_meta(v: &Vertex) -> serde_json::Value {
    serde_json::json!({"type": "vertex", "id": v.vid.to_json()})
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
                (Value::Edge(a), Value::Edge(b)) => a.name == b.name && a.props == b.props,
                (Value::Path(a), Value::Path(b)) => a == b,
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
            Value::Geography(g) => g.hash_into(state),
            Value::List(items) | Value::Set(items) => items.iter().for_each(|v| v.hash(state)),
            Value::Map(m) => m.iter().for_each(|(k, v)| {
                k.hash(state);
                v.hash(state)
            }),
            Value::Vertex(v) => v.vid.hash(state),
            Value::Edge(e) => {
                let (src, _, dst) = e.stored();
                src.hash(state);
                dst.hash(state);
                e.ranking.hash(state);
            }
            // What `total_cmp` compares first, so values it finds equal hash equal.
            Value::Path(p) => {
                p.src.vid.hash(state);
                for s in &p.steps {
                    s.dst.vid.hash(state);
                    s.edge_type.hash(state);
                    s.ranking.hash(state);
                }
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
    write_entries(f, props)
}

/// `{k: v, ...}`: a map's or a pattern's properties.
pub(crate) fn write_entries<K: fmt::Display, V: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    entries: impl IntoIterator<Item = (K, V)>,
) -> fmt::Result {
    f.write_str("{")?;
    for (i, (k, v)) in entries.into_iter().enumerate() {
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
    /// The notation of NebulaGraph's TCK and of its console (nebula-go's `ValueWrapper.String`): `"str"`, `NULL`,
    /// `EMPTY`, `[1, 2]`, `{a: 1}`, `("vid" :tag{p: 1})`, `[:type "src"->"dst" @0 {p: 1}]`, and a path as
    /// `<("a" :t{})-[:type@0 {p: 1}]->("b" :t{})<-[:type@0 {}]-("c")>` (`<-[...]-` for a step against the stored
    /// direction).
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
            Value::Geography(g) => write!(f, "{g}"),
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
            Value::Vertex(v) => write_vertex(f, v),
            Value::Edge(e) => {
                let (src, dst) = if e.edge_type >= 0 { (&e.src, &e.dst) } else { (&e.dst, &e.src) };
                write!(f, "[:{} {}->{} @{} ", e.name, src, dst, e.ranking)?;
                write_props(f, &e.props)?;
                f.write_str("]")
            }
            Value::Path(p) => {
                f.write_str("<")?;
                write_vertex(f, &p.src)?;
                for s in &p.steps {
                    let (open, close) = if s.edge_type > 0 { ("-[", "]->") } else { ("<-[", "]-") };
                    write!(f, "{open}:{}@{} ", s.name, s.ranking)?;
                    write_props(f, &s.props)?;
                    f.write_str(close)?;
                    write_vertex(f, &s.dst)?;
                }
                f.write_str(">")
            }
        }
    }
}

fn write_vertex(f: &mut fmt::Formatter<'_>, v: &Vertex) -> fmt::Result {
    write!(f, "({}", v.vid)?;
    for tag in &v.tags {
        write!(f, " :{}", tag.name)?;
        write_props(f, &tag.props)?;
    }
    f.write_str(")")
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
        assert_eq!(Value::Edge(Arc::new(edge)).depth(), 1);
        let vertex = Vertex { vid: Value::str("v"), tags: vec![Tag { name: "t".into(), props: BTreeMap::new() }] };
        assert_eq!(Value::List(vec![Value::Vertex(Arc::new(vertex))]).depth(), 2);
        // Walked without recursion: as deep as the value is, wherever its deepest branch is.
        let mut deep = Value::List(vec![]);
        for i in 0..1000 {
            deep = Value::List(if i % 2 == 0 { vec![Value::Int(i), deep] } else { vec![deep, Value::List(vec![])] });
        }
        assert_eq!(deep.depth(), 1001);
    }

    fn vertex(vid: &str, tag: &str, props: &[(&str, Value)]) -> Vertex {
        let props = props.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        Vertex { vid: Value::str(vid), tags: vec![Tag { name: tag.into(), props }] }
    }

    fn step(dst: Vertex, edge_type: i32, name: &str, ranking: i64, props: &[(&str, Value)]) -> Step {
        let props = props.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        Step { dst, edge_type, name: name.into(), ranking, props }
    }

    /// Tim likes Tony, then Manu likes Tony: the second step is walked against the stored direction.
    fn tim_tony_manu() -> Path {
        let tim = vertex("Tim Duncan", "player", &[("age", Value::Int(42)), ("name", Value::str("Tim Duncan"))]);
        let tony = vertex("Tony Parker", "player", &[("age", Value::Int(36))]);
        let manu = Vertex { vid: Value::str("Manu Ginobili"), tags: vec![] };
        Path {
            src: tim,
            steps: vec![
                step(tony, 5, "like", 0, &[("likeness", Value::Int(95))]),
                step(manu, -5, "like", 0, &[("likeness", Value::Int(95))]),
            ],
        }
    }

    #[test]
    fn paths_print_as_nebula_console_does() {
        let p = Value::Path(Arc::new(tim_tony_manu()));
        assert_eq!(
            p.to_string(),
            r#"<("Tim Duncan" :player{age: 42, name: "Tim Duncan"})-[:like@0 {likeness: 95}]->("Tony Parker" :player{age: 36})<-[:like@0 {likeness: 95}]-("Manu Ginobili")>"#
        );
        let alone = Path { src: Vertex { vid: Value::Int(7), tags: vec![] }, steps: vec![] };
        assert_eq!(Value::Path(Arc::new(alone)).to_string(), "<(7)>");
        let no_props = Path {
            src: Vertex { vid: Value::Int(1), tags: vec![] },
            steps: vec![step(Vertex { vid: Value::Int(2), tags: vec![] }, 1, "e", -3, &[])],
        };
        assert_eq!(Value::Path(Arc::new(no_props)).to_string(), "<(1)-[:e@-3 {}]->(2)>");
        assert_eq!(p.type_name(), "path");
    }

    #[test]
    fn paths_as_execute_json_rows_and_meta() {
        // NebulaGraph's ValueToJsonTest `path`, case for case.
        let p = Value::Path(Arc::new(Path {
            src: vertex("v1", "tagName", &[("prop1", Value::Int(1))]),
            steps: vec![step(
                vertex(
                    "v2",
                    "tagName2",
                    &[("prop1", Value::Int(2)), ("prop2", Value::NULL), ("prop3", Value::str("123"))],
                ),
                1,
                "edgeName",
                100,
                &[("edgeProp", Value::str("edgePropVal"))],
            )],
        }));
        assert_eq!(
            p.to_json(),
            serde_json::json!([
                {"tagName.prop1": 1},
                {"edgeProp": "edgePropVal"},
                {"tagName2.prop1": 2, "tagName2.prop2": null, "tagName2.prop3": "123"}
            ])
        );
        assert_eq!(
            p.to_json_meta(),
            serde_json::json!([
                {"id": "v1", "type": "vertex"},
                {"id": {"src": "v1", "dst": "v2", "type": 1, "name": "edgeName", "ranking": 100}, "type": "edge"},
                {"id": "v2", "type": "vertex"}
            ])
        );
        // A step against the stored direction: the edge's id is in walk order with the negative type.
        let meta = Value::Path(Arc::new(tim_tony_manu())).to_json_meta();
        assert_eq!(
            meta[3],
            serde_json::json!({"id": {"src": "Tony Parker", "dst": "Manu Ginobili", "type": -5, "name": "like",
                "ranking": 0}, "type": "edge"})
        );
        // Inside a list, a path keeps its own array of entries.
        let list = Value::List(vec![p.clone(), Value::Int(1)]);
        assert_eq!(list.to_json_meta()[0], p.to_json_meta());
        assert_eq!(list.to_json_meta()[1], serde_json::Value::Null);
    }

    #[test]
    fn path_helpers_follow_nebula() {
        let p = tim_tony_manu();
        assert_eq!((p.len(), p.is_empty()), (2, false));
        let vids: Vec<Value> = p.nodes().into_iter().map(|v| v.vid).collect();
        assert_eq!(vids, vec![Value::str("Tim Duncan"), Value::str("Tony Parker"), Value::str("Manu Ginobili")]);
        assert_eq!(p.end().vid, Value::str("Manu Ginobili"));
        let rels = p.relationships();
        assert_eq!(rels.len(), 2);
        assert_eq!(
            (&rels[0].src, &rels[0].dst, rels[0].edge_type),
            (&Value::str("Tim Duncan"), &Value::str("Tony Parker"), 5)
        );
        // Walk order with the negative type, which prints in the stored direction (Manu likes Tony).
        assert_eq!(
            (&rels[1].src, &rels[1].dst, rels[1].edge_type),
            (&Value::str("Tony Parker"), &Value::str("Manu Ginobili"), -5)
        );
        assert_eq!(
            Value::Edge(Arc::new(rels[1].clone())).to_string(),
            r#"[:like "Manu Ginobili"->"Tony Parker" @0 {likeness: 95}]"#
        );

        let r = p.reversed();
        assert_eq!(r.src.vid, Value::str("Manu Ginobili"));
        let walked: Vec<(Value, i32)> = r.steps.iter().map(|s| (s.dst.vid.clone(), s.edge_type)).collect();
        assert_eq!(walked, vec![(Value::str("Tony Parker"), 5), (Value::str("Tim Duncan"), -5)]);
        assert_eq!(
            Value::Path(Arc::new(r.clone())).to_string(),
            r#"<("Manu Ginobili")-[:like@0 {likeness: 95}]->("Tony Parker" :player{age: 36})<-[:like@0 {likeness: 95}]-("Tim Duncan" :player{age: 42, name: "Tim Duncan"})>"#
        );
        assert_eq!(r.reversed(), p);
        let alone = Path { src: p.src.clone(), steps: vec![] };
        assert_eq!(alone.reversed(), alone);
        assert_eq!(alone.end(), &p.src);

        assert!(!p.has_duplicate_vertices() && !p.has_duplicate_edges());
        // Tim -> Tony -> Tim: a vertex twice, two different edges (Tim likes Tony, Tony likes Tim).
        let mut back = p.clone();
        back.steps[1] = step(p.src.clone(), 5, "like", 0, &[]);
        assert!(back.has_duplicate_vertices() && !back.has_duplicate_edges());
        // Tim -> Tony, then back over the same edge against its direction: the same edge twice.
        back.steps[1].edge_type = -5;
        assert!(back.has_duplicate_vertices() && back.has_duplicate_edges());
        // Another rank is another edge.
        back.steps[1].ranking = 1;
        assert!(!back.has_duplicate_edges());
        assert!(!alone.has_duplicate_vertices() && !alone.has_duplicate_edges());
    }

    #[test]
    fn paths_order_as_nebula_and_equal_hash_alike() {
        use std::hash::{BuildHasher, RandomState};
        let state = RandomState::new();
        let hash = |v: &Value| state.hash_one(v);
        let p = tim_tony_manu();
        let v = |p: &Path| Value::Path(Arc::new(p.clone()));
        // After edges, before lists.
        assert_eq!(v(&p).total_cmp(&Value::List(vec![])), Ordering::Less);
        let edge = Value::Edge(Arc::new(p.relationships()[0].clone()));
        assert_eq!(v(&p).total_cmp(&edge), Ordering::Greater);
        // A prefix first; then by the vertex reached, the type without its sign, the rank.
        let prefix = Path { src: p.src.clone(), steps: p.steps[..1].to_vec() };
        assert_eq!(v(&prefix).total_cmp(&v(&p)), Ordering::Less);
        let mut other = p.clone();
        other.steps[0].ranking = -1;
        assert_eq!(v(&other).total_cmp(&v(&p)), Ordering::Less);
        let mut other = p.clone();
        other.steps[1].edge_type = 4;
        assert_eq!(v(&other).total_cmp(&v(&p)), Ordering::Less);
        // The same walk in the other direction over the same edge is another path.
        let mut flipped = p.clone();
        flipped.steps[1].edge_type = 5;
        assert_ne!(v(&flipped), v(&p));
        assert_ne!(v(&flipped).total_cmp(&v(&p)), Ordering::Equal);
        // Equal paths hash alike; the start vertex counts.
        assert_eq!(v(&p), v(&p.clone()));
        assert_eq!(hash(&v(&p)), hash(&v(&p.clone())));
        let mut moved = p.clone();
        moved.src.vid = Value::str("Tim");
        assert_ne!(v(&moved), v(&p));
        // `==` and `<` in expressions compare paths; against another type `==` is false.
        assert_eq!(crate::eval::equal(&v(&p), &v(&p.clone())), Value::Bool(true));
        assert_eq!(crate::eval::equal(&v(&flipped), &v(&p)), Value::Bool(false));
        assert_eq!(crate::eval::equal(&v(&p), &edge), Value::Bool(false));
        let set = Value::set_from(vec![v(&p), v(&flipped), v(&p)]);
        assert!(matches!(&set, Value::Set(items) if items.len() == 2), "{set}");
    }

    #[test]
    fn a_path_is_one_level_deep() {
        let p = Value::Path(Arc::new(tim_tony_manu()));
        assert_eq!(p.depth(), 1);
        assert_eq!(Value::List(vec![p.clone()]).depth(), 2);
        assert_eq!(Value::Map(BTreeMap::from([("p".to_string(), Value::List(vec![p]))])).depth(), 3);
    }
}
