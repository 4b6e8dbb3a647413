//! GetVerticesExecutor and GetEdgesExecutor: FETCH PROP ON tags or an edge type, from constants or from the rows
//! of the input or a variable.

use super::project::project;
use super::Reads;
use crate::context::{make_vertex, EdgeContext, VertexContext};
use crate::distinct::DistinctRows;
use crate::request::input_rows;
use crate::validator::{BoundFetchEdges, BoundFetchVertices, EdgeKeys, VertexIds};
use crate::DataSet;
use quiver_api::{EdgeKeyVal, PropSelection, Props};
use quiver_common::budget::Meter;
use quiver_common::eval::eval;
use quiver_common::expr::Expr;
use quiver_common::{QResult, Value};

pub(super) struct GetVerticesExecutor;

impl GetVerticesExecutor {
    pub fn execute(r: &Reads<'_>, f: &BoundFetchVertices, input: Option<&DataSet>) -> QResult<DataSet> {
        let (space, req) = (r.space, r.req);
        // A vertex listed (or reached by input rows) twice is fetched twice, as in NebulaGraph, where only YIELD
        // DISTINCT removes repeats. Rows whose value is no VID of this space fetch nothing, as GO starts nothing
        // from them.
        let ids: Vec<Value> = match &f.ids {
            VertexIds::Constants(vids) => vids.clone(),
            VertexIds::Rows(e) => {
                let src = input_rows(e, req, input)?;
                let mut meter = Meter::new(&req.budget);
                let mut ids = Vec::with_capacity(src.len());
                for row in 0..src.len() {
                    meter.tick()?;
                    let v = eval(e, &src.context(req, row))?;
                    if space.vid_type_matches(&v) && space.check_vid_len(&v).is_ok() {
                        ids.push(v);
                    }
                }
                ids
            }
        };
        let listed_ids: Vec<i32> = f.schemas[..f.listed].iter().map(|s| s.id).collect();
        let mut ds = DataSet::new(f.yield_clause.columns.iter().map(|c| c.name()).collect(), Vec::new());
        let mut seen = DistinctRows::default();
        let mut meter = Meter::new(&req.budget);
        for data in r.storage.get_vertices(space, &ids, &f.schemas, &PropSelection::All)?.into_iter().flatten() {
            meter.tick()?;
            let (own, extra): (Vec<_>, Vec<_>) = data.tags.into_iter().partition(|(s, _)| listed_ids.contains(&s.id));
            if !f.any_tag && own.is_empty() {
                continue;
            }
            let vertex = make_vertex(data.vid, own.into_iter().map(|(s, p)| (s.name.clone(), p.to_map())).collect());
            let extra: Vec<(String, Props)> = extra.into_iter().map(|(s, p)| (s.name.clone(), p.to_map())).collect();
            let ctx = VertexContext { params: req.params, vertex: &vertex, extra: &extra };
            project(&f.yield_clause, &ctx, &mut ds, &mut seen)?;
        }
        Ok(ds)
    }
}

pub(super) struct GetEdgesExecutor;

impl GetEdgesExecutor {
    pub fn execute(r: &Reads<'_>, f: &BoundFetchEdges, input: Option<&DataSet>) -> QResult<DataSet> {
        let (space, req) = (r.space, r.req);
        let rows;
        let keys: &[EdgeKeyVal] = match &f.keys {
            EdgeKeys::Constants(keys) => keys,
            EdgeKeys::Rows(key) => {
                rows = Self::keys_of_rows(r, f, key, input)?;
                &rows
            }
        };
        let schema = &f.schema;
        let mut ds = DataSet::new(f.yield_clause.columns.iter().map(|c| c.name()).collect(), Vec::new());
        let mut seen = DistinctRows::default();
        let mut meter = Meter::new(&req.budget);
        for (key, props) in keys.iter().zip(r.storage.get_edges(space, schema, keys)?) {
            meter.tick()?;
            let Some(props) = props else { continue };
            let e = super::edge_of(key, schema, props);
            project(&f.yield_clause, &EdgeContext { params: req.params, edge: &e }, &mut ds, &mut seen)?;
        }
        Ok(ds)
    }

    /// One key per input row, repeats kept as NebulaGraph keeps them (only YIELD DISTINCT removes them); rows whose
    /// values are no VIDs of the space, or whose rank is not an integer, fetch nothing.
    fn keys_of_rows(
        r: &Reads<'_>,
        f: &BoundFetchEdges,
        key: &quiver_syntax::ast::EdgeKey,
        input: Option<&DataSet>,
    ) -> QResult<Vec<EdgeKeyVal>> {
        let (space, req) = (r.space, r.req);
        let is_vid = |v: &Value| space.vid_type_matches(v) && space.check_vid_len(v).is_ok();
        // The reference that names the input: every other one must read the same input.
        let mut reference = None;
        for e in [Some(&key.src), Some(&key.dst), key.rank.as_ref()].into_iter().flatten() {
            e.visit(&mut |x| {
                if reference.is_none() && matches!(x, Expr::InputProp(_) | Expr::VarProp { .. }) {
                    reference = Some(x.clone());
                }
            });
        }
        let src = input_rows(reference.as_ref().expect("the key reads its input"), req, input)?;
        let mut out = Vec::new();
        let mut meter = Meter::new(&req.budget);
        for row in 0..src.len() {
            meter.tick()?;
            let ctx = src.context(req, row);
            let s = eval(&key.src, &ctx)?;
            let d = eval(&key.dst, &ctx)?;
            let rank = match &key.rank {
                None => Value::Int(0),
                Some(r) => eval(r, &ctx)?,
            };
            let Value::Int(rank) = rank else { continue };
            if !(is_vid(&s) && is_vid(&d)) {
                continue;
            }
            out.push(EdgeKeyVal { src: s, edge_type: f.schema.id, rank, dst: d });
        }
        Ok(out)
    }
}
