//! FetchValidator: the tags or the edge type a FETCH reads, what its YIELD may use, and its vertex IDs or edge
//! keys (evaluated when constant), with NebulaGraph's messages.

use super::Validator;
use crate::constants::{column_text, eval_edge_key, eval_vid, reads_input, VidUse};
use quiver_api::{EdgeKeyVal, SchemaKind, SchemaRef, SpaceDesc};
use quiver_common::expr::{Expr, VertexRef};
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::{EdgeKey, YieldClause};

/// Where a FETCH's vertex IDs come from.
pub(crate) enum VertexIds {
    /// Constants, evaluated and checked.
    Constants(Vec<Value>),
    /// One per row of the input or of a variable, read by this expression.
    Rows(Expr),
}

/// Where a FETCH's edge keys come from.
pub(crate) enum EdgeKeys {
    Constants(Vec<EdgeKeyVal>),
    /// One per row of the input or of a variable, read by this key's expressions.
    Rows(EdgeKey),
}

/// `FETCH PROP ON tags ids YIELD ...`, bound.
pub(crate) struct BoundFetchVertices {
    /// The tags listed (every tag for `*`), then those only the YIELD reads: those are read too, but only listed
    /// ones decide which vertices are returned.
    pub schemas: Vec<SchemaRef>,
    pub listed: usize,
    /// `ON *`: a vertex is returned whatever tags it has.
    pub any_tag: bool,
    /// Every tag of the space: a vertex with none of the listed tags is still returned (with EMPTY values) when it
    /// has one of these.
    pub every_tag: Vec<SchemaRef>,
    pub ids: VertexIds,
    pub yield_clause: YieldClause,
}

/// `FETCH PROP ON e keys YIELD ...`, bound.
pub(crate) struct BoundFetchEdges {
    pub schema: SchemaRef,
    pub keys: EdgeKeys,
    pub yield_clause: YieldClause,
}

/// What a FETCH's YIELD refers to besides the fetched rows, collected while checking it.
#[derive(Default)]
struct YieldRefs {
    src_dst: bool,
    input_var: bool,
    /// Edge types other than the fetched one (FETCH on edges only).
    other_edge: bool,
    /// Tags read by `tag.prop` (FETCH on tags only).
    tags: Vec<SchemaRef>,
}

impl YieldRefs {
    /// NebulaGraph's errors for what a FETCH's YIELD may not use, in its order.
    fn check(&self, edge_name: Option<&str>) -> QResult<()> {
        if self.input_var {
            return Err(QError::semantic("unsupported input/variable property expression in yield."));
        }
        if self.src_dst {
            return Err(QError::semantic("unsupported src/dst property expression in yield."));
        }
        match edge_name {
            Some(name) if self.other_edge => Err(QError::semantic(format!("should use edge name `{name}'"))),
            _ => Ok(()),
        }
    }
}

impl Validator<'_> {
    pub(super) fn fetch_vertices(
        &self,
        tags: Option<&[String]>,
        vids: &[Expr],
        yield_clause: &YieldClause,
    ) -> QResult<BoundFetchVertices> {
        let space = self.space()?;
        let catalog = &self.engine.catalog;
        let mut schemas = match tags {
            None => catalog.schemas(space, SchemaKind::Tag),
            Some(names) => {
                names.iter().map(|n| catalog.schema(space, SchemaKind::Tag, n)).collect::<QResult<Vec<_>>>()?
            }
        };
        if yield_clause.columns.is_empty() {
            return Err(QError::semantic("Missing yield clause."));
        }
        let refs = self.fetch_yield(space, yield_clause, None)?;
        let listed = schemas.len();
        for t in refs.tags {
            if !schemas.iter().any(|s| s.id == t.id) {
                // NebulaGraph's FetchVerticesValidator: the YIELD reads only the tags listed.
                if tags.is_some() {
                    return Err(QError::semantic(format!("mismatched tag `{}'", t.name)));
                }
                schemas.push(t);
            }
        }
        let ids = if vids.iter().any(reads_input) {
            VertexIds::Rows(vids[0].clone())
        } else {
            VertexIds::Constants(
                vids.iter().map(|v| eval_vid(space, v, self.req.params, VidUse::Start)).collect::<QResult<_>>()?,
            )
        };
        Ok(BoundFetchVertices {
            schemas,
            listed,
            any_tag: tags.is_none(),
            every_tag: if tags.is_none() { Vec::new() } else { catalog.schemas(space, SchemaKind::Tag) },
            ids,
            yield_clause: yield_clause.clone(),
        })
    }

    pub(super) fn fetch_edges(
        &self,
        edge: &str,
        keys: &[EdgeKey],
        yield_clause: &YieldClause,
    ) -> QResult<BoundFetchEdges> {
        let space = self.space()?;
        let schema = self.engine.catalog.schema(space, SchemaKind::Edge, edge)?;
        if yield_clause.columns.is_empty() {
            return Err(QError::semantic("Missing yield clause."));
        }
        self.fetch_yield(space, yield_clause, Some(&schema))?;
        let reads =
            |k: &EdgeKey| reads_input(&k.src) || reads_input(&k.dst) || k.rank.as_ref().is_some_and(reads_input);
        let keys = if keys.iter().any(reads) {
            let [key] = keys else {
                return Err(QError::semantic("A FETCH of edges from a pipe or a variable takes one edge key."));
            };
            EdgeKeys::Rows(key.clone())
        } else {
            EdgeKeys::Constants(
                keys.iter()
                    .map(|k| eval_edge_key(space, k, schema.id, self.req.params, true))
                    .collect::<QResult<_>>()?,
            )
        };
        Ok(BoundFetchEdges { schema, keys, yield_clause: yield_clause.clone() })
    }

    /// Checks a FETCH's YIELD, as NebulaGraph's validators do: names resolve to existing tags and edge types
    /// (else TagNotFound / EdgeNotFound), properties exist, and nothing outside the fetched rows is used.
    fn fetch_yield(&self, space: &SpaceDesc, y: &YieldClause, edge: Option<&SchemaRef>) -> QResult<YieldRefs> {
        let catalog = &self.engine.catalog;
        let mut refs = YieldRefs::default();
        for c in &y.columns {
            let illegal = match edge {
                None => c.expr.any(&|e| matches!(e, Expr::Edge)),
                Some(_) => c.expr.any(&|e| matches!(e, Expr::Vertex(_))),
            };
            if illegal {
                return Err(QError::semantic(format!("illegal yield clauses `{}'", column_text(c))));
            }
            let mut err = None;
            c.expr.visit(&mut |e| {
                if err.is_some() {
                    return;
                }
                let res = (|| -> QResult<()> {
                    match e {
                        Expr::LabelProp { label, prop } => {
                            let schema = match edge {
                                None => catalog.schema(space, SchemaKind::Tag, label)?,
                                Some(s) if s.name == *label => s.clone(),
                                Some(_) => {
                                    catalog.schema(space, SchemaKind::Edge, label)?;
                                    refs.other_edge = true;
                                    return Ok(());
                                }
                            };
                            if schema.latest().prop_index(prop).is_none() {
                                return Err(QError::semantic(format!(
                                    "`{label}.{prop}', not found the property `{prop}'."
                                )));
                            }
                            if edge.is_none() && !refs.tags.iter().any(|t| t.id == schema.id) {
                                refs.tags.push(schema);
                            }
                        }
                        Expr::EdgeMetaProp { edge: label, .. } => match edge {
                            Some(s) if s.name != *label => {
                                catalog.schema(space, SchemaKind::Edge, label)?;
                                refs.other_edge = true;
                            }
                            _ => {}
                        },
                        Expr::SrcProp { tag, .. } | Expr::DstProp { tag, .. } => {
                            catalog.schema(space, SchemaKind::Tag, tag)?;
                            refs.src_dst = true;
                        }
                        Expr::Vertex(VertexRef::Src | VertexRef::Dst) => refs.src_dst = true,
                        Expr::InputProp(_) | Expr::VarProp { .. } => refs.input_var = true,
                        Expr::Aggregate { .. } => {
                            return Err(QError::not_supported(format!("Aggregate function `{e}' in FETCH")))
                        }
                        _ => {}
                    }
                    Ok(())
                })();
                err = res.err();
            });
            if let Some(e) = err {
                return Err(e);
            }
        }
        refs.check(edge.map(|s| s.name.as_str()))?;
        Ok(refs)
    }
}
