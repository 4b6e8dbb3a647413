//! MatchValidator: an openCypher MATCH statement bound against the catalog.
//!
//! Aliases live in a scope that each clause extends and each `WITH` replaces (only what it projects survives, or
//! everything with `WITH *`). Every alias has a kind, so what NebulaGraph refuses is refused here with its
//! messages. Expressions are rewritten so that the generic executors evaluate them: an alias `v` becomes the
//! column read `$-.v`, `v.tag.prop` the attribute `$-.v.tag.prop` (an attribute of a vertex value is its tag's
//! properties, of an edge value its property). The output is a [`BoundMatch`]: the reading stages in order, each
//! path with where it starts, and the projections with their output names.

use super::{is_constant, LookupPlan, Validator};
use quiver_api::{SchemaKind, SchemaRef};
use quiver_common::eval::eval;
use quiver_common::expr::{BinaryOp, Expr};
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::{
    LookupStatement, MatchClause, MatchStatement, NodePattern, PathKind, PathPattern, PatternDirection, Projection,
    YieldClause, YieldColumn,
};

/// What an alias stands for, as NebulaGraph's `AliasType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AliasKind {
    Node,
    Edge,
    /// A variable-length edge: a list of edges.
    EdgeList,
    Path,
    /// Anything computed (WITH, UNWIND).
    Value,
}

impl AliasKind {
    /// NebulaGraph's `AliasTypeName`.
    fn name(self) -> &'static str {
        match self {
            AliasKind::Node => "Node",
            AliasKind::Edge => "Edge",
            AliasKind::EdgeList => "EdgeList",
            AliasKind::Path => "Path",
            AliasKind::Value => "Runtime",
        }
    }
}

/// A MATCH statement, bound: its stages in order, then RETURN.
pub(crate) struct BoundMatch {
    pub stages: Vec<MatchStage>,
    pub ret: BoundProjection,
    /// Every tag of the space: a node's vertex value carries all of its tags.
    pub all_tags: std::sync::Arc<[SchemaRef]>,
}

pub(crate) enum MatchStage {
    /// `predicates` are the WHERE's path patterns (`(v)-[:like]->()`, or with `anti`, `NOT (v)--()`), each kept
    /// as a semi-join; `filter` is the rest of the WHERE.
    Match {
        optional: bool,
        paths: Vec<BoundPath>,
        filter: Option<Expr>,
        predicates: Vec<(BoundPath, bool)>,
    },
    Unwind {
        expr: Expr,
        alias: String,
    },
    With(BoundProjection),
}

/// RETURN or WITH: the columns (expressions rewritten, each named), then DISTINCT, ORDER BY (by output column),
/// SKIP, LIMIT and WITH's WHERE (over the output columns).
pub(crate) struct BoundProjection {
    /// Path patterns used as values in the items (`size((v)-[:like]->())`): each one's matches from the row, as a
    /// list of paths, in a hidden column the items read (NebulaGraph's RollUpApply). The path's alias is that
    /// column's name.
    pub roll_ups: Vec<BoundPath>,
    pub yield_clause: YieldClause,
    pub order: Vec<(String, bool)>,
    pub skip: Option<Expr>,
    pub limit: Option<Expr>,
    pub filter: Option<Expr>,
}

/// One path pattern, with the node it starts from.
pub(crate) struct BoundPath {
    pub alias: Option<String>,
    pub nodes: Vec<BoundNode>,
    pub edges: Vec<BoundEdge>,
    /// The node the search starts at, and how its vertices are found.
    pub start_at: usize,
    pub start: Start,
    /// `shortestPath(...)` or `allShortestPaths(...)`: a search between the vertices of both nodes (each found as
    /// `end_start` says for the second), not a walk.
    pub kind: PathKind,
    pub end_start: Option<Start>,
}

pub(crate) struct BoundNode {
    /// The column holding the node's vertex: its alias, or a generated hidden name.
    pub column: String,
    /// Bound before this node is reached (by an earlier clause, pattern or node of this path): a walk that reaches
    /// it must arrive at the same vertex.
    pub bound: bool,
    /// Tags the vertex must have.
    pub tags: Vec<SchemaRef>,
    /// `tag.prop == value` the vertex must satisfy (values are constants or parameters).
    pub props: Vec<(String, String, Expr)>,
}

pub(crate) struct BoundEdge {
    pub column: String,
    /// The edge types walked (every type of the space when none is written).
    pub types: Vec<SchemaRef>,
    pub direction: PatternDirection,
    /// `None`: exactly one step and the column holds an edge; else `(min, max)` and the column holds a list.
    pub range: Option<(u32, Option<u32>)>,
    pub props: Vec<(String, Expr)>,
    /// In a WHERE's pattern, the column of an edge bound before that this one names: the walk takes that edge
    /// only (its own `column` is then a hidden one).
    pub bound_to: Option<String>,
}

/// How the vertices of a path's start node are found.
pub(crate) enum Start {
    /// The node is bound in the input row.
    Bound,
    /// `id(v) == x` (`list: false`: the value is the one VID) or `id(v) IN x` (`list: true`: the VIDs are the
    /// items of the list, none when it is no list). Exactly the vertices the condition admits, so the condition is
    /// not checked again.
    Ids { vids: Expr, list: bool },
    /// An index of the node's tag, with the LOOKUP that reads it (yielding the VIDs).
    Index(Box<LookupPlan>),
    /// Every vertex with the tag.
    ScanTag(SchemaRef),
    /// Every vertex.
    ScanAll,
}

impl Start {
    /// The operator's name as NebulaGraph's EXPLAIN shows it.
    pub fn name(&self) -> &'static str {
        match self {
            Start::Bound => "Argument",
            Start::Ids { .. } => "GetVertices",
            Start::Index(_) => "IndexScan",
            Start::ScanTag(_) | Start::ScanAll => "ScanVertices",
        }
    }
}

/// The aliases visible at a point of the statement, in the order they were defined.
#[derive(Clone, Default)]
struct Scope {
    aliases: Vec<(String, AliasKind)>,
}

impl Scope {
    fn kind(&self, name: &str) -> Option<AliasKind> {
        self.aliases.iter().find(|(n, _)| n == name).map(|(_, k)| *k)
    }

    fn add(&mut self, name: &str, kind: AliasKind) {
        if self.kind(name).is_none() {
            self.aliases.push((name.to_string(), kind));
        }
    }
}

fn semantic(msg: impl Into<String>) -> QError {
    QError::semantic(msg.into())
}

/// The column read of alias `name`.
fn column(name: &str) -> Expr {
    Expr::InputProp(name.to_string())
}

impl Validator<'_> {
    pub(super) fn match_statement(&self, stmt: &MatchStatement) -> QResult<BoundMatch> {
        let space = self.space()?.clone();
        let mut scope = Scope::default();
        let mut stages = Vec::new();
        let mut anon = 0usize;
        for clause in &stmt.clauses {
            // Validation is metered as execution is: a statement of many clauses stops at its deadline.
            self.req.budget.check()?;
            match clause {
                MatchClause::Match { optional, paths, filter } => {
                    let before = scope.clone();
                    let mut bound_paths = Vec::new();
                    let mut defined_here: Vec<(String, AliasKind)> = Vec::new();
                    for p in paths {
                        bound_paths.push(self.path(&space, p, &mut scope, &mut defined_here, &mut anon)?);
                    }
                    let mut predicates = Vec::new();
                    let filter = match filter {
                        Some(f) => {
                            if f.has_aggregate() {
                                return Err(semantic("Invalid use of aggregating function in this context."));
                            }
                            let mut rest: Vec<&Expr> = Vec::new();
                            for c in f.conjuncts() {
                                match pattern_predicate(c) {
                                    Some((p, anti)) => {
                                        predicates.push((self.predicate_path(&space, p, &scope, &mut anon)?, anti))
                                    }
                                    None => rest.push(c),
                                }
                            }
                            let rest = Expr::and_all(rest.into_iter().cloned());
                            rest.map(|r| rewrite(&r, &scope)).transpose()?
                        }
                        None => None,
                    };
                    // Where each path starts: chosen now that the WHERE is known.
                    let mut known = before;
                    let mut answered = Vec::new();
                    for path in &mut bound_paths {
                        answered.extend(self.choose_start(&space, path, &known, filter.as_ref()));
                        for n in &path.nodes {
                            known.add(&n.column, AliasKind::Node);
                        }
                        for e in &path.edges {
                            known.add(&e.column, AliasKind::Edge);
                        }
                    }
                    // What a start answers exactly is not checked again.
                    let filter = match filter {
                        Some(f) if !answered.is_empty() => Expr::and_all(
                            f.conjuncts()
                                .into_iter()
                                .enumerate()
                                .filter(|(i, _)| !answered.contains(i))
                                .map(|(_, c)| c.clone()),
                        ),
                        f => f,
                    };
                    stages.push(MatchStage::Match { optional: *optional, paths: bound_paths, filter, predicates });
                }
                MatchClause::Unwind { expr, alias } => {
                    if expr.has_aggregate() {
                        return Err(semantic(format!("Can't use aggregating expressions in unwind clause, `{expr}'")));
                    }
                    check_labels(expr, &scope, |l| format!("Variable `{l}` not defined"))?;
                    let rewritten = rewrite(expr, &scope)?;
                    if scope.kind(alias).is_some() {
                        return Err(semantic(format!("Variable `{alias}` already declared")));
                    }
                    scope.add(alias, AliasKind::Value);
                    stages.push(MatchStage::Unwind { expr: rewritten, alias: alias.clone() });
                }
                MatchClause::With(p) => {
                    let (projection, next) = self.projection(&space, p, &scope, true, &mut anon)?;
                    scope = next;
                    stages.push(MatchStage::With(projection));
                }
            }
        }
        let (ret, _) = self.projection(&space, &stmt.ret, &scope, false, &mut anon)?;
        let all_tags = self.engine.catalog.schemas(&space, SchemaKind::Tag).into();
        Ok(BoundMatch { stages, ret, all_tags })
    }

    /// Binds one path pattern, adding its aliases to `scope`.
    fn path(
        &self,
        space: &quiver_api::SpaceDesc,
        p: &PathPattern,
        scope: &mut Scope,
        defined_here: &mut Vec<(String, AliasKind)>,
        anon: &mut usize,
    ) -> QResult<BoundPath> {
        if p.kind != PathKind::All {
            // NebulaGraph's MatchValidator names `shortestPath(...)' for allShortestPaths too.
            if p.nodes.len() != 2 || p.edges.len() != 1 {
                return Err(semantic("`shortestPath(...)' only support pattern like (start)-[edge*..hop]-(end)"));
            }
            if let Some(r) = p.edges[0].range {
                if r.min > 1 {
                    return Err(semantic("The minimal number of steps for shortestPath() must be either 0 or 1."));
                }
            }
            // NebulaGraph's ShortestPathPlanner (after the checks above, as its planner runs after its validator).
            if p.nodes[0].alias.is_some() && p.nodes[0].alias == p.nodes[1].alias {
                return Err(semantic(
                    "The shortest path algorithm does not work when the start and end nodes are the same",
                ));
            }
        }
        let catalog = &self.engine.catalog;
        // Nodes and edges in pattern order, which is the order `RETURN *` lists them in.
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        for (i, n) in p.nodes.iter().enumerate() {
            nodes.push(self.node(space, n, scope, defined_here, anon)?);
            let Some(e) = p.edges.get(i) else { continue };
            let types = if e.types.is_empty() {
                catalog.schemas(space, SchemaKind::Edge)
            } else {
                e.types
                    .iter()
                    .map(|t| {
                        catalog
                            .schema(space, SchemaKind::Edge, t)
                            .map_err(|_| semantic(format!("`{t}': Unknown edge type")))
                    })
                    .collect::<QResult<Vec<_>>>()?
            };
            let mut kind = AliasKind::Edge;
            // A shortest path's edge written without `*` is one step and one edge, as NebulaGraph answers it
            // (AllShortestPaths.feature's "one step shortest path"); with `*` a list.
            let written = e.range;
            if written.is_some() && p.kind != PathKind::All {
                kind = AliasKind::EdgeList;
            }
            let range = match written {
                Some(r) => {
                    let max = r.max;
                    if let Some(m) = max {
                        if r.min > m {
                            return Err(semantic(format!(
                                "Max hop must be greater equal than min hop: {m} vs. {}",
                                r.min
                            )));
                        }
                    }
                    if max.is_none_or(|m| m > r.min) || r.min > 1 {
                        kind = AliasKind::EdgeList;
                    }
                    Some((r.min, max))
                }
                None => None,
            };
            // An edge alias bound by an earlier MATCH clause joins on that edge, as a node alias does.
            let mut bound_to = None;
            let column = match &e.alias {
                Some(a) => match scope.kind(a) {
                    None => {
                        scope.add(a, kind);
                        defined_here.push((a.clone(), kind));
                        a.clone()
                    }
                    Some(AliasKind::Edge) if kind == AliasKind::Edge && !defined_here.iter().any(|(d, _)| d == a) => {
                        bound_to = Some(a.clone());
                        hidden(anon)
                    }
                    Some(k @ (AliasKind::Edge | AliasKind::EdgeList)) if k != kind => {
                        return Err(semantic(format!("{a} binding to different type: {} vs {}", kind.name(), k.name())))
                    }
                    Some(_) => return Err(semantic(format!("`{a}': Redefined alias"))),
                },
                None => hidden(anon),
            };
            let props = match &e.props {
                Some(map) => map.iter().map(|(k, v)| Ok((k.clone(), evaluable(v)?))).collect::<QResult<Vec<_>>>()?,
                None => Vec::new(),
            };
            edges.push(BoundEdge { column, types, direction: e.direction, range, props, bound_to });
        }
        if let Some(a) = &p.alias {
            if scope.kind(a).is_some() {
                return Err(semantic(format!("`{a}': Redefined alias")));
            }
            scope.add(a, AliasKind::Path);
            defined_here.push((a.clone(), AliasKind::Path));
        }
        Ok(BoundPath {
            alias: p.alias.clone(),
            nodes,
            edges,
            start_at: 0,
            start: Start::ScanAll,
            kind: p.kind,
            end_start: None,
        })
    }

    /// A path pattern of a WHERE: it may name only aliases already bound, and starts from one of them.
    fn predicate_path(
        &self,
        space: &quiver_api::SpaceDesc,
        p: &PathPattern,
        scope: &Scope,
        anon: &mut usize,
    ) -> QResult<BoundPath> {
        let new = |a: &str| semantic(format!("PatternExpression are not allowed to introduce new variables: `{a}'."));
        for n in &p.nodes {
            if let Some(a) = n.alias.as_ref().filter(|a| scope.kind(a).is_none()) {
                return Err(new(a));
            }
        }
        if let Some(a) = &p.alias {
            return Err(new(a));
        }
        // An edge alias must name an edge bound before (NebulaGraph's checkMatchPathExpr): the walk then takes
        // that edge only.
        let mut bound_edges = Vec::new();
        for e in &p.edges {
            let Some(a) = &e.alias else {
                bound_edges.push(None);
                continue;
            };
            let referenced = if e.range.is_some() { "EdgeList" } else { "Edge" };
            match scope.kind(a) {
                None => return Err(new(a)),
                Some(AliasKind::Edge) if e.range.is_none() => {}
                Some(AliasKind::EdgeList) if e.range.is_some() => {
                    return Err(semantic(format!(
                        "`{a}': a variable-length edge bound before is not supported in a pattern predicate"
                    )))
                }
                Some(k) => {
                    return Err(semantic(format!(
                        "`{a}' is defined with type {}, but referenced with type {referenced}",
                        k.name()
                    )))
                }
            }
            bound_edges.push(Some(a.clone()));
        }
        let mut unnamed = p.clone();
        for e in &mut unnamed.edges {
            e.alias = None;
        }
        let mut inner = scope.clone();
        let mut path = self.path(space, &unnamed, &mut inner, &mut Vec::new(), anon)?;
        for (edge, bound) in path.edges.iter_mut().zip(bound_edges) {
            edge.bound_to = bound;
        }
        self.choose_start(space, &mut path, scope, None);
        Ok(path)
    }

    fn node(
        &self,
        space: &quiver_api::SpaceDesc,
        n: &NodePattern,
        scope: &mut Scope,
        defined_here: &[(String, AliasKind)],
        anon: &mut usize,
    ) -> QResult<BoundNode> {
        if let Some(props) = &n.props {
            if let Some((k, v)) = props.first() {
                return Err(semantic(format!("`{k}:{v}': No tag found for property.")));
            }
        }
        let mut tags = Vec::new();
        let mut props = Vec::new();
        for (label, map) in &n.labels {
            let schema = self
                .engine
                .catalog
                .schema(space, SchemaKind::Tag, label)
                .map_err(|_| semantic(format!("`{label}': Unknown tag")))?;
            for (k, v) in map.iter().flatten() {
                props.push((label.clone(), k.clone(), evaluable(v)?));
            }
            tags.push(schema);
        }
        let column = match &n.alias {
            Some(a) => {
                match scope.kind(a) {
                    Some(AliasKind::Node) | None => {}
                    // A value passed on by WITH or UNWIND may hold a vertex: it is matched as one.
                    Some(AliasKind::Value) => {}
                    Some(_) if defined_here.iter().any(|(d, _)| d == a) => {
                        return Err(semantic(format!("`{a}': alias redefined with a different type")))
                    }
                    // Bound by an earlier clause as something else: NebulaGraph's planner refuses the join.
                    Some(k) => return Err(semantic(format!("{a} binding to different type: Node vs {}", k.name()))),
                }
                scope.add(a, AliasKind::Node);
                a.clone()
            }
            None => hidden(anon),
        };
        Ok(BoundNode { column, bound: false, tags, props })
    }

    /// Picks the node a path starts from and marks the nodes bound before they are reached. A node bound in the
    /// input is cheapest, then VIDs from the WHERE. Where neither applies, the cheapest start by the space's exact
    /// counts (`StorageClient::stats`, asked only then; `cheapest_start`): an index of a tag with an equality
    /// (estimated at a tenth of the tag's rows), the vertices of the node's least numerous label, or every vertex,
    /// each weighed by the edges its vertices have on the hops next to it; on a tie, the earlier kind in that
    /// order, then the earlier node. NebulaGraph picks by the kind alone.
    ///
    /// A shortest path starts at both of its nodes: each gets its own start (the second's is `end_start`).
    ///
    /// Returns the positions among the filter's conjuncts of those the starts answer exactly (`id(v) == x`), which
    /// need not be checked again.
    fn choose_start(
        &self,
        space: &quiver_api::SpaceDesc,
        path: &mut BoundPath,
        known: &Scope,
        filter: Option<&Expr>,
    ) -> Vec<usize> {
        let conjuncts = filter.map(Expr::conjuncts).unwrap_or_default();
        let mut best: Option<Candidate> = None;
        let mut scans: Vec<Candidate> = Vec::new();
        let mut ends: Vec<(Start, Option<usize>)> = Vec::new();
        for (i, node) in path.nodes.iter().enumerate() {
            let mut answered = None;
            let candidate = if known.kind(&node.column).is_some() {
                Some((0, Start::Bound))
            } else if let Some((c, vids, list)) = ids_of(&node.column, &conjuncts) {
                answered = Some(c);
                Some((1, Start::Ids { vids, list }))
            } else if let Some(plan) = self.index_start(space, node, &conjuncts) {
                Some((2, Start::Index(Box::new(plan))))
            } else {
                node.tags.first().map(|t| (3, Start::ScanTag(t.clone())))
            };
            let (rank, start) = candidate.unwrap_or((4, Start::ScanAll));
            if path.kind != PathKind::All {
                ends.push((start, answered));
                continue;
            }
            scans.push((rank, i, start, answered));
        }
        if path.kind == PathKind::All {
            best = self.cheapest_start(space, path, scans);
        }
        let mut answered_end = None;
        if path.kind != PathKind::All {
            let mut ends = ends.into_iter();
            let ((first, answered), (second, second_answered)) = (
                ends.next().expect("a shortest path has two nodes"),
                ends.next().expect("a shortest path has two nodes"),
            );
            best = Some((0, 0, first, answered));
            path.end_start = Some(second);
            answered_end = second_answered;
        }
        let (_, at, start, answered) = best.expect("a path has a node");
        path.start_at = at;
        path.start = start;
        let answered: Vec<usize> = answered.into_iter().chain(answered_end).collect();
        // Nodes already bound in the input, and nodes repeated within the path after their first visit in walk
        // order (the start, then rightwards, then leftwards).
        let mut seen: Vec<String> = known.aliases.iter().map(|(n, _)| n.clone()).collect();
        let n = path.nodes.len();
        let order: Vec<usize> = std::iter::once(at).chain(at + 1..n).chain((0..at).rev()).collect();
        for i in order {
            let node = &mut path.nodes[i];
            node.bound = seen.contains(&node.column);
            if !node.bound {
                seen.push(node.column.clone());
            }
        }
        answered
    }

    /// Of the candidate starts, the one `choose_start` takes. Bound nodes and VIDs win by kind. Among index and scan starts the cost decides: the vertices the start
    /// finds, times one plus the edges each of them has on average on the pattern's hops next to it (the hop's
    /// types' edges over the node's vertices, both ways for an undirected hop). A tag scan scans the node's least
    /// numerous label (its other labels are checked on each vertex).
    fn cheapest_start(
        &self,
        space: &quiver_api::SpaceDesc,
        path: &BoundPath,
        mut candidates: Vec<Candidate>,
    ) -> Option<Candidate> {
        let nodes = &path.nodes;
        let scans_only = candidates.iter().all(|c| c.0 >= 2);
        let choice = candidates.len() > 1 || nodes.iter().any(|n| n.tags.len() > 1);
        // Counts are asked only when they can change the choice.
        let stats = if scans_only && choice { self.engine.storage.stats(space).ok() } else { None };
        let Some(stats) = stats else {
            return candidates.into_iter().min_by_key(|c| (c.0, c.1));
        };
        let rows = |t: &SchemaRef| stats.rows(SchemaKind::Tag, t.id);
        for (_, i, start, _) in &mut candidates {
            if let Start::ScanTag(t) = start {
                if let Some(least) = nodes[*i].tags.iter().min_by_key(|t| rows(t)) {
                    *t = least.clone();
                }
            }
        }
        // The vertices a node stands for: those of its least numerous label, or every vertex.
        let population = |i: usize| nodes[i].tags.iter().map(rows).min().unwrap_or(stats.vertices).max(1) as f64;
        let edges_of = |e: &BoundEdge| {
            let n: i64 = e.types.iter().map(|t| stats.rows(SchemaKind::Edge, t.id)).sum();
            n as f64 * if e.direction == PatternDirection::Both { 2.0 } else { 1.0 }
        };
        let cost = |(_, i, start, _): &Candidate| {
            let found = match start {
                Start::Index(plan) => (rows(&plan.schema) / INDEX_EQUALITY_SHARE).max(1),
                Start::ScanTag(t) => rows(t),
                _ => stats.vertices,
            } as f64;
            let hops = [i.checked_sub(1).and_then(|h| path.edges.get(h)), path.edges.get(*i)];
            let degree: f64 = hops.into_iter().flatten().map(|e| edges_of(e) / population(*i)).sum();
            found * (1.0 + degree)
        };
        candidates.into_iter().min_by(|a, b| cost(a).total_cmp(&cost(b)).then((a.0, a.1).cmp(&(b.0, b.1))))
    }

    /// A LOOKUP on one of the node's tags for an equality in its property map or the WHERE, when an index can
    /// answer it.
    fn index_start(&self, space: &quiver_api::SpaceDesc, node: &BoundNode, conjuncts: &[&Expr]) -> Option<LookupPlan> {
        let indexes = self.engine.catalog.indexes(space);
        for tag in &node.tags {
            if !indexes.iter().any(|i| i.schema_id == tag.id && i.kind == SchemaKind::Tag) {
                continue;
            }
            let mut eqs: Vec<(String, Expr)> = node
                .props
                .iter()
                .filter(|(t, _, v)| t == &tag.name && is_constant(v))
                .map(|(_, p, v)| (p.clone(), v.clone()))
                .collect();
            for c in conjuncts {
                if let Some((t, p, v)) = prop_equality(&node.column, c) {
                    if t == tag.name {
                        eqs.push((p, v));
                    }
                }
            }
            let Some((prop, value)) = eqs.into_iter().next() else { continue };
            let lookup = LookupStatement {
                schema: tag.name.clone(),
                filter: Some(Expr::binary(
                    BinaryOp::Eq,
                    Expr::LabelProp { label: tag.name.clone(), prop },
                    Expr::Const(eval(&value, &crate::request::NoRow(self.req)).ok()?),
                )),
                yield_clause: Some(YieldClause {
                    distinct: false,
                    columns: vec![YieldColumn {
                        expr: Expr::Function {
                            name: "id".into(),
                            args: vec![Expr::Vertex(quiver_common::expr::VertexRef::Current)],
                        },
                        alias: Some("vid".into()),
                    }],
                }),
            };
            if let Ok(plan) = self.lookup(&lookup) {
                return Some(plan);
            }
        }
        None
    }

    /// Binds RETURN or WITH; returns it and the scope after it.
    fn projection(
        &self,
        space: &quiver_api::SpaceDesc,
        p: &Projection,
        scope: &Scope,
        with: bool,
        anon: &mut usize,
    ) -> QResult<(BoundProjection, Scope)> {
        let mut columns: Vec<YieldColumn> = Vec::new();
        let mut roll_ups = Vec::new();
        let mut next = Scope::default();
        if p.star {
            // `*`: every named alias in scope.
            for (name, kind) in &scope.aliases {
                if name.starts_with("__") {
                    continue;
                }
                columns.push(YieldColumn { expr: column(name), alias: Some(name.clone()) });
                next.add(name, *kind);
            }
            if columns.is_empty() && p.items.is_none() {
                return Err(semantic("RETURN * is not allowed when there are no variables in scope"));
            }
        }
        if let Some(items) = &p.items {
            // The scope the items are rewritten in: this one and the hidden columns of their patterns.
            let mut with_roll_ups = scope.clone();
            for c in &items.columns {
                if c.expr.any(&|e| matches!(e, Expr::Vertex(_) | Expr::Edge)) && !with {
                    let text = match &c.alias {
                        Some(a) => format!("{} AS {a}", c.expr),
                        None => c.expr.to_string(),
                    };
                    return Err(semantic(format!(
                        "keywords: vertex and edge are not supported in return clause `{text}'"
                    )));
                }
                if with {
                    check_labels(&c.expr, scope, |l| format!("Alias `{l}` not defined"))?;
                }
                let mut nested = None;
                c.expr.visit(&mut |x| {
                    if let Expr::Aggregate { arg: Some(a), .. } = x {
                        if nested.is_none() && a.has_aggregate() {
                            nested = Some(x.to_string());
                        }
                    }
                });
                if let Some(n) = nested {
                    return Err(semantic(format!("Aggregate function nesting is not allowed: `{n}'")));
                }
                let name = match (&c.alias, &c.expr) {
                    (Some(a), _) => a.clone(),
                    (None, Expr::Label(l)) => l.clone(),
                    (None, e) if with => {
                        let _ = e;
                        return Err(semantic("Expression in WITH must be aliased (use AS)"));
                    }
                    (None, e) => e.to_string(),
                };
                let kind = match &c.expr {
                    Expr::Label(l) => scope.kind(l).unwrap_or(AliasKind::Value),
                    _ => AliasKind::Value,
                };
                if with && next.kind(&name).is_some() && !matches!(&c.expr, Expr::Label(l) if *l == name) {
                    return Err(semantic(format!("`{name}': Redefined alias")));
                }
                next.add(&name, kind);
                let before = roll_ups.len();
                let expr = self.roll_up(space, &c.expr, scope, anon, &mut roll_ups)?;
                for p in &roll_ups[before..] {
                    let hidden = p.alias.as_ref().expect("a rolled-up pattern names its column");
                    with_roll_ups.add(hidden, AliasKind::Value);
                }
                columns.push(YieldColumn { expr: rewrite_owned(expr, &with_roll_ups)?, alias: Some(name) });
            }
        }
        let distinct = p.distinct || p.items.as_ref().is_some_and(|y| y.distinct);
        // ORDER BY names output columns (or is a constant), as NebulaGraph's MATCH requires.
        let mut order = Vec::new();
        if !p.order_by.is_empty() {
            let names: Vec<String> = columns.iter().map(|c| c.name()).collect();
            for (i, n) in names.iter().enumerate() {
                if names[..i].contains(n) {
                    return Err(semantic(format!("Duplicated columns not allowed: {n}")));
                }
            }
            for (e, desc) in &p.order_by {
                if is_constant(e) {
                    continue;
                }
                let Expr::Label(name) = e else {
                    return Err(semantic("Only column name can be used as sort item"));
                };
                if !names.contains(name) {
                    return Err(semantic(format!("Column `{name}' not found")));
                }
                order.push((name.clone(), *desc));
            }
        }
        let skip = p.skip.as_ref().map(|e| pagination(e, "SKIP", self)).transpose()?;
        let limit = p.limit.as_ref().map(|e| pagination(e, "LIMIT", self)).transpose()?;
        let filter = match &p.filter {
            Some(f) => {
                if f.has_aggregate() {
                    return Err(semantic("Invalid use of aggregating function in this context."));
                }
                Some(rewrite(f, &next)?)
            }
            None => None,
        };
        let projection =
            BoundProjection { roll_ups, yield_clause: YieldClause { distinct, columns }, order, skip, limit, filter };
        Ok((projection, next))
    }

    /// `e` with each path pattern in it (`(v)-[:like]->()`) replaced by a hidden column that will hold the list of
    /// its matches from the row; the patterns are bound (as a WHERE's pattern predicates are) into `roll_ups`.
    fn roll_up(
        &self,
        space: &quiver_api::SpaceDesc,
        e: &Expr,
        scope: &Scope,
        anon: &mut usize,
        roll_ups: &mut Vec<BoundPath>,
    ) -> QResult<Expr> {
        if !e.any(&|x| matches!(x, Expr::Pattern(_))) {
            return Ok(e.clone());
        }
        let mut out = e.clone();
        let mut err = None;
        out.visit_mut(&mut |x| {
            if err.is_some() {
                return;
            }
            if let Expr::Pattern(p) = x {
                match self.predicate_path(space, p, scope, anon) {
                    Ok(mut path) => {
                        let column = hidden(anon);
                        path.alias = Some(column.clone());
                        roll_ups.push(path);
                        *x = Expr::Label(column);
                    }
                    Err(e) => err = Some(e),
                }
            }
        });
        err.map_or(Ok(out), Err)
    }
}

/// SKIP or LIMIT: a non-negative integer constant or parameter, checked now with NebulaGraph's messages.
fn pagination(e: &Expr, what: &str, v: &Validator<'_>) -> QResult<Expr> {
    if !is_constant(e) {
        return Err(semantic("SKIP should be instantly evaluable"));
    }
    match eval(e, &crate::request::NoRow(v.req))? {
        Value::Int(n) if n < 0 => Err(semantic(format!("{what} should not be negative"))),
        Value::Int(n) => Ok(Expr::Const(Value::Int(n))),
        _ => Err(semantic(format!("{what} should be of type integer"))),
    }
}

/// A possible start of a path: its kind's rank (bound 0, VIDs 1, index 2, tag scan 3, every vertex 4), the node's
/// position, how its vertices are found, and the WHERE conjunct that finding answers exactly.
type Candidate = (u8, usize, Start, Option<usize>);

/// The share of a tag's vertices an index start by one equality is estimated to find: one in this many (no
/// per-value counts are kept).
const INDEX_EQUALITY_SHARE: i64 = 10;

fn hidden(anon: &mut usize) -> String {
    *anon += 1;
    format!("__anon_{anon}")
}

/// A property-map value: a constant or a parameter, as NebulaGraph requires ("Props must be evaluable").
fn evaluable(v: &Expr) -> QResult<Expr> {
    if is_constant(v) {
        Ok(v.clone())
    } else {
        Err(semantic(format!("Props must be evaluable: `{v}'")))
    }
}

/// `pattern` or `NOT pattern`: the pattern, and whether it is negated.
fn pattern_predicate(e: &Expr) -> Option<(&PathPattern, bool)> {
    match e {
        Expr::Pattern(p) => Some((p, false)),
        Expr::Unary { op: quiver_common::expr::UnaryOp::Not, operand } => match &**operand {
            Expr::Pattern(p) => Some((p, true)),
            _ => None,
        },
        _ => None,
    }
}

/// `id(col) == x`, `x == id(col)` or `id(col) IN x` among the conjuncts, with `x` constant: the conjunct's position,
/// `x`, and whether it is a list (`IN`).
fn ids_of(col: &str, conjuncts: &[&Expr]) -> Option<(usize, Expr, bool)> {
    let is_id = |e: &Expr| matches!(e, Expr::Function { name, args } if name.eq_ignore_ascii_case("id") && args.len() == 1 && matches!(&args[0], Expr::InputProp(c) if c == col));
    for (i, c) in conjuncts.iter().enumerate() {
        if let Expr::Binary { op, lhs, rhs } = c {
            match op {
                BinaryOp::Eq if is_id(lhs) && is_constant(rhs) => return Some((i, (**rhs).clone(), false)),
                BinaryOp::Eq if is_id(rhs) && is_constant(lhs) => return Some((i, (**lhs).clone(), false)),
                BinaryOp::In if is_id(lhs) && is_constant(rhs) => return Some((i, (**rhs).clone(), true)),
                _ => {}
            }
        }
    }
    None
}

/// `col.tag.prop == x` (either way round) with `x` constant: `(tag, prop, x)`.
fn prop_equality(col: &str, c: &Expr) -> Option<(String, String, Expr)> {
    let prop_of = |e: &Expr| match e {
        Expr::Attribute { base, name: prop } => match &**base {
            Expr::Attribute { base, name: tag } if matches!(&**base, Expr::InputProp(c) if c == col) => {
                Some((tag.clone(), prop.clone()))
            }
            _ => None,
        },
        _ => None,
    };
    if let Expr::Binary { op: BinaryOp::Eq, lhs, rhs } = c {
        if let (Some((t, p)), true) = (prop_of(lhs), is_constant(rhs)) {
            return Some((t, p, (**rhs).clone()));
        }
        if let (Some((t, p)), true) = (prop_of(rhs), is_constant(lhs)) {
            return Some((t, p, (**lhs).clone()));
        }
    }
    None
}

/// Checks that every bare name of `e` (outside the loops that bind it) is in scope.
fn check_labels(e: &Expr, scope: &Scope, message: impl Fn(&str) -> String) -> QResult<()> {
    let mut err = None;
    walk_labels(e, &mut Vec::new(), &mut |l| {
        if err.is_none() && scope.kind(l).is_none() {
            err = Some(semantic(message(l)));
        }
    });
    err.map_or(Ok(()), Err)
}

/// Calls `f` on every bare name not bound by an enclosing list comprehension, quantifier or reduce.
fn walk_labels(e: &Expr, bound: &mut Vec<String>, f: &mut dyn FnMut(&str)) {
    match e {
        Expr::Label(l) if !bound.contains(l) => f(l),
        Expr::LabelProp { label, .. } | Expr::EdgeMetaProp { edge: label, .. } if !bound.contains(label) => f(label),
        Expr::ListComprehension { var, list, filter, mapping } => {
            walk_labels(list, bound, f);
            bound.push(var.clone());
            filter.iter().chain(mapping).for_each(|x| walk_labels(x, bound, f));
            bound.pop();
        }
        Expr::Predicate { var, list, filter, .. } => {
            walk_labels(list, bound, f);
            bound.push(var.clone());
            walk_labels(filter, bound, f);
            bound.pop();
        }
        Expr::Reduce(r) => {
            walk_labels(&r.init, bound, f);
            walk_labels(&r.list, bound, f);
            bound.push(r.acc.clone());
            bound.push(r.var.clone());
            walk_labels(&r.mapping, bound, f);
            bound.truncate(bound.len() - 2);
        }
        other => other.for_each_child(&mut |c| walk_labels(c, bound, f)),
    }
}

/// `e` with its aliases turned into column reads, checked against `scope` with NebulaGraph's messages.
fn rewrite(e: &Expr, scope: &Scope) -> QResult<Expr> {
    rewrite_owned(e.clone(), scope)
}

/// [`rewrite`] of an expression already owned (no second copy).
fn rewrite_owned(mut e: Expr, scope: &Scope) -> QResult<Expr> {
    let mut err = None;
    rewrite_in(&mut e, scope, &mut Vec::new(), &mut err);
    err.map_or(Ok(e), Err)
}

fn rewrite_in(e: &mut Expr, scope: &Scope, bound: &mut Vec<String>, err: &mut Option<QError>) {
    if err.is_some() {
        return;
    }
    let undefined = |name: &str| semantic(format!("Alias used but not defined: `{name}'"));
    match e {
        Expr::Label(l) if !bound.contains(l) => match scope.kind(l) {
            Some(_) => *e = column(l),
            None => *err = Some(undefined(l)),
        },
        Expr::LabelProp { label, prop } if !bound.contains(label) => match scope.kind(label) {
            Some(_) => {
                *e = Expr::Attribute { base: Box::new(column(label)), name: std::mem::take(prop) };
            }
            None => *err = Some(undefined(label)),
        },
        Expr::Attribute { base, name: _ } if matches!(&**base, Expr::LabelProp { label, .. } if !bound.contains(label)) =>
        {
            // `v.tag.prop`: `v` must be a node (or a value that may hold one).
            let Expr::LabelProp { label, .. } = &**base else { unreachable!() };
            match scope.kind(label) {
                Some(AliasKind::Edge | AliasKind::Path) => {
                    *err = Some(semantic(format!("The type of `{label}' should be tag")));
                }
                _ => rewrite_in(base, scope, bound, err),
            }
        }
        Expr::EdgeMetaProp { edge, meta } if !bound.contains(edge) => {
            let what = match meta {
                quiver_common::expr::EdgeMeta::Src => "src",
                quiver_common::expr::EdgeMeta::Dst => "dst",
                quiver_common::expr::EdgeMeta::Rank => "ranking",
                quiver_common::expr::EdgeMeta::Type => "type",
            };
            let msg = match (scope.kind(edge), what) {
                (None, _) => format!("Alias used but not defined: `{edge}'"),
                (Some(AliasKind::Node), _) => format!("Vertex `{edge}' does not have the {what} attribute"),
                (Some(AliasKind::Edge), "src") => format!("To get the src vid of the edge, use src({edge})"),
                (Some(AliasKind::Edge), "dst") => format!("To get the dst vid of the edge, use dst({edge})"),
                (Some(AliasKind::Edge), "ranking") => format!("To get the ranking of the edge, use rank({edge})"),
                (Some(AliasKind::Edge), _) => format!("To get the type of the edge, use type({edge})"),
                (Some(AliasKind::Path), "src") => format!("To get the start node of the path, use startNode({edge})"),
                (Some(AliasKind::Path), "dst") => format!("To get the end node of the path, use endNode({edge})"),
                (Some(AliasKind::Path), w) => format!("Path `{edge}' does not have the {w} attribute"),
                (Some(_), "type") => format!("Alias `{edge}' does not have the edge property ranking"),
                (Some(_), w) => format!("Alias `{edge}' does not have the edge property {w}"),
            };
            *err = Some(semantic(msg));
        }
        Expr::Pattern(_) => {
            *err = Some(QError::not_supported(format!(
                "`{e}' other than as a condition of a MATCH's WHERE (alone, with NOT, or joined by AND)"
            )));
        }
        Expr::SrcProp { .. } | Expr::DstProp { .. } => {
            *err = Some(semantic(format!("Expression {e} is not allowed to use in cypher")));
        }
        // A MATCH has no piped input and no variables: NebulaGraph's DeduceTypeVisitor finds no such column.
        Expr::InputProp(col) => {
            *err = Some(semantic(format!("`$-.{col}', not exist prop `{col}'")));
        }
        Expr::VarProp { var, prop } => {
            *err = Some(semantic(format!("`${var}.{prop}', not exist variable `{var}'")));
        }
        Expr::ListComprehension { var, list, filter, mapping } => {
            rewrite_in(list, scope, bound, err);
            bound.push(var.clone());
            for x in filter.iter_mut().chain(mapping.iter_mut()) {
                rewrite_in(x, scope, bound, err);
            }
            bound.pop();
        }
        Expr::Predicate { var, list, filter, .. } => {
            rewrite_in(list, scope, bound, err);
            bound.push(var.clone());
            rewrite_in(filter, scope, bound, err);
            bound.pop();
        }
        Expr::Reduce(r) => {
            rewrite_in(&mut r.init, scope, bound, err);
            rewrite_in(&mut r.list, scope, bound, err);
            bound.push(r.acc.clone());
            bound.push(r.var.clone());
            rewrite_in(&mut r.mapping, scope, bound, err);
            bound.truncate(bound.len() - 2);
        }
        other => other.for_each_child_mut(&mut |c| rewrite_in(c, scope, bound, err)),
    }
}
