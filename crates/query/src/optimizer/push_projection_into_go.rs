//! `push_projection_into_go`: a GO reads from storage only the edge properties its expressions use; with none,
//! storage answers from the in-memory topology without touching the key-value store.
//!
//! Preconditions: a GO whose property selection is not yet set. `edge` and `properties(edge)` need every
//! property; `e.prop` of a walked edge type needs `prop`.
//!
//! ```text
//! before:  Go [columns: like._dst]                 after:  Go [edge props: none; columns: like._dst]
//! before:  Go [columns: like.likeness, $$.p.name]  after:  Go [edge props: likeness; ...]
//! ```

use super::{Rule, RuleContext};
use crate::planner::{Op, PlanNode};
use quiver_api::PropSelection;
use quiver_common::expr::Expr;

pub(crate) struct PushProjectionIntoGo;

impl Rule for PushProjectionIntoGo {
    fn name(&self) -> &'static str {
        "push_projection_into_go"
    }

    fn apply(&self, node: &mut PlanNode, _ctx: &RuleContext<'_>) -> bool {
        let Op::Go(g) = &mut node.op else { return false };
        if g.props.is_some() {
            return false;
        }
        let edges = &g.go.edges;
        let mut all = false;
        let mut names: Vec<String> = Vec::new();
        let exprs =
            g.go.stmt
                .yield_clause
                .iter()
                .flat_map(|y| y.columns.iter().map(|c| &c.expr))
                .chain(g.go.stmt.filter.iter());
        for e in exprs {
            // `src(edge)`, `dst(edge)`, `rank(edge)` and `type(edge)` read the key, not the properties.
            let mut key_only: Vec<*const Expr> = Vec::new();
            e.visit(&mut |x| {
                if let Expr::Function { name, args } = x {
                    if args.len() == 1 && matches!(name.to_lowercase().as_str(), "src" | "dst" | "rank" | "type") {
                        key_only.push(&args[0] as *const Expr);
                    }
                }
            });
            e.visit(&mut |x| match x {
                Expr::Edge if !key_only.contains(&(x as *const Expr)) => all = true,
                Expr::LabelProp { label, prop }
                    if edges.iter().any(|(_, s)| s.name == *label) && !names.contains(prop) =>
                {
                    names.push(prop.clone());
                }
                _ => {}
            });
        }
        g.props = Some(if all {
            PropSelection::All
        } else if names.is_empty() {
            PropSelection::None
        } else {
            names.sort();
            PropSelection::Only(names)
        });
        true
    }
}
