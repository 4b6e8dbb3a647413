//! GO: multi-step traversal with NebulaGraph's semantics.
//!
//! Each step expands the frontier in batched `get_neighbors` calls of up to 4,096 vertices (the deadline checked
//! between them), then reads the source and destination
//! vertex properties the query uses in one batched `get_vertices` call each. `N STEPS` emits the edges of step N
//! only; the frontier between steps is a de-duplicated set of vertices (per root when the statement joins back onto
//! its piped input). `M TO N STEPS` emits the edges of every step from M to N.

use super::Reads;
use crate::context::make_vertex;
use crate::distinct::DistinctRows;
use crate::optimizer::cannot_fail;
use crate::planner::GoNode;
use crate::request::{input_rows, Request, RowSource};
use crate::top::TopRows;
use crate::validator::VertexProps;
use crate::DataSet;
use quiver_api::*;
use quiver_common::budget::Meter;
use quiver_common::eval::{eval, eval_condition, EvalContext};
use quiver_common::expr::{EdgeMeta, Expr, VertexRef};
use quiver_common::fasthash::{FastMap as HashMap, FastSet as HashSet};
use quiver_common::value::Edge;
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::{FromClause, YieldClause};
use std::sync::Arc;

/// Frontier vertices per storage read.
const FRONTIER_BATCH: usize = 4096;

/// One traversed edge with the vertex it was reached from.
struct Step<'a> {
    edge: &'a NeighborEdge,
    schema: &'a SchemaRef,
}

/// TraverseExecutor: runs a GO.
pub(super) struct TraverseExecutor;

impl TraverseExecutor {
    pub fn execute(r: &Reads<'_>, node: &GoNode, input: Option<&DataSet>) -> QResult<DataSet> {
        let (space, req) = (r.space, r.req);
        let bound = &node.go;
        let g = &bound.stmt;
        let yield_clause = bound.yield_clause();
        let edges = &bound.edges;
        let needs = bound.needs(node.storage_filter.as_ref());
        let props =
            node.props.clone().unwrap_or(if needs.edge_props { PropSelection::All } else { PropSelection::None });
        let columns = bound.columns();
        if g.max_steps == 0 {
            return Ok(DataSet::from_columns(columns, Vec::new()));
        }
        let bounds = &bound.step_bounds;
        let min_steps = g.min_steps.max(1);
        let mut sampler = g.bounds.as_ref().filter(|b| b.sample).map(|_| {
            use std::hash::BuildHasher;
            quiver_common::rng::Rng(
                std::collections::hash_map::RandomState::new().hash_one(std::time::Instant::now()) | 1,
            )
        });

        // Start vertices, and for a join, the input rows of each.
        let (starts, source) = match &g.from {
            FromClause::Vids(_) => (bound.starts.clone().expect("the validator evaluated the starts"), None),
            FromClause::Ref(e) => {
                let src = input_rows(e, req, input)?;
                let mut vids = Vec::new();
                for row in 0..src.len() {
                    let v = eval(e, &src.context(req, row))?;
                    // Rows whose start is not a VID of this space start nothing, as in NebulaGraph.
                    if space.vid_type_matches(&v) && space.check_vid_len(&v).is_ok() {
                        vids.push(v);
                    }
                }
                (vids, Some((src, e)))
            }
        };
        // Start vertices are expanded as given, duplicates included, as NebulaGraph does; a join reads the
        // multiplicity from the input rows instead, so it starts from each VID once.
        let mut seen = HashSet::default();
        let mut frontier: Vec<(Value, Value)> =
            starts.into_iter().filter(|v| !needs.input || seen.insert(v.clone())).map(|v| (v.clone(), v)).collect();

        // For a join: the input rows of each start vertex, found once instead of once per edge.
        let mut rows_of: HashMap<Value, Vec<usize>> = HashMap::default();
        if let (Some((src, from_expr)), true) = (&source, needs.input) {
            for i in 0..src.len() {
                rows_of.entry(eval(from_expr, &src.context(req, i))?).or_default().push(i);
            }
        }
        let edge_types: Vec<(i32, SchemaRef)> = edges.clone();
        let mut sink = Sink::new(node, yield_clause, columns);
        // Rows and next-frontier entries are made per edge, many per frontier batch: checked per source vertex, so
        // they outgrow the bound by at most one vertex's edges, which storage returned (and counted) already.
        // Checking per edge cost about 5% of a 3-step GO.
        let mut meter = Meter::new(&req.budget);
        for step in 1..=g.max_steps {
            if frontier.is_empty() {
                break;
            }
            // The step's distinct sources, each with its position in `vids`.
            let mut vid_pos: HashMap<&Value, usize> =
                HashMap::with_capacity_and_hasher(frontier.len(), Default::default());
            let mut vids: Vec<Value> = Vec::new();
            for (_, v) in &frontier {
                vid_pos.entry(v).or_insert_with(|| {
                    vids.push(v.clone());
                    vids.len() - 1
                });
            }
            let last = step == g.max_steps;
            // The frontier is read in batches, with the deadline checked and memory charged between them, so a
            // step over many (or very large) vertices can be cancelled part-way.
            let mut neighbors: Vec<NeighborEdge> = Vec::new();
            for chunk in vids.chunks(FRONTIER_BATCH) {
                req.budget.check()?;
                let limit = if last { node.limit.map(|l| l.saturating_sub(neighbors.len())) } else { None };
                if limit == Some(0) {
                    break;
                }
                let part = r
                    .storage
                    .get_neighbors(
                        space,
                        &NeighborsRequest {
                            vids: chunk.to_vec(),
                            edge_types: edge_types.clone(),
                            props: props.clone(),
                            filter: if last { node.storage_filter.clone() } else { None },
                            limit,
                            budget: req.budget.clone(),
                        },
                    )
                    .map_err(QError::at_runtime)?;
                neighbors.extend(part);
            }
            // `LIMIT [..]` keeps a step's first edges; `SAMPLE [..]` a uniform sample of them (in their order).
            if let Some(&b) = bounds.get(step as usize - 1) {
                match &mut sampler {
                    Some(rng) => sample_in_order(&mut neighbors, b, rng),
                    None => neighbors.truncate(b),
                }
            }
            // The edges of each source, as ranges of `neighbors` (storage returns a source's edges together, so
            // this hashes once per source, not once per edge).
            let mut runs: Vec<Vec<std::ops::Range<usize>>> = vec![Vec::new(); vids.len()];
            let mut start = 0;
            for i in 1..=neighbors.len() {
                if i == neighbors.len() || neighbors[i].from != neighbors[start].from {
                    if let Some(&p) = vid_pos.get(&neighbors[start].from) {
                        runs[p].push(start..i);
                    }
                    start = i;
                }
            }
            let edges_of = |pos: usize| runs[pos].iter().flat_map(|r| r.clone());
            let schema_of = |et: i32| &edge_types.iter().find(|(t, _)| *t == et).expect("requested type").1;

            if step >= min_steps {
                // Vertex properties, read once per distinct vertex, found by position.
                let src_vertices = Self::vertices(r, space, &vids, &needs.src_tags, &needs.src_props)?;
                let (dst_of, dst_vertices) = if needs.dst_tags.is_empty() {
                    (Vec::new(), Vec::new())
                } else {
                    let mut dst_pos: HashMap<&Value, usize> =
                        HashMap::with_capacity_and_hasher(neighbors.len(), Default::default());
                    let mut dsts: Vec<Value> = Vec::new();
                    let dst_of: Vec<usize> = neighbors
                        .iter()
                        .map(|e| {
                            *dst_pos.entry(&e.to).or_insert_with(|| {
                                dsts.push(e.to.clone());
                                dsts.len() - 1
                            })
                        })
                        .collect();
                    (dst_of, Self::vertices(r, space, &dsts, &needs.dst_tags, &needs.dst_props)?)
                };
                for (root, vid) in &frontier {
                    meter.tick()?;
                    let pos = vid_pos[vid];
                    let src = Side { tags: &src_vertices, pos };
                    for i in edges_of(pos) {
                        let e = &neighbors[i];
                        let step_row = Step { edge: e, schema: schema_of(e.edge_type) };
                        let ctx = GoContext {
                            req,
                            step: &step_row,
                            src,
                            // Without `$$` properties there are no columns, and no position is read.
                            dst: Side { tags: &dst_vertices, pos: dst_of.get(i).copied().unwrap_or(0) },
                            input: None,
                        };
                        match (&source, needs.input) {
                            (Some((src, _)), true) => {
                                for &r in rows_of.get(root).map(Vec::as_slice).unwrap_or(&[]) {
                                    meter.tick()?;
                                    let ctx = GoContext { input: Some((src, r)), ..ctx };
                                    emit(&ctx, g.filter.as_ref(), yield_clause, &mut sink)?;
                                }
                            }
                            _ => emit(&ctx, g.filter.as_ref(), yield_clause, &mut sink)?,
                        }
                    }
                }
            }
            if step == g.max_steps {
                break;
            }
            // The next frontier: far ends, de-duplicated per root for a GO from a pipe or a variable (NebulaGraph
            // walks from each input VID apart: its GO.feature's `GO 1 STEPS ... | GO 2 STEPS FROM $-.id`), and
            // globally for constant starts.
            let per_root = source.is_some();
            let mut next_seen = HashSet::default();
            let mut next = Vec::new();
            for (root, vid) in &frontier {
                meter.tick()?;
                for i in edges_of(vid_pos[vid]) {
                    let to = &neighbors[i].to;
                    let key = if per_root { (root.clone(), to.clone()) } else { (Value::Empty, to.clone()) };
                    if next_seen.insert(key) {
                        next.push((root.clone(), to.clone()));
                    }
                }
            }
            frontier = next;
        }
        Ok(sink.finish())
    }

    /// The vertices of `vids` with the given tags, in the order of `vids` (`None`: no such vertex); nothing is
    /// read when no tag is needed.
    fn vertices(
        r: &Reads<'_>,
        space: &SpaceDesc,
        vids: &[Value],
        tags: &[SchemaRef],
        props: &VertexProps,
    ) -> QResult<Vec<TagColumns>> {
        if tags.is_empty() {
            return Ok(Vec::new());
        }
        r.storage.get_tag_columns(space, vids, tags, &props.selection())
    }
}

/// Keeps `k` of `items`, each `k`-subset equally likely, in their order (Knuth's selection sampling).
fn sample_in_order<T>(items: &mut Vec<T>, k: usize, rng: &mut quiver_common::rng::Rng) {
    let n = items.len();
    if k >= n {
        return;
    }
    let (mut seen, mut needed) = (0usize, k);
    items.retain(|_| {
        let keep = rng.below((n - seen) as u64) < needed as u64;
        seen += 1;
        needed -= keep as usize;
        keep
    });
}

/// Where a GO's rows go.
enum Sink {
    /// Every row (each once, with DISTINCT).
    All { out: DataSet, distinct: Option<DistinctRows> },
    /// Only the first rows by some columns (`push_topn_into_go`).
    Top {
        top: TopRows<Vec<Value>>,
        /// The sort columns, in key order.
        keys: Vec<usize>,
        /// Whether the other columns cannot fail, so a row that cannot enter needs only its sort columns.
        lazy: bool,
        /// With DISTINCT: the rows kept.
        kept: Option<HashSet<Vec<Value>>>,
        columns: Vec<String>,
    },
}

impl Sink {
    fn new(node: &GoNode, y: &YieldClause, columns: Vec<String>) -> Sink {
        match &node.top {
            None => Sink::All {
                out: DataSet::from_columns(columns, Vec::new()),
                distinct: y.distinct.then(DistinctRows::default),
            },
            Some(t) => Sink::Top {
                top: TopRows::new(t.keys.iter().map(|&(_, asc)| asc).collect(), t.keep),
                keys: t.keys.iter().map(|&(i, _)| i).collect(),
                lazy: y
                    .columns
                    .iter()
                    .enumerate()
                    .all(|(i, c)| t.keys.iter().any(|&(k, _)| k == i) || cannot_fail(&c.expr, None)),
                kept: y.distinct.then(HashSet::default),
                columns,
            },
        }
    }

    fn finish(self) -> DataSet {
        match self {
            Sink::All { out, .. } => out,
            Sink::Top { top, columns, .. } => DataSet::new(columns, top.into_sorted()),
        }
    }
}

fn emit(ctx: &GoContext<'_>, filter: Option<&Expr>, y: &YieldClause, sink: &mut Sink) -> QResult<()> {
    if let Some(f) = filter {
        if !eval_condition(f, ctx).map_err(QError::at_runtime)? {
            return Ok(());
        }
    }
    let column = |i: usize| eval(&y.columns[i].expr, ctx).map_err(QError::at_runtime);
    match sink {
        Sink::All { out, distinct } => {
            out.push_row_with(column)?;
            if let Some(d) = distinct {
                d.admit_last(out);
            }
        }
        Sink::Top { top, keys, lazy, kept, .. } => {
            let mut key_values = Vec::with_capacity(keys.len());
            for &i in keys.iter() {
                match column(i) {
                    Ok(v) => key_values.push(v),
                    // The error a row reports is its first failing column's, as without the rule.
                    Err(e) => return Err((0..i).find_map(|c| column(c).err()).unwrap_or(e)),
                }
            }
            let enters = top.admits(&key_values);
            if !enters && *lazy {
                return Ok(());
            }
            let row = (0..y.columns.len())
                .map(|i| match keys.iter().position(|&k| k == i) {
                    Some(k) => Ok(key_values[k].clone()),
                    None => column(i),
                })
                .collect::<QResult<Vec<_>>>()?;
            if !enters {
                return Ok(());
            }
            if let Some(kept) = kept {
                // A row equal to a kept one came later: the first stays (see `push_topn_into_go`).
                if kept.contains(&row) {
                    return Ok(());
                }
                kept.insert(row.clone());
                if let Some(out) = top.push(key_values, row) {
                    kept.remove(&out);
                }
            } else {
                top.push(key_values, row);
            }
        }
    }
    Ok(())
}

/// The evaluation context of one traversed edge.
#[derive(Clone, Copy)]
struct GoContext<'a> {
    req: &'a Request<'a>,
    step: &'a Step<'a>,
    src: Side<'a>,
    dst: Side<'a>,
    /// For a join: the input and the position of the row joined.
    input: Option<(&'a RowSource<'a>, usize)>,
}

/// A source or destination vertex: its position in the step's vertex property columns (none when the statement
/// reads no property of that side).
#[derive(Clone, Copy)]
struct Side<'a> {
    tags: &'a [TagColumns],
    pos: usize,
}

impl GoContext<'_> {
    fn vertex_prop(v: Side<'_>, tag: &str, prop: &str) -> Value {
        v.tags.iter().find(|t| t.schema.name == tag).map_or(Value::Empty, |t| t.value(v.pos, prop))
    }

    fn edge_value(&self) -> Edge {
        let e = self.step.edge;
        Edge {
            src: e.from.clone(),
            dst: e.to.clone(),
            edge_type: e.edge_type,
            name: self.step.schema.name.as_str().into(),
            ranking: e.rank,
            props: e.props.as_ref().map(PropRow::to_map).unwrap_or_default(),
        }
    }
}

impl EvalContext for GoContext<'_> {
    fn param(&self, name: &str) -> QResult<Value> {
        self.req.param_context().param(name)
    }

    fn label_prop(&self, label: &str, prop: &str) -> QResult<Value> {
        if label != self.step.schema.name {
            return Ok(Value::Empty);
        }
        Ok(self.step.edge.props.as_ref().and_then(|p| p.get(prop)).cloned().unwrap_or(Value::Empty))
    }

    fn edge_meta(&self, edge: &str, meta: EdgeMeta) -> QResult<Value> {
        if edge != self.step.schema.name {
            return Ok(Value::Empty);
        }
        let e = self.step.edge;
        Ok(match meta {
            EdgeMeta::Src => e.from.clone(),
            EdgeMeta::Dst => e.to.clone(),
            EdgeMeta::Rank => Value::Int(e.rank),
            EdgeMeta::Type => Value::Int(e.edge_type as i64),
        })
    }

    fn src_prop(&self, tag: &str, prop: &str) -> QResult<Value> {
        Ok(GoContext::vertex_prop(self.src, tag, prop))
    }

    fn dst_prop(&self, tag: &str, prop: &str) -> QResult<Value> {
        Ok(GoContext::vertex_prop(self.dst, tag, prop))
    }

    fn input_prop(&self, col: &str) -> QResult<Value> {
        match self.input {
            Some((src, row)) => src.context(self.req, row).input_prop(col),
            None => Err(QError::semantic(format!("`$-.{col}', not exist prop `{col}'"))),
        }
    }

    fn var_prop(&self, var: &str, col: &str) -> QResult<Value> {
        match self.input {
            Some((src, row)) => src.context(self.req, row).var_prop(var, col),
            None => Err(QError::semantic(format!("`${var}.{col}', not exist variable `{var}'"))),
        }
    }

    fn vertex(&self, which: VertexRef) -> QResult<Value> {
        let (v, id) = match which {
            VertexRef::Src => (self.src, &self.step.edge.from),
            VertexRef::Dst => (self.dst, &self.step.edge.to),
            VertexRef::Current => return Err(QError::semantic("`VERTEX' is not support in go sentence.")),
        };
        let present = v.tags.iter().filter(|t| t.present[v.pos]);
        let tags = present
            .map(|t| {
                (
                    t.schema.name.clone(),
                    t.names.iter().cloned().zip(t.columns.iter().map(|c| c[v.pos].clone())).collect(),
                )
            })
            .collect();
        Ok(Value::Vertex(Arc::new(make_vertex(id.clone(), tags))))
    }

    fn edge(&self) -> QResult<Value> {
        Ok(Value::Edge(Arc::new(self.edge_value())))
    }
}
