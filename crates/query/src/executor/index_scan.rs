//! IndexScanExecutor: a LOOKUP's index ranges read, then, where the validator found that the entries do not
//! answer the YIELD and the WHERE exactly (or rows can expire), the rows read and the WHERE checked again.

use super::project::{project, yield_columns};
use super::Reads;
use crate::context::{make_vertex, EdgeContext, VertexContext};
use crate::validator::LookupPlan;
use crate::DataSet;
use quiver_api::*;
use quiver_common::eval::eval_condition;
use quiver_common::{QResult, Value};

pub(super) struct IndexScanExecutor;

impl IndexScanExecutor {
    pub fn execute(r: &Reads<'_>, plan: &LookupPlan) -> QResult<DataSet> {
        let (space, params, budget) = (r.space, r.req.params, &r.req.budget);
        let hits = r.storage.scan_index(space, &plan.scans, budget)?;
        let y = &plan.yield_clause;
        let mut ds = DataSet::new(yield_columns(y), Vec::new());
        let mut seen = crate::distinct::DistinctRows::default();
        let schema = &plan.schema;
        let keep = |ctx: &dyn quiver_common::eval::EvalContext| -> QResult<bool> {
            match (&plan.filter, plan.fetch) {
                (Some(f), true) => eval_condition(f, ctx),
                _ => Ok(true),
            }
        };
        match schema.kind {
            SchemaKind::Tag => {
                let vids: Vec<Value> =
                    hits.into_iter().filter_map(|h| if let IndexHit::Vertex(v) = h { Some(v) } else { None }).collect();
                for chunk in vids.chunks(1024) {
                    budget.check()?;
                    let rows: Vec<Option<VertexData>> = if plan.fetch {
                        r.storage.get_vertices(space, chunk, std::slice::from_ref(schema), &PropSelection::All)?
                    } else {
                        chunk.iter().map(|v| Some(VertexData { vid: v.clone(), tags: Vec::new() })).collect()
                    };
                    for data in rows.into_iter().flatten() {
                        if plan.fetch && data.tags.is_empty() {
                            // An entry whose row is gone (expired, or removed since the scan).
                            continue;
                        }
                        let vertex = make_vertex(
                            data.vid,
                            data.tags.into_iter().map(|(s, p)| (s.name.clone(), p.to_map())).collect(),
                        );
                        let ctx = VertexContext { params, vertex: &vertex, extra: &[] };
                        if keep(&ctx)? {
                            project(y, &ctx, &mut ds, &mut seen)?;
                        }
                    }
                }
            }
            SchemaKind::Edge => {
                let keys: Vec<EdgeKeyVal> = hits
                    .into_iter()
                    .filter_map(|h| {
                        if let IndexHit::Edge(src, rank, dst) = h {
                            Some(EdgeKeyVal { src, edge_type: schema.id, rank, dst })
                        } else {
                            None
                        }
                    })
                    .collect();
                for chunk in keys.chunks(1024) {
                    budget.check()?;
                    let rows: Vec<Option<Props>> = if plan.fetch {
                        r.storage.get_edges(space, schema, chunk)?
                    } else {
                        chunk.iter().map(|_| Some(Props::new())).collect()
                    };
                    for (key, props) in chunk.iter().zip(rows) {
                        let Some(props) = props else { continue };
                        let e = super::edge_of(key, schema, props);
                        let ctx = EdgeContext { params, edge: &e };
                        if keep(&ctx)? {
                            project(y, &ctx, &mut ds, &mut seen)?;
                        }
                    }
                }
            }
        }
        Ok(ds)
    }
}
