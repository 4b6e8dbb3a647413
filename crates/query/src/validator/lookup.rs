//! LookupValidator: a LOOKUP validated as NebulaGraph's LookupValidator does and planned onto index ranges (it
//! runs as `executor::index_scan`: index scans plus, where needed, a read of the rows and a re-check of the WHERE).
//!
//! Planning turns WHERE into a disjunction of conjunctions of `prop op constant`. For each conjunction it picks the
//! index with the most leading fields fixed by equality (`==`, `IN`), then one with a range (`<`, `<=`, `>`, `>=`,
//! `STARTS WITH`) on the next field, then the one with the fewest fields, then the oldest; predicates the chosen
//! ranges do not answer exactly (`!=`, other fields, strings longer than the index keeps) are re-checked on the rows.
//! Only indexes that are ready are used: no query sees an index whose build has not finished.

use super::{is_constant, Validator};
use crate::context::ParamContext;
use crate::Params;
use quiver_api::*;
use quiver_common::eval::eval;
use quiver_common::expr::{BinaryOp, Expr, VertexRef};
use quiver_common::geo::cells;
use quiver_common::limits::{LOOKUP_BRANCHES_MAX, LOOKUP_POINTS_MAX};
use quiver_common::{ErrorCode, PropType, QError, QResult, Value};
use quiver_syntax::ast::{LookupStatement, YieldClause};

pub(crate) struct LookupPlan {
    pub schema: SchemaRef,
    /// Index ranges to read; their hits are de-duplicated.
    pub scans: Vec<IndexScan>,
    /// Whether the rows are read: the YIELD reads properties, a predicate is not answered exactly by the ranges,
    /// or rows can expire (TTL).
    pub fetch: bool,
    /// Re-checked on every row read.
    pub filter: Option<Expr>,
    pub yield_clause: YieldClause,
}

/// `prop op value`, with the property on the left; or, when `geo` is set, a geo predicate of the property and a
/// constant geography (`value`), which only a geo index can narrow.
#[derive(Debug, Clone)]
struct Pred {
    prop: String,
    op: BinaryOp,
    value: Value,
    /// Meters the constant is grown by: `ST_DWithin`'s distance, 0 for `ST_Intersects`, `ST_Covers`, `ST_CoveredBy`.
    geo: Option<f64>,
}

/// NebulaGraph's geo predicates a geo index answers (ExpressionUtils::isGeoIndexAcceleratedPredicate).
const GEO_PREDICATES: [&str; 4] = ["st_intersects", "st_covers", "st_coveredby", "st_dwithin"];

fn not_supported_yet(e: &Expr) -> QError {
    QError::semantic(format!("Expression {e} not supported yet"))
}

fn reverse(op: BinaryOp) -> Option<BinaryOp> {
    Some(match op {
        BinaryOp::Eq | BinaryOp::Ne => op,
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Le => BinaryOp::Ge,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::Ge => BinaryOp::Le,
        _ => return None,
    })
}

/// The [`Value::type_name`] of the values a property of type `ty` holds.
fn value_kind(ty: PropType) -> &'static str {
    match ty {
        PropType::Bool => "bool",
        PropType::Int8 | PropType::Int16 | PropType::Int32 | PropType::Int64 | PropType::Timestamp => "int",
        PropType::Float | PropType::Double => "float",
        PropType::String | PropType::FixedString(_) => "string",
        PropType::Date => "date",
        PropType::Time => "time",
        PropType::DateTime => "datetime",
        PropType::Duration => "duration",
        PropType::Geography(_) => "geography",
        PropType::List(_) => "list",
        PropType::Set(_) => "set",
    }
}

/// NebulaGraph's checkConstExpr: numbers convert between int and float columns (an int column's bound rounds
/// the way that keeps the same rows); any other type mismatch is an error.
fn fit(value: Value, ty: PropType, op: BinaryOp, prop: &str) -> QResult<Value> {
    let want = value_kind(ty);
    match (&value, want) {
        (Value::Int(i), "float") => Ok(Value::Float(*i as f64)),
        (Value::Float(f), "int") => {
            let up = matches!(op, BinaryOp::Ge | BinaryOp::Lt);
            let r = if up { f.ceil() } else { f.floor() };
            Ok(Value::Int(r as i64))
        }
        (Value::List(_) | Value::Set(_), _) if matches!(op, BinaryOp::In | BinaryOp::NotIn) => Ok(value),
        (v, w) if v.type_name() == w => Ok(value),
        _ => Err(QError::semantic(format!("Column type error : {prop}"))),
    }
}

impl Validator<'_> {
    /// LookupValidator: validates a LOOKUP and chooses its index ranges (the catalog only; no storage).
    pub(super) fn lookup(&self, stmt: &LookupStatement) -> QResult<LookupPlan> {
        let (space, params) = (self.space()?, self.req.params);
        let schema = match self.engine.catalog.schema(space, SchemaKind::Edge, &stmt.schema) {
            Ok(s) => s,
            Err(_) => self
                .engine
                .catalog
                .schema(space, SchemaKind::Tag, &stmt.schema)
                .map_err(|_| QError::new(ErrorCode::SemanticError, format!("Schema not exist: {}", stmt.schema)))?,
        };
        let branches = match &stmt.filter {
            None => vec![Vec::new()],
            Some(f) => {
                let mut b = self.lookup_filter(f, &schema, params)?;
                if b.len() > LOOKUP_BRANCHES_MAX {
                    b = vec![Vec::new()];
                }
                b
            }
        };
        let yield_clause = stmt.yield_clause.clone().ok_or_else(|| QError::semantic("Missing yield clause."))?;
        self.check_lookup_yield(&schema, &yield_clause)?;
        let all: Vec<IndexRef> = self
            .engine
            .catalog
            .indexes(space)
            .into_iter()
            .filter(|i| i.kind == schema.kind && i.schema_id == schema.id)
            .collect();
        if all.is_empty() {
            return Err(QError::execution("There is no index to use at runtime"));
        }
        let ready: Vec<IndexRef> = all.iter().filter(|i| i.state == IndexState::Ready).cloned().collect();
        if ready.is_empty() {
            let names: Vec<&str> = all.iter().map(|i| i.name.as_str()).collect();
            return Err(QError::execution(format!(
                "There is no index to use at runtime: {} not finished building yet (see SHOW JOBS)",
                names.join(", ")
            )));
        }
        let mut scans = Vec::new();
        let mut exact = true;
        for preds in &branches {
            let (mut s, ex) = choose(&ready, preds);
            exact &= ex;
            scans.append(&mut s);
        }
        let fetch = !exact
            || schema.ttl_duration > 0 && !schema.ttl_col.is_empty()
            || yield_clause.columns.iter().any(|c| needs_row(&c.expr));
        // As NebulaGraph's `rewriteGeoPredicate`, the filter each hit is checked with has `ST_Distance(a, b) < d` as
        // `ST_DWithin(a, b, d, true)` (`<=`: false): the geography's own measure, not a float comparison's epsilon.
        let filter = stmt.filter.clone().map(|mut f| {
            f.visit_mut(&mut |x| {
                if let Expr::Binary { op, lhs, rhs } = x {
                    let (call, bound, op) = match (is_distance(lhs), is_distance(rhs)) {
                        (true, _) => (&**lhs, &**rhs, *op),
                        (_, true) => (&**rhs, &**lhs, reverse(*op).unwrap_or(*op)),
                        _ => return,
                    };
                    let Expr::Function { args, .. } = call else { return };
                    if args.len() == 2 && matches!(op, BinaryOp::Lt | BinaryOp::Le) {
                        let mut args = args.clone();
                        args.push(bound.clone());
                        args.push(Expr::Const(Value::Bool(op == BinaryOp::Lt)));
                        *x = Expr::Function { name: "st_dwithin".into(), args };
                    }
                }
            });
            f
        });
        Ok(LookupPlan { schema, scans, fetch, filter, yield_clause })
    }

    /// The WHERE as a disjunction of conjunctions, checked as NebulaGraph's LookupValidator::checkFilter does.
    fn lookup_filter(&self, e: &Expr, schema: &SchemaDesc, params: &Params) -> QResult<Vec<Vec<Pred>>> {
        match e {
            Expr::Binary { op: BinaryOp::Or, lhs, rhs } => {
                let mut l = self.lookup_filter(lhs, schema, params)?;
                l.extend(self.lookup_filter(rhs, schema, params)?);
                Ok(l)
            }
            Expr::Binary { op: BinaryOp::And, lhs, rhs } => {
                let l = self.lookup_filter(lhs, schema, params)?;
                let r = self.lookup_filter(rhs, schema, params)?;
                let mut out = Vec::new();
                for a in &l {
                    for b in &r {
                        if out.len() > LOOKUP_BRANCHES_MAX {
                            return Ok(out);
                        }
                        out.push(a.iter().chain(b).cloned().collect());
                    }
                }
                Ok(out)
            }
            Expr::Function { name, args } if GEO_PREDICATES.contains(&name.to_lowercase().as_str()) => {
                self.geo_pred(e, name, args, None, schema, params)
            }
            Expr::Binary { op, lhs, rhs } if is_distance(lhs) || is_distance(rhs) => {
                // `ST_Distance(a, b) < d` is `ST_DWithin(a, b, d, true)`, `<=` the same inclusive (rewriteGeoPredicate).
                let (call, bound, op) = if is_distance(lhs) {
                    (&**lhs, &**rhs, *op)
                } else {
                    (&**rhs, &**lhs, reverse(*op).unwrap_or(*op))
                };
                let Expr::Function { name, args } = call else { unreachable!("is_distance") };
                if !matches!(op, BinaryOp::Lt | BinaryOp::Le) {
                    return Err(not_supported_yet(e));
                }
                if args.len() != 2 {
                    return Err(QError::semantic(format!("Expression {call} has wrong number arguments")));
                }
                self.geo_pred(call, name, args, Some((bound, op == BinaryOp::Lt)), schema, params)
            }
            Expr::Binary {
                op:
                    BinaryOp::Regex
                    | BinaryOp::Contains
                    | BinaryOp::NotContains
                    | BinaryOp::EndsWith
                    | BinaryOp::NotStartsWith
                    | BinaryOp::NotEndsWith,
                ..
            } => Err(QError::semantic(format!(
                "Expression {e} is not supported, please use full-text index as an optimal solution"
            ))),
            Expr::Binary { op, lhs, rhs }
                if matches!(
                    op,
                    BinaryOp::Eq
                        | BinaryOp::Ne
                        | BinaryOp::Lt
                        | BinaryOp::Le
                        | BinaryOp::Gt
                        | BinaryOp::Ge
                        | BinaryOp::In
                        | BinaryOp::NotIn
                        | BinaryOp::StartsWith
                ) =>
            {
                let (prop_side, const_side, op) = match (&**lhs, &**rhs) {
                    (Expr::LabelProp { .. }, Expr::LabelProp { .. }) => return Err(not_supported_yet(e)),
                    (Expr::LabelProp { .. }, _) => (&**lhs, &**rhs, *op),
                    (_, Expr::LabelProp { .. }) => (&**rhs, &**lhs, reverse(*op).ok_or_else(|| not_supported_yet(e))?),
                    _ => return Err(not_supported_yet(e)),
                };
                let Expr::LabelProp { label, prop } = prop_side else { unreachable!("matched above") };
                if *label != schema.name {
                    return Err(QError::semantic(format!("Schema name error: {label}")));
                }
                let (def, v) = prop_and_constant(schema, prop, const_side, params)?;
                let value = fit(v, def.ty, op, prop)?;
                Ok(vec![vec![Pred { prop: prop.clone(), op, value, geo: None }]])
            }
            _ => Err(not_supported_yet(e)),
        }
    }

    /// A geo predicate `f(t.prop, constant[, meters])`, checked as LookupValidator::checkGeoPredicate and
    /// rewriteGeoPredicate do (the property may come second; `ST_Covers` then reads as `ST_CoveredBy`). `distance`
    /// is the bound of an `ST_Distance` comparison.
    fn geo_pred(
        &self,
        e: &Expr,
        name: &str,
        args: &[Expr],
        distance: Option<(&Expr, bool)>,
        schema: &SchemaDesc,
        params: &Params,
    ) -> QResult<Vec<Vec<Pred>>> {
        if args.len() < 2 {
            return Err(QError::semantic(format!("Expression {e} has not enough arguments")));
        }
        let (prop_side, const_side) = match (&args[0], &args[1]) {
            (Expr::LabelProp { .. }, Expr::LabelProp { .. }) => return Err(not_supported_yet(e)),
            (p @ Expr::LabelProp { .. }, c) | (c, p @ Expr::LabelProp { .. }) => (p, c),
            _ => return Err(not_supported_yet(e)),
        };
        let Expr::LabelProp { label, prop } = prop_side else { unreachable!("matched above") };
        if *label != schema.name {
            return Err(QError::semantic(format!("Schema name error: {label}")));
        }
        let ctx = ParamContext { params };
        let meters = match (name.to_lowercase().as_str(), distance) {
            (_, Some((bound, _))) => Some(bound),
            ("st_dwithin", None) => args.get(2),
            _ => None,
        };
        let meters = match meters {
            None => 0.0,
            Some(m) if is_constant(m) => match eval(m, &ctx)? {
                Value::Int(i) => i as f64,
                Value::Float(f) => f,
                _ => return Err(not_supported_yet(e)),
            },
            Some(_) => return Err(not_supported_yet(e)),
        };
        let (def, value) = prop_and_constant(schema, prop, const_side, params)?;
        if !matches!(def.ty, PropType::Geography(_)) || !matches!(value, Value::Geography(_)) {
            return Err(QError::semantic(format!("Column type error : {prop}")));
        }
        Ok(vec![vec![Pred { prop: prop.clone(), op: BinaryOp::Eq, value, geo: Some(meters.max(0.0)) }]])
    }

    /// LookupValidator::validateYield{Tag,Edge}.
    fn check_lookup_yield(&self, schema: &SchemaDesc, y: &YieldClause) -> QResult<()> {
        let mut src_dst = false;
        let mut input_var = false;
        for c in &y.columns {
            let illegal = match schema.kind {
                SchemaKind::Tag => c.expr.any(&|e| matches!(e, Expr::Edge)),
                SchemaKind::Edge => c.expr.any(&|e| matches!(e, Expr::Vertex(_))),
            };
            if illegal {
                return Err(QError::semantic(format!("illegal yield clauses `{}'", crate::constants::column_text(c))));
            }
            let mut err = None;
            c.expr.visit(&mut |e| {
                if err.is_some() {
                    return;
                }
                match e {
                    Expr::LabelProp { label, .. } | Expr::EdgeMetaProp { edge: label, .. } if *label != schema.name => {
                        err = Some(QError::semantic(format!("Schema name error: {label}")));
                    }
                    Expr::LabelProp { label, prop } if schema.latest().prop_index(prop).is_none() => {
                        err = Some(QError::semantic(format!("`{label}.{prop}', not found the property `{prop}'.")));
                    }
                    Expr::EdgeMetaProp { .. } if schema.kind == SchemaKind::Tag => {
                        err = Some(QError::semantic(format!("Schema name error: {}", schema.name)))
                    }
                    Expr::SrcProp { .. } | Expr::DstProp { .. } | Expr::Vertex(VertexRef::Src | VertexRef::Dst) => {
                        src_dst = true
                    }
                    Expr::InputProp(_) | Expr::VarProp { .. } => input_var = true,
                    Expr::Aggregate { .. } => {
                        err = Some(QError::not_supported(format!("Aggregate function `{e}' in LOOKUP")))
                    }
                    _ => {}
                }
            });
            if let Some(e) = err {
                return Err(e);
            }
        }
        if input_var {
            return Err(QError::semantic("unsupported input/variable property expression in yield."));
        }
        if src_dst {
            return Err(QError::semantic("unsupport src/dst property expression in yield."));
        }
        Ok(())
    }
}

/// The property `prop` of `schema` and the value of the constant `c` it is compared with, checked as
/// LookupValidator does.
fn prop_and_constant<'s>(
    schema: &'s SchemaDesc,
    prop: &str,
    c: &Expr,
    params: &Params,
) -> QResult<(&'s PropDef, Value)> {
    if !is_constant(c) {
        return Err(QError::semantic(format!("'{c}' is not an evaluable expression.")));
    }
    let def = schema
        .latest()
        .props
        .iter()
        .find(|p| p.name == prop)
        .ok_or_else(|| QError::semantic(format!("Invalid column: {prop}")))?;
    // NebulaGraph folds the constant with the parameters' values in it: `$p2+43` of `p2 = true` is
    // ``Type error `(true+43)'``.
    let mut folded = c.clone();
    folded.visit_mut(&mut |x| {
        if let Expr::Param(p) = x {
            if let Some(v) = params.get(p.as_str()) {
                *x = Expr::Const(v.clone());
            }
        }
    });
    super::types::fold_type_error(&folded)?;
    Ok((def, eval(c, &ParamContext { params })?))
}

fn is_distance(e: &Expr) -> bool {
    matches!(e, Expr::Function { name, .. } if name.eq_ignore_ascii_case("st_distance"))
}

/// Whether a YIELD column needs the row itself, beyond what an index entry holds (the VID, or src, rank, dst):
/// any property, or `vertex` / `edge` other than as the argument of `id`, `src`, `dst`, `rank` or `type`.
fn needs_row(e: &Expr) -> bool {
    let (mut whole, mut covered, mut props) = (0, 0, false);
    e.visit(&mut |x| match x {
        Expr::LabelProp { .. } => props = true,
        Expr::Vertex(_) | Expr::Edge => whole += 1,
        Expr::Function { name, args }
            if args.len() == 1
                && matches!(args[0], Expr::Vertex(VertexRef::Current) | Expr::Edge)
                && matches!(name.to_lowercase().as_str(), "id" | "src" | "dst" | "rank" | "type") =>
        {
            covered += 1
        }
        _ => {}
    });
    props || whole > covered
}

/// The index ranges for one conjunction, and whether they answer every predicate exactly.
fn choose(ready: &[IndexRef], preds: &[Pred]) -> (Vec<IndexScan>, bool) {
    // A comparison with NULL or EMPTY is never true: the conjunction matches nothing.
    if preds.iter().any(|p| p.value.is_null() || matches!(p.value, Value::Empty)) {
        return (Vec::new(), true);
    }
    // A geo predicate with a geo index on its property: the cells of its constant, every hit re-checked.
    for p in preds.iter().filter(|p| p.geo.is_some()) {
        let (Value::Geography(g), Some(meters)) = (&p.value, p.geo) else { continue };
        if let Some(index) = ready.iter().find(|i| i.is_geo() && i.fields[0].name == p.prop) {
            let cells = cells::scan_ranges(g, meters, index.cover_params(), index.points_only());
            let range = IndexRange { cells, ..Default::default() };
            return (vec![IndexScan { index: index.clone(), prefix: Vec::new(), range: Some(range) }], false);
        }
    }
    let has_geo = preds.iter().any(|p| p.geo.is_some());
    let cmp: Vec<Pred> = preds.iter().filter(|p| p.geo.is_none()).cloned().collect();
    let preds = &cmp[..];
    // A geo index answers only geo predicates; another index is read whole rather than it, where there is one.
    let plain: Vec<IndexRef> = ready.iter().filter(|i| !i.is_geo()).cloned().collect();
    let ready = if plain.is_empty() { ready } else { &plain[..] };
    let eq_values = |field: &str| -> Option<Vec<Value>> {
        preds.iter().find(|p| p.prop == field && p.op == BinaryOp::Eq).map(|p| vec![p.value.clone()]).or_else(|| {
            preds.iter().find(|p| p.prop == field && p.op == BinaryOp::In).and_then(|p| match &p.value {
                Value::List(v) | Value::Set(v) => Some(v.clone()),
                _ => None,
            })
        })
    };
    let is_range =
        |p: &Pred| matches!(p.op, BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::StartsWith);
    let score = |i: &IndexRef| -> (usize, bool) {
        let mut eq = 0;
        for f in &i.fields {
            if eq_values(&f.name).is_some() {
                eq += 1;
            } else {
                return (eq, preds.iter().any(|p| p.prop == f.name && is_range(p)));
            }
        }
        (eq, false)
    };
    let best = ready
        .iter()
        .max_by(|a, b| {
            let (sa, sb) = (score(a), score(b));
            sa.cmp(&sb).then_with(|| b.fields.len().cmp(&a.fields.len())).then_with(|| b.id.cmp(&a.id))
        })
        .expect("at least one ready index")
        .clone();
    let (eq, has_range) = score(&best);
    let mut used = vec![false; preds.len()];
    // Point prefixes: the cartesian product of the equality / IN values of the leading fields.
    let mut prefixes: Vec<Vec<Value>> = vec![Vec::new()];
    let mut exact = !has_geo;
    for f in &best.fields[..eq] {
        let vals = eq_values(&f.name).expect("scored as equality");
        for (i, p) in preds.iter().enumerate() {
            if p.prop == f.name && matches!(p.op, BinaryOp::Eq | BinaryOp::In) {
                used[i] = true;
                break;
            }
        }
        exact &= f.exact();
        let mut vals: Vec<Value> = vals.into_iter().filter(|v| kind_fits(f.ty, v)).collect();
        vals.dedup();
        let mut next = Vec::new();
        for p in &prefixes {
            for v in &vals {
                let mut q = p.clone();
                q.push(v.clone());
                next.push(q);
            }
        }
        prefixes = next;
        if prefixes.len() > LOOKUP_POINTS_MAX {
            // Too many points: scan the index whole and re-check every row.
            return (vec![IndexScan { index: best, prefix: Vec::new(), range: None }], false);
        }
    }
    let mut range = None;
    if has_range {
        let f = &best.fields[eq];
        let mut r = IndexRange::default();
        let mut starts = None;
        for (i, p) in preds.iter().enumerate() {
            if p.prop != f.name || !is_range(p) {
                continue;
            }
            match p.op {
                BinaryOp::StartsWith => {
                    if starts.is_none() {
                        if let Value::String(s) = &p.value {
                            starts = Some(s.to_string());
                            used[i] = true;
                        }
                    }
                }
                BinaryOp::Gt | BinaryOp::Ge => {
                    let incl = p.op == BinaryOp::Ge;
                    if r.lower.as_ref().is_none_or(|(v, _)| p.value.total_cmp(v).is_gt()) {
                        r.lower = Some((p.value.clone(), incl));
                    }
                    used[i] = true;
                }
                _ => {
                    let incl = p.op == BinaryOp::Le;
                    if r.upper.as_ref().is_none_or(|(v, _)| p.value.total_cmp(v).is_lt()) {
                        r.upper = Some((p.value.clone(), incl));
                    }
                    used[i] = true;
                }
            }
        }
        if r.lower.is_none() && r.upper.is_none() {
            r.starts_with = starts;
        } else if starts.is_some() {
            // Both: the bounds scan, STARTS WITH is re-checked.
            exact = false;
        }
        exact &= f.exact() && r.starts_with.is_none();
        range = Some(r);
    }
    exact &= used.iter().all(|u| *u);
    let scans =
        prefixes.into_iter().map(|prefix| IndexScan { index: best.clone(), prefix, range: range.clone() }).collect();
    (scans, exact)
}

/// Whether `v` can be a key of a field of type `ty` (an `IN` list may hold other types, which match nothing).
fn kind_fits(ty: PropType, v: &Value) -> bool {
    value_kind(ty) == v.type_name()
}

/// EXPLAIN's name for a LOOKUP's scans, after NebulaGraph's operators.
pub(crate) fn scan_name(plan: &LookupPlan) -> &'static str {
    let ranged = plan.scans.iter().any(|s| s.range.is_some());
    let prefixed = plan.scans.iter().any(|s| !s.prefix.is_empty());
    match (plan.schema.kind, ranged, prefixed) {
        (SchemaKind::Tag, true, _) => "TagIndexRangeScan",
        (SchemaKind::Tag, false, true) => "TagIndexPrefixScan",
        (SchemaKind::Tag, false, false) => "TagIndexFullScan",
        (SchemaKind::Edge, true, _) => "EdgeIndexRangeScan",
        (SchemaKind::Edge, false, true) => "EdgeIndexPrefixScan",
        (SchemaKind::Edge, false, false) => "EdgeIndexFullScan",
    }
}

/// One scan as EXPLAIN shows it: `index[field==v, field>v AND field<=v]`, `index[*]` for a whole index.
pub(crate) fn describe_scan(s: &IndexScan) -> String {
    let mut parts: Vec<String> =
        s.index.fields.iter().zip(&s.prefix).map(|(f, v)| format!("{}=={v}", f.name)).collect();
    if let Some(r) = &s.range {
        let f = &s.index.fields[s.prefix.len()].name;
        let mut b = Vec::new();
        if let Some((v, incl)) = &r.lower {
            b.push(format!("{f}{}{v}", if *incl { ">=" } else { ">" }));
        }
        if let Some((v, incl)) = &r.upper {
            b.push(format!("{f}{}{v}", if *incl { "<=" } else { "<" }));
        }
        if let Some(p) = &r.starts_with {
            b.push(format!("{f} STARTS WITH {}", Value::str(p.clone())));
        }
        if !r.cells.is_empty() {
            b.push(format!("{f} in {} S2 cell ranges", r.cells.len()));
        }
        parts.push(b.join(" AND "));
    }
    if parts.is_empty() {
        parts.push("*".into());
    }
    format!("{}[{}]", s.index.name, parts.join(", "))
}
