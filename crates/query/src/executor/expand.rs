//! ExpandExecutor: a chain of GOs whose rows are only counted (fused by `fuse_count_traversal`), run in storage as
//! one expansion that carries path counts instead of rows.

use super::Reads;
use crate::planner::{CountOutput, ExpandNode, PathCountNode};
use crate::DataSet;
use quiver_api::{EdgeKeyVal, ExpandHop, ExpandRequest, LastEdge, Props, SchemaRef};
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
    let req = ExpandRequest { starts, hops, output: storage_output, paths, budget: r.req.budget.clone() };
    rows(r, output, r.storage.expand(r.space, &req)?)
}

fn count_value(n: u64) -> QResult<Value> {
    i64::try_from(n).map(Value::Int).map_err(|_| QError::execution("count overflows INT64"))
}

/// The rows of a counted expansion: one count, or one row per far end (or per last edge) with its count.
fn rows(reads: &Reads<'_>, output: &CountOutput, r: quiver_api::ExpandResult) -> QResult<DataSet> {
    let count = count_value;
    match output {
        CountOutput::EdgeGroupCount { edge, types, props, node, paths } => {
            edge_rows(reads, types, *props, r.last_edges, [edge.clone(), node.clone(), paths.clone()])
        }
        CountOutput::Count { column } => Ok(DataSet::new(vec![column.clone()], vec![vec![count(r.paths)?]])),
        CountOutput::GroupCount { columns } => {
            let mut rows = Vec::with_capacity(r.ends.len());
            for (vid, n) in r.ends {
                rows.push(
                    columns
                        .iter()
                        .map(|(_, is_count)| if *is_count { count(n) } else { Ok(vid.clone()) })
                        .collect::<QResult<Vec<_>>>()?,
                );
            }
            Ok(DataSet::new(columns.iter().map(|(c, _)| c.clone()).collect(), rows))
        }
    }
}

/// One row per last edge: the edge as a MATCH edge value (stored direction, its type's name, its properties read in
/// one batch per type when `props`), the far end's VID, and the count.
fn edge_rows(
    r: &Reads<'_>,
    types: &[SchemaRef],
    props: bool,
    last: Vec<(LastEdge, u64)>,
    columns: [String; 3],
) -> QResult<DataSet> {
    let keys: Vec<EdgeKeyVal> = last
        .iter()
        .map(|(e, _)| {
            let (src, dst) = if e.edge_type > 0 { (&e.from, &e.to) } else { (&e.to, &e.from) };
            EdgeKeyVal { src: src.clone(), edge_type: e.edge_type.abs(), rank: e.rank, dst: dst.clone() }
        })
        .collect();
    let mut values: Vec<Props> = vec![Props::new(); keys.len()];
    if props {
        for t in types {
            let at: Vec<usize> = (0..keys.len()).filter(|&i| keys[i].edge_type == t.id).collect();
            if at.is_empty() {
                continue;
            }
            let batch: Vec<EdgeKeyVal> = at.iter().map(|&i| keys[i].clone()).collect();
            for (i, p) in at.into_iter().zip(r.storage.get_edges(r.space, t, &batch)?) {
                values[i] = p.unwrap_or_default();
            }
        }
    }
    let mut rows = Vec::with_capacity(keys.len());
    for ((key, props), (e, n)) in keys.into_iter().zip(values).zip(last) {
        r.req.budget.check()?;
        let name = types.iter().find(|t| t.id == key.edge_type).map_or("", |t| t.name.as_str());
        let edge =
            Edge { src: key.src, dst: key.dst, edge_type: key.edge_type, name: name.into(), ranking: key.rank, props };
        rows.push(vec![Value::Edge(Arc::new(edge)), e.to, count_value(n)?]);
    }
    Ok(DataSet::new(columns.to_vec(), rows))
}
