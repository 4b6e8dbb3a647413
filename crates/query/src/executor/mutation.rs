//! INSERT, UPDATE/UPSERT and DELETE (run whole by the statement executor, checking their own names).

use super::project::{project, yield_columns};
use crate::constants::{eval_edge_key, eval_vid, reads_input, VidUse};
use crate::context::{ParamContext, UpdateContext};
use crate::distinct::DistinctRows;
use crate::{DataSet, Params, QueryEngine};
use quiver_api::*;
use quiver_common::eval::{eval, eval_condition};
use quiver_common::expr::Expr;
use quiver_common::fasthash::FastSet as HashSet;
use quiver_common::{NullKind, QError, QResult, Value};
use quiver_syntax::ast::{EdgeKey, Statement, UpdateTarget, YieldClause};

/// The value of a property that an INSERT or UPSERT does not set: its default, else NULL if it may be NULL.
fn default_value(p: &PropDef, params: &Params) -> QResult<Value> {
    match &p.default {
        Some((_, e)) => coerce(p, eval(e, &ParamContext { params })?),
        None if p.nullable => Ok(Value::NULL),
        None => Err(QError::execution("Storage Error: The not null field doesn't have a default value.")),
    }
}

/// Builds a full row (latest schema order) from named values.
pub fn build_row(schema: &SchemaDesc, names: &[String], values: &[Value], params: &Params) -> QResult<Vec<Value>> {
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

fn check_no_aggregate(y: &YieldClause) -> QResult<()> {
    for c in &y.columns {
        if c.expr.has_aggregate() {
            return Err(QError::not_supported(format!("Aggregate function in `{}' without an input", c.expr)));
        }
    }
    Ok(())
}

impl QueryEngine {
    /// A tag or edge type for UPDATE/UPSERT and INSERT VERTEX, whose validators report a missing one this way.
    fn schema_for_write(&self, space: &SpaceDesc, kind: SchemaKind, name: &str) -> QResult<SchemaRef> {
        self.catalog.schema(space, kind, name).map_err(|_| QError::semantic(format!("No schema found for `{name}'")))
    }
}

/// NebulaGraph refuses, in UPDATE/UPSERT, any expression that reads outside the updated row: `$$`, `$-`,
/// variables, `$^` on an edge, and another tag's or edge type's properties.
fn check_update_expr(e: &Expr, name: &str, is_edge: bool) -> QResult<()> {
    let wrong = e.any(&|x| match x {
        Expr::DstProp { .. } | Expr::InputProp(_) | Expr::VarProp { .. } => true,
        Expr::SrcProp { tag, .. } => is_edge || tag != name,
        Expr::LabelProp { label, .. } => label != name,
        Expr::EdgeMetaProp { edge, .. } => !is_edge || edge != name,
        _ => false,
    });
    if wrong {
        return Err(QError::semantic(format!("Has wrong expr in `{e}'")));
    }
    Ok(())
}

/// A value of an INSERT's VALUES: one that evaluates to any NULL but a plain one (BAD_DATA, BAD_TYPE, NaN, ...) is
/// NebulaGraph's `Wrong value type: <expression>` (`SchemaUtil::toValueVec`), before any schema check.
fn insert_value(e: &Expr, params: &Params) -> QResult<Value> {
    match eval(e, &ParamContext { params })? {
        Value::Null(k) if k != NullKind::Null => Err(QError::execution(format!("Wrong value type: {e}"))),
        v => Ok(v),
    }
}

/// Every property of `schema`, in its order: what `INSERT VERTEX t VALUES ...` without a list writes.
fn all_prop_names(schema: &SchemaDesc) -> Vec<String> {
    schema.latest().props.iter().map(|p| p.name.clone()).collect()
}

/// Storage's checks of a value UPDATE/UPSERT writes, with its messages.
fn coerce_update(def: &PropDef, v: Value) -> QResult<Value> {
    if v.is_null() && !def.nullable {
        return Err(QError::execution("Storage Error: Invalid field value: may be the filed is not NULL or without default value or wrong schema."));
    }
    coerce(def, v).map_err(|_| QError::execution("Storage Error: Invalid data, may be wrong value type."))
}

impl QueryEngine {
    pub(crate) fn data_statement(&self, space: &SpaceDesc, stmt: &Statement, params: &Params) -> QResult<DataSet> {
        match stmt {
            Statement::InsertVertices { if_not_exists, tags, rows } => {
                if tags.is_empty() {
                    return Err(QError::semantic("Insert vertex is forbidden, please specify the tag"));
                }
                let mut resolved = Vec::new();
                let mut width = 0;
                for (name, props) in tags {
                    let schema = self.schema_for_write(space, SchemaKind::Tag, name)?;
                    let props = props.clone().unwrap_or_else(|| all_prop_names(&schema));
                    check_prop_names(&schema, &props)?;
                    width += props.len();
                    resolved.push((schema, props));
                }
                // Everything is evaluated and checked before anything is written: a bad row writes nothing.
                let mut mutations = Vec::with_capacity(rows.len());
                for row in rows {
                    if row.values.len() != width {
                        return Err(QError::semantic("Column count doesn't match value count."));
                    }
                    let vid = eval_vid(space, &row.vid, params, VidUse::Mutation)?;
                    let values = row.values.iter().map(|e| insert_value(e, params)).collect::<QResult<Vec<_>>>()?;
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
                let props = &props.clone().unwrap_or_else(|| all_prop_names(&schema));
                check_prop_names(&schema, props)?;
                let mut mutations = Vec::with_capacity(rows.len());
                for row in rows {
                    if row.values.len() != props.len() {
                        return Err(QError::semantic("Column count doesn't match value count."));
                    }
                    let key = eval_edge_key(space, &row.key, schema.id, params, false)?;
                    let values = row.values.iter().map(|e| insert_value(e, params)).collect::<QResult<Vec<_>>>()?;
                    let values = build_row(&schema, props, &values, params)?;
                    mutations.push(Mutation::InsertEdge {
                        key,
                        schema: schema.clone(),
                        values,
                        if_not_exists: *if_not_exists,
                    });
                }
                self.storage.write(space, mutations)?;
                Ok(DataSet::empty())
            }
            Statement::Update { upsert, target, set, when, yield_clause } => {
                self.update(space, *upsert, target, set, when.as_ref(), yield_clause.as_ref(), params)
            }
            Statement::DeleteVertices { vids, with_edge } => {
                let mut mutations = Vec::new();
                for v in vids {
                    mutations.push(Mutation::DeleteVertex {
                        vid: eval_vid(space, v, params, VidUse::Mutation)?,
                        with_edges: *with_edge,
                    });
                }
                self.storage.write(space, mutations)?;
                Ok(DataSet::empty())
            }
            Statement::DeleteTags { tags, vids } => {
                let schemas = match tags {
                    None => None,
                    Some(names) => Some(
                        names
                            .iter()
                            .map(|n| self.catalog.schema(space, SchemaKind::Tag, n))
                            .collect::<QResult<Vec<_>>>()?,
                    ),
                };
                let mut mutations = Vec::new();
                for v in vids {
                    mutations.push(Mutation::DeleteTags {
                        vid: eval_vid(space, v, params, VidUse::Mutation)?,
                        tags: schemas.clone(),
                    });
                }
                self.storage.write(space, mutations)?;
                Ok(DataSet::empty())
            }
            Statement::DeleteEdges { edge, keys } => {
                let schema = self.catalog.schema(space, SchemaKind::Edge, edge)?;
                let mut mutations = Vec::new();
                for k in keys {
                    mutations.push(Mutation::DeleteEdge { key: eval_edge_key(space, k, schema.id, params, false)? });
                }
                self.storage.write(space, mutations)?;
                Ok(DataSet::empty())
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
        // Several vertices or edges are each updated on their own, the rows they yield joined; as NebulaGraph's
        // UpdateExecutor sends every key and then reports the first failure, a failed key does not stop the others.
        if target.len() > 1 {
            let mut out: Option<DataSet> = None;
            let mut failed = None;
            for one in target.each() {
                match self.update(space, upsert, &one, set, when, yield_clause, params) {
                    Ok(ds) => match &mut out {
                        Some(all) => all.append(ds),
                        None => out = Some(ds),
                    },
                    Err(e) => {
                        failed.get_or_insert(e);
                    }
                }
            }
            return match failed {
                Some(e) => Err(e),
                None => Ok(out.unwrap_or_else(DataSet::empty)),
            };
        }
        let (schema, edge_key) = match target {
            UpdateTarget::Vertex { tag, .. } => (self.schema_for_write(space, SchemaKind::Tag, tag)?, None),
            UpdateTarget::Edge { edge, keys } => {
                let key = &keys[0];
                let schema = self.schema_for_write(space, SchemaKind::Edge, edge)?;
                let k = eval_edge_key(space, key, schema.id, params, false)?;
                (schema, Some(k))
            }
        };
        let is_edge = edge_key.is_some();
        for (_, e) in set {
            check_update_expr(e, &schema.name, is_edge)?;
        }
        if let Some(w) = when {
            check_update_expr(w, &schema.name, is_edge)?;
        }
        if let Some(y) = yield_clause {
            check_no_aggregate(y)?;
            for c in &y.columns {
                check_update_expr(&c.expr, &schema.name, is_edge)?;
            }
        }
        for (name, _) in set {
            if schema.latest().prop_index(name).is_none() {
                return Err(QError::execution(if is_edge {
                    "Storage Error: Edge prop not found."
                } else {
                    "Storage Error: Tag prop not found."
                }));
            }
        }
        let key_ref = edge_key.as_ref().map(|k| (&k.src, &k.dst, k.rank, k.edge_type));
        fn make<'a>(
            params: &'a Params,
            name: &'a str,
            props: &'a Props,
            is_edge: bool,
            key: Option<(&'a Value, &'a Value, i64, i32)>,
        ) -> UpdateContext<'a> {
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
                        // A NOT NULL property with no default that SET leaves NULL fails below.
                        let v = match &def.default {
                            Some(_) => default_value(def, params)?,
                            None => Value::NULL,
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
                props.insert(name.clone(), coerce_update(def, v)?);
            }
            // Every value is written as its property's type: a default too (a float default of an integer
            // property is rounded, as a written value is).
            let row = schema
                .latest()
                .props
                .iter()
                .map(|d| coerce_update(d, props.get(&d.name).cloned().unwrap_or(Value::NULL)))
                .collect::<QResult<Vec<_>>>()?;
            Ok(RmwDecision::Write(row))
        };
        let after = match target {
            UpdateTarget::Vertex { vids, .. } => {
                let vid = eval_vid(space, &vids[0], params, VidUse::Mutation)?;
                self.storage.rmw_vertex(space, &vid, &schema, &mut decide)?
            }
            UpdateTarget::Edge { .. } => {
                self.storage.rmw_edge(space, edge_key.as_ref().expect("edge"), &schema, &mut decide)?
            }
        };
        let Some(y) = yield_clause else { return Ok(DataSet::empty()) };
        let mut ds = DataSet::new(yield_columns(y), Vec::new());
        if let Some(props) = after {
            project(y, &make(params, &schema.name, &props, is_edge, key_ref), &mut ds, &mut DistinctRows::default())?;
        }
        Ok(ds)
    }
}

/// Whether a DELETE takes its vertex IDs or edge keys from a pipe or a variable.
pub(crate) fn reads_input_rows(stmt: &Statement) -> bool {
    let key_reads =
        |k: &EdgeKey| reads_input(&k.src) || reads_input(&k.dst) || k.rank.as_ref().is_some_and(reads_input);
    match stmt {
        Statement::DeleteVertices { vids, .. } | Statement::DeleteTags { vids, .. } => vids.iter().any(reads_input),
        Statement::DeleteEdges { keys, .. } => keys.iter().any(key_reads),
        _ => false,
    }
}

/// The expression of an UPDATE's or UPSERT's target that reads a pipe or a variable (`| UPDATE VERTEX ON t $-.id`,
/// `| UPDATE EDGE ON e $-.s -> $-.d @ $-.r`), if one does: the statement then runs once per row of that input.
pub(crate) fn update_input(stmt: &Statement) -> Option<&Expr> {
    match stmt {
        Statement::Update { target: UpdateTarget::Vertex { vids, .. }, .. } => vids.first().filter(|e| reads_input(e)),
        Statement::Update { target: UpdateTarget::Edge { keys, .. }, .. } => keys.first().and_then(|key| {
            [Some(&key.src), Some(&key.dst), key.rank.as_ref()].into_iter().flatten().find(|e| reads_input(e))
        }),
        _ => None,
    }
}

/// An UPDATE or UPSERT whose target reads its input ([`update_input`]), for one input row: the same statement with
/// the target's VIDs (and rank) evaluated on that row.
pub(crate) fn update_of_row(stmt: &Statement, ctx: &dyn quiver_common::eval::EvalContext) -> QResult<Statement> {
    let Statement::Update { upsert, target, set, when, yield_clause } = stmt else {
        unreachable!("update_input found an UPDATE")
    };
    let constant = |e: &Expr| eval(e, ctx).map(Expr::Const);
    let target = match target {
        UpdateTarget::Vertex { tag, vids } => {
            UpdateTarget::Vertex { tag: tag.clone(), vids: vec![constant(&vids[0])?] }
        }
        UpdateTarget::Edge { edge, keys } => UpdateTarget::Edge {
            edge: edge.clone(),
            keys: vec![EdgeKey {
                src: constant(&keys[0].src)?,
                dst: constant(&keys[0].dst)?,
                rank: keys[0].rank.as_ref().map(constant).transpose()?,
            }],
        },
    };
    Ok(Statement::Update {
        upsert: *upsert,
        target,
        set: set.clone(),
        when: when.clone(),
        yield_clause: yield_clause.clone(),
    })
}

/// A DELETE that reads a pipe or a variable, turned into the same statement over the constants its input rows
/// give: one vertex ID or edge key per row. As NebulaGraph's, it skips rows whose ID (or source) is NULL or EMPTY
/// and fails, before anything is deleted, on one whose ID, source, destination or rank has the wrong type.
pub(crate) fn of_input_rows(
    space: &SpaceDesc,
    stmt: &Statement,
    req: &crate::request::Request<'_>,
    input: Option<&DataSet>,
) -> QResult<Statement> {
    let wrong = |what: &str, v: &Value, close: char| {
        QError::execution(format!("Wrong {what} type `{}{close}, value `{v}'", v.type_name().to_uppercase()))
    };
    match stmt {
        Statement::DeleteVertices { vids, .. } | Statement::DeleteTags { vids, .. } => {
            if !matches!(&vids[0], Expr::InputProp(_) | Expr::VarProp { .. }) {
                return Err(QError::semantic(format!("`{}' is not an evaluable expression.", vids[0])));
            }
            let src = crate::request::input_rows(&vids[0], req, input)?;
            let mut out = Vec::new();
            for row in 0..src.len() {
                let v = eval(&vids[0], &src.context(req, row))?;
                if v.is_null() || v.is_empty() {
                    continue;
                }
                if !space.vid_type_matches(&v) {
                    return Err(wrong("vid", &v, '\''));
                }
                out.push(Expr::Const(v));
            }
            Ok(match stmt.clone() {
                Statement::DeleteVertices { with_edge, .. } => Statement::DeleteVertices { vids: out, with_edge },
                Statement::DeleteTags { tags, .. } => Statement::DeleteTags { tags, vids: out },
                _ => unreachable!("matched above"),
            })
        }
        Statement::DeleteEdges { edge, keys } => {
            // NebulaGraph's grammar reads a key from the input only as `$-.a -> $-.b @ $-.c` (or `$v.`): another
            // expression of the input is a constant key that cannot be evaluated (its DeleteEdgesValidator).
            for key in keys {
                for e in [Some(&key.src), Some(&key.dst), key.rank.as_ref()].into_iter().flatten() {
                    let mut reads = false;
                    e.visit(&mut |x| reads |= matches!(x, Expr::InputProp(_) | Expr::VarProp { .. }));
                    if reads && !matches!(e, Expr::InputProp(_) | Expr::VarProp { .. }) {
                        return Err(QError::semantic(format!("`{e}' is not an evaluable expression.")));
                    }
                }
            }
            let [key] = keys.as_slice() else {
                return Err(QError::semantic("A DELETE of edges from a pipe or a variable takes one edge key."));
            };
            // The reference that names the input: every other one must read the same input.
            let mut reference = None;
            for e in [Some(&key.src), Some(&key.dst), key.rank.as_ref()].into_iter().flatten() {
                e.visit(&mut |x| {
                    if reference.is_none() && matches!(x, Expr::InputProp(_) | Expr::VarProp { .. }) {
                        reference = Some(x.clone());
                    }
                });
            }
            let src = crate::request::input_rows(reference.as_ref().expect("the key reads its input"), req, input)?;
            let mut out = Vec::new();
            let mut seen = HashSet::default();
            for row in 0..src.len() {
                let ctx = src.context(req, row);
                let s = eval(&key.src, &ctx)?;
                if s.is_null() || s.is_empty() {
                    continue;
                }
                let d = eval(&key.dst, &ctx)?;
                let rank = match &key.rank {
                    None => Value::Int(0),
                    Some(r) => eval(r, &ctx)?,
                };
                // NebulaGraph's own message closes the source's type with a backtick.
                if !space.vid_type_matches(&s) {
                    return Err(wrong("srcId", &s, '`'));
                }
                if !space.vid_type_matches(&d) {
                    return Err(wrong("dstId", &d, '\''));
                }
                if !matches!(rank, Value::Int(_)) {
                    return Err(wrong("rank", &rank, '\''));
                }
                if seen.insert(vec![s.clone(), d.clone(), rank.clone()]) {
                    out.push(EdgeKey { src: Expr::Const(s), dst: Expr::Const(d), rank: Some(Expr::Const(rank)) });
                }
            }
            Ok(Statement::DeleteEdges { edge: edge.clone(), keys: out })
        }
        other => Ok(other.clone()),
    }
}
