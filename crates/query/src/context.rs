//! Evaluation contexts of the statements in this crate.

use crate::Params;
use quiver_api::Props;
use quiver_common::eval::EvalContext;
use quiver_common::expr::{EdgeMeta, VertexRef};
use quiver_common::value::{Edge, Tag, Vertex};
use quiver_common::{QError, QResult, Value};
use std::sync::Arc;

/// Parameters only.
pub struct ParamContext<'a> {
    pub params: &'a Params,
}

impl EvalContext for ParamContext<'_> {
    fn param(&self, name: &str) -> QResult<Value> {
        self.params
            .get(name)
            .cloned()
            .ok_or_else(|| QError::semantic(format!("Undefined parameter or variable `${name}'")))
    }

    // `label.prop` keeps the default, NebulaGraph's `Invalid label identifiers: label`; an edge's `_src`, `_dst`,
    // `_rank` or `_type` reads an edge, which a YIELD does not have.
    fn edge_meta(&self, _edge: &str, _meta: quiver_common::expr::EdgeMeta) -> QResult<Value> {
        Err(QError::semantic("Only support input and variable in yield sentence."))
    }
}

/// A fetched vertex: `tag.prop`, `vertex`, and parameters.
pub struct VertexContext<'a> {
    pub params: &'a Params,
    pub vertex: &'a Vertex,
    /// Tags the YIELD reads that the FETCH does not list: readable, but not part of `vertex`.
    pub extra: &'a [(String, Props)],
}

impl EvalContext for VertexContext<'_> {
    fn param(&self, name: &str) -> QResult<Value> {
        ParamContext { params: self.params }.param(name)
    }

    fn label_prop(&self, label: &str, prop: &str) -> QResult<Value> {
        let props = match self.vertex.tags.iter().find(|t| t.name == label) {
            Some(t) => Some(&t.props),
            None => self.extra.iter().find(|(n, _)| n == label).map(|(_, p)| p),
        };
        Ok(props.and_then(|p| p.get(prop)).cloned().unwrap_or(Value::Empty))
    }

    fn vertex(&self, which: VertexRef) -> QResult<Value> {
        match which {
            VertexRef::Current => Ok(Value::Vertex(Arc::new(self.vertex.clone()))),
            _ => Err(QError::semantic("unsupported src/dst property expression in yield.")),
        }
    }
}

/// A fetched edge: `e.prop`, `e._src`..., `edge`, and parameters.
pub struct EdgeContext<'a> {
    pub params: &'a Params,
    pub edge: &'a Edge,
}

impl EvalContext for EdgeContext<'_> {
    fn param(&self, name: &str) -> QResult<Value> {
        ParamContext { params: self.params }.param(name)
    }

    fn label_prop(&self, label: &str, prop: &str) -> QResult<Value> {
        if label != self.edge.name {
            return Ok(Value::Empty);
        }
        Ok(self.edge.props.get(prop).cloned().unwrap_or(Value::Empty))
    }

    fn edge_meta(&self, edge: &str, meta: EdgeMeta) -> QResult<Value> {
        if edge != self.edge.name {
            return Ok(Value::Empty);
        }
        Ok(match meta {
            EdgeMeta::Src => self.edge.src.clone(),
            EdgeMeta::Dst => self.edge.dst.clone(),
            EdgeMeta::Rank => Value::Int(self.edge.ranking),
            EdgeMeta::Type => Value::Int(self.edge.edge_type as i64),
        })
    }

    fn edge(&self) -> QResult<Value> {
        Ok(Value::Edge(Arc::new(self.edge.clone())))
    }
}

/// The row being updated by UPDATE/UPSERT: bare property names and `schema.prop` read the row as updated so far.
pub struct UpdateContext<'a> {
    pub params: &'a Params,
    pub schema_name: &'a str,
    pub props: &'a Props,
    pub is_edge: bool,
    pub edge_key: Option<(&'a Value, &'a Value, i64, i32)>,
}

impl UpdateContext<'_> {
    fn prop(&self, prop: &str) -> QResult<Value> {
        self.props.get(prop).cloned().ok_or_else(|| {
            QError::execution(if self.is_edge {
                "Storage Error: Edge prop not found."
            } else {
                "Storage Error: Tag prop not found."
            })
        })
    }
}

impl EvalContext for UpdateContext<'_> {
    fn param(&self, name: &str) -> QResult<Value> {
        ParamContext { params: self.params }.param(name)
    }

    fn label(&self, name: &str) -> QResult<Value> {
        self.prop(name)
    }

    fn label_prop(&self, label: &str, prop: &str) -> QResult<Value> {
        if label != self.schema_name {
            return Err(QError::semantic(format!("Has wrong expr in `{label}.{prop}'")));
        }
        self.prop(prop)
    }

    fn src_prop(&self, tag: &str, prop: &str) -> QResult<Value> {
        if self.is_edge {
            return Err(QError::semantic(format!("Has wrong expr in `$^.{tag}.{prop}'")));
        }
        self.label_prop(tag, prop)
    }

    fn edge_meta(&self, edge: &str, meta: EdgeMeta) -> QResult<Value> {
        let Some((src, dst, rank, et)) = self.edge_key else {
            return Err(QError::semantic(format!("Invalid label identifiers: {edge}")));
        };
        if edge != self.schema_name {
            return Err(QError::semantic(format!("Has wrong expr in `{edge}.{}'", meta.name())));
        }
        Ok(match meta {
            EdgeMeta::Src => src.clone(),
            EdgeMeta::Dst => dst.clone(),
            EdgeMeta::Rank => Value::Int(rank),
            EdgeMeta::Type => Value::Int(et as i64),
        })
    }
}

pub fn make_vertex(vid: Value, tags: Vec<(String, Props)>) -> Vertex {
    let mut tags: Vec<Tag> = tags.into_iter().map(|(name, props)| Tag { name, props }).collect();
    tags.sort_by(|a, b| a.name.cmp(&b.name));
    Vertex { vid, tags }
}
