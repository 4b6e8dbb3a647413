//! Runs a plan: each node reads its input's rows and produces its own, checking the query's budget (deadline and
//! memory) between operators and charging it for the rows it holds. With profiling on, each node's rows and time
//! are recorded for PROFILE.

use super::desc::{node_key, Profiles, ProfileStats};
use super::{ExpandNode, ExpandOutput, Op, PlanNode};
use crate::compose::{group_rows, limit_rows, set_op, sort_rows, top_n, yield_rows, Request};
use crate::data::{eval_vid, VidUse};
use crate::{DataSet, QueryEngine, Session};
use quiver_api::{ExpandHop, ExpandRequest, SpaceDesc};
use quiver_common::{QError, QResult, Value};
use quiver_syntax::ast::FromClause;
use std::time::Instant;

pub(crate) struct Executor<'e, 's, 'r, 'p> {
    pub engine: &'e QueryEngine,
    pub session: &'s mut Session,
    pub req: &'r mut Request<'p>,
    /// Where PROFILE collects per-operator stats; `None` when not profiling.
    pub profiles: Option<&'r mut Profiles>,
}

/// Bytes a result is charged: a `Value` per cell, plus its heap part for strings.
fn footprint(d: &DataSet) -> usize {
    let cells = d.rows.len() * d.columns.len().max(1) * std::mem::size_of::<Value>();
    let heap: usize = d.rows.iter().flatten().map(|v| if let Value::String(s) = v { s.len() } else { 0 }).sum();
    cells + heap
}

impl Executor<'_, '_, '_, '_> {
    pub fn run(&mut self, node: &PlanNode, outer: Option<&DataSet>) -> QResult<DataSet> {
        let start = Instant::now();
        self.req.budget.check()?;
        let own;
        let input = match &node.input {
            Some(i) => {
                own = self.run(i, outer)?;
                Some(&own)
            }
            None => outer,
        };
        let inputs_done = Instant::now();
        let out = self.op(node, input)?;
        self.req.budget.charge(footprint(&out))?;
        if let Some(p) = &mut self.profiles {
            // A set operation's time includes its branches', which are recorded as their own operators.
            let branches: u64 = node.branches.iter().map(|b| p.get(&node_key(b)).map_or(0, |s| s.total_duration_us)).sum();
            let own = inputs_done.elapsed().as_micros() as u64;
            let stats = ProfileStats {
                rows: out.rows.len() as u64,
                exec_duration_us: own.saturating_sub(branches),
                total_duration_us: start.elapsed().as_micros() as u64,
            };
            p.insert(node_key(node), stats);
        }
        Ok(out)
    }

    fn space(&self) -> QResult<std::sync::Arc<SpaceDesc>> {
        self.engine.current_space(self.session)
    }

    fn op(&mut self, node: &PlanNode, input: Option<&DataSet>) -> QResult<DataSet> {
        let req = &*self.req;
        match &node.op {
            Op::Statement(s) => self.engine.execute_statement(self.session, s, self.req.params),
            Op::Go(g) => {
                let space = self.space()?;
                self.engine.go(&space, g, req, input)
            }
            Op::Project { yield_clause, filter } => yield_rows(yield_clause, filter.as_ref(), req, input),
            Op::Sort(f) => sort_rows(f, req, input),
            Op::Limit { offset, count } => limit_rows(offset, count, req, input),
            Op::TopN { factors, offset, count } => top_n(factors, *offset, *count, req, input),
            Op::Aggregate { keys, yield_clause } => group_rows(keys, yield_clause, req, input),
            Op::SetOp(op) => {
                let l = self.run(&node.branches[0], input)?;
                let r = self.run(&node.branches[1], input)?;
                set_op(*op, l, r)
            }
            Op::Assign(var) => {
                let rows = input.cloned().unwrap_or_default();
                self.req.vars.insert(var.clone(), rows);
                Ok(DataSet::empty())
            }
            Op::Expand(e) => {
                let space = self.space()?;
                self.expand(&space, e)
            }
        }
    }

    /// A fused GO chain: one storage expansion with a hop per step of each GO.
    fn expand(&self, space: &SpaceDesc, e: &ExpandNode) -> QResult<DataSet> {
        let first = e.gos.first().expect("a chain has a GO");
        let FromClause::Vids(exprs) = &first.from else { unreachable!("the rule fuses chains that start from constants") };
        let starts = exprs.iter().map(|x| eval_vid(space, x, self.req.params, VidUse::Start)).collect::<QResult<Vec<_>>>()?;
        let mut hops = Vec::new();
        for g in &e.gos {
            // The same validation an unfused GO does, so fusing never turns an error into a count.
            let edges = self.engine.over_edges(space, g)?;
            let y = g.yield_clause.as_ref().expect("the rule fuses GOs with a YIELD");
            self.engine.go_needs(space, g, None, y, &edges)?;
            let edge_types: Vec<i32> = edges.into_iter().map(|(t, _)| t).collect();
            for step in 1..=g.max_steps {
                hops.push(ExpandHop { edge_types: edge_types.clone(), distinct: step > 1 });
            }
        }
        let output = match e.output {
            ExpandOutput::Count { .. } => quiver_api::ExpandOutput::Count,
            ExpandOutput::GroupCount { .. } => quiver_api::ExpandOutput::Ends,
        };
        let r = self.engine.storage.expand(space, &ExpandRequest { starts, hops, output, budget: self.req.budget.clone() })?;
        let count = |n: u64| i64::try_from(n).map(Value::Int).map_err(|_| QError::execution("count overflows INT64"));
        match &e.output {
            ExpandOutput::Count { column } => Ok(DataSet::new(vec![column.clone()], vec![vec![count(r.paths)?]])),
            ExpandOutput::GroupCount { columns } => {
                let mut rows = Vec::with_capacity(r.ends.len());
                for (vid, n) in r.ends {
                    rows.push(columns.iter().map(|(_, is_count)| if *is_count { count(n) } else { Ok(vid.clone()) }).collect::<QResult<Vec<_>>>()?);
                }
                Ok(DataSet::new(columns.iter().map(|(c, _)| c.clone()).collect(), rows))
            }
        }
    }
}
