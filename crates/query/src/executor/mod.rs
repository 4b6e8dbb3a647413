//! The executor: runs a plan as a pipeline of row batches, pulled from the root.
//!
//! Each operator is a [`Cursor`] that hands out batches on demand. Projections, piped GOs and LIMIT work batch by
//! batch, so `... | LIMIT n` stops pulling once it has its rows and the operators below it stop working; TopN keeps
//! only `offset + count` rows while it reads. Operators that need their whole input (sorting, grouping, DISTINCT,
//! aggregates, set operations, variables) drain it first. Leaves (statements, GOs from constants, fused
//! expansions) produce their result as one batch.
//!
//! The query's budget is checked before each batch: its deadline, and its memory bound against what the query's
//! thread holds (counted at the allocator, see `quiver_common::memory`), so everything held between operators
//! counts. With profiling on, each operator's rows and time (its own, and including its inputs) are recorded for
//! PROFILE.

mod admin;
mod aggregate;
mod cluster;
mod expand;
mod fetch;
mod index_scan;
mod join;
mod limit;
pub(crate) mod mutation;
mod path;
mod pattern;
pub(crate) mod project;
pub(crate) mod schema;
mod set;
mod sort;
mod statement;
mod traverse;
mod users;

use aggregate::AggregateExecutor;
use expand::ExpandExecutor;
use fetch::{GetEdgesExecutor, GetVerticesExecutor};
use index_scan::IndexScanExecutor;
use join::HashInnerJoinExecutor;
use limit::LimitExecutor;
use path::{FindPathExecutor, ShortestPathExecutor, SubgraphExecutor};
use pattern::{
    AppendVerticesExecutor, BuildPathExecutor, FilterExecutor, PatternTraverseExecutor, StartVerticesExecutor,
    UnwindExecutor,
};
use project::ProjectExecutor;
use set::SetExecutor;
use sort::{SortExecutor, TopNExecutor, TopNFilterExecutor};
use traverse::TraverseExecutor;

use crate::dataset::window;
use crate::optimizer::reads_var;
use crate::planner::desc::{node_key, ProfileStats, Profiles};
use crate::planner::{Op, PlanNode};
use crate::request::{limit_operand, Request};
use crate::{DataSet, QueryEngine, Session};
use quiver_api::{EdgeKeyVal, Props, SchemaRef, SpaceDesc, StorageClient};
use quiver_common::expr::Expr;
use quiver_common::value::Edge;
use quiver_common::{QResult, Value};
use quiver_syntax::ast::FromClause;
use std::time::Instant;

/// Rows per batch handed out of a materialized input.
const BATCH_ROWS: usize = 1024;

pub(crate) struct Executor<'e, 's, 'r, 'p> {
    pub engine: &'e QueryEngine,
    pub session: &'s mut Session,
    pub req: &'r mut Request<'p>,
    /// Where PROFILE collects per-operator stats; `None` when not profiling.
    pub profiles: Option<&'r mut Profiles>,
}

/// Appends `batch` to the rows collected so far (the first batch brings the columns).
fn append(acc: &mut Option<DataSet>, batch: DataSet) {
    match acc {
        None => *acc = Some(batch),
        Some(a) => a.append(batch),
    }
}

/// The value of an edge read by its key: what `edge` evaluates to in FETCH and LOOKUP.
pub(super) fn edge_of(key: &EdgeKeyVal, schema: &SchemaRef, props: Props) -> Edge {
    Edge {
        src: key.src.clone(),
        dst: key.dst.clone(),
        edge_type: schema.id,
        name: schema.name.as_str().into(),
        ranking: key.rank,
        props,
    }
}

/// What the executors that read storage work with: the storage client, the current space and the request.
pub(super) struct Reads<'a> {
    pub storage: &'a dyn StorageClient,
    pub space: &'a SpaceDesc,
    pub req: &'a Request<'a>,
}

/// Where an operator's piped input comes from.
enum Input<'a> {
    None,
    Node(Box<Cursor<'a>>),
    /// A set operation's input, handed to each branch in batches.
    Rows {
        data: &'a DataSet,
        pos: usize,
    },
}

/// How an operator produces its batches.
enum Mode {
    /// Runs once over its whole input (drained first), then hands out the result in batches.
    Whole(Option<Pending>),
    /// One output batch per input batch.
    PerBatch,
    /// LIMIT: `(rows still to skip, rows still to pass)`, evaluated on the first batch; stops pulling at zero.
    Limit(Option<(usize, usize)>),
    /// ORDER BY ... LIMIT: keeps the best `keep` rows of what it has read.
    TopN { best: Option<DataSet> },
}

/// A result computed whole and not yet handed out: its columns' values, moved out a batch at a time.
struct Pending {
    columns: Vec<String>,
    data: Vec<std::vec::IntoIter<Value>>,
    left: usize,
}

struct Cursor<'a> {
    node: &'a PlanNode,
    input: Input<'a>,
    mode: Mode,
    /// Hands a result computed whole out in one batch (the root, whose caller keeps every row anyway).
    whole: bool,
    done: bool,
    rows: u64,
    /// Time inside this operator's `next`, inputs included.
    total_us: u64,
}

impl Cursor<'_> {
    fn input_total_us(&self) -> u64 {
        match &self.input {
            Input::Node(c) => c.total_us,
            _ => 0,
        }
    }
}

/// Whether `node` can work one input batch at a time (given that it has a piped input).
fn streams(node: &PlanNode) -> bool {
    match &node.op {
        Op::Project { yield_clause, filter } => {
            !yield_clause.distinct
                && !yield_clause.columns.iter().any(|c| c.expr.has_aggregate())
                && !reads_var(yield_clause.columns.iter().map(|c| &c.expr).chain(filter.iter()))
        }
        Op::Traverse(_)
        | Op::AppendVertices(_)
        | Op::Filter(_)
        | Op::BuildPath(_)
        | Op::Unwind { .. }
        | Op::Repeat { .. } => true,
        Op::Go(g) => {
            matches!(&g.go.stmt.from, FromClause::Ref(Expr::InputProp(_)))
                && g.limit.is_none()
                && !g.go.yield_clause().distinct
        }
        _ => false,
    }
}

impl<'e, 's, 'r, 'p> Executor<'e, 's, 'r, 'p> {
    /// Runs `node` to the end; `outer` is the input of an enclosing set operation, if any.
    pub fn run(&mut self, node: &PlanNode, outer: Option<&DataSet>) -> QResult<DataSet> {
        let mut root = self.open(node, outer);
        // Whoever runs the root keeps all of its rows: a result computed whole goes to it whole, not copied out a
        // batch at a time (which would hold it twice).
        root.whole = true;
        let mut out: Option<DataSet> = None;
        while let Some(batch) = self.next(&mut root)? {
            append(&mut out, batch);
        }
        self.record(&root);
        Ok(out.unwrap_or_default())
    }

    fn open<'a>(&self, node: &'a PlanNode, outer: Option<&'a DataSet>) -> Cursor<'a> {
        let input = match (&node.input, outer) {
            (Some(i), _) => Input::Node(Box::new(self.open(i, outer))),
            (None, Some(data)) => Input::Rows { data, pos: 0 },
            (None, None) => Input::None,
        };
        let has_input = !matches!(input, Input::None);
        let mode = match &node.op {
            Op::Limit { .. } if has_input => Mode::Limit(None),
            Op::TopN { .. } if has_input => Mode::TopN { best: None },
            _ if has_input && streams(node) => Mode::PerBatch,
            _ => Mode::Whole(None),
        };
        Cursor { node, input, mode, whole: false, done: false, rows: 0, total_us: 0 }
    }

    /// The operator's next batch, or `None` when it has no more.
    fn next(&mut self, c: &mut Cursor<'_>) -> QResult<Option<DataSet>> {
        if c.done {
            return Ok(None);
        }
        self.req.budget.check()?;
        // Operators are timed only for PROFILE (two clock reads per batch otherwise spent for nothing).
        let start = self.profiles.is_some().then(Instant::now);
        let out = self.step(c);
        if let Some(start) = start {
            c.total_us += start.elapsed().as_micros() as u64;
        }
        match out? {
            Some(batch) => {
                c.rows += batch.len() as u64;
                Ok(Some(batch))
            }
            None => {
                c.done = true;
                Ok(None)
            }
        }
    }

    /// The next batch of the operator's input; `None` when it has no input or the input is exhausted.
    fn pull(&mut self, c: &mut Cursor<'_>) -> QResult<Option<DataSet>> {
        match &mut c.input {
            Input::None => Ok(None),
            Input::Node(child) => self.next(child),
            Input::Rows { data, pos } => {
                if *pos >= data.len() && *pos > 0 {
                    return Ok(None);
                }
                let end = (*pos + BATCH_ROWS).min(data.len());
                let batch = data.slice(*pos..end);
                // An empty input still hands out one (empty) batch, which carries the columns.
                *pos = end.max(1);
                Ok(Some(batch))
            }
        }
    }

    /// The whole input, or `None` for an operator without one.
    fn drain(&mut self, c: &mut Cursor<'_>) -> QResult<Option<DataSet>> {
        if matches!(c.input, Input::None) {
            return Ok(None);
        }
        let mut all: Option<DataSet> = None;
        while let Some(batch) = self.pull(c)? {
            append(&mut all, batch);
        }
        Ok(Some(all.unwrap_or_default()))
    }

    fn step(&mut self, c: &mut Cursor<'_>) -> QResult<Option<DataSet>> {
        match &mut c.mode {
            Mode::Whole(None) => {
                let input = self.drain(c)?;
                let out = self.op(c.node, input.as_ref())?;
                drop(input);
                if c.whole {
                    c.done = true;
                    return Ok(Some(out));
                }
                let first = out.empty_like();
                let left = out.len();
                let (columns, data) = out.into_columns();
                c.mode =
                    Mode::Whole(Some(Pending { columns, data: data.into_iter().map(Vec::into_iter).collect(), left }));
                // The first batch always exists, so even an empty result carries its columns.
                self.hand_out(c).map(|b| Some(b.unwrap_or(first)))
            }
            Mode::Whole(Some(_)) => self.hand_out(c),
            Mode::PerBatch => {
                let Some(batch) = self.pull(c)? else {
                    return Ok(None);
                };
                self.op(c.node, Some(&batch)).map(Some)
            }
            Mode::Limit(bounds) => {
                if bounds.is_none() {
                    let Op::Limit { offset, count } = &c.node.op else { unreachable!("a LIMIT cursor") };
                    *bounds = Some((limit_operand(offset, self.req)?, limit_operand(count, self.req)?));
                }
                let Some(mut batch) = self.pull(c)? else {
                    return Ok(None);
                };
                let Mode::Limit(Some((skip, left))) = &mut c.mode else { unreachable!("bounds were set above") };
                let kept = window(batch.len(), *skip, *left);
                *skip -= kept.start;
                batch.keep(kept);
                *left -= batch.len();
                if *left == 0 {
                    // Enough rows: nothing below is pulled again.
                    c.done = true;
                }
                Ok(Some(batch))
            }
            Mode::TopN { .. } => {
                let Op::TopN { factors, offset, count } = &c.node.op else { unreachable!("a TopN cursor") };
                let keep = offset.saturating_add(*count);
                while let Some(batch) = self.pull(c)? {
                    let Mode::TopN { best } = &mut c.mode else { unreachable!() };
                    // The rows kept so far come before the new batch, so ties keep their input order.
                    append(best, batch);
                    *best = Some(TopNExecutor::execute(factors, 0, keep, self.req, best.as_ref())?);
                }
                let Mode::TopN { best } = &mut c.mode else { unreachable!() };
                let mut best = best.take().unwrap_or_default();
                c.done = true;
                best.keep(window(best.len(), *offset, *count));
                Ok(Some(best))
            }
        }
    }

    /// The next batch of a result computed whole; `None` once it is all handed out.
    fn hand_out(&mut self, c: &mut Cursor<'_>) -> QResult<Option<DataSet>> {
        let Mode::Whole(Some(p)) = &mut c.mode else { unreachable!("a computed result") };
        if p.left == 0 {
            return Ok(None);
        }
        let n = p.left.min(BATCH_ROWS);
        p.left -= n;
        Ok(Some(DataSet::from_columns(
            p.columns.clone(),
            p.data.iter_mut().map(|c| c.by_ref().take(n).collect()).collect(),
        )))
    }

    /// Stores the profile of `c` and of the operators it pulled from.
    fn record(&mut self, c: &Cursor<'_>) {
        if let Input::Node(child) = &c.input {
            self.record(child);
        }
        let Some(p) = &mut self.profiles else { return };
        // A set operation's time includes its branches', which are recorded as their own operators.
        let branches: u64 =
            c.node.branches.iter().map(|b| p.get(&node_key(b)).map_or(0, |s| s.total_duration_us)).sum();
        let stats = ProfileStats {
            rows: c.rows,
            exec_duration_us: c.total_us.saturating_sub(c.input_total_us()).saturating_sub(branches),
            total_duration_us: c.total_us,
        };
        p.insert(node_key(c.node), stats);
    }

    fn space(&self) -> QResult<std::sync::Arc<SpaceDesc>> {
        self.engine.current_space(self.session)
    }

    /// The operator applied to `input` (a batch, or its whole input).
    fn op(&mut self, node: &PlanNode, input: Option<&DataSet>) -> QResult<DataSet> {
        let req = &*self.req;
        match &node.op {
            Op::Statement(quiver_syntax::ast::Statement::KillQuery { session: target, plan })
                if crate::constants::reads_input(plan)
                    || target.as_ref().is_some_and(crate::constants::reads_input) =>
            {
                // `... | KILL QUERY (session = $-.SessionID, plan = $-.ExecutionPlanID)`: one query per input row.
                let from = if crate::constants::reads_input(plan) { plan } else { target.as_ref().expect("reads") };
                let src = crate::request::input_rows(from, req, input)?;
                for row in 0..src.len() {
                    let ctx = src.context(req, row);
                    let t = target.as_ref().map(|e| quiver_common::eval::eval(e, &ctx).map(|v| (e, v))).transpose()?;
                    self.engine.kill_query(self.session, t, (plan, quiver_common::eval::eval(plan, &ctx)?))?;
                }
                Ok(DataSet::empty())
            }
            Op::Statement(quiver_syntax::ast::Statement::KillSession(e)) if crate::constants::reads_input(e) => {
                // `SHOW SESSIONS | YIELD $-.SessionId AS s ... | KILL SESSIONS $-.s`: the sessions of every row.
                let src = crate::request::input_rows(e, req, input)?;
                let ids = (0..src.len())
                    .map(|row| quiver_common::eval::eval(e, &src.context(req, row)))
                    .collect::<QResult<Vec<_>>>()?;
                self.engine.kill_sessions(self.session, e, &ids)
            }
            Op::Statement(s) if mutation::update_input(s).is_some() => {
                // `... | UPDATE VERTEX ON t $-.id SET ...`: the update once per input row, the rows it yields joined.
                let from = mutation::update_input(s).expect("matched");
                let src = crate::request::input_rows(from, req, input)?;
                let mut out: Option<DataSet> = None;
                for row in 0..src.len() {
                    let stmt = mutation::update_of_row(s, &src.context(req, row))?;
                    let ds = self.engine.execute_statement(self.session, &stmt, self.req.params)?;
                    match &mut out {
                        Some(all) => all.append(ds),
                        None => out = Some(ds),
                    }
                }
                Ok(out.unwrap_or_else(DataSet::empty))
            }
            Op::Statement(s) if mutation::reads_input_rows(s) => {
                let space = self.space()?;
                let constants = mutation::of_input_rows(&space, s, req, input)?;
                self.engine.execute_statement(self.session, &constants, self.req.params)
            }
            Op::Statement(s) => self.engine.execute_statement(self.session, s, self.req.params),
            Op::Project { yield_clause, filter } => ProjectExecutor::execute(yield_clause, filter.as_ref(), req, input),
            Op::Sort(f) => SortExecutor::execute(f, req, input),
            Op::Limit { offset, count } => LimitExecutor::execute(offset, count, req, input),
            Op::TopN { factors, offset, count } => TopNExecutor::execute(factors, *offset, *count, req, input),
            Op::TopNFilter { keys, keep } => TopNFilterExecutor::execute(keys, *keep, req, input),
            Op::Aggregate { keys, yield_clause } => AggregateExecutor::execute(keys, yield_clause, req, input),
            Op::SetOp(op) => {
                let l = self.run(&node.branches[0], input)?;
                let r = self.run(&node.branches[1], input)?;
                SetExecutor::execute(*op, l, r)
            }
            Op::VarJoin { left, right, left_col, right_col } => {
                HashInnerJoinExecutor::execute(left, right, left_col, right_col, req)
            }
            // As in NebulaGraph, an assignment answers the rows it assigned too (a request that ends with one
            // returns them).
            Op::Assign(var) => {
                let rows = input.cloned().unwrap_or_default();
                self.req.vars.insert(var.clone(), rows.clone());
                Ok(rows)
            }
            Op::Argument => Ok(pattern::argument()),
            Op::Repeat { column } => pattern::repeat(column, req, input.unwrap_or(&DataSet::empty())),
            Op::Filter(cond) => FilterExecutor::execute(cond, req, input.unwrap_or(&DataSet::empty())),
            Op::Unwind { expr, alias, only_alias: false } => {
                UnwindExecutor::execute(expr, alias, true, req, input.unwrap_or(&DataSet::empty()))
            }
            // nGQL's sentence: without a pipe it unwinds once, over no input columns.
            Op::Unwind { expr, alias, only_alias: true } => {
                let argument = pattern::argument();
                UnwindExecutor::execute(expr, alias, false, req, input.unwrap_or(&argument))
            }
            Op::OptionalJoin { columns } => {
                // The branch runs once over the input rows, numbered, and its rows are joined back by number.
                let left = input.cloned().unwrap_or_else(pattern::argument);
                let branch = self.run(&node.branches[0], Some(&pattern::numbered(left.clone())))?;
                Ok(pattern::left_join(&left, &branch, columns))
            }
            Op::PatternApply { keys, .. } | Op::RollUpApply { keys, .. } => {
                // The branch runs once over the distinct keys of the input rows, numbered; each row is kept by its
                // key's answer (PatternApply) or gains the list of its key's paths (RollUpApply).
                let argument;
                let left = match input {
                    Some(rows) => rows,
                    None => {
                        argument = pattern::argument();
                        &argument
                    }
                };
                let (distinct, key_of_row) = pattern::distinct_keys(left, keys);
                let keys = distinct.len();
                let branch = self.run(&node.branches[0], Some(&pattern::numbered(distinct)))?;
                Ok(match &node.op {
                    Op::PatternApply { anti, .. } => pattern::semi_join(left, keys, &key_of_row, &branch, *anti),
                    Op::RollUpApply { column, .. } => pattern::roll_up(left, keys, &key_of_row, &branch, column),
                    _ => unreachable!("matched above"),
                })
            }
            Op::StartVertices(_) | Op::Traverse(_) | Op::AppendVertices(_) | Op::BuildPath(_) | Op::ShortestPath(_) => {
                let space = self.space()?;
                let r = Reads { storage: &*self.engine.storage, space: &space, req };
                let empty = DataSet::empty();
                let rows = input.unwrap_or(&empty);
                match &node.op {
                    Op::StartVertices(s) => StartVerticesExecutor::execute(&r, s, input),
                    Op::Traverse(t) => PatternTraverseExecutor::execute(&r, t, rows),
                    Op::AppendVertices(a) => AppendVerticesExecutor::execute(&r, a, rows),
                    Op::BuildPath(p) => BuildPathExecutor::execute(&r, p, rows),
                    Op::ShortestPath(s) => ShortestPathExecutor::execute(&r, s, rows),
                    _ => unreachable!("matched above"),
                }
            }
            Op::Go(_)
            | Op::Expand(_)
            | Op::PathCount(_)
            | Op::GetVertices(_)
            | Op::GetEdges(_)
            | Op::Lookup(_)
            | Op::FindPath(_)
            | Op::Subgraph(_) => {
                let space = self.space()?;
                let r = Reads { storage: &*self.engine.storage, space: &space, req };
                match &node.op {
                    Op::Go(g) => TraverseExecutor::execute(&r, g, input),
                    Op::Expand(e) => ExpandExecutor::execute(&r, e),
                    Op::PathCount(p) => ExpandExecutor::count_paths(&r, p, input),
                    Op::GetVertices(f) => GetVerticesExecutor::execute(&r, f, input),
                    Op::GetEdges(f) => GetEdgesExecutor::execute(&r, f, input),
                    Op::Lookup(plan) => IndexScanExecutor::execute(&r, plan),
                    Op::FindPath(f) => FindPathExecutor::execute(&r, f, input),
                    Op::Subgraph(g) => SubgraphExecutor::execute(&r, g, input),
                    _ => unreachable!("matched above"),
                }
            }
        }
    }
}
