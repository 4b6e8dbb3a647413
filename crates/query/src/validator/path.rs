//! FindPathValidator and SubgraphValidator: FIND PATH's and GET SUBGRAPH's edge types, ends, WHERE and YIELD,
//! resolved and checked with NebulaGraph's messages (`docs/design/paths.md`).

use super::Validator;
use crate::constants::{column_text, eval_vid, VidUse};
use quiver_api::{PathKind, SchemaKind, SchemaRef, SpaceDesc};
use quiver_common::eval::eval;
use quiver_common::expr::{BinaryOp, Expr};
use quiver_common::{PropType, QError, QResult, Value};
use quiver_syntax::ast::{FindPathStatement, FromClause, PathSearch, SubgraphEdge, SubgraphStatement, YieldClause};

/// Where a search's sources or targets come from.
#[derive(Clone)]
pub(crate) enum Ends {
    /// Constants, evaluated.
    Vids(Vec<Value>),
    /// A column of the input or of a variable (`$-.c`, `$v.c`), read when the statement runs.
    Column(Expr),
}

/// A FIND PATH with its names resolved.
pub(crate) struct BoundFindPath {
    pub kind: PathKind,
    pub with_prop: bool,
    pub from: Ends,
    pub to: Ends,
    /// Signed edge types walked from the sources (both signs for BIDIRECT).
    pub edges: Vec<(i32, SchemaRef)>,
    /// The WHERE, parameters replaced by their values and edge types outside OVER by EMPTY: what storage
    /// evaluates per edge during the search.
    pub filter: Option<Expr>,
    /// The edge properties the WHERE reads: what ALL and NOLOOP paths carry without WITH PROP.
    pub filter_props: Vec<String>,
    pub max_steps: u32,
    pub column: String,
    /// Every tag of the space: what a WITH PROP vertex shows.
    pub tags: Vec<SchemaRef>,
    /// Stop after this many paths (`| LIMIT n` pushed into the search by the optimizer).
    pub limit: Option<usize>,
}

/// What a GET SUBGRAPH column yields.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubgraphColumn {
    Vertices,
    Edges,
}

/// A GET SUBGRAPH with its names resolved.
pub(crate) struct BoundSubgraph {
    pub with_prop: bool,
    pub steps: u32,
    pub from: Ends,
    /// Signed edge types walked from each round's vertices.
    pub edges: Vec<(i32, SchemaRef)>,
    /// Whether the edge types are walked both ways (BOTH, or no direction clause): an edge is then listed once.
    pub bidirect: Vec<i32>,
    /// The WHERE's conjuncts on edges, evaluated by storage; parameters replaced by their values.
    pub edge_filter: Option<Expr>,
    /// Its conjuncts on the far vertex (`$$.tag.prop`), checked on each vertex before it is expanded (never on
    /// the start vertices).
    pub tag_filter: Option<Expr>,
    /// The edge properties the WHERE reads: what edges carry without WITH PROP.
    pub filter_props: Vec<String>,
    pub columns: Vec<(String, SubgraphColumn)>,
    /// Every tag of the space.
    pub tags: Vec<SchemaRef>,
}

impl Validator<'_> {
    /// FindPathValidator: the YIELD, then the edge types, the WHERE and the ends, as NebulaGraph checks them.
    pub(super) fn find_path(&self, f: &FindPathStatement) -> QResult<BoundFindPath> {
        let space = self.space()?;
        let column = path_column(f.yield_clause.as_ref())?;
        let edges = self.over_edges(space, &f.over)?;
        let (filter, filter_props) = match &f.filter {
            None => (None, Vec::new()),
            Some(w) => {
                if w.any(&|e| {
                    matches!(e, Expr::SrcProp { .. } | Expr::DstProp { .. } | Expr::InputProp(_) | Expr::VarProp { .. })
                }) {
                    return Err(QError::semantic(format!("Not support `{w}' in where sentence.")));
                }
                let (filter, props) = self.edge_condition(space, w, &edges)?;
                (Some(filter), props)
            }
        };
        let from = self.ends(space, &f.from)?;
        let to = self.ends(space, &f.to)?;
        Ok(BoundFindPath {
            kind: match f.kind {
                PathSearch::Shortest => PathKind::Shortest,
                PathSearch::SingleShortest => PathKind::SingleShortest,
                PathSearch::All => PathKind::All,
                PathSearch::NoLoop => PathKind::NoLoop,
            },
            with_prop: f.with_prop,
            from,
            to,
            edges,
            filter,
            filter_props,
            max_steps: f.upto,
            column,
            tags: self.engine.catalog.schemas(space, SchemaKind::Tag),
            limit: None,
        })
    }

    /// SubgraphValidator: the steps, the YIELD, the edge lists, the WHERE and the starts.
    pub(super) fn get_subgraph(&self, g: &SubgraphStatement) -> QResult<BoundSubgraph> {
        let space = self.space()?;
        let min = g.min_steps.max(1);
        if g.max_steps < min && g.min_steps != g.max_steps {
            return Err(QError::semantic(format!(
                "`{} TO {} STEPS', upper bound steps should be greater than lower bound.",
                g.min_steps, g.max_steps
            )));
        }
        // `m TO n STEPS` walks `m` steps, as NebulaGraph's planner does.
        let steps = g.min_steps;
        let Some(y) = &g.yield_clause else {
            return Err(QError::semantic("Missing yield clause."));
        };
        let mut columns = Vec::new();
        for c in &y.columns {
            let kind = match &c.expr {
                Expr::Label(l) if l == "VERTICES" => SubgraphColumn::Vertices,
                Expr::Label(l) if l == "EDGES" => {
                    if steps == 0 {
                        return Err(QError::semantic("Get Subgraph 0 STEPS only support YIELD vertices"));
                    }
                    SubgraphColumn::Edges
                }
                _ => return Err(QError::semantic("Get Subgraph only support YIELD vertices OR edges")),
            };
            columns.push((c.name(), kind));
        }
        let catalog = &self.engine.catalog;
        let mut edges: Vec<(i32, SchemaRef)> = Vec::new();
        let mut bidirect = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let lists: [(&[SubgraphEdge], &[i32]); 3] =
            [(&g.in_edges, &[-1]), (&g.out_edges, &[1]), (&g.both_edges, &[1, -1])];
        for (list, signs) in lists {
            for e in list {
                if e.renamed {
                    return Err(QError::semantic("Get Subgraph not support rename edge name."));
                }
                let s = catalog.schema(space, SchemaKind::Edge, &e.name)?;
                for sign in signs {
                    edges.push((sign * s.id, s.clone()));
                    if signs.len() == 2 {
                        bidirect.push(sign * s.id);
                    }
                }
                if !names.contains(&s.name) {
                    names.push(s.name.clone());
                }
            }
        }
        let listed = !edges.is_empty();
        if !listed {
            for s in catalog.schemas(space, SchemaKind::Edge) {
                edges.push((s.id, s.clone()));
                edges.push((-s.id, s.clone()));
                bidirect.extend([s.id, -s.id]);
            }
        }
        let (mut edge_filter, mut tag_filter, mut filter_props) = (None, None, Vec::new());
        if let Some(w) = &g.filter {
            if w.any(&|e| {
                matches!(
                    e,
                    Expr::Aggregate { .. }
                        | Expr::SrcProp { .. }
                        | Expr::InputProp(_)
                        | Expr::VarProp { .. }
                        | Expr::Binary { op: BinaryOp::Or, .. }
                )
            }) {
                return Err(QError::semantic(format!("Not support `{w}' in where sentence.")));
            }
            let (filter, props) = self.edge_condition(space, w, &edges)?;
            if listed {
                let mut err = None;
                w.visit(&mut |e| {
                    if let Expr::LabelProp { label, .. } = e {
                        if err.is_none() && !names.contains(label) {
                            names.sort();
                            err = Some(QError::semantic(format!(
                                "Edge type \"{label}\" in filter \"{w}\" is not in the edge types [{}]",
                                names.join(",")
                            )));
                        }
                    }
                });
                if let Some(e) = err {
                    return Err(e);
                }
            }
            let (mut on_edges, mut on_vertex) = (Vec::new(), Vec::new());
            for c in filter.conjuncts() {
                let dst = c.any(&|e| matches!(e, Expr::DstProp { .. }));
                let edge = c.any(&|e| matches!(e, Expr::LabelProp { .. } | Expr::EdgeMetaProp { .. }));
                match (dst, edge) {
                    (true, true) => return Err(QError::semantic(format!("Push target vertices filter error: {w}"))),
                    (true, false) => on_vertex.push(c.clone()),
                    (false, _) => on_edges.push(c.clone()),
                }
            }
            edge_filter = Expr::and_all(on_edges);
            tag_filter = Expr::and_all(on_vertex);
            filter_props = props;
        }
        let from = self.ends(space, &g.from)?;
        Ok(BoundSubgraph {
            with_prop: g.with_prop,
            steps,
            from,
            edges,
            bidirect,
            edge_filter,
            tag_filter,
            filter_props,
            columns,
            tags: catalog.schemas(space, SchemaKind::Tag),
        })
    }

    /// A WHERE over edges: each `e.prop` checked against the catalog, parameters replaced by their values, a
    /// constant condition checked to be boolean. Returns the condition storage evaluates and the properties it
    /// reads.
    fn edge_condition(&self, space: &SpaceDesc, w: &Expr, edges: &[(i32, SchemaRef)]) -> QResult<(Expr, Vec<String>)> {
        let mut undefined = Vec::new();
        w.visit(&mut |e| {
            if let Expr::Param(p) = e {
                if !self.req.params.contains_key(p) && !undefined.contains(p) {
                    undefined.push(p.clone());
                }
            }
        });
        if !undefined.is_empty() {
            return Err(QError::semantic(format!("Undefined parameters: {}", undefined.join(", "))));
        }
        let catalog = &self.engine.catalog;
        let mut props = Vec::new();
        let mut err = None;
        w.visit(&mut |e| {
            if err.is_some() {
                return;
            }
            if let Expr::LabelProp { label, prop } = e {
                match catalog.schema(space, SchemaKind::Edge, label) {
                    Err(e) => err = Some(e),
                    Ok(s) if s.latest().prop_index(prop).is_none() => {
                        err = Some(QError::semantic(format!("`{label}.{prop}', not found the property `{prop}'.")))
                    }
                    Ok(_) => {
                        if !props.contains(prop) {
                            props.push(prop.clone());
                        }
                    }
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        let mut filter = w.clone();
        let params = self.req.params;
        filter.visit_mut(&mut |e| match e {
            Expr::Param(p) => *e = Expr::Const(params.get(p.as_str()).cloned().unwrap_or(Value::Empty)),
            // Another edge type's property is EMPTY on every edge walked.
            Expr::LabelProp { label, .. } if !edges.iter().any(|(_, s)| s.name == *label) => {
                *e = Expr::Const(Value::Empty)
            }
            _ => {}
        });
        // The condition's type, as NebulaGraph deduces it: evaluated once with a value of each property's type in
        // place of the property (a condition whose value depends on the data is never refused here).
        let mut typed = filter.clone();
        let mut deducible = true;
        typed.visit_mut(&mut |e| {
            if let Expr::LabelProp { label, prop } = e {
                let ty = edges
                    .iter()
                    .find(|(_, s)| s.name == *label)
                    .and_then(|(_, s)| s.latest().prop_index(prop).map(|i| s.latest().props[i].ty));
                match ty.and_then(sample) {
                    Some(v) => *e = Expr::Const(v),
                    None => deducible = false,
                }
            }
        });
        if deducible && super::is_constant(&typed) {
            if let Ok(v) = eval(&typed, &self.req.param_context()) {
                if !matches!(v, Value::Bool(_) | Value::Null(_) | Value::Empty) {
                    return Err(QError::semantic(format!(
                        "`{w}', expected Boolean, but was `{}'",
                        v.type_name().to_uppercase()
                    )));
                }
            }
        }
        Ok((filter, props))
    }

    fn ends(&self, space: &SpaceDesc, f: &FromClause) -> QResult<Ends> {
        Ok(match f {
            FromClause::Vids(exprs) => Ends::Vids(
                exprs.iter().map(|e| eval_vid(space, e, self.req.params, VidUse::Start)).collect::<QResult<_>>()?,
            ),
            FromClause::Ref(e) => Ends::Column(e.clone()),
        })
    }
}

/// A value of a property type, for deducing an expression's type by evaluating it; `None` for the types whose
/// values are not all of one kind of value.
fn sample(ty: PropType) -> Option<Value> {
    Some(match ty {
        PropType::Bool => Value::Bool(true),
        PropType::Int8 | PropType::Int16 | PropType::Int32 | PropType::Int64 | PropType::Timestamp => Value::Int(1),
        PropType::Float | PropType::Double => Value::Float(1.0),
        PropType::String | PropType::FixedString(_) => Value::String("a".into()),
        _ => return None,
    })
}

/// FIND PATH's one column: `path AS alias`.
fn path_column(y: Option<&YieldClause>) -> QResult<String> {
    let Some(y) = y else {
        return Err(QError::semantic("Missing yield clause."));
    };
    if y.columns.len() != 1 {
        return Err(QError::semantic("Only support yield path"));
    }
    let c = &y.columns[0];
    if !matches!(&c.expr, Expr::Label(l) if l == "PATH") {
        return Err(QError::semantic(format!("Illegal yield clauses `{}'. only support yield path", column_text(c))));
    }
    Ok(c.name())
}
