//! ExpandExecutor: a chain of GOs whose rows are only counted (fused by `fuse_count_traversal`), run in storage as
//! one expansion that carries path counts instead of rows.

use super::Reads;
use crate::planner::{CountOutput, ExpandNode, PathCountNode};
use crate::DataSet;
use quiver_api::{ExpandHop, ExpandRequest};
use quiver_common::{QError, QResult, Value};

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
    };
    let req = ExpandRequest { starts, hops, output: storage_output, paths, budget: r.req.budget.clone() };
    rows(output, r.storage.expand(r.space, &req)?)
}

/// The rows of a counted expansion: one count, or one row per far end with its count.
fn rows(output: &CountOutput, r: quiver_api::ExpandResult) -> QResult<DataSet> {
    let count = |n: u64| i64::try_from(n).map(Value::Int).map_err(|_| QError::execution("count overflows INT64"));
    match output {
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
