//! The rule-based optimizer: one ordered list of rules, each a rewrite of the plan tree.
//!
//! Every rule lives in its own file, whose doc comment states its preconditions and sketches the plan before and
//! after; `tests/queries/rules/<name>.test` checks the rows and the plan shape with the rule on and off. Rules
//! are applied in [`RULES`] order, each once over the whole tree, children before parents. Any rule can be
//! switched off by name for a session (`Session::disabled_rules`) or for a server (`quiver serve
//! --disable-rule`), to compare plans.
//!
//! **Invariant:** a rule changes how a query runs, never what it returns: with or without it, the same rows (in
//! the same order where the statement defines one) and the same errors.

mod fuse_count_traversal;
mod push_filter_into_go;
mod push_limit_into_go;
mod push_projection_into_go;
mod sort_limit_to_topn;

use crate::compose::Request;
use crate::plan::PlanNode;
use crate::QueryEngine;
use quiver_api::SpaceDesc;
use quiver_common::expr::{EdgeMeta, Expr, VertexRef};
use quiver_syntax::ast::{Direction, GoStatement};
use std::sync::Arc;

/// What a rule may consult: the catalog (through the engine), the current space, and the request's parameters.
pub(crate) struct RuleContext<'a> {
    pub engine: &'a QueryEngine,
    pub space: Option<Arc<SpaceDesc>>,
    pub req: &'a Request<'a>,
}

pub(crate) trait Rule: Sync {
    fn name(&self) -> &'static str;
    /// Rewrites `node` in place if the rule matches there; returns whether it did.
    fn apply(&self, node: &mut PlanNode, ctx: &RuleContext<'_>) -> bool;
}

/// The rules, in the order they run.
pub(crate) const RULES: &[&dyn Rule] = &[
    &fuse_count_traversal::FuseCountTraversal,
    &push_filter_into_go::PushFilterIntoGo,
    &push_projection_into_go::PushProjectionIntoGo,
    &sort_limit_to_topn::SortLimitToTopN,
    &push_limit_into_go::PushLimitIntoGo,
];

pub fn rule_names() -> Vec<&'static str> {
    RULES.iter().map(|r| r.name()).collect()
}

/// Applies every rule not in `disabled`; returns the names of the rules that changed the plan.
pub(crate) fn optimize(plan: &mut PlanNode, ctx: &RuleContext<'_>, disabled: &[String]) -> Vec<&'static str> {
    let mut applied = Vec::new();
    for rule in RULES {
        if disabled.iter().any(|d| d.eq_ignore_ascii_case(rule.name())) {
            continue;
        }
        let mut hit = false;
        plan.for_each_mut(&mut |n| hit |= rule.apply(n, ctx));
        if hit {
            applied.push(rule.name());
        }
    }
    applied
}

/// Whether `e` is the far end of the edges a GO's step walks: `id($$)`, `e._dst` when the GO walks only `e`,
/// `dst(edge)` going out and `src(edge)` going in.
pub(crate) fn is_far_end(e: &Expr, g: &GoStatement) -> bool {
    match e {
        Expr::EdgeMetaProp { edge, meta: EdgeMeta::Dst } => g.over.edges.as_ref().is_some_and(|es| es.len() == 1 && es[0] == *edge),
        Expr::Function { name, args } if args.len() == 1 => match (name.to_lowercase().as_str(), &args[0], g.over.direction) {
            ("id", Expr::Vertex(VertexRef::Dst), _) => true,
            ("dst", Expr::Edge, Direction::Out) => true,
            ("src", Expr::Edge, Direction::Reversely) => true,
            _ => false,
        },
        _ => false,
    }
}
