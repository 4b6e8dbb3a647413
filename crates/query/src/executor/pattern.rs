//! The executors of MATCH's operators: `StartVertices` (the start of a path), `Traverse` (one edge pattern, fixed
//! or variable length, an edge never used twice within a path), `AppendVertices` (the far end read and checked),
//! `BuildPath`, `Unwind`, `Filter`, `Repeat` and the OPTIONAL MATCH join.
//!
//! Rows carry whole values: a node's column holds its vertex with every tag, an edge's column the edge in its stored
//! direction (or, for a variable-length edge, the list of edges in pattern order), a path's column the path.

use super::index_scan::IndexScanExecutor;
use super::Reads;
use crate::context::make_vertex;
use crate::planner::{AppendNode, PathNode, StartNode, TraverseNode};
use crate::request::{NoRow, Request, RowSource};
use crate::validator::{BoundNode, Start};
use crate::DataSet;
use quiver_api::{NeighborsRequest, PropRow, PropSelection, SchemaRef};
use quiver_common::budget::Meter;
use quiver_common::eval::{equal, eval};
use quiver_common::expr::Expr;
use quiver_common::fasthash::{FastMap as HashMap, FastSet as HashSet};
use quiver_common::value::{Edge, Path, Step, Vertex};
use quiver_common::{NullKind, QError, QResult, Value};
use std::sync::Arc;

/// The hidden column of [`argument`]'s one row.
const ARGUMENT_COLUMN: &str = "__argument";

/// One row of no values, where a MATCH statement starts.
pub(super) fn argument() -> DataSet {
    DataSet::new(vec![ARGUMENT_COLUMN.to_string()], vec![vec![Value::Empty]])
}

/// Each row of `input` as many times as its `column` says (a count of paths), without that column
/// (`fuse_match_rows`).
pub(super) fn repeat(column: &str, req: &Request<'_>, input: &DataSet) -> QResult<DataSet> {
    let Some(at) = input.column_index(column) else { return Ok(input.clone()) };
    let times: Vec<usize> =
        input.column(at).iter().map(|v| if let Value::Int(n) = v { (*n).max(0) as usize } else { 0 }).collect();
    let total: usize = times.iter().sum();
    let mut meter = Meter::new(&req.budget);
    let mut names = Vec::new();
    let mut out = Vec::new();
    for (c, name) in input.columns().iter().enumerate().filter(|(c, _)| *c != at) {
        let mut repeated = Vec::with_capacity(total);
        for (v, &n) in input.column(c).iter().zip(&times) {
            for _ in 0..n {
                if names.is_empty() {
                    // The budget is checked as the first column grows (every column grows alike).
                    meter.tick()?;
                }
                repeated.push(v.clone());
            }
        }
        names.push(name.clone());
        out.push(repeated);
    }
    Ok(DataSet::from_columns(names, out))
}

/// The VID a node's column holds: the vertex's, or the value itself when it is a VID.
fn vid_of(v: &Value) -> Option<&Value> {
    match v {
        Value::Vertex(v) => Some(&v.vid),
        Value::Int(_) | Value::String(_) => Some(v),
        _ => None,
    }
}

/// A node pattern's checks, with its property values evaluated once.
struct NodeCheck<'a> {
    node: &'a BoundNode,
    props: Vec<(&'a str, &'a str, Value)>,
}

impl<'a> NodeCheck<'a> {
    fn new(node: &'a BoundNode, req: &Request<'_>) -> QResult<NodeCheck<'a>> {
        let props = node
            .props
            .iter()
            .map(|(t, p, e)| Ok((t.as_str(), p.as_str(), eval(e, &NoRow(req))?)))
            .collect::<QResult<Vec<_>>>()?;
        Ok(NodeCheck { node, props })
    }

    fn admits(&self, v: &Vertex) -> bool {
        let tag = |name: &str| v.tags.iter().find(|t| t.name == name);
        self.node.tags.iter().all(|t| tag(&t.name).is_some())
            && self.props.iter().all(|(t, p, want)| {
                tag(t).and_then(|t| t.props.get(*p)).is_some_and(|have| equal(have, want) == Value::Bool(true))
            })
    }
}

/// Vertices of `vids` with `tags` and the properties `props` selects; absent vertices are missing from the map.
fn read_vertices(
    r: &Reads<'_>,
    tags: &[SchemaRef],
    props: &PropSelection,
    vids: Vec<Value>,
) -> QResult<HashMap<Value, Arc<Vertex>>> {
    let mut out = HashMap::default();
    if vids.is_empty() {
        return Ok(out);
    }
    for data in r.storage.get_vertices(r.space, &vids, tags, props)?.into_iter().flatten() {
        let vertex =
            make_vertex(data.vid.clone(), data.tags.into_iter().map(|(s, p)| (s.name.clone(), p.to_map())).collect());
        out.insert(data.vid, Arc::new(vertex));
    }
    Ok(out)
}

/// Whether `v` can be a VID of the space (its type, and its length for string VIDs).
fn valid_vid(r: &Reads<'_>, v: &Value) -> bool {
    r.space.vid_type_matches(v) && r.space.check_vid_len(v).is_ok()
}

fn distinct(vids: impl IntoIterator<Item = Value>) -> Vec<Value> {
    let mut seen = HashSet::default();
    vids.into_iter().filter(|v| seen.insert(v.clone())).collect()
}

pub(super) struct StartVerticesExecutor;

impl StartVerticesExecutor {
    pub fn execute(r: &Reads<'_>, s: &StartNode, input: Option<&DataSet>) -> QResult<DataSet> {
        let req = r.req;
        let vids: Vec<Value> = match &s.start {
            Start::Ids { vids, list } => {
                let items = match (eval(vids, &NoRow(req))?, list) {
                    (Value::List(items) | Value::Set(items), true) => items,
                    // `IN` something that is no list admits nothing.
                    (_, true) => Vec::new(),
                    (one, false) => vec![one],
                };
                // What is no VID of this space matches nothing.
                distinct(items.into_iter().filter(|v| valid_vid(r, v)))
            }
            Start::Index(plan) => {
                let hits = IndexScanExecutor::execute(r, plan)?;
                distinct(hits.column(0).iter().cloned())
            }
            Start::ScanTag(t) => r.storage.scan_vertices(r.space, Some(t), usize::MAX)?,
            Start::ScanAll | Start::Bound => r.storage.scan_vertices(r.space, None, usize::MAX)?,
        };
        let check = NodeCheck::new(&s.node, req)?;
        let props = s.props.clone().map_or(PropSelection::All, PropSelection::Only);
        let mut vertices = read_vertices(r, &s.tags, &props, vids.clone())?;
        let found: Vec<Value> =
            vids.iter().filter_map(|v| vertices.remove(v)).filter(|v| check.admits(v)).map(Value::Vertex).collect();
        let one = argument();
        let input = input.unwrap_or(&one);
        let mut columns = input.columns().to_vec();
        columns.push(s.node.column.clone());
        let mut out = DataSet::from_columns(columns, Vec::new());
        let mut meter = Meter::new(&req.budget);
        for row in 0..input.len() {
            for v in &found {
                meter.tick()?;
                let mut values = input.row(row);
                values.push(v.clone());
                out.push_row(values);
            }
        }
        Ok(out)
    }
}

/// An edge's identity: what "not used twice within a path" compares.
fn same_edge(a: &Edge, b: &Edge) -> bool {
    a.edge_type == b.edge_type && a.ranking == b.ranking && a.src == b.src && a.dst == b.dst
}

fn used_in(v: &Value, e: &Edge) -> bool {
    match v {
        Value::Edge(x) => same_edge(x, e),
        Value::List(items) => items.iter().any(|x| used_in(x, e)),
        _ => false,
    }
}

/// A walk in progress: the input row it extends, the edges taken (in walk order) and the vertex reached.
struct Walk {
    row: usize,
    edges: Vec<Arc<Edge>>,
    at: Value,
}

pub(super) struct PatternTraverseExecutor;

impl PatternTraverseExecutor {
    pub fn execute(r: &Reads<'_>, t: &TraverseNode, input: &DataSet) -> QResult<DataSet> {
        let req = r.req;
        let mut columns = input.columns().to_vec();
        columns.push(t.edge.column.clone());
        columns.push(t.to.clone());
        let mut out = DataSet::from_columns(columns, Vec::new());
        let Some(from) = input.column_index(&t.from) else { return Ok(out) };
        let path_columns: Vec<usize> = t.path_edges.iter().filter_map(|c| input.column_index(c)).collect();
        // An edge bound before (a WHERE's pattern naming it): only that edge is taken; a row without it takes none.
        let bound_edge = t.edge.bound_to.as_ref().map(|c| input.column_index(c));
        let takes = |row: usize, e: &Edge| match bound_edge {
            None => true,
            Some(Some(c)) => matches!(input.value(row, c), Value::Edge(b) if same_edge(b, e)),
            Some(None) => false,
        };
        // Where a walk must arrive (the far node bound before), when it is; a row without it produces nothing.
        let arrive = t.arrive_at.as_ref().and_then(|c| input.column_index(c));
        let arrives =
            |row: usize, far: &Value| arrive.is_none_or(|c| vid_of(input.value(row, c)).is_some_and(|v| v == far));
        let edge_types = t.signed_types();
        let names: HashMap<i32, &str> = t.edge.types.iter().map(|s| (s.id, s.name.as_str())).collect();
        let want: Vec<(&str, Value)> =
            t.edge.props.iter().map(|(k, e)| Ok((k.as_str(), eval(e, &NoRow(req))?))).collect::<QResult<_>>()?;
        let (min, max) = t.edge.range.unwrap_or((1, Some(1)));
        let list = t.edge.range.is_some();
        let mut meter = Meter::new(&req.budget);
        // A walk of a range (`*1..3`), as a list of its edges; a single step is emitted where it is taken.
        let emit = |out: &mut DataSet, w: &Walk| {
            let mut edges: Vec<Value> = w.edges.iter().map(|e| Value::Edge(e.clone())).collect();
            if t.reversed {
                edges.reverse();
            }
            out.push_extended(input, w.row, [Value::List(edges), w.at.clone()]);
        };
        let mut frontier: Vec<Walk> = (0..input.len())
            .filter_map(|row| {
                let v = vid_of(input.value(row, from)).filter(|v| valid_vid(r, v))?;
                Some(Walk { row, edges: Vec::new(), at: v.clone() })
            })
            .collect();
        if min == 0 {
            for w in frontier.iter().filter(|w| arrives(w.row, &w.at)) {
                meter.tick()?;
                emit(&mut out, w);
            }
        }
        let mut level = 0u32;
        while !frontier.is_empty() && max.is_none_or(|m| level < m) && !edge_types.is_empty() {
            level += 1;
            req.budget.check()?;
            let vids = distinct(frontier.iter().map(|w| w.at.clone()));
            let neighbors = r.storage.get_neighbors(
                r.space,
                &NeighborsRequest {
                    vids,
                    edge_types: edge_types.clone(),
                    props: if t.edge_props { PropSelection::All } else { PropSelection::None },
                    filter: None,
                    limit: None,
                    budget: req.budget.clone(),
                },
            )?;
            let mut adjacent: HashMap<Value, Vec<(Arc<Edge>, Value)>> = HashMap::default();
            for n in neighbors {
                let stored = n.edge_type.abs();
                let props = n.props.as_ref().map(PropRow::to_map).unwrap_or_default();
                let far = n.to.clone();
                let (src, dst) = if n.edge_type > 0 { (n.from.clone(), n.to) } else { (n.to, n.from.clone()) };
                let edge = Edge {
                    src,
                    dst,
                    edge_type: stored,
                    name: names.get(&stored).copied().unwrap_or_default().into(),
                    ranking: n.rank,
                    props,
                };
                if !edge_props_match(&edge, &want) {
                    continue;
                }
                adjacent.entry(n.from).or_default().push((Arc::new(edge), far));
            }
            if let (false, Some(at)) = (list, arrive) {
                // One step that must arrive at a bound vertex: each walk looks up the edges to it, rather than
                // going through every edge of the vertex it is at.
                let mut arrivals: HashMap<(&Value, &Value), Vec<&Arc<Edge>>> = HashMap::default();
                for (from, edges) in &adjacent {
                    for (e, far) in edges {
                        arrivals.entry((from, far)).or_default().push(e);
                    }
                }
                for w in &frontier {
                    let Some(bound) = vid_of(input.value(w.row, at)) else { continue };
                    let Some(edges) = arrivals.get(&(&w.at, bound)) else { continue };
                    for e in edges {
                        if !takes(w.row, e) || path_columns.iter().any(|&c| used_in(input.value(w.row, c), e)) {
                            continue;
                        }
                        meter.tick()?;
                        out.push_extended(input, w.row, [Value::Edge((*e).clone()), bound.clone()]);
                    }
                }
                break;
            }
            let mut next = Vec::new();
            for w in &frontier {
                let Some(edges) = adjacent.get(&w.at) else { continue };
                for (e, far) in edges {
                    if !takes(w.row, e)
                        || w.edges.iter().any(|x| same_edge(x, e))
                        || path_columns.iter().any(|&c| used_in(input.value(w.row, c), e))
                    {
                        continue;
                    }
                    // Every walk made counts, kept or not: an unbounded `*` stops at the query's bounds.
                    meter.tick()?;
                    if !list {
                        // One step, the last: the row is the walk's only trace.
                        if arrives(w.row, far) {
                            out.push_extended(input, w.row, [Value::Edge(e.clone()), far.clone()]);
                        }
                        continue;
                    }
                    let mut taken = w.edges.clone();
                    taken.push(e.clone());
                    let walk = Walk { row: w.row, edges: taken, at: far.clone() };
                    if level >= min && arrives(walk.row, &walk.at) {
                        emit(&mut out, &walk);
                    }
                    if max.is_none_or(|m| level < m) {
                        next.push(walk);
                    }
                }
            }
            frontier = next;
        }
        Ok(out)
    }
}

/// Whether an edge's properties equal every value of the pattern's property map.
fn edge_props_match(e: &Edge, want: &[(&str, Value)]) -> bool {
    want.iter().all(|(k, v)| e.props.get(*k).is_some_and(|have| equal(have, v) == Value::Bool(true)))
}

pub(super) struct AppendVerticesExecutor;

impl AppendVerticesExecutor {
    pub fn execute(r: &Reads<'_>, a: &AppendNode, input: &DataSet) -> QResult<DataSet> {
        let out = Self::append(r, a, input)?;
        Ok(match &a.keep {
            Some(keep) => keep_columns(out, keep),
            None => out,
        })
    }

    fn append(r: &Reads<'_>, a: &AppendNode, input: &DataSet) -> QResult<DataSet> {
        let check = NodeCheck::new(&a.node, r.req)?;
        let Some(from) = input.column_index(&a.from) else { return Ok(input.clone()) };
        if a.argument {
            let wrong = input.column(from).iter().find(|v| !matches!(v, Value::Vertex(_) | Value::Null(_)));
            if let Some(v) = wrong {
                return Err(QError::execution(format!(
                    "Argument only support vertex, but got {v}, whose type is '{}'",
                    v.type_name()
                )));
            }
        }
        let mut meter = Meter::new(&r.req.budget);
        if a.node.bound {
            // The walk must arrive at the vertex bound before: keep the rows where it does, drop the VID column.
            let Some(at) = input.column_index(&a.node.column) else { return Ok(input.empty_like()) };
            let mut kept = Vec::new();
            for row in 0..input.len() {
                meter.tick()?;
                let bound = input.value(row, at);
                let arrived = vid_of(input.value(row, from));
                let ok = match bound {
                    Value::Vertex(v) => arrived == Some(&v.vid) && check.admits(v),
                    _ => false,
                };
                if ok {
                    kept.push(row);
                }
            }
            let mut out = input.gather(&kept);
            if from != at {
                out = drop_column(out, from);
            }
            return Ok(out);
        }
        if a.id_only && !a.node.tags.is_empty() {
            return Self::labelled(r, a, input, from);
        }
        if a.exist && (a.id_only || !a.columns.is_empty()) {
            return Self::known(r, a, input, from);
        }
        let vids = distinct(
            (0..input.len()).filter_map(|row| vid_of(input.value(row, from)).filter(|v| valid_vid(r, v)).cloned()),
        );
        let props = a.props.clone().map_or(PropSelection::All, PropSelection::Only);
        let vertices = read_vertices(r, if a.id_only { &[] } else { &a.tags }, &props, vids)?;
        let mut out = DataSet::from_columns(input.columns().to_vec(), Vec::new());
        for row in 0..input.len() {
            meter.tick()?;
            let Some(v) = vid_of(input.value(row, from)).and_then(|vid| vertices.get(vid)) else { continue };
            if !check.admits(v) {
                continue;
            }
            out.push_replaced(input, row, from, Value::Vertex(v.clone()));
        }
        Ok(out)
    }
}

impl AppendVerticesExecutor {
    /// A labelled node read only by its VID (`prune_match_reads`): its labels are checked as tag columns, no vertex
    /// is built to check them, and its value carries the VID alone.
    fn labelled(r: &Reads<'_>, a: &AppendNode, input: &DataSet, from: usize) -> QResult<DataSet> {
        let mut meter = Meter::new(&r.req.budget);
        let vids = distinct(
            (0..input.len()).filter_map(|row| vid_of(input.value(row, from)).filter(|v| valid_vid(r, v)).cloned()),
        );
        let got = r.storage.get_tag_columns(r.space, &vids, &a.node.tags, &PropSelection::Only(Vec::new()))?;
        let labels: Vec<&[bool]> = a
            .node
            .tags
            .iter()
            .map(|t| got.iter().find(|c| c.schema.id == t.id).expect("one TagColumns per tag asked").present.as_slice())
            .collect();
        let mut admitted: HashMap<Value, Value> = HashMap::default();
        for (i, vid) in vids.into_iter().enumerate() {
            if labels.iter().all(|present| present[i]) {
                admitted.insert(vid.clone(), Value::Vertex(Arc::new(Vertex { vid, tags: Vec::new() })));
            }
        }
        let mut out = DataSet::from_columns(input.columns().to_vec(), Vec::new());
        for row in 0..input.len() {
            meter.tick()?;
            if let Some(v) = vid_of(input.value(row, from)).and_then(|vid| admitted.get(vid)) {
                out.push_replaced(input, row, from, v.clone());
            }
        }
        Ok(out)
    }

    /// Far ends a path count found (they exist): each vertex carries its VID only, and the properties the
    /// statement reads (`a.columns`) are read as columns and appended.
    fn known(r: &Reads<'_>, a: &AppendNode, input: &DataSet, from: usize) -> QResult<DataSet> {
        let mut meter = Meter::new(&r.req.budget);
        let vids: Vec<Value> = input.column(from).iter().map(|v| vid_of(v).cloned().unwrap_or(Value::NULL)).collect();
        // Per property column: its values, one per row.
        let mut read: Vec<Vec<Value>> = Vec::with_capacity(a.columns.len());
        if !a.columns.is_empty() {
            let mut tags: Vec<SchemaRef> = Vec::new();
            let mut props: Vec<String> = Vec::new();
            for c in &a.columns {
                if !tags.iter().any(|t| t.id == c.tag.id) {
                    tags.push(c.tag.clone());
                }
                if !props.contains(&c.prop) {
                    props.push(c.prop.clone());
                }
            }
            let got = r.storage.get_tag_columns(r.space, &vids, &tags, &PropSelection::Only(props))?;
            for c in &a.columns {
                let t = got.iter().find(|t| t.schema.id == c.tag.id).expect("one TagColumns per tag asked");
                // As `n.tag.prop` reads a vertex value: NULL where the vertex lacks the tag or the tag the property.
                let values = match t.names.iter().position(|n| *n == c.prop) {
                    Some(i) => t.columns[i]
                        .iter()
                        .zip(&t.present)
                        .map(|(v, present)| if *present { v.clone() } else { Value::NULL })
                        .collect(),
                    None => vec![Value::NULL; vids.len()],
                };
                read.push(values);
            }
        }
        let mut columns = input.columns().to_vec();
        columns.extend(a.columns.iter().map(|c| c.column.clone()));
        let mut out = DataSet::from_columns(columns, Vec::new());
        for (row, vid) in vids.into_iter().enumerate() {
            meter.tick()?;
            if vid.is_null() {
                continue;
            }
            let vertex = Value::Vertex(Arc::new(Vertex { vid, tags: Vec::new() }));
            let (at, extra) = (from, read.iter().map(|c| c[row].clone()));
            out.push_replaced_extended(input, row, at, vertex, extra);
        }
        Ok(out)
    }
}

/// Only the columns of `data` named in `keep`, in that order (a name it lacks is left out).
fn keep_columns(data: DataSet, keep: &[String]) -> DataSet {
    let (names, mut values) = data.into_columns();
    let mut kept = (Vec::with_capacity(keep.len()), Vec::with_capacity(keep.len()));
    for k in keep {
        if let Some(i) = names.iter().position(|n| n == k) {
            kept.0.push(names[i].clone());
            kept.1.push(std::mem::take(&mut values[i]));
        }
    }
    DataSet::from_columns(kept.0, kept.1)
}

fn drop_column(data: DataSet, c: usize) -> DataSet {
    let (mut columns, mut values) = data.into_columns();
    columns.remove(c);
    values.remove(c);
    if columns.is_empty() {
        return DataSet::from_columns(columns, Vec::new());
    }
    DataSet::from_columns(columns, values)
}

pub(super) struct BuildPathExecutor;

impl BuildPathExecutor {
    pub fn execute(r: &Reads<'_>, p: &PathNode, input: &DataSet) -> QResult<DataSet> {
        let nodes: Vec<Option<usize>> = p.nodes.iter().map(|c| input.column_index(c)).collect();
        let edges: Vec<Option<usize>> = p.edges.iter().map(|(c, _)| input.column_index(c)).collect();
        // The vertices inside variable-length edges, read once for the batch.
        let mut inner = Vec::new();
        for row in 0..input.len() {
            for (i, c) in edges.iter().enumerate() {
                if let (Some(c), true) = (c, p.edges[i].1) {
                    if let Value::List(items) = input.value(row, *c) {
                        for e in items {
                            if let Value::Edge(e) = e {
                                inner.push(e.src.clone());
                                inner.push(e.dst.clone());
                            }
                        }
                    }
                }
            }
        }
        let inner = read_vertices(r, &p.tags, &PropSelection::All, distinct(inner))?;
        let mut columns = input.columns().to_vec();
        columns.push(p.alias.clone());
        let mut out = DataSet::from_columns(columns, Vec::new());
        let mut meter = Meter::new(&r.req.budget);
        for row in 0..input.len() {
            meter.tick()?;
            let vertex = |c: Option<usize>| match c.map(|c| input.value(row, c)) {
                Some(Value::Vertex(v)) => Some((**v).clone()),
                _ => None,
            };
            let Some(src) = vertex(nodes[0]) else { continue };
            let mut steps = Vec::new();
            let mut at = src.vid.clone();
            for (i, c) in edges.iter().enumerate() {
                let taken: Vec<&Edge> = match c.map(|c| input.value(row, c)) {
                    Some(Value::Edge(e)) => vec![&**e],
                    Some(Value::List(items)) => {
                        items.iter().filter_map(|x| if let Value::Edge(e) = x { Some(&**e) } else { None }).collect()
                    }
                    _ => Vec::new(),
                };
                let end = vertex(nodes[i + 1]);
                for (k, e) in taken.iter().enumerate() {
                    let forward = e.src == at;
                    let next = if forward { e.dst.clone() } else { e.src.clone() };
                    let dst = if k + 1 == taken.len() {
                        end.clone().unwrap_or(Vertex { vid: next.clone(), tags: Vec::new() })
                    } else {
                        inner
                            .get(&next)
                            .map(|v| (**v).clone())
                            .unwrap_or(Vertex { vid: next.clone(), tags: Vec::new() })
                    };
                    steps.push(Step {
                        dst,
                        edge_type: if forward { e.edge_type } else { -e.edge_type },
                        name: e.name.clone(),
                        ranking: e.ranking,
                        props: e.props.clone(),
                    });
                    at = next;
                }
            }
            let mut values = input.row(row);
            values.push(Value::Path(Arc::new(Path { src, steps })));
            out.push_row(values);
        }
        Ok(out)
    }
}

pub(super) struct UnwindExecutor;

impl UnwindExecutor {
    /// One row per item of `expr` on each input row: the input row's columns and the item (`keep_input`, MATCH's
    /// UNWIND), or the item alone (nGQL's UNWIND sentence).
    pub fn execute(expr: &Expr, alias: &str, keep_input: bool, req: &Request<'_>, input: &DataSet) -> QResult<DataSet> {
        let mut columns = if keep_input { input.columns().to_vec() } else { Vec::new() };
        columns.push(alias.to_string());
        let mut out = DataSet::from_columns(columns, Vec::new());
        let src = RowSource { var: None, data: input };
        let mut meter = Meter::new(&req.budget);
        for row in 0..input.len() {
            let items = match eval(expr, &src.context(req, row))? {
                Value::List(items) | Value::Set(items) => items,
                Value::Null(_) => Vec::new(),
                other => vec![other],
            };
            for item in items {
                meter.tick()?;
                let mut values = if keep_input { input.row(row) } else { Vec::with_capacity(1) };
                values.push(item);
                out.push_row(values);
            }
        }
        Ok(out)
    }
}

pub(super) struct FilterExecutor;

impl FilterExecutor {
    pub fn execute(cond: &Expr, req: &Request<'_>, input: &DataSet) -> QResult<DataSet> {
        let src = RowSource { var: None, data: input };
        let mut kept = Vec::new();
        let mut meter = Meter::new(&req.budget);
        for row in 0..input.len() {
            meter.tick()?;
            // NebulaGraph's FilterExecutor: NULL and EMPTY drop the row; an error's NULL or a value that is no
            // boolean fails the query.
            match eval(cond, &src.context(req, row))? {
                Value::Bool(true) => kept.push(row),
                Value::Bool(false) | Value::Null(NullKind::Null) | Value::Empty => {}
                _ => {
                    return Err(QError::execution(format!(
                        "Failed to evaluate condition: {cond}. For boolean conditions, please write in their full forms like <condition> == <true/false> or <condition> IS [NOT] NULL."
                    )))
                }
            }
        }
        Ok(input.gather(&kept))
    }
}

/// The hidden column that numbers an OPTIONAL MATCH's input rows.
const ROW_COLUMN: &str = "__row";

/// The input rows, numbered in a hidden column, for an OPTIONAL MATCH's branch.
pub(super) fn numbered(input: DataSet) -> DataSet {
    let len = input.len();
    let (mut columns, mut values) = input.into_columns();
    columns.push(ROW_COLUMN.to_string());
    values.push((0..len as i64).map(Value::Int).collect());
    DataSet::from_columns(columns, values)
}

/// Each input row with the branch's rows made from it, or with NULLs in `new` when there are none.
pub(super) fn left_join(input: &DataSet, branch: &DataSet, new: &[String]) -> DataSet {
    let mut columns = input.columns().to_vec();
    columns.extend(new.iter().cloned());
    let mut out = DataSet::from_columns(columns, Vec::new());
    let mut by_row: HashMap<i64, Vec<usize>> = HashMap::default();
    if let Some(rc) = branch.column_index(ROW_COLUMN) {
        for r in 0..branch.len() {
            if let Value::Int(i) = branch.value(r, rc) {
                by_row.entry(*i).or_default().push(r);
            }
        }
    }
    let picks: Vec<Option<usize>> = new.iter().map(|c| branch.column_index(c)).collect();
    for row in 0..input.len() {
        match by_row.get(&(row as i64)) {
            Some(matches) => {
                for &m in matches {
                    let mut values = input.row(row);
                    values.extend(picks.iter().map(|p| p.map_or(Value::NULL, |c| branch.value(m, c).clone())));
                    out.push_row(values);
                }
            }
            None => {
                let mut values = input.row(row);
                values.extend(new.iter().map(|_| Value::NULL));
                out.push_row(values);
            }
        }
    }
    out
}

/// The input rows from which the branch produced a row (with `anti`, those from which it produced none).
/// `keys` distinct keys were numbered by the branch's input; `key_of_row` gives each input row's.
pub(super) fn semi_join(input: &DataSet, keys: usize, key_of_row: &[usize], branch: &DataSet, anti: bool) -> DataSet {
    let mut hit = vec![false; keys];
    if let Some(rc) = branch.column_index(ROW_COLUMN) {
        for r in 0..branch.len() {
            if let Value::Int(i) = branch.value(r, rc) {
                if let Some(h) = hit.get_mut(*i as usize) {
                    *h = true;
                }
            }
        }
    }
    let kept: Vec<usize> = (0..input.len()).filter(|&i| hit[key_of_row[i]] != anti).collect();
    input.gather(&kept)
}

/// Each input row with `column` added: the list of the branch's `column` values made from its key (in the order the
/// branch produced them). `keys` distinct keys were numbered by the branch's input; `key_of_row` gives each input
/// row's.
pub(super) fn roll_up(input: &DataSet, keys: usize, key_of_row: &[usize], branch: &DataSet, column: &str) -> DataSet {
    let mut lists: Vec<Vec<Value>> = vec![Vec::new(); keys];
    if let (Some(rc), Some(pc)) = (branch.column_index(ROW_COLUMN), branch.column_index(column)) {
        for r in 0..branch.len() {
            if let Value::Int(i) = branch.value(r, rc) {
                if let Some(list) = lists.get_mut(*i as usize) {
                    list.push(branch.value(r, pc).clone());
                }
            }
        }
    }
    let (mut columns, mut values) = input.clone().into_columns();
    columns.push(column.to_string());
    values.push(key_of_row.iter().map(|&k| Value::List(lists[k].clone())).collect());
    DataSet::from_columns(columns, values)
}

/// The distinct values of the input's `keys` columns (as the first row with each has them), and for every input
/// row the position of its key among them. Columns of `keys` the input lacks are left out; so are the other
/// columns (a pattern predicate reads only its keys).
pub(super) fn distinct_keys(input: &DataSet, keys: &[String]) -> (DataSet, Vec<usize>) {
    let cols: Vec<usize> = keys.iter().filter_map(|k| input.column_index(k)).collect();
    if cols.is_empty() {
        // A pattern that names no bound node (`WHERE ()-[:serve]->(:team)`): one key for every row, so the branch
        // runs once (a DataSet without columns could not carry that one row).
        let one = if input.is_empty() { argument().empty_like() } else { argument() };
        return (one, vec![0; input.len()]);
    }
    let mut seen: HashMap<Vec<Value>, usize> = HashMap::default();
    let mut firsts = Vec::new();
    let key_of_row = (0..input.len())
        .map(|r| {
            // A vertex by its VID: hashing a whole vertex value would hash its properties.
            let key: Vec<Value> = cols
                .iter()
                .map(|&c| {
                    let v = input.value(r, c);
                    vid_of(v).unwrap_or(v).clone()
                })
                .collect();
            let next = seen.len();
            let k = *seen.entry(key).or_insert(next);
            if k == next {
                firsts.push(r);
            }
            k
        })
        .collect();
    let columns = cols.iter().map(|&c| input.columns()[c].clone()).collect();
    let values = cols.iter().map(|&c| firsts.iter().map(|&r| input.value(r, c).clone()).collect()).collect();
    (DataSet::from_columns(columns, values), key_of_row)
}
