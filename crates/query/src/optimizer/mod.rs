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
mod fuse_match_count;
mod fuse_match_rows;
mod merge_projections;
mod prune_match_columns;
mod prune_match_reads;
mod push_filter_into_go;
mod push_limit_into_find_path;
mod push_limit_into_go;
mod push_projection_into_go;
mod push_topn_bound_below_append;
mod push_topn_into_go;
mod remove_unused_columns;
mod sort_limit_to_topn;

use crate::planner::{Op, PlanNode};
use crate::request::Request;
use quiver_common::expr::{EdgeMeta, Expr, VertexRef};
use quiver_syntax::ast::{Direction, GoStatement};

/// What a rule may consult besides the plan: the request's parameters. Names were bound by the validator: a rule
/// reads them from the nodes it rewrites, never from the catalog.
pub(crate) struct RuleContext<'a> {
    pub req: &'a Request<'a>,
    pub storage: &'a dyn quiver_api::StorageClient,
    /// The space the statement reads, if one is chosen.
    pub space: Option<&'a quiver_api::SpaceDesc>,
}

impl RuleContext<'_> {
    /// Whether storage counts MATCH's paths in the statement's space (`StorageClient::counts_paths`): the rules that
    /// fuse a MATCH into a path count apply only then.
    pub fn counts_paths(&self) -> bool {
        self.space.is_none_or(|s| self.storage.counts_paths(s))
    }
}

pub(crate) trait Rule: Sync {
    fn name(&self) -> &'static str;
    /// Rewrites `node` in place if the rule matches there; returns whether it did.
    fn apply(&self, node: &mut PlanNode, ctx: &RuleContext<'_>) -> bool;
}

/// The rules, in the order they run.
pub(crate) const RULES: &[&dyn Rule] = &[
    &remove_unused_columns::RemoveUnusedColumns,
    &merge_projections::MergeProjections,
    &fuse_count_traversal::FuseCountTraversal,
    &fuse_match_count::FuseMatchCount,
    &fuse_match_rows::FuseMatchRows,
    &prune_match_reads::PruneMatchReads,
    &prune_match_columns::PruneMatchColumns,
    &push_filter_into_go::PushFilterIntoGo,
    &push_projection_into_go::PushProjectionIntoGo,
    &sort_limit_to_topn::SortLimitToTopN,
    &push_topn_into_go::PushTopNIntoGo,
    &push_topn_bound_below_append::PushTopNBoundBelowAppend,
    &push_limit_into_go::PushLimitIntoGo,
    &push_limit_into_find_path::PushLimitIntoFindPath,
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

/// Whether `e` is `COUNT(*)` (no DISTINCT).
pub(crate) fn is_count_star(e: &Expr) -> bool {
    matches!(e, Expr::Aggregate { name, arg: None, distinct: false } if name.eq_ignore_ascii_case("count"))
}

/// The column `e` reads the id of, when `e` is `id($-.column)`.
pub(crate) fn id_of(e: &Expr) -> Option<&str> {
    match e {
        Expr::Function { name, args } if args.len() == 1 && name.eq_ignore_ascii_case("id") => match &args[0] {
            Expr::InputProp(c) => Some(c),
            _ => None,
        },
        _ => None,
    }
}

/// Whether rows of `s` expire (the in-memory topology and a fused count cannot tell which did).
pub(crate) fn has_ttl(s: &quiver_api::SchemaRef) -> bool {
    s.ttl_duration > 0 && !s.ttl_col.is_empty()
}

/// Whether `e` is the far end of the edges a GO's step walks: `id($$)`, `e._dst` when the GO walks only `e`,
/// `dst(edge)` going out and `src(edge)` going in.
pub(crate) fn is_far_end(e: &Expr, g: &GoStatement) -> bool {
    match e {
        Expr::EdgeMetaProp { edge, meta: EdgeMeta::Dst } => {
            g.over.edges.as_ref().is_some_and(|es| es.len() == 1 && es[0] == *edge)
        }
        Expr::Function { name, args } if args.len() == 1 => matches!(
            (name.to_lowercase().as_str(), &args[0], g.over.direction),
            ("id", Expr::Vertex(VertexRef::Dst), _)
                | ("dst", Expr::Edge, Direction::Out)
                | ("src", Expr::Edge, Direction::Reversely)
        ),
        _ => false,
    }
}

/// The columns `node` outputs, when the plan knows them before running.
pub(crate) fn output_columns(node: &PlanNode) -> Option<Vec<String>> {
    match &node.op {
        Op::Go(g) => Some(g.go.columns()),
        Op::Project { yield_clause, .. } | Op::Aggregate { yield_clause, .. } => {
            Some(yield_clause.columns.iter().map(|c| c.name()).collect())
        }
        Op::Lookup(l) => Some(l.yield_clause.columns.iter().map(|c| c.name()).collect()),
        Op::Sort(_) | Op::Limit { .. } | Op::TopN { .. } => node.input.as_deref().and_then(output_columns),
        _ => None,
    }
}

/// Whether `e` evaluates without error on every row of an input whose columns are `input` (`None`: unknown,
/// so no `$-.c` is known to exist). Arithmetic (overflow), most functions (argument types) and parameters can fail.
pub(crate) fn cannot_fail(e: &Expr, input: Option<&[String]>) -> bool {
    !e.any(&|x| match x {
        Expr::Const(_)
        | Expr::LabelProp { .. }
        | Expr::EdgeMetaProp { .. }
        | Expr::SrcProp { .. }
        | Expr::DstProp { .. }
        | Expr::Edge => false,
        Expr::InputProp(c) => input.is_none_or(|cols| cols.iter().filter(|x| *x == c).count() != 1),
        Expr::Vertex(v) => matches!(v, VertexRef::Current),
        Expr::Function { name, .. } => {
            !matches!(name.to_lowercase().as_str(), "src" | "dst" | "rank" | "type" | "id" | "properties")
        }
        _ => true,
    })
}

/// The `$-.c` columns `exprs` read.
pub(crate) fn input_columns<'a>(exprs: impl IntoIterator<Item = &'a Expr>) -> Vec<String> {
    let mut cols = Vec::new();
    for e in exprs {
        e.visit(&mut |x| {
            if let Expr::InputProp(c) = x {
                if !cols.contains(c) {
                    cols.push(c.clone());
                }
            }
        });
    }
    cols
}

/// Whether any of `exprs` reads a variable (`$v.c`).
pub(crate) fn reads_var<'a>(mut exprs: impl Iterator<Item = &'a Expr>) -> bool {
    exprs.any(|e| e.any(&|x| matches!(x, Expr::VarProp { .. })))
}
