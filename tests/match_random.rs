//! MATCH against a naive reference matcher on random graphs: for many seeds, a small graph (INT64 or string VIDs;
//! tags `a(x int)`, `b(y int)`, and `c()` or no tag at all for vertices with neither; sometimes indexes on `a(x)` and
//! `b(y)`; edge types `r(w int)` and `s(w int)` with parallel edges of different ranks, reverse edges and self-loops;
//! sometimes only 2 to 4 vertices with as many edges; sometimes edge ends that are no vertex, inserted with the edges
//! only), then random statements whose rows are compared, as a multiset
//! (as a sequence under ORDER BY), with the reference's, with every optimizer rule on and with all of them off.
//!
//! Statements: one or two MATCH clauses of one or two comma-separated path patterns (0 to 3 edges; nodes anonymous
//! or named, with 0 to 2 labels and label property maps, aliases shared across patterns and clauses or repeated
//! within a path; edges `-->`, `<--`, `--`, `<-[]->` with type lists, `{w: k}` and step ranges from `*0` to `*3`;
//! named paths), each with an optional WHERE (`id(n) ==`/`IN` starts, comparisons of tag and edge properties under
//! AND/OR/NOT, path patterns as predicates with or without NOT), then OPTIONAL MATCH clauses, WITH [DISTINCT] ...
//! [WHERE] in between, and RETURN [DISTINCT] of `id(n)`, `n.a.x`, `src/dst/rank/type(e)`, `e.w`, `size(l)`,
//! `[x IN l | rank(x)]`, `length(p)`, `nodes(p)`, `relationships(p)`, `endNode(p)`, `size(pattern)` from a bound
//! node (a pattern as a value, counted by the reference as the paths it matches from the row) (sometimes ORDER BY
//! every column,
//! SKIP, LIMIT), or `count(*)` alone or grouped; and, more often than chance would make them, paths that are only
//! counted (the shape `fuse_match_count` runs in storage).
//!
//! The reference follows NebulaGraph's semantics: a path never reaches a vertex that does not exist (at a node of
//! the pattern); a pattern's nodes check their labels and property maps, its edges
//! their types, direction and property map; an edge (type, source, destination, rank) is used at most once within
//! one path pattern (not across the comma-separated patterns of a MATCH, nor across clauses) while vertices may
//! repeat; an undirected edge pattern walks every edge both ways, so a self-loop is walked twice (NebulaGraph reads it
//! once as an out-edge and once as an in-edge of the same vertex, `TraverseExecutor::expand` keeps both, and
//! `Edge::keyEqual` makes them one edge for uniqueness); the edges of a variable-length edge are listed in pattern
//! order; patterns and clauses join on their shared node aliases; OPTIONAL MATCH gives NULLs where nothing matches;
//! a WHERE is three-valued (a property of a tag the vertex lacks is NULL); ORDER BY puts NULL last.
//!
//! A statement whose reference work is large is replaced by another; one past the per-query memory or time bound
//! set here (the engine may start a pattern elsewhere than the reference) is skipped and reported, at most 1%.

use quiver_common::budget::Limits;
use quiver_common::rng::Rng;
use quiver_common::Value;
use quiver_query::{Params, Session};
use quiver_server::Database;
use std::fmt::Write as _;
use std::time::Duration;

/// Graphs and statements per graph of a default run (`MATCH_RANDOM_GRAPHS`, `MATCH_RANDOM_STATEMENTS` and
/// `MATCH_RANDOM_SEED`, the first seed, change them; `MATCH_RANDOM_VERBOSE` prints every graph and statement,
/// `MATCH_RANDOM_PLANS` tallies the operators of their plans).
const GRAPHS: u64 = 60;
const STATEMENTS: usize = 15;
/// A statement whose reference has more rows than this (or more intermediate rows than `WORK_MAX`) is replaced.
const ROWS_MAX: usize = 1_000;
const WORK_MAX: usize = 3_000;

// ---- the graph ----

/// A vertex with neither `a` nor `b` has `c`, or no tag at all (`c` deleted after the insert: Quiver keeps the
/// vertex, as `DELETE TAG` does in tests/queries/delete.test).
struct Vert {
    a: Option<i64>,
    b: Option<i64>,
    c: bool,
    /// Never inserted: only an end of edges (a path never reaches it).
    ghost: bool,
}

struct Ed {
    /// 0: `r`, 1: `s`.
    ty: usize,
    src: usize,
    dst: usize,
    rank: i64,
    w: i64,
}

struct Graph {
    string_vids: bool,
    /// Indexes on `a(x)` and `b(y)`, for starts from an equality.
    indexes: [bool; 2],
    verts: Vec<Vert>,
    edges: Vec<Ed>,
}

const EDGE_TYPES: [&str; 2] = ["r", "s"];
const TAGS: [&str; 3] = ["a", "b", "c"];

impl Graph {
    fn random(rng: &mut Rng) -> Graph {
        let string_vids = rng.below(2) == 0;
        // Mostly 6 to 12 vertices; sometimes 2 to 4 with as many edges, mostly parallel edges and self-loops.
        let tiny = rng.below(5) == 0;
        let n = if tiny { 2 + rng.below(3) as usize } else { 6 + rng.below(7) as usize };
        let verts = (0..n)
            .map(|_| match rng.below(6) {
                0 | 1 => Vert { a: Some(rng.below(4) as i64), b: None, c: false, ghost: false },
                2 | 3 => Vert { a: None, b: Some(rng.below(4) as i64), c: false, ghost: false },
                4 => Vert { a: Some(rng.below(4) as i64), b: Some(rng.below(4) as i64), c: false, ghost: false },
                _ => Vert { a: None, b: None, c: rng.below(3) != 0, ghost: false },
            })
            .collect::<Vec<_>>();
        // Sometimes an edge end that is no vertex (an edge inserted without its vertices).
        let mut verts = verts;
        for _ in 0..[0, 0, 1, 2][rng.below(4) as usize] {
            verts.push(Vert { a: None, b: None, c: false, ghost: true });
        }
        let n = verts.len();
        let mut edges: Vec<Ed> = Vec::new();
        let m = if tiny { 6 + rng.below(7) as usize } else { 2 * n + rng.below(2 * n as u64) as usize };
        for _ in 0..m {
            let ty = rng.below(2) as usize;
            let src = rng.below(n as u64) as usize;
            let dst = match rng.below(8) {
                0 => src,
                _ => rng.below(n as u64) as usize,
            };
            let rank = rng.below(3) as i64;
            let w = rng.below(4) as i64;
            // Sometimes a parallel edge (another rank) or the reverse edge of one already there.
            let e = match (edges.last(), rng.below(6)) {
                (Some(l), 0) => Ed { ty: l.ty, src: l.src, dst: l.dst, rank: l.rank + 1, w },
                (Some(l), 1) => Ed { ty: l.ty, src: l.dst, dst: l.src, rank: l.rank, w },
                _ => Ed { ty, src, dst, rank, w },
            };
            if !edges.iter().any(|x| x.ty == e.ty && x.src == e.src && x.dst == e.dst && x.rank == e.rank) {
                edges.push(e);
            }
        }
        let indexes = [rng.below(2) == 0, rng.below(2) == 0];
        Graph { string_vids, indexes, verts, edges }
    }

    fn vid(&self, i: usize) -> Value {
        if self.string_vids {
            Value::String(format!("v{i}").into())
        } else {
            Value::Int(i as i64 * 3 - 5)
        }
    }

    /// The VID of vertex `i`, or of no vertex at all.
    fn vid_text(&self, i: Option<usize>) -> String {
        match (i, self.string_vids) {
            (Some(i), true) => format!("\"v{i}\""),
            (Some(i), false) => (i as i64 * 3 - 5).to_string(),
            (None, true) => "\"zz\"".into(),
            (None, false) => "1000".into(),
        }
    }

    fn setup(&self) -> Vec<String> {
        let vid_type = if self.string_vids { "FIXED_STRING(8)" } else { "INT64" };
        let mut out = vec![
            format!("CREATE SPACE g(vid_type = {vid_type}, partition_num = 3)"),
            "USE g".into(),
            "CREATE TAG a(x int); CREATE TAG b(y int); CREATE TAG c(); CREATE EDGE r(w int); CREATE EDGE s(w int)"
                .into(),
        ];
        if self.indexes[0] {
            out.push("CREATE TAG INDEX ia ON a(x)".into());
        }
        if self.indexes[1] {
            out.push("CREATE TAG INDEX ib ON b(y)".into());
        }
        for (i, v) in self.verts.iter().enumerate().filter(|(_, v)| !v.ghost) {
            let vid = self.vid_text(Some(i));
            out.push(match (v.a, v.b) {
                (Some(x), Some(y)) => format!("INSERT VERTEX a(x), b(y) VALUES {vid}:({x}, {y})"),
                (Some(x), None) => format!("INSERT VERTEX a(x) VALUES {vid}:({x})"),
                (None, Some(y)) => format!("INSERT VERTEX b(y) VALUES {vid}:({y})"),
                (None, None) => format!("INSERT VERTEX c() VALUES {vid}:()"),
            });
            if v.a.is_none() && v.b.is_none() && !v.c {
                out.push(format!("DELETE TAG c FROM {vid}"));
            }
        }
        for e in &self.edges {
            out.push(format!(
                "INSERT EDGE {}(w) VALUES {}->{}@{}:({})",
                EDGE_TYPES[e.ty],
                self.vid_text(Some(e.src)),
                self.vid_text(Some(e.dst)),
                e.rank,
                e.w
            ));
        }
        out
    }

    fn has_tag(&self, v: usize, tag: usize) -> bool {
        let x = &self.verts[v];
        match tag {
            0 => x.a.is_some(),
            1 => x.b.is_some(),
            _ => x.c,
        }
    }

    fn prop(&self, v: usize, tag: usize) -> Option<i64> {
        match tag {
            0 => self.verts[v].a,
            1 => self.verts[v].b,
            _ => None,
        }
    }
}

// ---- statements ----

#[derive(Clone, Copy, PartialEq)]
enum Dir {
    Out,
    In,
    Both,
}

struct NodeP {
    name: String,
    /// Written with its alias (else anonymous, with a hidden name of the reference's own).
    shown: bool,
    /// Tags (0 `a`, 1 `b`, 2 `c`), each with the value of its property map `{x: ..}` / `{y: ..}`.
    labels: Vec<(usize, Option<i64>)>,
}

struct EdgeP {
    name: String,
    shown: bool,
    /// Edge types (indexes into `EDGE_TYPES`); empty: every type.
    types: Vec<usize>,
    dir: Dir,
    range: Option<(u32, u32)>,
    w: Option<i64>,
    /// Written `-[...]-` style variant: 0 plain, 1 `<-[]->` for Both, 2 `*..n` for a range starting at 1.
    style: u8,
}

struct PathP {
    name: Option<String>,
    nodes: Vec<NodeP>,
    edges: Vec<EdgeP>,
}

#[derive(Clone, Copy)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

const OPS: [Op; 6] = [Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Eq, Op::Ne];

impl Op {
    fn text(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "==",
            Op::Ne => "!=",
        }
    }

    fn holds(self, a: i64, b: i64) -> bool {
        match self {
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Eq => a == b,
            Op::Ne => a != b,
        }
    }
}

enum Cond {
    /// `id(n) == vid` (`None`: a VID of no vertex).
    IdEq(String, Option<usize>),
    IdIn(String, Vec<Option<usize>>),
    /// `n.tag.prop op k`.
    Prop(String, usize, Op, i64),
    /// `e.w op k` on a single edge.
    EdgeW(String, Op, i64),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
}

struct Clause {
    /// `WITH [DISTINCT] aliases [WHERE cond]` instead of a MATCH (`paths` and `preds` empty).
    with: Option<(Vec<String>, bool)>,
    optional: bool,
    paths: Vec<PathP>,
    /// Path patterns as conditions (`(n)-->()`, with `true`: `NOT (n)-->()`), joined to `cond` by AND.
    preds: Vec<(PathP, bool)>,
    cond: Option<Cond>,
}

enum Item {
    Id(String),
    Prop(String, usize),
    Src(String),
    Dst(String),
    Rank(String),
    W(String),
    Type(String),
    Size(String),
    Ranks(String),
    Srcs(String),
    Ws(String),
    Len(String),
    /// `[x IN nodes(p) | id(x)]`.
    PathIds(String),
    /// `[x IN relationships(p) | rank(x)]`.
    PathRanks(String),
    /// `id(endNode(p))`.
    End(String),
    /// `size(pattern)`: how many paths a pattern matches from the row (its first node bound, no new aliases).
    Degree(PathP),
}

/// `ORDER BY` every column (each `true`: DESC), then `SKIP` and `LIMIT`: a single order of the rows.
struct Order {
    desc: Vec<bool>,
    skip: Option<usize>,
    limit: Option<usize>,
}

enum Ret {
    Items { items: Vec<Item>, distinct: bool, order: Option<Order> },
    Count,
    GroupCount(Item),
}

struct Stmt {
    clauses: Vec<Clause>,
    ret: Ret,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Node,
    Edge,
    List,
    Path,
}

/// The aliases of a statement being generated: name, kind, and whether an OPTIONAL MATCH defined it.
struct Gen<'a> {
    rng: &'a mut Rng,
    g: &'a Graph,
    scope: Vec<(String, Kind, bool)>,
    next: usize,
    var_edges: usize,
}

impl Gen<'_> {
    fn below(&mut self, n: u64) -> u64 {
        self.rng.below(n)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.rng.below(100) < percent
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    fn labels(&mut self) -> Vec<(usize, Option<i64>)> {
        // `c` (neither `a` nor `b`) alone; a property map's value mostly one that some vertex has.
        let tags: &[usize] = match self.below(20) {
            0..=11 => &[],
            12..=14 => &[0],
            15..=16 => &[1],
            17 => &[2],
            18 => &[0, 1],
            _ => &[1, 0],
        };
        let mut out = Vec::new();
        for &t in tags {
            let p = (t < 2 && self.chance(25)).then(|| {
                let v = self.below(self.g.verts.len() as u64) as usize;
                self.g.prop(v, t).unwrap_or(self.below(3) as i64)
            });
            out.push((t, p));
        }
        out
    }

    fn node(&mut self, shared: &[String], this_path: &[String], optional: bool) -> NodeP {
        // An alias bound before (a join), or one of this path (a cycle), written bare.
        if !shared.is_empty() && self.chance(if optional { 50 } else { 40 }) {
            let name = shared[self.below(shared.len() as u64) as usize].clone();
            let labels = if self.chance(20) { self.labels() } else { Vec::new() };
            return NodeP { name, shown: true, labels };
        }
        if !this_path.is_empty() && self.chance(8) {
            let name = this_path[self.below(this_path.len() as u64) as usize].clone();
            let labels = if self.chance(20) { self.labels() } else { Vec::new() };
            return NodeP { name, shown: true, labels };
        }
        let shown = self.chance(70);
        let name = if shown { self.fresh("n") } else { self.fresh("_hn") };
        NodeP { name, shown, labels: self.labels() }
    }

    fn edge(&mut self) -> EdgeP {
        let shown = self.chance(60);
        let name = if shown { self.fresh("e") } else { self.fresh("_he") };
        let types = match self.below(6) {
            0 | 1 => vec![],
            2 => vec![0],
            3 => vec![1],
            4 => vec![0, 1],
            _ => vec![1, 0],
        };
        let dir = [Dir::Out, Dir::Out, Dir::In, Dir::Both, Dir::Both][self.below(5) as usize];
        let range = if self.var_edges < 2 && self.chance(35) {
            self.var_edges += 1;
            let ranges: &[(u32, u32)] = if self.var_edges == 1 {
                &[(0, 1), (0, 2), (1, 2), (1, 3), (2, 2), (1, 1), (2, 3), (3, 3), (0, 0)]
            } else {
                &[(0, 1), (1, 2), (2, 2), (1, 1)]
            };
            Some(ranges[self.below(ranges.len() as u64) as usize])
        } else {
            None
        };
        let w = self.chance(12).then(|| self.below(4) as i64);
        let style = match (dir, range) {
            (Dir::Both, _) if self.chance(20) => 1,
            (_, Some((1, _))) if self.chance(30) => 2,
            _ => 0,
        };
        EdgeP { name, shown, types, dir, range, w, style }
    }

    /// A path pattern; `shared` are the node aliases it may join on.
    fn path(&mut self, shared: &[String], optional: bool, must_share: bool) -> PathP {
        let len = [0, 1, 1, 1, 1, 2, 2, 2, 3][self.below(9) as usize];
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        let mut mine: Vec<String> = Vec::new();
        for i in 0..=len {
            let node = if i == 0 && must_share {
                let name = shared[self.below(shared.len() as u64) as usize].clone();
                let labels = if self.chance(15) { self.labels() } else { Vec::new() };
                NodeP { name, shown: true, labels }
            } else {
                let candidates: Vec<String> = shared.iter().filter(|s| !mine.contains(s)).cloned().collect();
                self.node(&candidates, &mine, optional)
            };
            if node.shown && !mine.contains(&node.name) {
                mine.push(node.name.clone());
            }
            nodes.push(node);
            if i < len {
                edges.push(self.edge());
            }
        }
        let name = self.chance(20).then(|| self.fresh("p"));
        PathP { name, nodes, edges }
    }

    fn cond_atom(&mut self, nodes: &[String], single_edges: &[String]) -> Cond {
        let g = self.g;
        let pick = |rng: &mut Rng, l: &[String]| l[rng.below(l.len() as u64) as usize].clone();
        let vid = |rng: &mut Rng| (rng.below(10) != 0).then(|| rng.below(g.verts.len() as u64) as usize);
        if !single_edges.is_empty() && self.chance(25) {
            let e = pick(self.rng, single_edges);
            let op = OPS[self.below(6) as usize];
            return Cond::EdgeW(e, op, self.below(4) as i64);
        }
        let n = pick(self.rng, nodes);
        match self.below(4) {
            0 => Cond::IdEq(n, vid(self.rng)),
            1 => {
                let k = 1 + self.below(4);
                Cond::IdIn(n, (0..k).map(|_| vid(self.rng)).collect())
            }
            _ => {
                let op = OPS[self.below(6) as usize];
                Cond::Prop(n, self.below(2) as usize, op, self.below(4) as i64)
            }
        }
    }

    fn cond(&mut self, nodes: &[String], single_edges: &[String], depth: u32) -> Cond {
        match self.below(if depth > 1 { 1 } else { 6 }) {
            0..=2 => self.cond_atom(nodes, single_edges),
            3 => Cond::And(
                Box::new(self.cond(nodes, single_edges, depth + 1)),
                Box::new(self.cond(nodes, single_edges, depth + 1)),
            ),
            4 => Cond::Or(
                Box::new(self.cond(nodes, single_edges, depth + 1)),
                Box::new(self.cond(nodes, single_edges, depth + 1)),
            ),
            _ => Cond::Not(Box::new(self.cond_atom(nodes, single_edges))),
        }
    }

    fn clause(&mut self, optional: bool) -> Clause {
        let shared: Vec<String> = self
            .scope
            .iter()
            .filter(|(_, k, nullable)| *k == Kind::Node && !nullable)
            .map(|(n, _, _)| n.clone())
            .collect();
        let paths_n = if self.chance(30) { 2 } else { 1 };
        let mut paths = Vec::new();
        let mut clause_nodes: Vec<String> = Vec::new();
        for i in 0..paths_n {
            let mut joinable = shared.clone();
            joinable.extend(clause_nodes.iter().cloned());
            let must_share = optional && i == 0 && !shared.is_empty();
            let p = self.path(&joinable, optional, must_share);
            for n in &p.nodes {
                if n.shown && !self.scope.iter().any(|(s, _, _)| *s == n.name) {
                    self.scope.push((n.name.clone(), Kind::Node, optional));
                    clause_nodes.push(n.name.clone());
                }
            }
            for e in &p.edges {
                if e.shown {
                    let kind = if e.range.is_some() { Kind::List } else { Kind::Edge };
                    self.scope.push((e.name.clone(), kind, optional));
                }
            }
            if let Some(name) = &p.name {
                self.scope.push((name.clone(), Kind::Path, optional));
            }
            paths.push(p);
        }
        let cond = if !optional && self.chance(50) {
            let nodes: Vec<String> =
                self.scope.iter().filter(|(_, k, _)| *k == Kind::Node).map(|(n, _, _)| n.clone()).collect();
            let edges: Vec<String> =
                self.scope.iter().filter(|(_, k, _)| *k == Kind::Edge).map(|(n, _, _)| n.clone()).collect();
            if nodes.is_empty() {
                None
            } else if self.chance(40) {
                // The usual start: the first named node by its VIDs.
                let n = clause_nodes.first().cloned().unwrap_or_else(|| nodes[0].clone());
                let start = self.cond_atom(&[n], &[]);
                if self.chance(50) {
                    Some(Cond::And(Box::new(start), Box::new(self.cond(&nodes, &edges, 1))))
                } else {
                    Some(start)
                }
            } else {
                Some(self.cond(&nodes, &edges, 0))
            }
        } else {
            None
        };
        let mut preds = Vec::new();
        if !optional && self.chance(25) {
            let nodes: Vec<String> =
                self.scope.iter().filter(|(_, k, _)| *k == Kind::Node).map(|(n, _, _)| n.clone()).collect();
            if !nodes.is_empty() {
                let p = self.predicate(&nodes);
                preds.push((p, self.chance(40)));
            }
        }
        Clause { with: None, optional, paths, preds, cond }
    }

    /// `WITH` some of the aliases in scope, sometimes DISTINCT, sometimes with a WHERE.
    fn with(&mut self) -> Clause {
        let mut kept: Vec<(String, Kind, bool)> = Vec::new();
        for a in self.scope.clone() {
            if self.chance(60) {
                kept.push(a);
            }
        }
        if !kept.iter().any(|(_, k, nullable)| *k == Kind::Node && !nullable) {
            if let Some(a) = self.scope.iter().find(|(_, k, nullable)| *k == Kind::Node && !nullable) {
                kept.push(a.clone());
            }
        }
        if kept.is_empty() {
            kept.push(self.scope[0].clone());
        }
        self.scope = kept;
        let names: Vec<String> = self.scope.iter().map(|(n, _, _)| n.clone()).collect();
        let distinct = self.chance(20);
        let nodes: Vec<String> =
            self.scope.iter().filter(|(_, k, _)| *k == Kind::Node).map(|(n, _, _)| n.clone()).collect();
        let edges: Vec<String> =
            self.scope.iter().filter(|(_, k, _)| *k == Kind::Edge).map(|(n, _, _)| n.clone()).collect();
        let cond = (!nodes.is_empty() && self.chance(30)).then(|| self.cond(&nodes, &edges, 0));
        Clause { with: Some((names, distinct)), optional: false, paths: Vec::new(), preds: Vec::new(), cond }
    }

    /// A path pattern of a WHERE: it starts at a node bound before and introduces no alias.
    fn predicate(&mut self, bound: &[String]) -> PathP {
        let len = 1 + self.below(2) as usize;
        let mut nodes = vec![NodeP {
            name: bound[self.below(bound.len() as u64) as usize].clone(),
            shown: true,
            labels: Vec::new(),
        }];
        let mut edges = Vec::new();
        for _ in 0..len {
            let mut e = self.edge();
            e.shown = false;
            e.name = self.fresh("_he");
            edges.push(e);
            nodes.push(if self.chance(35) {
                NodeP { name: bound[self.below(bound.len() as u64) as usize].clone(), shown: true, labels: Vec::new() }
            } else {
                let name = self.fresh("_hn");
                NodeP { name, shown: false, labels: self.labels() }
            });
        }
        PathP { name: None, nodes, edges }
    }

    fn item(&mut self) -> Option<Item> {
        if self.scope.is_empty() {
            return None;
        }
        let at = self.below(self.scope.len() as u64) as usize;
        let (name, kind, nullable) = self.scope[at].clone();
        if kind == Kind::Node && !nullable && self.chance(15) {
            let bound: Vec<String> = self
                .scope
                .iter()
                .filter(|(_, k, nullable)| *k == Kind::Node && !nullable)
                .map(|(n, _, _)| n.clone())
                .collect();
            let mut p = self.predicate(&bound);
            p.nodes[0].name = name;
            return Some(Item::Degree(p));
        }
        Some(match kind {
            Kind::Node => match self.below(3) {
                0 => Item::Prop(name, self.below(2) as usize),
                _ => Item::Id(name),
            },
            Kind::Edge => match self.below(5) {
                0 => Item::Src(name),
                1 => Item::Dst(name),
                2 => Item::Rank(name),
                3 => Item::Type(name),
                _ => Item::W(name),
            },
            Kind::List => match self.below(4) {
                0 => Item::Size(name),
                1 => Item::Ranks(name),
                2 => Item::Ws(name),
                _ => Item::Srcs(name),
            },
            Kind::Path => match self.below(4) {
                0 => Item::PathIds(name),
                1 => Item::PathRanks(name),
                2 => Item::End(name),
                _ => Item::Len(name),
            },
        })
    }

    /// A path that is only counted (the shape `fuse_match_count` runs in storage): one MATCH of one path of 1 to 3
    /// edges, mostly single ones without a property map, from a start with labels, the other nodes mostly without;
    /// `id(n) ==`/`IN` on the start or the last node, or no WHERE; `count(*)` alone or per `id` of the last node.
    fn counted(&mut self) -> Stmt {
        let len = 1 + self.below(3) as usize;
        let (mut nodes, mut edges) = (Vec::new(), Vec::new());
        for i in 0..=len {
            let shown = i == 0 || i == len || self.chance(40);
            let name = if shown { self.fresh("n") } else { self.fresh("_hn") };
            let labels = if i == 0 || self.chance(10) { self.labels() } else { Vec::new() };
            nodes.push(NodeP { name, shown, labels });
            if i < len {
                let mut e = self.edge();
                if self.chance(90) {
                    e.range = None;
                    e.w = None;
                }
                edges.push(e);
            }
        }
        let (first, last) = (nodes[0].name.clone(), nodes[len].name.clone());
        let vid = |g: &mut Gen<'_>| (g.below(10) != 0).then(|| g.below(g.g.verts.len() as u64) as usize);
        let cond = match self.below(5) {
            0 | 1 => Some(Cond::IdEq(first, vid(self))),
            2 => Some(Cond::IdIn(first, (0..1 + self.below(3)).map(|_| vid(self)).collect())),
            3 => Some(Cond::IdEq(last.clone(), vid(self))),
            _ => None,
        };
        let ret = if self.chance(50) { Ret::Count } else { Ret::GroupCount(Item::Id(last)) };
        let path = PathP { name: None, nodes, edges };
        Stmt { clauses: vec![Clause { with: None, optional: false, paths: vec![path], preds: Vec::new(), cond }], ret }
    }

    fn statement(&mut self) -> Stmt {
        if self.chance(12) {
            return self.counted();
        }
        let mut clauses = vec![self.clause(false)];
        let with = |g: &mut Gen<'_>, clauses: &mut Vec<Clause>| {
            if !g.scope.is_empty() && g.chance(12) {
                clauses.push(g.with());
            }
        };
        with(self, &mut clauses);
        if self.chance(30) {
            clauses.push(self.clause(false));
            with(self, &mut clauses);
        }
        let optionals = [0, 0, 0, 0, 1, 1, 1, 2][self.below(8) as usize];
        for _ in 0..optionals {
            if self.scope.iter().any(|(_, k, nullable)| *k == Kind::Node && !nullable) {
                clauses.push(self.clause(true));
                with(self, &mut clauses);
            }
        }
        let ret = match self.below(10) {
            0 => Ret::Count,
            1 => match self.scope.iter().find(|(_, k, _)| *k == Kind::Node) {
                Some((n, _, _)) => Ret::GroupCount(Item::Id(n.clone())),
                None => Ret::Count,
            },
            _ => {
                let k = 1 + self.below(4);
                let items: Vec<Item> = (0..k).filter_map(|_| self.item()).collect();
                if items.is_empty() {
                    Ret::Count
                } else {
                    let order = self.chance(20).then(|| Order {
                        desc: items.iter().map(|_| self.chance(40)).collect(),
                        skip: self.chance(40).then(|| self.below(4) as usize),
                        limit: self.chance(70).then(|| self.below(6) as usize),
                    });
                    Ret::Items { items, distinct: self.chance(10), order }
                }
            }
        };
        Stmt { clauses, ret }
    }
}

// ---- rendering ----

fn render_node(n: &NodeP) -> String {
    let mut s = String::from("(");
    if n.shown {
        s.push_str(&n.name);
    }
    for (t, p) in &n.labels {
        write!(s, ":{}", TAGS[*t]).unwrap();
        if let Some(v) = p {
            write!(s, "{{{}: {v}}}", ["x", "y"][*t]).unwrap();
        }
    }
    s.push(')');
    s
}

fn render_edge(e: &EdgeP) -> String {
    let mut inner = String::new();
    if e.shown {
        inner.push_str(&e.name);
    }
    for (i, t) in e.types.iter().enumerate() {
        inner.push_str(if i == 0 { ":" } else { "|" });
        inner.push_str(EDGE_TYPES[*t]);
    }
    if let Some((lo, hi)) = e.range {
        if e.style == 2 && lo == 1 {
            write!(inner, "*..{hi}").unwrap();
        } else if lo == hi {
            write!(inner, "*{lo}").unwrap();
        } else {
            write!(inner, "*{lo}..{hi}").unwrap();
        }
    }
    if let Some(w) = e.w {
        write!(inner, "{{w: {w}}}").unwrap();
    }
    if inner.is_empty() {
        return match (e.dir, e.style) {
            (Dir::Out, _) => "-->".into(),
            (Dir::In, _) => "<--".into(),
            (Dir::Both, 1) => "<-[]->".into(),
            (Dir::Both, _) => "--".into(),
        };
    }
    match (e.dir, e.style) {
        (Dir::Out, _) => format!("-[{inner}]->"),
        (Dir::In, _) => format!("<-[{inner}]-"),
        (Dir::Both, 1) => format!("<-[{inner}]->"),
        (Dir::Both, _) => format!("-[{inner}]-"),
    }
}

fn render_path(p: &PathP) -> String {
    let mut s = String::new();
    if let Some(n) = &p.name {
        write!(s, "{n} = ").unwrap();
    }
    for (i, n) in p.nodes.iter().enumerate() {
        s.push_str(&render_node(n));
        if let Some(e) = p.edges.get(i) {
            s.push_str(&render_edge(e));
        }
    }
    s
}

fn render_cond(c: &Cond, g: &Graph) -> String {
    match c {
        Cond::IdEq(n, v) => format!("id({n}) == {}", g.vid_text(*v)),
        Cond::IdIn(n, vs) => {
            format!("id({n}) IN [{}]", vs.iter().map(|v| g.vid_text(*v)).collect::<Vec<_>>().join(", "))
        }
        Cond::Prop(n, t, op, k) => format!("{n}.{}.{} {} {k}", TAGS[*t], ["x", "y"][*t], op.text()),
        Cond::EdgeW(e, op, k) => format!("{e}.w {} {k}", op.text()),
        Cond::And(a, b) => format!("({} AND {})", render_cond(a, g), render_cond(b, g)),
        Cond::Or(a, b) => format!("({} OR {})", render_cond(a, g), render_cond(b, g)),
        Cond::Not(a) => format!("NOT ({})", render_cond(a, g)),
    }
}

fn render_item(i: &Item) -> String {
    match i {
        Item::Id(n) => format!("id({n})"),
        Item::Prop(n, t) => format!("{n}.{}.{}", TAGS[*t], ["x", "y"][*t]),
        Item::Src(e) => format!("src({e})"),
        Item::Dst(e) => format!("dst({e})"),
        Item::Rank(e) => format!("rank({e})"),
        Item::W(e) => format!("{e}.w"),
        Item::Type(e) => format!("type({e})"),
        Item::Size(l) => format!("size({l})"),
        Item::Ranks(l) => format!("[x IN {l} | rank(x)]"),
        Item::Srcs(l) => format!("[x IN {l} | src(x)]"),
        Item::Ws(l) => format!("[x IN {l} | x.w]"),
        Item::Len(p) => format!("length({p})"),
        Item::PathIds(p) => format!("[x IN nodes({p}) | id(x)]"),
        Item::PathRanks(p) => format!("[x IN relationships({p}) | rank(x)]"),
        Item::End(p) => format!("id(endNode({p}))"),
        Item::Degree(p) => format!("size({})", render_path(p)),
    }
}

fn render(s: &Stmt, g: &Graph) -> String {
    let mut out = String::new();
    for c in &s.clauses {
        if let Some((names, distinct)) = &c.with {
            write!(out, "WITH {}{}", if *distinct { "DISTINCT " } else { "" }, names.join(", ")).unwrap();
            if let Some(cond) = &c.cond {
                write!(out, " WHERE {}", render_cond(cond, g)).unwrap();
            }
            out.push(' ');
            continue;
        }
        out.push_str(if c.optional { "OPTIONAL MATCH " } else { "MATCH " });
        out.push_str(&c.paths.iter().map(render_path).collect::<Vec<_>>().join(", "));
        let mut conjuncts: Vec<String> =
            c.preds.iter().map(|(p, not)| format!("{}{}", if *not { "NOT " } else { "" }, render_path(p))).collect();
        conjuncts.extend(c.cond.iter().map(|cond| render_cond(cond, g)));
        if !conjuncts.is_empty() {
            write!(out, " WHERE {}", conjuncts.join(" AND ")).unwrap();
        }
        out.push(' ');
    }
    match &s.ret {
        Ret::Count => out.push_str("RETURN count(*) AS n"),
        Ret::GroupCount(i) => write!(out, "RETURN {} AS k, count(*) AS n", render_item(i)).unwrap(),
        Ret::Items { items, distinct, order } => {
            out.push_str(if *distinct { "RETURN DISTINCT " } else { "RETURN " });
            let cols: Vec<String> =
                items.iter().enumerate().map(|(i, it)| format!("{} AS c{i}", render_item(it))).collect();
            out.push_str(&cols.join(", "));
            if let Some(o) = order {
                let keys: Vec<String> =
                    o.desc.iter().enumerate().map(|(i, d)| format!("c{i}{}", if *d { " DESC" } else { "" })).collect();
                write!(out, " ORDER BY {}", keys.join(", ")).unwrap();
                if let Some(k) = o.skip {
                    write!(out, " SKIP {k}").unwrap();
                }
                if let Some(k) = o.limit {
                    write!(out, " LIMIT {k}").unwrap();
                }
            }
        }
    }
    out
}

// ---- the reference ----

#[derive(Clone, PartialEq)]
enum B {
    Node(usize),
    Edge(usize),
    List(Vec<usize>),
    /// A path's vertices and edges in pattern order.
    Path(Vec<usize>, Vec<usize>),
    Null,
}

type Row = Vec<(String, B)>;

fn get<'a>(row: &'a Row, name: &str) -> Option<&'a B> {
    row.iter().find(|(n, _)| n == name).map(|(_, b)| b)
}

struct Reference<'a> {
    g: &'a Graph,
    work: usize,
}

/// Too many rows: the statement is replaced by another.
struct TooBig;

impl Reference<'_> {
    fn node_ok(&self, n: &NodeP, v: usize) -> bool {
        !self.g.verts[v].ghost
            && n.labels
                .iter()
                .all(|(t, p)| self.g.has_tag(v, *t) && p.is_none_or(|want| self.g.prop(v, *t) == Some(want)))
    }

    /// The steps of one edge of `e` from `v`: (edge, far end). An undirected pattern walks each edge both ways,
    /// so a self-loop gives two steps.
    fn steps(&self, e: &EdgeP, v: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, x) in self.g.edges.iter().enumerate() {
            if !(e.types.is_empty() || e.types.contains(&x.ty)) || e.w.is_some_and(|w| w != x.w) {
                continue;
            }
            if matches!(e.dir, Dir::Out | Dir::Both) && x.src == v {
                out.push((i, x.dst));
            }
            if matches!(e.dir, Dir::In | Dir::Both) && x.dst == v {
                out.push((i, x.src));
            }
        }
        out
    }

    /// Every walk of `e` from `v` avoiding `used`: (edges in order, far end).
    fn walks(&self, e: &EdgeP, v: usize, used: &[usize]) -> Vec<(Vec<usize>, usize)> {
        let (lo, hi) = e.range.unwrap_or((1, 1));
        let mut out = Vec::new();
        let mut stack: Vec<(Vec<usize>, usize)> = vec![(Vec::new(), v)];
        while let Some((taken, at)) = stack.pop() {
            if taken.len() as u32 >= lo {
                out.push((taken.clone(), at));
            }
            if taken.len() as u32 == hi {
                continue;
            }
            for (edge, far) in self.steps(e, at) {
                if used.contains(&edge) || taken.contains(&edge) {
                    continue;
                }
                let mut next = taken.clone();
                next.push(edge);
                stack.push((next, far));
            }
        }
        out
    }

    fn tick(&mut self) -> Result<(), TooBig> {
        self.work += 1;
        if self.work > WORK_MAX {
            Err(TooBig)
        } else {
            Ok(())
        }
    }

    /// Extends `row` with every match of `p` from its node `i` on, at vertex `v`.
    fn walk_from(
        &mut self,
        p: &PathP,
        i: usize,
        v: usize,
        row: &mut Row,
        used: &mut Vec<usize>,
        out: &mut Vec<Row>,
    ) -> Result<(), TooBig> {
        let node = &p.nodes[i];
        if !self.node_ok(node, v) {
            return Ok(());
        }
        let pushed = match get(row, &node.name) {
            Some(B::Node(x)) if *x == v => false,
            Some(_) => return Ok(()),
            None => {
                row.push((node.name.clone(), B::Node(v)));
                true
            }
        };
        if i == p.edges.len() {
            self.tick()?;
            let mut done = row.clone();
            if let Some(name) = &p.name {
                let path = self.path_value(p, &done);
                done.push((name.clone(), path));
            }
            out.push(done);
        } else {
            let e = &p.edges[i];
            for (taken, far) in self.walks(e, v, used) {
                self.tick()?;
                let b = if e.range.is_some() { B::List(taken.clone()) } else { B::Edge(taken[0]) };
                row.push((e.name.clone(), b));
                let before = used.len();
                used.extend(&taken);
                self.walk_from(p, i + 1, far, row, used, out)?;
                used.truncate(before);
                row.pop();
            }
        }
        if pushed {
            row.pop();
        }
        Ok(())
    }

    /// The path value of a complete match of `p` in `row`.
    fn path_value(&self, p: &PathP, row: &Row) -> B {
        let Some(B::Node(mut at)) = get(row, &p.nodes[0].name).cloned() else { unreachable!() };
        let (mut nodes, mut edges) = (vec![at], Vec::new());
        for e in &p.edges {
            let taken = match get(row, &e.name) {
                Some(B::Edge(x)) => vec![*x],
                Some(B::List(l)) => l.clone(),
                _ => unreachable!(),
            };
            for x in taken {
                let x_ = &self.g.edges[x];
                at = if x_.src == at { x_.dst } else { x_.src };
                nodes.push(at);
                edges.push(x);
            }
        }
        B::Path(nodes, edges)
    }

    fn path(&mut self, p: &PathP, row: &Row, out: &mut Vec<Row>) -> Result<(), TooBig> {
        let starts: Vec<usize> = match get(row, &p.nodes[0].name) {
            Some(B::Node(v)) => vec![*v],
            Some(_) => vec![],
            None => (0..self.g.verts.len()).collect(),
        };
        for v in starts {
            self.walk_from(p, 0, v, &mut row.clone(), &mut Vec::new(), out)?;
        }
        Ok(())
    }

    fn cond(&self, c: &Cond, row: &Row) -> Option<bool> {
        let node = |n: &str| match get(row, n) {
            Some(B::Node(v)) => Some(*v),
            _ => None,
        };
        match c {
            Cond::IdEq(n, want) => node(n).map(|v| Some(v) == *want),
            Cond::IdIn(n, list) => node(n).map(|v| list.contains(&Some(v))),
            Cond::Prop(n, t, op, k) => node(n).and_then(|v| self.g.prop(v, *t)).map(|x| op.holds(x, *k)),
            Cond::EdgeW(e, op, k) => match get(row, e) {
                Some(B::Edge(i)) => Some(op.holds(self.g.edges[*i].w, *k)),
                _ => None,
            },
            Cond::And(a, b) => match (self.cond(a, row), self.cond(b, row)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Cond::Or(a, b) => match (self.cond(a, row), self.cond(b, row)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Cond::Not(a) => self.cond(a, row).map(|b| !b),
        }
    }

    fn item(&mut self, i: &Item, row: &Row) -> Result<Value, TooBig> {
        if let Item::Degree(p) = i {
            let mut found = Vec::new();
            self.path(p, row, &mut found)?;
            return Ok(Value::Int(found.len() as i64));
        }
        Ok(self.plain_item(i, row))
    }

    fn plain_item(&self, i: &Item, row: &Row) -> Value {
        let g = self.g;
        let b = |n: &str| get(row, n).cloned().unwrap_or(B::Null);
        let int = |x: Option<i64>| x.map_or(Value::NULL, Value::Int);
        match i {
            Item::Id(n) => match b(n) {
                B::Node(v) => g.vid(v),
                _ => Value::NULL,
            },
            Item::Prop(n, t) => match b(n) {
                B::Node(v) => int(g.prop(v, *t)),
                _ => Value::NULL,
            },
            Item::Src(e) | Item::Dst(e) | Item::Rank(e) | Item::W(e) | Item::Type(e) => match b(e) {
                B::Edge(x) => {
                    let x = &g.edges[x];
                    match i {
                        Item::Src(_) => g.vid(x.src),
                        Item::Dst(_) => g.vid(x.dst),
                        Item::Rank(_) => Value::Int(x.rank),
                        Item::Type(_) => Value::String(EDGE_TYPES[x.ty].into()),
                        _ => Value::Int(x.w),
                    }
                }
                _ => Value::NULL,
            },
            Item::Size(l) | Item::Ranks(l) | Item::Srcs(l) | Item::Ws(l) => match b(l) {
                B::List(es) => match i {
                    Item::Size(_) => Value::Int(es.len() as i64),
                    Item::Ranks(_) => Value::List(es.iter().map(|x| Value::Int(g.edges[*x].rank)).collect()),
                    Item::Ws(_) => Value::List(es.iter().map(|x| Value::Int(g.edges[*x].w)).collect()),
                    _ => Value::List(es.iter().map(|x| g.vid(g.edges[*x].src)).collect()),
                },
                _ => Value::NULL,
            },
            Item::Len(p) | Item::PathIds(p) | Item::PathRanks(p) | Item::End(p) => match b(p) {
                B::Path(nodes, edges) => match i {
                    Item::Len(_) => Value::Int(edges.len() as i64),
                    Item::PathIds(_) => Value::List(nodes.iter().map(|v| g.vid(*v)).collect()),
                    Item::PathRanks(_) => Value::List(edges.iter().map(|x| Value::Int(g.edges[*x].rank)).collect()),
                    _ => g.vid(*nodes.last().expect("a path has a vertex")),
                },
                _ => Value::NULL,
            },
            Item::Degree(_) => unreachable!("counted by `item`"),
        }
    }

    fn run(&mut self, s: &Stmt) -> Result<Vec<Vec<Value>>, TooBig> {
        let mut rows: Vec<Row> = vec![Vec::new()];
        for c in &s.clauses {
            if let Some((names, distinct)) = &c.with {
                let mut next: Vec<Row> = Vec::new();
                for row in &rows {
                    let r: Row = names.iter().map(|n| (n.clone(), get(row, n).cloned().unwrap_or(B::Null))).collect();
                    if *distinct && next.contains(&r) {
                        continue;
                    }
                    if c.cond.as_ref().is_none_or(|cond| self.cond(cond, &r) == Some(true)) {
                        next.push(r);
                    }
                }
                rows = next;
                continue;
            }
            let mut next = Vec::new();
            for row in &rows {
                let mut matched = vec![row.clone()];
                for p in &c.paths {
                    let mut out = Vec::new();
                    for r in &matched {
                        self.path(p, r, &mut out)?;
                    }
                    matched = out;
                }
                if let Some(cond) = &c.cond {
                    matched.retain(|r| self.cond(cond, r) == Some(true));
                }
                for (p, not) in &c.preds {
                    let mut kept = Vec::new();
                    for r in matched {
                        let mut found = Vec::new();
                        self.path(p, &r, &mut found)?;
                        if found.is_empty() == *not {
                            kept.push(r);
                        }
                    }
                    matched = kept;
                }
                if c.optional && matched.is_empty() {
                    matched.push(row.clone());
                }
                self.work += matched.len();
                if self.work > WORK_MAX {
                    return Err(TooBig);
                }
                next.extend(matched);
            }
            rows = next;
        }
        let out: Vec<Vec<Value>> = match &s.ret {
            Ret::Count => vec![vec![Value::Int(rows.len() as i64)]],
            Ret::GroupCount(i) => {
                let mut groups: Vec<(Value, i64)> = Vec::new();
                for r in &rows {
                    let k = self.item(i, r)?;
                    match groups.iter_mut().find(|(x, _)| format!("{x:?}") == format!("{k:?}")) {
                        Some((_, n)) => *n += 1,
                        None => groups.push((k, 1)),
                    }
                }
                groups.into_iter().map(|(k, n)| vec![k, Value::Int(n)]).collect()
            }
            Ret::Items { items, distinct, order } => {
                let mut out: Vec<Vec<Value>> = Vec::with_capacity(rows.len());
                for r in &rows {
                    let mut values = Vec::with_capacity(items.len());
                    for i in items {
                        values.push(self.item(i, r)?);
                    }
                    out.push(values);
                }
                if *distinct {
                    let mut seen = std::collections::HashSet::new();
                    out.retain(|r| seen.insert(format!("{r:?}")));
                }
                if let Some(o) = order {
                    out.sort_by(|a, b| {
                        (0..a.len())
                            .map(|i| if o.desc[i] { order_cmp(&b[i], &a[i]) } else { order_cmp(&a[i], &b[i]) })
                            .find(|c| c.is_ne())
                            .unwrap_or(std::cmp::Ordering::Equal)
                    });
                    out = out.into_iter().skip(o.skip.unwrap_or(0)).take(o.limit.unwrap_or(usize::MAX)).collect();
                }
                out
            }
        };
        if out.len() > ROWS_MAX {
            return Err(TooBig);
        }
        Ok(out)
    }
}

/// NebulaGraph's order of the values RETURN gives here: NULL after everything, lists element by element.
fn order_cmp(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Value::Null(_), Value::Null(_)) => Ordering::Equal,
        (Value::Null(_), _) => Ordering::Greater,
        (_, Value::Null(_)) => Ordering::Less,
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::String(x), Value::String(y)) => x.as_str().cmp(y.as_str()),
        (Value::List(x), Value::List(y)) => {
            x.iter().zip(y).map(|(p, q)| order_cmp(p, q)).find(|c| c.is_ne()).unwrap_or_else(|| x.len().cmp(&y.len()))
        }
        _ => panic!("no order between {a:?} and {b:?}"),
    }
}

// ---- the test ----

fn exec(db: &Database, s: &mut Session, stmt: &str) -> Result<Vec<Vec<Value>>, String> {
    db.execute(s, stmt, &Params::new())
        .map(|ds| ds.into_rows())
        .map_err(|e| format!("[{}] {}", e.code.as_i32(), e.message))
}

/// Rows as lines, in their order.
fn unsorted_lines(rows: &[Vec<Value>]) -> Vec<String> {
    rows.iter().map(|r| r.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(" | ")).collect()
}

/// Rows as sorted lines, for comparing multisets and showing them.
fn lines(rows: &[Vec<Value>]) -> Vec<String> {
    let mut out = unsorted_lines(rows);
    out.sort();
    out
}

#[test]
fn match_agrees_with_a_reference_matcher_on_random_graphs() {
    let started = std::time::Instant::now();
    let all_rules: Vec<String> = quiver_query::optimizer::rule_names().iter().map(|r| r.to_string()).collect();
    let seed_base: u64 = std::env::var("MATCH_RANDOM_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let graphs: u64 = std::env::var("MATCH_RANDOM_GRAPHS").ok().and_then(|s| s.parse().ok()).unwrap_or(GRAPHS);
    let per_graph: usize =
        std::env::var("MATCH_RANDOM_STATEMENTS").ok().and_then(|s| s.parse().ok()).unwrap_or(STATEMENTS);
    let verbose = std::env::var_os("MATCH_RANDOM_VERBOSE").is_some();
    // The operators of the plans, tallied: which starts and joins the statements reach.
    let plans = std::env::var_os("MATCH_RANDOM_PLANS").is_some();
    let mut operators: std::collections::BTreeMap<String, usize> = Default::default();
    let mut failures: Vec<String> = Vec::new();
    let mut over_budget: Vec<String> = Vec::new();
    let (mut statements, mut rows_total, mut nonempty) = (0usize, 0usize, 0usize);
    for seed in seed_base..seed_base + graphs {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let g = Graph::random(&mut rng);
        let db = Database::in_memory();
        // A statement past these is skipped (counted), not failed: the reference's size estimate is not the plan's.
        db.engine.set_limits(Limits { timeout: Duration::from_secs(3), memory_bytes: 256 << 20 });
        let mut session = Session::default();
        let setup = g.setup();
        if verbose {
            println!("seed {seed} graph:\n{};", setup.join(";\n"));
        }
        for stmt in &setup {
            if let Err(e) = exec(&db, &mut session, stmt) {
                panic!("seed {seed}: `{stmt}` failed: {e}");
            }
        }
        let mut done = 0;
        let mut attempts = 0;
        while done < per_graph && attempts < per_graph * 5 {
            attempts += 1;
            let stmt = Gen { rng: &mut rng, g: &g, scope: Vec::new(), next: 0, var_edges: 0 }.statement();
            let text = render(&stmt, &g);
            let t0 = std::time::Instant::now();
            let Ok(want) = (Reference { g: &g, work: 0 }).run(&stmt) else { continue };
            let t_ref = t0.elapsed();
            done += 1;
            statements += 1;
            rows_total += want.len();
            nonempty += usize::from(!want.is_empty() && !matches!(want.as_slice(), [r] if r == &[Value::Int(0)]));
            let ordered = matches!(stmt.ret, Ret::Items { order: Some(_), .. });
            let want = if ordered { unsorted_lines(&want) } else { lines(&want) };
            if plans {
                let ds = db.execute(&mut session, &format!("EXPLAIN {text}"), &Params::new()).expect("EXPLAIN");
                for line in ds.plan.map(|p| p.to_tree()).unwrap_or_default() {
                    let op = line.trim().split([' ', '{']).next().unwrap_or_default().to_string();
                    *operators.entry(op).or_default() += 1;
                }
            }
            for rules in [Vec::new(), all_rules.clone()] {
                session.disabled_rules = rules;
                let got = exec(&db, &mut session, &text).map(|r| if ordered { unsorted_lines(&r) } else { lines(&r) });
                if let Err(e) = &got {
                    if e.starts_with("[-1005]") || e.contains("longer than its timeout") {
                        over_budget.push(format!("seed {seed}: {text}: {e}"));
                        break;
                    }
                }
                if got.as_ref() != Ok(&want) {
                    let got = match got {
                        Ok(rows) => rows.join("\n"),
                        Err(e) => format!("error {e}"),
                    };
                    failures.push(format!(
                        "seed {seed} (rules off: {:?})\ngraph:\n{};\nstatement:\n{text}\nexpected ({} rows):\n{}\ngot:\n{got}\n",
                        session.disabled_rules,
                        setup.join(";\n"),
                        want.len(),
                        want.join("\n"),
                    ));
                    break;
                }
            }
            session.disabled_rules.clear();
            if verbose {
                let (t_ref, t_all) = (t_ref.as_secs_f64() * 1e3, t0.elapsed().as_secs_f64() * 1e3);
                println!(
                    "seed {seed}: {text}\n  -> {} rows; reference {t_ref:.1} ms, in all {t_all:.1} ms",
                    want.len()
                );
            }
        }
        if failures.len() >= 3 {
            break;
        }
    }
    println!(
        "{statements} statements ({nonempty} with rows), {rows_total} rows in all, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if plans {
        println!("operators in the plans: {operators:?}");
    }
    for o in &over_budget {
        println!("over budget, skipped: {o}");
    }
    assert!(failures.is_empty(), "{} failure(s):\n\n{}", failures.len(), failures.join("\n"));
    assert!(over_budget.len() * 100 <= statements, "{} of {statements} statements over budget", over_budget.len());
}
