//! `fuse_match_rows`: a MATCH path whose rows read only its last node (and its last edge) is walked as one
//! storage-side path count per far end (per last edge), and the rows are produced per far end (per last edge), then
//! repeated once per path.
//!
//! Preconditions: a `RETURN` or `WITH` (a `Project` without aggregates or its own filter) whose columns read
//! nothing but the path's last node `d` and last edge (no `rand()`), above only `Filter`s that read nothing but
//! those, above one
//! path that [`fuse_match_count`](super::fuse_match_count) could count, except that `d` may have labels and a
//! property map (its `AppendVertices` stays and checks them), and it has two hops or more (the paths of one hop
//! rarely meet at a far end, so there would be little to share) or one hop whose rows read `d` only as `d.tag.prop`
//! and `id(d)`, and not the edge (then what the count gives is far ends known to exist, whose properties are read as
//! columns without a vertex value per far end: 1-hop reads of the far ends' properties took 15 % less time).
//!
//! When the rows read the last hop's edge `e` too (`RETURN e.time, d.name`), every path ending with the same edge
//! gives the same row: storage counts paths per last edge (`ExpandOutput::LastEdges`: the paths reaching its near
//! end, less those that used it already), the edges' properties are read once per edge (`PathEdgeCount`), and `d`
//! once per edge.
//!
//! Every path ending at the same `d` gives the same row, so the row is computed once per distinct `d` and repeated
//! as many times as paths reach it (`Repeat`; nothing is repeated under DISTINCT, which would remove the copies).
//! Storage enumerates only the paths one hop short of the end, counts the last hop per far end (see
//! `quiver_api::ExpandRequest::paths`), and `d` is read once per distinct far end instead of once per path.
//! Rows come out grouped by `d` rather than in walking order; a MATCH defines no order of its own.
//!
//! When `d` has no label or property map and is read only as `d.tag.prop` and by `id()`, the far ends (known to
//! exist) get no vertex value beyond their VID: the properties are read as columns (`AppendVertices {columns:
//! ...}`) into hidden columns `__d.tag.prop`, which the rewritten expressions read (a column keeps its name).
//!
//! ```text
//! before:  Project [id(d)]                    after:  Repeat [count: __paths]
//!            AppendVertices [d]                         Project [id(d), __paths]
//!              Traverse [c -> d]                          AppendVertices [d]
//!                ...                                        PathGroupCount [start v; hops ...; columns: d, __paths]
//!                  GetVertices [v]                            GetVertices [v]
//!                    Argument                                   Argument
//! ```

use super::fuse_match_count::{chain, last_node, start_of, Chain};
use super::prune_match_reads::reads_whole;
use super::{Rule, RuleContext};
use crate::planner::{CountOutput, Op, PathCountNode, PlanNode, PropColumn, Tags};
use quiver_api::SchemaRef;
use quiver_common::expr::Expr;
use quiver_syntax::ast::YieldColumn;

pub(crate) struct FuseMatchRows;

/// The column holding how many paths reach a row's far end.
const PATHS: &str = "__paths";

/// Whether `e` reads no column but `columns`, no variable, and gives the same value on every row with the same
/// values in them (no random numbers).
fn reads_only(e: &Expr, columns: &[&str]) -> bool {
    !e.any(&|x| match x {
        Expr::InputProp(c) => !columns.contains(&c.as_str()),
        Expr::VarProp { .. } | Expr::Aggregate { .. } | Expr::Pattern(_) => true,
        Expr::Function { name, .. } => name.to_ascii_lowercase().starts_with("rand"),
        _ => false,
    })
}

/// `n.tag.prop` of node column `node`, with a tag of `tags`: the tag and the property.
fn tag_prop_of<'a>(e: &'a Expr, node: &str, tags: &[SchemaRef]) -> Option<(SchemaRef, &'a str)> {
    match e.tag_prop()? {
        (Expr::InputProp(c), tag, prop) if c == node => tags.iter().find(|t| t.name == tag).map(|t| (t.clone(), prop)),
        _ => None,
    }
}

/// Whether `e` reads column `node` only as `id(node)` and `node.tag.prop` (with a tag of `tags`), as
/// `prune_match_reads` tells reads apart.
fn reads_narrowly(e: &Expr, node: &str, tags: &[SchemaRef]) -> bool {
    let mut tags_known = true;
    e.visit(&mut |x| {
        if let Some((Expr::InputProp(c), tag, _)) = x.tag_prop() {
            tags_known &= c != node || tags.iter().any(|t| t.name == tag);
        }
    });
    tags_known && !reads_whole(e, node)
}

/// The `AppendVertices` under the `Project` `project` and the `Filter`s between them.
fn append_of(project: &mut PlanNode) -> &mut PlanNode {
    let mut at = project.input.as_deref_mut().expect("checked by the caller");
    while let Op::Filter(_) = at.op {
        at = at.input.as_deref_mut().expect("checked by the caller");
    }
    at
}

/// The expressions of the `Project` `project` and of the `filters` `Filter`s below it.
fn exprs_mut(project: &mut PlanNode, filters: usize) -> Vec<&mut Expr> {
    let mut exprs: Vec<&mut Expr> = Vec::new();
    if let Op::Project { yield_clause, .. } = &mut project.op {
        exprs.extend(yield_clause.columns.iter_mut().map(|c| &mut c.expr));
    }
    let mut at = project.input.as_deref_mut();
    for _ in 0..filters {
        let Some(f) = at else { break };
        if let Op::Filter(cond) = &mut f.op {
            exprs.push(cond);
        }
        at = f.input.as_deref_mut();
    }
    exprs
}

/// Names every column of the `Project` `project` by its text, before its expressions are rewritten to read hidden
/// columns: a column keeps the name it had.
fn keep_column_names(project: &mut PlanNode) {
    if let Op::Project { yield_clause, .. } = &mut project.op {
        for c in yield_clause.columns.iter_mut().filter(|c| c.alias.is_none()) {
            c.alias = Some(c.expr.to_string());
        }
    }
}

/// Reads the last node `node`'s properties as columns of their own when the `Project` and its `filters` read it
/// only as `id(node)` and `node.tag.prop`: each `node.tag.prop` there becomes a read of its column (a column keeps
/// the name it had). Returns the columns, or `None` (changing nothing).
fn read_as_columns(project: &mut PlanNode, filters: usize, node: &str, tags: &Tags) -> Option<Vec<PropColumn>> {
    if !exprs_mut(project, filters).iter().all(|e| reads_narrowly(e, node, tags)) {
        return None;
    }
    keep_column_names(project);
    let mut columns: Vec<PropColumn> = Vec::new();
    for e in exprs_mut(project, filters) {
        e.visit_mut(&mut |x| {
            let Some((tag, prop)) = tag_prop_of(x, node, tags) else { return };
            let column = format!("__{node}.{}.{prop}", tag.name);
            if !columns.iter().any(|c| c.column == column) {
                columns.push(PropColumn { tag, prop: prop.to_string(), column: column.clone() });
            }
            *x = Expr::InputProp(column);
        });
    }
    Some(columns)
}

/// Reads the last edge `edge`'s properties as columns of their own when the `Project` and its `filters` read it only
/// as `edge.prop`, each a property of every type in `types`: each `edge.prop` becomes a read of column `__edge.prop`.
/// Returns the (property, column) pairs, or `None` (changing nothing).
fn edge_props_as_columns(
    project: &mut PlanNode,
    filters: usize,
    edge: &str,
    types: &[(i32, SchemaRef)],
) -> Option<Vec<(String, String)>> {
    let every_type_has = |p: &str| types.iter().all(|(_, t)| t.latest().prop_index(p).is_some());
    let narrow = exprs_mut(project, filters).iter().all(|e| {
        let mut props = 0;
        let mut mentions = 0;
        e.visit(&mut |x| match x {
            Expr::Attribute { base, name } if matches!(&**base, Expr::InputProp(c) if c == edge) => {
                props += usize::from(every_type_has(name));
            }
            Expr::InputProp(c) if c == edge => mentions += 1,
            _ => {}
        });
        props == mentions
    });
    if !narrow {
        return None;
    }
    keep_column_names(project);
    let mut columns: Vec<(String, String)> = Vec::new();
    for e in exprs_mut(project, filters) {
        e.visit_mut(&mut |x| {
            let Expr::Attribute { base, name } = x else { return };
            if !matches!(&**base, Expr::InputProp(c) if c == edge) {
                return;
            }
            let column = format!("__{edge}.{name}");
            if !columns.iter().any(|(_, c)| *c == column) {
                columns.push((name.clone(), column.clone()));
            }
            *x = Expr::InputProp(column);
        });
    }
    Some(columns)
}

impl Rule for FuseMatchRows {
    fn name(&self) -> &'static str {
        "fuse_match_rows"
    }

    fn apply(&self, node: &mut PlanNode, ctx: &RuleContext<'_>) -> bool {
        let Op::Project { yield_clause: y, filter: None } = &node.op else { return false };
        // The Filters between the Project and the chain, and the chain's last AppendVertices.
        let mut conditions: Vec<&Expr> = Vec::new();
        let Some(mut append) = node.input.as_deref() else { return false };
        while let Op::Filter(c) = &append.op {
            conditions.push(c);
            let Some(b) = append.input.as_deref() else { return false };
            append = b;
        }
        let Some(last) = last_node(append) else { return false };
        // The last hop's edge, which the rows may read too (then they are made per last edge, not per far end).
        let Some(Op::Traverse(last_hop)) = append.input.as_deref().map(|t| &t.op) else { return false };
        let edge = last_hop.edge.column.as_str();
        let reads = || y.columns.iter().map(|c| &c.expr).chain(conditions.iter().copied());
        if y.columns.iter().any(|c| c.name() == PATHS) || !reads().all(|e| reads_only(e, &[last, edge])) {
            return false;
        }
        let per_edge = !reads().all(|e| reads_only(e, &[last]));
        let (edge, types, edge_props) = (edge.to_string(), last_hop.signed_types(), last_hop.edge_props);
        let filters = conditions.len();
        let Some(Chain { start, hops, described }) = chain(append, true) else { return false };
        if !ctx.counts_paths() {
            return false;
        }
        if hops.len() < 2 {
            // One hop has no paths that meet at a far end: nothing to share. What a count still gives is far ends
            // known to exist, so a far end read only as `d.tag.prop` (and `id(d)`) gets its properties as columns
            // and no vertex value, where a Traverse's AppendVertices builds a vertex value per far end.
            let Op::AppendVertices(a) = &append.op else { return false };
            let as_columns = !per_edge
                && a.node.tags.is_empty()
                && a.node.props.is_empty()
                && reads().all(|e| reads_narrowly(e, last, &a.tags))
                && reads().any(|e| e.any(&|x| tag_prop_of(x, last, &a.tags).is_some()));
            if !as_columns {
                return false;
            }
        }
        let last = last.to_string();
        let distinct = y.distinct;

        // Read the last node's properties as columns where it is read only by them (and `id()`).
        let Op::AppendVertices(a) = &append_of(node).op else { unreachable!("the chain was checked") };
        let columns = if a.node.tags.is_empty() && a.node.props.is_empty() {
            let tags = a.tags.clone();
            read_as_columns(node, filters, &last, &tags).unwrap_or_default()
        } else {
            Vec::new()
        };
        let output = if per_edge {
            // Rows that read the edge only as `e.prop` (a property of every type of the hop) read those as columns
            // and get no edge value.
            let (edge, columns) = match edge_props_as_columns(node, filters, &edge, &types) {
                Some(read) => (None, read),
                None => (Some(edge), Vec::new()),
            };
            let (node, paths) = (last.clone(), PATHS.to_string());
            CountOutput::EdgeGroupCount { edge, types, props: edge_props, columns, node, paths }
        } else {
            CountOutput::GroupCount { columns: vec![(last, false), (PATHS.to_string(), true)] }
        };
        // Cut the chain under the last AppendVertices and put the count there.
        let at = append_of(node);
        let Op::AppendVertices(a) = &mut at.op else { unreachable!("the chain was checked") };
        a.exist = true;
        a.columns = columns;
        let traverse = at.input.take().expect("the chain was checked");
        at.input = Some(Box::new(PlanNode {
            op: Op::PathCount(Box::new(PathCountNode { start, hops, described, output })),
            input: Some(start_of(traverse)),
            branches: Vec::new(),
        }));
        if distinct {
            return true;
        }
        let Op::Project { yield_clause, .. } = &mut node.op else { unreachable!("matched above") };
        yield_clause.columns.push(YieldColumn { expr: Expr::InputProp(PATHS.into()), alias: Some(PATHS.into()) });
        let project = std::mem::replace(node, PlanNode::leaf(Op::Repeat { column: PATHS.into() }));
        node.input = Some(Box::new(project));
        true
    }
}
