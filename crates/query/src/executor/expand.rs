//! ExpandExecutor: a chain of GOs whose rows are only counted (fused by `fuse_count_traversal`), run in storage as
//! one expansion that carries path counts instead of rows.

use super::Reads;
use crate::planner::{CountOutput, ExpandNode, PathCountNode};
use crate::DataSet;
use quiver_api::{ExpandHop, ExpandRequest, LastEdge, LastEdgeProps, PropRow, PropSelection, SchemaRef};
use quiver_common::value::Edge;
use quiver_common::{QError, QResult, Value};
use std::sync::Arc;

pub(super) struct ExpandExecutor;

impl ExpandExecutor {
    /// A fused GO chain: one storage expansion with a hop per step of each GO.
    pub fn execute(r: &Reads<'_>, e: &ExpandNode) -> QResult<DataSet> {
        let first = e.gos.first().expect("a chain has a GO");
        let starts = first.starts.clone().expect("the rule fuses chains that start from constants");
        let mut hops = Vec::new();
        // Every GO of the chain was validated as an unfused one is, so fusing never turns an error into a count.
        for g in &e.gos {
            let edge_types: Vec<i32> = g.edges.iter().map(|(t, _)| *t).collect();
            hops.push(ExpandHop { edge_types: edge_types.clone(), distinct: false, times: 1 });
            if g.stmt.max_steps > 1 {
                hops.push(ExpandHop { edge_types, distinct: true, times: g.stmt.max_steps - 1 });
            }
        }
        count(r, starts, hops, false, &e.output)
    }

    /// A fused MATCH path: its paths from the start vertices of every input row, counted in storage.
    pub fn count_paths(r: &Reads<'_>, p: &PathCountNode, input: Option<&DataSet>) -> QResult<DataSet> {
        let starts: Vec<Value> = match input.and_then(|i| i.column_index(&p.start).map(|c| i.column(c))) {
            Some(column) => column
                .iter()
                .filter_map(|v| match v {
                    Value::Vertex(v) => Some(v.vid.clone()),
                    _ => None,
                })
                .collect(),
            None => Vec::new(),
        };
        let hops = p.hops.iter().map(|t| ExpandHop { edge_types: t.clone(), distinct: false, times: 1 }).collect();
        count(r, starts, hops, true, &p.output)
    }
}

/// One storage expansion (of walks, or with `paths` of MATCH's paths), as the rows `output` asks for.
fn count(
    r: &Reads<'_>,
    starts: Vec<Value>,
    hops: Vec<ExpandHop>,
    paths: bool,
    output: &CountOutput,
) -> QResult<DataSet> {
    let storage_output = match output {
        CountOutput::Count { .. } => quiver_api::ExpandOutput::Count,
        CountOutput::GroupCount { .. } => quiver_api::ExpandOutput::Ends,
        CountOutput::EdgeGroupCount { .. } => quiver_api::ExpandOutput::LastEdges,
    };
    // Asked only where the rows read some property of the last edges.
    let last_edge_props = match output {
        CountOutput::EdgeGroupCount { edge, types, props, columns, .. } => {
            Some(last_edge_selection(edge.as_deref().map(|e| (e, *props)), columns))
                .filter(|p| *p != PropSelection::None)
                .map(|props| LastEdgeProps { types: types.clone(), props })
        }
        _ => None,
    };
    let req =
        ExpandRequest { starts, hops, output: storage_output, paths, last_edge_props, budget: r.req.budget.clone() };
    rows(r, output, r.storage.expand(r.space, &req)?)
}

/// A path count as an INT64 value.
fn count_value(n: u64) -> QResult<Value> {
    i64::try_from(n).map(Value::Int).map_err(|_| QError::execution("count overflows INT64"))
}

/// The rows of a counted expansion: one count, or one row per far end (or per last edge) with its count.
fn rows(reads: &Reads<'_>, output: &CountOutput, r: quiver_api::ExpandResult) -> QResult<DataSet> {
    match output {
        CountOutput::EdgeGroupCount { edge, types, props, columns, node, paths } => {
            edge_rows(reads, types, edge.as_deref().map(|e| (e, *props)), columns, r.last_edges, node, paths)
        }
        CountOutput::Count { column } => Ok(DataSet::new(vec![column.clone()], vec![vec![count_value(r.paths)?]])),
        CountOutput::GroupCount { columns } => {
            let mut rows = Vec::with_capacity(r.ends.len());
            for (vid, n) in r.ends {
                rows.push(
                    columns
                        .iter()
                        .map(|(_, is_count)| if *is_count { count_value(n) } else { Ok(vid.clone()) })
                        .collect::<QResult<Vec<_>>>()?,
                );
            }
            Ok(DataSet::new(columns.iter().map(|(c, _)| c.clone()).collect(), rows))
        }
    }
}

/// A name list storage shared among rows, and where each requested column's property is in it.
type Positions = (Arc<[String]>, Vec<Option<usize>>);

/// The properties a [`CountOutput::EdgeGroupCount`] reads of its last edges: all of them for an edge value that
/// carries its properties, none for one without, else the columns'.
fn last_edge_selection(edge: Option<(&str, bool)>, columns: &[(String, String)]) -> PropSelection {
    match edge {
        Some((_, true)) => PropSelection::All,
        Some((_, false)) => PropSelection::None,
        None => PropSelection::Only(columns.iter().map(|(p, _)| p.clone()).collect()),
    }
}

/// One row per last edge: the edge as a MATCH edge value in `edge`'s column (stored direction, its type's name, and
/// with `props` its properties) or its properties in `columns`, the far end's VID, and the count. Storage read the
/// properties with the edges (from the edge property cache when it is hot); the rows are built column by column.
fn edge_rows(
    r: &Reads<'_>,
    types: &[(i32, SchemaRef)],
    edge: Option<(&str, bool)>,
    columns: &[(String, String)],
    last: Vec<(LastEdge, u64)>,
    node: &str,
    paths: &str,
) -> QResult<DataSet> {
    let mut names: Vec<String> = edge.map(|(e, _)| e.to_string()).into_iter().collect();
    names.extend(columns.iter().map(|(_, c)| c.clone()));
    names.extend([node.to_string(), paths.to_string()]);
    let mut data: Vec<Vec<Value>> = names.iter().map(|_| Vec::with_capacity(last.len())).collect();
    // Where each column's property sits in the rows storage returned (they share one name list per type).
    let mut positions: Vec<Positions> = Vec::new();
    for (i, (e, n)) in last.into_iter().enumerate() {
        if i % 4096 == 0 {
            r.req.budget.check()?;
        }
        let mut c = 0;
        if edge.is_some() {
            let stored = e.edge_type.abs();
            let name = types.iter().find(|(_, t)| t.id == stored).map_or("", |(_, t)| t.name.as_str());
            let (src, dst) = if e.edge_type > 0 { (e.from, e.to.clone()) } else { (e.to.clone(), e.from) };
            let props = e.props.as_ref().map(PropRow::to_map).unwrap_or_default();
            let edge = Edge { src, dst, edge_type: stored, name: name.into(), ranking: e.rank, props };
            data[c].push(Value::Edge(Arc::new(edge)));
            c += 1;
        }
        if !columns.is_empty() {
            let at = e.props.as_ref().map(|row| {
                // Rows read in this process share their type's name list; rows decoded from a storage host's
                // reply each have their own copy of it, compared by content (a few names, a few lists).
                let same = |names: &Arc<[String]>| Arc::ptr_eq(names, &row.names) || **names == *row.names;
                match positions.iter().position(|(names, _)| same(names)) {
                    Some(k) => k,
                    None => {
                        let at = columns.iter().map(|(p, _)| row.names.iter().position(|n| n == p)).collect();
                        positions.push((row.names.clone(), at));
                        positions.len() - 1
                    }
                }
            });
            for k in 0..columns.len() {
                let v = match (&e.props, at) {
                    (Some(row), Some(at)) => positions[at].1[k].map_or(Value::NULL, |p| row.values[p].clone()),
                    _ => Value::NULL,
                };
                data[c + k].push(v);
            }
            c += columns.len();
        }
        data[c].push(e.to);
        data[c + 1].push(count_value(n)?);
    }
    Ok(DataSet::from_columns(names, data))
}
