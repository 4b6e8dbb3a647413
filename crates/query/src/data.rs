//! INSERT, UPDATE/UPSERT, DELETE, FETCH and standalone YIELD.

use crate::context::{make_vertex, EdgeContext, ParamContext, UpdateContext, VertexContext};
use crate::{DataSet, Params, QueryEngine};
use quiver_api::*;
use quiver_common::eval::{eval, eval_condition, EvalContext};
use quiver_common::expr::Expr;
use quiver_common::value::Edge;
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::{EdgeKey, Statement, UpdateTarget, YieldClause};
use std::collections::HashSet;

fn eval_vid(space: &SpaceDesc, e: &Expr, params: &Params) -> QResult<Value> {
    let v = eval(e, &ParamContext { params })?;
    space.check_vid(&v)?;
    Ok(v)
}

fn eval_edge_key(space: &SpaceDesc, k: &EdgeKey, edge_type: i32, params: &Params) -> QResult<EdgeKeyVal> {
    let src = eval_vid(space, &k.src, params)?;
    let dst = eval_vid(space, &k.dst, params)?;
    let rank = match &k.rank {
        None => 0,
        Some(e) => match eval(e, &ParamContext { params })? {
            Value::Int(r) => r,
            other => return Err(QError::semantic(format!("Invalid rank `{other}', expected an integer"))),
        },
    };
    Ok(EdgeKeyVal { src, edge_type, rank, dst })
}

/// The value of a property that an INSERT or UPSERT does not set: its default, else NULL if it may be NULL.
fn default_value(p: &PropDef, params: &Params) -> QResult<Value> {
    match &p.default {
        Some((_, e)) => coerce(p, eval(e, &ParamContext { params })?),
        None if p.nullable => Ok(Value::NULL),
        None => Err(QError::execution("Storage Error: The not null field doesn't have a default value.")),
    }
}

/// Builds a full row (latest schema order) from named values.
fn build_row(schema: &SchemaDesc, names: &[String], values: &[Value], params: &Params) -> QResult<Vec<Value>> {
    let latest = schema.latest();
    let mut row = Vec::with_capacity(latest.props.len());
    for p in &latest.props {
        let v = match names.iter().position(|n| *n == p.name) {
            Some(i) => coerce(p, values[i].clone())?,
            None => default_value(p, params)?,
        };
        row.push(v);
    }
    Ok(row)
}

fn check_prop_names(schema: &SchemaDesc, names: &[String]) -> QResult<()> {
    for (i, n) in names.iter().enumerate() {
        if schema.latest().prop_index(n).is_none() {
            return Err(QError::semantic(format!("Unknown column `{n}' in schema")));
        }
        if names[..i].contains(n) {
            return Err(QError::semantic(format!("Duplicate column name `{n}'")));
        }
    }
    Ok(())
}

fn yield_columns(y: &YieldClause) -> Vec<String> {
    y.columns.iter().map(|c| c.name()).collect()
}

fn check_no_aggregate(y: &YieldClause) -> QResult<()> {
    for c in &y.columns {
        if c.expr.has_aggregate() {
            return Err(QError::not_supported(format!("Aggregate function in `{}' without an input", c.expr)));
        }
    }
    Ok(())
}

fn project(y: &YieldClause, ctx: &dyn EvalContext, ds: &mut DataSet, seen: &mut HashSet<Vec<Value>>) -> QResult<()> {
    let row = y.columns.iter().map(|c| eval(&c.expr, ctx)).collect::<QResult<Vec<_>>>()?;
    if !y.distinct || seen.insert(row.clone()) {
        ds.rows.push(row);
    }
    Ok(())
}

pub fn yield_standalone(y: &YieldClause, filter: Option<&Expr>, params: &Params) -> QResult<DataSet> {
    check_no_aggregate(y)?;
    let ctx = ParamContext { params };
    let mut ds = DataSet { columns: yield_columns(y), rows: vec![] };
    if let Some(f) = filter {
        if !eval_condition(f, &ctx)? {
            return Ok(ds);
        }
    }
    project(y, &ctx, &mut ds, &mut HashSet::new())?;
    Ok(ds)
}

/// Checks that every `label.prop` in the YIELD names one of `labels` and a property it has.
fn check_label_props(y: &YieldClause, schemas: &[SchemaRef], what: &str) -> QResult<()> {
    let mut err = None;
    for c in &y.columns {
        c.expr.visit(&mut |e| {
            if err.is_some() {
                return;
            }
            match e {
                Expr::LabelProp { label, prop } => match schemas.iter().find(|s| s.name == *label) {
                    None => err = Some(QError::semantic(format!("{what} `{label}' is not in the FETCH list"))),
                    Some(s) if s.latest().prop_index(prop).is_none() => {
                        err = Some(QError::semantic(format!("`{label}.{prop}', not found the property `{prop}'.")))
                    }
                    _ => {}
                },
                Expr::SrcProp { .. } | Expr::DstProp { .. } | Expr::InputProp(_) | Expr::VarProp { .. } => {
                    err = Some(QError::semantic(format!("`{e}' is not valid in FETCH")))
                }
                Expr::Aggregate { .. } => err = Some(QError::not_supported(format!("Aggregate function `{e}' in FETCH"))),
                _ => {}
            }
        });
    }
    err.map_or(Ok(()), Err)
}

impl QueryEngine {
    pub(crate) fn data_statement(&self, space: &SpaceDesc, stmt: &Statement, params: &Params) -> QResult<DataSet> {
        match stmt {
            Statement::InsertVertices { if_not_exists, tags, rows } => {
                if tags.is_empty() {
                    return Err(QError::semantic("INSERT VERTEX needs at least one tag"));
                }
                let mut resolved = Vec::new();
                let mut width = 0;
                for (name, props) in tags {
                    let schema = self.catalog.schema(space, SchemaKind::Tag, name)?;
                    check_prop_names(&schema, props)?;
                    width += props.len();
                    resolved.push((schema, props));
                }
                // Everything is evaluated and checked before anything is written: a bad row writes nothing.
                let mut mutations = Vec::with_capacity(rows.len());
                for row in rows {
                    if row.values.len() != width {
                        return Err(QError::semantic("Column count doesn't match value count."));
                    }
                    let vid = eval_vid(space, &row.vid, params)?;
                    let values = row.values.iter().map(|e| eval(e, &ParamContext { params })).collect::<QResult<Vec<_>>>()?;
                    let mut offset = 0;
                    let mut tag_rows = Vec::new();
                    for (schema, props) in &resolved {
                        let slice = &values[offset..offset + props.len()];
                        offset += props.len();
                        tag_rows.push((schema.clone(), build_row(schema, props, slice, params)?));
                    }
                    mutations.push(Mutation::InsertVertex { vid, tags: tag_rows, if_not_exists: *if_not_exists });
                }
                self.storage.write(space, mutations)?;
                Ok(DataSet::empty())
            }
            Statement::InsertEdges { if_not_exists, edge, props, rows } => {
                let schema = self.catalog.schema(space, SchemaKind::Edge, edge)?;
                check_prop_names(&schema, props)?;
                let mut mutations = Vec::with_capacity(rows.len());
                for row in rows {
                    if row.values.len() != props.len() {
                        return Err(QError::semantic("Column count doesn't match value count."));
                    }
                    let key = eval_edge_key(space, &row.key, schema.id, params)?;
                    let values = row.values.iter().map(|e| eval(e, &ParamContext { params })).collect::<QResult<Vec<_>>>()?;
                    let values = build_row(&schema, props, &values, params)?;
                    mutations.push(Mutation::InsertEdge { key, schema: schema.clone(), values, if_not_exists: *if_not_exists });
                }
                self.storage.write(space, mutations)?;
                Ok(DataSet::empty())
            }
            Statement::Update { upsert, target, set, when, yield_clause } => self.update(space, *upsert, target, set, when.as_ref(), yield_clause.as_ref(), params),
            Statement::DeleteVertices { vids, with_edge } => {
                let mut mutations = Vec::new();
                for v in vids {
                    mutations.push(Mutation::DeleteVertex { vid: eval_vid(space, v, params)?, with_edges: *with_edge });
                }
                self.storage.write(space, mutations)?;
                Ok(DataSet::empty())
            }
            Statement::DeleteTags { tags, vids } => {
                let schemas = match tags {
                    None => None,
                    Some(names) => Some(names.iter().map(|n| self.catalog.schema(space, SchemaKind::Tag, n)).collect::<QResult<Vec<_>>>()?),
                };
                let mut mutations = Vec::new();
                for v in vids {
                    mutations.push(Mutation::DeleteTags { vid: eval_vid(space, v, params)?, tags: schemas.clone() });
                }
                self.storage.write(space, mutations)?;
                Ok(DataSet::empty())
            }
            Statement::DeleteEdges { edge, keys } => {
                let schema = self.catalog.schema(space, SchemaKind::Edge, edge)?;
                let mut mutations = Vec::new();
                for k in keys {
                    mutations.push(Mutation::DeleteEdge { key: eval_edge_key(space, k, schema.id, params)? });
                }
                self.storage.write(space, mutations)?;
                Ok(DataSet::empty())
            }
            Statement::FetchVertices { tags, vids, yield_clause } => {
                let schemas = match tags {
                    None => self.catalog.schemas(space, SchemaKind::Tag),
                    Some(names) => names.iter().map(|n| self.catalog.schema(space, SchemaKind::Tag, n)).collect::<QResult<Vec<_>>>()?,
                };
                check_label_props(yield_clause, &schemas, "Tag")?;
                let mut ids = Vec::new();
                let mut seen_ids = HashSet::new();
                for v in vids {
                    let vid = eval_vid(space, v, params)?;
                    if seen_ids.insert(vid.clone()) {
                        ids.push(vid);
                    }
                }
                let mut ds = DataSet { columns: yield_columns(yield_clause), rows: vec![] };
                let mut seen = HashSet::new();
                for data in self.storage.get_vertices(space, &ids, &schemas)?.into_iter().flatten() {
                    if tags.is_some() && data.tags.is_empty() {
                        continue;
                    }
                    let vertex = make_vertex(data.vid, data.tags.into_iter().map(|(s, p)| (s.name.clone(), p)).collect());
                    project(yield_clause, &VertexContext { params, vertex: &vertex }, &mut ds, &mut seen)?;
                }
                Ok(ds)
            }
            Statement::FetchEdges { edge, keys, yield_clause } => {
                let schema = self.catalog.schema(space, SchemaKind::Edge, edge)?;
                check_label_props(yield_clause, std::slice::from_ref(&schema), "Edge")?;
                let keys = keys.iter().map(|k| eval_edge_key(space, k, schema.id, params)).collect::<QResult<Vec<_>>>()?;
                let mut ds = DataSet { columns: yield_columns(yield_clause), rows: vec![] };
                let mut seen = HashSet::new();
                for (key, props) in keys.iter().zip(self.storage.get_edges(space, &schema, &keys)?) {
                    let Some(props) = props else { continue };
                    let e = Edge { src: key.src.clone(), dst: key.dst.clone(), edge_type: schema.id, name: schema.name.clone(), ranking: key.rank, props };
                    project(yield_clause, &EdgeContext { params, edge: &e }, &mut ds, &mut seen)?;
                }
                Ok(ds)
            }
            _ => unreachable!("not a data statement: {stmt:?}"),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn update(
        &self,
        space: &SpaceDesc,
        upsert: bool,
        target: &UpdateTarget,
        set: &[(String, Expr)],
        when: Option<&Expr>,
        yield_clause: Option<&YieldClause>,
        params: &Params,
    ) -> QResult<DataSet> {
        let (schema, edge_key) = match target {
            UpdateTarget::Vertex { tag, .. } => (self.catalog.schema(space, SchemaKind::Tag, tag)?, None),
            UpdateTarget::Edge { edge, key } => {
                let schema = self.catalog.schema(space, SchemaKind::Edge, edge)?;
                let k = eval_edge_key(space, key, schema.id, params)?;
                (schema, Some(k))
            }
        };
        for (name, _) in set {
            if schema.latest().prop_index(name).is_none() {
                return Err(QError::semantic(format!("`{name}' is not a property of `{}'", schema.name)));
            }
        }
        if let Some(y) = yield_clause {
            check_no_aggregate(y)?;
        }
        let is_edge = edge_key.is_some();
        let key_ref = edge_key.as_ref().map(|k| (&k.src, &k.dst, k.rank, k.edge_type));
        fn make<'a>(params: &'a Params, name: &'a str, props: &'a Props, is_edge: bool, key: Option<(&'a Value, &'a Value, i64, i32)>) -> UpdateContext<'a> {
            UpdateContext { params, schema_name: name, props, is_edge, edge_key: key }
        }
        let mut decide = |current: Option<&Props>| -> QResult<RmwDecision> {
            let mut props = match current {
                Some(p) => {
                    if let Some(w) = when {
                        if !eval_condition(w, &make(params, &schema.name, p, is_edge, key_ref))? {
                            return Ok(RmwDecision::Keep);
                        }
                    }
                    p.clone()
                }
                None if upsert => {
                    let mut p = Props::new();
                    for def in &schema.latest().props {
                        // A property that SET assigns needs no default.
                        let v = match (&def.default, set.iter().any(|(n, _)| *n == def.name)) {
                            (Some(_), _) | (None, false) => default_value(def, params)?,
                            (None, true) => Value::NULL,
                        };
                        p.insert(def.name.clone(), v);
                    }
                    p
                }
                None => return Err(QError::execution("Storage Error: Vertex or edge not found.")),
            };
            for (name, e) in set {
                let v = eval(e, &make(params, &schema.name, &props, is_edge, key_ref))?;
                let def = &schema.latest().props[schema.latest().prop_index(name).expect("checked above")];
                props.insert(name.clone(), coerce(def, v)?);
            }
            let row = schema.latest().props.iter().map(|d| props.get(&d.name).cloned().unwrap_or(Value::NULL)).collect::<Vec<_>>();
            for (d, v) in schema.latest().props.iter().zip(&row) {
                coerce(d, v.clone())?;
            }
            Ok(RmwDecision::Write(row))
        };
        let after = match target {
            UpdateTarget::Vertex { vid, .. } => {
                let vid = eval_vid(space, vid, params)?;
                self.storage.rmw_vertex(space, &vid, &schema, &mut decide)?
            }
            UpdateTarget::Edge { .. } => self.storage.rmw_edge(space, edge_key.as_ref().expect("edge"), &schema, &mut decide)?,
        };
        let Some(y) = yield_clause else { return Ok(DataSet::empty()) };
        let mut ds = DataSet { columns: yield_columns(y), rows: vec![] };
        if let Some(props) = after {
            project(y, &make(params, &schema.name, &props, is_edge, key_ref), &mut ds, &mut HashSet::new())?;
        }
        Ok(ds)
    }
}

