//! The queries running now, for `SHOW [LOCAL] QUERIES` and `KILL QUERY` (NebulaGraph's `ShowQueriesExecutor` and
//! `KillQueryExecutor`). Each request is registered while it runs, under an execution plan id of its own, with the
//! budget its operators check: killing it marks the budget, and the query fails at its next check with NebulaGraph's
//! `Execution had been killed`, dropping what it holds as it unwinds.

use crate::DataSet;
use quiver_common::budget::Budget;
use quiver_common::datetime::DateTime;
use quiver_common::{QError, QResult, Value};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

struct Running {
    session: i64,
    plan: i64,
    user: String,
    /// Microseconds since the Unix epoch.
    start_us: i64,
    started: Instant,
    text: String,
    budget: Budget,
}

#[derive(Default)]
pub struct RunningQueries {
    state: Mutex<(i64, Vec<Running>)>,
    /// Requests finished since start: with the list empty, an unchanged count means nothing ran in between.
    finished: std::sync::atomic::AtomicU64,
}

/// A registered query; dropping it removes the query from the list.
pub struct Registration<'a> {
    list: &'a RunningQueries,
    plan: i64,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.list.lock().1.retain(|r| r.plan != self.plan);
        self.list.finished.fetch_add(1, std::sync::atomic::Ordering::Release);
    }
}

impl RunningQueries {
    fn lock(&self) -> std::sync::MutexGuard<'_, (i64, Vec<Running>)> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a request of `session` (0 for one outside the graph protocol's sessions) until the registration is
    /// dropped.
    /// `None` while a request runs; otherwise how many have finished since start (see [`QueryEngine::idle`]).
    ///
    /// [`QueryEngine::idle`]: crate::QueryEngine::idle
    pub fn idle(&self) -> Option<u64> {
        let state = self.lock();
        state.1.is_empty().then(|| self.finished.load(std::sync::atomic::Ordering::Acquire))
    }

    pub fn register(&self, session: i64, user: &str, text: &str, budget: &Budget) -> Registration<'_> {
        let start_us = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as i64).unwrap_or(0);
        let mut state = self.lock();
        state.0 += 1;
        let plan = state.0;
        state.1.push(Running {
            session,
            plan,
            user: user.to_string(),
            start_us,
            started: Instant::now(),
            text: text.to_string(),
            budget: budget.clone(),
        });
        Registration { list: self, plan }
    }

    /// `SHOW [LOCAL] QUERIES`: every running query, or `session`'s, oldest first; `host` is this graph service.
    pub fn show(&self, session: Option<i64>, host: &str) -> DataSet {
        let mut ds = DataSet::with_columns(&[
            "SessionID",
            "ExecutionPlanID",
            "User",
            "Host",
            "StartTime",
            "DurationInUSec",
            "Status",
            "Query",
        ]);
        for r in self.lock().1.iter().filter(|r| session.is_none_or(|s| r.session == s)) {
            ds.push_row([
                Value::Int(r.session),
                Value::Int(r.plan),
                Value::str(r.user.clone()),
                Value::str(host),
                DateTime::from_micros(r.start_us).map(Value::DateTime).unwrap_or(Value::NULL),
                Value::Int(r.started.elapsed().as_micros() as i64),
                Value::str("RUNNING"),
                Value::str(r.text.clone()),
            ]);
        }
        ds
    }

    /// `KILL QUERY`: marks plan `plan` of `session` killed, with NebulaGraph's errors when there is no such
    /// session (`exists` says which sessions there are) or no such query in it. `current` is the session asking
    /// (a `session` of 0 means it too).
    /// Kills the running query that holds the most memory (not one already killed), if it holds at least
    /// `min_bytes`, failing it with `reason` made from what it holds; its plan id and bytes.
    pub fn kill_largest(&self, min_bytes: usize, reason: impl Fn(usize) -> QError) -> Option<(i64, usize)> {
        let state = self.lock();
        let r = state
            .1
            .iter()
            .filter(|r| !r.budget.is_killed())
            .max_by_key(|r| r.budget.used_bytes())
            .filter(|r| r.budget.used_bytes() > 0 && r.budget.used_bytes() >= min_bytes)?;
        let bytes = r.budget.used_bytes();
        r.budget.kill_because(reason(bytes));
        Some((r.plan, bytes))
    }

    /// With `only_own` (a non-GOD user), another user's query is refused.
    pub fn kill(
        &self,
        current: i64,
        session: i64,
        plan: i64,
        only_own: Option<&str>,
        exists: &dyn Fn(i64) -> bool,
    ) -> QResult<()> {
        let state = self.lock();
        let of_current = session == 0 || session == current;
        let target = if of_current { current } else { session };
        if let Some(r) = state.1.iter().find(|r| r.session == target && r.plan == plan) {
            if only_own.is_some_and(|u| u != r.user) {
                return Err(QError::permission("Only GOD role could kill others' queries."));
            }
            r.budget.kill();
            return Ok(());
        }
        Err(QError::execution(if of_current {
            format!("ExecutionPlanId[{plan}] does not exist in current Session.")
        } else if !exists(session) {
            format!("SessionId[{session}] does not exist")
        } else {
            format!("ExecutionPlanId[{plan}] does not exist in Session[{session}].")
        }))
    }
}
