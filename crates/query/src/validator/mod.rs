//! The validator (binder): a sentence's names resolved against the catalog once, its constants evaluated and its
//! semantic errors raised before anything runs. Its output, a [`BoundSentence`], is what the planner, the optimizer
//! and the executors read; they never look a name up again. See `docs/design/query.md`.
//!
//! **Invariant:** the validator reads the catalog and the request (parameters, variables), never storage.

mod fetch;
mod go;

pub(crate) use fetch::{BoundFetchEdges, BoundFetchVertices, EdgeKeys, VertexIds};
pub(crate) use go::{BoundGo, VertexProps};

use crate::compose::Request;
use crate::lookup::LookupPlan;
use crate::QueryEngine;
use quiver_api::SpaceDesc;
use quiver_common::expr::Expr;
use quiver_common::{QError, QResult};
use quiver_syntax::ast::{SetOp, Statement, YieldClause};
use std::sync::Arc;

/// A sentence with its names resolved.
pub(crate) enum BoundSentence {
    Go(Box<BoundGo>),
    /// LOOKUP, with the index ranges chosen.
    Lookup(Box<LookupPlan>),
    FetchVertices(Box<BoundFetchVertices>),
    FetchEdges(Box<BoundFetchEdges>),
    /// Standalone or piped `YIELD [WHERE]`.
    Yield {
        yield_clause: YieldClause,
        filter: Option<Expr>,
    },
    OrderBy(Vec<(Expr, bool)>),
    Limit {
        offset: Expr,
        count: Expr,
    },
    GroupBy {
        keys: Vec<Expr>,
        yield_clause: YieldClause,
    },
    Pipe(Box<BoundSentence>, Box<BoundSentence>),
    SetOp {
        op: SetOp,
        left: Box<BoundSentence>,
        right: Box<BoundSentence>,
    },
    Assign {
        var: String,
        sentence: Box<BoundSentence>,
    },
    /// Run whole by the statement executor, which checks it itself (DDL, DML, admin).
    Statement(Statement),
}

/// What a sentence is validated against: the catalog (through the engine), the current space, and the request.
pub(crate) struct Validator<'a> {
    pub engine: &'a QueryEngine,
    pub space: Option<Arc<SpaceDesc>>,
    pub req: &'a Request<'a>,
}

impl Validator<'_> {
    /// The current space, or NebulaGraph's error for a sentence that needs one.
    fn space(&self) -> QResult<&Arc<SpaceDesc>> {
        self.space.as_ref().ok_or_else(|| QError::semantic("Space was not chosen."))
    }

    /// Binds `stmt`, the parts of a pipe and of a set operation left to right.
    pub fn sentence(&self, stmt: &Statement) -> QResult<BoundSentence> {
        Ok(match stmt {
            Statement::Go(g) => BoundSentence::Go(Box::new(self.go(g)?)),
            Statement::Lookup(l) => {
                let space = self.space()?;
                BoundSentence::Lookup(Box::new(self.engine.plan_lookup(space, l, self.req.params)?))
            }
            Statement::FetchVertices { tags, vids, yield_clause } => {
                BoundSentence::FetchVertices(Box::new(self.fetch_vertices(tags.as_deref(), vids, yield_clause)?))
            }
            Statement::FetchEdges { edge, keys, yield_clause } => {
                BoundSentence::FetchEdges(Box::new(self.fetch_edges(edge, keys, yield_clause)?))
            }
            Statement::Yield { yield_clause, filter } => {
                BoundSentence::Yield { yield_clause: yield_clause.clone(), filter: filter.clone() }
            }
            Statement::OrderBy(f) => BoundSentence::OrderBy(f.clone()),
            Statement::Limit { offset, count } => BoundSentence::Limit { offset: offset.clone(), count: count.clone() },
            Statement::GroupBy { keys, yield_clause } => {
                BoundSentence::GroupBy { keys: keys.clone(), yield_clause: yield_clause.clone() }
            }
            Statement::Pipe(left, right) => {
                BoundSentence::Pipe(Box::new(self.sentence(left)?), Box::new(self.sentence(right)?))
            }
            Statement::SetOp { op, left, right } => BoundSentence::SetOp {
                op: *op,
                left: Box::new(self.sentence(left)?),
                right: Box::new(self.sentence(right)?),
            },
            Statement::Assign { var, statement } => {
                BoundSentence::Assign { var: var.clone(), sentence: Box::new(self.sentence(statement)?) }
            }
            other => BoundSentence::Statement(other.clone()),
        })
    }
}
