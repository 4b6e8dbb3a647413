//! GetVerticesExecutor and GetEdgesExecutor: FETCH PROP ON tags or an edge type, from constants or from the rows
//! of the input or a variable.

use super::project::project;
use super::Reads;
use crate::context::{make_vertex, EdgeContext, VertexContext};
use crate::distinct::DistinctRows;
use crate::request::input_rows;
use crate::validator::{BoundFetchEdges, BoundFetchVertices, EdgeKeys, VertexIds};
use crate::DataSet;
use quiver_api::{EdgeKeyVal, PropSelection, Props, SchemaRef, VertexData};
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
        let found = r.storage.get_vertices(space, &ids, &f.schemas, &PropSelection::All)?;
        for data in Self::with_some_tag(r, f, &ids, found)? {
            meter.tick()?;
            let (own, extra): (Vec<_>, Vec<_>) = data.tags.into_iter().partition(|(s, _)| listed_ids.contains(&s.id));
            let vertex = make_vertex(data.vid, own.into_iter().map(|(s, p)| (s.name.clone(), p.to_map())).collect());
            let extra: Vec<(String, Props)> = extra.into_iter().map(|(s, p)| (s.name.clone(), p.to_map())).collect();
            let ctx = VertexContext { params: req.params, vertex: &vertex, extra: &extra };
            project(&f.yield_clause, &ctx, &mut ds, &mut seen)?;
        }
        Ok(ds)
    }
}

impl GetVerticesExecutor {
    /// The vertices that have a row, of those `found` for `ids`: as NebulaGraph's GetTagPropNode, a vertex that has
    /// none of the tags read still has one (of EMPTY values) when it has a live tag of any other kind (so a vertex
    /// whose tags were all deleted, or have expired, has none).
    fn with_some_tag(
        r: &Reads<'_>,
        f: &BoundFetchVertices,
        ids: &[Value],
        found: Vec<Option<VertexData>>,
    ) -> QResult<Vec<VertexData>> {
        let tagless: Vec<usize> =
            (0..ids.len()).filter(|&i| !f.any_tag && found[i].as_ref().is_none_or(|d| d.tags.is_empty())).collect();
        let others: Vec<SchemaRef> =
            f.every_tag.iter().filter(|t| !f.schemas.iter().any(|s| s.id == t.id)).cloned().collect();
        let mut tagged = vec![false; ids.len()];
        if !tagless.is_empty() && !others.is_empty() {
            let vids: Vec<Value> = tagless.iter().map(|&i| ids[i].clone()).collect();
            let other = r.storage.get_vertices(r.space, &vids, &others, &PropSelection::None)?;
            for (&i, data) in tagless.iter().zip(other) {
                tagged[i] = data.is_some_and(|d| !d.tags.is_empty());
            }
        }
        Ok(found
            .into_iter()
            .enumerate()
            .filter_map(|(i, data)| match data {
                Some(d) if f.any_tag || !d.tags.is_empty() || tagged[i] => Some(d),
                None if tagged[i] => Some(VertexData { vid: ids[i].clone(), tags: Vec::new() }),
                _ => None,
            })
            .collect())
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
