//! FindPathExecutor (FIND PATH: one storage search for every source and target, then path values) and
//! SubgraphExecutor (GET SUBGRAPH: one neighbour read per round, NebulaGraph's rules for which edges each round
//! lists). See `docs/design/paths.md`.

use super::Reads;
use crate::context::make_vertex;
use crate::planner::ShortestNode;
use crate::request::input_rows;
use crate::request::NoRow;
use crate::validator::{BoundFindPath, BoundSubgraph, Ends, SubgraphColumn};
use crate::DataSet;
use quiver_api::*;
use quiver_common::eval::{eval, eval_condition, EvalContext};
use quiver_common::expr::{BinaryOp, Expr};
use quiver_common::value::{Edge, Path, Step, Vertex};
use quiver_common::{QError, QResult, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The VIDs of a search's ends: constants, or a column of the input read row by row (values that are not VIDs of
/// the space are skipped, as a GO's starts), each once.
fn end_vids(r: &Reads<'_>, ends: &Ends, input: Option<&DataSet>) -> QResult<Vec<Value>> {
    let mut seen = HashSet::new();
    let vids = match ends {
        Ends::Vids(v) => v.clone(),
        Ends::Column(e) => {
            let src = input_rows(e, r.req, input)?;
            let mut vids = Vec::with_capacity(src.len());
            for row in 0..src.len() {
                let v = eval(e, &src.context(r.req, row))?;
                if v.is_null() || v.is_empty() {
                    continue;
                }
                // NebulaGraph refuses a column of another type than the space's VIDs (it knows the column's type
                // before running; Quiver finds out from the values).
                if !r.space.vid_type_matches(&v) {
                    return Err(QError::semantic(format!(
                        "`{e}', the srcs should be type of {}, but was`{}'",
                        if r.space.vid_type == VidType::Int64 { "INT64" } else { "FIXED_STRING" },
                        v.type_name().to_uppercase()
                    )));
                }
                if r.space.check_vid_len(&v).is_ok() {
                    vids.push(v);
                }
            }
            vids
        }
    };
    Ok(vids.into_iter().filter(|v| !v.is_empty() && seen.insert(v.clone())).collect())
}

/// The vertex values of `vids`: every tag with the properties `props` selects; a VID no vertex has is a vertex
/// with no tags.
fn vertices(r: &Reads<'_>, vids: &[Value], tags: &[SchemaRef], props: &PropSelection) -> QResult<Vec<Vertex>> {
    let rows = r.storage.get_vertices(r.space, vids, tags, props)?;
    Ok(vids
        .iter()
        .zip(rows)
        .map(|(vid, data)| match data {
            None => Vertex { vid: vid.clone(), tags: Vec::new() },
            Some(d) => make_vertex(
                vid.clone(),
                d.tags
                    .into_iter()
                    .map(|(s, p)| {
                        let mut map = p.to_map();
                        map.retain(|k, _| props.wants(k));
                        (s.name.clone(), map)
                    })
                    .collect(),
            ),
        })
        .collect())
}

/// VID order, with the common cases (integers, strings) compared directly.
fn vid_cmp(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => a.total_cmp(b),
    }
}

/// Sorts edges by stored source, type name, rank and stored destination; with integer VIDs on integer keys.
fn sort_edges(es: &mut Vec<Edge>) {
    let int = |v: &Value| if let Value::Int(i) = v { Some(*i) } else { None };
    let mut names: Vec<&str> = es.iter().map(|e| e.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let keys: Option<Vec<(i64, usize, i64, i64)>> = es
        .iter()
        .map(|e| {
            let (src, dst) = stored(e);
            Some((int(src)?, names.binary_search(&e.name.as_str()).ok()?, e.ranking, int(dst)?))
        })
        .collect();
    match keys {
        Some(keys) => {
            // Small keys sorted, the edges moved once into their places.
            let mut order: Vec<((i64, usize, i64, i64), u32)> = keys.into_iter().zip(0..).collect();
            order.sort_unstable_by_key(|(k, _)| *k);
            let mut slots: Vec<Option<Edge>> = es.drain(..).map(Some).collect();
            es.extend(order.into_iter().filter_map(|(_, i)| slots[i as usize].take()));
        }
        None => es.sort_unstable_by(|a, b| {
            let ((asrc, adst), (bsrc, bdst)) = (stored(a), stored(b));
            vid_cmp(asrc, bsrc)
                .then_with(|| a.name.cmp(&b.name))
                .then(a.ranking.cmp(&b.ranking))
                .then_with(|| vid_cmp(adst, bdst))
        }),
    }
}

/// An edge's ends in its stored direction.
fn stored(e: &Edge) -> (&Value, &Value) {
    if e.edge_type > 0 {
        (&e.src, &e.dst)
    } else {
        (&e.dst, &e.src)
    }
}

/// The stored key of a step walked from `from`.
fn step_key(from: &Value, et: i32, rank: i64, to: &Value) -> EdgeKeyVal {
    let (src, dst) = if et > 0 { (from.clone(), to.clone()) } else { (to.clone(), from.clone()) };
    EdgeKeyVal { src, edge_type: et.abs(), rank, dst }
}

/// An edge's identity in its stored direction: `(source, type, rank, destination)`.
type EdgeId = (Value, i32, i64, Value);

/// The properties `selection` picks of every edge the paths walk, read once per distinct edge (`get_edges` per
/// type); `types` names the schemas of the types walked.
fn path_edge_props(
    r: &Reads<'_>,
    paths: &[FoundPath],
    types: &[(i32, SchemaRef)],
    selection: &PropSelection,
) -> QResult<HashMap<EdgeId, Props>> {
    let mut props_of: HashMap<EdgeId, Props> = HashMap::new();
    if *selection == PropSelection::None {
        return Ok(props_of);
    }
    let mut keys: HashMap<i32, Vec<EdgeKeyVal>> = HashMap::new();
    for p in paths {
        let mut at = &p.src;
        for st in &p.steps {
            let k = step_key(at, st.edge_type, st.rank, &st.dst);
            if let std::collections::hash_map::Entry::Vacant(slot) =
                props_of.entry((k.src.clone(), k.edge_type, k.rank, k.dst.clone()))
            {
                slot.insert(Props::new());
                keys.entry(k.edge_type).or_default().push(k);
            }
            at = &st.dst;
        }
    }
    for (et, keys) in keys {
        let Some((_, schema)) = types.iter().find(|(t, _)| t.abs() == et) else { continue };
        for (k, props) in keys.iter().zip(r.storage.get_edges(r.space, schema, &keys)?) {
            let mut props = props.unwrap_or_default();
            props.retain(|name, _| selection.wants(name));
            props_of.insert((k.src.clone(), k.edge_type, k.rank, k.dst.clone()), props);
        }
    }
    Ok(props_of)
}

pub(super) struct FindPathExecutor;

impl FindPathExecutor {
    pub fn execute(r: &Reads<'_>, f: &BoundFindPath, input: Option<&DataSet>) -> QResult<DataSet> {
        let sources = end_vids(r, &f.from, input)?;
        let targets = end_vids(r, &f.to, input)?;
        let found = if f.limit == Some(0) {
            PathSearchResult::default()
        } else {
            r.storage.find_paths(
                r.space,
                &PathSearchRequest {
                    sources,
                    targets,
                    edge_types: f.edges.clone(),
                    filter: f.filter.clone(),
                    max_steps: f.max_steps,
                    kind: f.kind,
                    limit: f.limit,
                    budget: r.req.budget.clone(),
                },
            )?
        };
        let schema_of = |et: i32| f.edges.iter().find(|(t, _)| t.abs() == et.abs()).map(|(_, s)| s);
        // Vertex values: bare VIDs, or WITH PROP every tag with its properties.
        let mut vertex_of: HashMap<Value, Vertex> = HashMap::new();
        if f.with_prop {
            let mut vids = Vec::new();
            for p in &found.paths {
                for v in std::iter::once(&p.src).chain(p.steps.iter().map(|s| &s.dst)) {
                    if let std::collections::hash_map::Entry::Vacant(slot) = vertex_of.entry(v.clone()) {
                        slot.insert(Vertex { vid: v.clone(), tags: Vec::new() });
                        vids.push(v.clone());
                    }
                }
            }
            for v in vertices(r, &vids, &f.tags, &PropSelection::All)? {
                vertex_of.insert(v.vid.clone(), v);
            }
        }
        // Edge properties: all of them WITH PROP; for ALL and NOLOOP those the WHERE reads (NebulaGraph reads
        // them while expanding); none for shortest paths.
        let edge_props = if f.with_prop {
            PropSelection::All
        } else if matches!(f.kind, PathKind::All | PathKind::NoLoop) && !f.filter_props.is_empty() {
            PropSelection::Only(f.filter_props.clone())
        } else {
            PropSelection::None
        };
        let props_of = path_edge_props(r, &found.paths, &f.edges, &edge_props)?;
        let vertex = |vid: &Value| vertex_of.get(vid).cloned().unwrap_or(Vertex { vid: vid.clone(), tags: Vec::new() });
        let mut rows = Vec::with_capacity(found.paths.len());
        for p in &found.paths {
            let mut at = &p.src;
            let mut steps = Vec::with_capacity(p.steps.len());
            for s in &p.steps {
                let k = step_key(at, s.edge_type, s.rank, &s.dst);
                let props = props_of.get(&(k.src, k.edge_type, k.rank, k.dst)).cloned().unwrap_or_default();
                let name = schema_of(s.edge_type).map(|s| s.name.as_str()).unwrap_or("");
                steps.push(Step {
                    dst: vertex(&s.dst),
                    edge_type: s.edge_type,
                    name: name.into(),
                    ranking: s.rank,
                    props,
                });
                at = &s.dst;
            }
            rows.push(vec![Value::Path(Arc::new(Path { src: vertex(&p.src), steps }))]);
        }
        Ok(DataSet::new(vec![f.column.clone()], rows))
    }
}

/// A vertex as the tag filter of GET SUBGRAPH reads it: `$$.tag.prop` (the WHERE's far end is the vertex about to
/// be expanded).
struct FarEnd<'a> {
    vertex: &'a Vertex,
}

impl EvalContext for FarEnd<'_> {
    fn dst_prop(&self, tag: &str, prop: &str) -> QResult<Value> {
        Ok(self
            .vertex
            .tags
            .iter()
            .find(|t| t.name == tag)
            .and_then(|t| t.props.get(prop).cloned())
            .unwrap_or(Value::Empty))
    }
}

pub(super) struct SubgraphExecutor;

impl SubgraphExecutor {
    pub fn execute(r: &Reads<'_>, g: &BoundSubgraph, input: Option<&DataSet>) -> QResult<DataSet> {
        let starts = end_vids(r, &g.from, input)?;
        let wants = |c: SubgraphColumn| g.columns.iter().any(|(_, k)| *k == c);
        let vertex_props =
            if g.with_prop && wants(SubgraphColumn::Vertices) { PropSelection::All } else { PropSelection::None };
        let columns: Vec<String> = g.columns.iter().map(|(c, _)| c.clone()).collect();
        if g.steps == 0 {
            // The start vertices that exist, in one row.
            let mut found: Vec<Vertex> =
                vertices(r, &starts, &g.tags, &vertex_props)?.into_iter().filter(|v| !v.tags.is_empty()).collect();
            found.sort_by(|a, b| a.vid.total_cmp(&b.vid));
            let found = found.into_iter().map(|v| Value::Vertex(Arc::new(v))).collect();
            return Ok(DataSet::new(columns, vec![vec![Value::List(found)]]));
        }
        // The rounds, in storage; the vertex filter (`$$.tag.prop`) checked here on each vertex about to be expanded.
        let mut expandable = |vids: &[Value]| -> QResult<Vec<bool>> {
            let Some(cond) = &g.tag_filter else { return Ok(vec![true; vids.len()]) };
            vertices(r, vids, &g.tags, &PropSelection::All)?
                .iter()
                .map(|v| eval_condition(cond, &FarEnd { vertex: v }))
                .collect()
        };
        let rounds = r.storage.subgraph(
            r.space,
            &SubgraphRequest {
                starts,
                edge_types: g.edges.clone(),
                bidirect: g.bidirect.clone(),
                filter: g.edge_filter.clone(),
                steps: g.steps,
                budget: r.req.budget.clone(),
            },
            &mut expandable,
        )?;
        // Edge properties: all of them WITH PROP, else those the WHERE reads.
        let edge_props = if g.with_prop && wants(SubgraphColumn::Edges) {
            PropSelection::All
        } else if !g.filter_props.is_empty() {
            PropSelection::Only(g.filter_props.clone())
        } else {
            PropSelection::None
        };
        let props_of = if edge_props == PropSelection::None {
            HashMap::new()
        } else {
            let steps: Vec<FoundPath> = rounds
                .iter()
                .flat_map(|round| &round.edges)
                .map(|e| FoundPath {
                    src: e.from.clone(),
                    steps: vec![FoundStep { edge_type: e.edge_type, rank: e.rank, dst: e.to.clone() }],
                })
                .collect();
            path_edge_props(r, &steps, &g.edges, &edge_props)?
        };
        let mut rows = Vec::new();
        for round in rounds {
            let mut vs = if wants(SubgraphColumn::Vertices) {
                vertices(r, &round.vertices, &g.tags, &vertex_props)?
            } else {
                round.vertices.into_iter().map(|vid| Vertex { vid, tags: Vec::new() }).collect()
            };
            let mut es: Vec<Edge> = round
                .edges
                .into_iter()
                .map(|e| {
                    let props = if props_of.is_empty() {
                        Props::new()
                    } else {
                        let k = step_key(&e.from, e.edge_type, e.rank, &e.to);
                        props_of.get(&(k.src, k.edge_type, k.rank, k.dst)).cloned().unwrap_or_default()
                    };
                    let name = g.edges.iter().find(|(t, _)| *t == e.edge_type).map_or("", |(_, s)| s.name.as_str());
                    Edge { src: e.from, dst: e.to, edge_type: e.edge_type, name: name.into(), ranking: e.rank, props }
                })
                .collect();
            // NebulaGraph lists them in no particular order: sorted here, so results are stable.
            vs.sort_unstable_by(|a, b| vid_cmp(&a.vid, &b.vid));
            sort_edges(&mut es);
            let yields_something = g.columns.iter().any(|(_, k)| match k {
                SubgraphColumn::Vertices => !vs.is_empty(),
                SubgraphColumn::Edges => !es.is_empty(),
            });
            if !yields_something {
                continue;
            }
            let mut vs = Some(Value::List(vs.into_iter().map(|v| Value::Vertex(Arc::new(v))).collect()));
            let mut es = Some(Value::List(es.into_iter().map(|e| Value::Edge(Arc::new(e))).collect()));
            // Each list goes to its column (a column named twice gets a copy).
            rows.push(
                g.columns
                    .iter()
                    .enumerate()
                    .map(|(i, (_, k))| {
                        let last = !g.columns[i + 1..].iter().any(|(_, later)| later == k);
                        let list = if *k == SubgraphColumn::Vertices { &mut vs } else { &mut es };
                        if last {
                            list.take().unwrap_or(Value::List(Vec::new()))
                        } else {
                            list.clone().unwrap_or(Value::List(Vec::new()))
                        }
                    })
                    .collect(),
            );
        }
        Ok(DataSet::new(columns, rows))
    }
}

pub(super) struct ShortestPathExecutor;

impl ShortestPathExecutor {
    /// MATCH's `shortestPath` / `allShortestPaths`: one storage search for every start and end vertex of the input
    /// rows, then each row joined with the paths of its own pair (a pair of one vertex with itself, two aliases
    /// bound to it: the search's shortest cycles through it, as NebulaGraph answers).
    pub fn execute(r: &Reads<'_>, s: &ShortestNode, input: &DataSet) -> QResult<DataSet> {
        let (Some(fc), Some(tc)) = (input.column_index(&s.from), input.column_index(&s.to)) else {
            return Ok(input.empty_like());
        };
        let vid = |v: &Value| match v {
            Value::Vertex(v) => Some(v.vid.clone()),
            _ => None,
        };
        let mut sources = Vec::new();
        let mut targets = Vec::new();
        let (mut seen_s, mut seen_t) = (HashSet::new(), HashSet::new());
        for row in 0..input.len() {
            if let Some(a) = vid(input.value(row, fc)).filter(|a| seen_s.insert(a.clone())) {
                sources.push(a);
            }
            if let Some(b) = vid(input.value(row, tc)).filter(|b| seen_t.insert(b.clone())) {
                targets.push(b);
            }
        }
        let types = s.signed_types();
        // The edge's property map, checked on every edge of the search: `t.k == v` for each type that has every
        // key (another type's edges cannot match it).
        let mut filter = None;
        if !s.edge.props.is_empty() {
            let mut wanted = Vec::new();
            for (k, e) in &s.edge.props {
                wanted.push((k.clone(), eval(e, &NoRow(r.req))?));
            }
            let per_type =
                s.edge.types.iter().filter(|t| wanted.iter().all(|(k, _)| t.latest().prop_index(k).is_some()));
            let alternatives = per_type.map(|t| {
                Expr::and_all(wanted.iter().map(|(k, v)| {
                    Expr::binary(
                        BinaryOp::Eq,
                        Expr::LabelProp { label: t.name.clone(), prop: k.clone() },
                        Expr::Const(v.clone()),
                    )
                }))
                .expect("a property map has an entry")
            });
            filter = Some(
                alternatives.reduce(|a, b| Expr::binary(BinaryOp::Or, a, b)).unwrap_or(Expr::Const(Value::Bool(false))),
            );
        }
        // An edge written without `*` is one step, and its column holds the edge (not a list of one).
        let max_steps = match s.edge.range {
            None => 1,
            Some((_, max)) => max.unwrap_or(u32::MAX),
        };
        let found = r.storage.find_paths(
            r.space,
            &PathSearchRequest {
                sources,
                targets,
                edge_types: types.clone(),
                filter,
                max_steps,
                kind: if s.single { PathKind::SingleShortest } else { PathKind::Shortest },
                limit: None,
                budget: r.req.budget.clone(),
            },
        )?;
        // Every edge of every path with its properties, as a MATCH edge: in its stored direction.
        let schema_of = |et: i32| types.iter().find(|(t, _)| t.abs() == et.abs()).map(|(_, s)| s);
        let props_of = path_edge_props(r, &found.paths, &types, &PropSelection::All)?;
        let mut by_pair: HashMap<(Value, Value), Vec<Value>> = HashMap::new();
        for p in &found.paths {
            let mut at = &p.src;
            let mut edges = Vec::with_capacity(p.steps.len());
            for st in &p.steps {
                let k = step_key(at, st.edge_type, st.rank, &st.dst);
                let name = schema_of(st.edge_type).map(|s| s.name.as_str()).unwrap_or("");
                let props =
                    props_of.get(&(k.src.clone(), k.edge_type, k.rank, k.dst.clone())).cloned().unwrap_or_default();
                edges.push(Value::Edge(Arc::new(Edge {
                    src: k.src,
                    dst: k.dst,
                    edge_type: k.edge_type,
                    name: name.into(),
                    ranking: k.rank,
                    props,
                })));
                at = &st.dst;
            }
            let end = p.steps.last().map_or(&p.src, |st| &st.dst);
            let value = match (s.edge.range, edges.len()) {
                (None, 1) => edges.pop().expect("one edge"),
                _ => Value::List(edges),
            };
            by_pair.entry((p.src.clone(), end.clone())).or_default().push(value);
        }
        let mut columns = input.columns().to_vec();
        columns.push(s.edge.column.clone());
        let mut rows = Vec::new();
        let mut meter = quiver_common::budget::Meter::new(&r.req.budget);
        for row in 0..input.len() {
            let (Some(a), Some(b)) = (vid(input.value(row, fc)), vid(input.value(row, tc))) else { continue };
            for edges in by_pair.get(&(a, b)).into_iter().flatten() {
                meter.tick()?;
                let mut out: Vec<Value> = (0..input.columns().len()).map(|c| input.value(row, c).clone()).collect();
                out.push(edges.clone());
                rows.push(out);
            }
        }
        Ok(DataSet::new(columns, rows))
    }
}
