//! Query plans: the statement tree turned into operators the optimizer rewrites and the executor runs.
//!
//! A plan is a tree of [`PlanNode`]s. A node reads its piped input (`$-`) from `input` when it has one (the left
//! side of a pipe), else from the input of the node that contains it; `branches` are the two sides of a set
//! operation, which both read the set operation's input. Leaves that need no planning (DDL, DML, FETCH) are
//! [`Op::Statement`] and run in the statement layer.
//!
//! **Invariant:** planning and optimizing read the catalog but never storage; only execution does.

pub(crate) mod desc;
mod r#match;

pub(crate) use r#match::{AppendNode, PathNode, PropColumn, ShortestNode, StartNode, Tags, TraverseNode};

use crate::validator::Ends;
use crate::validator::LookupPlan;
use crate::validator::{
    BoundFetchEdges, BoundFetchVertices, BoundFindPath, BoundGo, BoundJoin, BoundSentence, BoundSubgraph,
};
use quiver_api::{PathKind, PropSelection, SchemaRef};
use quiver_common::expr::Expr;
use quiver_syntax::ast::{SetOp, Statement, YieldClause};

pub(crate) struct PlanNode {
    pub op: Op,
    pub input: Option<Box<PlanNode>>,
    pub branches: Vec<PlanNode>,
}

pub(crate) enum Op {
    /// A statement run by the statement layer as a whole.
    Statement(Statement),
    Go(Box<GoNode>),
    /// Standalone `YIELD [WHERE]`, with aggregates when it has them.
    Project {
        yield_clause: YieldClause,
        filter: Option<Expr>,
    },
    Sort(Vec<(Expr, bool)>),
    Limit {
        offset: Expr,
        count: Expr,
    },
    /// A TopN's bound pushed below operators that only add columns (`push_topn_bound_below_append`): keeps the
    /// rows whose sort key prefix (input columns, each ascending or not) is no worse than the `keep`-th best
    /// distinct prefix; any other row sorts after `keep` distinct rows that do.
    TopNFilter {
        keys: Vec<(String, bool)>,
        keep: usize,
    },
    /// `ORDER BY ... | LIMIT`: keeps only the first `offset + count` rows while reading.
    TopN {
        factors: Vec<(Expr, bool)>,
        offset: usize,
        count: usize,
    },
    Aggregate {
        keys: Vec<Expr>,
        yield_clause: YieldClause,
    },
    SetOp(SetOp),
    /// The rows of two variables whose key columns are equal, each pair as one row of the columns `left.c` then
    /// `right.c` (the input of the YIELD of `YIELD ... FROM $a INNER JOIN $b`).
    VarJoin {
        left: String,
        right: String,
        left_col: String,
        right_col: String,
    },
    Assign(String),
    /// A chain of GOs whose rows are only counted (or counted per far end), run in storage as one expansion.
    Expand(Box<ExpandNode>),
    /// A MATCH path whose rows are only counted (or counted per far end), run in storage as one path count from
    /// the start vertices its input yields.
    PathCount(Box<PathCountNode>),
    /// FIND PATH: one search in storage for every source and target.
    FindPath(Box<BoundFindPath>),
    /// GET SUBGRAPH: one neighbour read per round, one row per round.
    Subgraph(Box<BoundSubgraph>),
    /// LOOKUP: index scans chosen by the validator.
    Lookup(Box<LookupPlan>),
    /// FETCH PROP ON tags.
    GetVertices(Box<BoundFetchVertices>),
    /// FETCH PROP ON an edge type.
    GetEdges(Box<BoundFetchEdges>),
    /// One row of no values: where a MATCH statement's first clause starts.
    Argument,
    /// MATCH: a path's start vertices, found as the validator chose, each input row crossed with them.
    StartVertices(Box<StartNode>),
    /// MATCH: one edge pattern walked from a node's column; the edge (or edge list) and the far end's VID appended.
    Traverse(Box<TraverseNode>),
    /// MATCH: the far end's vertex read and checked against its node pattern (or against the vertex already bound).
    AppendVertices(Box<AppendNode>),
    /// Keeps the rows for which the condition holds.
    Filter(Expr),
    /// MATCH: `shortestPath` / `allShortestPaths` between two node columns, one search for every row.
    ShortestPath(Box<ShortestNode>),
    /// MATCH: a path value built from its nodes' and edges' columns.
    BuildPath(Box<PathNode>),
    /// MATCH: each row repeated as many times as its (integer) `column` says, without that column: the rows of a
    /// path count computed once per far end (`fuse_match_rows`).
    Repeat {
        column: String,
    },
    /// UNWIND: one row per item of the list; MATCH's keeps the input's columns, nGQL's sentence (`only_alias`)
    /// only the item's.
    Unwind {
        expr: Expr,
        alias: String,
        only_alias: bool,
    },
    /// OPTIONAL MATCH: each input row joined with the rows `branches[0]` produces from it, or with NULLs in
    /// `columns` when it produces none.
    OptionalJoin {
        columns: Vec<String>,
    },
    /// A WHERE's path pattern: keeps the input rows from which `branches[0]` matches (with `anti`, those from which
    /// it does not). Whether it matches depends on the row's `keys` alone (the pattern's bound nodes and its edges),
    /// so the branch runs once per distinct key.
    PatternApply {
        anti: bool,
        keys: Vec<String>,
    },
    /// A path pattern used as a value (`size((v)-[:like]->())`): each input row gains `column`, the list of the
    /// paths `branches[0]` matches from it (the branch builds them into its own `column`). As with `PatternApply`,
    /// the matches depend on the row's `keys` alone, so the branch runs once per distinct key.
    RollUpApply {
        keys: Vec<String>,
        column: String,
    },
}

/// A GO with what the optimizer pushed into its storage reads.
pub(crate) struct GoNode {
    pub go: BoundGo,
    /// Conjuncts of WHERE evaluated in storage on the last step (removed from `stmt.filter`).
    pub storage_filter: Option<Expr>,
    /// The edge properties to read; `None` lets the executor read all of them when any is used.
    pub props: Option<PropSelection>,
    /// Storage stops after this many edges on the last step.
    pub limit: Option<usize>,
    /// Only the first rows by these output columns are kept (`ORDER BY ... | LIMIT` above pushed down).
    pub top: Option<GoTop>,
}

/// The best rows a GO keeps: ordered by output columns (index, ascending), ties in the order the GO produces
/// them, at most `keep`.
#[derive(Clone, Debug)]
pub(crate) struct GoTop {
    pub keys: Vec<(usize, bool)>,
    pub keep: usize,
}

/// What a fused traversal returns.
pub(crate) enum CountOutput {
    /// One row: the number of rows the chain would produce, under `column`.
    Count { column: String },
    /// One row per far end of the last hop: the columns, in order, are the far end or the row count.
    GroupCount { columns: Vec<(String, bool)> },
    /// One row per edge of a MATCH path's last hop (`fuse_match_rows` of rows that read that edge): the edge value in
    /// `edge` (with its properties when `props`; `types` are the hop's signed edge types), or, when the rows read
    /// only its properties, those in `columns` (property, column) and no edge value; its far end's VID in `node`;
    /// and the number of paths that end with it in `paths`.
    EdgeGroupCount {
        edge: Option<String>,
        types: Vec<(i32, SchemaRef)>,
        props: bool,
        columns: Vec<(String, String)>,
        node: String,
        paths: String,
    },
}

pub(crate) struct ExpandNode {
    /// The GOs of the chain, first to last; the first starts from constants, each next one from its
    /// predecessor's far ends.
    pub gos: Vec<BoundGo>,
    pub output: CountOutput,
}

/// A fused MATCH path count (`fuse_match_count`).
pub(crate) struct PathCountNode {
    /// The column of the input holding the start vertices.
    pub start: String,
    /// Per edge pattern, in walking order, the signed edge types it follows.
    pub hops: Vec<Vec<i32>>,
    /// Each hop's direction and types, for EXPLAIN.
    pub described: Vec<String>,
    pub output: CountOutput,
}

impl PlanNode {
    pub fn leaf(op: Op) -> PlanNode {
        PlanNode { op, input: None, branches: Vec::new() }
    }

    /// Operators in the plan, counted without recursion (a plan's depth is what the bound on it keeps small).
    pub fn size(&self) -> usize {
        let mut stack = vec![self];
        let mut n = 0;
        while let Some(node) = stack.pop() {
            n += 1;
            stack.extend(node.input.as_deref());
            stack.extend(&node.branches);
        }
        n
    }

    /// The plan of a bound sentence, before optimization: one node per sentence of the tree.
    pub fn build(sentence: BoundSentence) -> PlanNode {
        match sentence {
            BoundSentence::Pipe(left, right) => {
                let mut r = PlanNode::build(*right);
                // The right side's innermost first node reads the left side.
                r.first_mut().input = Some(Box::new(PlanNode::build(*left)));
                r
            }
            BoundSentence::Assign { var, sentence } => PlanNode {
                op: Op::Assign(var),
                input: Some(Box::new(PlanNode::build(*sentence))),
                branches: Vec::new(),
            },
            BoundSentence::SetOp { op, left, right } => PlanNode {
                op: Op::SetOp(op),
                input: None,
                branches: vec![PlanNode::build(*left), PlanNode::build(*right)],
            },
            BoundSentence::Go(go) => PlanNode::leaf(Op::Go(Box::new(GoNode {
                go: *go,
                storage_filter: None,
                props: None,
                limit: None,
                top: None,
            }))),
            BoundSentence::Yield { yield_clause, filter } => PlanNode::leaf(Op::Project { yield_clause, filter }),
            BoundSentence::Unwind { expr, alias } => PlanNode::leaf(Op::Unwind { expr, alias, only_alias: true }),
            BoundSentence::Join(j) => {
                let BoundJoin { left, right, left_col, right_col, yield_clause } = *j;
                PlanNode {
                    op: Op::Project { yield_clause, filter: None },
                    input: Some(Box::new(PlanNode::leaf(Op::VarJoin { left, right, left_col, right_col }))),
                    branches: Vec::new(),
                }
            }
            BoundSentence::OrderBy(f) => PlanNode::leaf(Op::Sort(f)),
            BoundSentence::Limit { offset, count } => PlanNode::leaf(Op::Limit { offset, count }),
            BoundSentence::GroupBy { keys, yield_clause } => PlanNode::leaf(Op::Aggregate { keys, yield_clause }),
            BoundSentence::Lookup(l) => PlanNode::leaf(Op::Lookup(l)),
            BoundSentence::FindPath(f) => PlanNode::leaf(Op::FindPath(f)),
            BoundSentence::GetSubgraph(g) => PlanNode::leaf(Op::Subgraph(g)),
            BoundSentence::FetchVertices(f) => PlanNode::leaf(Op::GetVertices(f)),
            BoundSentence::FetchEdges(f) => PlanNode::leaf(Op::GetEdges(f)),
            BoundSentence::Match(m) => r#match::plan(*m),
            BoundSentence::Statement(s) => PlanNode::leaf(Op::Statement(s)),
        }
    }

    /// The node of this subtree that reads the subtree's input: follow `input` links down to the end.
    fn first_mut(&mut self) -> &mut PlanNode {
        match self.input {
            Some(ref mut i) => i.first_mut(),
            None => self,
        }
    }

    /// Visits every node, children before parents.
    pub fn for_each_mut(&mut self, f: &mut dyn FnMut(&mut PlanNode)) {
        if let Some(i) = &mut self.input {
            i.for_each_mut(f);
        }
        for b in &mut self.branches {
            b.for_each_mut(f);
        }
        f(self);
    }

    pub fn name(&self) -> &'static str {
        match &self.op {
            Op::Statement(s) => statement_name(s),
            Op::Go(_) => "Go",
            Op::Project { filter: Some(_), .. } => "FilterProject",
            Op::Project { yield_clause, .. } if yield_clause.columns.iter().any(|c| c.expr.has_aggregate()) => {
                "Aggregate"
            }
            Op::Project { .. } => "Project",
            Op::Sort(_) => "Sort",
            Op::Limit { .. } => "Limit",
            Op::TopN { .. } => "TopN",
            Op::TopNFilter { .. } => "TopNFilter",
            Op::Aggregate { .. } => "Aggregate",
            Op::SetOp(SetOp::Union) => "Union",
            Op::SetOp(SetOp::UnionAll) => "UnionAll",
            Op::SetOp(SetOp::Intersect) => "Intersect",
            Op::SetOp(SetOp::Minus) => "Minus",
            Op::Assign(_) => "Assign",
            Op::VarJoin { .. } => "HashInnerJoin",
            Op::Lookup(l) => crate::validator::scan_name(l),
            Op::GetVertices(_) => "GetVertices",
            // NebulaGraph's names: one pair searches both ways (BFSShortest), several pairs at once
            // (MultiShortestPath); ALL and NOLOOP enumerate (AllPaths).
            Op::FindPath(f) => match (f.kind, &f.from, &f.to) {
                (PathKind::All | PathKind::NoLoop, _, _) => "AllPaths",
                (_, Ends::Vids(a), Ends::Vids(b)) if a.len() == 1 && b.len() == 1 => "BFSShortest",
                _ => "MultiShortestPath",
            },
            Op::Subgraph(_) => "Subgraph",
            Op::GetEdges(_) => "GetEdges",
            Op::Argument => "Argument",
            Op::StartVertices(s) => s.start.name(),
            Op::Traverse(_) => "Traverse",
            Op::AppendVertices(_) => "AppendVertices",
            Op::Filter(_) => "Filter",
            Op::BuildPath(_) => "Project",
            Op::ShortestPath(_) => "ShortestPath",
            Op::Unwind { .. } => "Unwind",
            Op::Repeat { .. } => "Repeat",
            Op::OptionalJoin { .. } => "HashLeftJoin",
            Op::PatternApply { .. } => "PatternApply",
            Op::RollUpApply { .. } => "RollUpApply",
            Op::PathCount(p) => match p.output {
                CountOutput::Count { .. } => "PathCount",
                CountOutput::GroupCount { .. } => "PathGroupCount",
                CountOutput::EdgeGroupCount { .. } => "PathEdgeCount",
            },
            Op::Expand(e) => match e.output {
                CountOutput::Count { .. } => "ExpandCount",
                CountOutput::GroupCount { .. } | CountOutput::EdgeGroupCount { .. } => "ExpandGroupCount",
            },
        }
    }
}

fn statement_name(s: &Statement) -> &'static str {
    match s {
        Statement::InsertVertices { .. } => "InsertVertices",
        Statement::InsertEdges { .. } => "InsertEdges",
        Statement::Update { .. } => "Update",
        Statement::DeleteVertices { .. } | Statement::DeleteTags { .. } | Statement::DeleteEdges { .. } => "Delete",
        Statement::UseSpace(_) => "SwitchSpace",
        Statement::Unsupported(_) | Statement::Match(_) => "Unsupported",
        _ => "Admin",
    }
}
