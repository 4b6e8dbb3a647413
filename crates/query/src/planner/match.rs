//! MATCH planning: a bound MATCH turned into a chain of operators named as NebulaGraph's EXPLAIN names them.
//!
//! Each path starts where the validator chose (`Argument` for a node bound in the input row, `GetVertices` for
//! VIDs, `IndexScan`, `ScanVertices`) and is walked outward from there, rightwards then leftwards, one `Traverse`
//! and one `AppendVertices` per edge pattern. A MATCH's WHERE is a `Filter` after its paths; an OPTIONAL MATCH is
//! planned as a branch joined back to its input rows (`HashLeftJoin`); WITH and RETURN are `Project` (with its
//! implicit grouping and DISTINCT), `Sort`, `Limit` and, for WITH, a `Filter`.

use super::{Op, PlanNode};
use crate::validator::{BoundEdge, BoundMatch, BoundNode, BoundPath, BoundProjection, MatchStage, Start};
use quiver_api::SchemaRef;
use quiver_common::expr::Expr;
use quiver_common::pattern::{PathKind, PatternDirection};
use quiver_common::Value;
use std::sync::Arc;

/// A path's start vertices.
pub(crate) struct StartNode {
    pub node: BoundNode,
    pub start: Start,
    /// The tags a vertex value is read with: all of the space's, unless `prune_match_reads` narrowed them.
    pub tags: Tags,
    /// Only these properties are read, of every tag (`prune_match_reads`, for a start node nothing reads whole):
    /// `None` reads them all.
    pub props: Option<Vec<String>>,
}

/// Every tag of the space, shared by the operators of one MATCH.
pub(crate) type Tags = Arc<[SchemaRef]>;

/// One edge pattern walked from the vertex in column `from`.
pub(crate) struct TraverseNode {
    pub from: String,
    pub edge: BoundEdge,
    /// Walked from the pattern's right node to its left one (the direction is reversed).
    pub reversed: bool,
    /// The column the far end's VID goes to: the node's column, or a temporary one when the node is bound.
    pub to: String,
    /// The edge columns of the same path bound before this one: an edge is not used twice within a path.
    pub path_edges: Vec<String>,
    /// Whether the edges are read with their properties (`prune_match_reads` clears it when nothing reads them).
    pub edge_props: bool,
    /// The column of the far node when it is bound before: only walks arriving at its vertex are produced (the
    /// `AppendVertices` above keeps exactly those), so a pattern closing on a bound node, such as `NOT
    /// (n)-[:knows]-(o)`, does not build a row per neighbour.
    pub arrive_at: Option<String>,
}

impl TraverseNode {
    /// The direction the edges are followed in, walking from `from` (the pattern's, turned round when reversed).
    pub fn walked_direction(&self) -> PatternDirection {
        match (self.edge.direction, self.reversed) {
            (PatternDirection::Out, true) => PatternDirection::In,
            (PatternDirection::In, true) => PatternDirection::Out,
            (d, _) => d,
        }
    }

    /// The signed edge types followed (positive: out-edges, negative: in-edges), each with its schema.
    pub fn signed_types(&self) -> Vec<(i32, SchemaRef)> {
        signed_types(&self.edge.types, self.walked_direction())
    }
}

/// `types` walked in `direction`, signed (positive: out-edges, negative: in-edges; both for `Both`).
fn signed_types(types: &[SchemaRef], direction: PatternDirection) -> Vec<(i32, SchemaRef)> {
    let mut out = Vec::new();
    for s in types {
        if matches!(direction, PatternDirection::Out | PatternDirection::Both) {
            out.push((s.id, s.clone()));
        }
        if matches!(direction, PatternDirection::In | PatternDirection::Both) {
            out.push((-s.id, s.clone()));
        }
    }
    out
}

/// The vertex of the VID in column `from`, checked against `node`.
pub(crate) struct AppendNode {
    pub from: String,
    pub node: BoundNode,
    pub tags: Tags,
    /// Only whether the vertex exists (and has the node's labels) is read: its value carries the VID and no tags (`prune_match_reads`, for a
    /// node nothing reads but `id(...)`).
    pub id_only: bool,
    /// Only these properties are read, of every tag in `tags` (`prune_match_reads`, for a node nothing reads
    /// whole): `None` reads them all.
    pub props: Option<Vec<String>>,
    /// `tags` was narrowed to the tags the statement reads properties of and the node's labels
    /// (`prune_match_reads`, for a node read only as `n.tag.prop`); otherwise it is every tag of the space.
    pub tags_narrowed: bool,
    /// The input's VIDs are known to exist (far ends a path count found, `fuse_match_rows`): with `id_only`,
    /// nothing is read.
    pub exist: bool,
    /// With `exist`: properties read as columns of their own instead of into the vertex value, which then carries
    /// the VID only (`fuse_match_rows`, for a node read only as `n.tag.prop` and by `id()`).
    pub columns: Vec<PropColumn>,
    /// Only these columns of the rows are output, in this order (`prune_match_columns`, where the walk ends and
    /// what follows reads fewer); `None` outputs them all.
    pub keep: Option<Vec<String>>,
    /// `from` is an alias the input row binds (a node of an earlier clause): it must hold vertices (or NULL), as
    /// NebulaGraph's ArgumentExecutor requires.
    pub argument: bool,
}

impl AppendNode {
    /// The whole vertex of the VID in column `from` (the rules may narrow what is read later).
    fn whole(from: String, node: BoundNode, tags: &Tags) -> AppendNode {
        AppendNode {
            from,
            node,
            tags: tags.clone(),
            id_only: false,
            props: None,
            tags_narrowed: false,
            exist: false,
            columns: Vec::new(),
            keep: None,
            argument: false,
        }
    }
}

/// One tag property of a node, read into a column of its own.
pub(crate) struct PropColumn {
    pub tag: SchemaRef,
    pub prop: String,
    pub column: String,
}

/// `shortestPath(...)` / `allShortestPaths(...)`: per input row, the shortest paths from the vertex in column
/// `from` to the one in `to`, one row per path with the path's edges (a list) in the edge's column.
pub(crate) struct ShortestNode {
    pub from: String,
    pub to: String,
    pub edge: BoundEdge,
    /// `shortestPath`: one path per pair.
    pub single: bool,
}

impl ShortestNode {
    /// The signed edge types walked from `from` towards `to`.
    pub fn signed_types(&self) -> Vec<(i32, SchemaRef)> {
        signed_types(&self.edge.types, self.edge.direction)
    }
}

/// A path value from its columns: `nodes` has one more item than `edges`.
pub(crate) struct PathNode {
    pub tags: Tags,
    pub alias: String,
    pub nodes: Vec<String>,
    pub edges: Vec<(String, bool)>,
}

fn above(input: PlanNode, op: Op) -> PlanNode {
    PlanNode { op, input: Some(Box::new(input)), branches: Vec::new() }
}

/// `op` above `input`, or a leaf reading the enclosing operator's rows when there is no input.
fn above_opt(input: Option<PlanNode>, op: Op) -> PlanNode {
    match input {
        Some(i) => above(i, op),
        None => PlanNode::leaf(op),
    }
}

pub(super) fn plan(m: BoundMatch) -> PlanNode {
    let tags = m.all_tags;
    let mut root = PlanNode::leaf(Op::Argument);
    for stage in m.stages {
        root = match stage {
            MatchStage::Match { optional: false, paths, filter, predicates } => {
                let mut node = root;
                for p in paths {
                    node = path(Some(node), p, &tags);
                }
                if let Some(f) = filter {
                    node = above(node, Op::Filter(f));
                }
                for (p, anti) in predicates {
                    let keys = pattern_keys(&p);
                    node = PlanNode {
                        op: Op::PatternApply { anti, keys },
                        input: Some(Box::new(node)),
                        branches: vec![path(None, p, &tags)],
                    };
                }
                node
            }
            MatchStage::Match { optional: true, paths, filter, .. } => {
                let mut columns = Vec::new();
                let mut branch: Option<PlanNode> = None;
                for p in paths {
                    columns.extend(new_columns(&p));
                    branch = Some(path(branch, p, &tags));
                }
                let mut branch = branch.expect("a MATCH has a path");
                if let Some(f) = filter {
                    branch = above(branch, Op::Filter(f));
                }
                PlanNode { op: Op::OptionalJoin { columns }, input: Some(Box::new(root)), branches: vec![branch] }
            }
            MatchStage::Unwind { expr, alias } => above(root, Op::Unwind { expr, alias, only_alias: false }),
            MatchStage::With(p) => projection(root, p, &tags),
        };
    }
    projection(root, m.ret, &tags)
}

/// What a pattern used in a row's context matches by: its nodes bound before, and the columns of the edges it is
/// bound to.
fn pattern_keys(p: &BoundPath) -> Vec<String> {
    p.nodes
        .iter()
        .filter(|n| n.bound)
        .map(|n| n.column.clone())
        .chain(p.edges.iter().filter_map(|e| e.bound_to.clone()))
        .collect()
}

/// The columns a path adds to its input rows, in the order they are added.
fn new_columns(p: &BoundPath) -> Vec<String> {
    let mut cols = Vec::new();
    if p.kind != PathKind::All {
        // Both ends, then the edge list (as `shortest` adds them).
        cols.extend(p.nodes.iter().filter(|n| !n.bound).map(|n| n.column.clone()));
        cols.push(p.edges[0].column.clone());
        cols.extend(p.alias.clone());
        return cols;
    }
    let start = &p.nodes[p.start_at];
    if !start.bound {
        cols.push(start.column.clone());
    }
    let n = p.nodes.len();
    for i in p.start_at..n - 1 {
        cols.push(p.edges[i].column.clone());
        if !p.nodes[i + 1].bound {
            cols.push(p.nodes[i + 1].column.clone());
        }
    }
    for i in (0..p.start_at).rev() {
        cols.push(p.edges[i].column.clone());
        if !p.nodes[i].bound {
            cols.push(p.nodes[i].column.clone());
        }
    }
    if let Some(a) = &p.alias {
        cols.push(a.clone());
    }
    cols
}

/// The start of a node: checked against its pattern when bound in the input row, else found as chosen.
fn start_node(input: Option<PlanNode>, node: BoundNode, start: Start, tags: &Tags) -> PlanNode {
    match start {
        Start::Bound => {
            let append = AppendNode { argument: true, ..AppendNode::whole(node.column.clone(), node, tags) };
            above_opt(input, Op::AppendVertices(Box::new(append)))
        }
        start => {
            above_opt(input, Op::StartVertices(Box::new(StartNode { node, start, tags: tags.clone(), props: None })))
        }
    }
}

/// `shortestPath((a)-[e*..n]-(b))`: both ends found (the second crossed with each row of the first), then the
/// search between them.
fn shortest(input: Option<PlanNode>, p: BoundPath, tags: &Tags) -> PlanNode {
    let BoundPath { alias, nodes, edges, start, end_start, kind, .. } = p;
    let columns: Vec<String> = nodes.iter().map(|n| n.column.clone()).collect();
    let [a, b]: [BoundNode; 2] = nodes.try_into().unwrap_or_else(|_| unreachable!("the validator checked two nodes"));
    let edge = edges.into_iter().next().expect("the validator checked one edge");
    let edge_column = edge.column.clone();
    // Without `*` the column holds one edge, else a list of them.
    let list = edge.range.is_some();
    let mut root = start_node(input, a, start, tags);
    let bound = b.bound;
    if !bound {
        root = start_node(Some(root), b, end_start.unwrap_or(Start::ScanAll), tags);
    }
    root = above(
        root,
        Op::ShortestPath(Box::new(ShortestNode {
            from: columns[0].clone(),
            to: columns[1].clone(),
            edge,
            single: kind == PathKind::Shortest,
        })),
    );
    if let Some(alias) = alias {
        root = above(
            root,
            Op::BuildPath(Box::new(PathNode {
                tags: tags.clone(),
                alias,
                nodes: columns,
                edges: vec![(edge_column, list)],
            })),
        );
    }
    root
}

fn path(input: Option<PlanNode>, p: BoundPath, tags: &Tags) -> PlanNode {
    if p.kind != PathKind::All {
        return shortest(input, p, tags);
    }
    let BoundPath { alias, nodes, edges, start_at, start, .. } = p;
    let columns: Vec<String> = nodes.iter().map(|n| n.column.clone()).collect();
    let edge_columns: Vec<(String, bool)> = edges.iter().map(|e| (e.column.clone(), e.range.is_some())).collect();
    let mut nodes: Vec<Option<BoundNode>> = nodes.into_iter().map(Some).collect();
    let mut edges: Vec<Option<BoundEdge>> = edges.into_iter().map(Some).collect();
    let first = nodes[start_at].take().expect("each node is planned once");
    let mut root = start_node(input, first, start, tags);
    let mut path_edges: Vec<String> = Vec::new();
    let n = columns.len();
    let steps: Vec<(usize, bool)> =
        (start_at..n - 1).map(|i| (i, false)).chain((0..start_at).rev().map(|i| (i, true))).collect();
    for (i, reversed) in steps {
        let edge = edges[i].take().expect("each edge is planned once");
        let (from, to_index) = if reversed { (columns[i + 1].clone(), i) } else { (columns[i].clone(), i + 1) };
        let node = nodes[to_index].take().expect("each node is planned once");
        let to = if node.bound { format!("__to_{}", edge.column) } else { node.column.clone() };
        let edge_column = edge.column.clone();
        root = above(
            root,
            Op::Traverse(Box::new(TraverseNode {
                from,
                edge,
                reversed,
                to: to.clone(),
                path_edges: path_edges.clone(),
                edge_props: true,
                arrive_at: node.bound.then(|| node.column.clone()),
            })),
        );
        path_edges.push(edge_column);
        root = above(root, Op::AppendVertices(Box::new(AppendNode::whole(to, node, tags))));
    }
    if let Some(alias) = alias {
        root = above(
            root,
            Op::BuildPath(Box::new(PathNode { tags: tags.clone(), alias, nodes: columns, edges: edge_columns })),
        );
    }
    root
}

/// WITH or RETURN: the projection (grouping when it aggregates, DISTINCT), ORDER BY, SKIP and LIMIT, then WITH's
/// WHERE.
fn projection(input: PlanNode, p: BoundProjection, tags: &Tags) -> PlanNode {
    let mut root = input;
    for path in p.roll_ups {
        let keys = pattern_keys(&path);
        let column = path.alias.clone().expect("a rolled-up pattern names its column");
        root = PlanNode {
            op: Op::RollUpApply { keys, column },
            input: Some(Box::new(root)),
            branches: vec![self::path(None, path, tags)],
        };
    }
    let mut root = above(root, Op::Project { yield_clause: p.yield_clause, filter: None });
    if !p.order.is_empty() {
        root = above(root, Op::Sort(p.order.into_iter().map(|(c, asc)| (Expr::InputProp(c), asc)).collect()));
    }
    if p.skip.is_some() || p.limit.is_some() {
        let offset = p.skip.unwrap_or(Expr::Const(Value::Int(0)));
        let count = p.limit.unwrap_or(Expr::Const(Value::Int(i64::MAX)));
        root = above(root, Op::Limit { offset, count });
    }
    if let Some(f) = p.filter {
        root = above(root, Op::Filter(f));
    }
    root
}
