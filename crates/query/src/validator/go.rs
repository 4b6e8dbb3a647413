//! GoValidator: the edge types a GO walks, the tags and properties its expressions read, its steps, its
//! LIMIT/SAMPLE bounds and its constant start vertices, resolved and checked with NebulaGraph's messages.

use super::Validator;
use crate::constants::{column_text, eval_vid, VidUse};
use quiver_api::{PropSelection, SchemaKind, SchemaRef, SpaceDesc};
use quiver_common::eval::eval;
use quiver_common::expr::{Expr, VertexRef};
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::{Direction, FromClause, GoStatement, OverClause, YieldClause};

/// A GO with its names resolved.
#[derive(Clone)]
pub(crate) struct BoundGo {
    /// The sentence as written. The optimizer may move WHERE conjuncts into storage or drop unused columns; every
    /// name its expressions use is one of `edges` or `tags`.
    pub stmt: GoStatement,
    /// The signed edge types walked: positive out, negative in (both for BIDIRECT).
    pub edges: Vec<(i32, SchemaRef)>,
    /// The tags the expressions read: each named by `$^.t.p` or `$$.t.p`, and every tag of the space when a whole
    /// vertex (`$^`, `$$`) is read.
    pub tags: Vec<SchemaRef>,
    /// The constant start vertices, evaluated; `None` when the GO starts from its input or a variable, or walks
    /// no step.
    pub starts: Option<Vec<Value>>,
    /// LIMIT/SAMPLE: a bound per step (empty without them).
    pub step_bounds: Vec<usize>,
}

/// What a GO's expressions read.
#[derive(Default)]
pub(crate) struct Needs {
    pub edge_props: bool,
    pub src_tags: Vec<SchemaRef>,
    pub dst_tags: Vec<SchemaRef>,
    /// The properties of those tags the expressions read (all of them where a whole vertex is used).
    pub src_props: VertexProps,
    pub dst_props: VertexProps,
    /// Whether the statement reads its input (`$-.c` or `$var.c`) outside FROM: then results join back onto
    /// every input row with the same start vertex.
    pub input: bool,
}

/// Which properties of a side's vertices a GO reads.
#[derive(Default)]
pub(crate) struct VertexProps {
    pub all: bool,
    pub names: Vec<String>,
}

impl VertexProps {
    fn add(&mut self, name: &str) {
        if !self.names.iter().any(|n| n == name) {
            self.names.push(name.to_string());
        }
    }

    pub fn selection(&self) -> PropSelection {
        if self.all {
            PropSelection::All
        } else {
            PropSelection::Only(self.names.clone())
        }
    }
}

fn add_tag(list: &mut Vec<SchemaRef>, s: &SchemaRef) {
    if !list.iter().any(|t| t.id == s.id) {
        list.push(s.clone());
    }
}

impl BoundGo {
    pub fn yield_clause(&self) -> &YieldClause {
        self.stmt.yield_clause.as_ref().expect("a bound GO has a YIELD")
    }

    /// The output columns.
    pub fn columns(&self) -> Vec<String> {
        self.yield_clause().columns.iter().map(|c| c.name()).collect()
    }

    /// The schema of edge type `name` among those walked.
    pub fn edge(&self, name: &str) -> Option<&SchemaRef> {
        self.edges.iter().find(|(_, s)| s.name == name).map(|(_, s)| s)
    }

    /// What the GO's expressions (and a WHERE pushed into storage) read, from the names bound at validation.
    pub fn needs(&self, storage_filter: Option<&Expr>) -> Needs {
        let mut needs = Needs::default();
        let exprs =
            self.yield_clause().columns.iter().map(|c| &c.expr).chain(self.stmt.filter.iter()).chain(storage_filter);
        for e in exprs {
            e.visit(&mut |x| match x {
                Expr::LabelProp { label, .. } if self.edge(label).is_some() => needs.edge_props = true,
                Expr::Edge => needs.edge_props = true,
                Expr::SrcProp { tag, prop } | Expr::DstProp { tag, prop } => {
                    let s = self.tags.iter().find(|s| s.name == *tag).expect("the validator bound every tag read");
                    if matches!(x, Expr::SrcProp { .. }) {
                        add_tag(&mut needs.src_tags, s);
                        needs.src_props.add(prop);
                    } else {
                        add_tag(&mut needs.dst_tags, s);
                        needs.dst_props.add(prop);
                    }
                }
                Expr::Vertex(VertexRef::Src) => {
                    self.tags.iter().for_each(|s| add_tag(&mut needs.src_tags, s));
                    needs.src_props.all = true;
                }
                Expr::Vertex(VertexRef::Dst) => {
                    self.tags.iter().for_each(|s| add_tag(&mut needs.dst_tags, s));
                    needs.dst_props.all = true;
                }
                Expr::InputProp(_) | Expr::VarProp { .. } => needs.input = true,
                _ => {}
            });
        }
        needs
    }
}

impl Validator<'_> {
    /// GoValidator. Errors come in NebulaGraph's order: the YIELD, the edge types, the expressions, the steps,
    /// the LIMIT/SAMPLE list, then the start vertices.
    pub(super) fn go(&self, g: &GoStatement, input_cols: &super::Columns) -> QResult<BoundGo> {
        let space = self.space()?;
        let Some(yield_clause) = &g.yield_clause else {
            return Err(QError::semantic("Missing yield clause."));
        };
        let edges = self.over_edges(space, &g.over)?;
        let tags = self.go_tags(space, g, yield_clause, &edges, input_cols)?;
        let mut bound = BoundGo { stmt: g.clone(), edges, tags, starts: None, step_bounds: Vec::new() };
        let min_steps = g.min_steps.max(1);
        if g.max_steps == 0 || g.max_steps < min_steps {
            if g.max_steps != 0 {
                return Err(QError::semantic(format!(
                    "`{} TO {} STEPS', upper bound steps should be greater than lower bound.",
                    g.min_steps, g.max_steps
                )));
            }
            // No step: no rows, whatever the starts and bounds are.
            return Ok(bound);
        }
        bound.step_bounds = self.step_bounds(g)?;
        if let FromClause::Vids(exprs) = &g.from {
            let mut starts: Vec<Value> =
                exprs.iter().map(|e| eval_vid(space, e, self.req.params, VidUse::Start)).collect::<QResult<_>>()?;
            // The start vertices are a set, as in NebulaGraph: `GO FROM "a", "a"` walks from "a" once.
            let mut seen = quiver_common::fasthash::FastSet::default();
            starts.retain(|v| seen.insert(v.clone()));
            bound.starts = Some(starts);
        }
        Ok(bound)
    }

    /// The signed edge types an OVER clause follows (GO, FIND PATH).
    pub(super) fn over_edges(&self, space: &SpaceDesc, over: &OverClause) -> QResult<Vec<(i32, SchemaRef)>> {
        let catalog = &self.engine.catalog;
        let schemas = match &over.edges {
            None => {
                let all = catalog.schemas(space, SchemaKind::Edge);
                if all.is_empty() {
                    return Err(QError::semantic(format!("No edge type found in space `{}'", space.name)));
                }
                all
            }
            Some(names) => names
                .iter()
                .map(|n| {
                    catalog
                        .schema(space, SchemaKind::Edge, n)
                        .map_err(|_| QError::semantic(format!("{n} not found in space [{}].", space.name)))
                })
                .collect::<QResult<Vec<_>>>()?,
        };
        let mut out = Vec::new();
        for s in schemas {
            match over.direction {
                Direction::Out => out.push((s.id, s)),
                Direction::Reversely => out.push((-s.id, s)),
                Direction::Bidirect => {
                    out.push((s.id, s.clone()));
                    out.push((-s.id, s));
                }
            }
        }
        Ok(out)
    }

    fn step_bounds(&self, g: &GoStatement) -> QResult<Vec<usize>> {
        let Some(b) = &g.bounds else {
            return Ok(Vec::new());
        };
        if b.counts.len() != g.max_steps as usize {
            let list = b.counts.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(",");
            return Err(QError::semantic(format!("`[{list}]' length must be equal to GO step size {}.", g.max_steps)));
        }
        b.counts
            .iter()
            .map(|e| match eval(e, &self.req.param_context())? {
                Value::Int(n) if n >= 0 => Ok(n as usize),
                Value::Int(_) => Err(QError::semantic("Limit/Sample element must be nonnegative.")),
                _ => Err(QError::semantic("Limit/Sample element type must be Integer.")),
            })
            .collect()
    }

    /// Checks a GO's expressions against the catalog; returns the tags they read (every tag of the space when a
    /// whole vertex is read).
    fn go_tags(
        &self,
        space: &SpaceDesc,
        g: &GoStatement,
        y: &YieldClause,
        edges: &[(i32, SchemaRef)],
        input_cols: &super::Columns,
    ) -> QResult<Vec<SchemaRef>> {
        let catalog = &self.engine.catalog;
        for c in &y.columns {
            if c.expr.any(&|e| matches!(e, Expr::Vertex(VertexRef::Current))) {
                return Err(QError::semantic(format!("`{}' is not support in go sentence.", column_text(c))));
            }
            if c.expr.has_aggregate() {
                return Err(QError::semantic(format!("`{}', not support aggregate function in go sentence.", c.expr)));
            }
        }
        let mut tags = Vec::new();
        let mut whole_vertex = false;
        for e in y.columns.iter().map(|c| &c.expr).chain(g.filter.iter()) {
            // A bare name names nothing in a GO.
            if let Some(name) = super::unbound_label(e) {
                return Err(QError::semantic(format!("Invalid label identifiers: {name}")));
            }
            let mut err = None;
            e.visit(&mut |x| {
                if err.is_some() {
                    return;
                }
                let r = (|| -> QResult<()> {
                    match x {
                        Expr::LabelProp { label, prop } => {
                            let Some((_, s)) = edges.iter().find(|(_, s)| s.name == *label) else {
                                catalog.schema(space, SchemaKind::Edge, label)?;
                                return Ok(());
                            };
                            if s.latest().prop_index(prop).is_none() {
                                return Err(QError::semantic(format!(
                                    "`{label}.{prop}', not found the property `{prop}'."
                                )));
                            }
                        }
                        Expr::EdgeMetaProp { edge, .. } if !edges.iter().any(|(_, s)| s.name == *edge) => {
                            catalog.schema(space, SchemaKind::Edge, edge)?;
                        }
                        Expr::SrcProp { tag, prop } | Expr::DstProp { tag, prop } => {
                            let s = catalog.schema(space, SchemaKind::Tag, tag)?;
                            if s.latest().prop_index(prop).is_none() {
                                let side = if matches!(x, Expr::SrcProp { .. }) { "$^" } else { "$$" };
                                return Err(QError::semantic(format!(
                                    "`{side}.{tag}.{prop}', not found the property `{prop}'."
                                )));
                            }
                            add_tag(&mut tags, &s);
                        }
                        Expr::Vertex(VertexRef::Src | VertexRef::Dst) => whole_vertex = true,
                        _ => {}
                    }
                    Ok(())
                })();
                err = r.err();
            });
            if let Some(e) = err {
                return Err(e);
            }
        }
        // NebulaGraph's GoValidator: the WHERE and YIELD read the input or the variable FROM names, one at most.
        let (input, vars) = super::sources(y.columns.iter().map(|c| &c.expr).chain(g.filter.iter()));
        let from_var = match &g.from {
            FromClause::Ref(Expr::VarProp { var, .. }) => Some(var),
            _ => None,
        };
        if input && !matches!(&g.from, FromClause::Ref(Expr::InputProp(_))) {
            // A column the input lacks is found first, as NebulaGraph types the YIELD before this check.
            let exprs = y.columns.iter().map(|c| &c.expr).chain(g.filter.iter());
            return Err(missing_input_column(exprs, input_cols)
                .unwrap_or_else(|| QError::semantic("$- must be referred in FROM before used in WHERE or YIELD")));
        }
        if let Some(first) = vars.first() {
            let elsewhere = || QError::semantic("A variable must be referred in FROM before used in WHERE or YIELD");
            let Some(from_var) = from_var else { return Err(elsewhere()) };
            if vars.len() > 1 {
                return Err(QError::semantic("Multiple variable property is not supported in WHERE or YIELD"));
            }
            if first != from_var {
                return Err(elsewhere());
            }
        }
        if whole_vertex {
            // Every tag, in the catalog's order (the named ones among them).
            return Ok(catalog.schemas(space, SchemaKind::Tag));
        }
        Ok(tags)
    }
}

/// The error for the first `$-.c` of `exprs` whose column the input (`cols`) lacks.
fn missing_input_column<'e>(exprs: impl IntoIterator<Item = &'e Expr>, cols: &super::Columns) -> Option<QError> {
    let mut missing = None;
    for e in exprs {
        e.visit(&mut |x| {
            if let Expr::InputProp(c) = x {
                if missing.is_none() && !cols.as_ref().is_none_or(|cols| cols.contains(c)) {
                    missing = Some(QError::semantic(format!("`$-.{c}', not exist prop `{c}'")));
                }
            }
        });
    }
    missing
}
