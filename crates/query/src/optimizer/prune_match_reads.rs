//! `prune_match_reads`: a MATCH reads only what its statement uses of its nodes and edges.
//!
//! Preconditions, for the operators under a `Project` (a RETURN or WITH), every one a MATCH operator or a
//! projection, filter, sort, limit, aggregate or unwind (anything else, and nothing is pruned):
//! - a `Traverse` with no property map whose edge column nothing reads but edge uniqueness (which compares keys)
//!   walks without edge properties, so its neighbours come from the in-memory topology;
//! - an `AppendVertices` of a node with no label, no property map and no earlier binding, whose column nothing
//!   reads but `id(...)` and the `Traverse` walking on from it, only checks that the vertex exists: its value
//!   carries the VID and no tags;
//! - an `AppendVertices` of a node with no earlier binding, whose column is read only as `n.tag.prop` (and by
//!   `id(...)` and the next `Traverse`), reads only those properties, and only of those tags and its labels (its
//!   labels are checked on them); with a property map of its own, it reads those properties and the map's, of
//!   every tag (a map's property may be any tag's); read only by `id(...)`, walks and arrivals but labelled, it
//!   reads its tags and no property beyond its property map; labelled without a property map, it only checks that
//!   the vertex has its labels: its value carries the VID and no tags.
//!
//! Arriving at a node bound before (`AppendVertices` of a bound node) reads only its VID unless that node pattern
//! has labels or a property map.
//!
//! A start node (`StartVertices`) whose column nothing reads whole reads its tags (its labels are checked on them)
//! with only the properties read as `n.tag.prop` and those of its property map; without a property map, only the
//! tags named in `n.tag.prop` and its labels (not shown by EXPLAIN).
//!
//! A path alias (`BuildPath`) reads its nodes and edges whole. Names the statement does not bind (`__anon_1`) are
//! never read by an expression, so anonymous nodes and edges always qualify.
//!
//! ```text
//! before:  Project [id(d)]                       after:  Project [id(d)]
//!            AppendVertices [d]                            AppendVertices [d; props: none]
//!              Traverse [v -> d]                             Traverse [v -> d; edge props: none]
//! ```

use super::{id_of, Rule, RuleContext};
use crate::planner::{Op, PlanNode, Tags};
use quiver_api::SchemaRef;
use quiver_common::expr::Expr;
use quiver_common::fasthash::FastMap as HashMap;
use std::collections::BTreeSet;

pub(crate) struct PruneMatchReads;

/// How a column is read, from least to most.
#[derive(Clone, PartialEq)]
enum Use {
    /// Its VID or edge key only (`id(n)`, a walk from it, edge uniqueness).
    Key,
    /// Its key and these properties (`n.tag.prop`), by property name, of these tags, by name.
    Props(BTreeSet<String>, BTreeSet<String>),
    /// Its whole value.
    Whole,
}

impl Use {
    fn merge(&mut self, other: Use) {
        *self = match (std::mem::replace(self, Use::Key), other) {
            (Use::Whole, _) | (_, Use::Whole) => Use::Whole,
            (Use::Props(mut a, mut at), Use::Props(b, bt)) => {
                a.extend(b);
                at.extend(bt);
                Use::Props(a, at)
            }
            (Use::Props(a, at), Use::Key) | (Use::Key, Use::Props(a, at)) => Use::Props(a, at),
            (Use::Key, Use::Key) => Use::Key,
        }
    }
}

/// `n.tag.prop` on a column: the column, the tag and the property.
fn tag_prop_of(e: &Expr) -> Option<(&str, &str, &str)> {
    match e.tag_prop()? {
        (Expr::InputProp(c), tag, prop) => Some((c, tag, prop)),
        _ => None,
    }
}

#[derive(Default)]
struct Uses(HashMap<String, Use>);

impl Uses {
    fn mark(&mut self, column: &str, u: Use) {
        match self.0.get_mut(column) {
            Some(e) => e.merge(u),
            None => {
                self.0.insert(column.to_string(), u);
            }
        }
    }

    /// Records what `e` reads of each column: its key under `id(...)`, a property as `n.tag.prop`, its whole
    /// value anywhere else. Each mention is merged as it is met (the wider use wins).
    fn expr(&mut self, e: &Expr) {
        if let Some(c) = id_of(e) {
            self.mark(c, Use::Key);
        } else if let Some((c, tag, prop)) = tag_prop_of(e) {
            self.mark_prop(c, tag, prop);
        } else if let Expr::InputProp(c) = e {
            self.mark(c, Use::Whole);
        } else {
            e.for_each_child(&mut |x| self.expr(x));
        }
    }

    /// `mark(column, Props({prop}, {tag}))`, allocating only for a name not recorded yet.
    fn mark_prop(&mut self, column: &str, tag: &str, prop: &str) {
        match self.0.get_mut(column) {
            Some(Use::Whole) => {}
            Some(Use::Props(props, tags)) => {
                if !props.contains(prop) {
                    props.insert(prop.to_string());
                }
                if !tags.contains(tag) {
                    tags.insert(tag.to_string());
                }
            }
            Some(u @ Use::Key) => *u = Use::Props([prop.to_string()].into(), [tag.to_string()].into()),
            None => {
                self.0.insert(column.to_string(), Use::Props([prop.to_string()].into(), [tag.to_string()].into()));
            }
        }
    }

    /// Records what `node` and everything under it read; false if an operator is one this rule does not know.
    fn collect(&mut self, node: &PlanNode) -> bool {
        let known = match &node.op {
            Op::Project { yield_clause, filter } => {
                yield_clause.columns.iter().for_each(|c| self.expr(&c.expr));
                filter.iter().for_each(|f| self.expr(f));
                true
            }
            Op::Aggregate { keys, yield_clause } => {
                keys.iter().for_each(|k| self.expr(k));
                yield_clause.columns.iter().for_each(|c| self.expr(&c.expr));
                true
            }
            Op::Filter(f) | Op::Unwind { expr: f, .. } => {
                self.expr(f);
                true
            }
            Op::Sort(factors) | Op::TopN { factors, .. } => {
                factors.iter().for_each(|(e, _)| self.expr(e));
                true
            }
            Op::Limit { .. } | Op::Argument | Op::OptionalJoin { .. } | Op::PatternApply { .. } => true,
            Op::StartVertices(_) => true,
            Op::PathCount(p) => {
                self.mark(&p.start, Use::Key);
                true
            }
            Op::Traverse(t) => {
                self.mark(&t.from, Use::Key);
                t.path_edges.iter().chain(&t.edge.bound_to).for_each(|c| self.mark(c, Use::Key));
                true
            }
            Op::AppendVertices(a) => {
                if a.node.bound {
                    // Arriving at a bound vertex compares VIDs; its labels and property map are checked on its value.
                    let checks = !a.node.tags.is_empty() || !a.node.props.is_empty();
                    self.mark(&a.node.column, if checks { Use::Whole } else { Use::Key });
                }
                true
            }
            Op::BuildPath(p) => {
                p.nodes.iter().chain(p.edges.iter().map(|(c, _)| c)).for_each(|c| self.mark(c, Use::Whole));
                true
            }
            _ => false,
        };
        known && node.input.as_deref().is_none_or(|i| self.collect(i)) && node.branches.iter().all(|b| self.collect(b))
    }

    fn reads(&self, column: &str) -> Option<&Use> {
        self.0.get(column)
    }
}

/// Whether `e` reads column `column` otherwise than by `id(...)` and `column.tag.prop`.
pub(super) fn reads_whole(e: &Expr, column: &str) -> bool {
    let mut uses = Uses::default();
    uses.expr(e);
    matches!(uses.reads(column), Some(Use::Whole))
}

/// Of `all`, the tags named in `read` and the `labels`.
fn narrowed(all: &Tags, read: &BTreeSet<String>, labels: &[SchemaRef]) -> Tags {
    all.iter().filter(|t| read.contains(&t.name) || labels.iter().any(|l| l.id == t.id)).cloned().collect()
}

/// Prunes the reads under `node` that `uses` shows nobody needs; whether any changed.
fn prune(node: &mut PlanNode, uses: &Uses) -> bool {
    let mut changed = false;
    node.for_each_mut(&mut |n| match &mut n.op {
        Op::Traverse(t)
            if t.edge_props
                && t.edge.props.is_empty()
                && matches!(uses.reads(&t.edge.column), None | Some(Use::Key)) =>
        {
            t.edge_props = false;
            changed = true;
        }
        Op::StartVertices(s) if s.props.is_none() => {
            // The start node's labels are checked on the tags read, with only the properties read; without a
            // property map, only the tags read from and its labels are read.
            let own = s.node.props.iter().map(|(_, p, _)| p.clone());
            let no_map = s.node.props.is_empty();
            let read_tags = match uses.reads(&s.node.column) {
                None | Some(Use::Key) => {
                    s.props = Some(own.collect());
                    BTreeSet::new()
                }
                Some(Use::Props(read, tags)) => {
                    let mut names: Vec<String> = read.iter().cloned().collect();
                    names.extend(own.filter(|p| !read.contains(p)));
                    s.props = Some(names);
                    tags.clone()
                }
                Some(Use::Whole) => return,
            };
            if no_map {
                s.tags = narrowed(&s.tags, &read_tags, &s.node.tags);
            }
            changed = true;
        }
        Op::AppendVertices(a) if !a.node.bound && !a.id_only => match uses.reads(&a.node.column) {
            None | Some(Use::Key) if a.node.props.is_empty() => {
                a.id_only = true;
                changed = true;
            }
            None | Some(Use::Key) if a.props.is_none() => {
                // Labels to check but no property read: the tags alone, and the property map's values.
                a.props = Some(a.node.props.iter().map(|(_, p, _)| p.clone()).collect());
                changed = true;
            }
            Some(Use::Props(read, tags)) if a.props.is_none() => {
                // The pattern's own property map is checked on the values read.
                let mut names: Vec<String> = read.iter().cloned().collect();
                names.extend(a.node.props.iter().map(|(_, p, _)| p.clone()).filter(|p| !read.contains(p)));
                a.props = Some(names);
                if a.node.props.is_empty() {
                    // Nothing reads the vertex whole: only the tags read from and the labels checked are read.
                    a.tags = narrowed(&a.tags, tags, &a.node.tags);
                    a.tags_narrowed = true;
                }
                changed = true;
            }
            _ => {}
        },
        _ => {}
    });
    changed
}

impl Rule for PruneMatchReads {
    fn name(&self) -> &'static str {
        "prune_match_reads"
    }

    fn apply(&self, node: &mut PlanNode, _ctx: &RuleContext<'_>) -> bool {
        if !matches!(node.op, Op::Project { .. }) {
            return false;
        }
        let mut uses = Uses::default();
        if !uses.collect(node) {
            return false;
        }
        prune(node, &uses)
    }
}
