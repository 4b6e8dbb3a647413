//! `push_filter_into_go`: the conjuncts of a GO's WHERE that read only the edge are evaluated in storage, so
//! edges that fail them are never decoded into rows or joined with vertex properties.
//!
//! Preconditions: a GO with `N STEPS` (the WHERE applies to the last step only, which is the one storage then
//! filters), no SAMPLE/LIMIT (they cut each step before the filter), and a conjunct whose top operator is a
//! comparison or predicate and which reads only constants and `e.prop` / `e._src|_dst|_rank|_type` of edge types
//! the GO walks.
//!
//! ```text
//! before:  Go [filter: (like.likeness>90) AND ($$.player.age>30)]
//! after:   Go [storage filter: (like.likeness>90); filter: ($$.player.age>30)]
//! ```

use super::{Rule, RuleContext};
use crate::planner::{Op, PlanNode};
use quiver_common::expr::{BinaryOp, Expr, UnaryOp};

pub(crate) struct PushFilterIntoGo;

fn is_predicate(e: &Expr) -> bool {
    match e {
        Expr::Binary { op, .. } => {
            !matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod)
        }
        Expr::Unary { op, .. } => !matches!(op, UnaryOp::Plus | UnaryOp::Minus),
        _ => false,
    }
}

fn storage_can_evaluate(e: &Expr, edges: &[String]) -> bool {
    is_predicate(e)
        && !e.any(&|x| match x {
            Expr::LabelProp { label, .. } => !edges.contains(label),
            Expr::EdgeMetaProp { edge, .. } => !edges.contains(edge),
            Expr::Const(_) | Expr::Binary { .. } | Expr::Unary { .. } | Expr::List(_) | Expr::Set(_) => false,
            _ => true,
        })
}

impl Rule for PushFilterIntoGo {
    fn name(&self) -> &'static str {
        "push_filter_into_go"
    }

    fn apply(&self, node: &mut PlanNode, _ctx: &RuleContext<'_>) -> bool {
        let Op::Go(g) = &mut node.op else { return false };
        let stmt = &g.go.stmt;
        if g.storage_filter.is_some() || stmt.bounds.is_some() || !stmt.is_n_steps() || stmt.filter.is_none() {
            return false;
        }
        let names: Vec<String> = g.go.edges.iter().map(|(_, s)| s.name.clone()).collect();
        let parts = stmt.filter.as_ref().expect("checked").conjuncts().into_iter().cloned();
        let (pushed, kept): (Vec<Expr>, Vec<Expr>) = parts.partition(|c| storage_can_evaluate(c, &names));
        if pushed.is_empty() {
            return false;
        }
        g.storage_filter = Expr::and_all(pushed);
        g.go.stmt.filter = Expr::and_all(kept);
        true
    }
}
